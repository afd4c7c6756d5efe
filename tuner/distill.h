// `gradtune distill`: the best trial per (op, device, structure, shape) of
// the trials log -> schedules/records/<target class>/<op>.json.
#pragma once

#include <string>

namespace gradtune::tooling {

struct DistillOptions {
    std::string log_path;
    std::string records_dir;
};

int distill(const DistillOptions &options);

}  // namespace gradtune::tooling
