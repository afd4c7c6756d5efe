// FractionalAvgPoolGrad (docs/tf-ops.md section 9): the gradient of
// FractionalAvgPool. Every out_backprop cell (b, r, c) spreads its value
// evenly over the input pixels its pooling cell covers:
//   rows  row_seq[r] .. min(overlapping ? row_seq[r+1] : row_seq[r+1] - 1, H - 1)
//   cols  col_seq[c] .. min(overlapping ? col_seq[c+1] : col_seq[c+1] - 1, W - 1)
//   dIn[b, h, w, d] += (double) dOut[b, r, c, d] / cell_size(r, c)
// accumulated in float64 for every T and cast to T once (integers truncate
// toward zero), exactly as TF.
//
// Written as a gather: pixel (h, w) sums over the cells that cover it. With
// arbitrary sequences (non-monotonic, out of range: TF accepts them) a row
// may be covered by any number of cells, not necessarily consecutive ones.
// The runtime therefore hands in, per input row (column), a search range of
// cells that contains every covering cell (row_cells / col_cells: first cell,
// number of cells), and the reduction tests each cell of the range. For
// monotonic sequences (all that FractionalAvgPool generates) every cell of a
// range covers the pixel: the runtime says so with ranges_exact = 1, and the
// schedule specialises that case (no per-cell test). Ranges are then 1 cell
// per row (non-overlapping) or at most 2 (overlapping).
//
// Bit-exact with TF: each term is TF's division (float64 / float64 of the
// int64 cell size), and a pixel's terms are added in TF's order, cell row
// ascending, then cell column ascending, under strict_float (Halide otherwise
// lets LLVM reassociate float adds).
//
// divide_by_reciprocal = 1 gets the division's bits without a vector
// division (16 cycles per 8 float64 lanes): two multiplies and an add per
// term. For a float32 value v (24 significant bits) and a cell size s < 2^22,
// per cell (scalar, once for all channels):
//   r = 1/s; h = r rounded to 26 bits (Veltkamp: c = r*(2^27+1), h = c-(c-r));
//   l = (1 - s*h) / s: s*h is exact (22 + 26 bits) and within a factor 2 of
//     1, so 1 - s*h is exact (Sterbenz) and 1/s = h + (1 - s*h)/s exactly;
// per term: q = v*h + v*l. v*h is exact (24 + 26 bits); the roundings of l
// and of v*l each move the sum by at most 2^-78 of v/s (|l| < 2^-25/s), so
// the sum before its rounding is within 2^-77 of v/s: at most 2^-24 of an
// ulp of the result. The exact v/s lies at least 1/(2s) > 2^-23 of an ulp from any
// rounding midpoint (v and s*midpoint are distinct multiples of the
// midpoint spacing: v has 24 bits, the spacing is 2^-53 of the result), so
// q rounds to the division's double.
// Non-finite values take v*h (inf and NaN as the division gives them; a
// zero term's sign cannot show in a sum that starts at +0). float32 only
// (int32 values have 31 bits: v*h would round); larger cells (images of
// 2^22 pixels and more) divide: the schedule specialises on small_cells.
// tests/test_fractional_avg_pool_grad.cpp compares every float32 significand
// with the division.
//
// A row's cells past its search range are skipped (a branch per row), and a
// cell of the range that does not cover the pixel (with exact ranges, as for
// generated sequences: a second column cell where the range has one) adds
// the quotient of column OW, which holds zeros: a select on the column
// index, not on each term's vector. Both add nothing a sum starting at +0
// could show.
//
// Halide dimension order (innermost first), NHWC only:
//   out_backprop (d, c, r, n)   TF [N, OH, OW, C]
//   output       (d, w, h, n)   TF [N, H, W, C]; n and d extents = out_backprop's
//                               (the runtime handles a smaller out_backprop)
//   row_pooling_sequence (i)    the first OH + 1 values; col likewise
//   row_cells    (k, h)         k = 0: first cell of row h's range, k = 1: range length
//   col_cells    (k, w)         the same for columns
#include "Halide.h"
#include "common/front_matter.h"
#include "fractional_avg_pool_grad.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using namespace gradtune::generator;

class FractionalAvgPoolGrad : public OpGenerator<FractionalAvgPoolGrad, PoolingFrontMatter, PoolingGradientTensors> {
public:
    gradtune::FractionalAvgPoolGradKnobs knobs;

    Input<int> max_row_cells{"max_row_cells"};  // the longest row search range
    Input<int> max_col_cells{"max_col_cells"};  // the longest column search range
    Input<int> ranges_exact{"ranges_exact"};    // 1: every cell of every range covers its pixel
    // Every cell of input row h's search range lies within
    // [band(h) - row_band_below, band(h) + row_band_above], band(h) = h * OH / H.
    Input<int> row_band_below{"row_band_below"};
    Input<int> row_band_above{"row_band_above"};
    Input<Buffer<int64_t, 1>> row_pooling_sequence{"row_pooling_sequence"};
    Input<Buffer<int64_t, 1>> col_pooling_sequence{"col_pooling_sequence"};
    Input<Buffer<int32_t, 2>> row_cells{"row_cells"};  // (k, h)
    Input<Buffer<int32_t, 2>> col_cells{"col_cells"};  // (k, w)


