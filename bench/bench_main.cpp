// gradtune-bench: the report of the main job. For every suite shape, the
// library's generic default variant and the variant dispatch serves are
// timed side by side in one process (interleaved samples, median and
// spread), and the speedup is reported with the variant that served it.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "build_info.h"
#include "call_json.h"
#include "gradtune/gradtune.h"
#include "journal.h"
#include "measure.h"
#include "records.h"
#include "roofline.h"
#include "suite.h"
#include "tf_baseline.h"
#ifdef GRADTUNE_HAVE_ONEDNN
#include "onednn_baseline.h"
#endif

using namespace gradtune;
using namespace gradtune::tooling;

namespace {

struct Row {
    SuiteEntry entry;
    Timing generic, tuned;
    DispatchInfo served;
    std::string error;
    // oneDNN on TF's layouts and with its own weight layout (0: not run).
    Timing onednn_tf, onednn_own;
    std::string onednn_impl;
    std::string onednn_note;  // why oneDNN did not run
    // TensorFlow's op in a tf.function: its default (oneDNN) and Eigen paths
    // (0: not run; tf_note says why).
    Timing tf_default, tf_eigen;
    std::string tf_note;
    double journal_us = 0;  // the shape journal's bookkeeping per call (GRADTUNE_JOURNAL set)
};

// What GRADTUNE_JOURNAL adds to a call that no exact record serves: the
// runtime's own journal code (a signature lookup and a count under a lock),
// timed on the row's call signature into a scratch journal. Microseconds per
// call, median of 5 rounds of 2000 counts.
double journal_microseconds(const CallInfo &info) {
    const std::string path = "/tmp/gradtune-bench-journal-" + std::to_string(getpid()) + ".jsonl";
    gradtune::internal::Selection selection;  // what dispatch chose for the row's call
    if (!gradtune::internal::select_kernel(info, RunOptions{}, &selection).ok()) return 0;
    std::vector<double> rounds;
    {
        gradtune::internal::Journal journal(path);
        for (int round = 0; round < 5; round++) {
            const auto start = std::chrono::steady_clock::now();
            for (int i = 0; i < 2000; i++) journal.count(info, Device::cpu, selection, 1.0);
            rounds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                             2000);
        }
    }
    std::remove(path.c_str());
    std::sort(rounds.begin(), rounds.end());
    return rounds[rounds.size() / 2];
}

std::string generic_variant(const CallInfo &info) {
    for (const VariantInfo &v : Variants(info.op))
        if (v.generic && v.device == Device::cpu && v.dtype == info.dtype && v.data_format == info.data_format)
            return v.name;
    return "";
}

// The value of the `algorithm` knob of a compiled variant ("" where its op has
// none), for the "served by" column.
std::string algorithm_of(const std::string &variant) {
    static const std::map<std::string, std::string> knobs = [] {
        std::map<std::string, std::string> m;
        for (const VariantInfo &v : Variants()) m[v.name] = v.knobs;
        return m;
    }();
    auto it = knobs.find(variant);
    if (it == knobs.end()) return "";
    const std::string prefix = std::string(kAlgorithmKnob) + "=";
    std::istringstream in(it->second);
    for (std::string setting; in >> setting;)
        if (setting.rfind(prefix, 0) == 0) return setting.substr(prefix.size());
    return "";
}

// What the values of an op's `algorithm` knob mean (its CPU space's
// description), or "" where the op has none.
std::string algorithm_legend(const std::string &op_name) {
    const OpSchema *op = find_op(op_name);
    if (!op) return "";
    Structure generic{"float32", "NHWC", {}};
    for (const std::string &param : op->structure_params) generic.fixed[param] = 0;
    const KnobSpace space = op->space(Device::cpu, generic);
    const Knob *knob = space.find(kAlgorithmKnob);
    return knob ? knob->why : "";
}

std::string fixed(double v, int digits) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(digits) << v;
    return out.str();
}

// The command line.
struct Options {
    std::vector<std::string> ops;
    std::vector<int64_t> batches{1, 32};
    std::string suite_path, markdown_path, json_path;
    MeasureOptions measure;
    bool with_onednn = true;
    bool with_tf = true;
    std::string tf_python = build_info().source_dir + "/.tf-venv/bin/python";
};

