// Conv2DBackpropInput: every compiled CPU variant against the plain-loop
// reference, TF's goldens (docs/tf-ops.md section 13.1) and explicit-padding
// tests, the adjoint identity with the forward convolution, TF's bad-input
// table (docs/tf-ops.md section 11 rows 25-47 with the section 15 policy),
// empty tensors, thread safety.
#include <array>
#include <catch2/catch.hpp>
#include <iterator>

#include "bad_call.h"
#include "conv_case.h"
#include "conv_window_checks.h"
#include "reference/conv2d.h"
#include "reference/conv2d_backprop_input.h"
#include "test_util.h"
#include "variant_sweep.h"

using namespace gradtune;
using namespace gradtune::testing;

namespace {

constexpr const char *kOp = "Conv2DBackpropInput";

using Case = DenseConvCase;

// The op under test (conv_case.h), and its plain-loop reference.
const ConvOp<Case> run_case{
    [](const Case &k, const ConvOperands &o, const ConvRun &run, Tensor *output) {
        return Conv2DBackpropInput::Compute(run.activation_sizes(o.in_shape), run.filter(o.filter_shape, o.f),
                                            run.activation(o.out_shape, o.dy), run.strides(k.stride_h, k.stride_w),
                                            k.padding, output, conv_attrs<Conv2DBackpropInput>(k, run.layout),
                                            run.options);
    },
    [](const ConvOperands &o) {
        return reference::conv2d_backprop_input(o.in_shape, o.f, o.filter_shape, o.dy, o.out_shape, o.w.geometry);
    },
    Operand::kInput};

// A sweep over what a generic variant leaves to run time, plus the edge
// sizes (conv_case.h). Channel counts reach past the register tile (32 lanes
// of float32 accumulators by default) so that both the full-tile and the
// small-extent branches run; groups G in {2, 3, 4} with channels per group
// not a multiple of the vector width, and a depthwise-like G == C. (C = 0 is
// checked in the error test.)
std::vector<Case> generic_cases() {
    return dense_conv_sweep({.channels = {{1, 1}, {3, 5}, {16, 8}, {17, 9}, {33, 7}, {32, 12}, {40, 33}},
                             .batches = 2,
                             .groups = {{4, 6, 2}, {12, 9, 3}, {34, 36, 2}, {64, 32, 4}, {5, 10, 5}},
                             .tiny = {1, 36, 2}});
}

// Run-time sizes for a variant whose structure is fixed: the shared edge
// sizes, a 14x13 image of 64 channels, and 16 and 24 input channels on rows
// of 17 and 19 columns (the one-register branch of a wider tile, whole and
// with a partial vector). A variant that leaves the filter size to the call
// (a stride's structure default) meets several.
std::vector<Case> specialised_cases(const VariantInfo &v) {
    return dense_conv_specialised(v, {{1, 14, 13, 64, 24}, {2, 5, 17, 16, 16}, {1, 4, 19, 24, 8}},
                                  {{3, 3}, {2, 2}, {4, 4}, {5, 3}, {1, 1}});
}

}  // namespace

TEST_CASE("Conv2DBackpropInput: every CPU variant matches the reference", "[conv2d_backprop_input][variants]") {
    SweepCounts n =
        check_every_variant<Case>(kOp, generic_cases, specialised_cases, fits_dense_conv, run_case,
                                  {{"dot", [](const VariantInfo &v) { return has_knob(v, "algorithm=1"); }},
                                   {"Winograd", [](const VariantInfo &v) { return has_knob(v, "algorithm=2"); }}});
    INFO("cases checked: " << n.checked << ", of them by dot-algorithm variants: " << n.cases_of["dot"]
                           << ", by Winograd variants: " << n.cases_of["Winograd"]);
    CHECK(n.checked > 1000);
    // The direct and dot algorithms are compiled into every build (the 7x7
    // stride-2 structure default is a dot variant), so both meet the
    // reference. Winograd variants are compiled where a record of this class
    // (or a transferred one) chose them; tuner.every_algorithm_matches checks
    // the algorithm on every machine.
    CHECK(n.cases_of["dot"] > 10);
    if (n.variants_of["Winograd"] > 0) CHECK(n.cases_of["Winograd"] > 10 * n.variants_of["Winograd"]);
}

