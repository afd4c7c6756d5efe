// FractionalAvgPoolGrad: every compiled CPU variant against the plain-loop
// reference (bit for bit: the kernel adds TF's float64 terms in TF's order),
// the worked example of docs/tf-ops.md section 8, TF's grad tests against an
// AvgPoolGrad-like reference (docs/tf-ops.md section 13.5), integer
// truncation, arbitrary sequences (docs/tf-ops.md section 11 row 67), every
// bad-input row 57-66 and 68, the adjoint identity with the forward reference,
// the by-name layer and concurrent calls.
//
// Expected values marked "TF 2.21" were checked against
// tf.raw_ops.FractionalAvgPoolGrad of TensorFlow 2.21.0 (CPU).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include "bad_call.h"
#include "philox.h"
#include "reference/fractional_avg_pool.h"
#include "reference/fractional_avg_pool_grad.h"
#include "test_util.h"

using namespace gradtune;
using namespace gradtune::testing;

namespace {

constexpr const char *kOp = "FractionalAvgPoolGrad";

struct Case {
    std::string name;
    std::vector<int64_t> in_shape;   // N, H, W, C
    std::vector<int64_t> out_shape;  // N' <= N, OH, OW, C' <= C
    std::vector<int64_t> rows, cols; // at least OH + 1 / OW + 1 values
    bool overlapping = false;
    std::vector<int64_t> rows_shape = {}, cols_shape = {};  // empty: 1-D

