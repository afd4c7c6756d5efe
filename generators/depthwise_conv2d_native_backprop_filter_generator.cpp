// DepthwiseConv2dNativeBackpropFilter (docs/tf-ops.md section 4): the
// gradient of a depthwise convolution with respect to its filter,
//   dF[fh,fw,c,m] = sum over n, oh, ow of
//                   out_backprop[n,oh,ow,c*M+m] * input[n, oh*s - pad_top + fh*dh, ow*s - pad_left + fw*dw, c]
// with input reading zero outside its rows and columns. Algorithm only: the
// schedule is one call into schedules/.
//
// Halide dimension order (innermost first) for both data formats:
//   input         (c, w, h, n)     TF NHWC [N, H, W, C]
//   out_backprop  (k, ow, oh, n)   k = c*M + m; TF NHWC [N, OH, OW, C*M]
//   output        (m, c, fw, fh)   TF [FH, FW, C, M]
// NCHW tensors are the same buffers with other strides: the data_format
// parameter only moves the unit stride from c to w.
//
// Structural GeneratorParams (0 = read from the call at run time) let a
// variant fix filter size, stride, dilations and depth multiplier.
#include "Halide.h"
#include "common/front_matter.h"
#include "common/window.h"
#include "depthwise_conv2d_native_backprop_filter.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using namespace gradtune::generator;

class DepthwiseConv2dNativeBackpropFilter
    : public OpGenerator<DepthwiseConv2dNativeBackpropFilter, DepthwiseFrontMatter, FilterGradientTensors> {
public:
    gradtune::DepthwiseConv2dNativeBackpropFilterKnobs knobs;

    void generate() {
        gradtune::DepthwiseConv2dNativeBackpropFilterPipeline p;
        Var m = p.m, c = p.c, x = p.x, y = p.y;
        const Type acc_type = accumulator_type();

        Expr s = stride_value();
        Expr dh = dilation_rows();
        Expr dw = dilation_cols();
        Expr multiplier = fixed_or(depth_multiplier, output->dim(0).extent());

        // Taps that land in the padding read zero and contribute nothing.
        p.input = BoundaryConditions::constant_exterior(
            *input, cast(T, 0),
            {{Expr(), Expr()}, {0, input->dim(1).extent()}, {0, input->dim(2).extent()}, {Expr(), Expr()}});

        // One reduction over every out_backprop position; apply() partitions
        // its rows (oh, n) in a fixed way, so the summation order of each
        // element depends on the variant and the shape only.
        p.rows = RDom(0, out_backprop->dim(1).extent(), 0, out_backprop->dim(2).extent(), 0,
                      out_backprop->dim(3).extent(), "rows");
        RVar ow = p.rows.x, oh = p.rows.y, n = p.rows.z;
        Expr dy = (*out_backprop)(c * multiplier + m, ow, oh, n);
        Expr in = p.input(c, ow * s - pad_left + x * dw, oh * s - pad_top + y * dh, n);
        p.accumulator(m, c, x, y) = cast(acc_type, 0);
        p.accumulator(m, c, x, y) += widen(dy, acc_type) * widen(in, acc_type);
        (*output)(m, c, x, y) = narrow(p.accumulator(m, c, x, y), T);
        p.output = *output;

        declare_layout(multiplier);
        p.channels = output->dim(1).extent();
        p.filter_width = fixed_or(filter_width, output->dim(2).extent());
        p.filter_height = fixed_or(filter_height, output->dim(3).extent());
        p.depth_multiplier = multiplier;
        p.out_cols = out_backprop->dim(1).extent();
        p.out_rows = out_backprop->dim(2).extent();
        p.batch = out_backprop->dim(3).extent();

        schedule("DepthwiseConv2dNativeBackpropFilter", p);
    }

private:
    // The unit-stride dimension is c (NHWC) or w (NCHW); a fixed filter size
    // or depth multiplier is also a promise the output buffer must keep.
    void declare_layout(Expr multiplier) {
        // TF tensors are dense: the filter gradient's channel stride is M.
        output->dim(1).set_stride(multiplier);
        if (nchw()) {
            // The filter is [FH, FW, C, M] in both formats: m keeps stride 1.
            unit_stride_on_columns(input);
            unit_stride_on_columns(out_backprop);
        }
        promise_filter_size(output, filter_height, filter_width, depth_multiplier);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DepthwiseConv2dNativeBackpropFilter, DepthwiseConv2dNativeBackpropFilter)