TEST_CASE("Conv2DBackpropInput: dispatch serves TF's Conv2D gradient-checker configs (spec 13.3)", "[conv2d_backprop_input]") {
    // (batch, in_rows, in_cols, f_rows, f_cols, in_depth, out_depth,
    // stride_r, stride_c, padding[, explicit pads]) of conv_ops_test.py's
    // input-gradient tests, plus its grouped GPU test, float32 and float64.
    const std::vector<Case> cases = {
        {2, 5, 4, 2, 3, 3, 3, 1, 1, 1, 1, 1, "VALID", {}},
        {2, 4, 5, 2, 3, 3, 3, 1, 2, 2, 1, 1, "VALID", {}},
        {2, 7, 6, 4, 5, 3, 3, 1, 3, 3, 1, 1, "VALID", {}},
        {2, 7, 6, 2, 3, 3, 3, 1, 1, 1, 1, 1, "SAME", {}},
        {2, 5, 4, 3, 3, 3, 3, 1, 2, 2, 1, 1, "SAME", {}},
        {2, 7, 6, 4, 5, 3, 3, 1, 3, 3, 1, 1, "SAME", {}},
        {2, 4, 3, 2, 3, 4, 3, 1, 1, 1, 1, 1, "VALID", {}},
        {2, 5, 4, 2, 3, 3, 3, 1, 1, 1, 1, 1, "EXPLICIT", {1, 1, 1, 1}},
        {2, 4, 5, 2, 3, 3, 3, 1, 2, 2, 1, 1, "EXPLICIT", {1, 1, 1, 1}},
        {2, 5, 4, 2, 3, 3, 3, 1, 1, 1, 1, 1, "EXPLICIT", {2, 2, 2, 2}},
        {2, 8, 5, 3, 2, 4, 2, 1, 3, 2, 1, 1, "EXPLICIT", {1, 2, 3, 4}},
        {3, 5, 7, 1, 2, 3, 2, 1, 2, 1, 1, 1, "EXPLICIT", {4, 3, 2, 1}},
        {2, 6, 7, 3, 2, 3, 4, 1, 1, 2, 1, 1, "EXPLICIT", {0, 0, 0, 5}},
        {2, 5, 4, 4, 6, 3, 3, 2, 1, 1, 1, 1, "VALID", {}},
    };
    check_dispatch_cases(cases, run_case);
}

