// DepthwiseConv2dNativeBackpropInput: every compiled variant against the
// plain-loop reference, TF's goldens, TF's bad-input table (docs/tf-ops.md
// section 11 rows 1-24 with the section 15 policy), empty tensors, thread
// safety.
#include <array>
#include <catch2/catch.hpp>

#include "bad_call.h"
#include "conv_case.h"
#include "conv_window_checks.h"
#include "reference/depthwise_conv2d_native.h"
#include "reference/depthwise_conv2d_native_backprop_input.h"
#include "test_util.h"
#include "variant_sweep.h"

using namespace gradtune;
using namespace gradtune::testing;

namespace {

constexpr const char *kOp = "DepthwiseConv2dNativeBackpropInput";

using Case = DepthwiseCase;

// The op under test (conv_case.h), and its plain-loop reference.
const ConvOp<Case> run_case{[](const Case &k, const ConvOperands &o, const ConvRun &run, Tensor *output) {
                                return DepthwiseConv2dNativeBackpropInput::Compute(
                                    run.activation_sizes(o.in_shape), run.filter(o.filter_shape, o.f),
                                    run.activation(o.out_shape, o.dy), run.strides(k.stride, k.stride), k.padding,
                                    output, conv_attrs<DepthwiseConv2dNativeBackpropInput>(k, run.layout), run.options);
                            },
                            [](const ConvOperands &o) {
                                return reference::depthwise_conv2d_native_backprop_input(
                                    o.in_shape, o.f, o.filter_shape, o.dy, o.out_shape, o.w.geometry);
                            },
                            Operand::kInput};

// A sweep over the structure a generic variant leaves to run time, plus the
// edge sizes: strides 1/2/3, dilations, filter shapes, every padding mode,
// C in {1, 3, 16, 17, 33}, M in {1, 2, 3}, H and W of 1..3 and odd sizes,
// and empty tensors.
std::vector<Case> generic_cases() {
    std::vector<Case> cases = depthwise_sweep({1, 3, 16, 17, 33});
    // Empty tensors: batch 0, depth multiplier 0, no out_backprop rows
    // (VALID, filter 3 on 2 rows: O = (2 - 3 + 1) / 1 = 0), empty filter.
    cases.push_back({0, 5, 5, 3, 1, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({2, 5, 5, 3, 0, 3, 3, 1, 1, 1, "SAME", {}});
    cases.push_back({1, 2, 5, 3, 1, 3, 3, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 4, 4, 3, 1, 0, 3, 1, 1, 1, "VALID", {}});
    cases.push_back({1, 4, 4, 0, 2, 3, 3, 1, 1, 1, "SAME", {}});
    return cases;
}

// Run-time sizes for a variant whose structure is fixed: the shared edge
// sizes, plus three images of a full 32-channel tile.
std::vector<Case> specialised_cases(const VariantInfo &v) {
    return depthwise_specialised(v, {{3, 9, 8, 32}});
}

}  // namespace

TEST_CASE("every CPU variant of DepthwiseConv2dNativeBackpropInput matches the reference", "[dw_backprop_input][variants]") {
    const SweepCounts n = check_every_variant<Case>(kOp, generic_cases, specialised_cases, fits_depthwise, run_case);
    INFO("cases checked: " << n.checked);
    CHECK(n.checked > 500);
}

TEST_CASE("dispatch serves TF's depthwise gradient test configs (spec 13.4)", "[dw_backprop_input]") {
    check_dispatch_cases(depthwise_gradient_configs(), run_case);
}

TEST_CASE("TF's depthwise golden is reproduced exactly through the gradient (spec 1.1)", "[dw_backprop_input]") {
    check_depthwise_golden_through(run_case);  // <input, BackpropInput(e_k, filter)> = output[k]
}

TEST_CASE("adjoint identity with the forward reference", "[dw_backprop_input]") {
    // <DepthwiseConv2dNative(x, f), dy> == <x, BackpropInput(dy, f)>, the
    // forward computed by an independent gather loop; both layouts.
    check_adjoint(run_case, reference::depthwise_conv2d_native,
                  std::vector<Case>{{2, 9, 7, 5, 2, 3, 3, 2, 1, 1, "SAME", {}},
                                    {1, 11, 10, 4, 1, 5, 3, 1, 2, 3, "VALID", {}},
                                    {3, 6, 6, 3, 3, 2, 2, 3, 2, 2, "EXPLICIT", {2, 1, 0, 3}}});
}

namespace {

// A valid base call that each bad-input row changes in one place.
struct BadCall {
    Tensor input_sizes = int32_vector({1, 4, 4, 2});
    Tensor filter = make_tensor(DataType::kFloat, {3, 3, 2, 1}, std::vector<double>(18, 1.0));
    Tensor out_backprop = make_tensor(DataType::kFloat, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
    std::vector<int> strides = {1, 1, 1, 1};
    std::string padding = "SAME";
    DepthwiseConv2dNativeBackpropInput::Attrs attrs;
    ConstTensorRef out_backprop_ref() const { return out_backprop.cref(); }
    std::optional<ConstTensorRef> out_backprop_override;
    std::optional<ConstTensorRef> filter_override;
    std::vector<int64_t> output_shape = {1, 4, 4, 2};

    DataType dtype() const { return filter.dtype(); }
    Status run(TensorRef output) const {
        return DepthwiseConv2dNativeBackpropInput::Compute(
            input_sizes, filter_override ? *filter_override : filter.cref(),
            out_backprop_override ? *out_backprop_override : out_backprop.cref(), strides, padding, output, attrs);
    }
};

const std::string L = "DepthwiseConv2DBackpropInput";

}  // namespace

TEST_CASE("bad inputs get TF's error kind and text and leave the output untouched", "[dw_backprop_input][errors]") {
    using C = StatusCode;
    check_depthwise_window_attrs<BadCall>();  // rows 1-8
    SECTION("row 9: input_sizes not 1-D") {
        BadCall c;
        c.input_sizes = Tensor::FromVector(DataType::kInt32, {2, 2}, std::vector<int>{1, 4, 4, 2});
        expect_error(c, C::kInvalidArgument, "Conv2DBackpropInput: input_sizes input must be 1-dim, not 2");
    }
    SECTION("row 10: negative input_sizes entry") {
        BadCall c;
        c.input_sizes = int32_vector({1, 4, -4, 2});
        expect_error(c, C::kInvalidArgument, "Dimension 2 of input_sizes must be >= 0");
    }
    SECTION("row 12: input_sizes whose product overflows int64") {
        BadCall c;
        c.input_sizes = int32_vector(std::vector<int64_t>(13, 1879048192));
        expect_error(c, C::kInvalidArgument,
                     "Encountered overflow when multiplying 3530822107858468864 with 1879048192, result: -1");
    }
    SECTION("row 13: input_sizes length != 4") {
        BadCall c;
        c.input_sizes = int32_vector({1, 4, 4});
        expect_error(c, C::kInvalidArgument, L + ": input must be 4-dimensional");
    }
    SECTION("row 14: filter or out_backprop rank != 4") {
        BadCall c;
        Tensor filter3 = make_tensor(DataType::kFloat, {3, 3, 2}, std::vector<double>(18, 1.0));
        c.filter_override = filter3.cref();
        expect_error(c, C::kInvalidArgument, L + ": filter must be 4-dimensional");
        BadCall d;
        Tensor dy5 = make_tensor(DataType::kFloat, {1, 4, 4, 2, 1}, std::vector<double>(32, 1.0));
        d.out_backprop_override = dy5.cref();
        expect_error(d, C::kInvalidArgument, L + ": out_backprop must be 4-dimensional");
    }
    SECTION("row 16: input sizes of 2**31-1 and more") {
        BadCall c;
        c.input_sizes = int32_vector({1, 2147483647, 1, 2});
        c.output_shape = {1, 1, 1, 1};
        expect_error(c, C::kInvalidArgument, "Input rows too large");
        c.input_sizes = int32_vector({1, 1, 2147483647, 2});
        expect_error(c, C::kInvalidArgument, "Input cols too large");
    }
    SECTION("row 17: input depth != filter in_depth") {
        BadCall c;
        Tensor filter = make_tensor(DataType::kFloat, {3, 3, 3, 1}, std::vector<double>(27, 1.0));
        c.filter_override = filter.cref();
        expect_error(c, C::kInvalidArgument, L + ": input and filter must have the same in_depth");
    }
    SECTION("row 18: out depth != C * M") {
        BadCall c;
        Tensor filter = make_tensor(DataType::kFloat, {3, 3, 2, 2}, std::vector<double>(36, 1.0));
        c.filter_override = filter.cref();
        expect_error(c, C::kInvalidArgument, L + ": depth_multiplier * in_depth not equal to out_depth");
    }
    SECTION("row 19: filter larger than the input by the stride or more") {
        BadCall c;
        c.input_sizes = int32_vector({1, 1, 4, 2});
        c.output_shape = {1, 1, 4, 2};
        c.padding = "VALID";
        c.strides = {1, 2, 2, 1};
        Tensor filter = make_tensor(DataType::kFloat, {5, 1, 2, 1}, std::vector<double>(10, 1.0));
        c.filter_override = filter.cref();
        expect_error(c, C::kInvalidArgument,
                     "Computed output size would be negative: -1 [input_size: 1, effective_filter_size: 5, stride: 2]");
    }
    check_depthwise_gradient_rows<BadCall>(L);  // rows 15, 16 (out_backprop), 20, 22
    SECTION("row 68: dtype outside the op's list, mismatched T, input_sizes not int32") {
        BadCall c;
        c.filter = make_tensor(DataType::kInt32, {3, 3, 2, 1}, std::vector<double>(18, 1.0));
        c.out_backprop = make_tensor(DataType::kInt32, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of int32 is not in the list of allowed values: half, bfloat16, float, double");
        BadCall d;
        d.out_backprop = make_tensor(DataType::kDouble, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
        expect_error(d, C::kInvalidArgument,
                     "cannot compute DepthwiseConv2dNativeBackpropInput as input #2(zero-based) was expected to be a "
                     "float tensor but is a double tensor");
        BadCall e;
        e.input_sizes = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{1, 4, 4, 2});
        expect_error(e, C::kInvalidArgument,
                     "cannot compute DepthwiseConv2dNativeBackpropInput as input #0(zero-based) was expected to be a "
                     "int32 tensor but is a int64 tensor");
    }
    SECTION("attr values outside the op definition") {
        check_attr_value_rows<BadCall>();
    }
    SECTION("a caller-provided output of the wrong shape") {
        BadCall c;
        c.output_shape = {1, 4, 4, 3};
        expect_error(c, C::kInvalidArgument, "output has shape [1,4,4,3], but input_sizes is [1,4,4,2]");
    }
}

TEST_CASE("policy rows 21 and 24: NCHW works on the CPU, depth multiplier 0 gives zeros", "[dw_backprop_input]") {
    // Row 21 is covered by the NCHW sweeps above; row 24 here with a
    // sentinel-filled caller output that must come back all zero.
    BadCall c;
    c.input_sizes = int32_vector({2, 3, 3, 4});
    c.filter = Tensor(DataType::kFloat, {3, 3, 4, 0});
    c.out_backprop = Tensor(DataType::kFloat, {2, 3, 3, 0});
    c.output_shape = {2, 3, 3, 4};
    expect_zeros(c);
}

TEST_CASE("concurrent calls from several threads give the same results", "[dw_backprop_input]") {
    const Case k{2, 17, 15, 24, 1, 3, 3, 1, 1, 1, "SAME", {}};
    check_concurrent_calls(k, run_case);
}