// TensorFlow's two timing processes (its default oneDNN path and Eigen), or
// none, and the report's sentence on its columns.
struct TfBaselines {
    std::unique_ptr<TfBaseline> default_path, eigen;
    std::string columns = "not run (--no-tf)";
};

TfBaselines start_tf(const Options &o) {
    TfBaselines tf;
    if (!o.with_tf) return tf;
    const std::string script = build_info().source_dir + "/bench/tf_timer.py";
    std::string why;
    tf.default_path = TfBaseline::start(o.tf_python, script, true, halide_threads(), &why);
    if (tf.default_path) tf.eigen = TfBaseline::start(o.tf_python, script, false, halide_threads(), &why);
    if (tf.default_path && tf.eigen) {
        tf.columns = "TensorFlow (" + o.tf_python +
                     ") inside a tf.function, its default path (oneDNN) / Eigen (TF_ENABLE_ONEDNN_OPTS=0); "
                     "tuned/TF < 1 means gradtune is faster. TensorFlow runs in a process of its own, idle "
                     "between its samples: its times read slower than inside a training step (1.32x, geomean of "
                     "ResNet-50's and CIFAR ResNet-20's gradient calls on a 2-core Xeon); bench/tf_calls.py "
                     "times both sides inside one TensorFlow process.";
    } else {
        tf.default_path.reset();
        tf.eigen.reset();
        tf.columns = "not run: " + why;
        std::cerr << "[bench] TensorFlow columns " << tf.columns << "\n";
    }
    return tf;
}

// One suite row: the generic variant, the dispatched one and the baselines,
// timed interleaved in this process.
Row measure_row(const SuiteEntry &e, const Options &o, TfBaselines &tf) {
    Row row{e, {}, {}, {}, ""};
    MaterialisedCall m;
    CallInfo info;
    Status st = materialise(e.call, 42, &m);
    if (st.ok()) st = DescribeCall(m.call, &info);
    RunOptions generic;
    generic.variant = generic_variant(info);
    RunOptions dispatched;
    std::vector<Tensor> out_generic, out_tuned;
    if (st.ok()) st = RunOp(m.call, &out_generic, generic);
    // The first dispatched call, then what dispatch chose: a probe
    // (dispatch.h) decides at the first call.
    if (st.ok()) st = RunOp(m.call, &out_tuned, dispatched);
    if (st.ok()) st = ExplainDispatch(m.call, dispatched, &row.served);
    if (!st.ok()) {
        row.error = st.ToString();
        return row;
    }
    std::cerr << "[bench] " << e.op << " " << e.name() << " ..." << std::flush;
    const std::function<void()> between = between_calls(o.measure);
    std::vector<SelfTimed> participants = {
        self_timed([&] { return RunOp(m.call, &out_generic, generic); }, between),
        self_timed([&] { return RunOp(m.call, &out_tuned, dispatched); }, between)};
    size_t onednn_first = 0, tf_first = 0;  // their places among the participants (0: not run)
#ifdef GRADTUNE_HAVE_ONEDNN
    std::string why_not;
    std::unique_ptr<OnednnBaseline> tf_layouts, own_layout;
    if (o.with_onednn) {
        tf_layouts = OnednnBaseline::create(e, true, &why_not);
        own_layout = OnednnBaseline::create(e, false, &why_not);
    }
    if (tf_layouts && own_layout) {
        onednn_first = participants.size();
        participants.push_back(self_timed([&] { return tf_layouts->run(); }, between));
        participants.push_back(self_timed([&] { return own_layout->run(); }, between));
        row.onednn_impl = tf_layouts->implementation() + " / " + own_layout->implementation();
    } else if (o.with_onednn) {
        row.onednn_note = why_not;
    }
#endif
    if (tf.default_path) {
        std::string why;
        if (tf.default_path->setup(e.call, &why) && tf.eigen->setup(e.call, &why)) {
            tf_first = participants.size();
            participants.push_back([&](int n, double *ms) { return tf.default_path->run(n, ms); });
            participants.push_back([&](int n, double *ms) { return tf.eigen->run(n, ms); });
        } else {
            row.tf_note = why;
        }
    }
    std::vector<Timing> t = time_interleaved(participants, o.measure);
    row.generic = t[0];
    row.tuned = t[1];
    if (onednn_first > 0) {
        row.onednn_tf = t[onednn_first];
        row.onednn_own = t[onednn_first + 1];
    }
    if (tf_first > 0) {
        row.tf_default = t[tf_first];
        row.tf_eigen = t[tf_first + 1];
    }
    std::cerr << " " << fixed(t[0].median_ms / t[1].median_ms, 2) << "x\n";
    row.journal_us = journal_microseconds(info);
    return row;
}

