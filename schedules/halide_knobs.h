// Glue between a generator's knob GeneratorParams and the Halide-free knob
// space (knob_space.h). Rule 2 of DESIGN.md: knobs are GeneratorParams with
// the names the records use, so a record becomes `PARAMS knob=value ...`.
#pragma once

#include "Halide.h"
#include "knob_space.h"

#include <map>
#include <string>

namespace gradtune {

// The knob values of `space`, read from a generator's knob GeneratorParams
// (`params`: name -> value). Fails generation with a clear message when a
// space knob has no GeneratorParam or the combination is illegal, so a
// variant that the configure step would refuse can never be compiled either.
inline Knobs read_knobs(const KnobSpace &space, const std::map<std::string, int> &params) {
    Knobs knobs;
    for (const Knob &knob : space.knobs) {
        auto it = params.find(knob.name);
        _halide_user_assert(it != params.end()) << "the generator has no GeneratorParam for knob '" << knob.name << "'";
        knobs[knob.name] = it->second;
    }
    std::string why = space.check(knobs);
    _halide_user_assert(why.empty()) << why;
    return knobs;
}

inline Device device_of(const Halide::Target &target) {
    return target.has_gpu_feature() ? Device::cuda : Device::cpu;
}

}  // namespace gradtune
