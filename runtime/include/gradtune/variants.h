// Introspection of the compiled variants (for tests, `gradtune variants`,
// benchmarks): which kernels this build holds and what they were tuned for.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gradtune/device.h"

namespace gradtune {

struct TunedShapeInfo {
    std::string source_class;  // TargetClass() for own records, else the class it was transferred from
    std::string padding;
    std::map<std::string, int64_t> shape;
    double median_ms = 0, generic_median_ms = 0;
};

struct VariantInfo {
    std::string op, name;
    Device device = Device::cpu;
    std::string dtype, data_format;
    std::map<std::string, int> structure;  // 0 = from the call
    std::string knobs;
    bool generic = false;
    bool structure_default = false;  // serves its structure where no record does
    // False for a tuned record that this CPU (under GRADTUNE_MAX_CPU_ISA) cannot
    // run: tuned records are compiled only for the build machine's target
    // (GRADTUNE_TUNED_CPU_TARGETS), and dispatch skips them elsewhere.
    bool runs_here = true;
    std::vector<TunedShapeInfo> tuned_for;
};

// All variants, or those of one op.
std::vector<VariantInfo> Variants(std::string_view op = "");
// The target class whose records this build used, e.g. x86-64-linux-avx512_zen5.
std::string TargetClass();

}  // namespace gradtune
