// DepthwiseConv2dNativeBackpropFilter: every compiled variant against the
// plain-loop reference, TF's goldens and gradient configs, the adjoint identity
// with the forward op, TF's bad-input table (docs/tf-ops.md section 11 rows
// 1-23 that apply, with the section 15 policy), empty tensors, determinism
// across thread counts, thread safety and the by-name layer.
#include <array>
#include <catch2/catch.hpp>
#include <cstring>

#include "bad_call.h"
#include "conv_case.h"
#include "conv_window_checks.h"
#include "reference/depthwise_conv2d_native.h"
#include "reference/depthwise_conv2d_native_backprop_filter.h"
#include "test_util.h"
#include "variant_sweep.h"

// From the Halide runtime inside libgradtune (HalideRuntime.h): the number of
// threads parallel loops may use. Returns the previous value.
extern "C" int halide_set_num_threads(int n);

using namespace gradtune;
using namespace gradtune::testing;

namespace {

constexpr const char *kOp = "DepthwiseConv2dNativeBackpropFilter";

using Case = DepthwiseCase;

// The op under test (conv_case.h), and its plain-loop reference.
const ConvOp<Case> run_case{[](const Case &k, const ConvOperands &o, const ConvRun &run, Tensor *output) {
                                return DepthwiseConv2dNativeBackpropFilter::Compute(
                                    run.activation(o.in_shape, o.x), int32_vector(o.filter_shape),
                                    run.activation(o.out_shape, o.dy), run.strides(k.stride, k.stride), k.padding,
                                    output, conv_attrs<DepthwiseConv2dNativeBackpropFilter>(k, run.layout),
                                    run.options);
                            },
                            [](const ConvOperands &o) {
                                return reference::depthwise_conv2d_native_backprop_filter(
                                    o.x, o.in_shape, o.filter_shape, o.dy, o.out_shape, o.w.geometry);
                            },
                            Operand::kFilter};

// A sweep over the structure a generic variant leaves to run time, plus the
// edge sizes: strides 1/2/3, dilations, filter shapes (1x1 and 2x3 take the
// small-tile path, 3x3 and 5x5 the register tiles), every padding mode,
// C in {1, 3, 16, 17, 33, 40} (33 and 40 fill the 32-channel tiles of the
// defaults, with a remainder), M in {1, 2, 3}, H and W of 1..3, odd sizes,
// enough rows (N*OH) for every partition count to leave a remainder, and
// empty tensors.
std::vector<Case> generic_cases() {
    std::vector<Case> cases = depthwise_sweep({1, 3, 16, 17, 33, 40});
    // Full tiles in both layouts with more rows than partitions.
    cases.push_back({3, 13, 11, 48, 1, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 21, 19, 35, 1, 3, 3, 2, 1, 1, "SAME", {}});
    cases.push_back({2, 12, 15, 33, 2, 5, 5, 1, 1, 1, "SAME", {}});
    cases.push_back({2, 10, 10, 64, 1, 3, 3, 1, 2, 2, "EXPLICIT", {2, 1, 3, 0}});
    // Empty tensors: batch 0, depth multiplier 0, no out_backprop rows
    // (VALID, filter 3 on 2 rows: O = (2 - 3 + 1) / 1 = 0), empty filter,
    // no channels, an empty input whose padding still gives out_backprop rows.
    cases.push_back({0, 5, 5, 3, 1, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({2, 5, 5, 3, 0, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 2, 5, 3, 1, 3, 3, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 4, 4, 3, 1, 0, 3, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 4, 4, 0, 2, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 0, 4, 3, 1, 1, 1, 1, 1, 1, "EXPLICIT", {2, 1, 0, 0}});
    return cases;
}

// Run-time sizes for a variant whose structure is fixed: the shared edge
// sizes, plus three images of a full 32-channel tile.
std::vector<Case> specialised_cases(const VariantInfo &v) {
    return depthwise_specialised(v, {{3, 9, 8, 32}});
}

}  // namespace

TEST_CASE("every CPU variant of DepthwiseConv2dNativeBackpropFilter matches the reference",
          "[dw_backprop_filter][variants]") {
    const SweepCounts n = check_every_variant<Case>(kOp, generic_cases, specialised_cases, fits_depthwise, run_case);
    INFO("cases checked: " << n.checked);
    CHECK(n.checked > 500);
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: dispatch serves TF's depthwise gradient test configs (spec 13.4)",
          "[dw_backprop_filter]") {
    check_dispatch_cases(depthwise_gradient_configs(), run_case);
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: TF's depthwise golden is reproduced exactly through the gradient (spec 1.1)",
          "[dw_backprop_filter]") {
    check_depthwise_golden_through(run_case);  // <filter, BackpropFilter(input, e_k)> = output[k]
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: TF's Conv2DBackpropFilter goldens with one input channel (spec 13.2)",
          "[dw_backprop_filter]") {
    // A depthwise convolution of a one-channel input is a Conv2D with
    // in_depth 1 and out_depth M, so these TF goldens (conv_ops_test: tensors
    // filled with 1, 2, ..., N) hold for BackpropFilter too, exactly. The
    // unequal-stride golden does not apply (depthwise strides must be equal).
    struct Golden {
        std::vector<int64_t> input, filter_sizes, out_backprop;
        int stride;
        std::string padding;
        std::vector<double> expected;
    };
    const std::vector<Golden> goldens = {
        {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, 1, "VALID", {5, 8, 14, 17}},
        {{1, 4, 4, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, 2, "SAME", {78}},
        {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 1, 1, 2}, 1, "VALID", {1, 2, 2, 4, 3, 6, 4, 8}},
        {{0, 2, 3, 1}, {2, 2, 1, 1}, {0, 1, 2, 1}, 1, "VALID", {0, 0, 0, 0}},  // empty input: zeros
        {{1, 2, 3, 1}, {2, 2, 1, 0}, {1, 1, 2, 0}, 1, "VALID", {}},            // empty filter
    };
    for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16})
        for (const Golden &g : goldens) {
            Tensor out;
            Status st = DepthwiseConv2dNativeBackpropFilter::Compute(
                make_tensor(dtype, g.input, iota(NumElements(g.input))), int32_vector(g.filter_sizes),
                make_tensor(dtype, g.out_backprop, iota(NumElements(g.out_backprop))), {1, g.stride, g.stride, 1},
                g.padding, &out);
            INFO(DataTypeName(dtype) << " input " << ShapeString(g.input));
            REQUIRE(st.ok());
            CHECK(out.shape() == g.filter_sizes);
            CHECK(to_doubles(out) == g.expected);
        }
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: adjoint identity with the forward reference", "[dw_backprop_filter]") {
    // <DepthwiseConv2dNative(x, f), dy> == <f, BackpropFilter(x, dy)>, the
    // forward computed by an independent gather loop; both layouts.
    check_adjoint(run_case, reference::depthwise_conv2d_native,
                  std::vector<Case>{{2, 9, 7, 5, 2, 3, 3, 2, 1, 1, "SAME", {}},
                                    {1, 11, 10, 4, 1, 5, 3, 1, 2, 3, "VALID", {}},
                                    {3, 6, 6, 3, 3, 2, 2, 3, 2, 2, "EXPLICIT", {2, 1, 0, 3}},
                                    {2, 17, 19, 40, 1, 3, 3, 1, 1, 1, "SAME", {}}});
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: the result has the same bits whatever the number of threads",
          "[dw_backprop_filter]") {
    // The reduction is split into a fixed number of partitions (a knob) and
    // the partial sums are added in a fixed order, so the thread count must
    // not change a single bit. Each CPU variant runs the same call with 1, 2,
    // 3 and 8 Halide threads, twice each.
    const std::vector<Case> cases = {{4, 23, 21, 40, 1, 3, 3, 1, 1, 1, "SAME", {}},
                                     {3, 30, 29, 18, 2, 5, 5, 2, 1, 1, "SAME", {}}};
    int compared = 0;
    for (const VariantInfo &v : runnable_cpu_variants(kOp)) {
        const DataType dtype = dtype_of(v.dtype);
        for (const Case &k : cases) {
            if (!fits_depthwise(v, k)) continue;
            const ConvOperands o = conv_operands(k, dtype, 21);
            const std::vector<double> want = run_case.reference(o);
            const ConvRun run(dtype, v.data_format, v.name);
            std::vector<std::vector<unsigned char>> results;
            for (int threads : {1, 2, 3, 8, 1, 8}) {
                const int previous = halide_set_num_threads(threads);
                Tensor out;
                Status st = run_case.call(k, o, run, &out);
                halide_set_num_threads(previous);
                INFO(v.name << " " << k.describe() << " threads=" << threads);
                REQUIRE(st.ok());
                CHECK(normwise_error(to_doubles(out), want) <= tolerance(dtype));
                const auto *bytes = static_cast<const unsigned char *>(out.data());
                results.emplace_back(bytes, bytes + out.num_elements() * DataTypeSize(dtype));
            }
            for (size_t i = 1; i < results.size(); i++) {
                INFO(v.name << " " << k.describe() << " run " << i);
                CHECK(results[i] == results[0]);
            }
            compared++;
        }
    }
    CHECK(compared >= 16);
}

