// The bad-input harness the op tests share. An op's test defines its BadCall:
// a valid call that each bad-input row changes in one place, with
//   std::vector<int64_t> output_shape;   the caller-provided output's shape
//   DataType dtype() const;              the output's dtype
//   Status run(TensorRef output) const;  the op's typed Compute into `output`
// and these run it into an output filled with a sentinel: a refused call must
// give TF's error kind and text and leave the output untouched.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gradtune/gradtune.h"
#include "test_util.h"

namespace gradtune::testing {

inline constexpr double kSentinel = 7.0;

// A tensor of `shape` whose every element holds kSentinel.
inline Tensor sentinel_tensor(DataType dtype, const std::vector<int64_t> &shape) {
    Tensor t(dtype, shape);
    for (int64_t i = 0; i < t.num_elements(); i++) t.store(i, kSentinel);
    return t;
}

inline bool all_equal(const Tensor &t, double value) {
    for (int64_t i = 0; i < t.num_elements(); i++)
        if (t.load(i) != value) return false;
    return true;
}

// What a call did: its status, and whether the output still holds only the
// sentinel or only zeros.
struct SentinelRun {
    Status status;
    bool untouched = true, zeros = true;
};

template <typename Call>
SentinelRun run_into_sentinel(const Call &call) {
    Tensor output = sentinel_tensor(call.dtype(), call.output_shape);
    SentinelRun r;
    r.status = call.run(output.ref());
    r.untouched = all_equal(output, kSentinel);
    r.zeros = all_equal(output, 0.0);
    return r;
}

// The status must be `code: text`, and the output untouched.
template <typename Call>
void expect_error(const Call &call, StatusCode code, const std::string &text) {
    const SentinelRun r = run_into_sentinel(call);
    INFO(r.status.ToString());
    CHECK(r.status.code() == code);
    CHECK(r.status.message() == text);
    CHECK(r.untouched);
}

// The call must succeed and write zeros over the whole output.
template <typename Call>
void expect_zeros(const Call &call) {
    const SentinelRun r = run_into_sentinel(call);
    INFO(r.status.ToString());
    REQUIRE(r.status.ok());
    CHECK(r.zeros);
}

// The rows of a caller-provided output that does not fit a call whose
// output is float [1, 4, 4, 2]: of another shape, of another dtype.
template <typename BadCall>
void check_caller_output_rows() {
    BadCall c;
    c.output_shape = {1, 4, 4, 3};
    expect_error(c, StatusCode::kInvalidArgument, "output has shape [1,4,4,3], expected [1,4,4,2]");
    Tensor output(DataType::kDouble, {1, 4, 4, 2});
    CHECK(BadCall().run(output.ref()).message() == "output has dtype double, expected float");
}

// The BadCall of a forward convolution Op (Conv2D, DepthwiseConv2dNative):
// a float32 NHWC input [1, 4, 4, 2] of ones, a filter of ones of
// `filter_shape`, SAME padding, stride 1; an override replaces a tensor by a
// view (of a tensor a row keeps alive).
template <typename Op>
struct ForwardBadCall {
    explicit ForwardBadCall(std::vector<int64_t> filter_shape)
        : filter(make_tensor(DataType::kFloat, filter_shape,
                             std::vector<double>(static_cast<size_t>(NumElements(filter_shape)), 1.0))) {}

    Tensor input = make_tensor(DataType::kFloat, {1, 4, 4, 2}, std::vector<double>(32, 1.0));
    Tensor filter;
    std::vector<int> strides = {1, 1, 1, 1};
    std::string padding = "SAME";
    typename Op::Attrs attrs;
    std::optional<ConstTensorRef> input_override;
    std::optional<ConstTensorRef> filter_override;
    std::vector<int64_t> output_shape = {1, 4, 4, 2};
    RunOptions options;

    DataType dtype() const { return input.dtype(); }
    Status run(TensorRef output) const {
        return Op::Compute(input_override ? *input_override : input.cref(),
                           filter_override ? *filter_override : filter.cref(), strides, padding, output, attrs,
                           options);
    }

    // This call on `x` and `f` with `pad` (EXPLICIT: `pads`) must turn an
    // output of `shape` holding the sentinel all zero (expect_zeros).
    void expect_zeros_on(const Tensor &x, const Tensor &f, const std::string &pad, const std::vector<int> &pads,
                         const std::vector<int64_t> &shape) {
        input = x;
        filter = f;
        padding = pad;
        attrs = Op::ExplicitPaddings(pads);
        output_shape = shape;
        expect_zeros(*this);
    }
};

}  // namespace gradtune::testing