TEST_CASE("Conv2DBackpropInput: TF's goldens (spec 13.1)", "[conv2d_backprop_input]") {
    struct Golden {
        std::vector<int64_t> input_sizes, filter, out_backprop;
        int stride_h, stride_w;
        std::string padding;
        std::vector<double> expected;
    };
    const std::vector<Golden> goldens = {
        {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, 1, 1, "VALID", {1, 4, 4, 3, 10, 8}},
        {{1, 2, 3, 3},
         {2, 2, 3, 3},
         {1, 1, 2, 3},
         1,
         1,
         "VALID",
         {14, 32, 50, 100, 163, 226, 167, 212, 257, 122, 140, 158, 478, 541, 604, 437, 482, 527}},
        {{1, 3, 6, 1},
         {2, 2, 1, 1},
         {1, 2, 3, 1},
         1,
         2,
         "VALID",
         {1, 2, 2, 4, 3, 6, 7, 12, 11, 18, 15, 24, 12, 16, 15, 20, 18, 24}},
        {{1, 4, 4, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, 2, 2, "SAME", {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}},
        {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 1, 1, 2}, 1, 1, "VALID", {5, 11, 17, 23}},
        {{2, 2}, {2, 2, 1, 2}, {1, 1, 1, 2}, 1, 1, "VALID", {5, 11, 17, 23}},  // 2-value input_sizes
        {{3, 1, 1, 2}, {1, 3, 2, 3}, {3, 1, 0, 3}, 1, 2, "VALID", std::vector<double>(6, 0.0)},
        {{0, 2, 3, 1}, {2, 2, 1, 1}, {0, 1, 2, 1}, 1, 1, "VALID", {}},
    };
    // Integer data: exact in every dtype whose mantissa holds the sums
    // (bfloat16's 8 bits do not: 541 rounds to 540, so it gets its tolerance).
    for (DataType dtype :
         {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kInt32, DataType::kBFloat16}) {
        for (const Golden &g : goldens) {
            Tensor filter = make_tensor(dtype, g.filter, iota(NumElements(g.filter)));
            Tensor dy = make_tensor(dtype, g.out_backprop, iota(NumElements(g.out_backprop)));
            Tensor out;
            Status st = Conv2DBackpropInput::Compute(int32_vector(g.input_sizes), filter, dy,
                                                     {1, g.stride_h, g.stride_w, 1}, g.padding, &out);
            INFO(DataTypeName(dtype) << " input_sizes " << ShapeString(g.input_sizes));
            REQUIRE(st.ok());
            REQUIRE(out.num_elements() == static_cast<int64_t>(g.expected.size()));
            if (dtype == DataType::kBFloat16) {
                CHECK(normwise_error(to_doubles(out), g.expected) <= tolerance(dtype));
            } else {
                CHECK(to_doubles(out) == g.expected);
            }
        }
    }
}

TEST_CASE("Conv2DBackpropInput: TF's explicit-padding tests: EXPLICIT equals VALID on the padded size, cropped (spec 13.1)",
          "[conv2d_backprop_input]") {
    // conv_ops_test.py's _RunAndVerifyBackpropInputExplicitPadding: input,
    // filter, out_backprop shapes, strides and [[top, bottom], [left, right]].
    struct Config {
        std::vector<int64_t> input, filter, out_backprop;
        int stride_h, stride_w;
        std::array<int, 4> pads;
    };
    const std::vector<Config> configs = {
        {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, 1, 1, {0, 0, 0, 0}},
        {{1, 3, 4, 2}, {2, 2, 2, 3}, {1, 1, 2, 3}, 2, 2, {0, 0, 0, 0}},
        {{1, 2, 3, 1}, {2, 2, 1, 2}, {1, 3, 4, 2}, 1, 1, {1, 1, 1, 1}},
        {{1, 2, 3, 2}, {1, 1, 2, 1}, {1, 4, 3, 1}, 1, 2, {1, 1, 1, 1}},
        {{2, 3, 1, 1}, {2, 1, 1, 1}, {2, 2, 5, 1}, 3, 1, {2, 2, 2, 2}},
        {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 10, 8, 1}, 1, 1, {1, 8, 4, 2}},
        {{1, 5, 3, 1}, {3, 2, 1, 1}, {1, 4, 8, 1}, 3, 1, {1, 8, 4, 2}},
        {{1, 3, 3, 1}, {2, 1, 1, 1}, {1, 7, 7, 1}, 1, 1, {5, 0, 2, 2}},
    };
    for (DataType dtype : {DataType::kFloat, DataType::kDouble})
        for (const char *layout : {"NHWC", "NCHW"})
            for (const Config &c : configs) {
                const auto [top, bottom, left, right] = c.pads;
                const int64_t N = c.input[0], H = c.input[1], W = c.input[2], C = c.input[3];
                const std::vector<int64_t> padded{N, H + top + bottom, W + left + right, C};
                Tensor filter = make_tensor(dtype, c.filter, iota(NumElements(c.filter)));
                const std::vector<double> dy_values = iota(NumElements(c.out_backprop));
                Tensor dy =
                    make_tensor(dtype, to_layout(c.out_backprop, is_nchw(layout)),
                                is_nchw(layout) ? reference::nhwc_to_nchw(dy_values, c.out_backprop) : dy_values);
                const std::vector<int> strides = spatial_attr(c.stride_h, c.stride_w, is_nchw(layout));
                Tensor explicit_out, valid_out;
                std::vector<int> pads = is_nchw(layout) ? std::vector<int>{0, 0, 0, 0, top, bottom, left, right}
                                                        : std::vector<int>{0, 0, top, bottom, left, right, 0, 0};
                INFO(layout << " " << DataTypeName(dtype) << " input " << ShapeString(c.input) << " pads " << top
                            << "," << bottom << "," << left << "," << right);
                REQUIRE(Conv2DBackpropInput::Compute(int32_vector(to_layout(c.input, is_nchw(layout))), filter, dy,
                                                     strides, "EXPLICIT", &explicit_out,
                                                     Conv2DBackpropInput::DataFormat(layout).ExplicitPaddings(pads))
                            .ok());
                REQUIRE(Conv2DBackpropInput::Compute(int32_vector(to_layout(padded, is_nchw(layout))), filter, dy,
                                                     strides, "VALID", &valid_out,
                                                     Conv2DBackpropInput::DataFormat(layout))
                            .ok());
                std::vector<double> got = to_doubles(explicit_out), full = to_doubles(valid_out);
                if (is_nchw(layout)) {
                    got = reference::nchw_to_nhwc(got, to_layout(c.input, is_nchw(layout)));
                    full = reference::nchw_to_nhwc(full, to_layout(padded, is_nchw(layout)));
                }
                std::vector<double> cropped;
                for (int64_t b = 0; b < N; b++)
                    for (int64_t h = 0; h < H; h++)
                        for (int64_t w = 0; w < W; w++)
                            for (int64_t ch = 0; ch < C; ch++)
                                cropped.push_back(
                                    full[((b * padded[1] + h + top) * padded[2] + w + left) * C + ch]);
                CHECK(got == cropped);  // integer data: exact
            }
}

