#include "float32_detour.h"

#include <algorithm>
#include <cstring>

#include "scratch.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace gradtune::internal {

bool float32_detour_fits(const CallInfo &info, const RunOptions &options) {
    if (options.device != Device::cpu || !options.variant.empty() || options.external_kernel) return false;
    const bool depthwise =
        info.op == "DepthwiseConv2dNativeBackpropInput" || info.op == "DepthwiseConv2dNativeBackpropFilter";
    if (info.op != "Conv2DBackpropInput" && info.op != "Conv2DBackpropFilter" && !depthwise) return false;
    if (info.dtype != "bfloat16" && info.dtype != "float16") return false;
    // The three float32 copies: out_backprop (at most N H W O elements),
    // the input (or its gradient) and the filter (or its gradient), O being
    // C M for a depthwise call of depth multiplier M.
    const auto &s = info.shape;
    const int64_t taps = int64_t{info.structure.at("filter_height")} * info.structure.at("filter_width");
    const int64_t out_channels = depthwise ? s.at("C") * info.structure.at("depth_multiplier") : s.at("O");
    const int64_t filter =
        depthwise ? taps * out_channels : taps * (s.at("C") / std::max(1, info.structure.at("groups"))) * out_channels;
    const int64_t activations = s.at("N") * s.at("H") * s.at("W") * (s.at("C") + out_channels);
    return (activations + filter) * int64_t{sizeof(float)} <= kFloat32DetourScratchBytes;
}

CallInfo float32_twin(const CallInfo &info) {
    CallInfo twin = info;
    twin.dtype = "float32";
    for (DataType &t : twin.output_dtypes) t = DataType::kFloat;
    return twin;
}

DetourDecisions &float32_detour_decisions() {
    // Never destroyed: calls may run from static destructors.
    static auto *d = new DetourDecisions("GRADTUNE_FLOAT32_DETOUR", "in float32", "on its 16-bit kernels");
    return *d;
}

DetourChoice float32_detour_choice(const CallInfo &info, const RunOptions &options) {
    // Without probes: the detour where only the generic variant fits the
    // 16-bit call (it converts every operand where it reads it). Asked only
    // then: a call's choice is read on every call.
    return float32_detour_decisions().choice(info, options, [&] {
        Selection own;
        if (select_kernel(info, options, &own).ok() && own.tier == Tier::generic)
            return DetourChoice{true, true, "not probed; only the generic variant fits the " + info.dtype + " call"};
        return DetourChoice{true, false, "not probed"};
    });
}

namespace {

constexpr int64_t kChunk = 16384;  // elements per parallel task (64 KB of float32)

// F16C and the AVX state it needs, from CPUID and XGETBV (clang 14's
// __builtin_cpu_supports knows no "f16c").
bool has_f16c() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool yes = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
        const bool osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
        if (!osxsave || !avx || !f16c) return false;
        unsigned lo = 0, hi = 0;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        return (lo & 6u) == 6u;  // the OS saves the XMM and YMM registers
    }();
    return yes;
#else
    return false;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx,f16c"))) void half_to_float_f16c(const uint16_t *from, float *to, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(from + i))));
    for (; i < n; i++) to[i] = HalfBitsToFloat(from[i]);
}
__attribute__((target("avx,f16c"))) void float_to_half_f16c(const float *from, uint16_t *to, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(to + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) to[i] = FloatToHalfBits(from[i]);
}
#endif

// One chunk of elements; written so that the compiler vectorises the
// bfloat16 loops (bit operations only).
void widen_chunk(DataType dtype, const uint16_t *from, float *to, int64_t n) {
    if (dtype == DataType::kBFloat16) {
        for (int64_t i = 0; i < n; i++) {
            const uint32_t bits = static_cast<uint32_t>(from[i]) << 16;
            std::memcpy(to + i, &bits, 4);
        }
        return;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (has_f16c()) return half_to_float_f16c(from, to, n);
#endif
    for (int64_t i = 0; i < n; i++) to[i] = HalfBitsToFloat(from[i]);
}

void narrow_chunk(const float *from, DataType dtype, uint16_t *to, int64_t n) {
    if (dtype == DataType::kBFloat16) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t bits;
            std::memcpy(&bits, from + i, 4);
            const uint32_t rounded = (bits + (0x7fffu + ((bits >> 16) & 1u))) >> 16;
            const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
            to[i] = static_cast<uint16_t>(nan ? (bits >> 16) | 0x40u : rounded);
        }
        return;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (has_f16c()) return float_to_half_f16c(from, to, n);
#endif
    for (int64_t i = 0; i < n; i++) to[i] = FloatToHalfBits(from[i]);
}

template <typename Chunk>
void in_chunks(int64_t count, Chunk chunk, ParallelRunner *parallel) {
    const int64_t chunks = (count + kChunk - 1) / kChunk;
    parallel_tasks(
        static_cast<int>(chunks),
        [&](int c) {
            const int64_t begin = c * kChunk;
            chunk(begin, std::min(count, begin + kChunk) - begin);
        },
        parallel);
}

}  // namespace

void widen_to_float32(const ConstTensorRef &from, float *to, ParallelRunner *parallel) {
    const auto *bits = static_cast<const uint16_t *>(from.data);
    in_chunks(
        from.num_elements(), [&](int64_t begin, int64_t n) { widen_chunk(from.dtype, bits + begin, to + begin, n); },
        parallel);
}

void narrow_from_float32(const float *from, const TensorRef &to, ParallelRunner *parallel) {
    auto *bits = static_cast<uint16_t *>(to.data);
    in_chunks(
        to.num_elements(), [&](int64_t begin, int64_t n) { narrow_chunk(from + begin, to.dtype, bits + begin, n); },
        parallel);
}

}  // namespace gradtune::internal
