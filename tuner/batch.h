// The tuner's batch runner: one batch of one structure group's candidates,
// end to end. It compiles the candidates the library does not hold (in
// parallel), measures them all in a child process (`gradtune measure`) with
// nothing else running, reads the child's results and appends them to the
// trials log. A candidate the child crashed or hung in is logged as failed;
// one the budget cut short comes back to be handed out again.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batch_options.h"
#include "candidates.h"
#include "gradtune/op_call.h"
#include "search.h"
#include "suite.h"
#include "trials.h"

namespace gradtune::tooling {

// One structure group of the suite: its shapes share every compiled kernel,
// and one search strategy draws its candidates.
struct Group {
    std::string op;
    Device device = Device::cpu;
    Structure structure;
    std::vector<const SuiteEntry *> shapes;
    std::vector<CallInfo> infos;  // per shape
    std::unique_ptr<SearchStrategy> search;

    std::string label() const;
    // A trial of `knobs` on shape `s`, measured with `evict_mb`
    // (MeasureOptions), as the log names it (no result yet).
    Trial trial(const Knobs &knobs, size_t s, double evict_mb) const;
};

// The name of the library's variant that is this candidate, if the build
// holds one (the structure defaults and every class's records usually are):
// the tuner measures that code, as shipped, at no compile cost.
std::string library_variant(const Group &g, const Knobs &knobs);

struct BatchOutcome {
    std::vector<Trial> logged;        // appended to the log, in order
    std::vector<Knobs> not_measured;  // cut short by the budget, or measured by a child that died: again later
    int measured = 0;                 // candidates with a result on every shape
    int from_library = 0;             // candidates measured as the library's own variants
    double compile_s = 0, measure_s = 0;
};

class BatchRunner {
public:
    // The budget counts from `start`; compiles and measuring children are cut
    // short when it is spent.
    BatchRunner(const BatchOptions &options, TrialLog *log, std::chrono::steady_clock::time_point start);
    ~BatchRunner();  // removes the cached reference outputs
    BatchRunner(const BatchRunner &) = delete;
    BatchRunner &operator=(const BatchRunner &) = delete;

    BatchOutcome run(const Group &g, const std::vector<Knobs> &batch);

private:
    std::vector<CompiledCandidate> compile(const Group &g, const std::vector<Knobs> &batch, BatchOutcome *out);
    nlohmann::json batch_file(const Group &g, const std::vector<CompiledCandidate> &compiled, BatchOutcome *out);
    void measure(const Group &g, const std::vector<CompiledCandidate> &compiled, const nlohmann::json &batch,
                 BatchOutcome *out);
    std::string shape_key(const Group &g, size_t s) const;
    double seconds_left() const;

    const BatchOptions &options_;
    TrialLog &log_;
    std::chrono::steady_clock::time_point start_;
    // The generic variant is timed and run for reference once per shape and
    // run, not in every batch: at N=32 one generic call of a large dense
    // gradient takes seconds. Its outputs wait in <work dir>/reference.
    std::string reference_dir_;
    std::map<std::string, nlohmann::json> generic_timing_;  // shape key -> {median_ms, spread_pct}
};

// `gradtune measure --batch FILE`, the measuring child (measure_batch.cpp):
// checks and times the candidates of a batch file on its shapes against the
// generic variant, printing one JSON line per result.
int measure_batch(const std::string &batch_path);

}  // namespace gradtune::tooling
