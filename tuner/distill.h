// `gradtune distill`: the best trial per (op, device, structure, shape) of
// the trials log -> schedules/records/<target class>/<op>.json, and per
// structure group the setting with the best worst case over the group's
// shapes -> schedules/defaults/<op>.json (the structure defaults). "Best" is
// the lowest time relative to the generic variant timed beside the trial:
// absolute times of different runs are not comparable.
#pragma once

#include <string>

namespace gradtune::tooling {

struct DistillOptions {
    std::string log_path;
    std::string records_dir;
    std::string defaults_dir;  // empty: leave the structure defaults alone
    // A record must beat the generic variant, measured in the same run, by
    // this factor: a tuned kernel that is not faster only costs build time
    // and binary size (and within the noise it is not faster).
    double min_speedup = 1.03;
};

int distill(const DistillOptions &options);

}  // namespace gradtune::tooling
