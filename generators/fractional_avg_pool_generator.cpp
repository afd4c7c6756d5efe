// FractionalAvgPool (docs/tf-ops.md section 8), the pooling itself: the mean
// of every cell of the pooling sequences,
//   rows  row_seq[r] .. min(overlapping ? row_seq[r+1] : row_seq[r+1] - 1, H - 1)
//   cols  col_seq[c] .. min(overlapping ? col_seq[c+1] : col_seq[c+1] - 1, W - 1)
//   out[b, r, c, d] = (sum in T over the cell, rows outer, columns inner) / count
// summed and divided in T as TF does (integers: truncating division). The
// runtime draws the sequences (TF's Philox generator) on the host.
//
// TF's summation order (row by row, each row left to right, from 0) is kept
// under strict_float, so float results match TF's bit for bit.
//
// Halide dimension order (innermost first), NHWC only:
//   value   (d, w, h, n)   TF [N, H, W, C]
//   output  (d, c, r, n)   TF [N, OH, OW, C]
//   row_pooling_sequence (i), OH + 1 values; col likewise with OW + 1
#include "Halide.h"
#include "common/front_matter.h"
#include "fractional_avg_pool.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using namespace gradtune::generator;

class FractionalAvgPool : public OpGenerator<FractionalAvgPool, PoolingFrontMatter, PoolingTensors> {
public:
    gradtune::FractionalAvgPoolKnobs knobs;

    Input<int> max_row_span{"max_row_span"};  // rows of the tallest cell
    Input<int> max_col_span{"max_col_span"};  // columns of the widest cell
    Input<Buffer<int64_t, 1>> row_pooling_sequence{"row_pooling_sequence"};
    Input<Buffer<int64_t, 1>> col_pooling_sequence{"col_pooling_sequence"};


    void generate() {
        check_overlapping();
        gradtune::FractionalAvgPoolPipeline p;
        Var d = p.d, c = p.c, r = p.r, n = p.n;

        Expr in_rows = value->dim(2).extent(), in_cols = value->dim(1).extent();
        Expr out_rows = output->dim(2).extent(), out_cols = output->dim(1).extent();
        Expr overlap = overlapping_value();
        Axis rows{row_pooling_sequence, overlap, in_rows, out_rows};
        Axis cols{col_pooling_sequence, overlap, in_cols, out_cols};

        // The cell's pixels: i rows (outer, TF's h loop) x j columns (inner).
        p.window = RDom(0, max_col_span, 0, max_row_span, "window");
        RVar j = p.window.x, i = p.window.y;
        p.window.where(i < rows.size(r) && j < cols.size(c));
        Expr h = clamp(rows.start(r) + i, 0, cast<int64_t>(in_rows) - 1);
        Expr w = clamp(cols.start(c) + j, 0, cast<int64_t>(in_cols) - 1);
        Expr pixel = (*value)(d, cast<int>(w), cast<int>(h), n);
        p.sum(d, c, r, n) = cast(T, 0);
        p.sum(d, c, r, n) = T.value().is_float() ? strict_float(p.sum(d, c, r, n) + pixel) : p.sum(d, c, r, n) + pixel;

        // TF counts the cell's pixels in T. Generated sequences never give an
        // empty cell; the max() only keeps the division defined.
        Expr count = cast(T, max(rows.size(r) * cols.size(c), 1));
        Expr mean = T.value().is_float() ? strict_float(p.sum(d, c, r, n) / count)
                                         : div_round_to_zero(p.sum(d, c, r, n), count);  // C++'s truncation
        (*output)(d, c, r, n) = mean;
        p.output = *output;

        p.channels = output->dim(0).extent();
        p.width = output->dim(1).extent();
        p.height = output->dim(2).extent();

        schedule("FractionalAvgPool", p);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(FractionalAvgPool, FractionalAvgPool)
