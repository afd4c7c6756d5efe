// Reading the shape journal that the runtime writes under GRADTUNE_JOURNAL
// (runtime/src/journal.h): the journalled call signatures, heaviest first,
// as a suite the tuner and the benchmark take like any suite file.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "suite.h"

namespace gradtune::tooling {

// What the suite readers need to know of an op, from what it declares (its
// structural parameters in schedules/, its inputs in the runtime's OpSpec),
// not from its name: a new op of a family they know needs no code here.
struct OpTraits {
    bool pooling = false;             // declares `overlapping`: fractional pooling
    bool depthwise = false;           // declares `depth_multiplier`
    std::vector<std::string> inputs;  // TF's input names, in order
    bool takes(const std::string &input) const;
};

// Throws std::runtime_error for an op that the schedules or the runtime do
// not know.
OpTraits op_traits(const std::string &op);

struct JournalSuite {
    std::vector<SuiteEntry> entries;  // by total time spent, largest first
    std::vector<std::string> notes;   // lines skipped and signatures left out, with the reason
};

// The signatures of `path` run on `device` ("cpu" or "cuda"), the `top` with
// the most time spent (0: all). A line cut short or unreadable is skipped with
// a note; a file that cannot be read throws std::runtime_error.
JournalSuite journal_suite(const std::string &path, const std::string &device, int top);

// A call from its signature, {"op", "T", "data_format", "structure",
// "padding", "shape"} as the runtime describes it (CallInfo): the calls of
// journal suites and of text suite files. Throws std::runtime_error where a
// signature cannot be rebuilt (EXPLICIT padding, an op without a rule, a size
// out of 1 .. 2^24).
SuiteEntry entry_from_signature(const nlohmann::json &signature);

// A suite in the JSON form load_suite() reads.
void write_suite(const std::vector<SuiteEntry> &suite, const std::string &path);

}  // namespace gradtune::tooling
