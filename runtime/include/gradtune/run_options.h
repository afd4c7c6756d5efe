// How a call runs: on which device, and (for tests, benchmarks and the tuner)
// which compiled variant.
#pragma once

#include <map>
#include <string>

#include "gradtune/device.h"

namespace gradtune {

// A kernel compiled outside this library with the same generator (the tuner
// measures candidates through the same runtime code that ships).
struct ExternalKernel {
    std::string name;
    void (*function)() = nullptr;  // the op's Halide C signature, cast
    std::string dtype, data_format;
    std::map<std::string, int> structure;  // structural values it was compiled with
    Device device = Device::cpu;
};

struct RunOptions {
    Device device = Device::cpu;
    // "" lets dispatch choose (exact tuned shape, nearest tuned shape with the
    // same structure, else the generic variant). A variant name forces that
    // variant; the call fails if it does not fit.
    std::string variant;
    const ExternalKernel *external_kernel = nullptr;
};

}  // namespace gradtune
