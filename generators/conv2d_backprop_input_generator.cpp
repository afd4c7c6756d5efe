// Conv2DBackpropInput (docs/tf-ops.md section 6): the gradient of a (grouped,
// strided, dilated) 2-D convolution with respect to its input,
//   dIn[n,h,w,c] = sum over o of group(c), and over taps (fh, fw) with
//                  oh*sh - pad_top + fh*dh == h and ow*sw - pad_left + fw*dw == w,
//                  of out_backprop[n,oh,ow,o] * filter[fh,fw,c - g*Cg,o],
// where Cg = filter dim 2 (input channels per group), G = C / Cg groups,
// Og = Cout / G output channels per group and g = c / Cg.
// Algorithm only: the schedule is one call into schedules/.
//
// Halide dimension order (innermost first) for both data formats:
//   filter        (o, ci, fw, fh)  TF [FH, FW, Cg, Cout]
//   out_backprop  (o, ow, oh, n)   TF NHWC [N, OH, OW, Cout]
//   output        (c, x, y, n)     TF NHWC [N, H, W, C]
// NCHW tensors are the same buffers with other strides: the data_format
// parameter only moves the unit stride from the channels to the columns.
//
// The reduction is a gather over the valid taps only (window::TapGather):
// stride 1 visits every tap without a predicate, stride 2 with a 3-tap filter
// only the taps that hit an out_backprop row. Structural GeneratorParams
// (0 = read from the call at run time) let a variant fix filter size,
// strides, dilations and groups.
#include <functional>

#include "Halide.h"
#include "common/front_matter.h"
#include "common/window.h"
#include "conv2d_backprop_input.h"
#include "halide_knobs.h"

namespace {

using namespace Halide;
using namespace gradtune::generator;

class Conv2DBackpropInput : public OpGenerator<Conv2DBackpropInput, Conv2DBackpropFrontMatter, InputGradientTensors> {
public:
    gradtune::Conv2DBackpropInputKnobs knobs;

