// The cases the convolution tests share: the NHWC sizes and geometry of one
// call of a dense convolution gradient (Conv2DBackpropInput,
// Conv2DBackpropFilter) or of a depthwise op, with TF's windows as the
// plain-loop references compute them (reference/window.h), their operands,
// and how a test runs its op on them (ConvOp). Their layout and attrs
// helpers are test_util.h's.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "reference/window.h"
#include "variant_sweep.h"

namespace gradtune::testing {

// A case's TF windows: its output rows and columns, and the geometry the
// references take. Not valid where TF rejects the geometry (no output size).
struct CaseWindows {
    reference::Window rows, cols;
    reference::Geometry2D geometry;
    bool valid() const { return rows.output >= 0 && cols.output >= 0; }
};

inline CaseWindows case_windows(int64_t H, int64_t W, int64_t FH, int64_t FW, int64_t stride_h, int64_t stride_w,
                                int64_t dilation_h, int64_t dilation_w, const std::string &padding,
                                const std::array<int, 4> &pads) {
    CaseWindows w;
    w.rows = reference::window(H, FH, dilation_h, stride_h, padding, pads[0], pads[1]);
    w.cols = reference::window(W, FW, dilation_w, stride_w, padding, pads[2], pads[3]);
    w.geometry = {stride_h, stride_w, dilation_h, dilation_w, w.rows.pad_before, w.cols.pad_before};
    return w;
}

// " SAME", or " EXPLICIT(top,bottom,left,right)": the end of a case's description.
inline std::string describe_padding(const std::string &padding, const std::array<int, 4> &pads) {
    std::ostringstream out;
    out << " " << padding;
    if (padding == "EXPLICIT") out << "(" << pads[0] << "," << pads[1] << "," << pads[2] << "," << pads[3] << ")";
    return out.str();
}

struct DenseConvCase {
    int64_t N, H, W, C, O, FH, FW, G;  // G groups: the filter is [FH, FW, C / G, O]
    int64_t stride_h, stride_w, dilation_h, dilation_w;
    std::string padding;
    std::array<int, 4> pads{};  // top, bottom, left, right (EXPLICIT only)

