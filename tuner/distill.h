// `gradtune distill`: the best trial per (op, device, structure, shape) of
// the trials log -> schedules/records/<target class>/<op>.json, and per
// structure group the setting with the best worst case over the group's
// shapes -> schedules/defaults/<op>.json (the structure defaults). "Best" is
// the lowest time relative to the generic variant timed beside the trial:
// absolute times of different runs are not comparable.
#pragma once

#include <string>

#include "measure.h"

namespace gradtune::tooling {

struct DistillOptions {
    std::string log_path;
    std::string records_dir;
    std::string defaults_dir;  // empty: leave the structure defaults alone
    // A record must beat the generic variant, measured in the same run, by
    // this factor: a tuned kernel that is not faster only costs build time
    // and binary size (and within the noise it is not faster).
    double min_speedup = 1.03;
    // Nor may a setting that took longer than this to compile for one target
    // (the trial's compile_s; kRecordCompileLimitS says why). Trials of
    // library variants (compile_s 0: already built) are not affected.
    double max_compile_s = kRecordCompileLimitS;
    // Side by side before a record changes: where the log's best setting
    // for a shape is not its committed record (or is, but only by a trial
    // whose generic timing was an outlier), the `remeasure` best settings
    // of the log (0: none, trust the log) and the committed one are compiled
    // and timed again, interleaved in one measuring process, and the
    // fastest becomes the record (the committed one stays unless beaten by
    // 5 %). Relative times alone still pick settings
    // whose generic timing was slow by chance: of 55 records they changed
    // here, 19 were slower side by side than the ones they replaced.
    int remeasure = 0;
    std::string self;      // the gradtune executable (spawns `gradtune measure`)
    std::string work_dir;  // where the settings are compiled
    MeasureOptions measure;
};

int distill(const DistillOptions &options);

}  // namespace gradtune::tooling
