// The tuner: groups the suite's calls by (op, device, structure), draws
// candidates per group (defaults, committed records, random, then the
// one-knob neighbours of the group's and each shape's best), compiles a
// batch of them in parallel (a candidate the library already holds compiled
// is measured as shipped instead), then measures the batch in a child process
// with nothing else running, and appends every result to the trials log.
// Killed and restarted, it skips what the log holds.
#include "tune.h"

#include "journal_suite.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "build_info.h"
#include "call_json.h"
#include "candidates.h"
#include "gradtune/variants.h"
#include "npy.h"
#include "records.h"
#include "suite.h"
#include "trials.h"

namespace gradtune::tooling {

namespace fs = std::filesystem;
using nlohmann::json;

std::string default_log_path() {
    return build_info().source_dir + "/.gradtune/trials-" + build_info().target_class() + ".jsonl";
}

namespace {

// Seconds a measuring process may run past the budget (a batch that started
// just before its end) before it is killed.
constexpr double kMeasureGraceS = 30;

// Fault injection for the tuner's tests (tests/tuner/fault_injection_test.sh):
// with GRADTUNE_FAULT_INJECT=crash:K (or hang:K) a measuring process crashes
// with SIGSEGV (or hangs) at the K-th candidate it checks (counting each
// shape's checks), as a candidate with a broken schedule would. crash:K:FILE
// does so once in all: only while FILE does not exist, and creates it.
// Unset, it does nothing.
void inject_fault(int candidate_call) {
    const char *spec = std::getenv("GRADTUNE_FAULT_INJECT");
    if (!spec) return;
    const std::string text = spec;
    const size_t colon = text.find(':');
    if (colon == std::string::npos || std::atoi(text.c_str() + colon + 1) != candidate_call) return;
    if (const size_t marker = text.find(':', colon + 1); marker != std::string::npos) {
        const std::string path = text.substr(marker + 1);
        if (std::filesystem::exists(path)) return;
        std::ofstream(path) << "fault injected\n";
    }
    if (text.compare(0, colon, "crash") == 0) std::raise(SIGSEGV);
    if (text.compare(0, colon, "hang") == 0) {
        for (;;) pause();
    }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string ratio_text(double ratio) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1fx", ratio);
    return buffer;
}

std::string clock_text(double seconds) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%d:%02d", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
    return buffer;
}

// Normwise comparison of two outputs (as the tests do), tolerance per dtype.
double tolerance(DataType dtype) {
    switch (dtype) {
    case DataType::kDouble: return 1e-12;
    case DataType::kFloat: return 1e-5;
    case DataType::kHalf: return 1e-3;
    case DataType::kBFloat16: return 1e-2;
    default: return 0;
    }
}

std::string compare_outputs(const std::vector<Tensor> &got, const std::vector<Tensor> &want) {
    if (got.size() != want.size()) return "a different number of outputs";
    for (size_t o = 0; o < got.size(); o++) {
        if (got[o].shape() != want[o].shape()) return "output " + std::to_string(o) + " has another shape";
        double diff = 0, scale = 0;
        const int64_t elements = got[o].num_elements();
        for (int64_t i = 0; i < elements; i++) {
            const double w = want[o].load(i), d = std::fabs(got[o].load(i) - w);
            if (std::isnan(d) && !std::isnan(w))  // std::max would skip it
                return "output " + std::to_string(o) + " has NaN at element " + std::to_string(i) +
                       " (left unwritten, or computed so) where the generic variant has a number";
            if (d > diff) diff = d;
            scale = std::max(scale, std::fabs(w));
        }
        const double error = scale > 0 ? diff / scale : diff;
        // Both sides carry rounding error: twice the tests' tolerance.
        if (error > 2 * tolerance(got[o].dtype()))
            return "output " + std::to_string(o) + " differs from the generic variant (normwise error " +
                   std::to_string(error) + ")";
    }
    return "";
}

std::string generic_variant(const CallInfo &info, Device device) {
    for (const VariantInfo &v : Variants(info.op))
        if (v.generic && v.device == device && v.dtype == info.dtype && v.data_format == info.data_format)
            return v.name;
    return "";
}

// One structure group of the suite: its shapes share every compiled kernel.
struct Group {
    std::string op;
    Device device = Device::cpu;
    Structure structure;
    std::vector<const SuiteEntry *> shapes;
    std::vector<CallInfo> infos;
    std::unique_ptr<Sampler> sampler;
    std::deque<Knobs> queue;       // what to try next
    std::set<std::string> tried;   // knobs_text of every candidate handed out
    int handed_out = 0;
    int refinements = 0;
    int exhausted_draws = 0;