    std::string describe() const {
        std::ostringstream out;
        out << "N" << N << " H" << H << " W" << W << " C" << C << " O" << O << " G" << G << " f" << FH << "x" << FW
            << " s" << stride_h << "x" << stride_w << " d" << dilation_h << "x" << dilation_w;
        return out.str() + describe_padding(padding, pads);
    }
    CaseWindows windows() const {
        return case_windows(H, W, FH, FW, stride_h, stride_w, dilation_h, dilation_w, padding, pads);
    }
    std::vector<int64_t> in_shape() const { return {N, H, W, C}; }
    std::vector<int64_t> filter_shape() const { return {FH, FW, C / G, O}; }
    std::vector<int64_t> out_shape(const CaseWindows &w) const { return {N, w.rows.output, w.cols.output, O}; }
};

// Whether variant `v` serves the case's structure.
inline bool fits_dense_conv(const VariantInfo &v, const DenseConvCase &k) {
    return fits_structure(v, {{"dilation_height", k.dilation_h},
                              {"dilation_width", k.dilation_w},
                              {"filter_height", k.FH},
                              {"filter_width", k.FW},
                              {"groups", k.G},
                              {"stride_height", k.stride_h},
                              {"stride_width", k.stride_w}});
}

// What the sweep of a dense convolution gradient varies by op (the tiles
// its kernels must pass and miss).
struct DenseSweep {
    std::vector<std::array<int64_t, 2>> channels;  // (C, O), cycled through the strided cases
    int64_t batches = 2;                           // their batch cycles through 1..batches
    std::vector<std::array<int64_t, 3>> groups;    // grouped filters (C, O, G)
    std::array<int64_t, 3> tiny;                   // (N, C, O) of the tiny images that are not square
};

// The sweep both dense convolution gradients share over what a generic
// variant leaves to run time: strides x dilations x filter shapes x every
// padding mode (asymmetric explicit pads), channels cycling through
// sweep.channels; the grouped filters with strides and dilations of 1 and 2;
// H and W of 1..3 against every kernel and stride; and the empty tensors:
// batch 0, no out_backprop columns (VALID, filter 3 on 2 columns:
// O = (2 - 3 + 1) / 1 = 0), a filter without taps, no output channels.
inline std::vector<DenseConvCase> dense_conv_sweep(const DenseSweep &sweep) {
    std::vector<DenseConvCase> cases;
    const size_t kinds = sweep.channels.size();
    int64_t i = 0;
    for (auto [sh, sw] : {std::pair{1, 1}, std::pair{2, 2}, std::pair{1, 2}, std::pair{3, 1}})
        for (auto [dh, dw] : {std::pair{1, 1}, std::pair{2, 2}, std::pair{1, 3}})
            for (auto [fh, fw] : {std::pair{3, 3}, std::pair{2, 3}, std::pair{1, 1}, std::pair{4, 2}})
                for (const char *padding : {"SAME", "VALID", "EXPLICIT"}) {
                    auto [C, O] = sweep.channels[i % kinds];
                    cases.push_back({1 + i % sweep.batches,
                                     6 + i % 4,
                                     9 - i % 3,
                                     C,
                                     O,
                                     fh,
                                     fw,
                                     1,
                                     sh,
                                     sw,
                                     dh,
                                     dw,
                                     padding,
                                     {1, 2, 0, 3}});
                    i++;
                }
    for (auto [C, O, G] : sweep.groups)
        for (auto [s, d] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}})
            for (const char *padding : {"SAME", "VALID", "EXPLICIT"})
                cases.push_back({2, 7, 6, C, O, 3, 3, G, s, s, d, d, padding, {0, 1, 2, 1}});
    const auto [tiny_n, tiny_c, tiny_o] = sweep.tiny;
    for (int64_t H : {1, 2, 3})
        for (int64_t W : {1, 2, 3})
            for (auto [k, s] : {std::pair{3, 1}, std::pair{3, 2}, std::pair{2, 1}})
                for (const char *padding : {"SAME", "VALID"})
                    cases.push_back(
                        {tiny_n, H, W, H == W ? 3 : tiny_c, H == W ? 2 : tiny_o, k, k, 1, s, s, 1, 1, padding, {}});
    cases.push_back({0, 5, 5, 3, 4, 3, 3, 1, 1, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 5, 2, 3, 4, 3, 3, 1, 1, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 4, 4, 3, 4, 0, 3, 1, 1, 1, 1, 1, "VALID", {}});
    cases.push_back({2, 4, 4, 3, 0, 3, 3, 1, 1, 1, 1, 1, "SAME", {}});
    return cases;
}

// Run-time sizes {N, H, W, C, O} (C and O per group) for a dense variant
// whose structure is fixed, each in every padding mode: the edge sizes both
// dense gradients run (one pixel, odd sizes, channels around the 16- and
// 32-lane tiles, an empty batch), plus the op's own `extra` sizes. Where the
// variant leaves the filter size to the call, it cycles through `filters`.
inline std::vector<DenseConvCase> dense_conv_specialised(const VariantInfo &v,
                                                         const std::vector<std::array<int64_t, 5>> &extra,
                                                         const std::vector<std::pair<int64_t, int64_t>> &filters) {
    std::vector<std::array<int64_t, 5>> sizes = {{1, 1, 1, 1, 1},   {1, 2, 3, 3, 2},   {2, 7, 9, 17, 9},
                                                 {1, 3, 2, 16, 16}, {2, 5, 5, 33, 64}, {1, 12, 11, 48, 40},
                                                 {3, 9, 8, 32, 32}, {0, 4, 4, 8, 8}};
    sizes.insert(sizes.end(), extra.begin(), extra.end());
    std::vector<DenseConvCase> cases;
    auto fixed = [&](const char *name, int64_t otherwise) {
        return v.structure.at(name) ? v.structure.at(name) : otherwise;
    };
    const int64_t G = fixed("groups", 1);
    size_t i = 0;
    for (const auto &[N, H, W, C, O] : sizes)
        for (const char *padding : {"SAME", "VALID", "EXPLICIT"}) {
            const auto [fh, fw] = filters[i++ % filters.size()];
            cases.push_back({N,
                             H,
                             W,
                             C * G,
                             O * G,
                             fixed("filter_height", fh),
                             fixed("filter_width", fw),
                             G,
                             fixed("stride_height", 1),
                             fixed("stride_width", 1),
                             fixed("dilation_height", 1),
                             fixed("dilation_width", 1),
                             padding,
                             {1, 0, 2, 1}});
        }
    return cases;
}

