#include "philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

namespace gradtune::internal {

namespace {

// Philox4x32 round multipliers and Weyl key increments (Random123; TF's
// kPhiloxM4x32A/B and kPhiloxW32A/B).
constexpr uint32_t kMultiplierA = 0xD2511F53;
constexpr uint32_t kMultiplierB = 0xCD9E8D57;
constexpr uint32_t kKeyIncrementA = 0x9E3779B9;
constexpr uint32_t kKeyIncrementB = 0xBB67AE85;

inline uint32_t multiply_high_low(uint32_t a, uint32_t b, uint32_t *low) {
    const uint64_t product = static_cast<uint64_t>(a) * b;
    *low = static_cast<uint32_t>(product);
    return static_cast<uint32_t>(product >> 32);
}

// One round: A = M_A * c0, B = M_B * c2;
// (c0, c1, c2, c3) <- (hi(B) ^ c1 ^ k0, lo(B), hi(A) ^ c3 ^ k1, lo(A)).
inline PhiloxRandom::Block round(const PhiloxRandom::Block &c, const PhiloxRandom::Key &k) {
    uint32_t low_a, low_b;
    const uint32_t high_a = multiply_high_low(kMultiplierA, c[0], &low_a);
    const uint32_t high_b = multiply_high_low(kMultiplierB, c[2], &low_b);
    return {high_b ^ c[1] ^ k[0], low_b, high_a ^ c[3] ^ k[1], low_a};
}

}  // namespace

PhiloxRandom::PhiloxRandom(uint64_t seed, uint64_t seed2) {
    key_ = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
    counter_ = {0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)};
}

PhiloxRandom::Block PhiloxRandom::Compute(Block counter, Key key) {
    // Ten rounds, the key raised between consecutive rounds (nine times).
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            key[0] += kKeyIncrementA;
            key[1] += kKeyIncrementB;
        }
        counter = round(counter, key);
    }
    return counter;
}

PhiloxRandom::Block PhiloxRandom::operator()() {
    Block result = Compute(counter_, key_);
    // TF's SkipOne: a 128-bit increment.
    if (++counter_[0] == 0 && ++counter_[1] == 0 && ++counter_[2] == 0) ++counter_[3];
    return result;
}

void PhiloxRandom::Skip(uint64_t count) {
    // TF's Skip: add the 64-bit count to the low half of the 128-bit counter
    // and carry into the high half.
    const uint32_t count_low = static_cast<uint32_t>(count);
    uint32_t count_high = static_cast<uint32_t>(count >> 32);
    counter_[0] += count_low;
    if (counter_[0] < count_low) ++count_high;
    counter_[1] += count_high;
    if (counter_[1] < count_high) {
        if (++counter_[2] == 0) ++counter_[3];
    }
}

std::array<uint64_t, 2> RandomSeedPair() {
    std::random_device device;
    auto draw64 = [&device] { return (static_cast<uint64_t>(device()) << 32) | static_cast<uint64_t>(device()); };
    const uint64_t seed = draw64();
    const uint64_t seed2 = draw64();
    return {seed, seed2};
}

void GuardedPhiloxRandom::Init(int64_t seed, int64_t seed2) {
    if (seed == 0 && seed2 == 0) {
        const auto fresh = RandomSeedPair();
        generator_ = PhiloxRandom(fresh[0], fresh[1]);
        return;
    }
    generator_ = PhiloxRandom(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
}

PhiloxRandom GuardedPhiloxRandom::ReserveSamples128(int64_t samples) {
    PhiloxRandom local = generator_;
    generator_.Skip(static_cast<uint64_t>(samples));
    return local;
}

uint32_t SingleSampleAdapter::operator()() {
    if (used_ == 4) {
        block_ = (*generator_)();
        used_ = 0;
    }
    return block_[used_++];
}

double Uint64ToDouble(uint32_t x0, uint32_t x1) {
    const uint64_t mantissa = (static_cast<uint64_t>(x0 & 0xfffffu) << 32) | x1;
    const uint64_t bits = (uint64_t{1023} << 52) | mantissa;  // in [1, 2)
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value - 1.0;
}

namespace {

// fractional_pool_common.cc GeneratePoolingSequencePseudoRandom: the step
// sizes from a_0 = 1, a_i = ceil(alpha * (i + u)), a_n = input_length + 1.
// The arithmetic (int and double, the order of operations) is TF's, so that
// the same u gives the same sequence.
std::vector<int64_t> pseudo_random_steps(int input_length, int output_length, GuardedPhiloxRandom *generator) {
    std::vector<int64_t> cumulative(output_length + 1, 0);
    std::vector<int64_t> steps(output_length, 0);
    const double alpha = static_cast<double>(input_length) / output_length;
    const int k = input_length / output_length;
    // u_max1 keeps the first step <= k + 1 (alpha * (u + 1) <= 1 + k + 1);
    // u_max2 keeps the last step >= k.
    const double u_max1 = (k + 2) / alpha - 1;
    const double u_max2 = (input_length + 1 - k) / alpha - (output_length - 1);
    const double max_u = std::min(u_max1, u_max2);

    PhiloxRandom local = generator->ReserveSamples32(2);
    SingleSampleAdapter single(&local);  // TF's SimplePhilox::RandDouble
    const uint32_t x0 = single();
    const uint32_t x1 = single();
    const double u = Uint64ToDouble(x0, x1) * max_u;

    cumulative[0] = 1;
    cumulative[output_length] = input_length + 1;
    for (int i = 1; i < output_length; ++i) cumulative[i] = static_cast<int>(std::ceil(alpha * (i + u)));
    for (int i = 0; i < output_length; ++i) steps[i] = cumulative[i + 1] - cumulative[i];
    return steps;
}

// GeneratePoolingSequenceRandom: K+1 for the first input_length % output_length
// steps, K for the rest, shuffled by TF's RandomShuffle (random_shuffle_op.cc):
// for i = 0 .. n-2: swap(i, i + uniform(n - i)), uniform(m) = next uint32 % m.
std::vector<int64_t> random_steps(int input_length, int output_length, GuardedPhiloxRandom *generator) {
    const int k = input_length / output_length;
    const int larger = input_length % output_length;
    std::vector<int64_t> steps(output_length, k);
    for (int i = 0; i < larger; ++i) steps[i] += 1;

    PhiloxRandom local = generator->ReserveSamples32(static_cast<int64_t>(steps.size()));
    SingleSampleAdapter single(&local);
    const size_t n = steps.size();
    for (size_t i = 0; i + 1 < n; ++i) {
        const uint32_t remaining = static_cast<uint32_t>(n - i);
        std::swap(steps[i], steps[i + single() % remaining]);
    }
    return steps;
}

}  // namespace

std::vector<int64_t> GeneratePoolingSequence(int input_length, int output_length, GuardedPhiloxRandom *generator,
                                             bool pseudo_random) {
    // (TF first builds uniform steps when output_length divides input_length,
    // then always overwrites them with one of the generators; both give
    // uniform steps in that case, and the generator draws the same.)
    std::vector<int64_t> steps = pseudo_random ? pseudo_random_steps(input_length, output_length, generator)
                                               : random_steps(input_length, output_length, generator);
    std::vector<int64_t> cumulative(output_length + 1, 0);
    for (size_t i = 1; i < cumulative.size(); ++i) cumulative[i] = cumulative[i - 1] + steps[i - 1];
    return cumulative;
}

}  // namespace gradtune::internal