namespace {

// A valid base call that each bad-input row changes in one place.
struct BadCall {
    Tensor input = make_tensor(DataType::kFloat, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
    Tensor filter_sizes = int32_vector({3, 3, 2, 1});
    Tensor out_backprop = make_tensor(DataType::kFloat, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
    std::vector<int> strides = {1, 1, 1, 1};
    std::string padding = "SAME";
    DepthwiseConv2dNativeBackpropFilter::Attrs attrs;
    std::optional<ConstTensorRef> input_override;
    std::optional<ConstTensorRef> out_backprop_override;
    std::vector<int64_t> output_shape = {3, 3, 2, 1};

    DataType dtype() const { return input.dtype(); }
    Status run(TensorRef output) const {
        return DepthwiseConv2dNativeBackpropFilter::Compute(
            input_override ? *input_override : input.cref(), filter_sizes,
            out_backprop_override ? *out_backprop_override : out_backprop.cref(), strides, padding, output, attrs);
    }
};

const std::string L = "DepthwiseConv2DBackpropFilter";

}  // namespace

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: bad inputs get TF's error kind and text and leave the output untouched",
          "[dw_backprop_filter][errors]") {
    using C = StatusCode;
    check_depthwise_window_attrs<BadCall>();  // rows 1-8
    SECTION("row 11: filter_sizes not 1-D") {
        BadCall c;
        c.filter_sizes = Tensor::FromVector(DataType::kInt32, {2, 2}, std::vector<int>{3, 3, 2, 1});
        expect_error(c, C::kInvalidArgument, "Conv2DBackpropFilter: filter_sizes input must be 1-dim, not 2");
        c.filter_sizes = Tensor::FromVector(DataType::kInt32, {}, std::vector<int>{3});
        expect_error(c, C::kInvalidArgument, "Conv2DBackpropFilter: filter_sizes input must be 1-dim, not 0");
    }
    SECTION("row 11: negative filter_sizes entry") {
        BadCall c;
        c.filter_sizes = int32_vector({3, -3, 2, 1});
        expect_error(c, C::kInvalidArgument, "Dimension 1 of filter_sizes must be >= 0");
        // Checked element by element, before the rank: a fifth, negative entry.
        c.filter_sizes = int32_vector({3, 3, 2, 1, -1});
        expect_error(c, C::kInvalidArgument, "Dimension 4 of filter_sizes must be >= 0");
    }
    SECTION("row 12: filter_sizes whose product overflows int64") {
        BadCall c;
        c.filter_sizes = int32_vector(std::vector<int64_t>(13, 1879048192));
        expect_error(c, C::kInvalidArgument,
                     "Encountered overflow when multiplying 3530822107858468864 with 1879048192, result: -1");
    }
    SECTION("rows 13-14: input, filter_sizes or out_backprop rank != 4") {
        BadCall c;
        Tensor input3 = make_tensor(DataType::kFloat, {4, 4, 2}, std::vector<double>(32, 1.0));
        c.input_override = input3.cref();
        expect_error(c, C::kInvalidArgument, L + ": input must be 4-dimensional");
        BadCall d;
        d.filter_sizes = int32_vector({3, 3, 2});
        d.output_shape = {3, 3, 2};
        expect_error(d, C::kInvalidArgument, L + ": filter must be 4-dimensional");
        BadCall e;
        Tensor dy5 = make_tensor(DataType::kFloat, {1, 4, 4, 2, 1}, std::vector<double>(32, 1.0));
        e.out_backprop_override = dy5.cref();
        expect_error(e, C::kInvalidArgument, L + ": out_backprop must be 4-dimensional");
    }
    SECTION("row 16: input sizes of 2**31-1 and more") {
        static float cell = 0;  // shapes are checked before any data is read
        BadCall c;
        c.input_override = ConstTensorRef{DataType::kFloat, {1, 2147483647, 4, 2}, &cell};
        expect_error(c, C::kInvalidArgument, "Input rows too large");
        c.input_override = ConstTensorRef{DataType::kFloat, {1, 4, 2147483647, 2}, &cell};
        expect_error(c, C::kInvalidArgument, "Input cols too large");
    }
    SECTION("row 17: input depth != filter in_depth") {
        BadCall c;
        c.filter_sizes = int32_vector({3, 3, 3, 1});
        c.output_shape = {3, 3, 3, 1};
        expect_error(c, C::kInvalidArgument, L + ": input and filter must have the same in_depth");
    }
    SECTION("row 18: out depth != C * M") {
        BadCall c;
        c.filter_sizes = int32_vector({3, 3, 2, 2});
        c.output_shape = {3, 3, 2, 2};
        expect_error(c, C::kInvalidArgument, L + ": depth_multiplier * in_depth not equal to out_depth");
    }
    SECTION("row 19: filter larger than the input by the stride or more") {
        BadCall c;
        Tensor input = make_tensor(DataType::kFloat, {1, 1, 4, 2}, std::vector<double>(8, 1.0));
        c.input_override = input.cref();
        c.padding = "VALID";
        c.strides = {1, 2, 2, 1};
        c.filter_sizes = int32_vector({5, 1, 2, 1});
        c.output_shape = {5, 1, 2, 1};
        expect_error(c, C::kInvalidArgument,
                     "Computed output size would be negative: -1 [input_size: 1, effective_filter_size: 5, stride: 2]");
    }
    check_depthwise_gradient_rows<BadCall>(L);  // rows 15, 16 (out_backprop), 20, 22
    SECTION("row 68: dtype outside the op's list, mismatched T, filter_sizes not int32") {
        BadCall c;
        c.input = make_tensor(DataType::kInt32, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        c.out_backprop = make_tensor(DataType::kInt32, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of int32 is not in the list of allowed values: half, bfloat16, float, double");
        BadCall d;
        d.out_backprop = make_tensor(DataType::kDouble, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        expect_error(d, C::kInvalidArgument,
                     "cannot compute DepthwiseConv2dNativeBackpropFilter as input #2(zero-based) was expected to be a "
                     "float tensor but is a double tensor");
        BadCall e;
        e.filter_sizes = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{3, 3, 2, 1});
        expect_error(e, C::kInvalidArgument,
                     "cannot compute DepthwiseConv2dNativeBackpropFilter as input #1(zero-based) was expected to be a "
                     "int32 tensor but is a int64 tensor");
    }
    SECTION("attr values outside the op definition") {
        check_attr_value_rows<BadCall>();
    }
    SECTION("a caller-provided output of the wrong shape") {
        BadCall c;
        c.output_shape = {3, 3, 2, 2};
        expect_error(c, C::kInvalidArgument, "output has shape [3,3,2,2], but filter_sizes is [3,3,2,1]");
    }
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: policy row 23: an empty out_backprop gives zeros, not uninitialised memory",
          "[dw_backprop_filter]") {
    // TF returns without writing when out_backprop is empty; gradtune writes
    // zeros into a sentinel-filled caller output: batch 0, no out_backprop
    // rows (VALID, filter 3 on 2 rows), and an empty input (H = 0) whose
    // explicit padding still gives out_backprop rows.
    struct Empty {
        std::vector<int64_t> input, filter_sizes, out_backprop;
        std::string padding;
        std::vector<int> explicit_paddings;
    };
    const std::vector<Empty> empties = {
        {{0, 5, 5, 3}, {3, 3, 3, 2}, {0, 5, 5, 6}, "SAME", {}},
        {{2, 2, 5, 3}, {3, 3, 3, 1}, {2, 0, 3, 3}, "VALID", {}},
        {{1, 0, 4, 2}, {1, 1, 2, 1}, {1, 3, 4, 2}, "EXPLICIT", {0, 0, 2, 1, 0, 0, 0, 0}},
    };
    for (const char *layout : {"NHWC", "NCHW"})
        for (const Empty &e : empties) {
            const bool nchw = is_nchw(layout);
            BadCall c;
            c.input =
                make_tensor(DataType::kFloat, to_layout(e.input, nchw), std::vector<double>(NumElements(e.input), 1.0));
            c.out_backprop = make_tensor(DataType::kFloat, to_layout(e.out_backprop, nchw),
                                         std::vector<double>(NumElements(e.out_backprop), 1.0));
            c.filter_sizes = int32_vector(e.filter_sizes);
            c.output_shape = e.filter_sizes;
            c.padding = e.padding;
            c.attrs = DepthwiseConv2dNativeBackpropFilter::DataFormat(layout);
            if (!e.explicit_paddings.empty()) {
                const auto &p = e.explicit_paddings;
                c.attrs = c.attrs.ExplicitPaddings(nchw ? std::vector<int>{0, 0, 0, 0, p[2], p[3], p[4], p[5]} : p);
            }
            INFO(layout << " input " << ShapeString(e.input));
            expect_zeros(c);
        }
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter: concurrent calls from several threads give the same results",
          "[dw_backprop_filter]") {
    const Case k{2, 17, 15, 24, 1, 3, 3, 1, 1, 1, "SAME", {}};
    check_concurrent_calls(k, run_case);
}

TEST_CASE("the by-name layer runs and describes DepthwiseConv2dNativeBackpropFilter", "[dw_backprop_filter]") {
    const Case k{2, 9, 8, 5, 2, 3, 3, 2, 1, 1, "SAME", {}};
    const ConvOperands o = conv_operands(k, DataType::kFloat, 31);
    Tensor input = make_tensor(DataType::kFloat, o.in_shape, o.x);
    Tensor dy = make_tensor(DataType::kFloat, o.out_shape, o.dy);
    Tensor sizes = int32_vector(o.filter_shape);
    OpCall call;
    call.op = kOp;
    call.inputs = {{"input", input.cref()}, {"filter_sizes", sizes.cref()}, {"out_backprop", dy.cref()}};
    call.attrs = {{"strides", std::vector<int64_t>{1, 2, 2, 1}}, {"padding", std::string("SAME")}};
    std::vector<Tensor> outputs;
    REQUIRE(RunOp(call, &outputs).ok());
    REQUIRE(outputs.size() == 1);
    CHECK(normwise_error(to_doubles(outputs[0]), run_case.reference(o)) <= tolerance(DataType::kFloat));
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.op == kOp);
    CHECK(info.structure == std::map<std::string, int>{{"depth_multiplier", 2}, {"dilation_height", 1},
                                                      {"dilation_width", 1}, {"filter_height", 3},
                                                      {"filter_width", 3}, {"stride", 2}});
    CHECK(info.shape == std::map<std::string, int64_t>{{"N", 2}, {"H", 9}, {"W", 8}, {"C", 5}});
    const OpSpec *spec = FindOpSpec(kOp);
    REQUIRE(spec != nullptr);
    CHECK(spec->inputs == std::vector<std::string>{"input", "filter_sizes", "out_backprop"});
}