struct DepthwiseCase {
    int64_t N, H, W, C, M, FH, FW, stride, dilation_h, dilation_w;  // M: depth multiplier
    std::string padding;
    std::array<int, 4> pads{};  // top, bottom, left, right (EXPLICIT only)

    std::string describe() const {
        std::ostringstream out;
        out << "N" << N << " H" << H << " W" << W << " C" << C << " M" << M << " f" << FH << "x" << FW << " s" << stride
            << " d" << dilation_h << "x" << dilation_w;
        return out.str() + describe_padding(padding, pads);
    }
    CaseWindows windows() const {
        return case_windows(H, W, FH, FW, stride, stride, dilation_h, dilation_w, padding, pads);
    }
    std::vector<int64_t> in_shape() const { return {N, H, W, C}; }
    std::vector<int64_t> filter_shape() const { return {FH, FW, C, M}; }
    std::vector<int64_t> out_shape(const CaseWindows &w) const { return {N, w.rows.output, w.cols.output, C * M}; }
};

inline bool fits_depthwise(const VariantInfo &v, const DepthwiseCase &k) {
    return fits_structure(v, {{"depth_multiplier", k.M},
                              {"dilation_height", k.dilation_h},
                              {"dilation_width", k.dilation_w},
                              {"filter_height", k.FH},
                              {"filter_width", k.FW},
                              {"stride", k.stride}});
}

// The sweep the three depthwise tests share over what a generic variant
// leaves to run time: strides 1/2/3 x dilations x filter shapes x every
// padding mode, channels cycling through `channels` and the depth multiplier
// through 1, 2, 3; then H and W of 1..3 against every kernel and stride.
inline std::vector<DepthwiseCase> depthwise_sweep(const std::vector<int64_t> &channels) {
    std::vector<DepthwiseCase> cases;
    const int64_t kinds = static_cast<int64_t>(channels.size());
    int64_t i = 0;
    for (int64_t stride : {1, 2, 3})
        for (auto [dh, dw] : {std::pair{1, 1}, std::pair{2, 2}, std::pair{1, 2}})
            for (auto [fh, fw] : {std::pair{3, 3}, std::pair{2, 3}, std::pair{1, 1}, std::pair{5, 5}})
                for (const char *padding : {"SAME", "VALID", "EXPLICIT"}) {
                    const int64_t C = channels[i % kinds], M = 1 + (i / kinds) % 3;
                    cases.push_back({2, 7 + i % 3, 9 - i % 2, C, M, fh, fw, stride, dh, dw, padding, {1, 2, 0, 3}});
                    i++;
                }
    for (int64_t H : {1, 2, 3})
        for (int64_t W : {1, 2, 3})
            for (auto [k, s] : {std::pair{3, 1}, std::pair{3, 2}, std::pair{2, 1}})
                for (const char *padding : {"SAME", "VALID"})
                    cases.push_back({1, H, W, H == W ? 3 : 1, 1, k, k, s, 1, 1, padding, {}});
    return cases;
}

