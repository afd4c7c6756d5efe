// Conv2DBackpropFilter (docs/tf-ops.md section 7): the gradient of a
// (grouped, strided, dilated) 2-D convolution with respect to its filter,
//   dF[fh,fw,ci,o] = sum over n, oh, ow of
//       out_backprop[n,oh,ow,o] * input[n, oh*sh - pad_top + fh*dh, ow*sw - pad_left + fw*dw, g*Cg + ci]
// (zero outside the input), where Cg = filter dim 2 (input channels per
// group), Og = Cout / G output channels per group and g = o / Og.
// Algorithm only: the schedule is one call into schedules/.
//
// Halide dimension order (innermost first) for both data formats:
//   input         (c, w, h, n)     TF NHWC [N, H, W, C]
//   out_backprop  (o, ow, oh, n)   TF NHWC [N, OH, OW, Cout]
//   output        (o, ci, fw, fh)  TF [FH, FW, Cg, Cout]
// NCHW tensors are the same buffers with other strides: the data_format
// parameter only moves the unit stride from the channels to the columns.
//
// Structural GeneratorParams (0 = read from the call at run time) let a
// variant fix filter size, strides, dilations and groups.
#include "Halide.h"
#include "common/front_matter.h"
#include "common/window.h"
#include "conv2d_backprop_filter.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using namespace gradtune::generator;

class Conv2DBackpropFilter
    : public OpGenerator<Conv2DBackpropFilter, Conv2DBackpropFrontMatter, FilterGradientTensors> {
public:
    gradtune::Conv2DBackpropFilterKnobs knobs;

    void generate() {
        gradtune::Conv2DBackpropFilterPipeline p;
        Var o = p.o, ci = p.ci, fw = p.fw, fh = p.fh;
        const Type acc_type = accumulator_type();

        Expr sh = stride_rows();
        Expr sw = stride_cols();
        Expr dh = dilation_rows();
        Expr dw = dilation_cols();
        p.out_depth = output->dim(0).extent();
        p.group_in_depth = output->dim(1).extent();
        p.filter_width = fixed_or(filter_width, output->dim(2).extent());
        p.groups = groups_value();
        Expr group_out = groups == 1 ? p.out_depth : p.out_depth / p.groups;  // Og

        // The group of output channel o. A run-time G is written so that a
        // schedule that specialises on call_groups == 1 gets the ungrouped
        // expression (the select folds to 0).
        Expr group = 0;
        if (groups > 1) group = o / group_out;
        if (groups == 0) group = select(call_groups == 1, 0, o / group_out);

        // The input reads zero outside its rows and columns (the padding), and
        // outside its channels: a register tile over ci may run past Cg, and
        // the schedule discards what it computes there.
        Func bounded = BoundaryConditions::constant_exterior(
            *input, cast(T, 0),
            {{0, input->dim(0).extent()}, {0, input->dim(1).extent()}, {0, input->dim(2).extent()}, {Expr(), Expr()}});
        Var a{"a"}, b{"b"}, c{"c"}, d{"d"};
        // Every schedule reads out_backprop's channels within [0, Cout) (a
        // tile that would run past Cout is predicated or takes a small
        // branch), but where the accumulator is computed per task inside the
        // output's fused loop over tasks, Halide's bounds of that loop are
        // loose and the required region ran below 0. The promise bounds the
        // region; it generates no code.
        // A 16-bit variant's staged copies hold float32 on the CPU (copied()).
        p.out_backprop(a, b, c, d) =
            copied((*out_backprop)(unsafe_promise_clamped(a, 0, out_backprop->dim(0).extent() - 1), b, c, d));

        p.positions = RDom(0, out_backprop->dim(1).extent(), 0, out_backprop->dim(2).extent(), 0,
                           out_backprop->dim(3).extent(), "positions");
        RVar ow = p.positions.x, oh = p.positions.y, n = p.positions.z;
        Expr dy = p.out_backprop(o, ow, oh, n);
        Expr x;
        if (filter_height == 1 && filter_width == 1 && !nchw()) {
            // A fixed 1x1 filter reads the input at output positions only:
            // defined there, a staged copy of the input holds just what the
            // reduction reads (a stride-2 projection reads a quarter of it).
            p.input(a, b, c, d) = copied(bounded(a, b * sw - pad_left, c * sh - pad_top, d));
            x = p.input(group * p.group_in_depth + ci, ow, oh, n);
        } else {
            p.input = copied(bounded, "input_padded");
            x = p.input(group * p.group_in_depth + ci, ow * sw - pad_left + fw * dw, oh * sh - pad_top + fh * dh, n);
        }
        p.accumulator(o, ci, fw, fh) = cast(acc_type, 0);
        p.accumulator(o, ci, fw, fh) += widen(dy, acc_type) * widen(x, acc_type);
        (*output)(o, ci, fw, fh) = narrow(p.accumulator(o, ci, fw, fh), T);
        p.output = *output;

        declare_layout();

        schedule("Conv2DBackpropFilter", p);
    }

private:
    // The unit-stride dimension of the activations is c (NHWC) or w (NCHW);
    // the filter gradient is HWIO in both. A fixed filter size is also a
    // promise the output buffer must keep.
    void declare_layout() {
        if (nchw()) {
            unit_stride_on_columns(input);
            unit_stride_on_columns(out_backprop);
        }
        promise_filter_size(output, filter_height, filter_width);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Conv2DBackpropFilter, Conv2DBackpropFilter)