    std::string label() const {
        std::ostringstream out;
        out << op << " " << structure.key() << " (" << shapes.size() << " shapes)";
        return out.str();
    }
};

// Geometric mean of generic/candidate over the group's shapes, from the log;
// 0 when the candidate lacks a shape or failed one.
double group_speedup(const Group &g, const Knobs &knobs, const std::map<std::string, const Trial *> &by_key,
                     const Trial &prototype) {
    double log_sum = 0;
    for (size_t i = 0; i < g.shapes.size(); i++) {
        Trial t = prototype;
        t.knobs = knobs;
        t.shape_id = g.shapes[i]->name();
        t.padding = g.infos[i].padding;
        t.shape = g.infos[i].shape;
        auto it = by_key.find(t.measurement_key());
        // A "slow" trial counts with its one-call estimate, so that the
        // geomean still ranks a candidate that loses on one shape only.
        if (it == by_key.end() || (it->second->status != "ok" && it->second->status != "slow") ||
            it->second->median_ms <= 0)
            return 0;
        log_sum += std::log(it->second->generic_median_ms / it->second->median_ms);
    }
    return std::exp(log_sum / g.shapes.size());
}

// The name of the library's variant that is this candidate, if the build
// holds one (the seeds from the structure defaults and every class's
// records usually are): the tuner measures that code, as shipped, at no
// compile cost, which is most of a first batch on a machine without records.
std::string library_variant(const Group &g, const Knobs &knobs) {
    const std::string text = knobs_text(knobs);
    for (const VariantInfo &v : Variants(g.op)) {
        if (v.generic || !v.runs_here || v.device != g.device || v.dtype != g.structure.dtype ||
            v.data_format != g.structure.data_format || v.knobs != text ||
            v.structure.size() != g.structure.fixed.size())
            continue;
        bool same = true;
        for (const auto &[name, value] : g.structure.fixed) {
            auto it = v.structure.find(name);
            same = same && it != v.structure.end() && it->second == value;
        }
        if (same) return v.name;
    }
    return "";
}

Trial prototype_trial(const Group &g) {
    const BuildInfo &info = build_info();
    Trial t;
    t.op = g.op;
    t.device = g.device;
    t.structure = g.structure;
    t.target = info.target(g.device);
    t.halide_version = info.halide_version;
    t.source_hash = info.source_hash.count(g.op) ? info.source_hash.at(g.op) : "";
    t.knob_space_version = find_op(g.op)->knob_space_version;
    t.cpu_model = cpu_model();
    return t;
}

// The tuning curve of a run: printed (best-so-far per group at a quarter,
// half and all of the run) and written as JSON next to the trials log
// (<log>.curve.json: per group, [seconds, candidates measured, best] after
// each of its batches).
template <typename Groups, typename Curve>
void write_curve(const std::string &log_path, const Groups &groups, const Curve &curve, double elapsed, int measured) {
    json out = {{"elapsed_s", elapsed}, {"measured", measured}, {"groups", json::array()}};
    std::cerr << "tuning curve (best-so-far geomean speedup over the generic variant, per structure group):\n"
              << "  at " << clock_text(elapsed / 4) << " / " << clock_text(elapsed / 2) << " / "
              << clock_text(elapsed) << "\n";
    for (size_t i = 0; i < groups.size(); i++) {
        json points = json::array();
        for (const auto &p : curve[i]) points.push_back({p.seconds, p.measured, p.best});
        out["groups"].push_back({{"group", groups[i].label()}, {"points", points}});
        auto best_at = [&](double t) {
            double b = 0;
            for (const auto &p : curve[i])
                if (p.seconds <= t) b = std::max(b, p.best);
            return b;
        };
        char line[64];
        std::snprintf(line, sizeof line, "%.2fx / %.2fx / %.2fx", best_at(elapsed / 4), best_at(elapsed / 2),
                      best_at(elapsed + 1));
        std::cerr << "  " << line << "  " << groups[i].label() << "\n";
    }
    const std::string path = log_path + ".curve.json";
    std::ofstream file(path);
    file << out.dump(1) << "\n";
    if (!file) std::cerr << "gradtune tune: could not write " << path << "\n";
}

}  // namespace

