// The gradtune command line, parsed apart from running it: main() runs what
// parse_command_line returns, and tests/fuzz/fuzz_argv.cpp parses any argv
// with it (a crash or an exception is a finding; every refusal is exit 2).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "distill.h"
#include "gradtune/device.h"
#include "merge.h"
#include "tune.h"

namespace gradtune::tooling {

struct CommandLine {
    enum class Command { tune, distill, suite, merge, run, measure, variants, space };
    Command command = Command::variants;
    TuneOptions tune;  // --device and --shard already checked and set
    DistillOptions distill;
    MergeOptions merge;
    std::string run_op;
    std::vector<std::string> run_args, run_outputs;
    std::string suite_journal, suite_output, suite_device = "cpu";
    int suite_top = 0;
    std::string variants_op;
    std::string space_op;
    Device space_device = Device::cpu;
    std::string batch_path;  // measure (internal)
};

// Where the commands' paths point by default (main: the build's; a test:
// anything).
struct CommandLineDefaults {
    std::string log_path, work_dir, records_dir, defaults_dir;
};

// Parses argv into `out`. Returns nothing when the command is to run, or the
// exit status to end with at once: 0 after --help, 2 for a usage error (its
// message written to `err`, help to `out_text`). Never throws.
std::optional<int> parse_command_line(int argc, const char *const *argv, const CommandLineDefaults &defaults,
                                      CommandLine *out, std::ostream &out_text, std::ostream &err);

}  // namespace gradtune::tooling
