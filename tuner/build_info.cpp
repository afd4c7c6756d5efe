#include "build_info.h"

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "records.h"

namespace gradtune::tooling {

std::string BuildInfo::target_class() const { return gradtune::target_class(cpu_target); }

const BuildInfo &build_info() {
    static const BuildInfo info = [] {
        BuildInfo b;
        b.generator = GRADTUNE_GENERATOR_PATH;
        b.cxx = GRADTUNE_CXX_COMPILER;
        b.cpu_target = GRADTUNE_CPU_TARGET;
        b.cuda_target = GRADTUNE_CUDA_TARGET;
        b.cpu_targets = GRADTUNE_CPU_TARGET_LIST;
        // Held to AVX2 (GRADTUNE_MAX_CPU_ISA=avx2, as the runtime is), the
        // tuner compiles and measures for the library's AVX2 baseline target,
        // and its trials and records are that target's class.
        if (const char *isa = std::getenv("GRADTUNE_MAX_CPU_ISA"); isa && std::string(isa) == "avx2") {
            std::stringstream targets(b.cpu_targets);
            for (std::string t; std::getline(targets, t, ',');)
                if (class_isa(gradtune::target_class(t)) == "avx2") b.cpu_target = t;
        }
        b.halide_version = GRADTUNE_HALIDE_VERSION;
        b.source_dir = GRADTUNE_SOURCE_DIR;
        b.records_dir = GRADTUNE_RECORDS_DIR;
#define GRADTUNE_SOURCE_HASH(op, hash) b.source_hash[op] = hash;
#include "source_hashes.inc"
#undef GRADTUNE_SOURCE_HASH
        return b;
    }();
    return info;
}

std::string cpu_model() {
    static const std::string model = [] {
        std::ifstream in("/proc/cpuinfo");
        for (std::string line; std::getline(in, line);) {
            if (line.rfind("model name", 0) == 0) {
                auto colon = line.find(':');
                if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
            }
        }
        return std::string("unknown");
    }();
    return model;
}

std::string now_utc() {
    std::time_t t = std::time(nullptr);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buffer;
}

}  // namespace gradtune::tooling
