// DepthwiseConv2dNativeBackpropInput (docs/tf-ops.md section 3): the gradient
// of a depthwise convolution with respect to its input,
//   dIn[n,h,w,c] = sum over m, and over taps (fh, fw) with
//                  oh*s - pad_top + fh*dh == h and ow*s - pad_left + fw*dw == w,
//                  of out_backprop[n,oh,ow,c*M+m] * filter[fh,fw,c,m].
// Algorithm only: the schedule is one call into schedules/.
//
// Halide dimension order (innermost first) for both data formats:
//   filter        (m, c, fw, fh)   TF [FH, FW, C, M]
//   out_backprop  (k, ow, oh, n)   k = c*M + m; TF NHWC [N, OH, OW, C*M]
//   output        (c, w, h, n)     TF NHWC [N, H, W, C]
// NCHW tensors are the same buffers with other strides: the data_format
// parameter only moves the unit stride from c to w.
//
// Structural GeneratorParams (0 = read from the call at run time) let a
// variant fix filter size, stride, dilations and depth multiplier.
#include "Halide.h"
#include "common/front_matter.h"
#include "common/window.h"
#include "depthwise_conv2d_native_backprop_input.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using namespace gradtune::generator;

class DepthwiseConv2dNativeBackpropInput
    : public OpGenerator<DepthwiseConv2dNativeBackpropInput, DepthwiseFrontMatter, InputGradientTensors> {
public:
    gradtune::DepthwiseConv2dNativeBackpropInputKnobs knobs;

    void generate() {
        gradtune::DepthwiseConv2dNativeBackpropInputPipeline p;
        Var c = p.c, x = p.x, y = p.y, n = p.n;
        const Type acc_type = accumulator_type();

        Expr filter_rows = fixed_or(filter_height, filter->dim(3).extent());
        Expr filter_cols = fixed_or(filter_width, filter->dim(2).extent());
        Expr multiplier = fixed_or(depth_multiplier, filter->dim(0).extent());

        // out_backprop reads zero outside its rows and columns; taps that land
        // there contribute nothing.
        p.out_backprop = BoundaryConditions::constant_exterior(
            *out_backprop, cast(T, 0),
            {{Expr(), Expr()}, {0, out_backprop->dim(1).extent()}, {0, out_backprop->dim(2).extent()}, {Expr(), Expr()}});

        TapGather rows(y + pad_top, stride, call_stride, dilation_height, call_dilation_height, filter_rows);
        TapGather cols(x + pad_left, stride, call_stride, dilation_width, call_dilation_width, filter_cols);
        p.taps = RDom(0, multiplier, 0, cols.count(), 0, rows.count(), "taps");
        RVar m = p.taps.x, j_col = p.taps.y, j_row = p.taps.z;
        p.taps.where(cols.valid(j_col) && rows.valid(j_row));

        Expr dy = p.out_backprop(c * multiplier + m, cols.source(j_col), rows.source(j_row), n);
        Expr w = (*filter)(m, c, cols.clamped_tap(j_col), rows.clamped_tap(j_row));
        p.accumulator(c, x, y, n) = cast(acc_type, 0);
        p.accumulator(c, x, y, n) += widen(dy, acc_type) * widen(w, acc_type);
        (*output)(c, x, y, n) = narrow(p.accumulator(c, x, y, n), T);
        p.output = *output;

        declare_layout(multiplier);
        set_depthwise_extents(p, output, multiplier);

        schedule("DepthwiseConv2dNativeBackpropInput", p);
    }

private:
    // The unit-stride dimension is c (NHWC) or w (NCHW); a fixed filter size
    // or depth multiplier is also a promise the buffers must keep.
    void declare_layout(Expr multiplier) {
        // TF tensors are dense: the filter's channel stride is M.
        filter->dim(1).set_stride(multiplier);
        if (nchw()) {
            // The filter is [FH, FW, C, M] in both formats: m keeps stride 1.
            unit_stride_on_columns(out_backprop);
            unit_stride_on_columns(output);
        }
        promise_filter_size(filter, filter_height, filter_width, depth_multiplier);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DepthwiseConv2dNativeBackpropInput, DepthwiseConv2dNativeBackpropInput)