    void generate() {
        check_overlapping();
        const gradtune::Structure structure = this->structure();
        const gradtune::Knobs checked =
            gradtune::checked_knobs("FractionalAvgPoolGrad", structure, knobs, get_target());
        const bool cpu = gradtune::device_of(get_target()) == gradtune::Device::cpu;
        gradtune::FractionalAvgPoolGradPipeline p;
        Var d = p.d, w = p.w, h = p.h, n = p.n;

        Expr out_rows = out_backprop->dim(2).extent(), out_cols = out_backprop->dim(1).extent();
        Expr in_rows = output->dim(2).extent(), in_cols = output->dim(1).extent();
        Expr overlap = overlapping_value();
        Axis rows{row_pooling_sequence, overlap, in_rows, out_rows};
        Axis cols{col_pooling_sequence, overlap, in_cols, out_cols};

        // TF's per-cell term. Only called with cells inside out_backprop.
        Expr cell_size = rows.size(h) * cols.size(w);  // int64, as TF
        Expr value = cast<double>((*out_backprop)(d, min(w, out_cols - 1), h, n)), size = cast<double>(cell_size);
        p.small_cells = cast<int64_t>(in_rows) * cast<int64_t>(in_cols) < Expr(int64_t{1} << 22);
        Expr term = value / size;
        if (cpu && gradtune::FractionalAvgPoolGradCpuKnobs::from(checked).divide_by_reciprocal)
            term = select(p.small_cells, divide_by_reciprocal(value, size), term);
        // Column out_cols, one past the last cell, holds zeros (see the top).
        p.quotient(d, w, h, n) = strict_float(select(w < out_cols, term, Expr(0.0)));

        // Pixel (h, w): row cells first_r .. first_r + count_r - 1 (outer, TF's
        // r loop), column cells likewise (inner, TF's c loop).
        p.cells = RDom(0, max_col_cells, 0, max_row_cells, "cells");
        RVar l = p.cells.x, k = p.cells.y;
        // Row cells past the row's range are skipped (a branch per row).
        p.cells.where(k < row_cells(1, h));
        // The clamp to the row's band changes no cell of the range (the
        // runtime measures the band), but it bounds the cell rows of a block
        // of input rows by an expression of h that bounds inference can use:
        // quotients staged per block of rows (stage_quotients = 2) then cover
        // those rows' cells only, not the whole image.
        Expr band = cast<int>(cast<int64_t>(h) * out_rows / in_rows);
        Expr r = clamp(row_cells(0, h) + k, max(band - row_band_below, 0), min(band + row_band_above, out_rows - 1));
        Expr c = clamp(col_cells(0, w) + l, 0, out_cols - 1);
        p.ranges_exact = ranges_exact == 1;  // the runtime passes 0 or 1
        p.max_row_cells = max_row_cells;
        p.max_col_cells = max_col_cells;
        // (k < row_cells(1, h) holds: the RDom's predicate.)
        Expr covers = l < col_cells(1, w) && (p.ranges_exact || (rows.covers(r, h) && cols.covers(c, w)));
        // A cell of the search range that does not cover the pixel adds the
        // zero column's +0.0, which changes no bit of the sum: the sum starts
        // at +0.0 and, rounded to nearest, never becomes -0.0, and x + (+0.0)
        // is x for every other x (infinities and NaN included). So the
        // schedule may run the search range as straight-line code, without a
        // branch per cell.
        p.accumulator(d, w, h, n) = cast<double>(0);
        p.accumulator(d, w, h, n) =
            strict_float(p.accumulator(d, w, h, n) + p.quotient(d, select(covers, c, out_cols), r, n));
        // Positions no cell covers keep 0. One cast to T; float64 -> integer
        // truncates toward zero like C++'s static_cast.
        (*output)(d, w, h, n) = cast(T, p.accumulator(d, w, h, n));
        p.output = *output;

        p.channels = output->dim(0).extent();
        p.width = output->dim(1).extent();
        p.height = output->dim(2).extent();

        gradtune::apply(checked, structure, p, get_target());
    }

private:
    // value / size with the division's bits, for float32 values (see the top
    // of the file). high and low depend on the cell alone: hoisted out of the
    // channel loop.
    Expr divide_by_reciprocal(Expr value, Expr size) const {
        Expr reciprocal = Expr(1.0) / size;       // float64 constants
        Expr c = reciprocal * Expr(134217729.0);  // 2^27 + 1
        Expr high = c - (c - reciprocal);         // 1 / size to 26 bits
        Expr low = (Expr(1.0) - size * high) / size;
        return select(is_finite(value), value * high + value * low, value * high);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(FractionalAvgPoolGrad, FractionalAvgPoolGrad)
