// Limits as TensorFlow has them: an output TF could not allocate either gets
// ResourceExhausted with TF's text, never an exception through the API and
// never an OK status with a tensor that claims elements it has no storage
// for.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "gradtune/gradtune.h"
#include "test_util.h"

using namespace gradtune;
using namespace gradtune::testing;

// A build with GRADTUNE_OP_FILTER has only some ops: GRADTUNE_HAS_<op> is
// 1 (tests/CMakeLists.txt) for each op it compiles, undefined (0) otherwise.
#define GRADTUNE_HAS(op) GRADTUNE_HAS_##op

#if GRADTUNE_HAS(DepthwiseConv2dNativeBackpropInput)
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
#endif

#if GRADTUNE_HAS(Conv2DBackpropInput)
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
#endif

TEST_CASE("a Tensor whose byte count wraps is refused, not allocated short", "[limits]") {
    CHECK_THROWS_AS(Tensor(DataType::kDouble, {27905, 8681, 49477, 384773}), std::length_error);
    CHECK(Tensor(DataType::kFloat, {2, 0, 3}).num_elements() == 0);
}

#if GRADTUNE_HAS(Conv2DBackpropInput)
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
#endif

TEST_CASE("shape products that overflow int64 saturate instead of wrapping", "[limits]") {
    const int64_t big = int64_t{1} << 32;
    CHECK(NumElements({big, big, big}) == std::numeric_limits<int64_t>::max());
    CHECK(NumElements({big, -big, 1}) == std::numeric_limits<int64_t>::min());
    CHECK(NumElements({big, big / 2 - 1}) == big * (big / 2 - 1));

#if GRADTUNE_HAS(DepthwiseConv2dNativeBackpropInput) && GRADTUNE_HAS(DepthwiseConv2dNative)
    // A filter of 2^64 elements (depth_multiplier * in_depth = 2^34 * 2^30)
    // wrapped to 0 elements, which matched an out_backprop of depth 0. The
    // filter is never read: a one-float stand-in.
    static float never_read = 0;
    const ConstTensorRef filter{DataType::kFloat, {1, 1, int64_t{1} << 30, int64_t{1} << 34}, &never_read};
    Tensor dy(DataType::kFloat, {1, 4, 4, 0}), dx;
    Status st = DepthwiseConv2dNativeBackpropInput::Compute(int32_vector({1, 4, 4, 1 << 30}), filter, dy,
                                                            {1, 1, 1, 1}, "VALID", &dx);
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK(st.message() == "filter has more than 2**63 - 1 elements: [1,1,1073741824,17179869184]");

    // The forward op computes out_depth = in_depth * depth_multiplier: 2^64
    // elements per pixel is no allocatable output, not an empty one.
    const ConstTensorRef input{DataType::kFloat, {1, 1, 1, big}, &never_read};
    const ConstTensorRef filter2{DataType::kFloat, {1, 1, big, big}, &never_read};
    Tensor y;
    st = DepthwiseConv2dNative::Compute(input, filter2, {1, 1, 1, 1}, "VALID", &y);
    INFO(st.ToString());
    CHECK(!st.ok());
    CHECK(y.shape().empty());
#endif
}

TEST_CASE("integer stores saturate: an out-of-range double is no undefined cast", "[limits]") {
    Tensor i32(DataType::kInt32, {4});
    i32.store(0, 4294967298.0);
    i32.store(1, -1e300);
    i32.store(2, std::nan(""));
    i32.store(3, -7.9);
    CHECK(i32.as<int32_t>()[0] == std::numeric_limits<int32_t>::max());
    CHECK(i32.as<int32_t>()[1] == std::numeric_limits<int32_t>::min());
    CHECK(i32.as<int32_t>()[2] == 0);
    CHECK(i32.as<int32_t>()[3] == -7);  // toward zero, as before
    Tensor i64(DataType::kInt64, {2});
    i64.store(0, 1e19);
    i64.store(1, -9223372036854775808.0);
    CHECK(i64.as<int64_t>()[0] == std::numeric_limits<int64_t>::max());
    CHECK(i64.as<int64_t>()[1] == std::numeric_limits<int64_t>::min());
}

