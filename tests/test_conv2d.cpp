// Conv2D: every compiled CPU variant against the plain-loop reference (groups,
// strides, dilations, every padding mode, both layouts, int32 exactly), TF's
// conv_ops_test goldens and gradient-test shapes (docs/tf-ops.md section 13.3),
// TF's validation (docs/tf-ops.md section 5 and rows 48-49 of section 11, with
// the section 15 policy for NCHW on the CPU), empty tensors, and the by-name
// layer.
#include <array>
#include <catch2/catch.hpp>
#include <sstream>

#include "bad_call.h"
#include "conv_case.h"
#include "conv_window_checks.h"
#include "gradtune/conv2d.h"
#include "reference/conv2d.h"
#include "test_util.h"
#include "variant_sweep.h"

using namespace gradtune;
using namespace gradtune::testing;

namespace {

constexpr const char *kOp = "Conv2D";

struct Case {
    int64_t N, H, W, C, O, Cg;  // Cg = filter depth = C / groups
    int64_t FH, FW, stride_h, stride_w, dilation_h, dilation_w;
    std::string padding;
    std::array<int, 4> pads{};  // top, bottom, left, right (EXPLICIT only)

    std::string describe() const {
        std::ostringstream out;
        out << "N" << N << " H" << H << " W" << W << " C" << C << " O" << O << " Cg" << Cg << " f" << FH << "x" << FW
            << " s" << stride_h << "x" << stride_w << " d" << dilation_h << "x" << dilation_w;
        return out.str() + describe_padding(padding, pads);
    }
    CaseWindows windows() const {
        return case_windows(H, W, FH, FW, stride_h, stride_w, dilation_h, dilation_w, padding, pads);
    }
    std::vector<int64_t> in_shape() const { return {N, H, W, C}; }
    std::vector<int64_t> filter_shape() const { return {FH, FW, Cg, O}; }
    std::vector<int64_t> out_shape(const CaseWindows &w) const { return {N, w.rows.output, w.cols.output, O}; }
};

// The op under test (conv_case.h), and its plain-loop reference.
const ConvOp<Case> run_case = forward_conv_op<Conv2D, Case>(
    [](const Case &k) { return std::pair{k.stride_h, k.stride_w}; }, reference::conv2d);

// A valid base call that each bad-input row changes in one place.
struct BadCall : ForwardBadCall<Conv2D> {
    BadCall() : ForwardBadCall({3, 3, 2, 2}) {}
};

// A sweep over what a generic variant leaves to run time: strides (also
// unequal), dilations, filter shapes, every padding mode (explicit ones
// asymmetric), groups (G = C / Cg of 1, 2, 3, 4, 5; with groups of 20 output
// channels a vector of output channels straddles two groups), odd and tiny
// sizes, rows wide enough for the full register tiles of both layouts
// (>= 32 output channels for NHWC, >= 32 output columns for NCHW), and
// empty tensors.
std::vector<Case> generic_cases() {
    struct Channels {
        int64_t C, Cg, O;
    };
    const Channels channels[] = {{3, 3, 5},    {8, 4, 6},   {6, 2, 9},  {16, 16, 32},
                                 {5, 1, 10},   {17, 17, 33}, {4, 2, 40}, {32, 8, 64}};
    std::vector<Case> cases;
    int i = 0;
    for (auto [sh, sw] : {std::pair{1, 1}, std::pair{2, 2}, std::pair{1, 2}, std::pair{3, 1}})
        for (auto [dh, dw] : {std::pair{1, 1}, std::pair{2, 2}, std::pair{2, 1}})
            for (auto [fh, fw] : {std::pair{3, 3}, std::pair{1, 1}, std::pair{2, 3}, std::pair{4, 2}})
                for (const char *padding : {"SAME", "VALID", "EXPLICIT"}) {
                    const Channels &c = channels[i % 8];
                    cases.push_back({2, 7 + i % 3, 9 - i % 2, c.C, c.O, c.Cg, fh, fw, sh, sw, dh, dw, padding,
                                     {1, 2, 0, 3}});
                    i++;
                }
    // Wide rows: full tiles along columns (NCHW) with ragged ends, grouped too.
    for (auto [W, sw] : {std::pair{70, 1}, std::pair{75, 2}, std::pair{47, 1}})
        for (const char *padding : {"SAME", "VALID", "EXPLICIT"}) {
            cases.push_back({1, 5, W, 4, 8, 4, 3, 3, 1, sw, 1, 2, padding, {0, 2, 3, 1}});
            cases.push_back({1, 4, W, 6, 12, 3, 2, 3, 2, sw, 1, 1, padding, {2, 0, 1, 4}});
        }
    cases.push_back({2, 5, 40, 24, 48, 24, 3, 3, 1, 1, 1, 1, "SAME", {}});
    for (int64_t H : {1, 2, 3})
        for (int64_t W : {1, 2, 3})
            for (auto [k, s] : {std::pair{3, 1}, std::pair{3, 2}, std::pair{2, 1}})
                for (const char *padding : {"SAME", "VALID"})
                    cases.push_back({1, H, W, 2, 3, 2, k, k, s, s, 1, 1, padding, {}});
    // Empty tensors: batch 0, no output channels, no output rows (VALID,
    // filter 3 on 2 rows), a filter larger than the input by less than the
    // stride (O = (1 - 4 + 2) / 2 = 0 by truncation), and empty inputs whose
    // output comes from padding only (zeros): no rows, no channels.
    cases.push_back({0, 5, 5, 3, 4, 3, 3, 3, 1, 1, 1, 1, "SAME", {}});
    cases.push_back({2, 5, 5, 3, 0, 3, 3, 3, 1, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 2, 5, 3, 2, 3, 3, 3, 1, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 1, 5, 3, 2, 3, 4, 1, 2, 2, 1, 1, "VALID", {}});
    cases.push_back({2, 0, 3, 2, 3, 2, 3, 3, 1, 1, 1, 1, "EXPLICIT", {2, 2, 1, 1}});
    cases.push_back({1, 4, 4, 0, 3, 1, 3, 3, 1, 1, 1, 1, "SAME", {}});
    return cases;
}

// Run-time sizes for a variant whose structure is fixed.
std::vector<Case> specialised_cases(const VariantInfo &v) {
    std::vector<Case> cases;
    const auto &s = v.structure;
    struct Size {
        int64_t N, H, W, C, O, Cg;
    };
    const Size sizes[] = {{1, 1, 1, 1, 1, 1},   {1, 2, 3, 3, 5, 3},    {2, 7, 9, 16, 33, 16}, {1, 3, 2, 8, 6, 4},
                          {2, 5, 5, 32, 64, 32}, {1, 12, 11, 6, 42, 2}, {1, 5, 70, 4, 8, 4},  {0, 4, 4, 8, 8, 8}};
    for (const Size &z : sizes)
        for (const char *padding : {"SAME", "VALID", "EXPLICIT"})
            cases.push_back({z.N, z.H, z.W, z.C, z.O, z.Cg, s.at("filter_height"), s.at("filter_width"),
                             s.at("stride_height"), s.at("stride_width"), s.at("dilation_height"),
                             s.at("dilation_width"), padding, {1, 0, 2, 1}});
    return cases;
}

bool fits(const VariantInfo &v, const Case &k) {
    return fits_structure(v, {{"dilation_height", k.dilation_h}, {"dilation_width", k.dilation_w},
                              {"filter_height", k.FH},         {"filter_width", k.FW},
                              {"stride_height", k.stride_h},   {"stride_width", k.stride_w}});
}

}  // namespace

