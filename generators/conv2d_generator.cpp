// Conv2D (docs/tf-ops.md section 5): the forward convolution, with groups,
//   out[n,oh,ow,o] = sum over (ci < Cg, fh, fw) of
//                    input[n, oh*sh - pad_top + fh*dh, ow*sw - pad_left + fw*dw, g*Cg + ci] * filter[fh,fw,ci,o]
// where Cg = filter depth, G = C_in / Cg groups and g = o / (C_out / G) is the
// group of output channel o; zero outside the input. Algorithm only: the
// schedule is one call into schedules/.
//
// Halide dimension order (innermost first) for both data formats:
//   input   (c, w, h, n)      TF NHWC [N, H, W, C_in]
//   filter  (o, ci, fw, fh)   TF HWIO [FH, FW, Cg, C_out]
//   output  (o, ow, oh, n)    TF NHWC [N, OH, OW, C_out]
// NCHW tensors are the same buffers with other strides: the data_format
// parameter only moves the unit stride from the channel to the column.
//
// Structural GeneratorParams (0 = read from the call at run time) let a
// variant fix filter size, strides and dilations. T may be int32: integers
// accumulate in int32 (TF's Eigen kernel does the same).
#include "Halide.h"
#include "common/front_matter.h"
#include "common/window.h"
#include "conv2d.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using namespace gradtune::generator;

class Conv2D : public OpGenerator<Conv2D, Conv2DFrontMatter, ForwardTensors> {
public:
    gradtune::Conv2DKnobs knobs;

    void generate() {
        gradtune::Conv2DPipeline p;
        Var o = p.o, x = p.x, y = p.y, n = p.n;
        const Type acc_type = accumulator_type();

        Expr filter_rows = fixed_or(filter_height, filter->dim(3).extent());
        Expr filter_cols = fixed_or(filter_width, filter->dim(2).extent());
        Expr sh = stride_rows();
        Expr sw = stride_cols();
        Expr dh = dilation_rows();
        Expr dw = dilation_cols();

        // The input reads zero outside its rows and columns (the padding).
        p.input = BoundaryConditions::constant_exterior(
            *input, cast(T, 0),
            {{Expr(), Expr()}, {0, input->dim(1).extent()}, {0, input->dim(2).extent()}, {Expr(), Expr()}});

        // Groups: the runtime guarantees Cg > 0, C_in % Cg == 0 and
        // C_out % G == 0 before any variant runs.
        Expr in_depth = input->dim(0).extent();
        Expr filter_depth = filter->dim(1).extent();
        Expr out_depth = filter->dim(0).extent();
        p.single_group = filter_depth == in_depth;
        Expr outputs_per_group = out_depth / max(in_depth / filter_depth, 1);
        p.reduction = RDom(0, filter_depth, 0, filter_cols, 0, filter_rows, "reduction");
        RVar ci = p.reduction.x, fw = p.reduction.y, fh = p.reduction.z;
        // In the ungrouped case the channel is ci itself (the schedule's
        // specialisation on single_group folds the select away); the clamp
        // only tells bounds inference what the runtime checks guarantee.
        Expr channel = select(p.single_group, ci,
                              clamp((o / outputs_per_group) * filter_depth + ci, 0, in_depth - 1));
        Expr value = p.input(channel, x * sw - pad_left + fw * dw, y * sh - pad_top + fh * dh, n);
        Expr w = (*filter)(o, ci, fw, fh);
        p.accumulator(o, x, y, n) = cast(acc_type, 0);
        p.accumulator(o, x, y, n) += widen(value, acc_type) * widen(w, acc_type);
        (*output)(o, x, y, n) = narrow(p.accumulator(o, x, y, n), T);
        p.output = *output;

        declare_layout();
        p.out_channels = output->dim(0).extent();
        p.width = output->dim(1).extent();
        p.height = output->dim(2).extent();

        schedule("Conv2D", p);
    }

private:
    // The unit-stride dimension is c / o (NHWC) or w (NCHW); a fixed filter
    // size is also a promise the filter buffer must keep.
    void declare_layout() {
        if (nchw()) {
            // The filter is HWIO in both formats: o keeps stride 1.
            unit_stride_on_columns(input);
            unit_stride_on_columns(output);
        }
        promise_filter_size(filter, filter_height, filter_width);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Conv2D, Conv2D)
