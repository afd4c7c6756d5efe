// The list of ops gradtune compiles, one per generators/<stem>_generator.cpp
// (found by cmake/GradtuneOps.cmake, through the generated op_list.inc and
// op_spaces.inc). Each op's schema (dtypes, layouts, structural parameters,
// knob spaces) is <stem>_schema() in schedules/<stem>.h (its Halide-free part).
#include "knob_space.h"
#include "op_spaces.inc"

namespace gradtune {

const std::vector<OpSchema> &all_ops() {
    static const std::vector<OpSchema> ops = {
#define GRADTUNE_OP(name, stem) stem##_schema(),
#include "op_list.inc"
#undef GRADTUNE_OP
    };
    return ops;
}

}  // namespace gradtune