TEST_CASE("Conv2DBackpropInput: adjoint identity with the forward convolution", "[conv2d_backprop_input]") {
    // <Conv2D(x, f), dy> == <x, Conv2DBackpropInput(dy, f)>, the forward
    // computed by an independent gather loop: grouped, strided, dilated,
    // both layouts.
    check_adjoint(run_case, reference::conv2d,
                  std::vector<Case>{{2, 9, 7, 6, 4, 3, 3, 2, 2, 1, 1, 1, "SAME", {}},
                                    {1, 11, 10, 4, 8, 5, 3, 1, 1, 2, 2, 3, "VALID", {}},
                                    {3, 6, 6, 9, 6, 2, 2, 3, 3, 2, 2, 2, "EXPLICIT", {2, 1, 0, 3}},
                                    {2, 8, 8, 40, 36, 3, 3, 1, 1, 1, 1, 1, "SAME", {}}});
}

namespace {

// A valid base call that each bad-input row changes in one place.
struct BadCall {
    Tensor input_sizes = int32_vector({1, 4, 4, 2});
    Tensor filter = make_tensor(DataType::kFloat, {3, 3, 2, 3}, std::vector<double>(54, 1.0));
    Tensor out_backprop = make_tensor(DataType::kFloat, {1, 4, 4, 3}, std::vector<double>(48, 1.0));
    std::vector<int> strides = {1, 1, 1, 1};
    std::string padding = "SAME";
    Conv2DBackpropInput::Attrs attrs;
    std::optional<ConstTensorRef> out_backprop_override;
    std::optional<ConstTensorRef> filter_override;
    std::vector<int64_t> output_shape = {1, 4, 4, 2};

    DataType dtype() const { return filter.dtype(); }
    Status run(TensorRef output) const {
        return Conv2DBackpropInput::Compute(input_sizes, filter_override ? *filter_override : filter.cref(),
                                            out_backprop_override ? *out_backprop_override : out_backprop.cref(),
                                            strides, padding, output, attrs);
    }
};

const std::string L = "Conv2DCustomBackpropInput";
const std::string kBatchDepthStrides =
    "Current implementation does not yet support strides in the batch and depth dimensions.";
const std::string kBatchDepthDilations =
    "Current implementation does not yet support dilations in the batch and depth dimensions.";
const std::string kDilationBelow1 = "Current CPU implementations do not yet support dilation rates larger than 1.";

}  // namespace

