// The trials log: append-only JSON lines, one per measured (candidate,
// shape). It is the tuner's checkpoint: a killed run resumes from it and
// never measures a logged candidate again.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "knob_space.h"
#include "records.h"  // knobs_text

namespace gradtune::tooling {

// A trial's result: ok (timed), slow (one call took more than the slow
// factor times the fastest so far, so it was not timed; median_ms is that one
// call), wrong (differs from the generic variant), failed (the call returned
// an error, or its measuring process died) or compile_error.
enum class TrialStatus { ok, slow, wrong, failed, compile_error };
const char *to_string(TrialStatus status);
TrialStatus trial_status_from_string(const std::string &text);  // throws on an unknown name

struct Trial {
    // What was measured.
    std::string op;
    Device device = Device::cpu;
    Structure structure;
    Knobs knobs;
    std::string shape_id;  // suite name, e.g. "D1/N32"
    std::string padding;
    std::map<std::string, int64_t> shape;
    nlohmann::json call;
    // Where and with what.
    std::string target, cpu_model, halide_version;
    int knob_space_version = 1;  // validity, as for records
    std::string source_hash;     // provenance only
    int threads = 0;
    // How: MiB every kernel thread wrote before each timed call (0: warm
    // caches; MeasureOptions::evict_mb). Part of the measurement's identity:
    // a cold trial is neither resumed as a warm one nor compared with it.
    double evict_mb = 0;
    // Result.
    TrialStatus status = TrialStatus::failed;
    std::string error;
    double median_ms = 0, min_ms = 0, spread_pct = 0;
    double generic_median_ms = 0, generic_spread_pct = 0;
    int samples = 0, iterations = 0;
    double compile_s = 0;
    std::string timestamp;
    uint64_t seed = 0;

    // Identifies the compiled kernel (op, device, structure, knobs, target,
    // knob-space version, Halide) and the measurement (+ shape). Not the
    // source hash: a refactor keeps the log's trials, as it keeps records.
    std::string candidate_key() const;
    std::string measurement_key() const;
    std::string shape_key() const;
};

nlohmann::json to_json(const Trial &t);
// The result fields of one line that `gradtune measure` printed for a
// candidate on a shape (status, error, times, samples, threads) into `t`.
void read_measurement(const nlohmann::json &result, Trial *t);
Trial trial_from_json(const nlohmann::json &j);

class TrialLog {
public:
    explicit TrialLog(std::string path);
    const std::vector<Trial> &trials() const { return trials_; }
    bool measured(const std::string &measurement_key) const { return keys_.count(measurement_key) > 0; }
    // Appends one line and flushes it to disk before returning.
    void append(const Trial &t);
    // The trials of one candidate on every shape of its group: one write.
    void append(const std::vector<Trial> &trials);
    const std::string &path() const { return path_; }
    int malformed_lines() const { return malformed_; }

private:
    std::string path_;
    std::vector<Trial> trials_;
    std::set<std::string> keys_;
    int malformed_ = 0;
};

}  // namespace gradtune::tooling
