// `gradtune tune`.
#pragma once

#include <string>
#include <vector>

#include "batch_options.h"
#include "gradtune/device.h"

namespace gradtune::tooling {

// What to tune (here), and how to compile and measure it (BatchOptions).
struct TuneOptions : BatchOptions {
    std::vector<std::string> ops;         // empty: every op of the suite in this build
    std::vector<int64_t> batches{1, 32};  // batch sizes of the default suite
    std::string suite_path;               // a suite file instead of the default suite
    std::string journal_path;             // or the signatures of a shape journal (GRADTUNE_JOURNAL)
    int top = 0;                          // with journal_path: the `top` heaviest signatures (0: all)
    int max_trials = 0;                   // candidates to measure at most (0 = no limit)
    int batch_size = 4;                   // candidates compiled, then measured together
    bool record_seeds = true;             // seed with the structure defaults and every class's records
    std::string log_path;                 // trials log (JSON lines)
    // --shard K/N: this run tunes the structure groups K, K+N, K+2N, ... of
    // the suite (in suite order), each from the seeds and sampler state an
    // unsharded run with the same seed gives it; `gradtune merge` joins the
    // shards' logs.
    int shard = 0, shards = 1;
    Device device = Device::cpu;
};

int tune(const TuneOptions &options);

// The trials log a tune run uses by default:
// <source dir>/.gradtune/trials-<target class>.jsonl.
std::string default_log_path();

}  // namespace gradtune::tooling
