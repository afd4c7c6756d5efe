// DepthwiseConv2dNative (docs/tf-ops.md section 2): the forward depthwise
// convolution,
//   out[n,oh,ow,c*M+m] = sum over taps (fh, fw) of
//                        input[n, oh*s - pad_top + fh*dh, ow*s - pad_left + fw*dw, c] * filter[fh,fw,c,m]
// with zero outside the input. Algorithm only: the schedule is one call into
// schedules/.
//
// Halide dimension order (innermost first) for both data formats:
//   input   (c, w, h, n)     TF NHWC [N, H, W, C]
//   filter  (m, c, fw, fh)   TF [FH, FW, C, M]
//   output  (k, ow, oh, n)   k = c*M + m; TF NHWC [N, OH, OW, C*M]
// NCHW tensors are the same buffers with other strides: the data_format
// parameter only moves the unit stride from the channel to the column.
//
// Structural GeneratorParams (0 = read from the call at run time) let a
// variant fix filter size, stride, dilations and depth multiplier.
#include "Halide.h"
#include "common/front_matter.h"
#include "common/window.h"
#include "depthwise_conv2d_native.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using gradtune::window::narrow;
using gradtune::window::widen;
using gradtune::generator::DataFormat;
using gradtune::generator::unit_stride_on_columns;
using gradtune::generator::fixed_or;

class DepthwiseConv2dNative : public Generator<DepthwiseConv2dNative>,
                              public gradtune::generator::DepthwiseFrontMatter {
public:
    gradtune::DepthwiseConv2dNativeKnobs knobs;

    GeneratorInput<Buffer<>> *input = nullptr;    // (c, w, h, n)
    GeneratorInput<Buffer<>> *filter = nullptr;   // (m, c, fw, fh)
    GeneratorOutput<Buffer<>> *output = nullptr;  // (k, ow, oh, n)

    void configure() {
        input = add_input<Buffer<>>("input", T, 4);
        filter = add_input<Buffer<>>("filter", T, 4);
        output = add_output<Buffer<>>("output", T, 4);
    }

    void generate() {
        gradtune::DepthwiseConv2dNativePipeline p;
        Var k = p.k, x = p.x, y = p.y, n = p.n;
        const Type acc_type = gradtune::window::accumulator_type(T);

        Expr filter_rows = fixed_or(filter_height, filter->dim(3).extent());
        Expr filter_cols = fixed_or(filter_width, filter->dim(2).extent());
        Expr multiplier = fixed_or(depth_multiplier, filter->dim(0).extent());
        Expr s = stride_value();
        Expr dh = dilation_rows();
        Expr dw = dilation_cols();

        // The input reads zero outside its rows and columns (the padding).
        p.input = BoundaryConditions::constant_exterior(
            *input, cast(T, 0),
            {{Expr(), Expr()}, {0, input->dim(1).extent()}, {0, input->dim(2).extent()}, {Expr(), Expr()}});

        p.taps = RDom(0, filter_cols, 0, filter_rows, "taps");
        RVar fw = p.taps.x, fh = p.taps.y;
        // Output channel k = c*M + m (TF's channel-major, multiplier-minor order).
        Expr c = k / multiplier, m = k % multiplier;
        Expr value = p.input(c, x * s - pad_left + fw * dw, y * s - pad_top + fh * dh, n);
        Expr w = (*filter)(m, c, fw, fh);
        p.accumulator(k, x, y, n) = cast(acc_type, 0);
        p.accumulator(k, x, y, n) += widen(value, acc_type) * widen(w, acc_type);
        (*output)(k, x, y, n) = narrow(p.accumulator(k, x, y, n), T);
        p.output = *output;

        declare_layout(multiplier);
        p.channels = output->dim(0).extent();
        p.width = output->dim(1).extent();
        p.height = output->dim(2).extent();
        p.depth_multiplier = multiplier;

        const gradtune::Structure structure = this->structure();
        gradtune::apply(gradtune::checked_knobs("DepthwiseConv2dNative", structure, knobs, get_target()),
                        structure, p, get_target());
    }

private:
    // The unit-stride dimension is c / k (NHWC) or w (NCHW); a fixed filter
    // size or depth multiplier is also a promise the buffers must keep.
    void declare_layout(Expr multiplier) {
        // TF tensors are dense: the filter's channel stride is M, so the
        // filter element of output channel k = c*M + m sits at offset k.
        filter->dim(1).set_stride(multiplier);
        if (data_format == DataFormat::NCHW) {
            // The filter is [FH, FW, C, M] in both formats: m keeps stride 1.
            unit_stride_on_columns(input);
            unit_stride_on_columns(output);
        }
        if (filter_height > 0) filter->dim(3).set_bounds(0, filter_height);
        if (filter_width > 0) filter->dim(2).set_bounds(0, filter_width);
        if (depth_multiplier > 0) filter->dim(0).set_bounds(0, depth_multiplier);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DepthwiseConv2dNative, DepthwiseConv2dNative)