// TF's configs for both depthwise gradients (depthwise_conv_op_base.py's
// gradient tests; docs/tf-ops.md section 13.4): input, filter, stride,
// padding[, explicit pads], dilations. TF runs the dilated ones through
// space_to_batch; here they are native.
inline std::vector<DepthwiseCase> depthwise_gradient_configs() {
    return {
        {2, 5, 8, 1, 2, 4, 4, 1, 1, 1, "SAME", {}},
        {4, 5, 5, 1, 2, 2, 2, 2, 1, 1, "VALID", {}},
        {2, 4, 4, 2, 2, 3, 1, 1, 1, 1, "SAME", {}},
        {1, 15, 15, 2, 1, 1, 3, 1, 1, 1, "SAME", {}},
        {2, 15, 16, 1, 2, 3, 3, 3, 1, 1, "VALID", {}},
        {2, 5, 8, 1, 2, 4, 3, 1, 1, 2, "SAME", {}},
        {1, 3, 1, 2, 1, 2, 1, 1, 1, 1, "SAME", {}},
        {2, 2, 3, 2, 1, 2, 1, 1, 1, 1, "SAME", {}},
        {2, 2, 3, 1, 1, 2, 2, 1, 1, 1, "SAME", {}},
        {2, 5, 8, 1, 2, 4, 4, 1, 1, 1, "EXPLICIT", {0, 1, 2, 3}},
        {4, 5, 5, 1, 2, 2, 2, 2, 1, 1, "EXPLICIT", {3, 1, 5, 0}},
        {2, 4, 4, 2, 2, 3, 1, 1, 1, 1, "EXPLICIT", {4, 1, 3, 4}},
        {1, 15, 15, 2, 1, 1, 3, 1, 1, 1, "EXPLICIT", {3, 0, 2, 8}},
        {2, 15, 16, 1, 2, 3, 3, 3, 1, 1, "EXPLICIT", {0, 0, 10, 0}},
        {2, 5, 8, 1, 2, 3, 4, 1, 2, 1, "EXPLICIT", {3, 1, 2, 3}},
        {2, 4, 3, 2, 1, 3, 2, 1, 1, 1, "EXPLICIT", {2, 0, 1, 0}},
    };
}

// Run-time sizes {N, H, W, C} for a depthwise variant whose structure is
// fixed, each in every padding mode: the edge sizes every depthwise test
// runs (one pixel, odd sizes, channels around the 16- and 32-lane tiles, an
// empty batch), plus the op's own `extra` sizes.
inline std::vector<DepthwiseCase> depthwise_specialised(const VariantInfo &v,
                                                        const std::vector<std::array<int64_t, 4>> &extra) {
    std::vector<std::array<int64_t, 4>> sizes = {{1, 1, 1, 1},  {1, 2, 3, 3},    {2, 7, 9, 17}, {1, 3, 2, 16},
                                                 {2, 5, 5, 33}, {1, 12, 11, 48}, {0, 4, 4, 8}};
    sizes.insert(sizes.end(), extra.begin(), extra.end());
    std::vector<DepthwiseCase> cases;
    const auto &s = v.structure;
    for (const auto &[N, H, W, C] : sizes)
        for (const char *padding : {"SAME", "VALID", "EXPLICIT"})
            cases.push_back({N,
                             H,
                             W,
                             C,
                             s.at("depth_multiplier"),
                             s.at("filter_height"),
                             s.at("filter_width"),
                             s.at("stride"),
                             s.at("dilation_height"),
                             s.at("dilation_width"),
                             padding,
                             {1, 0, 2, 1}});
    return cases;
}

// Test data of `dtype`: uniform in [-1, 1) for floats, rounded to the dtype;
// small integers for int32 (-4..4, truncated from [-5, 5)), so that int32
// sums are exact and far from overflow.
inline std::vector<double> test_data(int64_t n, uint32_t seed, DataType dtype) {
    return dtype == DataType::kInt32 ? random_values(n, seed, dtype, -5.0, 5.0) : random_values(n, seed, dtype);
}

// The three operands of a convolution and its gradients: the forward op's
// input and filter, and its output (out_backprop for the gradients).
enum class Operand { kInput, kFilter, kOutput };

// A case's NHWC operands, test_data of a dtype: the input x, the filter f
// and out_backprop dy (seeds seed, seed + 1, seed + 2), with TF's windows.
// Not valid (and empty) where TF rejects the geometry.
struct ConvOperands {
    bool valid = false;
    CaseWindows w;
    std::vector<int64_t> in_shape, filter_shape, out_shape;
    std::vector<double> x, f, dy;

    const std::vector<int64_t> &shape(Operand which) const {
        return which == Operand::kInput ? in_shape : which == Operand::kFilter ? filter_shape : out_shape;
    }
    const std::vector<double> &values(Operand which) const {
        return which == Operand::kInput ? x : which == Operand::kFilter ? f : dy;
    }
};