// The tuned time's throughput (GFLOP/s or GB/s) and its fraction of the
// row's bound (0 where the suite gives no flops or bytes).
double throughput(const Row &r) {
    const double seconds = r.tuned.median_ms / 1000;
    return r.entry.memory_bound ? r.entry.bytes / seconds / 1e9 : r.entry.flops / seconds / 1e9;
}

double roofline_fraction(const Row &r, const bench::Roofline &roof) {
    if (r.tuned.median_ms <= 0 || (r.entry.flops <= 0 && r.entry.bytes <= 0)) return 0.0;
    return throughput(r) / (r.entry.memory_bound ? roof.dram_gbs : roof.fma_gflops);
}

// Geometric mean of ratios, with the worst one and its row.
struct Geomean {
    double log_sum = 0;
    int rows = 0;
    double worst = 0;
    std::string worst_row;
    void add(double ratio, const std::string &row) {
        log_sum += std::log(ratio);
        rows++;
        if (worst_row.empty() || ratio < worst) {
            worst = ratio;
            worst_row = row;
        }
    }
    double value() const { return std::exp(log_sum / rows); }
};

// Per op: the geomeans of the rows' ratios and how many rows each dispatch
// tier served.
struct OpSummary {
    Geomean vs_generic, vs_onednn, vs_tf;
    std::map<std::string, int> tiers;
};

void report_header(std::ostream &md, const Options &o, const bench::Roofline &roof, const std::string &tf_columns) {
    md << "# gradtune report\n\n"
       << "Machine: " << cpu_model() << ", " << halide_threads() << " threads; target class "
       << build_info().target_class() << "; Halide " << build_info().halide_version << ".\n"
       << "Times: median over " << o.measure.samples << " interleaved samples (spread = IQR/median); "
       << "OMP_WAIT_POLICY=" << std::getenv("OMP_WAIT_POLICY") << " (oneDNN's OpenMP workers). "
       << "gradtune's tensors are " << kTensorAlignment << "-byte aligned, as TensorFlow's; oneDNN's are its own.\n\n"
       << "Rooflines measured by this run: float32 FMA peak " << fixed(roof.fma_gflops, 0) << " GFLOP/s ("
       << roof.lanes << " lanes, " << roof.threads << " threads), DRAM " << fixed(roof.dram_gbs, 1)
       << " GB/s (copy, bytes read + written). \"roofline\" = tuned throughput / the bound of the row: FMA peak for "
          "compute-bound rows (GFLOP/s), DRAM for memory-bound ones (GB/s of compulsory traffic).\n\n"
       << "oneDNN columns: " << (o.with_onednn ? "oneDNN 2.6 on TF's layouts / with weights in its own layout "
                                                 "(reorder not timed)."
                                               : "not run.")
       << "\n\nTensorFlow columns: " << tf_columns << "\n\n"
       << "Every ratio in this report is the other time / gradtune's tuned time: above 1, gradtune is faster.\n\n";
}

