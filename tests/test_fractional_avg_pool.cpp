// FractionalAvgPool: TF's Philox4x32-10 (Random123 known answers), TF's pooling
// sequences for known seeds, every compiled CPU variant against the plain-loop
// reference in TF's arithmetic (bit for bit), TF's forward test shapes
// (docs/tf-ops.md section 13.5), the worked example of section 8, every
// bad-input row 50-56 and 68, the seed policy, the adjoint identity with the
// gradient reference, the by-name layer.
//
// Values marked "TF 2.21" were produced by tf.raw_ops.FractionalAvgPool of
// TensorFlow 2.21.0 (CPU) with deterministic=True and the seeds shown.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "bad_call.h"
#include "philox.h"
#include "reference/fractional_avg_pool.h"
#include "reference/fractional_avg_pool_grad.h"
#include "test_util.h"

using namespace gradtune;
using namespace gradtune::testing;
using internal::PhiloxRandom;

namespace {

constexpr const char *kOp = "FractionalAvgPool";

std::vector<int64_t> int64_values(const Tensor &t) {
    return std::vector<int64_t>(t.as<int64_t>(), t.as<int64_t>() + t.num_elements());
}

// The reference arithmetic that reproduces TF's for T.
reference::PoolArithmetic arithmetic_of(DataType dtype) {
    switch (dtype) {
    case DataType::kFloat: return reference::PoolArithmetic::kFloat32;
    case DataType::kDouble: return reference::PoolArithmetic::kFloat64;
    default: return reference::PoolArithmetic::kInteger;
    }
}

}  // namespace