template <typename Case>
ConvOperands conv_operands(const Case &k, DataType dtype, uint32_t seed) {
    ConvOperands o;
    o.w = k.windows();
    if (!o.w.valid()) return o;
    o.valid = true;
    o.in_shape = k.in_shape();
    o.filter_shape = k.filter_shape();
    o.out_shape = k.out_shape(o.w);
    o.x = test_data(NumElements(o.in_shape), seed, dtype);
    o.f = test_data(NumElements(o.filter_shape), seed + 1, dtype);
    o.dy = test_data(NumElements(o.out_shape), seed + 2, dtype);
    return o;
}

// One run of a convolution op in a test, in the layout under test: the
// call's operands from NHWC values (activations transposed for NCHW, filters
// as they are), the options forcing the variant, and the output read back in
// NHWC.
struct ConvRun {
    DataType dtype;
    std::string layout;
    bool nchw;
    RunOptions options;

    ConvRun(DataType dtype, const std::string &layout, const std::string &variant)
        : dtype(dtype), layout(layout), nchw(is_nchw(layout)) {
        options.variant = variant;
    }
    // An activation-shaped operand (input, out_backprop) from its NHWC values.
    Tensor activation(const std::vector<int64_t> &shape, const std::vector<double> &values) const {
        return make_tensor(dtype, to_layout(shape, nchw), nchw ? reference::nhwc_to_nchw(values, shape) : values);
    }
    // A filter-shaped operand: the same in both layouts.
    Tensor filter(const std::vector<int64_t> &shape, const std::vector<double> &values) const {
        return make_tensor(dtype, shape, values);
    }
    // input_sizes: an activation's NHWC shape, in the layout.
    Tensor activation_sizes(const std::vector<int64_t> &shape) const { return int32_vector(to_layout(shape, nchw)); }
    std::vector<int> strides(int64_t rows, int64_t cols) const { return spatial_attr(rows, cols, nchw); }

    // An output shaped like operand `kind`, read back in NHWC order; empty
    // unless its shape is `shape` (NHWC) in the layout.
    std::optional<std::vector<double>> nhwc_values(const Tensor &output, Operand kind,
                                                   const std::vector<int64_t> &shape) const {
        const bool transposed = nchw && kind != Operand::kFilter;
        if (output.shape() != to_layout(shape, transposed)) return std::nullopt;
        std::vector<double> values = to_doubles(output);
        return transposed ? reference::nchw_to_nhwc(values, to_layout(shape, true)) : values;
    }

    // The call's outcome: its status and, where it ran, the output's NHWC
    // shape (checked against `shape`, that of operand `kind`) and its
    // normwise error against `want`.
    Outcome compare(const Status &status, const Tensor &output, Operand kind, const std::vector<int64_t> &shape,
                    const std::vector<double> &want) const {
        Outcome outcome;
        outcome.valid = true;
        outcome.status = status;
        if (!status.ok()) return outcome;
        const std::optional<std::vector<double>> got = nhwc_values(output, kind, shape);
        if (!got) {
            outcome.status = Internal("output shape " + ShapeString(output.shape()) + ", expected " +
                                      ShapeString(to_layout(shape, nchw && kind != Operand::kFilter)));
            return outcome;
        }
        outcome.output_shape = shape;
        outcome.error = normwise_error(*got, want);
        return outcome;
    }
};

// A convolution op under test: `call` runs Op::Compute on a case's operands
// in run's layout, `reference` computes the NHWC result from the same
// operands, and the result is shaped like operand `result`. As a run_case
// (check_every_variant and the other sweeps): one case through the public
// API (forcing `variant` unless empty), compared with the reference.
template <typename Case>
struct ConvOp {
    std::function<Status(const Case &, const ConvOperands &, const ConvRun &, Tensor *)> call;
    std::function<std::vector<double>(const ConvOperands &)> reference;
    Operand result;

    Outcome operator()(const Case &k, DataType dtype, const std::string &layout, const std::string &variant,
                       uint32_t seed) const {
        const ConvOperands o = conv_operands(k, dtype, seed);
        if (!o.valid) return {};
        const ConvRun run(dtype, layout, variant);
        Tensor output;
        const Status status = call(k, o, run, &output);
        return run.compare(status, output, result, o.shape(result), reference(o));
    }
};

