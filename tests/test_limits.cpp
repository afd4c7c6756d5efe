// Limits as TensorFlow has them: an output TF could not allocate either gets
// ResourceExhausted with TF's text, never an exception through the API and
// never an OK status with a tensor that claims elements it has no storage
// for.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "gradtune/gradtune.h"
#include "test_util.h"

using namespace gradtune;
using namespace gradtune::testing;

TEST_CASE("an output of 2^62 elements is ResourceExhausted, not OK with no storage", "[limits]") {
    // Depth multiplier 0: every input is empty, the output [1, 2^30, 2^30, 4] is not.
    const int64_t big = int64_t{1} << 30;
    Tensor filter(DataType::kFloat, {1, 1, 4, 0}), dy(DataType::kFloat, {1, big, big, 0}), dx;
    Status st = DepthwiseConv2dNativeBackpropInput::Compute(int32_vector({1, big, big, 4}), filter, dy, {1, 1, 1, 1},
                                                            "VALID", &dx);
    CHECK(st.code() == StatusCode::kResourceExhausted);
    CHECK(st.message() ==
          "OOM when allocating tensor with shape[1,1073741824,1073741824,4] and type float on "
          "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu");
    CHECK(dx.shape().empty());  // the output is untouched
}

TEST_CASE("a float16 output past the address space is ResourceExhausted, not std::length_error", "[limits]") {
    const int64_t big = int64_t{1} << 30;
    Tensor filter(DataType::kHalf, {1, 1, 4, 0}), dy(DataType::kHalf, {1, big, big, 0}), dx;
    Status st = Status::OK();
    REQUIRE_NOTHROW(st = Conv2DBackpropInput::Compute(int32_vector({1, big, big, 4}), filter, dy, {1, 1, 1, 1},
                                                      "VALID", &dx));
    CHECK(st.code() == StatusCode::kResourceExhausted);
    CHECK(st.ToString().rfind("ResourceExhausted: OOM when allocating tensor with shape[1,1073741824,1073741824,4] "
                              "and type half",
                              0) == 0);
}

TEST_CASE("a Tensor whose byte count wraps is refused, not allocated short", "[limits]") {
    CHECK_THROWS_AS(Tensor(DataType::kDouble, {27905, 8681, 49477, 384773}), std::length_error);
    CHECK(Tensor(DataType::kFloat, {2, 0, 3}).num_elements() == 0);
}

TEST_CASE("a dilation near INT32_MAX is refused without overflowing the window arithmetic", "[limits]") {
    // (filter - 1) * dilation + 1 overflows int64 arithmetic in TF for filter
    // sizes and dilations near the limits; here it saturates and the call is
    // refused like any filter wider than its input.
    Tensor filter(DataType::kFloat, {3, 3, 1, 1}), dy(DataType::kFloat, {1, 1, 1, 1}), dx;
    for (int dilation : {2147483647, 1 << 30}) {
        Status st = Conv2DBackpropInput::Compute(int32_vector({1, 4, 4, 1}), filter, dy, {1, 1, 1, 1}, "VALID", &dx,
                                                 Conv2DBackpropInput::Dilations({1, dilation, dilation, 1}));
        INFO(st.ToString());
        CHECK(st.code() == StatusCode::kInvalidArgument);
    }
}
