// Tap phases of a strided backprop-input gather (generators/common/window.h):
// with a compile-time stride s > 1, output positions v and v + s use the
// same filter taps, neighbours do not. A register tile that mixes phases
// evaluates a different tap predicate at every position; one that visits a
// phase at a time has uniform predicates and a constant tap count.
#pragma once

#include "Halide.h"

#include <string>
#include <vector>

namespace gradtune {

// Splits `v` of `stage` as v = v_min + s * quotient + phase: the quotient
// joins the register tile (`tile`), the phase loop goes outside the
// reduction (`phases`). The tile need not be a multiple of s (GuardWithIf).
// Returns false, splitting nothing, for a stride of 0 (run time) or 1.
inline bool split_phases(Halide::Stage stage, const Halide::Var &v, int stride, const std::string &name,
                         std::vector<Halide::VarOrRVar> *tile, std::vector<Halide::VarOrRVar> *phases) {
    if (stride <= 1) return false;
    Halide::Var quotient(name + "_quot"), phase(name + "_phase");
    stage.split(v, quotient, phase, stride, Halide::TailStrategy::GuardWithIf);
    tile->push_back(quotient);
    phases->push_back(phase);
    return true;
}

}  // namespace gradtune
