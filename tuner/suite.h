// The default tuning and benchmark suite (spec/benchmark-shapes.md): the
// shapes users of these gradients meet most, fp32 NHWC, each at N=1 and N=32.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gradtune::tooling {

struct SuiteEntry {
    std::string id;           // "D1", "C5", "F2b", ...
    std::string op;           // TF op name
    int64_t batch = 1;
    std::string description;  // "112x112x32 k3 s1"
    nlohmann::json call;      // see call_json.h
    double flops = 0;         // useful floating-point operations per call
    double bytes = 0;         // compulsory memory traffic per call (inputs + outputs once)
    bool memory_bound = false;

    std::string name() const { return id + "/N" + std::to_string(batch); }
};

// Every row of the default suite for `ops` (empty = all ops) at each batch size.
std::vector<SuiteEntry> default_suite(const std::vector<std::string> &ops = {},
                                      const std::vector<int64_t> &batches = {1, 32});

// A suite from a JSON file: [{"id": ..., "call": {...}, "batch": N, "description": ...,
// and optionally "flops", "bytes", "memory_bound"}, ...].
std::vector<SuiteEntry> load_suite(const std::string &path);

}  // namespace gradtune::tooling
