// Helpers shared by the tests: tensors from doubles, deterministic random
// data, normwise comparison, and the tolerance per dtype.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gradtune/gradtune.h"
#include "measure.h"  // tooling::tolerance

namespace gradtune::testing {

// The CPU variants of `op` in this build that this CPU can run (a tuned
// record compiled only for AVX-512 targets cannot run under
// GRADTUNE_MAX_CPU_ISA=avx2: VariantInfo::runs_here). What every per-op
// "every CPU variant matches the reference" test walks.
inline std::vector<VariantInfo> runnable_cpu_variants(std::string_view op) {
    std::vector<VariantInfo> out;
    for (const VariantInfo &v : Variants(op))
        if (v.device == Device::cpu && v.runs_here) out.push_back(v);
    return out;
}

// Values rounded to `dtype` (what the kernel actually sees), as doubles.
inline std::vector<double> random_values(int64_t n, uint32_t seed, DataType dtype, double lo = -1.0,
                                         double hi = 1.0) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    Tensor t(dtype, {n});
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; i++) {
        t.store(i, dist(rng));
        v[i] = t.load(i);
    }
    return v;
}

inline Tensor make_tensor(DataType dtype, const std::vector<int64_t> &shape, const std::vector<double> &values) {
    Tensor t(dtype, shape);
    for (int64_t i = 0; i < t.num_elements(); i++) t.store(i, values[i]);
    return t;
}

// 1, 2, ..., n as TF's conv_ops_test.py fills its tensors.
inline std::vector<double> iota(int64_t n) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; i++) v[i] = static_cast<double>(i + 1);
    return v;
}

inline Tensor int32_vector(const std::vector<int64_t> &values) {
    return Tensor::FromVector(DataType::kInt32, {static_cast<int64_t>(values.size())}, values);
}

inline std::vector<double> to_doubles(const Tensor &t) {
    std::vector<double> v(t.num_elements());
    for (int64_t i = 0; i < t.num_elements(); i++) v[i] = t.load(i);
    return v;
}

// max |got - want| / max |want| (0 when both are all zero).
inline double normwise_error(const std::vector<double> &got, const std::vector<double> &want) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < want.size(); i++) {
        diff = std::max(diff, std::fabs(got[i] - want[i]));
        scale = std::max(scale, std::fabs(want[i]));
    }
    if (scale == 0) return diff;
    return diff / scale;
}

using tooling::tolerance;  // the issues' normwise tolerances (tuner/measure.h)

inline DataType dtype_of(const std::string &name) { return *DataTypeFromString(name); }

// The 2-D window ops' layouts, for their tests.
inline bool is_nchw(const std::string &layout) {
    return layout == "NCHW";
}

// An NHWC shape in NCHW order when `nchw`.
inline std::vector<int64_t> to_layout(const std::vector<int64_t> &nhwc, bool nchw) {
    return nchw ? std::vector<int64_t>{nhwc[0], nhwc[3], nhwc[1], nhwc[2]} : nhwc;
}

// A (row, column) attr (strides, dilations) in layout order, 1 for batch and depth.
inline std::vector<int> spatial_attr(int64_t rows, int64_t cols, bool nchw) {
    const int r = static_cast<int>(rows), c = static_cast<int>(cols);
    return nchw ? std::vector<int>{1, 1, r, c} : std::vector<int>{1, r, c, 1};
}

// A convolution case's optional attrs for Op's typed API: data_format,
// dilations (k.dilation_h, k.dilation_w) and, for EXPLICIT padding, k.pads
// (top, bottom, left, right).
template <typename Op, typename Case>
typename Op::Attrs conv_attrs(const Case &k, const std::string &layout) {
    const bool nchw = is_nchw(layout);
    auto attrs = Op::DataFormat(layout).Dilations(spatial_attr(k.dilation_h, k.dilation_w, nchw));
    if (k.padding == "EXPLICIT") {
        auto [t, b, l, r] = k.pads;
        attrs = attrs.ExplicitPaddings(nchw ? std::vector<int>{0, 0, 0, 0, t, b, l, r}
                                            : std::vector<int>{0, 0, t, b, l, r, 0, 0});
    }
    return attrs;
}

}  // namespace gradtune::testing