TEST_CASE("Conv2DBackpropInput: bad inputs get TF's error kind and text and leave the output untouched",
          "[conv2d_backprop_input][errors]") {
    using C = StatusCode;
    SECTION("strides: length, batch/depth (row 26, Unimplemented), not positive (row 27)") {
        BadCall c;
        c.strides = {1, 1, 1};
        expect_error(c, C::kInvalidArgument, "Sliding window strides field must specify 4 dimensions");
        c.strides = {2, 1, 1, 1};
        expect_error(c, C::kUnimplemented, kBatchDepthStrides);
        c.strides = {1, 1, 1, 2};
        expect_error(c, C::kUnimplemented, kBatchDepthStrides);
        c.strides = {1, 0, 1, 1};
        expect_error(c, C::kInvalidArgument, "Row and column strides should be larger than 0.");
        c.strides = {1, 1, -2, 1};
        expect_error(c, C::kInvalidArgument, "Row and column strides should be larger than 0.");
        c.attrs = c.attrs.DataFormat("NCHW");
        c.strides = {1, 2, 1, 1};  // NCHW: index 1 is the depth
        c.input_sizes = int32_vector({1, 2, 4, 4});
        expect_error(c, C::kUnimplemented, kBatchDepthStrides);
    }
    SECTION("dilations: length (row 28), batch/depth (row 29, Unimplemented), below 1 (row 30 policy)") {
        BadCall c;
        c.attrs = c.attrs.Dilations({1, 1, 1});
        expect_error(c, C::kInvalidArgument, "Sliding window dilations field must specify 4 dimensions");
        c.attrs = c.attrs.Dilations({2, 1, 1, 1});
        expect_error(c, C::kUnimplemented, kBatchDepthDilations);
        c.attrs = c.attrs.Dilations({1, 1, 1, 3});
        expect_error(c, C::kUnimplemented, kBatchDepthDilations);
        // TF's CPU kernel refuses every dilation but 1 with this text;
        // gradtune computes dilations and keeps it for 0 and negative values.
        c.attrs = c.attrs.Dilations({1, 0, 1, 1});
        expect_error(c, C::kInvalidArgument, kDilationBelow1);
        c.attrs = c.attrs.Dilations({1, 2, -1, 1});
        expect_error(c, C::kInvalidArgument, kDilationBelow1);
    }
    SECTION("rows 5-8: explicit paddings") {
        check_explicit_padding_rows<BadCall>();
    }
    SECTION("the constructor checks come before the compute checks") {
        BadCall c;
        c.strides = {1, 0, 1, 1};
        c.input_sizes = int32_vector({1, 4, 4});
        expect_error(c, C::kInvalidArgument, "Row and column strides should be larger than 0.");
    }
    SECTION("row 31: out_backprop rank != 4 (TF's text names input_sizes)") {
        BadCall c;
        Tensor dy5 = make_tensor(DataType::kFloat, {1, 4, 4, 3, 1}, std::vector<double>(48, 1.0));
        c.out_backprop_override = dy5.cref();
        expect_error(c, C::kInvalidArgument, "input_sizes must be 4-dimensional, got: 5");
        Tensor dy3 = make_tensor(DataType::kFloat, {4, 4, 3}, std::vector<double>(48, 1.0));
        c.out_backprop_override = dy3.cref();
        expect_error(c, C::kInvalidArgument, "input_sizes must be 4-dimensional, got: 3");
    }
    SECTION("row 32: input_sizes not 1-D") {
        BadCall c;
        c.input_sizes = Tensor::FromVector(DataType::kInt32, {2, 2}, std::vector<int>{1, 4, 4, 2});
        expect_error(c, C::kInvalidArgument, "Conv2DBackpropInput: input_sizes input must be 1-dim, not 2");
        c.input_sizes = Tensor::FromVector(DataType::kInt32, {}, std::vector<int>{4});
        expect_error(c, C::kInvalidArgument, "Conv2DBackpropInput: input_sizes input must be 1-dim, not 0");
    }
    SECTION("row 33: input_sizes with neither 4 nor 2 values") {
        BadCall c;
        c.input_sizes = int32_vector({1, 4, 4});
        expect_error(c, C::kInvalidArgument,
                     "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: 3");
        c.input_sizes = int32_vector({1, 4, 4, 2, 1});
        expect_error(c, C::kInvalidArgument,
                     "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: 5");
        c.input_sizes = int32_vector({});
        expect_error(c, C::kInvalidArgument,
                     "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: 0");
    }
    SECTION("row 34: negative entry, 4-value form (MakeShape prints the value)") {
        BadCall c;
        c.input_sizes = int32_vector({1, 4, -5, 2});
        expect_error(c, C::kInvalidArgument, "Dimension -5 must be >= 0");
    }
    SECTION("row 35: negative entry, 2-value form") {
        BadCall c;
        c.input_sizes = int32_vector({4, -3});
        expect_error(c, C::kInvalidArgument, "Conv2DBackpropInput: elements of input_sizes must be >= 0, not 4x-3");
    }
    SECTION("row 36: input_sizes whose product overflows int64") {
        BadCall c;
        c.input_sizes = int32_vector({2147483647, 2147483647, 2147483647, 2});
        expect_error(c, C::kInvalidArgument,
                     "Shape [2147483647,2147483647,2147483647,2] would have more than 2**63 - 1 elements");
    }
    SECTION("row 37: ranks, batch and out_depth") {
        BadCall c;
        Tensor filter3 = make_tensor(DataType::kFloat, {3, 3, 2}, std::vector<double>(18, 1.0));
        c.filter_override = filter3.cref();
        expect_error(c, C::kInvalidArgument, L + ": filter must be 4-dimensional");
        c.input_sizes = int32_vector({4, 4});  // the 2-value form with a rank-3 filter
        expect_error(c, C::kInvalidArgument, L + ": filter must be 4-dimensional");
        BadCall d;
        Tensor dy = make_tensor(DataType::kFloat, {2, 4, 4, 3}, std::vector<double>(96, 1.0));
        d.out_backprop_override = dy.cref();
        expect_error(d, C::kInvalidArgument,
                     L + ": input and out_backprop must have the same batch size. Input batch: 1, outbackprop "
                         "batch: 2, batch_dim: 0");
        BadCall e;
        Tensor dy4 = make_tensor(DataType::kFloat, {1, 4, 4, 4}, std::vector<double>(64, 1.0));
        e.out_backprop_override = dy4.cref();
        expect_error(e, C::kInvalidArgument, L + ": filter and out_backprop must have the same out_depth");
    }
    SECTION("row 38: filter in-depth 0 (CVE-2021-29524)") {
        BadCall c;
        Tensor filter = make_tensor(DataType::kFloat, {3, 3, 0, 3}, {});
        c.filter_override = filter.cref();
        expect_error(c, C::kInvalidArgument, L + ": filter depth must be strictly greated than zero");
    }
    SECTION("row 39: input depth not a multiple of the filter depth") {
        BadCall c;
        c.input_sizes = int32_vector({1, 4, 4, 5});
        c.output_shape = {1, 4, 4, 5};
        expect_error(c, C::kInvalidArgument, L + ": input depth must be evenly divisible by filter depth");
    }
    SECTION("row 40: out_backprop rows or columns do not match") {
        BadCall c;
        Tensor dy = make_tensor(DataType::kFloat, {1, 3, 4, 3}, std::vector<double>(36, 1.0));
        c.out_backprop_override = dy.cref();
        expect_error(c, C::kInvalidArgument,
                     L + ": Size of out_backprop doesn't match computed: actual = 3, computed = 4 spatial_dim: 1 "
                         "input: 4 filter: 3 output: 3 stride: 1 dilation: 1");
        Tensor dy2 = make_tensor(DataType::kFloat, {1, 4, 5, 3}, std::vector<double>(60, 1.0));
        c.out_backprop_override = dy2.cref();
        c.strides = {1, 1, 2, 1};
        c.attrs = c.attrs.Dilations({1, 1, 2, 1});
        expect_error(c, C::kInvalidArgument,
                     L + ": Size of out_backprop doesn't match computed: actual = 5, computed = 2 spatial_dim: 2 "
                         "input: 4 filter: 3 output: 5 stride: 2 dilation: 2");
    }
    SECTION("row 19 analog: a filter larger than the input by the stride or more") {
        BadCall c;
        c.padding = "VALID";
        c.strides = {1, 2, 1, 1};
        c.input_sizes = int32_vector({1, 1, 4, 2});
        c.output_shape = {1, 1, 4, 2};
        Tensor filter = make_tensor(DataType::kFloat, {5, 1, 2, 3}, std::vector<double>(30, 1.0));
        c.filter_override = filter.cref();
        expect_error(c, C::kInvalidArgument,
                     "Computed output size would be negative: -1 [input_size: 1, effective_filter_size: 5, stride: 2]");
    }
    SECTION("row 41 (policy): legal groups work (see the sweeps); illegal ones keep TF's refusal") {
        BadCall c;
        c.input_sizes = int32_vector({1, 4, 4, 4});  // filter depth 2: two groups for 3 output channels
        c.output_shape = {1, 4, 4, 4};
        expect_error(c, C::kInvalidArgument,
                     "Gradients for grouped convolutions are not supported on CPU. Please file a feature request "
                     "if you run into this issue. Computed input depth 4 doesn't match filter input depth 2");
        c.input_sizes = int32_vector({1, 4, 4, 0});  // zero groups
        c.output_shape = {1, 4, 4, 0};
        expect_error(c, C::kInvalidArgument,
                     "Gradients for grouped convolutions are not supported on CPU. Please file a feature request "
                     "if you run into this issue. Computed input depth 0 doesn't match filter input depth 2");
    }
    SECTION("row 47: input_sizes [65534, 65534] with a scalar out_backprop") {
        BadCall c;
        c.input_sizes = int32_vector({65534, 65534});
        static float scalar = 1.0f;
        c.out_backprop_override = ConstTensorRef{DataType::kFloat, {}, &scalar};
        expect_error(c, C::kInvalidArgument, "input_sizes must be 4-dimensional, got: 0");
    }
    SECTION("gradtune's limit: kernels index in int32") {
        BadCall c;
        c.input_sizes = int32_vector({1, 2147483646, 1, 1});
        c.strides = {1, 2147483647, 1, 1};
        c.padding = "VALID";
        Tensor filter = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1.0});
        Tensor dy = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1.0});
        c.filter_override = filter.cref();
        c.out_backprop_override = dy.cref();
        expect_error(c, C::kUnimplemented,
                     "gradtune: spatial sizes, paddings or strides of 2**31 or more are not supported");
    }
    SECTION("row 68: dtype outside the op's list, mismatched T, input_sizes not int32") {
        BadCall c;
        c.filter = make_tensor(DataType::kInt64, {3, 3, 2, 3}, std::vector<double>(54, 1.0));
        c.out_backprop = make_tensor(DataType::kInt64, {1, 4, 4, 3}, std::vector<double>(48, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of int64 is not in the list of allowed values: half, bfloat16, float, "
                     "double, int32");
        BadCall d;
        d.out_backprop = make_tensor(DataType::kDouble, {1, 4, 4, 3}, std::vector<double>(48, 1.0));
        expect_error(d, C::kInvalidArgument,
                     "cannot compute Conv2DBackpropInput as input #2(zero-based) was expected to be a float tensor "
                     "but is a double tensor");
        BadCall e;
        e.input_sizes = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{1, 4, 4, 2});
        expect_error(e, C::kInvalidArgument,
                     "cannot compute Conv2DBackpropInput as input #0(zero-based) was expected to be a int32 tensor "
                     "but is a int64 tensor");
    }
    SECTION("attr values outside the op definition") {
        check_attr_value_rows<BadCall>();
    }
    SECTION("a caller-provided output of the wrong shape or dtype") {
        BadCall c;
        c.output_shape = {1, 4, 4, 3};
        expect_error(c, C::kInvalidArgument, "output has shape [1,4,4,3], but input_sizes is [1,4,4,2]");
    }
}

