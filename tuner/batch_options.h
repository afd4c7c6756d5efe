// What the batch runner (batch.h) needs to know of a tuning run: where and how
// to compile candidates, how to measure them, and the run's budget. `gradtune
// tune`'s TuneOptions (tune.h) extends it with what to tune.
#pragma once

#include <cstdint>
#include <string>

#include "measure.h"

namespace gradtune::tooling {

struct BatchOptions {
    double budget_s = 300;  // wall-clock budget for the whole run
    std::string work_dir;   // compiled candidates
    uint64_t seed = 1;      // sampling seed, logged with each trial
    int jobs = 2;           // parallel compiles (never while measuring)
    double compile_timeout_s = kRecordCompileLimitS;  // a candidate compiling longer is dropped: it could not become a record
    double measure_timeout_s = 600;  // a measuring process running longer is killed: its candidate hung
    MeasureOptions measure;
    std::string self;  // path of the gradtune executable (to spawn `measure`)
};

}  // namespace gradtune::tooling
