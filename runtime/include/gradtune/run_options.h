// How a call runs: on which device, and (for tests, benchmarks and the tuner)
// which compiled variant.
#pragma once

#include <functional>
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
    // The knob setting it was compiled with, "name=value ..." (the form
    // gradtune::Variants() reports): the runtime fits some calls to the
    // kernel's tiles, as it does for the library's own variants.
    std::string knobs;
};

// Threads a caller lends a call for its parallel loops, instead of
// gradtune's own pool: a framework's intra-op threads (TensorFlow's
// OpKernelContext workers, in python/gradtune_tf), so that a call inside a
// training step runs on the threads the framework gives the op and no
// thread of gradtune's waits or spins beside the framework's own.
//
// A loop runs its iterations on the calling thread and on up to Threads() - 1
// helpers handed to Schedule(); it waits only for iterations a helper has
// already started, never for a helper to start, so a busy pool delays a
// call but cannot stall it. Schedule() may run the work at any later time,
// even after the call returned (it then finds nothing left to do).
class ParallelRunner {
public:
    virtual ~ParallelRunner() = default;
    // The threads a loop may use, the calling thread included (>= 1).
    virtual int Threads() const = 0;
    // Runs `work` once, on another thread, soon.
    virtual void Schedule(std::function<void()> work) = 0;
};

// The threads a call's parallel loops run on, the caller included, where it
// lends no ParallelRunner: gradtune's own pool (HL_NUM_THREADS, else the
// host's cores). The tuner and the benchmark report it.
int PoolThreads();

struct RunOptions {
    Device device = Device::cpu;
    // "" lets dispatch choose (exact tuned shape, nearest tuned shape with the
    // same structure, else the generic variant). A variant name forces that
    // variant; the call fails if it does not fit.
    std::string variant;
    const ExternalKernel *external_kernel = nullptr;
    // The CPU threads the call's parallel loops run on (nullptr: gradtune's
    // pool, HL_NUM_THREADS threads). Not owned; must outlive the call.
    ParallelRunner *parallel = nullptr;
    // Where dispatch would serve a call from a record tuned for another
    // shape or machine class, time it on the call's first meeting of its
    // signature against the variant it displaces and keep the faster
    // (GRADTUNE_DISPATCH_PROBE=0 turns this off for the process). False:
    // the static choice, the same in every process.
    bool probe_dispatch = true;
};

}  // namespace gradtune
