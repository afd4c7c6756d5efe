// libFuzzer target: the gradtune command line itself (CLI11, through
// tuner/command_line.cpp), with argv built from the input: one argument per
// line. Only parsed, never run. A finding: a crash, a sanitizer report, an
// exception, an exit status other than 0 (help) or 2 (a usage error), a usage
// error without a message, or a command accepted with numbers its run would
// trip over (a shard outside 0 <= K < N, a non-positive timeout, --remeasure
// outside 0-16).
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.h"

namespace {

using gradtune::tooling::CommandLine;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::vector<std::string> args{"gradtune"};
    args.emplace_back();
    for (size_t i = 0; i < size && args.size() < 64; i++) {
        if (data[i] == '\n') {
            args.emplace_back();
        } else {
            args.back().push_back(static_cast<char>(data[i]));
        }
    }
    std::vector<const char *> argv;
    for (const std::string &a : args) argv.push_back(a.c_str());
    argv.push_back(nullptr);

    CommandLine c;
    std::ostringstream out, err;
    const gradtune::tooling::CommandLineDefaults defaults{"log.jsonl", "candidates", "records", "defaults"};
    const std::optional<int> exit_now =
        gradtune::tooling::parse_command_line(static_cast<int>(args.size()), argv.data(), defaults, &c, out, err);
    if (exit_now) {
        check(*exit_now == 0 || *exit_now == 2);
        check(*exit_now == 0 || !err.str().empty());
        return 0;
    }
    if (c.command == CommandLine::Command::tune) {
        check(c.tune.shards >= 1 && c.tune.shard >= 0 && c.tune.shard < c.tune.shards);
        check(c.tune.measure_timeout_s > 0);
    }
    if (c.command == CommandLine::Command::distill) check(c.distill.remeasure >= 0 && c.distill.remeasure <= 16);
    // Names and paths (an empty op, an empty -o) are the commands' to
    // refuse: run_cli_test.sh and fuzz_cli check that they do.
    return 0;
}
