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
using namespace gradtune::generator;

class DepthwiseConv2dNative : public OpGenerator<DepthwiseConv2dNative, DepthwiseFrontMatter, ForwardTensors> {
public:
    gradtune::DepthwiseConv2dNativeKnobs knobs;

    void generate() {
        gradtune::DepthwiseConv2dNativePipeline p;
        Var k = p.k, x = p.x, y = p.y, n = p.n;
        const Type acc_type = accumulator_type();

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
        set_depthwise_extents(p, output, multiplier);

        schedule("DepthwiseConv2dNative", p);
    }

private:
    // The unit-stride dimension is c / k (NHWC) or w (NCHW); a fixed filter
    // size or depth multiplier is also a promise the buffers must keep.
    void declare_layout(Expr multiplier) {
        // TF tensors are dense: the filter's channel stride is M, so the
        // filter element of output channel k = c*M + m sits at offset k.
        filter->dim(1).set_stride(multiplier);
        if (nchw()) {
            // The filter is [FH, FW, C, M] in both formats: m keeps stride 1.
            unit_stride_on_columns(input);
            unit_stride_on_columns(output);
        }
        promise_filter_size(filter, filter_height, filter_width, depth_multiplier);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DepthwiseConv2dNative, DepthwiseConv2dNative)