// The table of rows, and per op the summary of them.
std::map<std::string, OpSummary> report_rows(std::ostream &md, const std::vector<Row> &rows,
                                             const bench::Roofline &roof) {
    md << "| op | shape | N | generic ms (spread) | tuned ms (spread) | speedup | tuned throughput | served by "
          "| oneDNN TF-layout / own-layout ms | best oneDNN / tuned | TF default / Eigen ms | TF default / tuned |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::map<std::string, OpSummary> per_op;
    for (const Row &r : rows) {
        if (!r.error.empty()) {
            md << "| " << r.entry.op << " | " << r.entry.id << " " << r.entry.description << " | " << r.entry.batch
               << " | error: " << r.error << " |||||||||\n";
            continue;
        }
        OpSummary &summary = per_op[r.entry.op];
        const double speedup = r.generic.median_ms / r.tuned.median_ms;
        summary.vs_generic.add(speedup, r.entry.name());
        summary.tiers[r.served.tier]++;
        const bool bound = r.entry.flops > 0 || r.entry.bytes > 0;
        md << "| " << r.entry.op << " | " << r.entry.id << " " << r.entry.description << " | " << r.entry.batch << " | "
           << fixed(r.generic.median_ms, 3) << " (" << fixed(r.generic.spread_pct, 0) << "%) | "
           << fixed(r.tuned.median_ms, 3) << " (" << fixed(r.tuned.spread_pct, 0) << "%) | " << fixed(speedup, 2)
           << "x | " << fixed(throughput(r), 1) << (r.entry.memory_bound ? " GB/s" : " GFLOP/s")
           << (bound ? " (" + fixed(100 * roofline_fraction(r, roof), 0) + "% of roofline)" : "") << " | "
           << r.served.variant << " (" << r.served.tier;
        if (const std::string algorithm = algorithm_of(r.served.variant); !algorithm.empty())
            md << ", algorithm " << algorithm;
        md << ") | ";
        if (r.onednn_tf.median_ms > 0) {
            const double ratio = std::min(r.onednn_tf.median_ms, r.onednn_own.median_ms) / r.tuned.median_ms;
            summary.vs_onednn.add(ratio, r.entry.name());
            md << fixed(r.onednn_tf.median_ms, 3) << " / " << fixed(r.onednn_own.median_ms, 3) << " | "
               << fixed(ratio, 2) << " | ";
        } else {
            md << (r.onednn_note.empty() ? "-" : "oneDNN: " + r.onednn_note) << " | - | ";
        }
        if (r.tf_default.median_ms > 0) {
            const double ratio = r.tf_default.median_ms / r.tuned.median_ms;
            summary.vs_tf.add(ratio, r.entry.name());
            md << fixed(r.tf_default.median_ms, 3) << " / " << fixed(r.tf_eigen.median_ms, 3) << " | "
               << fixed(ratio, 2) << " |\n";
        } else {
            md << (r.tf_note.empty() ? "-" : "TF: " + r.tf_note) << " | - |\n";
        }
    }
    return per_op;
}

void report_summary(std::ostream &md, const std::map<std::string, OpSummary> &per_op) {
    md << "\n| op | shapes | geomean speedup over generic | geomean best-oneDNN time / tuned time (> 1: gradtune "
          "faster) | worst row | geomean TF-default time / tuned time | served by |\n|---|---|---|---|---|---|---|\n";
    for (const auto &[op, s] : per_op) {
        md << "| " << op << " | " << s.vs_generic.rows << " | " << fixed(s.vs_generic.value(), 2) << "x | ";
        if (s.vs_onednn.rows) {
            md << fixed(s.vs_onednn.value(), 2) << " | " << s.vs_onednn.worst_row << " " << fixed(s.vs_onednn.worst, 2)
               << " | ";
        } else {
            md << "- | - | ";
        }
        md << (s.vs_tf.rows ? fixed(s.vs_tf.value(), 2) : "-") << " | ";
        bool first = true;
        for (const auto &[tier, count] : s.tiers) {
            md << (first ? "" : ", ") << tier << " " << count;
            first = false;
        }
        md << " |\n";
    }
}

