// The list of ops gradtune compiles. Each op's schema (dtypes, layouts,
// structural parameters, knob spaces) lives in schedules/<op>_space.cpp.
#include "knob_space.h"

namespace gradtune {

OpSchema depthwise_conv2d_native_backprop_input_schema();

const std::vector<OpSchema> &all_ops() {
    static const std::vector<OpSchema> ops = {
        depthwise_conv2d_native_backprop_input_schema(),
    };
    return ops;
}

}  // namespace gradtune
