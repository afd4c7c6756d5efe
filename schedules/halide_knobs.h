// Glue between a generator's knob GeneratorParams and the Halide-free knob
// space (knob_space.h). docs/design.md section 4, rule 2: knobs are
// GeneratorParams with the names the records use, so a record becomes
// `PARAMS knob=value ...`.
#pragma once

#include "Halide.h"
#include "knob_space.h"

#include <algorithm>
#include <map>
#include <string>

namespace gradtune {

// A generator's structural GeneratorParams (0: from the call at run time)
// and their values by name for its Structure, from its family's table
// (structures.h): GRADTUNE_DEPTHWISE_STRUCTURE(GRADTUNE_STRUCTURE_GENERATOR_PARAM)
// in the class, {GRADTUNE_DEPTHWISE_STRUCTURE(GRADTUNE_STRUCTURE_VALUE)} for
// Structure::fixed.
#define GRADTUNE_STRUCTURE_GENERATOR_PARAM(param) Halide::GeneratorParam<int> param{#param, 0};
#define GRADTUNE_STRUCTURE_VALUE(param) {#param, param},

// A knob GeneratorParam left unset: the space's default for the variant's
// device and structure (the only place a default is declared).
inline constexpr int kSpaceDefault = -1;

// One GeneratorParam per knob of an op's CPU and CUDA tables (knob_space.h;
// a SHARED knob of the CUDA table uses the CPU one's), and values(), their
// values by name for read_knobs(). Each CPU knob has a second GeneratorParam,
// avx2_<knob>: the setting for x86 targets without AVX-512 (the AVX2 baseline
// of the multi-target library), where a structure default was tuned for AVX2
// too (docs/design.md section 5); avx2_values() gives them by the knobs' names.
#define GRADTUNE_GENERATOR_PARAM(knob, ...) Halide::GeneratorParam<int> knob{#knob, kSpaceDefault};
#define GRADTUNE_GENERATOR_VALUE(knob, ...) {#knob, knob},
#define GRADTUNE_AVX2_GENERATOR_PARAM(knob, ...) Halide::GeneratorParam<int> avx2_##knob{"avx2_" #knob, kSpaceDefault};
#define GRADTUNE_AVX2_GENERATOR_VALUE(knob, ...) {#knob, avx2_##knob},
#define GRADTUNE_NOT_AGAIN(...)
#define GRADTUNE_GENERATOR_KNOBS(Type, CPU_TABLE, CUDA_TABLE)                                  \
    struct Type {                                                                              \
        CPU_TABLE(GRADTUNE_GENERATOR_PARAM, GRADTUNE_NOT_AGAIN)                                \
        CUDA_TABLE(GRADTUNE_GENERATOR_PARAM, GRADTUNE_NOT_AGAIN)                               \
        CPU_TABLE(GRADTUNE_AVX2_GENERATOR_PARAM, GRADTUNE_NOT_AGAIN)                           \
        std::map<std::string, int> values() const {                                            \
            return {CPU_TABLE(GRADTUNE_GENERATOR_VALUE, GRADTUNE_NOT_AGAIN)                    \
                        CUDA_TABLE(GRADTUNE_GENERATOR_VALUE, GRADTUNE_NOT_AGAIN)};             \
        }                                                                                      \
        std::map<std::string, int> avx2_values() const {                                       \
            return {CPU_TABLE(GRADTUNE_AVX2_GENERATOR_VALUE, GRADTUNE_NOT_AGAIN)};             \
        }                                                                                      \
    }

// The knob values of `space`, read from a generator's knob GeneratorParams
// (`params`: name -> value; kSpaceDefault: the space's default). Fails
// generation with a clear message when a space knob has no GeneratorParam or
// the combination is illegal, so a variant that the configure step would
// refuse can never be compiled either.
inline Knobs read_knobs(const KnobSpace &space, const std::map<std::string, int> &params) {
    Knobs knobs;
    for (const Knob &knob : space.knobs) {
        auto it = params.find(knob.name);
        _halide_user_assert(it != params.end()) << "the generator has no GeneratorParam for knob '" << knob.name << "'";
        knobs[knob.name] = it->second == kSpaceDefault ? knob.default_value : it->second;
    }
    std::string why = space.check(knobs);
    _halide_user_assert(why.empty()) << why;
    return knobs;
}

inline Device device_of(const Halide::Target &target) {
    return target.has_gpu_feature() ? Device::cuda : Device::cpu;
}

// The vector registers of a CPU target (knob spaces count AVX-512's).
inline RegisterFile register_file(const Halide::Target &target) {
    using Halide::Target;
    if (target.arch == Target::X86) {
        if (target.has_feature(Target::AVX512)) return kAvx512Registers;
        if (target.has_feature(Target::AVX)) return {32, 16};  // AVX, AVX2: 16 ymm
        return {16, 16};                                       // SSE: 16 xmm
    }
    if (target.arch == Target::ARM && target.bits == 64) return {16, 32};  // NEON: 32 q registers
    return kAvx512Registers;
}

// An x86 target without AVX-512: where the avx2_<knob> GeneratorParams apply.
inline bool avx2_class(const Halide::Target &target) {
    return target.arch == Halide::Target::X86 && !target.has_feature(Halide::Target::AVX512) &&
           !target.has_gpu_feature();
}

// The hand-off every generator makes to its schedule: the structure checked
// against the op's schema, then the knobs of the target's device read from
// the generator's knob GeneratorParams (`params`: a GRADTUNE_GENERATOR_KNOBS
// struct) and checked against the space -- on an x86 target without AVX-512
// the avx2_<knob> ones where any is set -- and for a CPU target with a
// smaller register file than AVX-512's, fitted to it (a variant compiled for
// several targets -- AVX-512 and the AVX2 baseline -- keeps its setting on
// AVX-512 and gets a tile that fits on AVX2).
template <typename GeneratorKnobs>
Knobs checked_knobs(std::string_view op_name, const Structure &structure, const GeneratorKnobs &params,
                    const Halide::Target &target) {
    const OpSchema *op = find_op(op_name);
    _halide_user_assert(op) << "no op named " << op_name;
    const std::string why = op->check_structure(structure);
    _halide_user_assert(why.empty()) << why;
    const Device device = device_of(target);
    const KnobSpace space = op->space(device, structure);
    std::map<std::string, int> values = params.values();
    if (avx2_class(target)) {
        const std::map<std::string, int> avx2 = params.avx2_values();
        const bool tuned_for_avx2 =
            std::any_of(avx2.begin(), avx2.end(), [](const auto &knob) { return knob.second != kSpaceDefault; });
        if (tuned_for_avx2) values = avx2;
    }
    const Knobs knobs = read_knobs(space, values);
    if (device != Device::cpu) return knobs;
    return fit_register_file(space, knobs, accumulator_bytes(structure.dtype), register_file(target));
}

}  // namespace gradtune