TEST_CASE("every CPU variant of Conv2D matches the reference", "[conv2d][variants]") {
    check_every_variant<Case>(kOp, generic_cases, specialised_cases, fits, run_case)
        .check_at_least(10, 1500);  // the generic variants: 5 dtypes x 2 layouts
}

TEST_CASE("Conv2D reproduces TF's conv_ops_test forward goldens", "[conv2d]") {
    // testConv2D1x1Filter, 2x2Filter, 2x2FilterStride2, 1x2Filter, 2x1Filter:
    // input and filter filled with 1, 2, 3, ..., VALID. Exact in float,
    // double and int32 (the values do not fit 16-bit floats exactly).
    struct Golden {
        std::vector<int64_t> input, filter;
        int stride;
        std::vector<double> expected;
    };
    const std::vector<Golden> goldens = {
        {{1, 2, 3, 3}, {1, 1, 3, 3}, 1,
         {30, 36, 42, 66, 81, 96, 102, 126, 150, 138, 171, 204, 174, 216, 258, 210, 261, 312}},
        {{1, 2, 3, 3}, {2, 2, 3, 3}, 1, {2271, 2367, 2463, 2901, 3033, 3165}},
        {{1, 2, 3, 3}, {2, 2, 3, 3}, 2, {2271, 2367, 2463}},
        {{1, 2, 3, 3}, {1, 2, 3, 3}, 1, {231, 252, 273, 384, 423, 462, 690, 765, 840, 843, 936, 1029}},
        {{1, 2, 3, 3}, {2, 1, 3, 3}, 1, {465, 504, 543, 618, 675, 732, 771, 846, 921}},
    };
    for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kInt32})
        for (const Golden &gold : goldens) {
            const std::vector<double> x = iota(NumElements(gold.input)), f = iota(NumElements(gold.filter));
            INFO(DataTypeName(dtype) << " filter " << ShapeString(gold.filter) << " stride " << gold.stride);
            Tensor out;
            REQUIRE(Conv2D::Compute(make_tensor(dtype, gold.input, x), make_tensor(dtype, gold.filter, f),
                                    {1, gold.stride, gold.stride, 1}, "VALID", &out)
                        .ok());
            CHECK(to_doubles(out) == gold.expected);
            // NCHW, which TF's CPU kernel refuses (policy: supported).
            Tensor out_nchw;
            REQUIRE(Conv2D::Compute(make_tensor(dtype, to_layout(gold.input, true), reference::nhwc_to_nchw(x, gold.input)),
                                    make_tensor(dtype, gold.filter, f), {1, 1, gold.stride, gold.stride}, "VALID",
                                    &out_nchw, Conv2D::DataFormat("NCHW"))
                        .ok());
            CHECK(reference::nchw_to_nhwc(to_doubles(out_nchw), out_nchw.shape()) == gold.expected);
        }
}