    std::string describe() const {
        std::ostringstream out;
        out << name << " in " << ShapeString(in_shape) << " out " << ShapeString(out_shape)
            << (overlapping ? " overlapping" : "") << " rows " << ShapeString(rows) << " cols " << ShapeString(cols);
        return out.str();
    }
};

Tensor int64_tensor(const std::vector<int64_t> &values, std::vector<int64_t> shape = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
    return Tensor::FromVector(DataType::kInt64, shape, values);
}

// A sequence as FractionalAvgPool draws it (TF's generator, philox.h).
std::vector<int64_t> generated(int in, int out, bool pseudo_random, int64_t seed) {
    internal::GuardedPhiloxRandom generator;
    generator.Init(seed, 17);
    return internal::GeneratePoolingSequence(in, out, &generator, pseudo_random);
}

// Data of `dtype`: uniform in [-1, 1] for floats, integers in [-1000, 1000].
std::vector<double> data(int64_t n, uint32_t seed, DataType dtype) {
    const bool integer = dtype == DataType::kInt32 || dtype == DataType::kInt64;
    return random_values(n, seed, dtype, integer ? -1000.0 : -1.0, integer ? 1000.0 : 1.0);
}

struct Outcome {
    Status status;
    int64_t mismatches = 0;  // elements != the reference cast to T
    std::string first_mismatch;
};

// Runs one case through the public API (forcing `variant` unless empty) and
// compares every element with the reference's float64 value cast to T.
Outcome run_case(const Case &k, DataType dtype, const std::string &variant, uint32_t seed) {
    const std::vector<double> dy = data(NumElements(k.out_shape), seed, dtype);
    const std::vector<double> want =
        reference::fractional_avg_pool_grad(k.in_shape, dy, k.out_shape, k.rows, k.cols, k.overlapping);
    Tensor expected(dtype, k.in_shape);
    for (int64_t i = 0; i < expected.num_elements(); i++) expected.store(i, want[i]);  // TF's static_cast<T>

    RunOptions options;
    options.variant = variant;
    Tensor output;
    Outcome o;
    o.status = FractionalAvgPoolGrad::Compute(int64_tensor(k.in_shape), make_tensor(dtype, k.out_shape, dy),
                                              int64_tensor(k.rows, k.rows_shape), int64_tensor(k.cols, k.cols_shape),
                                              &output, FractionalAvgPoolGrad::Overlapping(k.overlapping), options);
    if (!o.status.ok()) return o;
    for (int64_t i = 0; i < expected.num_elements(); i++) {
        if (output.load(i) == expected.load(i)) continue;
        if (o.mismatches++ == 0) {
            std::ostringstream out;
            out << "element " << i << ": got " << output.load(i) << ", want " << expected.load(i);
            o.first_mismatch = out.str();
        }
    }
    return o;
}

// Sequences FractionalAvgPool would generate, over odd and tiny sizes (H or
// W of 1, 2, 3), C of 1 to 64, batches of 1 to 3, both generators and both
// modes. (Empty tensors do not exist here: TF rejects them.)
std::vector<Case> generated_cases() {
    struct Shape {
        int64_t N, H, W, C, OH, OW;
    };
    const Shape shapes[] = {{1, 1, 1, 1, 1, 1},    {2, 5, 7, 3, 3, 4},     {1, 7, 13, 1, 4, 7},
                            {3, 10, 10, 17, 7, 7}, {2, 20, 30, 33, 14, 21}, {1, 2, 3, 8, 1, 2},
                            {2, 1, 9, 5, 1, 6},    {1, 9, 1, 16, 6, 1},     {1, 17, 23, 2, 5, 12},
                            {1, 56, 56, 64, 39, 39}, {2, 12, 12, 24, 12, 12}, {1, 6, 6, 1, 3, 3}};
    std::vector<Case> cases;
    int seed = 1;
    for (const Shape &s : shapes)
        for (bool overlapping : {false, true})
            for (bool pseudo_random : {false, true}) {
                Case k;
                k.name = std::string(pseudo_random ? "pseudo-random" : "random");
                k.in_shape = {s.N, s.H, s.W, s.C};
                k.out_shape = {s.N, s.OH, s.OW, s.C};
                k.rows = generated(static_cast<int>(s.H), static_cast<int>(s.OH), pseudo_random, seed++);
                k.cols = generated(static_cast<int>(s.W), static_cast<int>(s.OW), pseudo_random, seed++);
                k.overlapping = overlapping;
                cases.push_back(k);
            }
    return cases;
}

// docs/tf-ops.md section 11 row 67 and the policy of row 66: sequences TF
// accepts although no generator makes them, and an out_backprop smaller than
// the original shape.
std::vector<Case> arbitrary_cases() {
    std::vector<Case> cases;
    for (bool overlapping : {false, true}) {
        // Decreasing and beyond the input: empty and clamped cells. (Every
        // cell's start and clamped end stay >= 0, else TF rejects the call.)
        cases.push_back({"decreasing", {2, 4, 5, 3}, {2, 3, 2, 3}, {3, 1, 2, 9}, {0, 2, 5}, overlapping});
        cases.push_back({"beyond", {1, 4, 6, 5}, {1, 3, 3, 5}, {2, 100, 1, 7}, {0, 9, 2, 1000000007}, overlapping});
        // Repeated values: empty cells in non-overlapping mode.
        cases.push_back({"repeated", {2, 6, 6, 4}, {2, 4, 3, 4}, {0, 1, 1, 3, 6}, {0, 3, 3, 6}, overlapping});
        // Cells covering the whole input, and overlapping out-of-order cells:
        // a pixel covered by many, non-consecutive cells.
        cases.push_back({"everywhere", {1, 5, 5, 9}, {1, 4, 4, 9}, {0, 50, 1, 50, 3}, {1, 4, 1, 2, 9}, overlapping});
        cases.push_back(
            {"zigzag", {2, 8, 7, 17}, {2, 6, 5, 17}, {0, 5, 1, 6, 2, 7, 8}, {4, 1, 3, 1, 6, 2}, overlapping});
        // Extra values are ignored; the sequence tensors may have any rank.
        cases.push_back({"extra values", {1, 4, 4, 2}, {1, 2, 2, 2}, {0, 2, 4, 9}, {0, 1, 3, 7, 7, 7}, overlapping,
                         {2, 2}, {3, 2}});
        // Row 66 policy: a smaller batch or depth leaves the rest zero (TF
        // 2.21: orig [2, 2, 2, 3], out [1, 2, 1, 2] = 1..4 gives
        // 0.5 1 0 0.5 1 0 1.5 2 0 1.5 2 0, then zeros).
        cases.push_back({"smaller batch and depth", {2, 2, 2, 3}, {1, 2, 1, 2}, {0, 1, 2}, {0, 2}, overlapping});
        cases.push_back({"smaller depth", {3, 5, 5, 20}, {3, 3, 3, 17}, {0, 2, 3, 5}, {0, 1, 3, 5}, overlapping});
        cases.push_back({"smaller batch", {4, 5, 5, 16}, {2, 3, 3, 16}, {0, 2, 3, 5}, {0, 1, 3, 5}, overlapping});
    }
    return cases;
}

bool fits(const VariantInfo &v, const Case &k) {
    const int overlapping = v.structure.at("overlapping");
    return overlapping == 0 || overlapping == (k.overlapping ? 2 : 1);
}

}  // namespace

TEST_CASE("FractionalAvgPoolGrad: every CPU variant matches the reference bit for bit", "[fractional_avg_pool_grad][variants]") {
    const auto variants = runnable_cpu_variants(kOp);
    REQUIRE(!variants.empty());
    std::vector<Case> cases = generated_cases();
    for (const Case &k : arbitrary_cases()) cases.push_back(k);
    int checked = 0;
    for (const VariantInfo &v : variants) {
        const DataType dtype = dtype_of(v.dtype);
        uint32_t seed = 1;
        for (const Case &k : cases) {
            if (!fits(v, k)) continue;
            Outcome o = run_case(k, dtype, v.name, seed += 2);
            INFO(v.name << " " << k.describe() << " " << o.status.ToString() << " " << o.first_mismatch);
            REQUIRE(o.status.ok());
            CHECK(o.mismatches == 0);
            checked++;
        }
    }
    INFO("cases checked: " << checked);
    CHECK(checked >= 4 * 66);
}

