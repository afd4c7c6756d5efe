// TensorFlow's random machinery as FractionalAvgPool uses it, reproduced bit
// for bit so that (seed, seed2) give TF's pooling sequences (docs/tf-ops.md
// section 8):
//   PhiloxRandom         lib/random/philox_random.h: Philox4x32-10 (Salmon et
//                        al., "Parallel random numbers: as easy as 1, 2, 3"),
//                        128-bit counter, 64-bit key, 4 x uint32 per block.
//   GuardedPhiloxRandom  util/guarded_philox_random.h: a seeded generator that
//                        hands out non-overlapping counter ranges.
//   SingleSampleAdapter  lib/random/random_distributions.h: one uint32 at a time.
//   Uint64ToDouble       lib/random/random_distributions.h: SimplePhilox's RandDouble.
//   GeneratePoolingSequence  kernels/fractional_pool_common.cc.
// Halide-free and self-contained (the tests include it directly).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace gradtune::internal {

class PhiloxRandom {
public:
    using Block = std::array<uint32_t, 4>;  // a counter or a result
    using Key = std::array<uint32_t, 2>;

    PhiloxRandom() = default;
    // TF's PhiloxRandom(seed_lo, seed_hi): key = (lo32(seed), hi32(seed)),
    // counter = (0, 0, lo32(seed2), hi32(seed2)).
    PhiloxRandom(uint64_t seed, uint64_t seed2);
    PhiloxRandom(const Block &counter, const Key &key) : counter_(counter), key_(key) {}

    // The 10-round block of the current counter; then the counter steps by one.
    Block operator()();
    // Advances the 128-bit counter by `count` blocks.
    void Skip(uint64_t count);

    // Philox4x32-10 of one (counter, key) pair: the Random123 known-answer form.
    static Block Compute(Block counter, Key key);

    const Block &counter() const { return counter_; }
    const Key &key() const { return key_; }

private:
    Block counter_{};
    Key key_{};
};

// TF's GuardedPhiloxRandom without the mutex: FractionalAvgPool makes a fresh
// one per call, and a call runs on one thread.
class GuardedPhiloxRandom {
public:
    // Both seeds 0: two fresh random 64-bit seeds (TF: random::New64(); here
    // std::random_device), so every call draws new sequences.
    void Init(int64_t seed, int64_t seed2);
    // A copy of the generator for `samples` blocks; the shared counter skips
    // past them so later reservations never overlap.
    PhiloxRandom ReserveSamples128(int64_t samples);
    // Room for `samples` uint32 values: ceil(samples / 4) blocks.
    PhiloxRandom ReserveSamples32(int64_t samples) { return ReserveSamples128((samples + 3) / 4); }

private:
    PhiloxRandom generator_;
};

// Hands out the four uint32 of each block one at a time (TF's
// SingleSampleAdapter<PhiloxRandom>); the first call draws a block.
class SingleSampleAdapter {
public:
    explicit SingleSampleAdapter(PhiloxRandom *generator) : generator_(generator) {}
    uint32_t operator()();

private:
    PhiloxRandom *generator_;
    PhiloxRandom::Block block_{};
    int used_ = 4;
};

// A double in [0, 1) from two uint32: mantissa (x0 & 0xfffff) << 32 | x1,
// exponent of 1.0, minus 1.0 (TF's Uint64ToDouble, used by RandDouble).
double Uint64ToDouble(uint32_t x0, uint32_t x1);

// Two 64-bit values from std::random_device (TF's random::New64 twice).
std::array<uint64_t, 2> RandomSeedPair();

// TF's GeneratePoolingSequence: the cumulative pooling sequence (length
// output_length + 1, from 0 to input_length, steps K or K+1 with
// K = input_length / output_length) drawn from `generator`:
//   random (pseudo_random = false): K+1 for the first input_length %
//     output_length steps, then TF's Fisher-Yates shuffle with one uint32
//     per swap, from ReserveSamples32(output_length);
//   pseudo-random: one RandDouble from ReserveSamples32(2), u scaled into
//     [0, min(u_max1, u_max2)), a_i = ceil(alpha * (i + u)).
// Needs 1 <= output_length <= input_length (FractionalAvgPool checks it).
std::vector<int64_t> GeneratePoolingSequence(int input_length, int output_length, GuardedPhiloxRandom *generator,
                                             bool pseudo_random);

}  // namespace gradtune::internal