TEST_CASE("Conv2D on TF's Conv2D test shapes (spec 13.3) in every dtype and layout", "[conv2d]") {
    // conv_ops_test.py's gradient-checker configs, run forward:
    // (batch, rows, cols, filter rows, filter cols, in depth, out depth,
    // stride rows, stride cols, padding[, explicit pads]), plus its grouped
    // configuration (in depth 4, out depth 6, 2 groups).
    const std::vector<Case> cases = {
        {2, 5, 4, 2, 3, 2, 3, 3, 1, 1, 1, 1, "VALID", {}},
        {2, 4, 5, 2, 3, 2, 3, 3, 2, 2, 1, 1, "VALID", {}},
        {2, 7, 6, 4, 5, 4, 3, 3, 3, 3, 1, 1, "VALID", {}},
        {4, 6, 5, 2, 3, 2, 2, 2, 1, 1, 1, 1, "VALID", {}},
        {4, 6, 5, 2, 3, 2, 2, 2, 2, 2, 1, 1, "VALID", {}},
        {2, 8, 7, 2, 3, 2, 4, 4, 3, 3, 1, 1, "VALID", {}},
        {2, 7, 6, 2, 3, 2, 3, 3, 1, 1, 1, 1, "SAME", {}},
        {2, 5, 4, 3, 3, 3, 3, 3, 2, 2, 1, 1, "SAME", {}},
        {2, 7, 6, 4, 5, 4, 3, 3, 3, 3, 1, 1, "SAME", {}},
        {4, 6, 5, 2, 3, 2, 2, 2, 1, 1, 1, 1, "SAME", {}},
        {4, 6, 5, 2, 3, 2, 2, 2, 2, 2, 1, 1, "SAME", {}},
        {2, 8, 7, 2, 3, 2, 4, 4, 3, 3, 1, 1, "SAME", {}},
        {2, 8, 7, 2, 3, 2, 4, 4, 2, 1, 1, 1, "SAME", {}},
        {2, 4, 3, 2, 3, 2, 4, 3, 1, 1, 1, 1, "VALID", {}},
        {2, 5, 4, 2, 3, 2, 3, 3, 1, 1, 1, 1, "EXPLICIT", {1, 1, 1, 1}},
        {2, 4, 5, 2, 3, 2, 3, 3, 2, 2, 1, 1, "EXPLICIT", {1, 1, 1, 1}},
        {2, 5, 4, 2, 3, 2, 3, 3, 1, 1, 1, 1, "EXPLICIT", {2, 2, 2, 2}},
        {2, 8, 5, 3, 2, 3, 4, 2, 3, 2, 1, 1, "EXPLICIT", {1, 2, 3, 4}},
        {3, 5, 7, 1, 2, 1, 3, 2, 2, 1, 1, 1, "EXPLICIT", {4, 3, 2, 1}},
        {2, 6, 7, 3, 2, 3, 3, 4, 1, 2, 1, 1, "EXPLICIT", {0, 0, 0, 5}},
        {2, 5, 4, 4, 6, 2, 3, 3, 1, 1, 1, 1, "SAME", {}},
    };
    for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16, DataType::kInt32})
        for (const char *layout : {"NHWC", "NCHW"})
            for (const Case &k : cases) {
                Outcome o = run_case(k, dtype, layout, "", 5);
                INFO(k.describe() << " " << layout << " " << DataTypeName(dtype) << " " << o.status.ToString());
                REQUIRE(o.valid);
                REQUIRE(o.status.ok());
                CHECK(o.error <= tolerance(dtype));
            }
}