// The float64 operations of divide_by_reciprocal, in the kernel's order
// (generators/fractional_avg_pool_grad_generator.cpp), compiled without
// contraction into FMAs (-ffp-contract=off, tests/CMakeLists.txt) as
// strict_float compiles the kernel's.
double divide_by_reciprocal(double value, double size) {
    const double reciprocal = 1.0 / size;
    const double c = reciprocal * 134217729.0;
    const double high = c - (c - reciprocal);
    const double low = (1.0 - size * high) / size;
    return std::isfinite(value) ? value * high + value * low : value * high;
}

TEST_CASE("FractionalAvgPoolGrad: value x (1 / size) in two parts is TF's division for float32 values",
          "[fractional_avg_pool_grad]") {
    // Every float32 significand (scaling by a power of two scales both sides
    // exactly) over the cell sizes of generated sequences and beyond, then
    // random float32 bit patterns (subnormals, both signs) with random sizes
    // below 2^22, the kernel's bound. The bare product value x (1 / size)
    // misses on about a quarter of these: the second part is what makes it
    // exact.
    int64_t bare_misses = 0, checked = 0;
    for (int size = 1; size <= 12; size++) {
        for (int64_t m = int64_t{1} << 23; m < (int64_t{1} << 24); m++) {
            const double value = static_cast<double>(m), quotient = value / size;
            if (divide_by_reciprocal(value, size) != quotient) FAIL("size " << size << " value " << m);
            bare_misses += value * (1.0 / size) != quotient;
            checked++;
        }
    }
    CHECK(bare_misses > checked / 10);
    uint64_t state = 88172645463325252ull;
    auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    for (int i = 0; i < 20'000'000; i++) {
        const uint64_t bits = next();
        float f;
        const uint32_t pattern = static_cast<uint32_t>(bits);
        std::memcpy(&f, &pattern, sizeof f);
        const double size = static_cast<double>((1 + (bits >> 32) % ((bits >> 63) ? 64 : (1 << 22) - 1)));
        const double value = f, quotient = value / size, got = divide_by_reciprocal(value, size);
        if (std::isnan(value)) {
            CHECK(std::isnan(got));
        } else if (got != quotient) {
            FAIL("size " << size << " value " << value);
        }
    }
}

TEST_CASE("FractionalAvgPoolGrad: the spec's worked example (20 5 16 3 7, sequence [0, 2, 4] and [0, 2, 5])",
          "[fractional_avg_pool_grad]") {
    // Gradients for out_backprop [1, 1] on a [1, 1, 5, 1] input (docs/tf-ops.md
    // section 8): overlapping [1/3, 1/3, 2/3, 1/3, 1/3], non-overlapping
    // [1/2, 1/2, 1/2, 1/2, 0] (TF 2.21 gives the former), and the generated
    // sequence [0, 2, 5].
    struct Example {
        std::vector<int64_t> cols;
        bool overlapping;
        std::vector<double> gradient;
        std::vector<double> forward;  // <20 5 16 3 7, gradient of one-hot k> = forward output k
    };
    const std::vector<Example> examples = {
        {{0, 2, 4}, true, {1.0 / 3, 1.0 / 3, 2.0 / 3, 1.0 / 3, 1.0 / 3}, {41.0 / 3, 26.0 / 3}},
        {{0, 2, 4}, false, {0.5, 0.5, 0.5, 0.5, 0}, {25.0 / 2, 19.0 / 2}},
        {{0, 2, 5}, true, {1.0 / 3, 1.0 / 3, 2.0 / 3, 1.0 / 3, 1.0 / 3}, {41.0 / 3, 26.0 / 3}},
        {{0, 2, 5}, false, {0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3}, {25.0 / 2, 26.0 / 3}},
    };
    const std::vector<double> x = {20, 5, 16, 3, 7};
    for (const Example &e : examples) {
        for (DataType dtype : {DataType::kDouble, DataType::kFloat}) {
            INFO(ShapeString(e.cols) << (e.overlapping ? " overlapping " : " ") << DataTypeName(dtype));
            Tensor dx;
            REQUIRE(FractionalAvgPoolGrad::Compute(int64_tensor({1, 1, 5, 1}), make_tensor(dtype, {1, 1, 2, 1}, {1, 1}),
                                                   int64_tensor({0, 1}), int64_tensor(e.cols), &dx,
                                                   FractionalAvgPoolGrad::Overlapping(e.overlapping))
                        .ok());
            for (int i = 0; i < 5; i++) CHECK(dx.load(i) == Approx(e.gradient[i]).epsilon(1e-7));
            // The forward values through the adjoint, one cell at a time.
            for (int cell = 0; cell < 2; cell++) {
                std::vector<double> one_hot(2, 0.0);
                one_hot[cell] = 1;
                REQUIRE(FractionalAvgPoolGrad::Compute(int64_tensor({1, 1, 5, 1}),
                                                       make_tensor(DataType::kDouble, {1, 1, 2, 1}, one_hot),
                                                       int64_tensor({0, 1}), int64_tensor(e.cols), &dx,
                                                       FractionalAvgPoolGrad::Overlapping(e.overlapping))
                            .ok());
                double dot = 0;
                for (int i = 0; i < 5; i++) dot += x[i] * dx.load(i);
                CHECK(dot == Approx(e.forward[cell]).epsilon(1e-14));
            }
        }
    }
}