// The ConvOp of a forward convolution (Conv2D, DepthwiseConv2dNative):
// Op::Compute on a case's activation and filter, with the strides
// `strides(k)` gives (rows, columns), against `reference`, the op's plain
// loop over (input, shape, filter, shape, output rows, columns, geometry).
template <typename Op, typename Case, typename Strides, typename Reference>
ConvOp<Case> forward_conv_op(Strides strides, Reference reference) {
    return {[strides](const Case &k, const ConvOperands &o, const ConvRun &run, Tensor *output) {
                const auto [rows, cols] = strides(k);
                return Op::Compute(run.activation(o.in_shape, o.x), run.filter(o.filter_shape, o.f),
                                   run.strides(rows, cols), k.padding, output, conv_attrs<Op>(k, run.layout),
                                   run.options);
            },
            [reference](const ConvOperands &o) {
                return reference(o.x, o.in_shape, o.f, o.filter_shape, o.w.rows.output, o.w.cols.output,
                                 o.w.geometry);
            },
            Operand::kOutput};
}

// The adjoint identity of a convolution gradient, for each case in both
// layouts, in float64: with y = forward(x, f), the plain-loop forward
// reference (reference::conv2d, reference::depthwise_conv2d_native),
// <y, dy> must equal <operand, gradient> for the operand the gradient is of
// (x for the input gradient, f for the filter gradient), to 1e-12.
template <typename Case, typename Forward>
void check_adjoint(const ConvOp<Case> &gradient, Forward forward, const std::vector<Case> &cases) {
    for (const Case &k : cases)
        for (const char *layout : {"NHWC", "NCHW"}) {
            const ConvOperands o = conv_operands(k, DataType::kDouble, 11);
            REQUIRE(o.valid);
            const ConvRun run(DataType::kDouble, layout, "");
            Tensor output;
            REQUIRE(gradient.call(k, o, run, &output).ok());
            const auto g = run.nhwc_values(output, gradient.result, o.shape(gradient.result));
            REQUIRE(g);
            const std::vector<double> y =
                forward(o.x, o.in_shape, o.f, o.filter_shape, o.w.rows.output, o.w.cols.output, o.w.geometry);
            const std::vector<double> &paired = o.values(gradient.result);
            double lhs = 0, rhs = 0;
            for (size_t i = 0; i < y.size(); i++) lhs += y[i] * o.dy[i];
            for (size_t i = 0; i < paired.size(); i++) rhs += paired[i] * (*g)[i];
            INFO(k.describe() << " " << layout);
            CHECK(std::fabs(lhs - rhs) <= 1e-12 * std::max(1.0, std::fabs(lhs)));
        }
}

// TF's depthwise forward golden (docs/tf-ops.md section 1.1) through a
// depthwise gradient: input [1,2,3,2] = 1..12, filter [2,2,2,2] = 1..16, VALID,
// stride 1 -> [196,216,272,296,252,280,344,376]. The gradient is the forward
// op's adjoint in its operand, so <operand, gradient(e_k)> = output[k] for
// every one-hot out_backprop e_k: exact in integers (the gradient's elements
// are values of the other operand), in every floating dtype.
inline void check_depthwise_golden_through(const ConvOp<DepthwiseCase> &gradient) {
    const DepthwiseCase k{1, 2, 3, 2, 2, 2, 2, 1, 1, 1, "VALID", {}};
    const std::vector<double> golden = {196, 216, 272, 296, 252, 280, 344, 376};
    ConvOperands o = conv_operands(k, DataType::kDouble, 0);  // the shapes; values replaced below
    REQUIRE(o.valid);
    o.x = iota(NumElements(o.in_shape));
    o.f = iota(NumElements(o.filter_shape));
    REQUIRE(NumElements(o.out_shape) == static_cast<int64_t>(golden.size()));
    for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16})
        for (size_t e = 0; e < golden.size(); e++) {
            o.dy.assign(golden.size(), 0.0);
            o.dy[e] = 1;
            const ConvRun run(dtype, "NHWC", "");
            Tensor output;
            REQUIRE(gradient.call(k, o, run, &output).ok());
            const std::vector<double> &operand = o.values(gradient.result);
            double dot = 0;
            for (size_t i = 0; i < operand.size(); i++) dot += operand[i] * output.load(static_cast<int64_t>(i));
            INFO(DataTypeName(dtype) << " k=" << e);
            CHECK(dot == golden[e]);
        }
}

}  // namespace gradtune::testing