TEST_CASE("FractionalAvgPool: Philox4x32-10 reproduces the Random123 known answers", "[fractional_avg_pool][philox]") {
    using Block = PhiloxRandom::Block;
    CHECK(PhiloxRandom::Compute({0, 0, 0, 0}, {0, 0}) == Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
    CHECK(PhiloxRandom::Compute({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
          Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
    CHECK(PhiloxRandom::Compute({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
          Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("FractionalAvgPool: Philox counters, seeds and samples follow TF's generator",
          "[fractional_avg_pool][philox]") {
    using Block = PhiloxRandom::Block;
    // TF's PhiloxRandom(seed, seed2): key = seed halves, counter = (0, 0, seed2 halves).
    PhiloxRandom seeded(0x1122334455667788ull, 0x99aabbccddeeff00ull);
    CHECK(seeded.key() == PhiloxRandom::Key{0x55667788, 0x11223344});
    CHECK(seeded.counter() == Block{0, 0, 0xddeeff00, 0x99aabbcc});
    // operator() returns the block of the current counter, then steps it by
    // one with a 128-bit carry.
    PhiloxRandom g(Block{0xffffffff, 0xffffffff, 0xffffffff, 7}, {1, 2});
    CHECK(g() == PhiloxRandom::Compute({0xffffffff, 0xffffffff, 0xffffffff, 7}, {1, 2}));
    CHECK(g.counter() == Block{0, 0, 0, 8});
    // Skip adds a 64-bit count to the low half and carries into the high half.
    PhiloxRandom s(Block{0xfffffffe, 0, 0, 0}, {0, 0});
    s.Skip((uint64_t{2} << 32) + 3);
    CHECK(s.counter() == Block{1, 3, 0, 0});
    PhiloxRandom t(Block{0xffffffff, 0xffffffff, 0xffffffff, 0}, {0, 0});
    t.Skip(1);
    CHECK(t.counter() == Block{0, 0, 0, 1});
    // ReserveSamples32(n) hands out the generator and skips ceil(n / 4) blocks.
    internal::GuardedPhiloxRandom guarded;
    guarded.Init(5, 6);
    PhiloxRandom first = guarded.ReserveSamples32(5);
    PhiloxRandom second = guarded.ReserveSamples32(1);
    CHECK(first.counter() == Block{0, 0, 6, 0});
    CHECK(second.counter() == Block{2, 0, 6, 0});
    // SingleSampleAdapter: the four values of a block in order, then the next block.
    PhiloxRandom source(5, 6), copy(5, 6);
    internal::SingleSampleAdapter single(&source);
    const Block b0 = copy(), b1 = copy();
    for (int i = 0; i < 4; i++) CHECK(single() == b0[i]);
    CHECK(single() == b1[0]);
    // RandDouble: 52 mantissa bits from x0's low 20 bits and x1.
    CHECK(internal::Uint64ToDouble(0, 0) == 0.0);
    CHECK(internal::Uint64ToDouble(0xfff00000, 0) == 0.0);
    CHECK(internal::Uint64ToDouble(0xfffff, 0xffffffff) == 1.0 - std::ldexp(1.0, -52));
    CHECK(internal::Uint64ToDouble(0x80000, 0) == 0.5);
}

namespace {

struct SequenceGolden {
    std::vector<int64_t> shape;
    std::vector<float> ratio;
    bool pseudo_random, overlapping;
    int64_t seed, seed2;
    std::vector<int64_t> rows, cols;
};

// TF 2.21: tf.raw_ops.FractionalAvgPool(value=zeros(shape), pooling_ratio,
// pseudo_random, overlapping, deterministic=True, seed, seed2).
const std::vector<SequenceGolden> &sequence_goldens() {
    static const std::vector<SequenceGolden> goldens = {
        {{1, 20, 20, 1}, {1, 1.42f, 1.42f, 1}, false, false, 7, 11,
         {0, 2, 4, 6, 7, 8, 9, 10, 11, 13, 15, 16, 17, 19, 20}, {0, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 16, 18, 20}},
        {{1, 20, 20, 1}, {1, 1.42f, 1.42f, 1}, true, false, 7, 11,
         {0, 1, 3, 4, 5, 7, 8, 10, 11, 13, 14, 15, 17, 18, 20}, {0, 2, 3, 5, 6, 8, 9, 11, 12, 13, 15, 16, 18, 19, 20}},
        {{1, 112, 112, 1}, {1, 1.414f, 1.414f, 1}, true, true, 7, 11,
         {0,  1,  3,  4,  5,  7,  8,  10, 11, 13, 14, 15, 17, 18,  20,  21,  22,  24,  25,  27,
          28, 30, 31, 32, 34, 35, 37, 38, 39, 41, 42, 44, 45, 47,  48,  49,  51,  52,  54,  55,
          56, 58, 59, 61, 62, 64, 65, 66, 68, 69, 71, 72, 73, 75,  76,  78,  79,  81,  82,  83,
          85, 86, 88, 89, 90, 92, 93, 95, 96, 98, 99, 100, 102, 103, 105, 106, 108, 109, 110, 112},
         {0,  2,  3,  5,  6,  8,  9,  10, 12, 13, 15, 16, 18, 19,  20,  22,  23,  25,  26,  27,
          29, 30, 32, 33, 35, 36, 37, 39, 40, 42, 43, 44, 46, 47,  49,  50,  52,  53,  54,  56,
          57, 59, 60, 61, 63, 64, 66, 67, 69, 70, 71, 73, 74, 76,  77,  79,  80,  81,  83,  84,
          86, 87, 88, 90, 91, 93, 94, 96, 97, 98, 100, 101, 103, 104, 105, 107, 108, 110, 111, 112}},
        {{1, 5, 5, 1}, {1, 1.6f, 1.6f, 1}, false, false, 1, 0, {0, 2, 4, 5}, {0, 1, 3, 5}},
        {{1, 17, 17, 1}, {1, 3.3f, 3.3f, 1}, false, false, -3, 123456789012345, {0, 4, 7, 10, 14, 17},
         {0, 4, 7, 11, 14, 17}},
        {{2, 13, 29, 3}, {1, 1.732f, 1.414f, 1}, true, true, 341261001, 0, {0, 2, 4, 6, 7, 9, 11, 13},
         {0, 1, 3, 4, 6, 7, 8, 10, 11, 13, 14, 16, 17, 19, 20, 22, 23, 24, 26, 27, 29}},
        {{2, 13, 29, 3}, {1, 1.732f, 1.414f, 1}, false, true, 341261001, 0, {0, 2, 4, 6, 8, 9, 11, 13},
         {0, 1, 2, 3, 4, 5, 7, 9, 11, 12, 13, 14, 15, 17, 19, 20, 22, 23, 25, 27, 29}},
        {{1, 20, 20, 1}, {1, 2, 2, 1}, false, false, 5, 6, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20},
         {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}},
        {{1, 20, 20, 1}, {1, 2, 2, 1}, true, false, 5, 6, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20},
         {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}},
        {{1, 50, 10, 1}, {1, 1.0001f, 4.9f, 1}, false, false, 4611686018427387904, -1,
         {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
          26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50},
         {0, 5, 10}},
        {{1, 50, 10, 1}, {1, 1.0001f, 4.9f, 1}, true, false, INT64_MIN, INT64_MAX,
         {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
          25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 47, 48, 49, 50},
         {0, 5, 10}},
    };
    return goldens;
}

}  // namespace

TEST_CASE("FractionalAvgPool: pooling sequences for known seeds are TF's (TF 2.21)", "[fractional_avg_pool]") {
    for (const SequenceGolden &g : sequence_goldens()) {
        INFO(ShapeString(g.shape) << " pseudo_random " << g.pseudo_random << " seeds " << g.seed << ", " << g.seed2);
        Tensor value(DataType::kFloat, g.shape), output, rows, cols;
        auto attrs = FractionalAvgPool::Deterministic(true)
                         .PseudoRandom(g.pseudo_random)
                         .Overlapping(g.overlapping)
                         .Seed(g.seed)
                         .Seed2(g.seed2);
        REQUIRE(FractionalAvgPool::Compute(value, g.ratio, &output, &rows, &cols, attrs).ok());
        CHECK(int64_values(rows) == g.rows);
        CHECK(int64_values(cols) == g.cols);
        CHECK(output.shape() == std::vector<int64_t>{g.shape[0], static_cast<int64_t>(g.rows.size()) - 1,
                                                     static_cast<int64_t>(g.cols.size()) - 1, g.shape[3]});
    }
}

TEST_CASE("FractionalAvgPool: generated sequences have TF's properties for every size", "[fractional_avg_pool]") {
    // length n_out + 1, from 0 to n_in, every step K or K+1 (K = n_in / n_out).
    int checked = 0;
    for (int n_in = 1; n_in <= 70; n_in++)
        for (int n_out = 1; n_out <= n_in; n_out++)
            for (bool pseudo_random : {false, true}) {
                internal::GuardedPhiloxRandom generator;
                generator.Init(n_in * 1000 + n_out, pseudo_random);
                const auto cum = internal::GeneratePoolingSequence(n_in, n_out, &generator, pseudo_random);
                const int64_t k = n_in / n_out;
                bool ok = cum.size() == static_cast<size_t>(n_out + 1) && cum.front() == 0 && cum.back() == n_in;
                for (size_t i = 0; ok && i + 1 < cum.size(); i++) {
                    const int64_t step = cum[i + 1] - cum[i];
                    ok = step == k || step == k + 1;
                }
                INFO("n_in " << n_in << " n_out " << n_out << " pseudo_random " << pseudo_random << " "
                             << ShapeString(cum));
                CHECK(ok);
                checked++;
            }
    CHECK(checked == 70 * 71);
}

namespace {

struct Case {
    std::vector<int64_t> shape;  // N, H, W, C
    std::vector<float> ratio;
    bool pseudo_random, overlapping;
};

std::string describe(const Case &k) {
    std::ostringstream out;
    out << ShapeString(k.shape) << " ratio " << k.ratio[1] << "x" << k.ratio[2]
        << (k.pseudo_random ? " pseudo_random" : "") << (k.overlapping ? " overlapping" : "");
    return out.str();
}

struct Outcome {
    Status status;
    int64_t mismatches = 0;
    std::string first_mismatch;
};

// Runs FractionalAvgPool (seeded) and compares with the reference over the
// sequences it returned, element by element, in TF's arithmetic for T.
Outcome run_case(const Case &k, DataType dtype, const std::string &variant, uint32_t seed) {
    const bool integer = dtype == DataType::kInt32 || dtype == DataType::kInt64;
    const auto x = random_values(NumElements(k.shape), seed, dtype, integer ? -1000.0 : -1.0, integer ? 1000.0 : 1.0);
    RunOptions options;
    options.variant = variant;
    Tensor output, rows, cols;
    Outcome o;
    o.status = FractionalAvgPool::Compute(
        make_tensor(dtype, k.shape, x), k.ratio, &output, &rows, &cols,
        FractionalAvgPool::PseudoRandom(k.pseudo_random).Overlapping(k.overlapping).Deterministic(true).Seed(seed),
        options);
    if (!o.status.ok()) return o;
    const auto want = reference::fractional_avg_pool(x, k.shape, int64_values(rows), int64_values(cols),
                                                     k.overlapping, arithmetic_of(dtype));
    for (int64_t i = 0; i < output.num_elements(); i++) {
        if (output.load(i) == want[i]) continue;
        if (o.mismatches++ == 0) {
            std::ostringstream out;
            out << "element " << i << ": got " << output.load(i) << ", want " << want[i];
            o.first_mismatch = out.str();
        }
    }
    return o;
}

std::vector<Case> sweep_cases() {
    const float r2 = std::sqrt(2.0f), r3 = std::sqrt(3.0f);
    struct Shape {
        std::vector<int64_t> shape;
        std::vector<float> ratio;
    };
    const std::vector<Shape> shapes = {
        {{1, 1, 1, 1}, {1, 1, 1, 1}},         {{2, 5, 7, 3}, {1, 1.6f, 1.7f, 1}},
        {{1, 7, 13, 1}, {1, r2, r3, 1}},      {{3, 10, 10, 17}, {1, 1.44f, 1.73f, 1}},
        {{2, 20, 30, 33}, {1, r3, r2, 1}},    {{1, 2, 3, 8}, {1, 2, 1.5f, 1}},
        {{2, 1, 9, 5}, {1, 1, 1.5f, 1}},      {{1, 9, 1, 16}, {1, 1.5f, 1, 1}},
        {{1, 17, 23, 2}, {1, 3.3f, 1.9f, 1}}, {{1, 56, 56, 64}, {1, 1.414f, 1.414f, 1}},
        {{2, 12, 12, 24}, {1, 1, 1, 1}},      {{1, 6, 6, 1}, {1, 2, 2, 1}},
    };
    std::vector<Case> cases;
    for (const Shape &s : shapes)
        for (bool pseudo_random : {false, true})
            for (bool overlapping : {false, true}) cases.push_back({s.shape, s.ratio, pseudo_random, overlapping});
    return cases;
}

}  // namespace

TEST_CASE("FractionalAvgPool: every CPU variant matches the reference bit for bit", "[fractional_avg_pool][variants]") {
    const auto variants = runnable_cpu_variants(kOp);
    REQUIRE(!variants.empty());
    int checked = 0;
    for (const VariantInfo &v : variants) {
        const DataType dtype = dtype_of(v.dtype);
        uint32_t seed = 1;
        for (const Case &k : sweep_cases()) {
            const int overlapping = v.structure.at("overlapping");
            if (overlapping != 0 && overlapping != (k.overlapping ? 2 : 1)) continue;
            Outcome o = run_case(k, dtype, v.name, seed += 2);
            INFO(v.name << " " << describe(k) << " " << o.status.ToString() << " " << o.first_mismatch);
            REQUIRE(o.status.ok());
            CHECK(o.mismatches == 0);
            checked++;
        }
    }
    INFO("cases checked: " << checked);
    CHECK(checked >= 4 * 48);
}

TEST_CASE("FractionalAvgPool: TF's forward test shapes (spec 13.5)", "[fractional_avg_pool]") {
    // fractional_avg_pool_op_test.py: (5, 20, 30, 3) with [1, sqrt 3, sqrt 2, 1]
    // in all four modes; batch {1, 3} x rows {10, 20, 50} x cols {10, 20, 50}
    // x channels {1, 3}; (3, 30, 50, 3) with [1, 2, 2, 1]. Checked against the
    // reference over the returned sequences, as TF's test does.
    const float r2 = std::sqrt(2.0f), r3 = std::sqrt(3.0f);
    std::vector<Case> cases;
    for (bool pseudo_random : {false, true})
        for (bool overlapping : {false, true}) {
            cases.push_back({{5, 20, 30, 3}, {1, r3, r2, 1}, pseudo_random, overlapping});
            cases.push_back({{3, 30, 50, 3}, {1, 2, 2, 1}, pseudo_random, overlapping});
        }
    for (int64_t batch : {1, 3})
        for (int64_t rows : {10, 20, 50})
            for (int64_t cols : {10, 20, 50})
                for (int64_t channels : {1, 3})
                    cases.push_back({{batch, rows, cols, channels}, {1, r3, r2, 1}, true, rows % 20 == 0});
    uint32_t seed = 341261001;
    for (DataType dtype : {DataType::kFloat, DataType::kDouble})
        for (const Case &k : cases) {
            Outcome o = run_case(k, dtype, "", seed++);
            INFO(describe(k) << " " << DataTypeName(dtype) << " " << o.status.ToString() << " " << o.first_mismatch);
            REQUIRE(o.status.ok());
            CHECK(o.mismatches == 0);
        }
}

TEST_CASE("FractionalAvgPool: float32 and int32 outputs are TF's bit for bit (TF 2.21)", "[fractional_avg_pool]") {
    {
        // value = (1 .. 126) / 7 as float32, [1, 7, 9, 2], ratio [1, 1.44, 1.73, 1],
        // pseudo-random, overlapping, seeds (3, 4).
        std::vector<double> x(126);
        for (int i = 0; i < 126; i++) x[i] = static_cast<float>(i + 1) / 7.0f;
        Tensor output, rows, cols;
        REQUIRE(FractionalAvgPool::Compute(
                    make_tensor(DataType::kFloat, {1, 7, 9, 2}, x), {1, 1.44f, 1.73f, 1}, &output, &rows, &cols,
                    FractionalAvgPool::PseudoRandom(true).Overlapping(true).Deterministic(true).Seed(3).Seed2(4))
                    .ok());
        CHECK(int64_values(rows) == std::vector<int64_t>{0, 2, 3, 5, 7});
        CHECK(int64_values(cols) == std::vector<int64_t>{0, 2, 3, 5, 7, 9});
        const std::vector<double> want = {
            0x1.8p+1,        0x1.924924p+1,  0x1.b6db6ep+1,  0x1.c92492p+1,  0x1.edb6dcp+1,  0x1.fffffcp+1,
            0x1.1b6db8p+2,   0x1.249248p+2,  0x1.36db6ep+2,  0x1.4p+2,       0x1.b6db7p+2,   0x1.cp+2,
            0x1.d24924p+2,   0x1.db6db8p+2,  0x1.edb6dap+2,  0x1.f6db7p+2,   0x1.092492p+3,  0x1.0db6dcp+3,
            0x1.16db6ep+3,   0x1.1b6db6p+3,  0x1.56db6cp+3,  0x1.5b6db8p+3,  0x1.649248p+3,  0x1.692492p+3,
            0x1.724926p+3,   0x1.76db6cp+3,  0x1.84924ap+3,  0x1.892492p+3,  0x1.924926p+3,  0x1.96db6ep+3,
            0x1.d2492p+3,    0x1.d6db6ep+3,  0x1.ep+3,       0x1.e49248p+3,  0x1.edb6dep+3,  0x1.f2492p+3,
            0x1p+4,          0x1.024924p+4,  0x1.06db6cp+4,  0x1.092492p+4};
        CHECK(to_doubles(output) == want);
    }
    {
        // value = 7 i - 100 (i = 0 .. 35) as int32, [1, 6, 6, 1], ratio
        // [1, 1.5, 1.5, 1], random, overlapping, seeds (3, 4).
        std::vector<double> x(36);
        for (int i = 0; i < 36; i++) x[i] = 7 * i - 100;
        Tensor output, rows, cols;
        REQUIRE(FractionalAvgPool::Compute(make_tensor(DataType::kInt32, {1, 6, 6, 1}, x), {1, 1.5f, 1.5f, 1}, &output,
                                           &rows, &cols,
                                           FractionalAvgPool::Overlapping(true).Deterministic(true).Seed(3).Seed2(4))
                    .ok());
        CHECK(int64_values(rows) == std::vector<int64_t>{0, 2, 3, 4, 6});
        CHECK(int64_values(cols) == std::vector<int64_t>{0, 1, 2, 4, 6});
        CHECK(to_doubles(output) ==
              std::vector<double>{-54, -47, -37, -26, 8, 15, 26, 36, 50, 57, 68, 78, 92, 99, 110, 120});
    }
}

TEST_CASE("FractionalAvgPool: the spec's worked example: 20 5 16 3 7 (TF 2.21)", "[fractional_avg_pool]") {
    // [1, 1, 5, 1], ratio [1, 1, 2.2, 1]: two cells. Random mode with seed 1
    // draws [0, 2, 5]: overlapping [41/3, 26/3], non-overlapping [25/2, 26/3];
    // seed 5 draws [0, 3, 5]: overlapping [11, 5], non-overlapping [41/3, 5].
    // int32 divides with truncation.
    struct Example {
        int64_t seed;
        bool overlapping;
        std::vector<int64_t> cols;
        std::vector<double> mean, integer_mean;
    };
    const std::vector<Example> examples = {
        {1, true, {0, 2, 5}, {41.0 / 3, 26.0 / 3}, {13, 8}},
        {1, false, {0, 2, 5}, {25.0 / 2, 26.0 / 3}, {12, 8}},
        {5, true, {0, 3, 5}, {11, 5}, {11, 5}},
        {5, false, {0, 3, 5}, {41.0 / 3, 5}, {13, 5}},
    };
    for (const Example &e : examples)
        for (DataType dtype : {DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64}) {
            Tensor output, rows, cols;
            REQUIRE(FractionalAvgPool::Compute(
                        make_tensor(dtype, {1, 1, 5, 1}, {20, 5, 16, 3, 7}), {1, 1, 2.2f, 1}, &output, &rows, &cols,
                        FractionalAvgPool::Overlapping(e.overlapping).Deterministic(true).Seed(e.seed))
                        .ok());
            INFO("seed " << e.seed << " overlapping " << e.overlapping << " " << DataTypeName(dtype));
            CHECK(int64_values(rows) == std::vector<int64_t>{0, 1});
            CHECK(int64_values(cols) == e.cols);
            for (int i = 0; i < 2; i++) {
                if (dtype == DataType::kFloat) CHECK(output.load(i) == static_cast<float>(e.mean[i]));
                else if (dtype == DataType::kDouble) CHECK(output.load(i) == e.mean[i]);
                else CHECK(output.load(i) == e.integer_mean[i]);
            }
        }
}

TEST_CASE("FractionalAvgPool: seeds: fresh sequences unless deterministic, fixed ones when deterministic",
          "[fractional_avg_pool]") {
    // 200 rows at ratio 1.41: 141 cells, shuffled; two independent draws
    // agreeing has probability far below 1e-30.
    Tensor value(DataType::kFloat, {1, 200, 200, 1});
    auto draw = [&](const FractionalAvgPool::Attrs &attrs) {
        Tensor output, rows, cols;
        REQUIRE(FractionalAvgPool::Compute(value, {1, 1.41f, 1.41f, 1}, &output, &rows, &cols, attrs).ok());
        return std::make_pair(int64_values(rows), int64_values(cols));
    };
    CHECK(draw(FractionalAvgPool::Attrs()) != draw(FractionalAvgPool::Attrs()));
    CHECK(draw(FractionalAvgPool::PseudoRandom(true)) != draw(FractionalAvgPool::PseudoRandom(true)));
    // Deterministic without seeds: seeds drawn once (per process here, per
    // kernel in TF), so calls repeat.
    CHECK(draw(FractionalAvgPool::Deterministic(true)) == draw(FractionalAvgPool::Deterministic(true)));
    CHECK(draw(FractionalAvgPool::Deterministic(true).Seed(9)) == draw(FractionalAvgPool::Deterministic(true).Seed(9)));
    CHECK(draw(FractionalAvgPool::Deterministic(true).Seed(9)) !=
          draw(FractionalAvgPool::Deterministic(true).Seed2(9)));
}

TEST_CASE("FractionalAvgPool: adjoint identity with the gradient reference, float64", "[fractional_avg_pool]") {
    // <FractionalAvgPool(x), dy> == <x, FractionalAvgPoolGrad(dy)> over the
    // sequences the forward op returned.
    const std::vector<Case> cases = {{{2, 9, 7, 5}, {1, 1.5f, 1.4f, 1}, false, false},
                                     {{1, 30, 21, 4}, {1, 1.414f, 1.5f, 1}, true, true},
                                     {{3, 6, 6, 3}, {1, 2, 2, 1}, true, false},
                                     {{1, 17, 23, 2}, {1, 3.3f, 1.9f, 1}, false, true}};
    for (const Case &k : cases) {
        const auto x = random_values(NumElements(k.shape), 11, DataType::kDouble);
        Tensor y, rows, cols;
        REQUIRE(FractionalAvgPool::Compute(make_tensor(DataType::kDouble, k.shape, x), k.ratio, &y, &rows, &cols,
                                           FractionalAvgPool::PseudoRandom(k.pseudo_random)
                                               .Overlapping(k.overlapping)
                                               .Deterministic(true)
                                               .Seed(21))
                    .ok());
        const auto dy = random_values(y.num_elements(), 12, DataType::kDouble);
        const auto dx = reference::fractional_avg_pool_grad(k.shape, dy, y.shape(), int64_values(rows),
                                                            int64_values(cols), k.overlapping);
        double lhs = 0, rhs = 0;
        for (int64_t i = 0; i < y.num_elements(); i++) lhs += y.load(i) * dy[i];
        for (size_t i = 0; i < x.size(); i++) rhs += x[i] * dx[i];
        INFO(describe(k));
        CHECK(std::fabs(lhs - rhs) <= 1e-12 * std::max(1.0, std::fabs(lhs)));
    }
}

namespace {

// A valid base call that each bad-input row changes in one place. Its
// sequences go to sentinel-filled tensors too.
struct BadCall {
    Tensor value = make_tensor(DataType::kFloat, {1, 5, 5, 2}, std::vector<double>(50, 1.0));
    std::vector<float> ratio = {1, 1.5f, 1.5f, 1};
    FractionalAvgPool::Attrs attrs;
    std::vector<int64_t> output_shape = {1, 3, 3, 2};
    mutable Tensor rows = sentinel_tensor(DataType::kInt64, {4}), cols = sentinel_tensor(DataType::kInt64, {4});

    DataType dtype() const { return DataType::kFloat; }
    Status run(TensorRef output) const {
        return FractionalAvgPool::Compute(value, ratio, output, rows.ref(), cols.ref(), attrs);
    }
};

// The status must be exactly `code: text`, and all three outputs untouched.
void expect_error(const BadCall &call, StatusCode code, const std::string &text) {
    testing::expect_error<BadCall>(call, code, text);
    CHECK(all_equal(call.rows, kSentinel));
    CHECK(all_equal(call.cols, kSentinel));
}

}  // namespace

TEST_CASE("FractionalAvgPool: bad inputs get TF's error kind and text and leave the outputs untouched",
          "[fractional_avg_pool][errors]") {
    using C = StatusCode;
    // All texts as TF 2.21 prints them.
    SECTION("row 50: pooling_ratio with fewer than 4 values (op definition)") {
        BadCall c;
        c.ratio = {1, 1, 1};
        expect_error(c, C::kInvalidArgument, "Length for attr 'pooling_ratio' of 3 must be at least minimum 4");
    }
    SECTION("row 51: pooling_ratio with more than 4 values") {
        BadCall c;
        c.ratio = {1, 1, 1, 1, 1};
        expect_error(c, C::kInvalidArgument, "pooling_ratio field must specify 4 dimensions");
    }
    SECTION("row 52: a ratio below 1 (CVE-2022-41900)") {
        BadCall c;
        c.ratio = {1, -1, 3, 1};
        expect_error(c, C::kInvalidArgument, "pooling_ratio cannot be smaller than 1, got: -1");
        c.ratio = {1, 0.5f, 3, 1};
        expect_error(c, C::kInvalidArgument, "pooling_ratio cannot be smaller than 1, got: 0.5");
        c.ratio = {1, std::nanf(""), 3, 1};
        expect_error(c, C::kInvalidArgument, "pooling_ratio cannot be smaller than 1, got: nan");
    }
    SECTION("row 53: pooling along batch or channels (CVE-2023-25801)") {
        BadCall c;
        c.ratio = {2, 3, 1.5f, 1};  // testPoolingIllegalRatioForBatch
        expect_error(c, C::kUnimplemented,
                     "Fractional average pooling is not yet supported on the batch nor channel dimension.");
        c.ratio = {1, 1, 1, 2};
        expect_error(c, C::kUnimplemented,
                     "Fractional average pooling is not yet supported on the batch nor channel dimension.");
    }
    SECTION("row 54: seeds without deterministic") {
        BadCall c;
        c.attrs = FractionalAvgPool::Seed(1);
        expect_error(c, C::kInvalidArgument, "Both seed and seed2 should be 0 if deterministic is false.");
        c.attrs = FractionalAvgPool::Seed2(-1);
        expect_error(c, C::kInvalidArgument, "Both seed and seed2 should be 0 if deterministic is false.");
    }
    SECTION("row 55: input rank != 4") {
        BadCall c;
        c.value = make_tensor(DataType::kFloat, {5, 5, 2}, std::vector<double>(50, 1.0));
        expect_error(c, C::kInvalidArgument, "tensor_in must be 4-dimensional");
    }
    SECTION("row 56: a dimension smaller than its ratio (CVE-2021-29550)") {
        BadCall c;
        c.value = make_tensor(DataType::kFloat, {1, 1, 1, 4}, {1, 4, 2, 3});
        c.ratio = {1, 1.44f, 1.73f, 1};
        expect_error(c, C::kInvalidArgument,
                     "Pooling ratio is higher than input dimension size for dimension 1. Input dim size: 1 pooling "
                     "ratio: 1.44");
        c.value = make_tensor(DataType::kFloat, {1, 1, 1, 1}, {1});
        c.ratio = {1, 1.0000014f, 1, 1};  // printed with six digits
        expect_error(c, C::kInvalidArgument,
                     "Pooling ratio is higher than input dimension size for dimension 1. Input dim size: 1 pooling "
                     "ratio: 1");
        c.value = make_tensor(DataType::kFloat, {1, 5, 5, 1}, std::vector<double>(25, 1.0));
        c.ratio = {1, 12345678.9f, 1, 1};
        expect_error(c, C::kInvalidArgument,
                     "Pooling ratio is higher than input dimension size for dimension 1. Input dim size: 5 pooling "
                     "ratio: 1.23457e+07");
        c.value = Tensor(DataType::kFloat, {0, 5, 5, 2});  // an empty batch
        c.ratio = {1, 1, 1, 1};
        expect_error(c, C::kInvalidArgument,
                     "Pooling ratio is higher than input dimension size for dimension 0. Input dim size: 0 pooling "
                     "ratio: 1");
    }
    SECTION("row 68: dtype outside the op's list") {
        BadCall c;
        c.value = make_tensor(DataType::kHalf, {1, 5, 5, 2}, std::vector<double>(50, 1.0));
        expect_error(c, C::kInvalidArgument,
                     "Value for attr 'T' of half is not in the list of allowed values: float, double, int32, int64");
    }
    SECTION("caller-provided outputs of the wrong shape or dtype") {
        BadCall c;
        c.ratio = {1, 2, 2, 1};  // output [1, 2, 2, 2], sequences [3]
        expect_error(c, C::kInvalidArgument, "output has shape [1,3,3,2], expected [1,2,2,2]");
        c.ratio = {1, 1.5f, 1.5f, 1};
        c.value = make_tensor(DataType::kDouble, {1, 5, 5, 2}, std::vector<double>(50, 1.0));
        expect_error(c, C::kInvalidArgument, "output has dtype float, expected double");
    }
}

TEST_CASE("FractionalAvgPool: the by-name layer runs it with its three outputs", "[fractional_avg_pool]") {
    const OpSpec *spec = FindOpSpec(kOp);
    REQUIRE(spec);
    CHECK(spec->inputs == std::vector<std::string>{"value"});
    CHECK(spec->input_types == std::vector<std::string>{"T"});
    CHECK(spec->outputs == std::vector<std::string>{"output", "row_pooling_sequence", "col_pooling_sequence"});
    Tensor value = make_tensor(DataType::kFloat, {1, 1, 5, 1}, {20, 5, 16, 3, 7});
    OpCall call{kOp,
                {{"value", value}},
                {{"pooling_ratio", std::vector<double>{1, 1, 2.2, 1}},
                 {"overlapping", true},
                 {"deterministic", true},
                 {"seed", int64_t{1}}}};
    std::vector<Tensor> outputs;
    REQUIRE(RunOp(call, &outputs).ok());
    REQUIRE(outputs.size() == 3);
    CHECK(outputs[0].load(0) == static_cast<float>(41.0 / 3));
    CHECK(int64_values(outputs[1]) == std::vector<int64_t>{0, 1});
    CHECK(int64_values(outputs[2]) == std::vector<int64_t>{0, 2, 5});
    outputs[0].store(0, 0.0);  // reuse of the caller's outputs
    REQUIRE(RunOp(call, &outputs).ok());
    CHECK(outputs[0].load(0) == static_cast<float>(41.0 / 3));
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    CHECK(info.structure == std::map<std::string, int>{{"overlapping", 2}});
    CHECK(info.shape == std::map<std::string, int64_t>{{"N", 1}, {"H", 1}, {"W", 5}, {"C", 1}, {"OH", 1}, {"OW", 2}});
    call.attrs.erase("pooling_ratio");
    CHECK(!RunOp(call, &outputs).ok());  // pooling_ratio has no default
}
