// FractionalAvgPool (docs/tf-ops.md section 8), the forward companion of
// FractionalAvgPoolGrad, with TF's inputs, attrs, outputs, validation order
// and error texts.
//
//   value                 T [N, H, W, C] (NHWC)
//   pooling_ratio         4 floats >= 1, [1, row ratio, column ratio, 1]
//   output                T [N, OH, OW, C], OH = floor(H / ratio) in float32, as TF
//   row_pooling_sequence  int64 [OH + 1]: cell r covers rows seq[r] .. seq[r+1] - 1
//                         (.. seq[r+1] with overlapping)
//   col_pooling_sequence  int64 [OW + 1]
// T is float, double, int32 or int64; each cell's mean is summed and divided
// in T (integers: truncating division), as TF.
//
// The sequences are drawn exactly as TF draws them: Philox4x32-10 seeded with
// (seed, seed2), rows first, then columns, from one generator.
//   deterministic = false: seed and seed2 must be 0; every call draws fresh
//     random seeds (different sequences each call), as TF.
//   deterministic = true, (seed, seed2) != (0, 0): these seeds; the same call
//     gives TF's sequences.
//   deterministic = true, seed = seed2 = 0: TF draws two random seeds once per
//     kernel instance and keeps them. This library has no kernel instances: it
//     draws them once per process, so such calls repeat within a process (like
//     TF eager's cached kernel) but differ between processes.
#pragma once

#include <cstdint>
#include <vector>

#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes, built like TF's C++ ops:
//   FractionalAvgPool::PseudoRandom(true).Overlapping(true).Deterministic(true).Seed(7)
struct FractionalAvgPoolAttrs {
    FractionalAvgPoolAttrs PseudoRandom(bool x) const {
        auto a = *this;
        a.pseudo_random_ = x;
        return a;
    }
    FractionalAvgPoolAttrs Overlapping(bool x) const {
        auto a = *this;
        a.overlapping_ = x;
        return a;
    }
    FractionalAvgPoolAttrs Deterministic(bool x) const {
        auto a = *this;
        a.deterministic_ = x;
        return a;
    }
    FractionalAvgPoolAttrs Seed(int64_t x) const {
        auto a = *this;
        a.seed_ = x;
        return a;
    }
    FractionalAvgPoolAttrs Seed2(int64_t x) const {
        auto a = *this;
        a.seed2_ = x;
        return a;
    }
    bool pseudo_random_ = false;
    bool overlapping_ = false;
    bool deterministic_ = false;
    int64_t seed_ = 0;
    int64_t seed2_ = 0;
};

class FractionalAvgPool {
public:
    using Attrs = FractionalAvgPoolAttrs;
    static Attrs PseudoRandom(bool x) { return Attrs().PseudoRandom(x); }
    static Attrs Overlapping(bool x) { return Attrs().Overlapping(x); }
    static Attrs Deterministic(bool x) { return Attrs().Deterministic(x); }
    static Attrs Seed(int64_t x) { return Attrs().Seed(x); }
    static Attrs Seed2(int64_t x) { return Attrs().Seed2(x); }

    // Writes into caller tensors: `output` of dtype T and shape [N, OH, OW, C],
    // the sequences int64 [OH + 1] and [OW + 1]. On any error they are left
    // untouched.
    static Status Compute(const ConstTensorRef &value, const std::vector<float> &pooling_ratio, const TensorRef &output,
                          const TensorRef &row_pooling_sequence, const TensorRef &col_pooling_sequence,
                          const Attrs &attrs = Attrs(), const RunOptions &options = RunOptions());

    // Allocates the three outputs.
    static Status Compute(const ConstTensorRef &value, const std::vector<float> &pooling_ratio, Tensor *output,
                          Tensor *row_pooling_sequence, Tensor *col_pooling_sequence, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());
};

}  // namespace gradtune