int tune(const TuneOptions &options) {
    const auto start = std::chrono::steady_clock::now();
    const BuildInfo &info = build_info();
    const bool tty = isatty(fileno(stderr));
    std::vector<SuiteEntry> suite;
    if (!options.journal_path.empty()) {
        JournalSuite journalled = journal_suite(options.journal_path, to_string(options.device), options.top);
        for (const std::string &note : journalled.notes) std::cerr << "gradtune tune: " << note << "\n";
        if (journalled.entries.empty()) {
            std::cerr << "gradtune tune: " << options.journal_path << " journals no " << to_string(options.device)
                      << " call that can be tuned\n";
            return 2;
        }
        std::cerr << "gradtune tune: " << journalled.entries.size() << " journalled signature(s), heaviest first\n";
        suite = journalled.entries;
    } else {
        suite = options.suite_path.empty() ? default_suite(options.ops, options.batches) : load_suite(options.suite_path);
    }

    // Group the suite by structure.
    std::vector<Group> groups;
    int skipped = 0;
    for (const SuiteEntry &e : suite) {
        if (!options.ops.empty() && std::find(options.ops.begin(), options.ops.end(), e.op) == options.ops.end())
            continue;
        if (!FindOpSpec(e.op) || !find_op(e.op)) {
            skipped++;
            continue;
        }
        MaterialisedCall m;
        CallInfo ci;
        Status st = materialise(e.call, 1, &m, Fill::kZeros);  // shapes and attrs are all grouping needs
        if (st.ok()) st = DescribeCall(m.call, &ci);
        if (!st.ok()) {
            std::cerr << "gradtune tune: suite entry " << e.name() << " is not a valid call: " << st.ToString() << "\n";
            return 2;
        }
        Structure s{ci.dtype, ci.data_format, ci.structure};
        auto it = std::find_if(groups.begin(), groups.end(), [&](const Group &g) {
            return g.op == e.op && g.device == options.device && g.structure == s;
        });
        if (it == groups.end()) {
            groups.push_back(Group{e.op, options.device, s, {}, {}, nullptr, {}, {}, 0, 0});
            it = groups.end() - 1;
        }
        it->shapes.push_back(&e);
        it->infos.push_back(ci);
    }
    if (skipped) std::cerr << "gradtune tune: " << skipped << " suite entries skipped (op not in this build)\n";
    if (options.shards > 1) {
        // Whole groups, dealt round-robin: a group's candidates are compiled
        // once for all of its shapes (the tuner is compile-bound), and its
        // queue and sampler depend on the seed and the group alone, so a shard
        // draws for a group what an unsharded run draws for it (until timings
        // steer the refinement, which they do in both).
        std::vector<Group> mine;
        for (size_t i = 0; i < groups.size(); i++)
            if (static_cast<int>(i % options.shards) == options.shard) mine.push_back(std::move(groups[i]));
        std::cerr << "gradtune tune: shard " << options.shard << "/" << options.shards << ": " << mine.size() << " of "
                  << groups.size() << " structure group(s)\n";
        if (mine.empty()) {
            std::cerr << "gradtune tune: nothing for this shard to tune\n";
            return 0;
        }
        groups = std::move(mine);
    }
    if (groups.empty()) {
        std::cerr << "gradtune tune: nothing to tune\n";
        return 2;
    }

    TrialLog log(options.log_path);
    std::map<std::string, const Trial *> by_key;
    auto index_log = [&] {
        by_key.clear();
        for (const Trial &t : log.trials()) by_key[t.measurement_key()] = &t;
    };
    index_log();

    // Seed each group's queue, measured first: the space's defaults and each
    // other algorithm's starting point, the structure default, then the
    // committed records of every class for the group, this class first and
    // then the nearest classes (so a re-tune never ends below what was
    // committed, and a new CPU starts from what was found on others).
    const std::vector<std::string> classes = record_classes(info.records_dir, info.target_class());
    std::vector<StructureDefault> structure_defaults;
    try {
        structure_defaults = read_structure_defaults(info.defaults_dir());
    } catch (const std::exception &e) {
        std::cerr << "gradtune tune: ignoring the structure defaults: " << e.what() << "\n";
    }
    for (Group &g : groups) {
        const OpSchema *op = find_op(g.op);
        KnobSpace space = op->space(g.device, g.structure);
        uint64_t h = options.seed;
        for (unsigned char c : g.label()) h = (h ^ c) * 1099511628211ull;
        g.sampler = std::make_unique<Sampler>(space, h);
        g.queue.push_back(space.defaults());
        for (const Knobs &k : space.algorithm_seeds)
            if (space.check(k).empty()) g.queue.push_back(k);
        // Every seed is also tried with each other value of the knobs added
        // or given new values in the op's current knob-space version (made
        // canonical, where legal then): the committed records predate them.
        auto seed = [&](const std::string &op_name, Device device, const Structure &structure, const Knobs &knobs) {
            if (op_name != g.op || device != g.device || !(structure == g.structure) || !space.check(knobs).empty())
                return;
            g.queue.push_back(knobs);
            for (const Knob &knob : space.knobs) {
                const int changed = std::max(knob.since_version, knob.values_since);
                if (changed != op->knob_space_version || changed == 1) continue;
                for (int value : knob.values) {
                    Knobs variant = knobs;
                    variant[knob.name] = value;
                    variant = space.canonical(variant);
                    if (variant != knobs && space.check(variant).empty()) g.queue.push_back(variant);
                }
            }
        };
        if (!options.record_seeds) continue;
        for (const StructureDefault &d : structure_defaults) seed(d.op, d.device, d.structure, d.knobs);
        for (const std::string &klass : classes) {
            const std::string path = info.records_dir + "/" + klass + "/" + g.op + ".json";
            if (!fs::exists(path)) continue;
            try {
                for (const Record &r : read_record_file(path).records)
                    if (staleness(r, info.halide_version).empty()) seed(r.op, r.device, r.structure, r.knobs);
            } catch (const std::exception &e) {
                std::cerr << "gradtune tune: ignoring " << path << ": " << e.what() << "\n";
            }
        }
    }

    // The seeds the library holds compiled (the structure defaults and the
    // records of every class, transferred ones included) go first: they are
    // the likeliest winners and cost no compile.
    for (Group &g : groups)
        std::stable_partition(g.queue.begin(), g.queue.end(),
                              [&](const Knobs &k) { return !library_variant(g, k).empty(); });

    std::cerr << "gradtune tune: " << groups.size() << " structure group(s), budget " << clock_text(options.budget_s)
              << (options.max_trials ? ", at most " + std::to_string(options.max_trials) + " candidates" : "")
              << ", log " << options.log_path << "\n";
    for (const Group &g : groups) std::cerr << "  " << g.label() << "\n";

    // The generic variant is timed and run for reference once per shape and
    // run, not in every batch: at N=32 one generic call of a large dense
    // gradient takes seconds, and a batch timed it 8 times per shape. Its
    // outputs wait in <work dir>/reference for the later batches.
    std::map<std::string, json> generic_timing;  // shape key -> {median_ms, spread_pct}
    const std::string reference_dir = options.work_dir + "/reference";
    fs::remove_all(reference_dir);
    fs::create_directories(reference_dir);
    auto shape_key = [](const Group &g, size_t s) { return g.op + "|" + g.shapes[s]->call.dump(); };

    int measured = 0, resumed = 0, batches = 0;
    // The tuning curve: best-so-far geomean speedup of each group after each
    // of its batches.
    struct CurvePoint {
        double seconds;
        int measured;
        double best;
    };
    std::vector<std::vector<CurvePoint>> curve(groups.size());
    double batch_seconds = 0;
    // Seconds per batch of each group: heavy groups (large convolutions at
    // N=32) take a minute a batch, light ones seconds. A group whose next
    // batch would end past the budget is not started again, so the run ends
    // within the budget (up to the error of the estimate).
    std::vector<double> group_seconds(groups.size(), 0);
    std::vector<int> group_batches(groups.size(), 0);
    size_t next_group = 0;
    std::set<size_t> done_groups;
    while (done_groups.size() < groups.size()) {
        const double elapsed = seconds_since(start);
        if (elapsed >= options.budget_s) break;
        // The limit counts resumed candidates too: a killed and resumed run ends
        // with the same candidates as an uninterrupted one.
        if (options.max_trials && measured + resumed >= options.max_trials) break;
        Group &g = groups[next_group];
        const size_t this_group = next_group;
        next_group = (next_group + 1) % groups.size();
        if (done_groups.count(this_group)) continue;
        const double estimate = group_batches[this_group] ? group_seconds[this_group] / group_batches[this_group]
                                : batches                 ? batch_seconds / batches
                                                          : 0;
        if (elapsed + estimate > options.budget_s) {
            done_groups.insert(this_group);  // no time left for a batch of this group
            continue;
        }

        // Draw up to batch_size candidates not yet measured on every shape:
        // one measuring child, one reference call and one generic timing per
        // shape serve the whole batch.
        Trial proto = prototype_trial(g);
        std::vector<Candidate> batch;
        while (static_cast<int>(batch.size()) < std::max(options.jobs, options.batch_size)) {
            if (options.max_trials && measured + resumed + static_cast<int>(batch.size()) >= options.max_trials) break;
            Knobs k;
            if (!g.queue.empty()) {
                k = g.queue.front();
                g.queue.pop_front();
            } else {
                // Explore first, then alternate exploring and refining a best:
                // in turn the group's (geomean over its shapes) and each
                // shape's own, since records are kept per shape and one
                // setting rarely wins on every shape of a group.
                const bool refine = g.handed_out >= 6 && g.handed_out % 2 == 0;
                const int target = refine ? g.refinements++ % static_cast<int>(g.shapes.size() + 1) - 1 : -1;
                Knobs best;
                double best_speedup = 0;
                if (refine) {
                    for (const Trial &t : log.trials()) {
                        if (t.candidate_key().rfind(proto.op + "|", 0) != 0 || t.structure != g.structure ||
                            t.device != g.device)
                            continue;
                        double s = 0;
                        if (target < 0) {
                            s = group_speedup(g, t.knobs, by_key, proto);
                        } else if (t.status == "ok" && t.median_ms > 0 && t.shape == g.infos[target].shape &&
                                   t.padding == g.infos[target].padding) {
                            s = t.generic_median_ms / t.median_ms;
                        }
                        if (s > best_speedup) {
                            best_speedup = s;
                            best = t.knobs;
                        }
                    }
                }
                // Refining walks the best's one-knob neighbourhood first
                // (neighbours measured by an earlier run come back from the
                // log at no cost) and jumps only from a local optimum.
                k = refine && best_speedup > 0 ? g.sampler->neighbour(best, g.tried) : g.sampler->random();
            }
            const std::string text = knobs_text(k);
            if (!g.tried.insert(text).second) {
                if (++g.exhausted_draws > 200) break;  // the space is (nearly) exhausted
                continue;
            }
            g.handed_out++;
            // Already in the log for every shape: resumed, nothing to measure.
            bool all_logged = true;
            for (size_t i = 0; i < g.shapes.size(); i++) {
                Trial t = proto;
                t.knobs = k;
                t.shape_id = g.shapes[i]->name();
                t.padding = g.infos[i].padding;
                t.shape = g.infos[i].shape;
                all_logged = all_logged && log.measured(t.measurement_key());
            }
            if (all_logged) {
                resumed++;
                continue;
            }
            batch.push_back(Candidate{g.op, g.device, g.structure, k});
        }
        if (batch.empty()) {
            if (g.exhausted_draws > 200) done_groups.insert(this_group);
            continue;
        }

        const auto batch_start = std::chrono::steady_clock::now();
        // 1. Compile (in parallel); 2. measure (alone, in a child process).
        // A compile may not run past the budget: one the budget cuts short is
        // not logged (it did not fail) but handed out again by a later run.
        const double time_left = std::max(1.0, options.budget_s - seconds_since(start));
        const bool budget_bound = time_left < options.compile_timeout_s;
        std::vector<CompiledCandidate> compiled(batch.size());
        std::vector<Candidate> to_compile;
        std::vector<size_t> compiled_index;
        for (size_t i = 0; i < batch.size(); i++) {
            compiled[i].candidate = batch[i];
            compiled[i].library_variant = library_variant(g, batch[i].knobs);
            if (!compiled[i].library_variant.empty()) continue;
            to_compile.push_back(batch[i]);
            compiled_index.push_back(i);
        }
        std::vector<CompiledCandidate> fresh =
            compile_candidates(to_compile, options.work_dir, options.jobs, std::min(options.compile_timeout_s, time_left));
        for (size_t j = 0; j < fresh.size(); j++) compiled[compiled_index[j]] = std::move(fresh[j]);
        const double compile_seconds = seconds_since(batch_start);
        for (CompiledCandidate &c : compiled) {
            if (!(c.timed_out && budget_bound)) continue;
            g.tried.erase(knobs_text(c.candidate.knobs));
            g.queue.push_front(c.candidate.knobs);
            c.error.clear();
        }
        json batch_file = {{"shapes", json::array()}, {"candidates", json::array()},
                           {"measure", {{"samples", options.measure.samples},
                                        {"min_sample_ms", options.measure.min_sample_ms},
                                        {"slow_factor", options.measure.slow_factor}}},
                           {"device", to_string(g.device)}};
        // Per shape: the cached generic timing and reference, and the
        // fastest time measured so far (a candidate far slower than it is
        // logged "slow" after one call instead of being timed).
        std::vector<double> best_ms(g.shapes.size(), 0);
        for (const Trial &t : log.trials()) {
            if (t.status != "ok" || t.median_ms <= 0 || t.op != g.op || t.device != g.device ||
                t.structure != g.structure)
                continue;
            for (size_t s = 0; s < g.shapes.size(); s++)
                if (t.shape == g.infos[s].shape && t.padding == g.infos[s].padding &&
                    (best_ms[s] == 0 || t.median_ms < best_ms[s]))
                    best_ms[s] = t.median_ms;
        }
        for (size_t s = 0; s < g.shapes.size(); s++) {
            char prefix[32];
            std::snprintf(prefix, sizeof prefix, "%016llx",
                          static_cast<unsigned long long>(fnv1a(std::string(to_string(g.device)) + "|" + shape_key(g, s))));
            json shape = {{"shape_id", g.shapes[s]->name()},
                          {"call", g.shapes[s]->call},
                          {"reference", reference_dir + "/" + prefix}};
            if (auto it = generic_timing.find(shape_key(g, s)); it != generic_timing.end()) shape["generic"] = it->second;
            if (best_ms[s] > 0) shape["best_ms"] = best_ms[s];
            batch_file["shapes"].push_back(shape);
        }
        for (size_t i = 0; i < compiled.size(); i++) {
            if (!compiled[i].library_variant.empty()) {
                batch_file["candidates"].push_back({{"index", i},
                                                    {"variant", compiled[i].library_variant},
                                                    {"structure", gradtune::to_json(g.structure)}});
                continue;
            }
            if (compiled[i].shared_object.empty()) {
                if (compiled[i].error.empty()) continue;  // cut short by the budget
                std::vector<Trial> failed_to_compile;
                for (size_t s = 0; s < g.shapes.size(); s++) {
                    Trial t = proto;
                    t.knobs = compiled[i].candidate.knobs;
                    t.shape_id = g.shapes[s]->name();
                    t.padding = g.infos[s].padding;
                    t.shape = g.infos[s].shape;
                    t.call = g.shapes[s]->call;
                    t.status = "compile_error";
                    t.error = compiled[i].error;
                    t.compile_s = compiled[i].compile_s;
                    t.timestamp = now_utc();
                    t.seed = options.seed;
                    failed_to_compile.push_back(t);
                }
                log.append(failed_to_compile);
                measured++;
                continue;
            }
            batch_file["candidates"].push_back({{"index", i},
                                                {"shared_object", compiled[i].shared_object},
                                                {"function", compiled[i].candidate.function_name()},
                                                {"structure", gradtune::to_json(g.structure)}});
        }
        if (!batch_file["candidates"].empty()) {
            const std::string batch_path = options.work_dir + "/batch.json";
            const std::string results_path = options.work_dir + "/results.jsonl";
            write_file_atomically(batch_path, batch_file.dump());  // throws on a full disk
            // A hanging candidate must not stop the run: the child is killed
            // after --measure-timeout, or when the budget is spent (plus a
            // grace for a batch that started just before its end).
            const double measure_left = std::max(1.0, options.budget_s - seconds_since(start)) + kMeasureGraceS;
            const bool measure_budget_bound = measure_left < options.measure_timeout_s;
            const double measure_timeout = std::min(options.measure_timeout_s, measure_left);
            const int rc = run_process({options.self, "measure", "--batch", batch_path}, results_path, measure_timeout);
            const bool killed = rc == kProcessTimedOut;
            std::set<size_t> reported;
            std::string running;  // the candidate the child was running when it ended, if any
            std::map<size_t, std::vector<Trial>> results_of;  // per candidate, logged together
            std::ifstream results(results_path);
            for (std::string line; std::getline(results, line);) {
                json r;
                try {
                    r = json::parse(line);
                } catch (...) {
                    continue;
                }
                if (r.contains("running")) {
                    running = line;
                    continue;
                }
                if (r.contains("timing")) {  // every candidate of the shape ran once: none to blame
                    running.clear();
                    continue;
                }
                if (!r.contains("candidate")) continue;
                const size_t i = r.at("candidate").get<size_t>();
                const std::string shape_id = r.at("shape_id").get<std::string>();
                size_t s = 0;
                while (s < g.shapes.size() && g.shapes[s]->name() != shape_id) s++;
                if (s == g.shapes.size()) continue;
                Trial t = proto;
                t.knobs = compiled[i].candidate.knobs;
                t.shape_id = shape_id;
                t.padding = g.infos[s].padding;
                t.shape = g.infos[s].shape;
                t.call = g.shapes[s]->call;
                read_measurement(r, &t);
                if (t.status == "ok" && t.generic_median_ms > 0)
                    generic_timing.emplace(shape_key(g, s), json{{"median_ms", t.generic_median_ms},
                                                                 {"spread_pct", t.generic_spread_pct}});
                t.compile_s = compiled[i].compile_s;
                t.timestamp = now_utc();
                t.seed = options.seed;
                results_of[i].push_back(t);
            }
            // The candidate the child died or hung in is logged as failed
            // below, its shapes measured before with it. A child the budget
            // cut short blames nobody: its candidates go back to the queue.
            const std::optional<size_t> crashed =
                rc != 0 && !running.empty() && !(killed && measure_budget_bound)
                    ? std::optional<size_t>(json::parse(running).at("running").get<size_t>())
                    : std::nullopt;
            for (const auto &[i, trials] : results_of) {
                if (crashed && *crashed == i) continue;
                log.append(trials);
                reported.insert(i);
            }
            if (rc != 0) {
                // The child crashed, hung or ran out of budget: log the culprit
                // (if any), measure the rest again later.
                const std::string why =
                    killed ? "the measuring process was killed after " + std::to_string(static_cast<int>(measure_timeout)) +
                                 " s (" + (measure_budget_bound ? "the budget was spent" : "--measure-timeout: it hung") + ")"
                    : rc > 128 ? "the measuring process crashed (signal " + std::to_string(rc - 128) + ", " +
                                     strsignal(rc - 128) + ")"
                               : "the measuring process crashed (exit status " + std::to_string(rc) + ")";
                std::cerr << "\ngradtune tune: " << why << "\n";
                if (crashed) {
                    const size_t i = *crashed;
                    std::vector<Trial> failed;
                    for (size_t s = 0; s < g.shapes.size(); s++) {
                        Trial t = proto;
                        t.knobs = compiled[i].candidate.knobs;
                        t.shape_id = g.shapes[s]->name();
                        t.padding = g.infos[s].padding;
                        t.shape = g.infos[s].shape;
                        t.call = g.shapes[s]->call;
                        t.status = "failed";
                        t.error = why;
                        t.timestamp = now_utc();
                        failed.push_back(t);
                    }
                    log.append(failed);
                    reported.insert(i);
                }
                for (size_t i = 0; i < compiled.size(); i++) {
                    if ((!compiled[i].shared_object.empty() || !compiled[i].library_variant.empty()) &&
                        !reported.count(i)) {
                        g.tried.erase(knobs_text(compiled[i].candidate.knobs));
                        g.queue.push_front(compiled[i].candidate.knobs);
                    }
                }
            }
            measured += static_cast<int>(reported.size());
        }
        for (const CompiledCandidate &c : compiled) {
            if (!c.shared_object.empty()) remove_compiled(c, options.work_dir);
        }
        batches++;
        batch_seconds += seconds_since(batch_start);
        group_seconds[this_group] += seconds_since(batch_start);
        group_batches[this_group]++;
        index_log();

        // Progress: candidates, the best so far in this group, time left.
        double best = 0;
        std::string best_knobs;
        for (const Trial &t : log.trials()) {
            if (t.op != g.op || t.device != g.device || t.structure != g.structure) continue;
            const double s = group_speedup(g, t.knobs, by_key, proto);
            if (s > best) {
                best = s;
                best_knobs = knobs_text(t.knobs);
            }
        }
        curve[this_group].push_back({seconds_since(start), measured, best});
        std::ostringstream line;
        line << "[tune " << clock_text(seconds_since(start)) << "/" << clock_text(options.budget_s) << "] "
             << measured << " measured, " << resumed << " resumed | " << g.op << " " << g.structure.key()
             << ": best " << std::fixed;
        line.precision(2);
        const auto from_library = std::count_if(compiled.begin(), compiled.end(),
                                                [](const CompiledCandidate &c) { return !c.library_variant.empty(); });
        line << best << "x over generic (geomean of " << g.shapes.size() << " shapes; batch of " << batch.size()
             << (from_library ? ", " + std::to_string(from_library) + " from the library" : "") << ": compile "
             << compile_seconds << " s, measure " << seconds_since(batch_start) - compile_seconds
             << " s)";
        if (tty) {
            std::cerr << "\r\033[K" << line.str() << std::flush;
        } else {
            std::cerr << line.str() << "\n";
        }
    }
    if (tty) std::cerr << "\n";
    fs::remove_all(reference_dir);
    const double elapsed = seconds_since(start);
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f", elapsed > 0 ? 60.0 * measured / elapsed : 0.0);
    std::cerr << "gradtune tune: " << measured << " candidates measured (" << rate << " per minute), " << resumed
              << " found in the log, " << clock_text(elapsed) << " elapsed. Next: gradtune distill\n";
    write_curve(options.log_path, groups, curve, elapsed, measured);
    return 0;
}

