// Conv2DBackpropFilter: every compiled CPU variant against the plain-loop
// reference, TF's goldens (docs/tf-ops.md section 13.2), the adjoint identity
// with the forward convolution, TF's bad-input table (docs/tf-ops.md section 11
// rows 27-44 that apply, with the section 15 policy), empty tensors, thread
// safety.
#include <array>
#include <catch2/catch.hpp>

#include "bad_call.h"
#include "conv_case.h"
#include "conv_window_checks.h"
#include "reference/conv2d.h"
#include "reference/conv2d_backprop_filter.h"
#include "test_util.h"
#include "variant_sweep.h"

using namespace gradtune;
using namespace gradtune::testing;

namespace {

constexpr const char *kOp = "Conv2DBackpropFilter";

using Case = DenseConvCase;

// The op under test (conv_case.h), and its plain-loop reference.
const ConvOp<Case> run_case{
    [](const Case &k, const ConvOperands &o, const ConvRun &run, Tensor *output) {
        return Conv2DBackpropFilter::Compute(run.activation(o.in_shape, o.x), int32_vector(o.filter_shape),
                                             run.activation(o.out_shape, o.dy), run.strides(k.stride_h, k.stride_w),
                                             k.padding, output, conv_attrs<Conv2DBackpropFilter>(k, run.layout),
                                             run.options);
    },
    [](const ConvOperands &o) {
        return reference::conv2d_backprop_filter(o.x, o.in_shape, o.filter_shape, o.dy, o.out_shape, o.w.geometry);
    },
    Operand::kFilter};

// A sweep over what a generic variant leaves to run time, plus the edge
// sizes (conv_case.h). Output channels reach whole register tiles (32
// float32 lanes by default) and miss them, input channels pass and miss the
// tile of 4, so both specialisation branches and the rounded-up tiles run;
// groups G in {2, 3, 4, 5}, channels per group not a multiple of the vector
// width, and a depthwise-like G == C.
std::vector<Case> generic_cases() {
    std::vector<Case> cases =
        dense_conv_sweep({.channels = {{1, 1}, {3, 5}, {8, 32}, {17, 64}, {5, 33}, {40, 32}, {6, 16}, {12, 24}},
                          .batches = 3,
                          .groups = {{4, 6, 2}, {12, 9, 3}, {34, 64, 2}, {64, 32, 4}, {5, 10, 5}},
                          .tiny = {2, 8, 32}});
    // Many blocks: more rows and images than one reduction block.
    cases.push_back({5, 19, 7, 4, 32, 3, 3, 1, 1, 1, 1, 1, "SAME", {}});
    cases.push_back({3, 40, 5, 9, 48, 2, 2, 1, 2, 1, 1, 1, "VALID", {}});
    return cases;
}

// Run-time sizes for a variant whose structure is fixed: the shared edge
// sizes, plus output channels of 96 and 128 (three and four 32-lane tiles)
// and 24 (half a 16-lane vector: the half-vector branch, with 12 input
// channels that its tiles of up to 8 miss).
std::vector<Case> specialised_cases(const VariantInfo &v) {
    return dense_conv_specialised(v, {{2, 14, 13, 64, 96}, {2, 17, 9, 24, 128}, {2, 9, 11, 12, 24}}, {{3, 3}});
}

}  // namespace

TEST_CASE("Conv2DBackpropFilter: every CPU variant matches the reference", "[conv2d_backprop_filter][variants]") {
    auto tasks = [](const VariantInfo &v) { return has_knob(v, "algorithm=1"); };
    auto bands = [&](const VariantInfo &v) { return tasks(v) && !has_knob(v, "reduction_tasks=1"); };
    auto packed = [](const VariantInfo &v) { return has_knob(v, "stage_out_backprop=2"); };
    SweepCounts n = check_every_variant<Case>(kOp, generic_cases, specialised_cases, fits_dense_conv, run_case,
                                              {{"tasks", tasks}, {"bands", bands}, {"packed", packed}});
    INFO("cases checked: " << n.checked << ", by tasks-outer variants: " << n.cases_of["tasks"]
                           << ", of them with bands of rows: " << n.cases_of["bands"]);
    CHECK(n.checked > 1000);
    // Both algorithms are compiled into every build (records and structure
    // defaults of both), and so are the row bands of the tasks-outer one.
    CHECK(n.cases_of["tasks"] > 10);
    CHECK(n.cases_of["bands"] > 10);
    // Out_backprop copied per output-channel tile: the records that chose it
    // (this machine class's, where it has them) run the full-tile branch and
    // the small ones (Cout 64 and 128; 9, 40, 96 ...).
    if (n.variants_of["packed"] > 0) CHECK(n.cases_of["packed"] > 10 * n.variants_of["packed"]);
}