#if GRADTUNE_HAS(FractionalAvgPoolGrad)
TEST_CASE("an output too large for memory is ResourceExhausted, also under AddressSanitizer", "[limits]") {
    // 2^40 rows x 4 bytes: a byte count that fits int64, but no allocator has
    // it. (ASan reports a failed throwing `new` as a crash; Tensor allocates
    // with the nothrow form, so the sanitizer stage sees the same refusal.)
    const int64_t rows = int64_t{1} << 40;
    Tensor shape = Tensor::FromVector<int64_t>(DataType::kInt64, {4}, {1, rows, 1, 1});
    Tensor dy(DataType::kFloat, {1, 1, 1, 1});
    Tensor row_sequence = Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {0, rows});
    Tensor col_sequence = Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {0, 1});
    Tensor dx;
    Status st = Status::OK();
    REQUIRE_NOTHROW(st = FractionalAvgPoolGrad::Compute(shape, dy, row_sequence, col_sequence, &dx));
    INFO(st.ToString());
    CHECK(st.code() == StatusCode::kResourceExhausted);
    CHECK(dx.shape().empty());
}
#endif

// Runs `call` in a child process limited to 2 GB of address space; returns
// its status code, or -1 if the child died.
template <typename Call>
int status_code_within_2gb(Call call) {
    const pid_t pid = fork();
    if (pid == 0) {
        rlimit limit{rlim_t{2} << 30, rlim_t{2} << 30};
        setrlimit(RLIMIT_AS, &limit);
        _exit(static_cast<int>(call().code()));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE("a tensor of 2^31 elements is refused before its output is allocated", "[limits]") {
#if defined(__SANITIZE_ADDRESS__)
    WARN("not run under AddressSanitizer: its shadow memory does not fit under RLIMIT_AS");
#else
    // A 46341 x 46341 input: the output (4.3 GB) was allocated before the
    // int32 refusal; in 2 GB of address space that was ResourceExhausted.
    const int64_t side = 46341;
    Tensor dy(DataType::kFloat, {1, 1, 1, 1});
#if GRADTUNE_HAS(FractionalAvgPool)
    float one = 0;
    const ConstTensorRef value{DataType::kFloat, {1, side, side, 1}, &one};  // never read
    const int pooled = status_code_within_2gb([&] {
        Tensor out, rows, cols;
        FractionalAvgPool::Attrs attrs;
        return FractionalAvgPool::Compute(value, {1.0f, 1.0f, 1.0f, 1.0f}, &out, &rows, &cols, attrs);
    });
    CHECK(pooled == static_cast<int>(StatusCode::kUnimplemented));
#endif
#if GRADTUNE_HAS(FractionalAvgPoolGrad)
    // The gradient of such a pooling: its output (8.6 GB) likewise.
    Tensor shape = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{1, side, side, 1});
    Tensor seq = Tensor::FromVector(DataType::kInt64, {2}, std::vector<int64_t>{0, side});
    const int grad = status_code_within_2gb([&] {
        Tensor dx;
        return FractionalAvgPoolGrad::Compute(shape, dy, seq, seq, &dx, FractionalAvgPoolGrad::Attrs());
    });
    CHECK(grad == static_cast<int>(StatusCode::kUnimplemented));
#endif
#if GRADTUNE_HAS(Conv2DBackpropInput)
    // The dense input gradient of a 1x1 stride-46341 convolution: one
    // out_backprop element, an 8.6 GB output (every convolution op shares
    // the order: TF's OOM, then the int32 refusal, then the allocation).
    Tensor sizes = int32_vector({1, side, side, 1});
    Tensor filter(DataType::kFloat, {1, 1, 1, 1});
    const int dense = status_code_within_2gb([&] {
        Tensor dx;
        return Conv2DBackpropInput::Compute(sizes, filter, dy, {1, static_cast<int>(side), static_cast<int>(side), 1},
                                            "VALID", &dx);
    });
    CHECK(dense == static_cast<int>(StatusCode::kUnimplemented));
#endif
#endif
}