namespace {

// AvgPoolGrad with VALID windows of ksize x ksize_cols and the given strides:
// each output cell's value divided by the window size, added to the window.
// (TF's fractional_avg_pool_op_test compares FractionalAvgPoolGrad with it.)
std::vector<double> avg_pool_grad(const std::vector<int64_t> &in_shape, const std::vector<double> &dy,
                                  const std::vector<int64_t> &out_shape, int64_t ksize_rows, int64_t ksize_cols,
                                  int64_t stride_rows, int64_t stride_cols) {
    const int64_t H = in_shape[1], W = in_shape[2], C = in_shape[3];
    const int64_t OH = out_shape[1], OW = out_shape[2];
    std::vector<double> dx(NumElements(in_shape), 0.0);
    for (int64_t b = 0; b < in_shape[0]; b++)
        for (int64_t r = 0; r < OH; r++)
            for (int64_t c = 0; c < OW; c++)
                for (int64_t i = 0; i < ksize_rows; i++)
                    for (int64_t j = 0; j < ksize_cols; j++)
                        for (int64_t d = 0; d < C; d++)
                            dx[((b * H + r * stride_rows + i) * W + c * stride_cols + j) * C + d] +=
                                dy[((b * OH + r) * OW + c) * C + d] / static_cast<double>(ksize_rows * ksize_cols);
    return dx;
}

}  // namespace

TEST_CASE("FractionalAvgPoolGrad: TF's direct grad tests: uniform sequences equal AvgPoolGrad (spec 13.5)",
          "[fractional_avg_pool_grad]") {
    int checked = 0;
    for (bool overlapping : {false, true})
        for (int64_t wr : {2, 5})
            for (int64_t wc : {2, 4})
                for (int64_t batch : {1, 3})
                    for (int64_t channels : {1, 2}) {
                        // Non-overlapping: rows = wr * 5, sequence 0, wr, 2 wr, ...
                        // Overlapping: rows = (wr - 1) * 5 + 1, ksize wr, stride
                        // wr - 1, sequence 0, wr - 1, ... with the last entry + 1.
                        const int64_t sr = overlapping ? wr - 1 : wr, sc = overlapping ? wc - 1 : wc;
                        const int64_t H = sr * 5 + (overlapping ? 1 : 0), W = sc * 7 + (overlapping ? 1 : 0);
                        std::vector<int64_t> rows, cols;
                        for (int64_t i = 0; i <= 5; i++) rows.push_back(i * sr);
                        for (int64_t i = 0; i <= 7; i++) cols.push_back(i * sc);
                        if (overlapping) {
                            rows.back() += 1;
                            cols.back() += 1;
                        }
                        const std::vector<int64_t> in_shape{batch, H, W, channels}, out_shape{batch, 5, 7, channels};
                        const auto dy = random_values(NumElements(out_shape), 341261004, DataType::kFloat, 0, 1000);
                        const auto want = avg_pool_grad(in_shape, dy, out_shape, wr, wc, sr, sc);
                        Tensor dx;
                        REQUIRE(FractionalAvgPoolGrad::Compute(int64_tensor(in_shape),
                                                               make_tensor(DataType::kFloat, out_shape, dy),
                                                               int64_tensor(rows), int64_tensor(cols), &dx,
                                                               FractionalAvgPoolGrad::Overlapping(overlapping))
                                    .ok());
                        INFO("overlapping " << overlapping << " wr " << wr << " wc " << wc << " batch " << batch
                                            << " channels " << channels);
                        CHECK(normwise_error(to_doubles(dx), want) <= tolerance(DataType::kFloat));
                        checked++;
                    }
    CHECK(checked == 32);
}

