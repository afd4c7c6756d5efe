// DepthwiseConv2dNative: every compiled CPU variant against the plain-loop
// reference, TF's golden (docs/tf-ops.md section 1.1) and forward configs
// (docs/tf-ops.md section 13.4), TF's validation (docs/tf-ops.md section 2,
// with the section 15 policy for NCHW and dilations), empty tensors, and the
// by-name layer.
#include <array>
#include <catch2/catch.hpp>

#include "bad_call.h"
#include "conv_case.h"
#include "conv_window_checks.h"
#include "gradtune/depthwise_conv2d_native.h"
#include "reference/depthwise_conv2d_native.h"
#include "test_util.h"
#include "variant_sweep.h"

using namespace gradtune;
using namespace gradtune::testing;

namespace {

constexpr const char *kOp = "DepthwiseConv2dNative";

using Case = DepthwiseCase;

// The op under test (conv_case.h), and its plain-loop reference.
const ConvOp<Case> run_case = forward_conv_op<DepthwiseConv2dNative, Case>(
    [](const Case &k) { return std::pair{k.stride, k.stride}; }, reference::depthwise_conv2d_native);

// A valid base call that each bad-input row changes in one place.
struct BadCall : ForwardBadCall<DepthwiseConv2dNative> {
    BadCall() : ForwardBadCall({3, 3, 2, 1}) {}
};

// A sweep over the structure a generic variant leaves to run time, plus the
// edge sizes: strides 1/2/3, dilations, filter shapes, every padding mode
// (explicit ones asymmetric), C in {1, 3, 16, 17, 33}, M in {1, 2, 3}, H and
// W of 1..3 and odd sizes, rows wide enough for the full register tiles of
// both layouts (C*M >= 32 for NHWC, >= 32 output columns for NCHW), and
// empty tensors.
std::vector<Case> generic_cases() {
    std::vector<Case> cases = depthwise_sweep({1, 3, 16, 17, 33});
    // Wide rows: full tiles along columns (NCHW) with ragged ends.
    for (auto [W, stride] : {std::pair{70, 1}, std::pair{75, 2}, std::pair{47, 1}})
        for (const char *padding : {"SAME", "VALID", "EXPLICIT"})
            cases.push_back({1, 5, W, 5, 2, 3, 3, stride, 1, 2, padding, {0, 2, 3, 1}});
    cases.push_back({2, 4, 40, 40, 1, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 6, 36, 24, 3, 2, 2, 2, 2, 1, "VALID", {}});
    // Empty tensors: batch 0, depth multiplier 0, no output rows (VALID,
    // filter 3 on 2 rows: O = (2 - 3 + 1) / 1 = 0), a filter larger than the
    // input by less than the stride (O = (1 - 4 + 2) / 2 = 0 by truncation),
    // an empty filter (zeros), C = 0, and an empty input whose output comes
    // from explicit padding only (zeros).
    cases.push_back({0, 5, 5, 3, 1, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({2, 5, 5, 3, 0, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 2, 5, 3, 1, 3, 3, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 1, 5, 3, 1, 4, 1, 2, 1, 1, "VALID", {}});
    cases.push_back({1, 4, 4, 3, 1, 0, 3, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 4, 4, 0, 2, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({2, 0, 3, 2, 2, 3, 3, 1, 1, 1, "EXPLICIT", {2, 2, 1, 1}});
    return cases;
}

// Run-time sizes for a variant whose structure is fixed: the shared edge
// sizes, plus a 70-column row (full NCHW column tiles with a ragged end).
std::vector<Case> specialised_cases(const VariantInfo &v) {
    return depthwise_specialised(v, {{1, 5, 70, 3}});
}

}  // namespace

TEST_CASE("every CPU variant of DepthwiseConv2dNative matches the reference", "[dw_forward][variants]") {
    check_every_variant<Case>(kOp, generic_cases, specialised_cases, fits_depthwise, run_case)
        .check_at_least(8, 1000);  // the generic variants: 4 dtypes x 2 layouts
}

TEST_CASE("DepthwiseConv2dNative reproduces TF's depthwise golden exactly (spec 1.1)", "[dw_forward]") {
    // input [1,2,3,2] = 1..12, filter [2,2,2,2] = 1..16, VALID, stride 1;
    // output channels in TF's order c0m0, c0m1, c1m0, c1m1 per pixel. The
    // values are integers below 2**9 with few significant bits: exact in
    // every dtype, also bfloat16.
    const std::vector<double> golden = {196, 216, 272, 296, 252, 280, 344, 376};
    std::vector<double> input(12), filter(16);
    for (int i = 0; i < 12; i++) input[i] = i + 1;
    for (int i = 0; i < 16; i++) filter[i] = i + 1;
    for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16}) {
        INFO(DataTypeName(dtype));
        Tensor out;
        REQUIRE(DepthwiseConv2dNative::Compute(make_tensor(dtype, {1, 2, 3, 2}, input),
                                               make_tensor(dtype, {2, 2, 2, 2}, filter), {1, 1, 1, 1}, "VALID", &out)
                    .ok());
        CHECK(out.shape() == std::vector<int64_t>{1, 1, 2, 4});
        CHECK(to_doubles(out) == golden);
        // The same call in NCHW gives the same numbers, transposed.
        Tensor out_nchw;
        REQUIRE(DepthwiseConv2dNative::Compute(
                    make_tensor(dtype, {1, 2, 2, 3}, reference::nhwc_to_nchw(input, {1, 2, 3, 2})),
                    make_tensor(dtype, {2, 2, 2, 2}, filter), {1, 1, 1, 1}, "VALID", &out_nchw,
                    DepthwiseConv2dNative::DataFormat("NCHW"))
                    .ok());
        CHECK(out_nchw.shape() == std::vector<int64_t>{1, 4, 1, 2});
        CHECK(reference::nchw_to_nhwc(to_doubles(out_nchw), {1, 4, 1, 2}) == golden);
    }
}

TEST_CASE("DepthwiseConv2dNative on TF's forward configs (spec 13.4) with the batch scaled down", "[dw_forward]") {
    // depthwise_conv_op_base.py: input, filter, stride, padding[, pads,
    // dilations], with the output shape TF's tests expect. Batch is 1 or 2
    // here (TF uses 3-5) to keep the double-precision reference quick.
    struct Config {
        Case k;
        int64_t out_rows, out_cols;
    };
    const std::vector<Config> configs = {
        {{2, 5, 5, 48, 2, 1, 1, 1, 1, 1, "SAME", {}}, 5, 5},
        {{2, 8, 8, 84, 1, 1, 3, 1, 1, 1, "SAME", {}}, 8, 8},
        {{2, 17, 17, 48, 4, 3, 1, 1, 1, 1, "SAME", {}}, 17, 17},
        {{2, 9, 27, 8, 1, 3, 3, 1, 1, 1, "SAME", {}}, 9, 27},
        {{2, 31, 31, 7, 1, 3, 3, 1, 1, 1, "SAME", {}}, 31, 31},
        {{2, 35, 35, 2, 1, 5, 5, 1, 1, 1, "SAME", {}}, 35, 35},
        {{1, 147, 147, 2, 8, 3, 3, 3, 1, 1, "VALID", {}}, 49, 49},
        {{1, 299, 299, 3, 8, 3, 2, 2, 1, 1, "SAME", {}}, 150, 150},
        {{1, 183, 183, 1, 2, 5, 5, 2, 1, 1, "SAME", {}}, 92, 92},
        // Dilated (TF runs these through space_to_batch; gradtune natively).
        {{1, 183, 183, 1, 2, 5, 5, 1, 2, 2, "SAME", {}}, 183, 183},
        {{1, 41, 35, 2, 2, 4, 7, 1, 3, 2, "VALID", {}}, 32, 23},
        // Explicit padding.
        {{2, 5, 5, 48, 2, 1, 1, 1, 1, 1, "EXPLICIT", {1, 2, 3, 4}}, 8, 12},
        {{2, 1, 1, 3, 2, 3, 3, 1, 1, 1, "EXPLICIT", {10, 20, 15, 25}}, 29, 39},
        {{2, 9, 27, 8, 1, 3, 3, 1, 1, 1, "EXPLICIT", {3, 4, 4, 2}}, 14, 31},
        {{2, 31, 31, 7, 1, 3, 3, 1, 1, 1, "EXPLICIT", {0, 0, 0, 0}}, 29, 29},
        {{1, 299, 299, 3, 8, 3, 2, 2, 1, 1, "EXPLICIT", {1, 2, 3, 5}}, 150, 153},
        {{1, 183, 183, 1, 2, 5, 5, 3, 1, 1, "EXPLICIT", {3, 2, 1, 0}}, 62, 60},
        {{2, 5, 5, 48, 1, 3, 3, 1, 1, 1, "EXPLICIT", {0, 2, 0, 2}}, 5, 5},
        {{1, 8, 7, 2, 1, 8, 7, 1, 1, 1, "EXPLICIT", {0, 7, 3, 3}}, 8, 7},
        {{2, 4, 3, 2, 1, 3, 2, 1, 1, 1, "EXPLICIT", {2, 0, 1, 0}}, 4, 3},
    };
    for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16})
        for (const char *layout : {"NHWC", "NCHW"})
            for (const Config &c : configs) {
                Outcome o = run_case(c.k, dtype, layout, "", 7);
                INFO(c.k.describe() << " " << layout << " " << DataTypeName(dtype) << " " << o.status.ToString());
                REQUIRE(o.valid);
                REQUIRE(o.status.ok());
                CHECK(o.output_shape == std::vector<int64_t>{c.k.N, c.out_rows, c.out_cols, c.k.C * c.k.M});
                CHECK(o.error <= tolerance(dtype));
            }
}

