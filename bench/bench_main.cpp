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
    std::vector<std::string> ops;
    std::vector<int64_t> batches{1, 32};
    std::string suite_path, markdown_path, json_path;
    MeasureOptions measure;
    measure.samples = 9;
    app.add_option("--op", ops, "only these ops");
    app.add_option("--batch", batches, "batch sizes")->capture_default_str();
    app.add_option("--suite", suite_path, "a suite file instead of the default suite");
    app.add_option("--samples", measure.samples, "samples per variant")->capture_default_str();
    app.add_option("--min-sample-ms", measure.min_sample_ms, "minimum sample length")->capture_default_str();
    app.add_option("--markdown", markdown_path, "also write the report as Markdown");
    app.add_option("--json", json_path, "also write the measurements as JSON");
    bool with_onednn = true;
    app.add_flag("!--no-onednn", with_onednn, "skip the oneDNN baseline");
    std::string tf_python = build_info().source_dir + "/.tf-venv/bin/python";
    app.add_option("--tf-python", tf_python,
                   "python of TensorFlow's venv, for the TensorFlow columns (scripts/tf-fixtures.sh makes it)")
        ->capture_default_str();
    bool with_tf = true;
    app.add_flag("!--no-tf", with_tf, "skip the TensorFlow baseline");
    CLI11_PARSE(app, argc, argv);

    std::vector<SuiteEntry> suite;
    try {
        suite = suite_path.empty() ? default_suite(ops, batches) : load_suite(suite_path);
    } catch (const std::exception &e) {  // a bad suite file: say where, as `gradtune tune` does
        std::cerr << "gradtune-bench: error: " << e.what() << "\n";
        return 1;
    }
    // --op applies to a suite file as well as to the default suite.
    std::erase_if(suite, [&](const SuiteEntry &e) {
        return !ops.empty() && std::find(ops.begin(), ops.end(), e.op) == ops.end();
    });
    // Measured first, with nothing else running: every row's fraction of its bound.
    const bench::Roofline roof = bench::measure_roofline(halide_threads());
    std::cerr << "[bench] roofline: FMA peak " << fixed(roof.fma_gflops, 0) << " GFLOP/s (" << roof.lanes
              << " float32 lanes), DRAM copy " << fixed(roof.dram_gbs, 1) << " GB/s, " << roof.threads
              << " threads\n";
    // TensorFlow, where its venv exists: one timing process per CPU path.
    std::unique_ptr<TfBaseline> tf_default, tf_eigen;
    std::string tf_columns = "not run (--no-tf)";
    if (with_tf) {
        const std::string script = build_info().source_dir + "/bench/tf_timer.py";
        std::string why;
        tf_default = TfBaseline::start(tf_python, script, true, halide_threads(), &why);
        if (tf_default) tf_eigen = TfBaseline::start(tf_python, script, false, halide_threads(), &why);
        tf_columns = tf_default && tf_eigen ? "TensorFlow (" + tf_python +
                                                  ") inside a tf.function, its default path (oneDNN) / Eigen "
                                                  "(TF_ENABLE_ONEDNN_OPTS=0); tuned/TF < 1 means gradtune is faster."
                                            : "not run: " + why;
        if (!(tf_default && tf_eigen)) {
            tf_default.reset();
            tf_eigen.reset();
            std::cerr << "[bench] TensorFlow columns " << tf_columns << "\n";
        }
    }
    std::vector<Row> rows;
    for (const SuiteEntry &e : suite) {
        if (!FindOpSpec(e.op)) continue;
        Row row{e, {}, {}, {}, ""};
        MaterialisedCall m;
        CallInfo info;
        Status st = materialise(e.call, 42, &m);
        if (st.ok()) st = DescribeCall(m.call, &info);
        RunOptions generic;
        generic.variant = generic_variant(info);
        RunOptions dispatched;
        if (st.ok()) st = ExplainDispatch(m.call, dispatched, &row.served);
        std::vector<Tensor> out_generic, out_tuned;
        if (st.ok()) st = RunOp(m.call, &out_generic, generic);
        if (st.ok()) st = RunOp(m.call, &out_tuned, dispatched);
        if (!st.ok()) {
            row.error = st.ToString();
            rows.push_back(row);
            continue;
        }
        std::cerr << "[bench] " << e.op << " " << e.name() << " ..." << std::flush;
        std::vector<SelfTimed> participants = {self_timed([&] { return RunOp(m.call, &out_generic, generic); }),
                                               self_timed([&] { return RunOp(m.call, &out_tuned, dispatched); })};
        size_t onednn_first = 0, tf_first = 0;  // their places among the participants (0: not run)
#ifdef GRADTUNE_HAVE_ONEDNN
        std::string why_not;
        std::unique_ptr<OnednnBaseline> tf_layouts, own_layout;
        if (with_onednn) {
            tf_layouts = OnednnBaseline::create(e, true, &why_not);
            own_layout = OnednnBaseline::create(e, false, &why_not);
        }
        if (tf_layouts && own_layout) {
            onednn_first = participants.size();
            participants.push_back(self_timed([&] { return tf_layouts->run(); }));
            participants.push_back(self_timed([&] { return own_layout->run(); }));
            row.onednn_impl = tf_layouts->implementation() + " / " + own_layout->implementation();
        }
#endif
        if (tf_default) {
            std::string why;
            if (tf_default->setup(e.call, &why) && tf_eigen->setup(e.call, &why)) {
                tf_first = participants.size();
                participants.push_back([&](int n, double *ms) { return tf_default->run(n, ms); });
                participants.push_back([&](int n, double *ms) { return tf_eigen->run(n, ms); });
            } else {
                row.tf_note = why;
            }
        }
        std::vector<Timing> t = time_interleaved(participants, measure);
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
        rows.push_back(row);
    }

    // Report: per shape, then the geometric mean per op.
    std::ostringstream md;
    md << "# gradtune report\n\n"
       << "Machine: " << cpu_model() << ", " << halide_threads() << " threads; target class "
       << build_info().target_class() << "; Halide " << build_info().halide_version << ".\n"
       << "Times: median over " << measure.samples << " interleaved samples (spread = IQR/median); "
       << "OMP_WAIT_POLICY=" << std::getenv("OMP_WAIT_POLICY") << " (oneDNN's OpenMP workers). "
       << "gradtune's tensors are " << kTensorAlignment << "-byte aligned, as TensorFlow's; oneDNN's are its own.\n\n"
       << "Rooflines measured by this run: float32 FMA peak " << fixed(roof.fma_gflops, 0) << " GFLOP/s ("
       << roof.lanes << " lanes, " << roof.threads << " threads), DRAM " << fixed(roof.dram_gbs, 1)
       << " GB/s (copy, bytes read + written). \"roofline\" = tuned throughput / the bound of the row: FMA peak for "
          "compute-bound rows (GFLOP/s), DRAM for memory-bound ones (GB/s of compulsory traffic).\n\n"
       << "oneDNN columns: " << (with_onednn ? "oneDNN 2.6 on TF's layouts / with weights in its own layout "
                                               "(reorder not timed)."
                                             : "not run.")
       << "\n\nTensorFlow columns: " << tf_columns << "\n\n"
       << "Every ratio in this report is the other time / gradtune's tuned time: above 1, gradtune is faster.\n\n"
       << "| op | shape | N | generic ms (spread) | tuned ms (spread) | speedup | tuned throughput | served by "
          "| oneDNN TF-layout / own-layout ms | best oneDNN / tuned | TF default / Eigen ms | TF default / tuned |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    // The tuned time's throughput (GFLOP/s or GB/s) and its fraction of the
    // row's bound (0 where the suite gives no flops or bytes).
    auto throughput = [&](const Row &r) {
        const double seconds = r.tuned.median_ms / 1000;
        return r.entry.memory_bound ? r.entry.bytes / seconds / 1e9 : r.entry.flops / seconds / 1e9;
    };
    auto roofline_fraction = [&](const Row &r) {
        if (r.tuned.median_ms <= 0 || (r.entry.flops <= 0 && r.entry.bytes <= 0)) return 0.0;
        return throughput(r) / (r.entry.memory_bound ? roof.dram_gbs : roof.fma_gflops);
    };
    auto roofline_text = [&](const Row &r) {
        return r.entry.flops > 0 || r.entry.bytes > 0 ? " (" + fixed(100 * roofline_fraction(r), 0) + "% of roofline)"
                                                      : "";
    };
    std::map<std::string, std::pair<double, int>> per_op;
    // Per op: log-sum and count of best-oneDNN / tuned (> 1: gradtune is
    // faster), its worst row, and how many rows each dispatch tier served.
    struct VsOnednn {
        double log_sum = 0;
        int rows = 0;
        double worst = 0;
        std::string worst_row;
    };
    std::map<std::string, VsOnednn> vs_onednn;
    struct VsTf {
        double log_sum = 0;
        int rows = 0;
    };
    std::map<std::string, VsTf> vs_tf;
    std::map<std::string, std::map<std::string, int>> tiers;
    for (const Row &r : rows) {
        if (!r.error.empty()) {
            md << "| " << r.entry.op << " | " << r.entry.id << " " << r.entry.description << " | " << r.entry.batch
               << " | error: " << r.error << " |||||||||\n";
            continue;
        }
        const double speedup = r.generic.median_ms / r.tuned.median_ms;
        per_op[r.entry.op].first += std::log(speedup);
        per_op[r.entry.op].second++;
        tiers[r.entry.op][r.served.tier]++;
        md << "| " << r.entry.op << " | " << r.entry.id << " " << r.entry.description << " | " << r.entry.batch << " | "
           << fixed(r.generic.median_ms, 3) << " (" << fixed(r.generic.spread_pct, 0) << "%) | "
           << fixed(r.tuned.median_ms, 3) << " (" << fixed(r.tuned.spread_pct, 0) << "%) | " << fixed(speedup, 2)
           << "x | " << fixed(throughput(r), 1) << (r.entry.memory_bound ? " GB/s" : " GFLOP/s") << roofline_text(r)
           << " | " << r.served.variant << " (" << r.served.tier;
        if (const std::string algorithm = algorithm_of(r.served.variant); !algorithm.empty())
            md << ", algorithm " << algorithm;
        md << ") | ";
        if (r.onednn_tf.median_ms > 0) {
            const double best = std::min(r.onednn_tf.median_ms, r.onednn_own.median_ms);
            VsOnednn &v = vs_onednn[r.entry.op];
            const double ratio = best / r.tuned.median_ms;
            v.log_sum += std::log(ratio);
            v.rows++;
            if (v.worst_row.empty() || ratio < v.worst) {
                v.worst = ratio;
                v.worst_row = r.entry.name();
            }
            md << fixed(r.onednn_tf.median_ms, 3) << " / " << fixed(r.onednn_own.median_ms, 3) << " | "
               << fixed(ratio, 2) << " | ";
        } else {
            md << "- | - | ";
        }
        if (r.tf_default.median_ms > 0) {
            VsTf &v = vs_tf[r.entry.op];
            const double ratio = r.tf_default.median_ms / r.tuned.median_ms;
            v.log_sum += std::log(ratio);
            v.rows++;
            md << fixed(r.tf_default.median_ms, 3) << " / " << fixed(r.tf_eigen.median_ms, 3) << " | "
               << fixed(ratio, 2) << " |\n";
        } else {
            md << (r.tf_note.empty() ? "-" : "TF: " + r.tf_note) << " | - |\n";
        }
    }
    md << "\n| op | shapes | geomean speedup over generic | geomean best-oneDNN time / tuned time (> 1: gradtune "
          "faster) | worst row | geomean TF-default time / tuned time | served by |\n|---|---|---|---|---|---|---|\n";
    for (const auto &[op, acc] : per_op) {
        md << "| " << op << " | " << acc.second << " | " << fixed(std::exp(acc.first / acc.second), 2) << "x | ";
        if (vs_onednn.count(op)) {
            const VsOnednn &v = vs_onednn.at(op);
            md << fixed(std::exp(v.log_sum / v.rows), 2) << " | " << v.worst_row << " " << fixed(v.worst, 2) << " | ";
        } else {
            md << "- | - | ";
        }
        if (vs_tf.count(op)) {
            md << fixed(std::exp(vs_tf.at(op).log_sum / vs_tf.at(op).rows), 2) << " | ";
        } else {
            md << "- | ";
        }
        bool first = true;
        for (const auto &[tier, count] : tiers[op]) {
            md << (first ? "" : ", ") << tier << " " << count;
            first = false;
        }
        md << " |\n";
    }
    // The shape journal's cost, against the fastest calls.
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
    md << "\nTiers: exact = tuned on this class for the shape; transferred = another class's record for the shape, "
          "compiled for this machine; nearest = the record of the nearest shape with the structure; default = the "
          "structure default; generic = no tuned variant for the structure.\n";
    for (const auto &[op, acc] : per_op)
        if (const std::string legend = algorithm_legend(op); !legend.empty())
            md << "\nAlgorithms of " << op << " (the `algorithm` knob): " << legend << ".\n";
    // How the structure defaults were chosen.
    std::vector<StructureDefault> defaults;
    try {
        defaults = read_structure_defaults(build_info().defaults_dir());
    } catch (const std::exception &e) {
        md << "\nStructure defaults unreadable: " << e.what() << "\n";
    }
    if (!defaults.empty()) {
        md << "\n## Structure defaults (schedules/defaults)\n\n| op | structure | knobs | chosen by |\n|---|---|---|---|\n";
        for (const StructureDefault &d : defaults)
            if (ops.empty() || std::find(ops.begin(), ops.end(), d.op) != ops.end())
                md << "| " << d.op << " | " << d.structure.key() << " | " << knobs_text(d.knobs) << " | " << d.chosen_by
                   << " |\n";
    }
    std::cout << md.str();
    if (!markdown_path.empty()) std::ofstream(markdown_path) << md.str();
    if (!json_path.empty()) {
        // One object per row; the machine and its rooflines in every row, so
        // that a row read alone says where it was measured.
        const std::string machine = cpu_model() + ", " + std::to_string(halide_threads()) + " threads";
        nlohmann::json j = nlohmann::json::array();
        for (const Row &r : rows)
            j.push_back({{"op", r.entry.op}, {"id", r.entry.id}, {"batch", r.entry.batch}, {"error", r.error},
                         {"description", r.entry.description}, {"machine", machine},
                         {"target_class", build_info().target_class()}, {"fma_peak_gflops", roof.fma_gflops},
                         {"dram_gbs", roof.dram_gbs}, {"memory_bound", r.entry.memory_bound},
                         {"throughput", r.error.empty() ? throughput(r) : 0.0},
                         {"throughput_unit", r.entry.memory_bound ? "GB/s" : "GFLOP/s"},
                         {"roofline_fraction", r.error.empty() ? roofline_fraction(r) : 0.0},
                         {"generic_median_ms", r.generic.median_ms}, {"generic_spread_pct", r.generic.spread_pct},
                         {"tuned_median_ms", r.tuned.median_ms}, {"tuned_spread_pct", r.tuned.spread_pct},
                         {"variant", r.served.variant}, {"tier", r.served.tier},
                         {"algorithm", algorithm_of(r.served.variant)},
                         {"onednn_tf_layout_median_ms", r.onednn_tf.median_ms},
                         {"onednn_own_layout_median_ms", r.onednn_own.median_ms}, {"onednn_impl", r.onednn_impl},
                         {"tf_default_median_ms", r.tf_default.median_ms}, {"tf_eigen_median_ms", r.tf_eigen.median_ms},
                         {"tf_note", r.tf_note}, {"journal_us", r.journal_us}});
        std::ofstream(json_path) << j.dump(1) << "\n";
    }
    return 0;
}
