// What this build compiles with: the generator executable, the target
// strings, the Halide version and the source hash of each op. The tuner
// compiles candidates with exactly these, so that what it measures is what
// the build ships.
#pragma once

#include <map>
#include <string>

#include "gradtune/device.h"

namespace gradtune::tooling {

struct BuildInfo {
    std::string generator;       // path of gradtune_generators
    std::string cxx;             // C++ compiler (links candidate shared objects)
    std::string cpu_target, cuda_target;  // what the tuner compiles candidates for
    std::string cpu_targets;  // every target the build compiles CPU variants for, comma-separated
    std::string halide_version;
    std::string source_dir, records_dir;
    std::map<std::string, std::string> source_hash;  // op -> hash of its generator + schedule sources

    const std::string &target(Device device) const { return device == Device::cpu ? cpu_target : cuda_target; }
    std::string target_class() const;
    // schedules/defaults of the source tree: the structure defaults.
    std::string defaults_dir() const { return source_dir + "/schedules/defaults"; }
};

const BuildInfo &build_info();

// "AMD EPYC 9B45" from /proc/cpuinfo ("unknown" elsewhere).
std::string cpu_model();
// UTC, "2026-11-29T20:44:02Z".
std::string now_utc();

}  // namespace gradtune::tooling
