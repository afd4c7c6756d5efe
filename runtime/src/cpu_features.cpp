#include "cpu_features.h"

#include <HalideRuntime.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "variant_table.h"

namespace gradtune::internal {

namespace {

std::atomic<int> refused_targets{0};

bool has_feature(const uint64_t *features, int feature) { return (features[feature / 64] >> (feature % 64)) & 1; }

// halide_can_use_target_features without AVX-512: Halide's multi-target
// wrapper then falls through to the AVX2 target.
int can_use_up_to_avx2(int count, const uint64_t *features) {
    static const int avx512[] = {halide_target_feature_avx512,         halide_target_feature_avx512_knl,
                                 halide_target_feature_avx512_skylake, halide_target_feature_avx512_cannonlake,
                                 halide_target_feature_avx512_zen4,    halide_target_feature_avx512_zen5,
                                 halide_target_feature_avx512_sapphirerapids, halide_target_feature_avx10_1};
    for (int feature : avx512) {
        if (feature / 64 < count && has_feature(features, feature)) {
            refused_targets++;
            return 0;
        }
    }
    return halide_default_can_use_target_features(count, features);
}

}  // namespace

void limit_cpu_features() {
    static std::once_flag once;
    std::call_once(once, [] {
        const char *isa = std::getenv("GRADTUNE_MAX_CPU_ISA");
        if (isa && std::strcmp(isa, "avx2") == 0) {
            halide_set_custom_can_use_target_features(&can_use_up_to_avx2);
        } else if (isa && *isa && std::strcmp(isa, "all") != 0) {
            std::fprintf(stderr, "gradtune: GRADTUNE_MAX_CPU_ISA=%s is not avx2 or all; ignored\n", isa);
        }
    });
}

int cpu_targets_refused() { return refused_targets.load(); }

bool tuned_cpu_variants_usable() {
    static const bool usable = [] {
        limit_cpu_features();
        const auto &targets = tuned_cpu_target_features();
        if (targets.empty()) return true;  // every kernel has every target
        constexpr int words = (halide_target_feature_end + 63) / 64;
        for (const std::vector<int> &features : targets) {
            uint64_t bits[words] = {};
            for (int f : features) bits[f / 64] |= uint64_t{1} << (f % 64);
            if (halide_can_use_target_features(words, bits)) return true;
        }
        return false;
    }();
    return usable;
}

bool cpu_runs_avx2_baseline() {
    static const bool baseline = [] {
        limit_cpu_features();
        constexpr int words = (halide_target_feature_end + 63) / 64;
        uint64_t bits[words] = {};
        for (int f : {halide_target_feature_sse41, halide_target_feature_avx, halide_target_feature_avx2,
                      halide_target_feature_fma, halide_target_feature_f16c, halide_target_feature_avx512,
                      halide_target_feature_avx512_skylake})
            bits[f / 64] |= uint64_t{1} << (f % 64);
        return !halide_can_use_target_features(words, bits);
    }();
    return baseline;
}

}  // namespace gradtune::internal