int measure_batch(const std::string &batch_path) {
    json batch;
    {
        std::ifstream in(batch_path);
        batch = json::parse(in);
    }
    MeasureOptions options;
    options.samples = batch["measure"].value("samples", 7);
    options.min_sample_ms = batch["measure"].value("min_sample_ms", 20.0);
    options.slow_factor = batch["measure"].value("slow_factor", options.slow_factor);
    const Device device = device_from_string(batch.value("device", "cpu")).value_or(Device::cpu);
    const int threads = halide_threads();
    int candidate_calls = 0;  // candidate checks so far, over all shapes (inject_fault)

    struct Loaded {
        size_t index;
        ExternalKernel kernel;
        std::string variant;  // the library's own variant instead of a compiled one
    };
    std::vector<Loaded> loaded;
    for (const json &c : batch["candidates"]) {
        Loaded l{c.at("index").get<size_t>(), {}, c.value("variant", "")};
        if (!l.variant.empty()) {
            loaded.push_back(std::move(l));
            continue;
        }
        void *handle = dlopen(c.at("shared_object").get<std::string>().c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            std::cout << json{{"candidate", l.index}, {"shape_id", ""}, {"status", "failed"}, {"error", dlerror()}}
                      << std::endl;
            continue;
        }
        l.kernel.name = c.at("function").get<std::string>();
        l.kernel.function = reinterpret_cast<void (*)()>(dlsym(handle, l.kernel.name.c_str()));
        Structure s = structure_from_json(c.at("structure"));
        l.kernel.dtype = s.dtype;
        l.kernel.data_format = s.data_format;
        l.kernel.structure = s.fixed;
        l.kernel.device = device;
        loaded.push_back(std::move(l));
    }

    for (const json &shape : batch["shapes"]) {
        const std::string shape_id = shape.at("shape_id").get<std::string>();
        MaterialisedCall m;
        CallInfo info;
        Status st = materialise(shape.at("call"), 42, &m);
        if (st.ok()) st = DescribeCall(m.call, &info);
        RunOptions generic;
        generic.device = device;
        generic.variant = generic_variant(info, device);
        // The reference: the generic variant's outputs, run here or read
        // back from an earlier batch of the run (<reference>-<output>.npy).
        std::vector<Tensor> reference;
        const std::string reference_prefix = shape.value("reference", "");
        for (int o = 0; st.ok() && !reference_prefix.empty(); o++) {
            const std::string path = reference_prefix + "-" + std::to_string(o) + ".npy";
            if (!std::filesystem::exists(path)) break;
            reference.emplace_back();
            if (!read_npy(path, &reference.back()).ok()) reference.clear();
        }
        const bool cached = !reference.empty();
        double generic_call_ms = 0;
        if (st.ok() && !cached) {
            const auto generic_start = std::chrono::steady_clock::now();
            st = RunOp(m.call, &reference, generic);
            generic_call_ms = 1e3 * seconds_since(generic_start);
            for (size_t o = 0; st.ok() && !reference_prefix.empty() && o < reference.size(); o++) {
                const std::string path = reference_prefix + "-" + std::to_string(o) + ".npy";
                if (!write_npy(path + ".tmp", reference[o]).ok()) break;  // a full disk: no cache, no harm
                std::filesystem::rename(path + ".tmp", path);
            }
        }
        if (!st.ok()) {
            std::cerr << "gradtune measure: " << shape_id << ": " << st.ToString() << "\n";
            return 3;
        }
        // The generic variant is timed side by side with the candidates of
        // a shape's first batch; later batches get that timing.
        const bool generic_known = shape.contains("generic");
        const double generic_ms =
            generic_known ? shape["generic"].value("median_ms", 0.0) : generic_call_ms;
        // The cut for clear losers, against the generic variant or the
        // fastest candidate measured so far on the shape, whichever is faster.
        double cut_ms = options.slow_factor * generic_ms;
        if (const double best = shape.value("best_ms", 0.0); best > 0)
            cut_ms = std::min(cut_ms, options.slow_factor * best);
        // Correctness first: each candidate against the generic variant.
        std::vector<std::function<Status()>> participants;
        std::vector<std::vector<Tensor>> outputs(loaded.size() + 1, reference);
        if (!generic_known) participants.push_back([&, generic] { return RunOp(m.call, &outputs[0], generic); });
        std::chrono::steady_clock::time_point call_start;
        std::vector<size_t> timed;  // indices into `loaded`
        // Each candidate's first call writes into one output set allocated
        // once per shape, poisoned (all bits set: NaN, -1) before each call so
        // that an element a candidate leaves unwritten cannot pass: a fresh
        // output would charge the first call with its page faults (150 MB of
        // an N=32 input gradient faults in for longer than a good schedule
        // computes it), and the cut against the fastest candidate's median
        // would then throw good candidates away.
        std::vector<Tensor> got = reference;
        for (size_t i = 0; i < loaded.size(); i++) {
            std::cout << json{{"running", loaded[i].index}, {"shape_id", shape_id}} << std::endl;
            inject_fault(++candidate_calls);
            RunOptions o;
            o.device = device;
            if (loaded[i].variant.empty()) {
                o.external_kernel = &loaded[i].kernel;
            } else {
                o.variant = loaded[i].variant;
            }
            for (Tensor &t : got) std::memset(t.data(), 0xff, t.num_elements() * DataTypeSize(t.dtype()));
            call_start = std::chrono::steady_clock::now();
            Status run = RunOp(m.call, &got, o);
            const double call_ms = 1e3 * seconds_since(call_start);
            std::string wrong = run.ok() ? compare_outputs(got, reference) : "";
            if (!run.ok() || !wrong.empty()) {
                if (got.size() != reference.size()) got = reference;  // a failed call may leave it emptied
                std::cout << json{{"candidate", loaded[i].index},
                                  {"shape_id", shape_id},
                                  {"status", run.ok() ? "wrong" : "failed"},
                                  {"error", run.ok() ? wrong : run.ToString()}}
                          << std::endl;
                continue;
            }
            // A clear loser is not timed further: its samples would cost
            // most of a batch (a bad schedule of a large N=32 shape runs for
            // seconds a call) and it can never be a record. The call is the
            // candidate's first (cold code and caches), so the cut is
            // generous; calls shorter than a sample cost no more to time
            // than the cut would save.
            if (call_ms > cut_ms && call_ms > options.min_sample_ms) {
                std::cout << json{{"candidate", loaded[i].index},
                                  {"shape_id", shape_id},
                                  {"status", "slow"},
                                  {"error", "one call took " + ratio_text(call_ms / generic_ms) +
                                                " the generic variant's (" + ratio_text(call_ms / cut_ms * options.slow_factor) +
                                                " the fastest so far); not timed further"},
                                  {"median_ms", call_ms},
                                  {"min_ms", call_ms},
                                  {"samples", 1},
                                  {"iterations", 1},
                                  {"generic_median_ms", generic_ms},
                                  {"threads", threads}}
                          << std::endl;
                continue;
            }
            timed.push_back(i);
            participants.push_back([&, o, slot = timed.size()] { return RunOp(m.call, &outputs[slot], o); });
        }
        // Every candidate ran once on this shape: a crash from here on is no
        // one candidate's (the parent blames nobody).
        std::cout << json{{"timing", shape_id}} << std::endl;
        MeasureOptions warm = options;
        warm.warm = true;  // the candidates ran for the check above, the generic for the reference
        std::vector<Timing> timing = time_interleaved(participants, warm);
        Timing generic_timing;
        if (generic_known) {
            generic_timing.median_ms = generic_ms;
            generic_timing.spread_pct = shape["generic"].value("spread_pct", 0.0);
        } else if (!timing.empty()) {
            generic_timing = timing.front();
            timing.erase(timing.begin());
        }
        for (size_t k = 0; k < timed.size(); k++) {
            const Timing &t = timing[k];
            std::cout << json{{"candidate", loaded[timed[k]].index},
                              {"shape_id", shape_id},
                              {"status", t.status.ok() ? "ok" : "failed"},
                              {"error", t.status.ok() ? "" : t.status.ToString()},
                              {"median_ms", t.median_ms},
                              {"min_ms", t.min_ms},
                              {"spread_pct", t.spread_pct},
                              {"samples", t.samples},
                              {"iterations", t.iterations},
                              {"generic_median_ms", generic_timing.median_ms},
                              {"generic_spread_pct", generic_timing.spread_pct},
                              {"threads", threads}}
                      << std::endl;
        }
    }
    return 0;
}

}  // namespace gradtune::tooling
