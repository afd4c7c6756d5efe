// gradtune: the command line.
//   gradtune tune      search knob settings for the suite, append to the trials log
//   gradtune distill   best trial per shape -> schedules/records/<class>/<op>.json
//   gradtune suite     a shape journal's signatures as a suite file
//   gradtune merge     one trials log from several (shards, machines)
//   gradtune run       one op call on .npy tensors
//   gradtune variants  the compiled variants of this build
//   gradtune space     an op's knob space
#include <algorithm>
#include <climits>
#include <cstdio>
#include <iostream>
#include <map>
#include <unistd.h>

#include "batch.h"
#include "build_info.h"
#include "command_line.h"
#include "distill.h"
#include "journal_suite.h"
#include "merge.h"
#include "gradtune/variants.h"
#include "knob_space.h"
#include "run_command.h"
#include "tune.h"

using namespace gradtune;
using namespace gradtune::tooling;

namespace {

std::string self_path(const char *argv0) {
    char buffer[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    if (n <= 0) return argv0;
    buffer[n] = '\0';
    return buffer;
}

}  // namespace

int main(int argc, char **argv) {
    CommandLine c;
    const CommandLineDefaults defaults{default_log_path(), build_info().source_dir + "/.gradtune/candidates",
                                       build_info().records_dir, build_info().defaults_dir()};
    if (const std::optional<int> exit_now = parse_command_line(argc, argv, defaults, &c, std::cout, std::cerr))
        return *exit_now;

    using Command = CommandLine::Command;
    try {
        if (c.command == Command::tune) {
            c.tune.self = self_path(argv[0]);
            return tune(c.tune);
        }
        if (c.command == Command::distill) {
            c.distill.self = self_path(argv[0]);
            return distill(c.distill);
        }
        if (c.command == Command::suite) {
            JournalSuite journalled = journal_suite(c.suite_journal, c.suite_device, c.suite_top);
            for (const std::string &note : journalled.notes) std::cerr << "gradtune suite: " << note << "\n";
            write_suite(journalled.entries, c.suite_output);
            std::cerr << "gradtune suite: " << journalled.entries.size() << " signature(s) -> " << c.suite_output
                      << "\n";
            for (const SuiteEntry &e : journalled.entries)
                std::cout << e.name() << "  " << e.op << "  " << e.description << "\n";
            return 0;
        }
        if (c.command == Command::merge) return merge(c.merge);
        if (c.command == Command::run) return run_command(c.run_op, c.run_args, c.run_outputs);
        if (c.command == Command::measure) return measure_batch(c.batch_path);
        if (c.command == Command::variants) {
            std::cout << "target class: " << TargetClass() << "\n"
                      << "cpu targets: " << build_info().cpu_targets << "\n";
            for (const VariantInfo &v : Variants(c.variants_op)) {
                // Where its records came from: own class (exact) or others (transferred).
                std::map<std::string, int> classes;
                for (const TunedShapeInfo &t : v.tuned_for) classes[t.source_class]++;
                std::string role = v.generic ? "generic" : v.structure_default ? "structure default" : "";
                for (const auto &[klass, count] : classes) {
                    role += (role.empty() ? "" : ", ") + std::string(klass == TargetClass() ? "exact" : "transferred") +
                            " for " + std::to_string(count) + " shape(s)" +
                            (klass == TargetClass() ? "" : " from " + klass);
                }
                if (!v.runs_here) role += " (not on this CPU: compiled for the build machine's CPU only)";
                std::cout << v.name << "  " << to_string(v.device) << " " << v.dtype << " " << v.data_format << "  "
                          << role << "\n    " << v.knobs << "\n";
            }
            return 0;
        }
        if (c.command == Command::space) {
            const OpSchema *op = find_op(c.space_op);
            if (!op) {
                std::cerr << "gradtune space: unknown op " << c.space_op << "\n";
                return 2;
            }
            const bool has_f32 = std::find(op->dtypes.begin(), op->dtypes.end(), "float32") != op->dtypes.end();
            Structure generic{has_f32 ? "float32" : op->dtypes[0], op->data_formats[0], {}};
            for (const std::string &p : op->structure_params) generic.fixed[p] = 0;
            std::cout << op->name << " structural parameters (0 = from the call):";
            for (const std::string &p : op->structure_params) std::cout << " " << p;
            std::cout << "\n" << to_string(c.space_device) << " knobs:\n";
            for (const Knob &k : op->space(c.space_device, generic).knobs) {
                std::cout << "  " << k.name << " {";
                for (size_t i = 0; i < k.values.size(); i++) std::cout << (i ? "," : "") << k.values[i];
                std::cout << "} default " << k.default_value << ": " << k.why << "\n";
            }
            return 0;
        }
    } catch (const std::exception &e) {
        std::cerr << "gradtune: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
