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
#include <string>
#include <vector>

#include "gradtune/gradtune.h"

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

}  // namespace gradtune::testing