    void generate() {
        const gradtune::Structure structure = this->structure();
        const gradtune::Knobs checked =
            gradtune::checked_knobs("Conv2DBackpropInput", structure, knobs, get_target());
        gradtune::Conv2DBackpropInputPipeline p;
        Var c = p.c, x = p.x, y = p.y, n = p.n;
        const Type acc_type = accumulator_type();

        Expr filter_rows = fixed_or(filter_height, filter->dim(3).extent());
        Expr filter_cols = fixed_or(filter_width, filter->dim(2).extent());
        Expr group_in = filter->dim(1).extent();  // Cg
        Expr out_depth = filter->dim(0).extent();  // Cout
        p.groups = groups_value();
        p.stride_height = stride_rows();
        p.stride_width = stride_cols();
        Expr group_out = groups == 1 ? out_depth : out_depth / p.groups;  // Og

        // The group of channel c. A run-time G is written so that a schedule
        // that specialises on call_groups == 1 gets the ungrouped expressions
        // (the select folds to 0) and dense channel loads.
        auto group_of = [&](Expr channel) -> Expr {
            if (groups == 1) return 0;
            if (groups > 1) return channel / group_in;
            return select(call_groups == 1, 0, channel / group_in);
        };
        // Both indices are in range by construction (c - g*Cg in [0, Cg),
        // g*Og + o in [0, Cout) for o in [0, Og)); the promise tells bounds
        // inference so, without a clamp that would turn vector loads into
        // gathers.
        auto out_channel = [&](Expr g, Expr o) {
            return unsafe_promise_clamped(g * group_out + o, 0, out_depth - 1);
        };

        // The dot algorithm (schedules/conv2d_backprop_input.h) runs its
        // vector lanes along the output channels, the unit-stride axis of
        // both the HWIO filter and NHWC out_backprop, so it reads both where
        // they lie: no packed copy of the filter (9 MB for a 3x3x512x512 one,
        // more than the whole reduction costs at N=1). It is a CPU algorithm
        // of ungrouped variants (the space's constraint).
        const bool cpu = gradtune::device_of(get_target()) == gradtune::Device::cpu;
        const auto cpu_knobs =
            cpu ? gradtune::Conv2DBackpropInputCpuKnobs::from(checked) : gradtune::Conv2DBackpropInputCpuKnobs{};
        const bool dot = cpu && cpu_knobs.algorithm == 1;
        const bool winograd = cpu && cpu_knobs.algorithm == 2;
        const bool pairs = cpu && cpu_knobs.algorithm == 3;
        // bf16_pairs: the dot's operands stay bfloat16 (no widened copies),
        // multiplied two output channels at a time where the target has
        // vdpbf16ps; elsewhere the knob compiles the plain dot.
        p.bf16_pairs = dot && cpu_knobs.bf16_pairs && has_bf16_dot(get_target());

        // The filter as the reduction reads it: (c, o, fw, fh). The direct
        // and Winograd schedules pack it channel-major, so that a vector
        // along c is dense; the dot schedule leaves it inline, reading the
        // HWIO filter along its contiguous o. Winograd (ungrouped) packs
        // channels past the last one too (a register block of channels may
        // overhang a narrow input): they repeat the last one, and their
        // products are never stored.
        Var o = p.o, fw = p.fw, fh = p.fh;
        Expr g_c = group_of(c);
        Expr c_in_group = unsafe_promise_clamped(c - g_c * group_in, 0, group_in - 1);
        if (winograd) c_in_group = min(c, group_in - 1);
        // A 16-bit variant's copies (the packed filter, the staged
        // out_backprop) hold float32 on the CPU (copied()).
        Expr filter_value = (*filter)(out_channel(g_c, o), c_in_group, fw, fh);
        p.filter_packed(c, o, fw, fh) = p.bf16_pairs ? filter_value : copied(filter_value);

        // out_backprop reads zero outside its rows and columns; taps that land
        // there contribute nothing.
        Region exterior = {{Expr(), Expr()},
                           {0, out_backprop->dim(1).extent()},
                           {0, out_backprop->dim(2).extent()},
                           {Expr(), Expr()}};
        Func padded = BoundaryConditions::constant_exterior(*out_backprop, cast(T, 0), exterior);
        p.out_backprop = p.bf16_pairs || pairs ? padded : copied(padded, "out_backprop_padded");

        if (winograd) {
            winograd_f2x2_3x3(p, acc_type, group_out);
        } else if (pairs) {
            define_pairs(p, acc_type, out_depth);
        } else {
            define_gather(p, acc_type, group_out, g_c, out_channel, filter_rows, filter_cols,
                          dot ? cpu_knobs.vector_width : 0);
        }
        (*output)(c, x, y, n) = narrow(p.accumulator(c, x, y, n), T);
        p.output = *output;
        p.filter = *filter;

        declare_layout();
        p.channels = output->dim(0).extent();
        p.width = output->dim(1).extent();
        p.height = output->dim(2).extent();

        gradtune::apply(checked, structure, p, get_target());
    }

private:
    // The direct and dot algorithms: for each output position, a gather
    // over the valid taps (window::TapGather) of every output channel of c's
    // group. The dot algorithm (dot_lanes > 0) reduces over whole vectors of
    // dot_lanes output channels (lane, vector), then a tail update takes the
    // last Og % dot_lanes channels.
    void define_gather(gradtune::Conv2DBackpropInputPipeline &p, Type acc_type, Expr group_out, Expr g_c,
                       const std::function<Expr(Expr, Expr)> &out_channel, Expr filter_rows, Expr filter_cols,
                       int dot_lanes) {
        Var c = p.c, x = p.x, y = p.y, n = p.n;
        TapGather cols(x + pad_left, stride_width, call_stride_width, dilation_width, call_dilation_width,
                       filter_cols);
        TapGather rows(y + pad_top, stride_height, call_stride_height, dilation_height, call_dilation_height,
                       filter_rows);
        // One product of the reduction: output channel o (of c's group) at
        // the tap pair (j_col, j_row).
        auto product = [&](Expr o_in_group, Expr j_col, Expr j_row) {
            Expr dy = p.out_backprop(out_channel(g_c, o_in_group), cols.source(j_col), rows.source(j_row), n);
            Expr w = p.filter_packed(c, o_in_group, cols.clamped_tap(j_col), rows.clamped_tap(j_row));
            // (A bfloat16 cast, not widen()'s bit form: Halide's pattern for
            // vdpbf16ps is a sum of products of casts from bfloat16.)
            if (p.bf16_pairs) return cast(acc_type, dy) * cast(acc_type, w);
            return widen(dy, acc_type) * widen(w, acc_type);
        };
        p.accumulator(c, x, y, n) = cast(acc_type, 0);
        if (dot_lanes > 0 && p.bf16_pairs) {
            // Pairs of output channels: o = (vector * dot_lanes + lane) * 2 + pair.
            const int per_vector = 2 * dot_lanes;
            Expr vectors = group_out / per_vector;
            p.taps = RDom({{0, 2}, {0, dot_lanes}, {0, vectors}, {0, cols.count()}, {0, rows.count()}}, "taps");
            p.taps.where(cols.valid(p.taps[3]) && rows.valid(p.taps[4]));
            p.accumulator(c, x, y, n) +=
                product((p.taps[2] * dot_lanes + p.taps[1]) * 2 + p.taps[0], p.taps[3], p.taps[4]);
            p.tail = RDom(vectors * per_vector, group_out - vectors * per_vector, 0, cols.count(), 0, rows.count(),
                          "tail");
            p.tail.where(cols.valid(p.tail.y) && rows.valid(p.tail.z));
            p.accumulator(c, x, y, n) += product(p.tail.x, p.tail.y, p.tail.z);
        } else if (dot_lanes > 0) {
            Expr vectors = group_out / dot_lanes;
            p.taps = RDom({{0, dot_lanes}, {0, vectors}, {0, cols.count()}, {0, rows.count()}}, "taps");
            p.taps.where(cols.valid(p.taps.z) && rows.valid(p.taps.w));
            p.accumulator(c, x, y, n) += product(p.taps.y * dot_lanes + p.taps.x, p.taps.z, p.taps.w);
            p.tail = RDom(vectors * dot_lanes, group_out - vectors * dot_lanes, 0, cols.count(), 0, rows.count(),
                          "tail");
            p.tail.where(cols.valid(p.tail.y) && rows.valid(p.tail.z));
            p.accumulator(c, x, y, n) += product(p.tail.x, p.tail.y, p.tail.z);
        } else {
            p.taps = RDom(0, group_out, 0, cols.count(), 0, rows.count(), "taps");
            p.taps.where(cols.valid(p.taps.y) && rows.valid(p.taps.z));
            p.accumulator(c, x, y, n) += product(p.taps.x, p.taps.y, p.taps.z);
        }
    }