TEST_CASE("bad DepthwiseConv2dNative inputs get TF's error kind and text and leave the output untouched", "[dw_forward][errors]") {
    using C = StatusCode;
    check_depthwise_window_attrs<BadCall>();  // rows 1-8
    SECTION("policy: lists that are not valid dilations keep TF's refusal, printed as TF prints it") {
        // Valid dilations (4 values, N = C = 1, H and W >= 1) are computed;
        // TF refuses every dilation != 1 with this Unimplemented text and an
        // Eigen-formatted list (right-aligned to the widest value).
        BadCall c;
        c.attrs = c.attrs.Dilations({1, 0, 1, 1});
        expect_error(c, C::kUnimplemented, "Current kernel implementation does not support dilations, received [1 0 1 1]");
        c.attrs = c.attrs.Dilations({2, 1, 1, 1});
        expect_error(c, C::kUnimplemented, "Current kernel implementation does not support dilations, received [2 1 1 1]");
        c.attrs = c.attrs.Dilations({1, 1, 1, 3});
        expect_error(c, C::kUnimplemented, "Current kernel implementation does not support dilations, received [1 1 1 3]");
        c.attrs = c.attrs.Dilations({1, 2, 2});
        expect_error(c, C::kUnimplemented, "Current kernel implementation does not support dilations, received [1 2 2]");
        c.attrs = c.attrs.Dilations({1, -1, 77, 1, 64});
        expect_error(c, C::kUnimplemented,
                     "Current kernel implementation does not support dilations, received [ 1 -1 77  1 64]");
    }
    SECTION("input or filter rank != 4") {
        BadCall c;
        Tensor input3 = make_tensor(DataType::kFloat, {1, 4, 8}, std::vector<double>(32, 1.0));
        c.input_override = input3.cref();
        expect_error(c, C::kInvalidArgument, "input must be 4-dimensional[1,4,8]");  // sic: TF has no separator
        BadCall d;
        Tensor filter3 = make_tensor(DataType::kFloat, {3, 3, 2}, std::vector<double>(18, 1.0));
        d.filter_override = filter3.cref();
        expect_error(d, C::kInvalidArgument, "filter must be 4-dimensional: [3,3,2]");
    }
    SECTION("input depth != filter depth") {
        BadCall c;
        Tensor filter = make_tensor(DataType::kFloat, {3, 3, 3, 1}, std::vector<double>(27, 1.0));
        c.filter_override = filter.cref();
        expect_error(c, C::kInvalidArgument, "input and filter must have the same depth: 2 vs 3");
        // NCHW: the depth is dimension 1.
        BadCall d;
        d.attrs = d.attrs.DataFormat("NCHW");
        expect_error(d, C::kInvalidArgument, "input and filter must have the same depth: 4 vs 2");
    }
    SECTION("input rows or columns of 2**31-1 and more") {
        static float cell = 0;  // shapes are checked before any data is read
        BadCall c;
        c.input_override = ConstTensorRef{DataType::kFloat, {1, 2147483647, 1, 2}, &cell};
        expect_error(c, C::kInvalidArgument, "Input rows too large");
        c.input_override = ConstTensorRef{DataType::kFloat, {1, 1, 2147483647, 2}, &cell};
        expect_error(c, C::kInvalidArgument, "Input cols too large");
    }
    SECTION("filter larger than the input by the stride or more") {
        BadCall c;
        Tensor input = make_tensor(DataType::kFloat, {1, 1, 4, 2}, std::vector<double>(8, 1.0));
        Tensor filter = make_tensor(DataType::kFloat, {5, 1, 2, 1}, std::vector<double>(10, 1.0));
        c.input_override = input.cref();
        c.filter_override = filter.cref();
        c.padding = "VALID";
        c.strides = {1, 2, 2, 1};
        expect_error(c, C::kInvalidArgument,
                     "Computed output size would be negative: -1 [input_size: 1, effective_filter_size: 5, stride: 2]");
        // With a dilation the effective filter size counts it (2 taps, d=4).
        BadCall d;
        Tensor filter2 = make_tensor(DataType::kFloat, {2, 1, 2, 1}, std::vector<double>(4, 1.0));
        d.filter_override = filter2.cref();
        d.padding = "VALID";
        d.attrs = d.attrs.Dilations({1, 5, 1, 1});
        expect_error(d, C::kInvalidArgument,
                     "Computed output size would be negative: -1 [input_size: 4, effective_filter_size: 6, stride: 1]");
    }
    SECTION("GPU only: output elements beyond int32 (checked before any device is needed)") {
        static float cell = 0;
        BadCall c;
        c.input_override = ConstTensorRef{DataType::kFloat, {1, 65536, 65536, 1}, &cell};
        Tensor filter = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1.0});
        c.filter_override = filter.cref();
        c.padding = "VALID";
        c.options.device = Device::cuda;
        TensorRef output{DataType::kFloat, {1, 65536, 65536, 1}, &cell};
        Status st = DepthwiseConv2dNative::Compute(*c.input_override, *c.filter_override, c.strides, c.padding, output,
                                                   c.attrs, c.options);
        CHECK(st.code() == C::kInvalidArgument);
        CHECK(st.message() == "Output elements too large for GPU kernel");
    }
    SECTION("row 68: dtype outside the op's list, filter of another type") {
        BadCall c;
        c.input = make_tensor(DataType::kInt32, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        c.filter = make_tensor(DataType::kInt32, {3, 3, 2, 1}, std::vector<double>(18, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of int32 is not in the list of allowed values: half, bfloat16, float, double");
        BadCall d;
        d.filter = make_tensor(DataType::kDouble, {3, 3, 2, 1}, std::vector<double>(18, 1.0));
        expect_error(d, C::kInvalidArgument,
                     "cannot compute DepthwiseConv2dNative as input #1(zero-based) was expected to be a float tensor "
                     "but is a double tensor");
    }
    SECTION("attr values outside the op definition") {
        check_attr_value_rows<BadCall>();
    }
    SECTION("a caller-provided output of the wrong shape or dtype") {
        check_caller_output_rows<BadCall>();
    }
}

TEST_CASE("DepthwiseConv2dNative policy: NCHW and dilations work on the CPU, unit dilation lists of any length are accepted",
          "[dw_forward]") {
    // TF's CPU kernel refuses NCHW ("Depthwise convolution on CPU is only
    // supported for NHWC format") and any dilation != 1; both are covered by
    // the sweeps above. TF accepts all-ones dilation lists of any length (it
    // only looks for values != 1), and so does gradtune.
    Tensor input = make_tensor(DataType::kFloat, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    Tensor filter = make_tensor(DataType::kFloat, {2, 2, 1, 1}, {1, 1, 1, 1});
    for (std::vector<int> dilations : {std::vector<int>{}, std::vector<int>{1, 1, 1}, std::vector<int>{1, 1, 1, 1, 1}}) {
        Tensor out;
        REQUIRE(DepthwiseConv2dNative::Compute(input, filter, {1, 1, 1, 1}, "VALID", &out,
                                               DepthwiseConv2dNative::Dilations(dilations))
                    .ok());
        CHECK(to_doubles(out) == std::vector<double>{12, 16, 24, 28});
    }
    // Dilation 2 on a 3x3 input: one output, the four corners.
    Tensor out;
    REQUIRE(DepthwiseConv2dNative::Compute(input, filter, {1, 1, 1, 1}, "VALID", &out,
                                           DepthwiseConv2dNative::Dilations({1, 2, 2, 1}))
                .ok());
    CHECK(to_doubles(out) == std::vector<double>{1 + 3 + 7 + 9});
}

TEST_CASE("empty DepthwiseConv2dNative results: zero-size outputs return at once, empty inputs and filters give zeros", "[dw_forward]") {
    // A caller output filled with a sentinel must come back all zero when the
    // input is empty but padding makes the output non-empty, and when the
    // filter has no taps.
    BadCall().expect_zeros_on(Tensor(DataType::kFloat, {2, 0, 3, 2}), Tensor(DataType::kFloat, {3, 3, 2, 2}),
                              "EXPLICIT", {0, 0, 2, 2, 1, 1, 0, 0}, {2, 2, 3, 4});
    BadCall().expect_zeros_on(make_tensor(DataType::kFloat, {1, 4, 4, 2}, std::vector<double>(32, 1.0)),
                              Tensor(DataType::kFloat, {0, 3, 2, 1}), "VALID", {}, {1, 5, 2, 2});
    Tensor empty;
    REQUIRE(DepthwiseConv2dNative::Compute(Tensor(DataType::kFloat, {0, 5, 5, 3}), Tensor(DataType::kFloat, {3, 3, 3, 2}),
                                           {1, 1, 1, 1}, "SAME", &empty)
                .ok());
    CHECK(empty.shape() == std::vector<int64_t>{0, 5, 5, 6});
}

TEST_CASE("the by-name layer runs and describes DepthwiseConv2dNative", "[dw_forward]") {
    Tensor input = make_tensor(DataType::kFloat, {1, 2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    std::vector<double> f(16);
    for (int i = 0; i < 16; i++) f[i] = i + 1;
    Tensor filter = make_tensor(DataType::kFloat, {2, 2, 2, 2}, f);
    OpCall call{kOp, {{"input", input.cref()}, {"filter", filter.cref()}},
                {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", std::string("VALID")}}};
    std::vector<Tensor> outputs;
    REQUIRE(RunOp(call, &outputs).ok());
    REQUIRE(outputs.size() == 1);
    CHECK(to_doubles(outputs[0]) == std::vector<double>{196, 216, 272, 296, 252, 280, 344, 376});
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.structure == std::map<std::string, int>{{"depth_multiplier", 2}, {"dilation_height", 1},
                                                       {"dilation_width", 1}, {"filter_height", 2},
                                                       {"filter_width", 2}, {"stride", 1}});
    CHECK(info.shape == std::map<std::string, int64_t>{{"N", 1}, {"H", 2}, {"W", 3}, {"C", 2}});
    const OpSpec *spec = FindOpSpec(kOp);
    REQUIRE(spec);
    CHECK(spec->inputs == std::vector<std::string>{"input", "filter"});
}