TEST_CASE("FractionalAvgPoolGrad: integer gradients truncate toward zero after the float64 sum (TF 2.21)",
          "[fractional_avg_pool_grad]") {
    // One row of 3 pixels, cells [0, 2, 3], out_backprop [-7, 5]:
    //   non-overlapping: -7/2, -7/2, 5       -> -3, -3, 5
    //   overlapping:     -7/3, -7/3, -7/3+5  -> -2, -2, 2
    for (DataType dtype : {DataType::kInt32, DataType::kInt64}) {
        for (bool overlapping : {false, true}) {
            Tensor dx;
            REQUIRE(FractionalAvgPoolGrad::Compute(int64_tensor({1, 1, 3, 1}),
                                                   make_tensor(dtype, {1, 1, 2, 1}, {-7, 5}), int64_tensor({0, 1}),
                                                   int64_tensor({0, 2, 3}), &dx,
                                                   FractionalAvgPoolGrad::Overlapping(overlapping))
                        .ok());
            const std::vector<double> want =
                overlapping ? std::vector<double>{-2, -2, 2} : std::vector<double>{-3, -3, 5};
            INFO(DataTypeName(dtype) << " overlapping " << overlapping);
            CHECK(to_doubles(dx) == want);
        }
    }
    // Thirds that add up to 1.0 in float64 (TF's order) give 1, not 0: one
    // row of 3 pixels, cells [0, 2, 0, 2, 0, 2] overlapping: cells 0, 2 and 4
    // cover all 3 pixels, cells 1 and 3 are empty; dy 1 on the full cells.
    Tensor dx;
    REQUIRE(FractionalAvgPoolGrad::Compute(int64_tensor({1, 1, 3, 1}),
                                           make_tensor(DataType::kInt32, {1, 1, 5, 1}, {1, 0, 1, 0, 1}),
                                           int64_tensor({0, 1}), int64_tensor({0, 2, 0, 2, 0, 2}), &dx,
                                           FractionalAvgPoolGrad::Overlapping(true))
                .ok());
    CHECK(to_doubles(dx) == std::vector<double>{1, 1, 1});
}

TEST_CASE("FractionalAvgPoolGrad: adjoint identity with the forward reference, float64", "[fractional_avg_pool_grad]") {
    // <FractionalAvgPool(x), dy> == <x, FractionalAvgPoolGrad(dy)> for the
    // same sequences; the forward is an independent gather loop. Only
    // sequences whose cells are all non-empty: an empty cell has no forward
    // value (TF divides by a zero count).
    struct Adjoint {
        std::vector<int64_t> in_shape, rows, cols;
    };
    const std::vector<Adjoint> cases = {
        {{2, 9, 7, 5}, generated(9, 6, false, 3), generated(7, 5, true, 4)},
        {{1, 30, 21, 4}, generated(30, 21, true, 5), generated(21, 14, false, 6)},
        {{3, 6, 6, 3}, {0, 2, 4, 6}, {0, 3, 6}},
        {{1, 8, 7, 2}, {0, 4, 5, 8}, {0, 1, 6, 7}},  // uneven cells: 4, 1, 3 rows; 1, 5, 1 columns
    };
    for (const Adjoint &a : cases)
        for (bool overlapping : {false, true}) {
            const int64_t OH = static_cast<int64_t>(a.rows.size()) - 1, OW = static_cast<int64_t>(a.cols.size()) - 1;
            const std::vector<int64_t> out_shape{a.in_shape[0], OH, OW, a.in_shape[3]};
            const auto x = random_values(NumElements(a.in_shape), 11, DataType::kDouble);
            const auto dy = random_values(NumElements(out_shape), 12, DataType::kDouble);
            const auto y = reference::fractional_avg_pool(x, a.in_shape, a.rows, a.cols, overlapping);
            Tensor dx;
            REQUIRE(FractionalAvgPoolGrad::Compute(int64_tensor(a.in_shape),
                                                   make_tensor(DataType::kDouble, out_shape, dy), int64_tensor(a.rows),
                                                   int64_tensor(a.cols), &dx,
                                                   FractionalAvgPoolGrad::Overlapping(overlapping))
                        .ok());
            double lhs = 0, rhs = 0;
            for (size_t i = 0; i < y.size(); i++) lhs += y[i] * dy[i];
            for (size_t i = 0; i < x.size(); i++) rhs += x[i] * dx.load(i);
            INFO(ShapeString(a.in_shape) << " rows " << ShapeString(a.rows) << " cols " << ShapeString(a.cols)
                                         << " overlapping " << overlapping);
            CHECK(std::fabs(lhs - rhs) <= 1e-12 * std::max(1.0, std::fabs(lhs)));
        }
}

