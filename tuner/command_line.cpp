#include "command_line.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <ostream>

namespace gradtune::tooling {

namespace {

// A usage error found after CLI11's parse: its message, exit status 2.
int refuse(std::ostream &err, const std::string &message) {
    err << message << "\n";
    return 2;
}

// Options read as text and checked after the parse (finish_options).
struct ReadLater {
    std::string tune_device = "cpu", shard, space_device = "cpu";
    bool no_record_seeds = false;
};

// `gradtune tune` and its options (defaults: the log and work directory of
// this build, shorter samples than the benchmark's).
CLI::App *add_tune_command(CLI::App &app, const CommandLineDefaults &defaults, CommandLine &c, ReadLater *later) {
    c.tune.log_path = defaults.log_path;
    c.tune.work_dir = defaults.work_dir;
    // Shorter samples than the benchmark's: measuring, not compiling, bounds
    // the candidate rate once batches share their reference and generic
    // timings; 5 interleaved samples of 10 ms still give medians within a few
    // percent (the spread is logged with every trial).
    c.tune.measure.samples = 5;
    c.tune.measure.min_sample_ms = 10;
    CLI::App *tune_cmd = app.add_subcommand("tune", "search knob settings for the suite's shapes");
    tune_cmd->add_option("--op", c.tune.ops, "ops to tune (default: every op of the suite)");
    tune_cmd->add_option("--batch", c.tune.batches, "batch sizes of the default suite")->capture_default_str();
    tune_cmd->add_option("--suite", c.tune.suite_path, "a suite file instead of the default suite");
    auto *from_journal = tune_cmd->add_option("--from-journal", c.tune.journal_path,
                                              "tune the signatures of a shape journal (GRADTUNE_JOURNAL=path)");
    from_journal->excludes(tune_cmd->get_option("--suite"));
    tune_cmd->add_option("--top", c.tune.top, "with --from-journal: only the K signatures with the most time")
        ->needs(from_journal);
    tune_cmd->add_option("--budget", c.tune.budget_s, "wall-clock budget in seconds")->capture_default_str();
    tune_cmd->add_option("--max-trials", c.tune.max_trials, "candidates at most, counting those already in the log (0: no limit)");
    tune_cmd->add_option("--log", c.tune.log_path, "trials log")->capture_default_str();
    tune_cmd->add_flag("--no-record-seeds", later->no_record_seeds,
                       "start from the space's defaults and algorithm seeds only, not from the structure defaults "
                       "and committed records");
    tune_cmd->add_option("--work-dir", c.tune.work_dir, "where candidates are compiled");
    tune_cmd->add_option("--seed", c.tune.seed, "sampling seed")->capture_default_str();
    tune_cmd->add_option("--shard", later->shard,
                         "K/N: tune only every N-th structure group of the suite, from the K-th (0 <= K < N); "
                         "`gradtune merge` joins the shards' logs");
    tune_cmd->add_option("--device", later->tune_device, "cpu or cuda")->capture_default_str();
    tune_cmd->add_option("--jobs", c.tune.jobs, "parallel compiles")->capture_default_str();
    tune_cmd->add_option("--batch-size", c.tune.batch_size, "candidates compiled, then measured together")
        ->capture_default_str();
    tune_cmd
        ->add_option("--compile-timeout", c.tune.compile_timeout_s,
                     "seconds before a compile is dropped (a setting compiling longer cannot become a record: "
                     "distill's --max-compile-s)")
        ->capture_default_str();
    tune_cmd
        ->add_option("--measure-timeout", c.tune.measure_timeout_s,
                     "seconds before a measuring process is killed; the candidate it was running is logged failed")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    tune_cmd->add_option("--samples", c.tune.measure.samples, "timed samples per candidate and shape")
        ->capture_default_str();
    tune_cmd->add_option("--min-sample-ms", c.tune.measure.min_sample_ms, "minimum length of a sample")
        ->capture_default_str();
    tune_cmd
        ->add_option("--evict-mb", c.tune.measure.evict_mb,
                     "before each timed call every thread writes this many MiB, as a training step's other ops "
                     "push the operands out of the caches: settings that stream well win (the log keeps each trial's value: "
                     "warm and cold trials never mix)")
        ->capture_default_str();
    tune_cmd
        ->add_option("--slow-factor", c.tune.measure.slow_factor,
                     "a candidate whose first call takes this many times the generic's is logged slow, not timed")
        ->capture_default_str();

    return tune_cmd;
}

// `gradtune distill` and its options; it measures as `tune` does, so it
// follows the tune options' defaults (add_tune_command first).
CLI::App *add_distill_command(CLI::App &app, const CommandLineDefaults &defaults, CommandLine &c) {
    c.distill.log_path = defaults.log_path;
    c.distill.records_dir = defaults.records_dir;
    c.distill.defaults_dir = defaults.defaults_dir;
    CLI::App *distill_cmd = app.add_subcommand("distill", "best trial per shape -> committed records");
    distill_cmd->add_option("--log", c.distill.log_path, "trials log")->capture_default_str();
    distill_cmd->add_option("--records-dir", c.distill.records_dir, "records root")->capture_default_str();
    distill_cmd
        ->add_option("--defaults-dir", c.distill.defaults_dir,
                     "structure defaults (one setting per structure group); empty to leave them alone")
        ->capture_default_str();
    distill_cmd
        ->add_option("--min-speedup", c.distill.min_speedup,
                     "keep a record only if it beats the generic variant by this factor")
        ->capture_default_str();
    distill_cmd
        ->add_option("--max-compile-s", c.distill.max_compile_s,
                     "no record or default from a setting that took longer than this to compile (every build "
                     "compiles each record for 2-3 CPU targets)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    c.distill.work_dir = c.tune.work_dir;
    c.distill.measure = c.tune.measure;
    distill_cmd
        ->add_option("--remeasure", c.distill.remeasure,
                     "time each shape's K best settings again side by side and keep the fastest (0: trust the log)")
        ->capture_default_str()
        ->check(CLI::Range(0, 16));
    distill_cmd->add_option("--work-dir", c.distill.work_dir, "with --remeasure: where settings are compiled");
    distill_cmd->add_option("--evict-mb", c.distill.measure.evict_mb,
                            "distill only the trials `gradtune tune --evict-mb` measured with this value (and remeasure so)")
        ->capture_default_str();

    return distill_cmd;
}

// What CLI11 cannot check: the values read as text, turned into the command's
// options. A usage error: its message, exit status 2.
std::optional<int> finish_options(const ReadLater &later, CommandLine &c, std::ostream &err) {
    if (c.command == CommandLine::Command::tune) {
        const std::optional<Device> d = device_from_string(later.tune_device);
        if (!d) return refuse(err, "gradtune tune: --device must be cpu or cuda");
        c.tune.device = *d;
        c.tune.record_seeds = !later.no_record_seeds;
        if (!later.shard.empty()) {
            int k = -1, n = 0;
            char rest = 0;
            if (std::sscanf(later.shard.c_str(), "%d/%d%c", &k, &n, &rest) != 2 || n < 1 || k < 0 || k >= n)
                return refuse(err, "gradtune tune: --shard must be K/N with 0 <= K < N, not '" + later.shard + "'");
            c.tune.shard = k;
            c.tune.shards = n;
        }
    }
    if (c.command == CommandLine::Command::space) {
        const std::optional<Device> d = device_from_string(later.space_device);
        if (!d) return refuse(err, "gradtune space: --device must be cpu or cuda");
        c.space_device = *d;
    }
    return std::nullopt;
}

}  // namespace

std::optional<int> parse_command_line(int argc, const char *const *argv, const CommandLineDefaults &defaults,
                                      CommandLine *out, std::ostream &out_text, std::ostream &err) {
    CommandLine &c = *out;
    CLI::App app{"gradtune: tuned Halide kernels for TensorFlow's convolution and pooling gradients"};
    app.require_subcommand(1);

    ReadLater later;
    CLI::App *tune_cmd = add_tune_command(app, defaults, c, &later);
    CLI::App *distill_cmd = add_distill_command(app, defaults, c);

    auto *run_cmd = app.add_subcommand("run", "run one op on .npy tensors: gradtune run OP name=value ... -o out.npy");
    run_cmd->add_option("op", c.run_op, "TF op name")->required();
    run_cmd->add_option("arguments", c.run_args, "inputs and attrs as name=value (tensors: .npy files or 1,2,3)");
    run_cmd->add_option("-o,--output", c.run_outputs, "output .npy file, one per op output in TF's order");

    auto *suite_cmd = app.add_subcommand("suite", "write a shape journal's signatures as a suite file (for review)");
    suite_cmd->add_option("--from-journal", c.suite_journal, "the journal (GRADTUNE_JOURNAL=path)")->required();
    suite_cmd->add_option("--top", c.suite_top, "only the K signatures with the most time (0: all)");
    suite_cmd->add_option("--device", c.suite_device, "cpu or cuda")->capture_default_str();
    suite_cmd->add_option("-o,--output", c.suite_output, "the suite file (--suite of tune and the benchmark)")->required();

    auto *merge_cmd = app.add_subcommand("merge", "one trials log from several (shards of a tuning job, machines)");
    merge_cmd->add_option("logs", c.merge.inputs, "trials logs")->required();
    merge_cmd->add_option("-o,--output", c.merge.output, "the merged log (may be one of the inputs)")->required();
    merge_cmd->add_flag("--mixed-classes", c.merge.mixed_classes,
                        "allow trials of several target classes in one log");

    auto *variants_cmd = app.add_subcommand("variants", "list the compiled variants of this build");
    variants_cmd->add_option("op", c.variants_op, "only this op");

    auto *space_cmd = app.add_subcommand("space", "print an op's knob space");
    space_cmd->add_option("op", c.space_op)->required();
    space_cmd->add_option("--device", later.space_device)->capture_default_str();

    auto *measure_cmd = app.add_subcommand("measure", "(internal) measure a batch of candidates");
    measure_cmd->group("");
    measure_cmd->add_option("--batch", c.batch_path)->required();

    // Usage errors exit 2, as every other refusal of the command does.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int rc = app.exit(e, out_text, err);
        return rc == 0 ? 0 : 2;
    }

    const std::pair<CLI::App *, CommandLine::Command> commands[] = {
        {tune_cmd, CommandLine::Command::tune},       {distill_cmd, CommandLine::Command::distill},
        {suite_cmd, CommandLine::Command::suite},     {merge_cmd, CommandLine::Command::merge},
        {run_cmd, CommandLine::Command::run},         {measure_cmd, CommandLine::Command::measure},
        {variants_cmd, CommandLine::Command::variants}, {space_cmd, CommandLine::Command::space}};
    for (const auto &[cmd, command] : commands)
        if (*cmd) c.command = command;

    return finish_options(later, c, err);
}

}  // namespace gradtune::tooling