TEST_CASE("Conv2DBackpropFilter: dispatch serves TF's Conv2D gradient-checker configs (spec 13.3)", "[conv2d_backprop_filter]") {
    // (batch, in_rows, in_cols, f_rows, f_cols, in_depth, out_depth,
    // stride_r, stride_c, padding[, explicit pads]) of conv_ops_test.py's
    // filter-gradient tests, plus its grouped GPU test, float32 and float64.
    const std::vector<Case> cases = {
        {4, 6, 5, 2, 3, 2, 2, 1, 1, 1, 1, 1, "VALID", {}},
        {4, 6, 5, 2, 3, 2, 2, 1, 2, 2, 1, 1, "VALID", {}},
        {2, 8, 7, 2, 3, 4, 4, 1, 3, 3, 1, 1, "VALID", {}},
        {4, 6, 5, 2, 3, 2, 2, 1, 1, 1, 1, 1, "SAME", {}},
        {4, 6, 5, 2, 3, 2, 2, 1, 2, 2, 1, 1, "SAME", {}},
        {2, 8, 7, 2, 3, 4, 4, 1, 3, 3, 1, 1, "SAME", {}},
        {2, 8, 7, 2, 3, 4, 4, 1, 2, 1, 1, 1, "SAME", {}},
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

TEST_CASE("Conv2DBackpropFilter: TF's goldens (spec 13.2)", "[conv2d_backprop_filter]") {
    struct Golden {
        std::vector<int64_t> input, filter_sizes, out_backprop;
        int stride_h, stride_w;
        std::string padding;
        std::vector<double> expected;
    };
    const std::vector<Golden> goldens = {
        {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, 1, 1, "VALID", {5, 8, 14, 17}},
        {{1, 2, 3, 1}, {2, 2, 1, 0}, {1, 1, 2, 0}, 1, 1, "VALID", {}},
        {{0, 2, 3, 1}, {2, 2, 1, 1}, {0, 1, 2, 1}, 1, 1, "VALID", {0, 0, 0, 0}},
        {{1, 2, 3, 3},
         {2, 2, 3, 3},
         {1, 1, 2, 3},
         1,
         1,
         "VALID",
         {17, 22, 27, 22, 29, 36, 27, 36, 45, 32, 43, 54, 37, 50, 63, 42, 57, 72,
          62, 85, 108, 67, 92, 117, 72, 99, 126, 77, 106, 135, 82, 113, 144, 87, 120, 153}},
        {{1, 3, 6, 1}, {2, 2, 1, 1}, {1, 2, 3, 1}, 1, 2, "VALID", {161, 182, 287, 308}},
        {{1, 4, 4, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, 2, 2, "SAME", {78}},
        {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 1, 1, 2}, 1, 1, "VALID", {1, 2, 2, 4, 3, 6, 4, 8}},
    };
    // Integer data: exact in float32, float64 and half; bfloat16's 8 bits do
    // not hold every sum (287 rounds to 288), so it gets its tolerance.
    for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16}) {
        for (const Golden &g : goldens) {
            Tensor x = make_tensor(dtype, g.input, iota(NumElements(g.input)));
            Tensor dy = make_tensor(dtype, g.out_backprop, iota(NumElements(g.out_backprop)));
            Tensor out;
            Status st = Conv2DBackpropFilter::Compute(x, int32_vector(g.filter_sizes), dy,
                                                      {1, g.stride_h, g.stride_w, 1}, g.padding, &out);
            INFO(DataTypeName(dtype) << " input " << ShapeString(g.input) << " filter_sizes "
                                     << ShapeString(g.filter_sizes));
            REQUIRE(st.ok());
            REQUIRE(out.shape() == g.filter_sizes);
            if (dtype == DataType::kBFloat16) {
                CHECK(normwise_error(to_doubles(out), g.expected) <= tolerance(dtype));
            } else {
                CHECK(to_doubles(out) == g.expected);
            }
        }
    }
}

