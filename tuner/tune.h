// `gradtune tune`.
#pragma once

#include <string>
#include <vector>

#include "gradtune/device.h"
#include "measure.h"

namespace gradtune::tooling {

struct TuneOptions {
    std::vector<std::string> ops;         // empty: every op of the suite in this build
    std::vector<int64_t> batches{1, 32};  // batch sizes of the default suite
    std::string suite_path;               // a suite file instead of the default suite
    std::string journal_path;             // or the signatures of a shape journal (GRADTUNE_JOURNAL)
    int top = 0;                          // with journal_path: the `top` heaviest signatures (0: all)
    double budget_s = 300;                // wall-clock budget for the whole run
    int max_trials = 0;                   // candidates to measure at most (0 = no limit)
    bool record_seeds = true;             // seed with the structure defaults and every class's records
    std::string log_path;                 // trials log (JSON lines)
    std::string work_dir;                 // compiled candidates
    uint64_t seed = 1;
    // --shard K/N: this run tunes the structure groups K, K+N, K+2N, ... of
    // the suite (in suite order), each from the seeds and sampler state an
    // unsharded run with the same seed gives it; `gradtune merge` joins the
    // shards' logs.
    int shard = 0, shards = 1;
    Device device = Device::cpu;
    int jobs = 2;                         // parallel compiles (never while measuring)
    int batch_size = 4;                   // candidates compiled, then measured together
    double compile_timeout_s = kRecordCompileLimitS;  // a candidate compiling longer is dropped: it could not become a record
    double measure_timeout_s = 600;       // a measuring process running longer is killed: its candidate hung
    MeasureOptions measure;
    std::string self;                     // path of the gradtune executable (to spawn `measure`)
};

int tune(const TuneOptions &options);

// Everything one error message: the log file a tune run uses by default.
std::string default_log_path();

}  // namespace gradtune::tooling
