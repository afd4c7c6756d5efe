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
#include "common/window.h"
#include "depthwise_conv2d_native_backprop_filter.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using gradtune::window::narrow;
using gradtune::window::widen;

enum class DataFormat { NHWC, NCHW };

class DepthwiseConv2dNativeBackpropFilter : public Generator<DepthwiseConv2dNativeBackpropFilter> {
public:
    GeneratorParam<Type> T{"T", Float(32)};
    GeneratorParam<DataFormat> data_format{"data_format", DataFormat::NHWC,
                                           {{"NHWC", DataFormat::NHWC}, {"NCHW", DataFormat::NCHW}}};
    GRADTUNE_DEPTHWISE_STRUCTURE(GRADTUNE_STRUCTURE_GENERATOR_PARAM)
    gradtune::DepthwiseConv2dNativeBackpropFilterKnobs knobs;

    // The call's geometry; a variant that fixes a value ignores its input.
    Input<int> call_stride{"call_stride"};
    Input<int> call_dilation_height{"call_dilation_height"};
    Input<int> call_dilation_width{"call_dilation_width"};
    Input<int> pad_top{"pad_top"};    // TF's pad_before for rows
    Input<int> pad_left{"pad_left"};  // TF's pad_before for columns

    GeneratorInput<Buffer<>> *input = nullptr;         // (c, w, h, n)
    GeneratorInput<Buffer<>> *out_backprop = nullptr;  // (k, ow, oh, n)
    GeneratorOutput<Buffer<>> *output = nullptr;       // (m, c, fw, fh)

    void configure() {
        input = add_input<Buffer<>>("input", T, 4);
        out_backprop = add_input<Buffer<>>("out_backprop", T, 4);
        output = add_output<Buffer<>>("output", T, 4);
    }

    void generate() {
        gradtune::DepthwiseConv2dNativeBackpropFilterPipeline p;
        Var m = p.m, c = p.c, x = p.x, y = p.y;
        const Type acc_type = gradtune::window::accumulator_type(T);

        Expr s = stride > 0 ? Expr(stride) : Expr(call_stride);
        Expr dh = dilation_height > 0 ? Expr(dilation_height) : Expr(call_dilation_height);
        Expr dw = dilation_width > 0 ? Expr(dilation_width) : Expr(call_dilation_width);
        Expr multiplier = depth_multiplier > 0 ? Expr(depth_multiplier) : output->dim(0).extent();

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
        p.filter_width = filter_width > 0 ? Expr(filter_width) : output->dim(2).extent();
        p.filter_height = filter_height > 0 ? Expr(filter_height) : output->dim(3).extent();
        p.depth_multiplier = multiplier;
        p.out_cols = out_backprop->dim(1).extent();
        p.out_rows = out_backprop->dim(2).extent();
        p.batch = out_backprop->dim(3).extent();

        gradtune::Structure structure{halide_type_to_enum_string(T),
                                      data_format == DataFormat::NHWC ? "NHWC" : "NCHW",
                                      {GRADTUNE_DEPTHWISE_STRUCTURE(GRADTUNE_STRUCTURE_VALUE)}};
        gradtune::apply(
            gradtune::checked_knobs("DepthwiseConv2dNativeBackpropFilter", structure, knobs, get_target()),
            structure, p, get_target());
    }

private:
    // The unit-stride dimension is c (NHWC) or w (NCHW); a fixed filter size
    // or depth multiplier is also a promise the output buffer must keep.
    void declare_layout(Expr multiplier) {
        // TF tensors are dense: the filter gradient's channel stride is M.
        output->dim(1).set_stride(multiplier);
        if (data_format == DataFormat::NCHW) {
            // The filter is [FH, FW, C, M] in both formats: m keeps stride 1.
            input->dim(0).set_stride(Expr());
            input->dim(1).set_stride(1);
            out_backprop->dim(0).set_stride(Expr());
            out_backprop->dim(1).set_stride(1);
        }
        if (filter_height > 0) output->dim(3).set_bounds(0, filter_height);
        if (filter_width > 0) output->dim(2).set_bounds(0, filter_width);
        if (depth_multiplier > 0) output->dim(0).set_bounds(0, depth_multiplier);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DepthwiseConv2dNativeBackpropFilter, DepthwiseConv2dNativeBackpropFilter)