// The shape journal's cost, against the fastest calls.
void report_journal(std::ostream &md, const std::vector<Row> &rows) {
    double worst_fraction = 0, journal_sum = 0;
    int journal_rows = 0;
    std::string worst_journal_row;
    for (const Row &r : rows) {
        if (!r.error.empty() || r.tuned.median_ms <= 0) continue;
        const double fraction = r.journal_us / (r.tuned.median_ms * 1000);
        journal_sum += r.journal_us;
        journal_rows++;
        if (fraction > worst_fraction) {
            worst_fraction = fraction;
            worst_journal_row = r.entry.op + " " + r.entry.name();
        }
    }
    if (journal_rows > 0) {
        md << "\nShape journal (GRADTUNE_JOURNAL set): " << fixed(journal_sum / journal_rows, 2)
           << " us of bookkeeping per journalled call (mean over rows), at most " << fixed(100 * worst_fraction, 3)
           << " % of a row's tuned time (" << worst_journal_row << "). Unset, a call pays one cached flag test.\n";
    }
}

// The legends: tiers, algorithms, and how the structure defaults were chosen.
void report_legends(std::ostream &md, const std::map<std::string, OpSummary> &per_op,
                    const std::vector<std::string> &ops) {
    md << "\nTiers: exact = tuned on this class for the shape; transferred = another class's record for the shape, "
          "compiled for this machine; nearest = the record of the nearest shape with the structure; default = the "
          "structure default; generic = no tuned variant for the structure.\n";
    for (const auto &[op, summary] : per_op)
        if (const std::string legend = algorithm_legend(op); !legend.empty())
            md << "\nAlgorithms of " << op << " (the `algorithm` knob): " << legend << ".\n";
    std::vector<StructureDefault> defaults;
    try {
        defaults = read_structure_defaults(build_info().defaults_dir());
    } catch (const std::exception &e) {
        md << "\nStructure defaults unreadable: " << e.what() << "\n";
    }
    if (defaults.empty()) return;
    md << "\n## Structure defaults (schedules/defaults)\n\n| op | structure | knobs | chosen by |\n|---|---|---|---|\n";
    for (const StructureDefault &d : defaults)
        if (ops.empty() || std::find(ops.begin(), ops.end(), d.op) != ops.end())
            md << "| " << d.op << " | " << d.structure.key() << " | " << knobs_text(d.knobs) << " | " << d.chosen_by
               << " |\n";
}

// One object per row; the machine and its rooflines in every row, so that a
// row read alone says where it was measured.
nlohmann::json rows_json(const std::vector<Row> &rows, const bench::Roofline &roof) {
    const std::string machine = cpu_model() + ", " + std::to_string(halide_threads()) + " threads";
    nlohmann::json j = nlohmann::json::array();
    for (const Row &r : rows)
        j.push_back({{"op", r.entry.op}, {"id", r.entry.id}, {"batch", r.entry.batch}, {"error", r.error},
                     {"description", r.entry.description}, {"machine", machine},
                     {"target_class", build_info().target_class()}, {"fma_peak_gflops", roof.fma_gflops},
                     {"dram_gbs", roof.dram_gbs}, {"memory_bound", r.entry.memory_bound},
                     {"throughput", r.error.empty() ? throughput(r) : 0.0},
                     {"throughput_unit", r.entry.memory_bound ? "GB/s" : "GFLOP/s"},
                     {"roofline_fraction", r.error.empty() ? roofline_fraction(r, roof) : 0.0},
                     {"generic_median_ms", r.generic.median_ms}, {"generic_spread_pct", r.generic.spread_pct},
                     {"tuned_median_ms", r.tuned.median_ms}, {"tuned_spread_pct", r.tuned.spread_pct},
                     {"variant", r.served.variant}, {"tier", r.served.tier},
                     {"algorithm", algorithm_of(r.served.variant)},
                     {"onednn_tf_layout_median_ms", r.onednn_tf.median_ms},
                     {"onednn_own_layout_median_ms", r.onednn_own.median_ms}, {"onednn_impl", r.onednn_impl},
                     {"onednn_note", r.onednn_note},
                     {"tf_default_median_ms", r.tf_default.median_ms}, {"tf_eigen_median_ms", r.tf_eigen.median_ms},
                     {"tf_note", r.tf_note}, {"journal_us", r.journal_us}});
    return j;
}

}  // namespace