    // The pairs algorithm (bfloat16, a fixed 1x1 filter, stride 1, one
    // group): dIn(c, x, y, n) = sum over o of out_backprop(o, x + pad_left,
    // y + pad_top, n) * filter(o, c), taken two output channels at a time
    // (o = 2 o2 + pair) from a filter packed as (pair, c, o2), so that one
    // vector of it is 16 input channels' pairs, multiplied with a broadcast of
    // out_backprop's pair (vdpbf16ps). An odd Cout leaves one channel to the
    // tail. The operands are cast from bfloat16 (the pattern Halide matches).
    void define_pairs(gradtune::Conv2DBackpropInputPipeline &p, Type acc_type, Expr out_depth) {
        Var c = p.c, x = p.x, y = p.y, n = p.n, o = p.o, pair = p.pair;
        Expr pairs = out_depth / 2;
        // c clamped: the accumulator's vectors round its channels up to
        // whole vectors, whose lanes past the last channel are never stored.
        Expr c_clamped = clamp(c, 0, filter->dim(1).extent() - 1);
        auto w = [&](Expr out_channel) { return (*filter)(out_channel, c_clamped, 0, 0); };
        p.filter_pairs(pair, c, o) = w(2 * o + pair);
        auto dy = [&](Expr channel) { return p.out_backprop(channel, x + pad_left, y + pad_top, n); };
        p.accumulator(c, x, y, n) = cast(acc_type, 0);
        p.taps = RDom({{0, 2}, {0, pairs}}, "taps");
        p.accumulator(c, x, y, n) +=
            cast(acc_type, dy(2 * p.taps[1] + p.taps[0])) * cast(acc_type, p.filter_pairs(p.taps[0], c, p.taps[1]));
        p.tail = RDom(2 * pairs, out_depth - 2 * pairs, "tail");
        p.accumulator(c, x, y, n) += cast(acc_type, dy(p.tail.x)) * cast(acc_type, w(p.tail.x));
    }

