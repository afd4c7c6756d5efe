// gradtune: the command line.
//   gradtune tune      search knob settings for the suite, append to the trials log
//   gradtune distill   best trial per shape -> schedules/records/<class>/<op>.json
//   gradtune suite     a shape journal's signatures as a suite file
//   gradtune merge     one trials log from several (shards, machines)
//   gradtune run       one op call on .npy tensors
//   gradtune variants  the compiled variants of this build
//   gradtune space     an op's knob space
#include <CLI/CLI.hpp>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <iostream>
#include <map>
#include <unistd.h>

#include "build_info.h"
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
    CLI::App app{"gradtune: tuned Halide kernels for TensorFlow's convolution and pooling gradients"};
    app.require_subcommand(1);

    TuneOptions tune_options;
    tune_options.log_path = default_log_path();
    tune_options.work_dir = build_info().source_dir + "/.gradtune/candidates";
    // Shorter samples than the benchmark's: measuring, not compiling, bounds
    // the candidate rate once batches share their reference and generic
    // timings; 5 interleaved samples of 10 ms still give medians within a few
    // percent (the spread is logged with every trial).
    tune_options.measure.samples = 5;
    tune_options.measure.min_sample_ms = 10;
    std::string device = "cpu";
    auto *tune_cmd = app.add_subcommand("tune", "search knob settings for the suite's shapes");
    tune_cmd->add_option("--op", tune_options.ops, "ops to tune (default: every op of the suite)");
    tune_cmd->add_option("--batch", tune_options.batches, "batch sizes of the default suite")->capture_default_str();
    tune_cmd->add_option("--suite", tune_options.suite_path, "a suite file instead of the default suite");
    auto *from_journal = tune_cmd->add_option("--from-journal", tune_options.journal_path,
                                              "tune the signatures of a shape journal (GRADTUNE_JOURNAL=path)");
    from_journal->excludes(tune_cmd->get_option("--suite"));
    tune_cmd->add_option("--top", tune_options.top, "with --from-journal: only the K signatures with the most time")
        ->needs(from_journal);
    tune_cmd->add_option("--budget", tune_options.budget_s, "wall-clock budget in seconds")->capture_default_str();
    tune_cmd->add_option("--max-trials", tune_options.max_trials, "candidates at most, counting those already in the log (0: no limit)");
    tune_cmd->add_option("--log", tune_options.log_path, "trials log")->capture_default_str();
    tune_cmd->add_option("--work-dir", tune_options.work_dir, "where candidates are compiled");
    tune_cmd->add_option("--seed", tune_options.seed, "sampling seed")->capture_default_str();
    std::string shard;
    tune_cmd->add_option("--shard", shard,
                         "K/N: tune only every N-th structure group of the suite, from the K-th (0 <= K < N); "
                         "`gradtune merge` joins the shards' logs");
    tune_cmd->add_option("--device", device, "cpu or cuda")->capture_default_str();
    tune_cmd->add_option("--jobs", tune_options.jobs, "parallel compiles")->capture_default_str();
    tune_cmd->add_option("--batch-size", tune_options.batch_size, "candidates compiled, then measured together")
        ->capture_default_str();
    tune_cmd->add_option("--compile-timeout", tune_options.compile_timeout_s, "seconds before a compile is dropped")
        ->capture_default_str();
    tune_cmd
        ->add_option("--measure-timeout", tune_options.measure_timeout_s,
                     "seconds before a measuring process is killed; the candidate it was running is logged failed")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    tune_cmd->add_option("--samples", tune_options.measure.samples, "timed samples per candidate and shape")
        ->capture_default_str();
    tune_cmd->add_option("--min-sample-ms", tune_options.measure.min_sample_ms, "minimum length of a sample")
        ->capture_default_str();
    tune_cmd
        ->add_option("--slow-factor", tune_options.measure.slow_factor,
                     "a candidate whose first call takes this many times the generic's is logged slow, not timed")
        ->capture_default_str();

    DistillOptions distill_options{default_log_path(), build_info().records_dir, build_info().defaults_dir()};
    auto *distill_cmd = app.add_subcommand("distill", "best trial per shape -> committed records");
    distill_cmd->add_option("--log", distill_options.log_path, "trials log")->capture_default_str();
    distill_cmd->add_option("--records-dir", distill_options.records_dir, "records root")->capture_default_str();
    distill_cmd
        ->add_option("--defaults-dir", distill_options.defaults_dir,
                     "structure defaults (one setting per structure group); empty to leave them alone")
        ->capture_default_str();
    distill_cmd
        ->add_option("--min-speedup", distill_options.min_speedup,
                     "keep a record only if it beats the generic variant by this factor")
        ->capture_default_str();
    distill_options.work_dir = tune_options.work_dir;
    distill_options.measure = tune_options.measure;
    distill_cmd
        ->add_option("--remeasure", distill_options.remeasure,
                     "time each shape's K best settings again side by side and keep the fastest (0: trust the log)")
        ->capture_default_str()
        ->check(CLI::Range(0, 16));
    distill_cmd->add_option("--work-dir", distill_options.work_dir, "with --remeasure: where settings are compiled");

    std::string run_op;
    std::vector<std::string> run_args, run_outputs;
    auto *run_cmd = app.add_subcommand("run", "run one op on .npy tensors: gradtune run OP name=value ... -o out.npy");
    run_cmd->add_option("op", run_op, "TF op name")->required();
    run_cmd->add_option("arguments", run_args, "inputs and attrs as name=value (tensors: .npy files or 1,2,3)");
    run_cmd->add_option("-o,--output", run_outputs, "output .npy file, one per op output in TF's order");

    std::string variants_op;
    std::string suite_journal, suite_output, suite_device = "cpu";
    int suite_top = 0;
    auto *suite_cmd = app.add_subcommand("suite", "write a shape journal's signatures as a suite file (for review)");
    suite_cmd->add_option("--from-journal", suite_journal, "the journal (GRADTUNE_JOURNAL=path)")->required();
    suite_cmd->add_option("--top", suite_top, "only the K signatures with the most time (0: all)");
    suite_cmd->add_option("--device", suite_device, "cpu or cuda")->capture_default_str();
    suite_cmd->add_option("-o,--output", suite_output, "the suite file (--suite of tune and the benchmark)")->required();

    MergeOptions merge_options;
    auto *merge_cmd = app.add_subcommand("merge", "one trials log from several (shards of a tuning job, machines)");
    merge_cmd->add_option("logs", merge_options.inputs, "trials logs")->required();
    merge_cmd->add_option("-o,--output", merge_options.output, "the merged log (may be one of the inputs)")->required();
    merge_cmd->add_flag("--mixed-classes", merge_options.mixed_classes,
                        "allow trials of several target classes in one log");

    auto *variants_cmd = app.add_subcommand("variants", "list the compiled variants of this build");
    variants_cmd->add_option("op", variants_op, "only this op");

    std::string space_op, space_device = "cpu";
    auto *space_cmd = app.add_subcommand("space", "print an op's knob space");
    space_cmd->add_option("op", space_op)->required();
    space_cmd->add_option("--device", space_device)->capture_default_str();

    std::string batch_path;
    auto *measure_cmd = app.add_subcommand("measure", "(internal) measure a batch of candidates");
    measure_cmd->group("");
    measure_cmd->add_option("--batch", batch_path)->required();

    // Usage errors exit 2, as every other refusal of the command does.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }

    try {
        if (*tune_cmd) {
            auto d = device_from_string(device);
            if (!d) {
                std::cerr << "gradtune tune: --device must be cpu or cuda\n";
                return 2;
            }
            tune_options.device = *d;
            if (!shard.empty()) {
                int k = -1, n = 0;
                char rest = 0;
                if (std::sscanf(shard.c_str(), "%d/%d%c", &k, &n, &rest) != 2 || n < 1 || k < 0 || k >= n) {
                    std::cerr << "gradtune tune: --shard must be K/N with 0 <= K < N, not '" << shard << "'\n";
                    return 2;
                }
                tune_options.shard = k;
                tune_options.shards = n;
            }
            tune_options.self = self_path(argv[0]);
            return tune(tune_options);
        }
        if (*distill_cmd) {
            distill_options.self = self_path(argv[0]);
            return distill(distill_options);
        }
        if (*suite_cmd) {
            JournalSuite journalled = journal_suite(suite_journal, suite_device, suite_top);
            for (const std::string &note : journalled.notes) std::cerr << "gradtune suite: " << note << "\n";
            write_suite(journalled.entries, suite_output);
            std::cerr << "gradtune suite: " << journalled.entries.size() << " signature(s) -> " << suite_output
                      << "\n";
            for (const SuiteEntry &e : journalled.entries)
                std::cout << e.name() << "  " << e.op << "  " << e.description << "\n";
            return 0;
        }
        if (*merge_cmd) return merge(merge_options);
        if (*run_cmd) return run_command(run_op, run_args, run_outputs);
        if (*measure_cmd) return measure_batch(batch_path);
        if (*variants_cmd) {
            std::cout << "target class: " << TargetClass() << "\n"
                      << "cpu targets: " << build_info().cpu_targets << "\n";
            for (const VariantInfo &v : Variants(variants_op)) {
                // Where its records came from: own class (exact) or others (transferred).
                std::map<std::string, int> classes;
                for (const TunedShapeInfo &t : v.tuned_for) classes[t.source_class]++;
                std::string role = v.generic ? "generic" : v.structure_default ? "structure default" : "";
                for (const auto &[klass, count] : classes) {
                    role += (role.empty() ? "" : ", ") + std::string(klass == TargetClass() ? "exact" : "transferred") +
                            " for " + std::to_string(count) + " shape(s)" +
                            (klass == TargetClass() ? "" : " from " + klass);
                }
                std::cout << v.name << "  " << to_string(v.device) << " " << v.dtype << " " << v.data_format << "  "
                          << role << "\n    " << v.knobs << "\n";
            }
            return 0;
        }
        if (*space_cmd) {
            const OpSchema *op = find_op(space_op);
            auto d = device_from_string(space_device);
            if (!op || !d) {
                std::cerr << "gradtune space: unknown op or device\n";
                return 2;
            }
            const bool has_f32 = std::find(op->dtypes.begin(), op->dtypes.end(), "float32") != op->dtypes.end();
            Structure generic{has_f32 ? "float32" : op->dtypes[0], op->data_formats[0], {}};
            for (const std::string &p : op->structure_params) generic.fixed[p] = 0;
            std::cout << op->name << " structural parameters (0 = from the call):";
            for (const std::string &p : op->structure_params) std::cout << " " << p;
            std::cout << "\n" << to_string(*d) << " knobs:\n";
            for (const Knob &k : op->space(*d, generic).knobs) {
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