int main(int argc, char **argv) {
    // oneDNN's OpenMP workers must not spin after its calls and steal the
    // cores from the interleaved gradtune samples. libgomp reads
    // OMP_WAIT_POLICY once, when it is loaded, before main: a setenv here
    // comes too late, so the benchmark starts itself again with it set.
    // Measured on an Intel Xeon (2 threads): the input-filter gradient of a
    // 14x14x576 depthwise layer at N=32 took 9.8 ms sampled after oneDNN's
    // calls with the workers spinning and 1.9 ms with them asleep, and
    // oneDNN's own time fell from 2.9 to 1.6 ms.
    if (!std::getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
        execv("/proc/self/exe", argv);
        std::cerr << "[bench] warning: could not restart with OMP_WAIT_POLICY=PASSIVE; oneDNN's spinning "
                     "workers may slow the gradtune samples (set it before starting the benchmark)\n";
    }
    CLI::App app{"gradtune-bench: generic default vs dispatched variant for the default suite"};
    Options o;
    o.measure.samples = 9;
    app.add_option("--op", o.ops, "only these ops");
    app.add_option("--batch", o.batches, "batch sizes")->capture_default_str();
    app.add_option("--suite", o.suite_path, "a suite file instead of the default suite");
    app.add_option("--samples", o.measure.samples, "samples per variant")->capture_default_str();
    app.add_option("--min-sample-ms", o.measure.min_sample_ms, "minimum sample length")->capture_default_str();
    app.add_option("--markdown", o.markdown_path, "also write the report as Markdown");
    app.add_option("--json", o.json_path, "also write the measurements as JSON");
    app.add_flag("!--no-onednn", o.with_onednn, "skip the oneDNN baseline");
    app.add_option("--tf-python", o.tf_python,
                   "python of TensorFlow's venv, for the TensorFlow columns (scripts/tf-fixtures.sh makes it)")
        ->capture_default_str();
    app.add_flag("!--no-tf", o.with_tf, "skip the TensorFlow baseline");
    app.add_option("--evict-mb", o.measure.evict_mb,
                   "before each gradtune and oneDNN call (then timed alone), every thread writes this many MiB, "
                   "as a training step's other ops evict the caches (TensorFlow's columns are timed as before)");
    app.add_option("--idle-us", o.measure.idle_us,
                   "before each gradtune and oneDNN call, sleep this long (the pool's workers go to sleep)");
    CLI11_PARSE(app, argc, argv);

    std::vector<SuiteEntry> suite;
    try {
        suite = o.suite_path.empty() ? default_suite(o.ops, o.batches) : load_suite(o.suite_path);
    } catch (const std::exception &e) {  // a bad suite file: say where, as `gradtune tune` does
        std::cerr << "gradtune-bench: error: " << e.what() << "\n";
        return 1;
    }
    // --op applies to a suite file as well as to the default suite.
    std::erase_if(suite, [&](const SuiteEntry &e) {
        return !o.ops.empty() && std::find(o.ops.begin(), o.ops.end(), e.op) == o.ops.end();
    });
    // Measured first, with nothing else running: every row's fraction of its bound.
    const bench::Roofline roof = bench::measure_roofline(halide_threads());
    std::cerr << "[bench] roofline: FMA peak " << fixed(roof.fma_gflops, 0) << " GFLOP/s (" << roof.lanes
              << " float32 lanes), DRAM copy " << fixed(roof.dram_gbs, 1) << " GB/s, " << roof.threads
              << " threads\n";
    TfBaselines tf = start_tf(o);
    std::vector<Row> rows;
    for (const SuiteEntry &e : suite)
        if (FindOpSpec(e.op)) rows.push_back(measure_row(e, o, tf));

    std::ostringstream md;
    report_header(md, o, roof, tf.columns);
    const std::map<std::string, OpSummary> per_op = report_rows(md, rows, roof);
    report_summary(md, per_op);
    report_journal(md, rows);
    report_legends(md, per_op, o.ops);
    std::cout << md.str();
    if (!o.markdown_path.empty()) std::ofstream(o.markdown_path) << md.str();
    if (!o.json_path.empty()) std::ofstream(o.json_path) << rows_json(rows, roof).dump(1) << "\n";
    return 0;
}