namespace {

// A valid base call that each bad-input row changes in one place.
struct BadCall {
    Tensor orig = int64_tensor({2, 2, 2, 2});
    Tensor out_backprop = make_tensor(DataType::kFloat, {1, 2, 2, 2}, std::vector<double>(8, 1.0));
    Tensor rows = int64_tensor({0, 1, 2});
    Tensor cols = int64_tensor({0, 1, 2});
    bool overlapping = false;
    std::vector<int64_t> output_shape = {2, 2, 2, 2};

    DataType dtype() const { return out_backprop.dtype(); }
    Status run(TensorRef output) const {
        return FractionalAvgPoolGrad::Compute(orig, out_backprop, rows, cols, output,
                                              FractionalAvgPoolGrad::Overlapping(overlapping));
    }
};

}  // namespace

TEST_CASE("FractionalAvgPoolGrad: bad inputs get TF's error kind and text and leave the output untouched",
          "[fractional_avg_pool_grad][errors]") {
    using C = StatusCode;
    // All texts as TF 2.21 prints them (sic: "be1-dimensional", "got:0").
    SECTION("row 57: orig_input_tensor_shape not 1-D with 4 elements") {
        BadCall c;
        c.orig = int64_tensor({2, 2, 2});
        expect_error(c, C::kInvalidArgument, "original input tensor shape must be1-dimensional and 4 elements");
        c.orig = int64_tensor({2, 2, 2, 2}, {2, 2});
        expect_error(c, C::kInvalidArgument, "original input tensor shape must be1-dimensional and 4 elements");
    }
    SECTION("row 58: out_backprop rank != 4") {
        BadCall c;
        c.out_backprop = make_tensor(DataType::kFloat, {}, {1.0});
        expect_error(c, C::kInvalidArgument, "out_backprop must be 4-dimensional");
        c.out_backprop = make_tensor(DataType::kFloat, {2, 2, 2}, std::vector<double>(8, 1.0));
        expect_error(c, C::kInvalidArgument, "out_backprop must be 4-dimensional");
    }
    SECTION("row 59: out_backprop with a zero dimension (CVE-2022-35963)") {
        BadCall c;
        c.out_backprop = Tensor(DataType::kFloat, {0, 0, 0, 0});
        expect_error(c, C::kInvalidArgument, "out_backprop must be positive for all dimension, got:0");
        c.out_backprop = Tensor(DataType::kFloat, {1, 2, 0, 1});
        expect_error(c, C::kInvalidArgument, "out_backprop must be positive for all dimension, got:0");
    }
    SECTION("row 60: sequences too short (TFSA-2021-067 repro, CVE-2021-29578)") {
        BadCall c;
        c.orig = int64_tensor({1, 3, 2, 3});
        c.out_backprop = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1.0});
        c.rows = int64_tensor({1});
        c.cols = int64_tensor({1});
        c.output_shape = {1, 3, 2, 3};
        expect_error(c, C::kInvalidArgument,
                     "Given out_backprop shape [1,1,1,1], row_seq_tensor must have at least 2 elements, but got 1");
        c.rows = int64_tensor({0, 3});
        c.out_backprop = make_tensor(DataType::kFloat, {1, 1, 2, 1}, {1.0, 1.0});
        c.cols = int64_tensor({0, 1});
        expect_error(c, C::kInvalidArgument,
                     "Given out_backprop shape [1,1,2,1], col_seq_tensor must have at least 3 elements, but got 2");
    }
    SECTION("row 61: a zero dimension in orig_input_tensor_shape (CVE-2021-37651 repro)") {
        BadCall c;
        c.orig = int64_tensor({0, 1, 2, 3});
        c.out_backprop = make_tensor(DataType::kFloat, {1, 2, 2, 1}, std::vector<double>(4, 1.0));
        c.rows = int64_tensor({0, 0, 0, 0, 0});
        c.cols = int64_tensor({-2, 0, 0, 2, 0});
        expect_error(c, C::kInvalidArgument, "Batch dimension of input must not be 0");
        c.orig = int64_tensor({1, 0, 2, 3});
        expect_error(c, C::kInvalidArgument, "Rows dimension of input must not be 0");
        c.orig = int64_tensor({1, 1, 0, 3});
        expect_error(c, C::kInvalidArgument, "Columns dimension of input must not be 0");
        c.orig = int64_tensor({1, 1, 2, 0});
        expect_error(c, C::kInvalidArgument, "Depth dimension of input must not be 0");
    }
    SECTION("row 62: negative or overflowing orig_input_tensor_shape (CVE-2022-35963)") {
        BadCall c;
        c.orig = int64_tensor(std::vector<int64_t>(4, -1879048192));
        expect_error(c, C::kInvalidArgument, "Expected a non-negative size, got -1879048192");
        c.orig = int64_tensor({1, -2, 2, 3});
        expect_error(c, C::kInvalidArgument, "Expected a non-negative size, got -2");
        c.orig = int64_tensor(std::vector<int64_t>(4, 1879048192));
        expect_error(c, C::kInvalidArgument,
                     "Encountered overflow when multiplying 3530822107858468864 with 1879048192, result: -1");
    }
    SECTION("rows 63-64: negative sequence values (CVE-2022-21730 repros)") {
        BadCall c;
        c.out_backprop = make_tensor(DataType::kInt32, {1, 2, 3, 2}, std::vector<double>(12, 1.0));
        c.overlapping = true;
        c.rows = int64_tensor({-10, 1, 2, 3});
        c.cols = int64_tensor({1, 2, 3, 4});
        // Eigen prints the whole sequence, each value right-aligned to the widest.
        expect_error(c, C::kInvalidArgument, "Row sequence tensor values must not be negative, got -10   1   2   3");
        c.rows = int64_tensor({1, 2, 3, 4});
        c.cols = int64_tensor({1, 2, -3, 4});
        expect_error(c, C::kInvalidArgument, "Column sequence tensor values must not be negative, got  1  2 -3  4");
        c.cols = int64_tensor({1, 2, -3, 4, -123456});  // extra values are printed too
        expect_error(c, C::kInvalidArgument,
                     "Column sequence tensor values must not be negative, got       1       2      -3       4 -123456");
    }
    SECTION("rows 63-64: which error TF reports first (its loops check row r, then every column)") {
        BadCall c;
        c.out_backprop = make_tensor(DataType::kFloat, {1, 2, 3, 2}, std::vector<double>(12, 1.0));
        c.overlapping = true;
        c.cols = int64_tensor({1, 2, -3, 4});
        // Row 0 ends at -1: the row error comes before the columns'.
        c.rows = int64_tensor({0, -1, 2, 3});
        expect_error(c, C::kInvalidArgument, "Row sequence tensor values must not be negative, got  0 -1  2  3");
        // Row 0 is fine, row 1 ends at -2: the columns of row 0 fail first.
        c.rows = int64_tensor({0, 1, -2, 3});
        expect_error(c, C::kInvalidArgument, "Column sequence tensor values must not be negative, got  1  2 -3  4");
        c.cols = int64_tensor({1, 2, 3, 4});
        expect_error(c, C::kInvalidArgument, "Row sequence tensor values must not be negative, got  0  1 -2  3");
    }
    SECTION("row 65: non-overlapping with row[r+1] == 0 (the clamped end is -1)") {
        BadCall c;
        c.orig = int64_tensor({1, 3, 3, 1});
        c.out_backprop = make_tensor(DataType::kFloat, {1, 2, 2, 1}, std::vector<double>(4, 1.0));
        c.rows = int64_tensor({0, 0, 3});
        c.cols = int64_tensor({0, 1, 3});
        c.output_shape = {1, 3, 3, 1};
        expect_error(c, C::kInvalidArgument, "Row sequence tensor values must not be negative, got 0 0 3");
        c.overlapping = true;  // the same sequence is fine when the end is row[r+1]
        Tensor output;
        CHECK(FractionalAvgPoolGrad::Compute(c.orig, c.out_backprop, c.rows, c.cols, &output,
                                             FractionalAvgPoolGrad::Overlapping(true))
                  .ok());
    }
    SECTION("row 66 (policy): out_backprop batch or depth larger than the original shape") {
        BadCall c;
        c.out_backprop = make_tensor(DataType::kFloat, {3, 2, 2, 2}, std::vector<double>(24, 1.0));
        expect_error(c, C::kInvalidArgument, "out_backprop batch/depth must match orig_input_tensor_shape");
        c.out_backprop = make_tensor(DataType::kFloat, {1, 2, 2, 3}, std::vector<double>(12, 1.0));
        expect_error(c, C::kInvalidArgument, "out_backprop batch/depth must match orig_input_tensor_shape");
        // Sequence errors come first: TF reports them before it would write
        // out of bounds.
        c.rows = int64_tensor({-1, 1, 2});
        expect_error(c, C::kInvalidArgument, "Row sequence tensor values must not be negative, got -1  1  2");
    }
    SECTION("row 68: dtype outside the op's list, int32 shape or sequences") {
        BadCall c;
        c.out_backprop = make_tensor(DataType::kHalf, {1, 2, 2, 2}, std::vector<double>(8, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of half is not in the list of allowed values: float, double, int32, int64");
        BadCall d;
        d.orig = int32_vector({2, 2, 2, 2});
        expect_error(d, C::kInvalidArgument,
                     "cannot compute FractionalAvgPoolGrad as input #0(zero-based) was expected to be a int64 tensor "
                     "but is a int32 tensor");
        BadCall e;
        e.cols = int32_vector({0, 1, 2});
        expect_error(e, C::kInvalidArgument,
                     "cannot compute FractionalAvgPoolGrad as input #3(zero-based) was expected to be a int64 tensor "
                     "but is a int32 tensor");
    }
    SECTION("a caller-provided output of the wrong shape or dtype") {
        BadCall c;
        c.output_shape = {2, 2, 2, 3};
        expect_error(c, C::kInvalidArgument,
                     "output has shape [2,2,2,3], but orig_input_tensor_shape is [2,2,2,2]");
    }
}

TEST_CASE("FractionalAvgPoolGrad: row 66 policy and row 67 match TF 2.21's values", "[fractional_avg_pool_grad]") {
    struct Golden {
        std::vector<int64_t> orig, out_shape, rows, cols;
        std::vector<double> dy;
        bool overlapping;
        std::vector<double> want;
    };
    const std::vector<Golden> goldens = {
        {{2, 2, 2, 3}, {1, 2, 1, 2}, {0, 1, 2}, {0, 2}, {1, 2, 3, 4}, false,
         {0.5, 1, 0, 0.5, 1, 0, 1.5, 2, 0, 1.5, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
        {{1, 4, 1, 1}, {1, 3, 1, 1}, {3, 1, 0, 9}, {0, 1}, {1, 2, 3}, true, {0.75, 0.75, 0.75, 0.75}},
        {{1, 4, 1, 1}, {1, 3, 1, 1}, {2, 100, 1, 7}, {0, 1}, {1, 2, 3}, false, {0, 1, 1.5, 1.5}},
    };
    for (const Golden &g : goldens) {
        Tensor dx;
        REQUIRE(FractionalAvgPoolGrad::Compute(int64_tensor(g.orig), make_tensor(DataType::kFloat, g.out_shape, g.dy),
                                               int64_tensor(g.rows), int64_tensor(g.cols), &dx,
                                               FractionalAvgPoolGrad::Overlapping(g.overlapping))
                    .ok());
        INFO("rows " << ShapeString(g.rows));
        CHECK(to_doubles(dx) == g.want);
    }
}

TEST_CASE("FractionalAvgPoolGrad: the by-name layer runs and describes the call", "[fractional_avg_pool_grad]") {
    const OpSpec *spec = FindOpSpec(kOp);
    REQUIRE(spec);
    CHECK(spec->inputs == std::vector<std::string>{"orig_input_tensor_shape", "out_backprop", "row_pooling_sequence",
                                                   "col_pooling_sequence"});
    CHECK(spec->input_types == std::vector<std::string>{"int64", "T", "int64", "int64"});
    CHECK(spec->outputs == std::vector<std::string>{"output"});
    Tensor orig = int64_tensor({1, 1, 5, 1}), dy = make_tensor(DataType::kDouble, {1, 1, 2, 1}, {1, 1});
    Tensor rows = int64_tensor({0, 1}), cols = int64_tensor({0, 2, 4});
    OpCall call{kOp, {{"orig_input_tensor_shape", orig}, {"out_backprop", dy}, {"row_pooling_sequence", rows},
                      {"col_pooling_sequence", cols}},
                {{"overlapping", true}}};
    std::vector<Tensor> outputs;
    REQUIRE(RunOp(call, &outputs).ok());
    REQUIRE(outputs.size() == 1);
    CHECK(outputs[0].load(2) == Approx(2.0 / 3));
    // Reuse of the caller's output.
    outputs[0].store(2, 9.0);
    REQUIRE(RunOp(call, &outputs).ok());
    CHECK(outputs[0].load(2) == Approx(2.0 / 3));
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.structure == std::map<std::string, int>{{"overlapping", 2}});
    CHECK(info.shape == std::map<std::string, int64_t>{{"N", 1}, {"H", 1}, {"W", 5}, {"C", 1}, {"OH", 1}, {"OW", 2}});
    CHECK(info.dtype == "float64");
    call.attrs.clear();  // overlapping defaults to false
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.structure.at("overlapping") == 1);
}

TEST_CASE("FractionalAvgPoolGrad: concurrent calls give the same results", "[fractional_avg_pool_grad]") {
    const Case k{"concurrent", {2, 21, 17, 24}, {2, 14, 12, 24}, generated(21, 14, true, 1),
                 generated(17, 12, false, 2), true};
    std::vector<std::thread> threads;
    std::vector<int64_t> mismatches(8, -1);
    for (int t = 0; t < 8; t++) {
        threads.emplace_back([&, t] {
            Outcome o = run_case(k, t % 2 ? DataType::kFloat : DataType::kDouble, "", 100 + t);
            mismatches[t] = o.status.ok() ? o.mismatches : -1;
        });
    }
    for (auto &th : threads) th.join();
    for (int t = 0; t < 8; t++) CHECK(mismatches[t] == 0);
}
