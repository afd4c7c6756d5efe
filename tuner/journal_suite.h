// Reading the shape journal that the runtime writes under GRADTUNE_JOURNAL
// (runtime/src/journal.h): the journalled call signatures, heaviest first,
// as a suite the tuner and the benchmark take like any suite file.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "suite.h"

namespace gradtune::tooling {

struct JournalSuite {
    std::vector<SuiteEntry> entries;  // by total time spent, largest first
    std::vector<std::string> notes;   // lines skipped and signatures left out, with the reason
};

// The signatures of `path` run on `device` ("cpu" or "cuda"), the `top` with
// the most time spent (0: all). A line cut short or unreadable is skipped with
// a note; a file that cannot be read throws std::runtime_error.
JournalSuite journal_suite(const std::string &path, const std::string &device, int top);

// A suite in the JSON form load_suite() reads.
void write_suite(const std::vector<SuiteEntry> &suite, const std::string &path);

}  // namespace gradtune::tooling