TEST_CASE("Conv2DBackpropInput: empty and degenerate calls give zeros (rows 45 and 46, CVE-2021-29525 and CVE-2022-35999)",
          "[conv2d_backprop_input]") {
    SECTION("row 45: filter [0,1,5,0], out_backprop [52,1,1,0], SAME") {
        BadCall c;
        c.input_sizes = int32_vector({52, 1, 1, 5});
        c.output_shape = {52, 1, 1, 5};
        Tensor filter(DataType::kFloat, {0, 1, 5, 0});
        Tensor dy(DataType::kFloat, {52, 1, 1, 0});
        c.filter_override = filter.cref();
        c.out_backprop_override = dy.cref();
        expect_zeros(c);
    }
    SECTION("row 46: out_backprop [3,1,0,3] with a non-empty input, VALID, strides [1,1,2,1]") {
        BadCall c;
        c.input_sizes = int32_vector({3, 1, 1, 2});
        c.output_shape = {3, 1, 1, 2};
        c.padding = "VALID";
        c.strides = {1, 1, 2, 1};
        Tensor filter = make_tensor(DataType::kFloat, {1, 3, 2, 3}, std::vector<double>(18, 1.0));
        Tensor dy(DataType::kFloat, {3, 1, 0, 3});
        c.filter_override = filter.cref();
        c.out_backprop_override = dy.cref();
        expect_zeros(c);
    }
    SECTION("row 25 (policy): NCHW works on the CPU, also with an empty out_backprop") {
        BadCall c;
        c.attrs = c.attrs.DataFormat("NCHW");
        c.input_sizes = int32_vector({2, 3, 2, 5});
        c.output_shape = {2, 3, 2, 5};
        c.padding = "VALID";
        Tensor filter = make_tensor(DataType::kFloat, {3, 3, 3, 4}, std::vector<double>(108, 1.0));
        Tensor dy(DataType::kFloat, {2, 4, 0, 3});  // 2 - 3 + 1 = 0 rows
        c.filter_override = filter.cref();
        c.out_backprop_override = dy.cref();
        expect_zeros(c);
    }
}

TEST_CASE("Conv2DBackpropInput: the by-name layer applies TF's attr defaults", "[conv2d_backprop_input]") {
    OpCall call;
    call.op = kOp;
    Tensor sizes = int32_vector({1, 2, 2, 1});
    Tensor filter = make_tensor(DataType::kFloat, {2, 2, 1, 2}, iota(8));
    Tensor dy = make_tensor(DataType::kFloat, {1, 1, 1, 2}, iota(2));
    call.inputs = {{"input_sizes", sizes}, {"filter", filter}, {"out_backprop", dy}};
    call.attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", std::string("VALID")}};
    std::vector<Tensor> outputs;
    REQUIRE(RunOp(call, &outputs).ok());
    REQUIRE(outputs.size() == 1);
    CHECK(to_doubles(outputs[0]) == std::vector<double>{5, 11, 17, 23});
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.structure.at("groups") == 1);
    CHECK(info.shape.at("O") == 2);
}

TEST_CASE("Conv2DBackpropInput: concurrent calls from several threads give the same results", "[conv2d_backprop_input]") {
    const Case k{2, 17, 15, 40, 24, 3, 3, 1, 1, 1, 1, 1, "SAME", {}};
    check_concurrent_calls(k, run_case);
}