    // Winograd's minimal filtering F(2x2, 3x3) (Lavin and Gray, "Fast
    // Algorithms for Convolutional Neural Networks", 2016), for variants that
    // fix a 3x3 filter, stride 1, dilation 1 and groups=1 (the space's
    // constraint). With stride 1 the input gradient is a correlation of the
    // zero-extended out_backprop d(o, u, v) = out_backprop(o, u + pad_left - 2,
    // v + pad_top - 2) with the flipped filter g(c, o, kw, kh) =
    // filter(o, c, 2 - kw, 2 - kh):
    //   dIn(c, x, y) = sum over o, kw, kh of d(o, x + kw, y + kh) g(c, o, kw, kh).
    // Every 2x2 block of dIn (tile t) then costs 16 products per (c, o)
    // instead of 36:
    //   U(c, o)  = G g G^T          (4x4; the filter, once per call)
    //   V(o, t)  = B^T d_t B        (4x4; the tile's 4x4 window of d)
    //   M(c, t)  = sum over o of U(c, o) * V(o, t), element by element:
    //              16 independent matrix products over the output channels
    //   dIn_t(c) = A^T M(c, t) A    (2x2)
    // with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
    // B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1].
    // The halves are exact in binary floating point; the rounding differs
    // from the direct sum's by a few units in the last place of the
    // transformed values (the tests' float32 tolerance holds it with room).
    // Tiles are numbered t = tx + tiles_x * (ty + tiles_y * n), so that the
    // matrix products run over all tiles of all images alike.
    void winograd_f2x2_3x3(gradtune::Conv2DBackpropInputPipeline &p, Type acc_type, Expr group_out) {
        Var c = p.c, x = p.x, y = p.y, n = p.n, o = p.o, t = p.t, xi = p.xi, nu = p.nu, i = p.i, j = p.j;
        Expr tiles_x = (output->dim(1).extent() + 1) / 2, tiles_y = (output->dim(2).extent() + 1) / 2;
        Expr tiles = tiles_x * tiles_y * output->dim(3).extent();

        // U: G g G^T, first along kw (columns), then along kh (rows), from
        // the filter packed channel-major.
        auto g = [&](Expr kw, Expr kh) { return widen(p.filter_packed(c, o, 2 - kw, 2 - kh), acc_type); };
        auto g_cols = [&](Expr kh) {
            Expr g0 = g(0, kh), g1 = g(1, kh), g2 = g(2, kh);
            return mux(xi, {g0, (g0 + g1 + g2) * 0.5f, (g0 - g1 + g2) * 0.5f, g2});
        };
        Expr u0 = g_cols(0), u1 = g_cols(1), u2 = g_cols(2);
        p.winograd_filter(c, o, xi, nu) = mux(nu, {u0, (u0 + u1 + u2) * 0.5f, (u0 - u1 + u2) * 0.5f, u2});

        // V: B^T d B over the tile's 4x4 window at (2 tx, 2 ty). Tiles past
        // the last one (a register block of tiles may overhang) read the
        // last one again; their products are never stored.
        Expr tile = clamp(t, 0, tiles - 1);
        Expr tx = tile % tiles_x, ty = (tile / tiles_x) % tiles_y, image = tile / (tiles_x * tiles_y);
        auto d = [&](int a, int b) {
            return widen(p.out_backprop(o, 2 * tx + a + pad_left - 2, 2 * ty + b + pad_top - 2, image), acc_type);
        };
        auto d_cols = [&](int b) {
            Expr d0 = d(0, b), d1 = d(1, b), d2 = d(2, b), d3 = d(3, b);
            return mux(xi, {d0 - d2, d1 + d2, d2 - d1, d1 - d3});
        };
        Expr v0 = d_cols(0), v1 = d_cols(1), v2 = d_cols(2), v3 = d_cols(3);
        p.winograd_input(o, t, xi, nu) = mux(nu, {v0 - v2, v1 + v2, v2 - v1, v1 - v3});

        // M: the 16 products, reduced over the output channels.
        p.taps = RDom(0, group_out, "taps");
        p.winograd_products(c, t, xi, nu) = cast(acc_type, 0);
        p.winograd_products(c, t, xi, nu) +=
            p.winograd_filter(c, p.taps.x, xi, nu) * p.winograd_input(p.taps.x, t, xi, nu);

        // A^T M A: output position (i, j) of the tile, 0 or 1 each.
        auto m = [&](Expr a, Expr b) { return p.winograd_products(c, t, a, b); };
        auto m_cols = [&](Expr b) { return mux(i, {m(0, b) + m(1, b) + m(2, b), m(1, b) - m(2, b) - m(3, b)}); };
        Expr y0 = m_cols(0), y1 = m_cols(1), y2 = m_cols(2), y3 = m_cols(3);
        p.winograd_output(c, i, j, t) = mux(j, {y0 + y1 + y2, y1 - y2 - y3});

        p.accumulator(c, x, y, n) = p.winograd_output(c, x % 2, y % 2, x / 2 + tiles_x * (y / 2 + tiles_y * n));
    }

    // The unit-stride dimension is c (NHWC) or w (NCHW); a fixed filter size
    // is also a promise the filter buffer must keep.
    void declare_layout() {
        if (nchw()) {
            // The filter is [FH, FW, Cg, Cout] in both formats: o keeps stride 1.
            unit_stride_on_columns(out_backprop);
            unit_stride_on_columns(output);
        }
        promise_filter_size(filter, filter_height, filter_width);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Conv2DBackpropInput, Conv2DBackpropInput)