TEST_CASE("bad Conv2D inputs get TF's error kind and text and leave the output untouched", "[conv2d][errors]") {
    using C = StatusCode;
    static float cell = 0;  // for tensors whose shapes fail before any data is read
    SECTION("InitConv2DParameters: list lengths (dilations first)") {
        BadCall c;
        c.attrs = c.attrs.Dilations({1, 1, 1});
        c.strides = {1, 1, 1};
        expect_error(c, C::kInvalidArgument, "Sliding window dilations field must specify 4 dimensions");
        c.attrs = c.attrs.Dilations({1, 1, 1, 1});
        expect_error(c, C::kInvalidArgument, "Sliding window strides field must specify 4 dimensions");
    }
    SECTION("InitConv2DParameters: batch/depth strides are Unimplemented, row/column strides must be positive") {
        BadCall c;
        c.strides = {2, 1, 1, 1};
        expect_error(c, C::kUnimplemented,
                     "Current implementation does not yet support strides in the batch and depth dimensions.");
        c.strides = {1, 1, 1, 2};
        expect_error(c, C::kUnimplemented,
                     "Current implementation does not yet support strides in the batch and depth dimensions.");
        c.attrs = c.attrs.DataFormat("NCHW");  // NCHW: depth is position 1
        c.strides = {1, 2, 1, 1};
        expect_error(c, C::kUnimplemented,
                     "Current implementation does not yet support strides in the batch and depth dimensions.");
        BadCall d;
        d.strides = {1, 0, 1, 1};
        expect_error(d, C::kInvalidArgument, "Row and column strides should be larger than 0.");
        d.strides = {1, 1, -1, 1};
        expect_error(d, C::kInvalidArgument, "Row and column strides should be larger than 0.");
    }
    SECTION("InitConv2DParameters: batch/depth dilations are Unimplemented, rates must be positive") {
        BadCall c;
        c.attrs = c.attrs.Dilations({2, 1, 1, 1});
        expect_error(c, C::kUnimplemented,
                     "Current implementation does not yet support dilations in the batch and depth dimensions.");
        c.attrs = c.attrs.Dilations({1, 1, 1, 2});
        expect_error(c, C::kUnimplemented,
                     "Current implementation does not yet support dilations in the batch and depth dimensions.");
        c.attrs = c.attrs.Dilations({1, 0, 1, 1});
        expect_error(c, C::kInvalidArgument, "Dilated rates should be larger than 0.");
        c.attrs = c.attrs.Dilations({1, 1, -3, 1});
        expect_error(c, C::kInvalidArgument, "Dilated rates should be larger than 0.");
    }
    SECTION("rows 5-8: explicit paddings") {
        check_explicit_padding_rows<BadCall>();
    }
    SECTION("ComputeConv2DDimension: ranks") {
        BadCall c;
        Tensor input3 = make_tensor(DataType::kFloat, {1, 4, 8}, std::vector<double>(32, 1.0));
        c.input_override = input3.cref();
        expect_error(c, C::kInvalidArgument, "convolution input must be 4-dimensional: [1,4,8]");
        BadCall d;
        Tensor filter5 = make_tensor(DataType::kFloat, {3, 3, 2, 2, 1}, std::vector<double>(36, 1.0));
        d.filter_override = filter5.cref();
        expect_error(d, C::kInvalidArgument, "convolution filter must be 4-dimensional: [3,3,2,2,1]");
    }
    SECTION("ComputeConv2DDimension: sizes of 2**31-1 and more") {
        BadCall c;
        c.filter_override = ConstTensorRef{DataType::kFloat, {2147483647, 1, 2, 1}, &cell};
        expect_error(c, C::kInvalidArgument, "filter too large");
        c.filter_override = ConstTensorRef{DataType::kFloat, {1, 1, 2147483647, 1}, &cell};
        expect_error(c, C::kInvalidArgument, "filter too large");
        BadCall d;
        Tensor filter = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1.0});
        d.filter_override = filter.cref();
        d.input_override = ConstTensorRef{DataType::kFloat, {1, 1, 1, 2147483647}, &cell};
        expect_error(d, C::kInvalidArgument, "Input depth too large");
        d.input_override = ConstTensorRef{DataType::kFloat, {1, 2147483647, 1, 1}, &cell};
        expect_error(d, C::kInvalidArgument, "Input rows too large");
        d.input_override = ConstTensorRef{DataType::kFloat, {1, 1, 2147483647, 1}, &cell};
        expect_error(d, C::kInvalidArgument, "Input cols too large");
        d.input_override = ConstTensorRef{DataType::kFloat, {2147483647, 1, 1, 1}, &cell};
        expect_error(d, C::kInvalidArgument, "batch is too large");
    }
    SECTION("ComputeConv2DDimension: filter depth 0 (row 49's kernel check), depth not divisible") {
        BadCall c;
        Tensor filter0 = Tensor(DataType::kFloat, {3, 3, 0, 2});
        c.filter_override = filter0.cref();
        expect_error(c, C::kInvalidArgument, "filter depth must be stricly positive, got 0");  // sic: TF's typo
        BadCall d;
        Tensor input = make_tensor(DataType::kFloat, {1, 4, 4, 5}, std::vector<double>(80, 1.0));
        d.input_override = input.cref();
        expect_error(d, C::kInvalidArgument, "input depth must be evenly divisible by filter depth: 5 vs 2");
    }
    SECTION("output size would be negative (dilation counted in the effective filter size)") {
        BadCall c;
        c.padding = "VALID";
        c.strides = {1, 1, 2, 1};
        Tensor input = make_tensor(DataType::kFloat, {1, 4, 1, 2}, std::vector<double>(8, 1.0));
        c.input_override = input.cref();
        Tensor filter = make_tensor(DataType::kFloat, {1, 5, 2, 2}, std::vector<double>(20, 1.0));
        c.filter_override = filter.cref();
        expect_error(c, C::kInvalidArgument,
                     "Computed output size would be negative: -1 [input_size: 1, effective_filter_size: 5, stride: 2]");
        BadCall d;
        d.padding = "VALID";
        d.attrs = d.attrs.Dilations({1, 3, 1, 1});
        expect_error(d, C::kInvalidArgument,
                     "Computed output size would be negative: -2 [input_size: 4, effective_filter_size: 7, stride: 1]");
    }
    SECTION("row 48: a filter with zero elements and a non-empty input (CVE-2021-41209)") {
        BadCall c;
        Tensor filter = Tensor(DataType::kFloat, {0, 3, 2, 2});
        c.filter_override = filter.cref();
        c.padding = "VALID";  // rows: effective filter size 0 -> 5 output rows
        c.output_shape = {1, 5, 2, 2};
        expect_error(c, C::kInvalidArgument,
                     "filter must not have zero elements (i.e. all dimensions must be non-zero)");
        c.attrs = c.attrs.DataFormat("NCHW");
        Tensor input = make_tensor(DataType::kFloat, {1, 2, 4, 4}, std::vector<double>(32, 1.0));
        c.input_override = input.cref();
        c.output_shape = {1, 2, 5, 2};
        expect_error(c, C::kInvalidArgument,
                     "filter must not have zero elements (i.e. all dimensions must be non-zero)");
    }
    SECTION("groups that do not divide the output depth") {
        BadCall c;
        Tensor input = make_tensor(DataType::kFloat, {1, 4, 4, 4}, std::vector<double>(64, 1.0));
        c.input_override = input.cref();
        Tensor filter = make_tensor(DataType::kFloat, {3, 3, 2, 3}, std::vector<double>(54, 1.0));
        c.filter_override = filter.cref();
        c.output_shape = {1, 4, 4, 3};
        expect_error(c, C::kInvalidArgument, "output depth must be evenly divisible by number of groups: 3 vs 2");
    }
    SECTION("row 68: dtype outside the op's list, filter of another type") {
        BadCall c;
        c.input = make_tensor(DataType::kInt64, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        c.filter = make_tensor(DataType::kInt64, {3, 3, 2, 2}, std::vector<double>(36, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of int64 is not in the list of allowed values: half, bfloat16, float, double, "
                     "int32");
        BadCall d;
        d.filter = make_tensor(DataType::kInt32, {3, 3, 2, 2}, std::vector<double>(36, 1.0));
        expect_error(d, C::kInvalidArgument,
                     "cannot compute Conv2D as input #1(zero-based) was expected to be a float tensor but is a int32 "
                     "tensor");
    }
    SECTION("attr values outside the op definition") {
        check_attr_value_rows<BadCall>();
    }
    SECTION("a caller-provided output of the wrong shape or dtype") {
        check_caller_output_rows<BadCall>();
    }
}

TEST_CASE("empty Conv2D results follow TF's order: empty output then empty input then the launcher checks", "[conv2d]") {
    // An empty output returns before anything else (even with a zero-element
    // filter or groups that do not divide the output depth); an empty input
    // with a non-empty output gives zeros, also with a filter TF's launcher
    // would refuse, because TF zero-fills before launching.
    // No rows, padding gives 2: zeros. Same with a zero-element filter.
    BadCall().expect_zeros_on(Tensor(DataType::kFloat, {2, 0, 3, 2}), Tensor(DataType::kFloat, {3, 3, 2, 4}),
                              "EXPLICIT", {0, 0, 2, 2, 1, 1, 0, 0}, {2, 2, 3, 4});
    BadCall().expect_zeros_on(Tensor(DataType::kInt32, {2, 0, 3, 2}), Tensor(DataType::kInt32, {3, 0, 2, 4}),
                              "EXPLICIT", {0, 0, 2, 2, 1, 1, 0, 0}, {2, 2, 6, 4});
    // No input channels (filter depth 1 divides 0).
    BadCall().expect_zeros_on(Tensor(DataType::kFloat, {1, 4, 4, 0}), Tensor(DataType::kFloat, {3, 3, 1, 2}), "SAME",
                              {}, {1, 4, 4, 2});
    // Empty outputs: batch 0 with a zero-element filter; O = 0.
    Tensor out;
    REQUIRE(Conv2D::Compute(Tensor(DataType::kFloat, {0, 4, 4, 2}), Tensor(DataType::kFloat, {0, 3, 2, 2}),
                            {1, 1, 1, 1}, "VALID", &out)
                .ok());
    CHECK(out.shape() == std::vector<int64_t>{0, 5, 2, 2});
    REQUIRE(Conv2D::Compute(make_tensor(DataType::kFloat, {1, 4, 4, 2}, std::vector<double>(32, 1.0)),
                            Tensor(DataType::kFloat, {3, 3, 2, 0}), {1, 1, 1, 1}, "SAME", &out)
                .ok());
    CHECK(out.shape() == std::vector<int64_t>{1, 4, 4, 0});
}

TEST_CASE("Conv2D policy: NCHW with dilations and groups on the CPU, int32 accumulates exactly", "[conv2d]") {
    // TF's CPU kernel refuses NCHW ("The Conv2D op currently only supports
    // the NHWC tensor format on the CPU..."); gradtune computes it. A small
    // hand-checked case: 2 groups, dilation 2, NCHW, int32.
    // input [1, C=2, H=3, W=3]: channel 0 = 1..9, channel 1 = 10..18;
    // filter [2, 2, 1, 2]: output 0 (group 0) taps 1, 1, 1, 1; output 1
    // (group 1) taps 1, 0, 0, -1. With dilation 2, VALID: one output pixel,
    // the corners: group 0: 1+3+7+9 = 20; group 1: 10 - 18 = -8.
    std::vector<double> x(18);
    for (int i = 0; i < 18; i++) x[i] = i + 1;
    Tensor input = make_tensor(DataType::kInt32, {1, 2, 3, 3}, x);
    Tensor filter = make_tensor(DataType::kInt32, {2, 2, 1, 2}, {1, 1, 1, 0, 1, 0, 1, -1});
    Tensor out;
    REQUIRE(Conv2D::Compute(input, filter, {1, 1, 1, 1}, "VALID", &out,
                            Conv2D::DataFormat("NCHW").Dilations({1, 1, 2, 2}))
                .ok());
    CHECK(out.shape() == std::vector<int64_t>{1, 2, 1, 1});
    CHECK(to_doubles(out) == std::vector<double>{20, -8});
}

TEST_CASE("the by-name layer runs and describes Conv2D", "[conv2d]") {
    std::vector<double> x(18), f(27);
    for (int i = 0; i < 18; i++) x[i] = i + 1;
    for (int i = 0; i < 27; i++) f[i] = i + 1;
    Tensor input = make_tensor(DataType::kFloat, {1, 2, 3, 3}, x);
    Tensor filter = make_tensor(DataType::kFloat, {1, 1, 3, 3}, std::vector<double>(f.begin(), f.begin() + 9));
    OpCall call{kOp, {{"input", input.cref()}, {"filter", filter.cref()}},
                {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                 {"padding", std::string("VALID")},
                 {"use_cudnn_on_gpu", false}}};
    std::vector<Tensor> outputs;
    REQUIRE(RunOp(call, &outputs).ok());
    REQUIRE(outputs.size() == 1);
    CHECK(to_doubles(outputs[0]) ==
          std::vector<double>{30, 36, 42, 66, 81, 96, 102, 126, 150, 138, 171, 204, 174, 216, 258, 210, 261, 312});
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.structure == std::map<std::string, int>{{"dilation_height", 1}, {"dilation_width", 1},
                                                       {"filter_height", 1},   {"filter_width", 1},
                                                       {"stride_height", 1},   {"stride_width", 1}});
    CHECK(info.shape == std::map<std::string, int64_t>{{"N", 1}, {"H", 2}, {"W", 3}, {"C", 3}, {"O", 3}, {"G", 1}});
    const OpSpec *spec = FindOpSpec(kOp);
    REQUIRE(spec);
    CHECK(spec->inputs == std::vector<std::string>{"input", "filter"});
}