TEST_CASE("Conv2DBackpropFilter: adjoint identity with the forward convolution", "[conv2d_backprop_filter]") {
    // <Conv2D(x, f), dy> == <f, Conv2DBackpropFilter(x, dy)>: grouped,
    // strided, dilated, both layouts.
    check_adjoint(run_case, reference::conv2d,
                  std::vector<Case>{{2, 9, 7, 6, 4, 3, 3, 2, 2, 1, 1, 1, "SAME", {}},
                                    {1, 11, 10, 4, 8, 5, 3, 1, 1, 2, 2, 3, "VALID", {}},
                                    {3, 6, 6, 9, 6, 2, 2, 3, 3, 2, 2, 2, "EXPLICIT", {2, 1, 0, 3}},
                                    {2, 8, 8, 40, 64, 3, 3, 1, 1, 1, 1, 1, "SAME", {}}});
}

namespace {

// A valid base call that each bad-input row changes in one place.
struct BadCall {
    Tensor input = make_tensor(DataType::kFloat, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
    Tensor filter_sizes = int32_vector({3, 3, 2, 3});
    Tensor out_backprop = make_tensor(DataType::kFloat, {1, 4, 4, 3}, std::vector<double>(48, 1.0));
    std::vector<int> strides = {1, 1, 1, 1};
    std::string padding = "SAME";
    Conv2DBackpropFilter::Attrs attrs;
    std::optional<ConstTensorRef> input_override, out_backprop_override;
    std::vector<int64_t> output_shape = {3, 3, 2, 3};

    DataType dtype() const { return input.dtype(); }
    Status run(TensorRef output) const {
        return Conv2DBackpropFilter::Compute(input_override ? *input_override : input.cref(), filter_sizes,
                                             out_backprop_override ? *out_backprop_override : out_backprop.cref(),
                                             strides, padding, output, attrs);
    }
};

const std::string L = "Conv2DCustomBackpropFilter";
const std::string kBatchDepthStrides =
    "Current implementation does not yet support strides in the batch and depth dimensions.";
const std::string kBatchDepthDilations =
    "Current implementation does not yet support dilations in the batch and depth dimensions.";

}  // namespace

TEST_CASE("Conv2DBackpropFilter: bad inputs get TF's error kind and text and leave the output untouched",
          "[conv2d_backprop_filter][errors]") {
    using C = StatusCode;
    SECTION("strides: length, batch/depth (InvalidArgument here), not positive (row 27)") {
        BadCall c;
        c.strides = {1, 1, 1};
        expect_error(c, C::kInvalidArgument, "Sliding window strides field must specify 4 dimensions");
        c.strides = {2, 1, 1, 1};
        expect_error(c, C::kInvalidArgument, kBatchDepthStrides);
        c.strides = {1, 1, 1, 2};
        expect_error(c, C::kInvalidArgument, kBatchDepthStrides);
        c.strides = {1, 0, 1, 1};
        expect_error(c, C::kInvalidArgument, "Row and column strides should be larger than 0.");
        c.strides = {1, 1, -1, 1};
        expect_error(c, C::kInvalidArgument, "Row and column strides should be larger than 0.");
    }
    SECTION("rows 5-8: explicit paddings, checked before the dilations") {
        BadCall c;
        c.padding = "EXPLICIT";
        c.attrs = c.attrs.ExplicitPaddings({0, 0, 1, 1}).Dilations({1, 0, 1, 1});
        expect_error(c, C::kInvalidArgument, "explicit_paddings attribute must contain 8 values, but got: 4");
        c.attrs = c.attrs.ExplicitPaddings({0, 0, -1, 1, 1, 1, 0, 0});
        expect_error(c, C::kInvalidArgument, "All elements of explicit_paddings must be nonnegative");
        c.attrs = c.attrs.ExplicitPaddings({0, 1, 1, 1, 1, 1, 0, 0});
        expect_error(c, C::kInvalidArgument,
                     "Nonzero explicit padding in the batch or depth dimensions is not supported");
        c.padding = "VALID";
        c.attrs = c.attrs.ExplicitPaddings({0, 0, 1, 1, 1, 1, 0, 0});
        expect_error(c, C::kInvalidArgument,
                     "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
    SECTION("dilations: length, batch/depth (row 29: InvalidArgument here), below 1 (row 30 policy)") {
        BadCall c;
        c.attrs = c.attrs.Dilations({1, 1, 1, 1, 1});
        expect_error(c, C::kInvalidArgument, "Sliding window dilations field must specify 4 dimensions");
        c.attrs = c.attrs.Dilations({1, 1, 1, 2});
        expect_error(c, C::kInvalidArgument, kBatchDepthDilations);
        // TF's CPU kernel refuses every dilation but 1 with this text;
        // gradtune computes dilations and keeps it for 0 and negative values.
        c.attrs = c.attrs.Dilations({1, 1, 0, 1});
        expect_error(c, C::kInvalidArgument,
                     "Current CPU implementations do not yet support dilation rates larger than 1.");
        c.attrs = c.attrs.Dilations({1, -3, 1, 1});
        expect_error(c, C::kInvalidArgument,
                     "Current CPU implementations do not yet support dilation rates larger than 1.");
    }
    SECTION("filter_sizes not 1-D, negative, overflowing (rows 11, 36)") {
        BadCall c;
        c.filter_sizes = Tensor::FromVector(DataType::kInt32, {2, 2}, std::vector<int>{3, 3, 2, 3});
        expect_error(c, C::kInvalidArgument, L + ": filter_sizes input must be 1-dim, not 2");
        c.filter_sizes = int32_vector({3, -1, 2, 3});
        expect_error(c, C::kInvalidArgument, "Dimension -1 must be >= 0");
        c.filter_sizes = int32_vector({2147483647, 2147483647, 2147483647, 3});
        expect_error(c, C::kInvalidArgument,
                     "Shape [2147483647,2147483647,2147483647,3] would have more than 2**63 - 1 elements");
    }
    SECTION("row 37: ranks, batch and out_depth") {
        BadCall c;
        Tensor x3 = make_tensor(DataType::kFloat, {4, 4, 2}, std::vector<double>(32, 1.0));
        c.input_override = x3.cref();
        expect_error(c, C::kInvalidArgument, L + ": input must be 4-dimensional");
        BadCall d;
        d.filter_sizes = int32_vector({3, 3, 2});
        expect_error(d, C::kInvalidArgument, L + ": filter must be 4-dimensional");
        BadCall e;
        Tensor dy5 = make_tensor(DataType::kFloat, {1, 4, 4, 3, 1}, std::vector<double>(48, 1.0));
        e.out_backprop_override = dy5.cref();
        expect_error(e, C::kInvalidArgument, L + ": out_backprop must be 4-dimensional");
        BadCall f;
        Tensor dy = make_tensor(DataType::kFloat, {2, 4, 4, 3}, std::vector<double>(96, 1.0));
        f.out_backprop_override = dy.cref();
        expect_error(f, C::kInvalidArgument,
                     L + ": input and out_backprop must have the same batch size. Input batch: 1, outbackprop "
                         "batch: 2, batch_dim: 0");
        BadCall g;
        g.filter_sizes = int32_vector({3, 3, 2, 4});
        g.output_shape = {3, 3, 2, 4};
        expect_error(g, C::kInvalidArgument, L + ": filter and out_backprop must have the same out_depth");
    }
    SECTION("row 38: filter in-depth 0 (CVE-2021-29524)") {
        BadCall c;
        c.filter_sizes = int32_vector({3, 3, 0, 3});
        c.output_shape = {3, 3, 0, 3};
        expect_error(c, C::kInvalidArgument, L + ": filter depth must be strictly greated than zero");
    }
    SECTION("row 39: input depth not a multiple of the filter depth") {
        BadCall c;
        c.filter_sizes = int32_vector({3, 3, 3, 3});
        c.output_shape = {3, 3, 3, 3};
        expect_error(c, C::kInvalidArgument, L + ": input depth must be evenly divisible by filter depth");
    }
    SECTION("row 40: out_backprop rows or columns do not match") {
        BadCall c;
        c.strides = {1, 2, 1, 1};
        expect_error(c, C::kInvalidArgument,
                     L + ": Size of out_backprop doesn't match computed: actual = 4, computed = 2 spatial_dim: 1 "
                         "input: 4 filter: 3 output: 4 stride: 2 dilation: 1");
        BadCall d;
        d.attrs = d.attrs.DataFormat("NCHW").Dilations({1, 1, 1, 2});
        Tensor x = make_tensor(DataType::kFloat, {1, 2, 4, 4}, std::vector<double>(32, 1.0));
        Tensor dy = make_tensor(DataType::kFloat, {1, 3, 4, 3}, std::vector<double>(36, 1.0));
        d.input_override = x.cref();
        d.out_backprop_override = dy.cref();
        d.padding = "VALID";
        expect_error(d, C::kInvalidArgument,
                     L + ": Size of out_backprop doesn't match computed: actual = 4, computed = 2 spatial_dim: 2 "
                         "input: 4 filter: 3 output: 4 stride: 1 dilation: 1");
    }
    SECTION("row 42 (TFSA-2021-028): an illegal group count keeps TF's refusal") {
        BadCall c;
        c.input = make_tensor(DataType::kFloat, {1, 1, 1, 2}, {1.0, 2.0});
        c.filter_sizes = int32_vector({1, 1, 1, 1});
        c.out_backprop = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1.0});
        c.strides = {1, 66, 49, 1};
        c.padding = "VALID";
        c.output_shape = {1, 1, 1, 1};
        expect_error(c, C::kInvalidArgument, "filter_size does not have enough elements, requested 2, got 1");
    }
    SECTION("row 43 (TFSA-2021-027): all-empty tensors") {
        BadCall c;
        c.input = Tensor(DataType::kFloat, {0, 0, 0, 0});
        c.filter_sizes = int32_vector({0, 0, 0, 0});
        c.out_backprop = Tensor(DataType::kFloat, {0, 0, 0, 0});
        c.padding = "VALID";
        c.output_shape = {0, 0, 0, 0};
        expect_error(c, C::kInvalidArgument, L + ": filter depth must be strictly greated than zero");
    }
    SECTION("row 44 (TFSA-2021-013): zero input depth with a non-empty filter") {
        BadCall c;
        c.input = Tensor(DataType::kFloat, {0, 0, 1, 0});
        c.filter_sizes = int32_vector({1, 1, 1, 1});
        c.out_backprop = Tensor(DataType::kFloat, {0, 0, 1, 1});
        c.strides = {1, 66, 18, 1};
        c.output_shape = {1, 1, 1, 1};
        expect_error(c, C::kInvalidArgument, "filter_size does not have enough elements, requested 0, got 1");
    }
    SECTION("gradtune's limit: kernels index in int32") {
        static float cell = 0;  // shapes are checked before any data is read
        BadCall c;
        c.input_override = ConstTensorRef{DataType::kFloat, {1, 2147483646, 1, 1}, &cell};
        c.filter_sizes = int32_vector({1, 1, 1, 1});
        c.out_backprop = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1.0});
        c.strides = {1, 2147483647, 1, 1};
        c.padding = "VALID";
        c.output_shape = {1, 1, 1, 1};
        expect_error(c, C::kUnimplemented,
                     "gradtune: spatial sizes, paddings or strides of 2**31 or more are not supported");
    }
    SECTION("row 68: dtype outside the op's list, mismatched T, filter_sizes not int32") {
        BadCall c;
        c.input = make_tensor(DataType::kInt32, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        c.out_backprop = make_tensor(DataType::kInt32, {1, 4, 4, 3}, std::vector<double>(48, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of int32 is not in the list of allowed values: half, bfloat16, float, double");
        BadCall d;
        d.out_backprop = make_tensor(DataType::kHalf, {1, 4, 4, 3}, std::vector<double>(48, 1.0));
        expect_error(d, C::kInvalidArgument,
                     "cannot compute Conv2DBackpropFilter as input #2(zero-based) was expected to be a float tensor "
                     "but is a half tensor");
        BadCall e;
        e.filter_sizes = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{3, 3, 2, 3});
        expect_error(e, C::kInvalidArgument,
                     "cannot compute Conv2DBackpropFilter as input #1(zero-based) was expected to be a int32 tensor "
                     "but is a int64 tensor");
    }
    SECTION("attr values outside the op definition") {
        check_attr_value_rows<BadCall>();
    }
    SECTION("a caller-provided output of the wrong shape") {
        BadCall c;
        c.output_shape = {3, 3, 2, 2};
        expect_error(c, C::kInvalidArgument, "output has shape [3,3,2,2], but filter_sizes is [3,3,2,3]");
    }
}

TEST_CASE("Conv2DBackpropFilter: empty calls: zeros for an empty input or out_backprop, nothing for an empty filter",
          "[conv2d_backprop_filter]") {
    SECTION("batch 0 (testConv2DBackpropFilterWithEmptyInput) writes zeros over a caller's output") {
        BadCall c;
        c.input = Tensor(DataType::kFloat, {0, 4, 4, 2});
        c.out_backprop = Tensor(DataType::kFloat, {0, 4, 4, 3});
        expect_zeros(c);
    }
    SECTION("an out_backprop without positions (VALID, filter wider than the input) writes zeros") {
        BadCall c;
        c.input = make_tensor(DataType::kFloat, {2, 4, 2, 2}, std::vector<double>(32, 1.0));
        c.out_backprop = Tensor(DataType::kFloat, {2, 2, 0, 3});
        c.padding = "VALID";
        expect_zeros(c);
    }
    SECTION("an empty filter returns before the group check (TF's order)") {
        BadCall c;
        // Two groups and 3 output channels would be refused; with no filter
        // rows there is nothing to compute and TF returns first.
        c.input = make_tensor(DataType::kFloat, {1, 4, 4, 4}, std::vector<double>(64, 1.0));
        c.filter_sizes = int32_vector({0, 3, 2, 3});
        c.output_shape = {0, 3, 2, 3};
        CHECK(run_into_sentinel(c).status.ok());
    }
    SECTION("row 25 analog (policy): NCHW works on the CPU") {
        BadCall c;
        c.attrs = c.attrs.DataFormat("NCHW");
        c.input = make_tensor(DataType::kFloat, {1, 2, 4, 4}, std::vector<double>(32, 1.0));
        c.out_backprop = make_tensor(DataType::kFloat, {1, 3, 4, 4}, std::vector<double>(48, 1.0));
        const SentinelRun r = run_into_sentinel(c);
        REQUIRE(r.status.ok());
        CHECK(!r.untouched);
    }
}

TEST_CASE("Conv2DBackpropFilter: the by-name layer applies TF's attr defaults", "[conv2d_backprop_filter]") {
    OpCall call;
    call.op = kOp;
    Tensor x = make_tensor(DataType::kFloat, {1, 2, 2, 1}, iota(4));
    Tensor sizes = int32_vector({2, 2, 1, 2});
    Tensor dy = make_tensor(DataType::kFloat, {1, 1, 1, 2}, iota(2));
    call.inputs = {{"input", x}, {"filter_sizes", sizes}, {"out_backprop", dy}};
    call.attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", std::string("VALID")}};
    std::vector<Tensor> outputs;
    REQUIRE(RunOp(call, &outputs).ok());
    REQUIRE(outputs.size() == 1);
    CHECK(to_doubles(outputs[0]) == std::vector<double>{1, 2, 2, 4, 3, 6, 4, 8});
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.structure.at("filter_height") == 2);
    CHECK(info.shape.at("C") == 1);
}

TEST_CASE("Conv2DBackpropFilter: concurrent calls from several threads give the same results", "[conv2d_backprop_filter]") {
    const Case k{3, 17, 15, 24, 64, 3, 3, 1, 1, 1, 1, 1, "SAME", {}};
    check_concurrent_calls(k, run_case);
}
