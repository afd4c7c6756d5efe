// The compiled variants of this build, generated at configure time from the
// records (tuner/records_tool.cpp). One list drives the build, the runtime's
// dispatch and the tests (docs/design.md section 4, rule 5).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gradtune/device.h"

namespace gradtune::internal {

// Every variant of an op shares the op's C signature (its generator's Inputs
// and Outputs); the op's runtime code casts back to that signature.
using KernelFunction = void (*)();

struct Kernel {
    const char *op;
    const char *name;
    Device device;
    const char *dtype;        // float32, float64, ...
    const char *data_format;  // NHWC or NCHW
    // Structural values; 0 = taken from the call (any value fits).
    std::vector<std::pair<const char *, int>> structure;
    const char *knobs;  // "name=value ..." for reports
    // The structure default (schedules/defaults/): serves calls of its
    // structure that no record of any class covers.
    bool structure_default;
    KernelFunction function;
    // Compiled only for the targets of tuned_cpu_target_features() (a tuned
    // record, where the build gives those fewer targets than the rest): a CPU
    // that can use none of them must not call it.
    bool tuned_targets_only = false;
    // A structure default's setting on the AVX2 target ("name=value ...";
    // "": `knobs`, fitted to AVX2's registers).
    const char *avx2_knobs = "";

    // How many structural parameters it fixes; none: the generic variant.
    int fixed_count() const {
        int fixed = 0;
        for (const auto &entry : structure) fixed += entry.second != 0;
        return fixed;
    }
    bool generic() const { return fixed_count() == 0; }
};

// A shape the tuner measured (one per distilled record) and the kernel that
// serves it: the tuned kernel, or the generic one where that measured faster.
// source_class is the target class whose record it is: target_class() for
// this machine's own records, another class for a transferred one.
struct TunedShape {
    size_t kernel;         // index into kernels()
    const char *source_class;
    std::vector<std::pair<const char *, int>> structure;  // the record's structural values
    const char *padding;   // SAME, VALID or EXPLICIT
    std::vector<std::pair<const char *, int64_t>> shape;  // run-time sizes by name
    double median_ms;
    double generic_median_ms;
};

// A kernel's knob setting as it runs on this CPU: its AVX2 setting where the
// CPU runs the AVX2 baseline and it has one, else its own.
const char *running_knobs(const Kernel &kernel);

const char *target_class();
const std::vector<Kernel> &kernels();
const std::vector<TunedShape> &tuned_shapes();
// The halide_target_feature_* values of each target the tuned-only kernels
// are compiled for; empty when every kernel has every target.
const std::vector<std::vector<int>> &tuned_cpu_target_features();

}  // namespace gradtune::internal
