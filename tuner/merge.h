// gradtune merge: one trials log from several (shards of one tuning job, or
// the logs of several machines). The result depends only on the set of
// trials read, not on the order of the inputs or of their lines: each
// measurement (measurement_key) is kept once, the earliest by timestamp
// (ties: by its JSON text), and the lines are written sorted the same way,
// in the log's own JSON form. Merging a merged log again changes nothing.
#pragma once

#include <string>
#include <vector>

namespace gradtune::tooling {

struct MergeOptions {
    std::vector<std::string> inputs;
    std::string output;        // may be one of the inputs: every input is read first
    bool mixed_classes = false;  // allow trials of several target classes in one log
};

// Exit status: 0, or 2 (a missing input, classes mixed without
// mixed_classes, an output that cannot be written; nothing is written then).
int merge(const MergeOptions &options);

}  // namespace gradtune::tooling
