// The tuner's loop: groups the suite's calls by (op, device, structure), gives
// each group a search strategy (search.h) seeded with the space's defaults,
// the structure default and every class's records, and takes the groups in
// turn: the strategy proposes a batch, the batch runner (batch.h) compiles
// and measures it and logs the results, the strategy learns them. Killed and
// restarted, it skips what the trials log holds.
#include "tune.h"

#include "journal_suite.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "batch.h"
#include "build_info.h"
#include "call_json.h"
#include "candidates.h"
#include "records.h"
#include "search.h"
#include "suite.h"
#include "trials.h"

namespace gradtune::tooling {

namespace fs = std::filesystem;
using nlohmann::json;

std::string default_log_path() {
    return build_info().source_dir + "/.gradtune/trials-" + build_info().target_class() + ".jsonl";
}

namespace {

std::string clock_text(double seconds) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%d:%02d", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
    return buffer;
}

// The tuning curve of a run: printed (best-so-far per group at a quarter,
// half and all of the run) and written as JSON next to the trials log
// (<log>.curve.json: per group, [seconds, candidates measured, best] after
// each of its batches).
struct CurvePoint {
    double seconds;
    int measured;
    double best;
};
using Curve = std::vector<std::vector<CurvePoint>>;  // per group

void write_curve(const std::string &log_path, const std::vector<Group> &groups, const Curve &curve, double elapsed,
                 int measured) {
    json out = {{"elapsed_s", elapsed}, {"measured", measured}, {"groups", json::array()}};
    std::cerr << "tuning curve (best-so-far geomean speedup over the generic variant, per structure group):\n"
              << "  at " << clock_text(elapsed / 4) << " / " << clock_text(elapsed / 2) << " / "
              << clock_text(elapsed) << "\n";
    for (size_t i = 0; i < groups.size(); i++) {
        json points = json::array();
        for (const CurvePoint &p : curve[i]) points.push_back({p.seconds, p.measured, p.best});
        out["groups"].push_back({{"group", groups[i].label()}, {"points", points}});
        auto best_at = [&](double t) {
            double b = 0;
            for (const CurvePoint &p : curve[i])
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

// The calls to tune: a shape journal's signatures, a suite file or the
// default suite. False (after saying why) when there are none.
bool tuning_suite(const TuneOptions &options, std::vector<SuiteEntry> *suite) {
    if (options.journal_path.empty()) {
        *suite = options.suite_path.empty() ? default_suite(options.ops, options.batches) : load_suite(options.suite_path);
        return true;
    }
    JournalSuite journalled = journal_suite(options.journal_path, to_string(options.device), options.top);
    for (const std::string &note : journalled.notes) std::cerr << "gradtune tune: " << note << "\n";
    if (journalled.entries.empty()) {
        std::cerr << "gradtune tune: " << options.journal_path << " journals no " << to_string(options.device)
                  << " call that can be tuned\n";
        return false;
    }
    std::cerr << "gradtune tune: " << journalled.entries.size() << " journalled signature(s), heaviest first\n";
    *suite = std::move(journalled.entries);
    return true;
}

// --device cuda where no GPU can run it: one clear error before anything is
// compiled, not a crashed measuring child for every batch. Asks by running
// the suite's first call on the GPU once.
bool device_present(const TuneOptions &options, const std::vector<SuiteEntry> &suite) {
    if (options.device != Device::cuda || suite.empty()) return true;
    MaterialisedCall m;
    if (!materialise(suite.front().call, 1, &m).ok()) return true;  // the measuring child reports it
    RunOptions cuda;
    cuda.device = Device::cuda;
    std::vector<Tensor> outputs;
    const Status status = RunOp(m.call, &outputs, cuda);
    if (status.code() != StatusCode::kUnavailable) return true;
    std::cerr << "gradtune tune --device cuda: " << status.message() << "\n";
    return false;
}

// The suite's calls grouped by (op, device, structure); with --shard K/N,
// this shard's groups only. Returns the exit status: 0, or 2 after saying why.
int make_groups(const TuneOptions &options, const std::vector<SuiteEntry> &suite, std::vector<Group> *groups) {
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
        auto it = std::find_if(groups->begin(), groups->end(), [&](const Group &g) {
            return g.op == e.op && g.device == options.device && g.structure == s;
        });
        if (it == groups->end()) it = groups->insert(groups->end(), Group{e.op, options.device, s, {}, {}, nullptr});
        it->shapes.push_back(&e);
        it->infos.push_back(ci);
    }
    if (skipped) std::cerr << "gradtune tune: " << skipped << " suite entries skipped (op not in this build)\n";
    if (options.shards > 1) {
        // Whole groups, dealt round-robin: a group's candidates are compiled
        // once for all of its shapes (the tuner is compile-bound), and its
        // seeds and sampler depend on the seed and the group alone, so a shard
        // draws for a group what an unsharded run draws for it (until timings
        // steer the refinement, which they do in both).
        std::vector<Group> mine;
        for (size_t i = 0; i < groups->size(); i++)
            if (static_cast<int>(i % options.shards) == options.shard) mine.push_back(std::move((*groups)[i]));
        std::cerr << "gradtune tune: shard " << options.shard << "/" << options.shards << ": " << mine.size() << " of "
                  << groups->size() << " structure group(s)\n";
        *groups = std::move(mine);
        if (groups->empty()) std::cerr << "gradtune tune: nothing for this shard to tune\n";
        return 0;
    }
    if (groups->empty()) {
        std::cerr << "gradtune tune: nothing to tune\n";
        return 2;
    }
    return 0;
}

// A group's seeds, measured first: the space's defaults and each other
// algorithm's starting point, the structure default, then the committed
// records of every class for the group, this class first and then the
// nearest classes (so a re-tune never ends below what was committed, and a
// new CPU starts from what was found on others). Those the library holds
// compiled go first: they are the likeliest winners and cost no compile.
std::deque<Knobs> group_seeds(const TuneOptions &options, const Group &g, const KnobSpace &space,
                              const std::vector<StructureDefault> &structure_defaults) {
    const BuildInfo &info = build_info();
    const OpSchema *op = find_op(g.op);
    std::deque<Knobs> seeds{space.defaults()};
    for (const Knobs &k : space.algorithm_seeds)
        if (space.check(k).empty()) seeds.push_back(k);
    // Every seed is also tried with each other value of the knobs added or
    // given new values in the op's current knob-space version (made
    // canonical, where legal then): the committed records predate them.
    auto seed = [&](const std::string &op_name, Device device, const Structure &structure, const Knobs &knobs) {
        if (op_name != g.op || device != g.device || !(structure == g.structure) || !space.check(knobs).empty()) return;
        seeds.push_back(knobs);
        for (const Knob &knob : space.knobs) {
            const int changed = std::max(knob.since_version, knob.values_since);
            if (changed != op->knob_space_version || changed == 1) continue;
            for (int value : knob.values) {
                Knobs variant = knobs;
                variant[knob.name] = value;
                variant = space.canonical(variant);
                if (variant != knobs && space.check(variant).empty()) seeds.push_back(variant);
            }
        }
    };
    if (options.record_seeds) {
        for (const StructureDefault &d : structure_defaults) seed(d.op, d.device, d.structure, d.knobs);
        for (const std::string &klass : record_classes(info.records_dir, info.target_class())) {
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
    std::stable_partition(seeds.begin(), seeds.end(), [&](const Knobs &k) { return !library_variant(g, k).empty(); });
    return seeds;
}

// Gives each group its search, seeded, and tells it what the log already
// holds of this build's code on the group's shapes.
void start_searches(const TuneOptions &options, const TrialLog &log, std::vector<Group> *groups) {
    std::vector<StructureDefault> structure_defaults;
    try {
        structure_defaults = read_structure_defaults(build_info().defaults_dir());
    } catch (const std::exception &e) {
        std::cerr << "gradtune tune: ignoring the structure defaults: " << e.what() << "\n";
    }
    for (Group &g : *groups) {
        KnobSpace space = find_op(g.op)->space(g.device, g.structure);
        uint64_t h = options.seed;
        for (unsigned char c : g.label()) h = (h ^ c) * 1099511628211ull;
        std::vector<GroupShape> shapes;
        for (const CallInfo &info : g.infos) shapes.push_back({info.shape, info.padding});
        std::deque<Knobs> seeds = group_seeds(options, g, space, structure_defaults);
        g.search = std::make_unique<SeededSearch>(std::move(space), h, std::move(shapes), std::move(seeds));
        // The search learns from the log's trials of this kernel measured the
        // same way (a cold-cache trial says little of a warm one's rank).
        const Trial identity = g.trial(Knobs{}, 0, options.measure.evict_mb);
        for (const Trial &t : log.trials())
            if (t.op == g.op && t.device == g.device && t.structure == g.structure && t.target == identity.target &&
                t.knob_space_version == identity.knob_space_version && t.halide_version == identity.halide_version &&
                t.evict_mb == identity.evict_mb)
                g.search->notify(t);
    }
}

// Up to batch_size settings not yet measured on every shape: one measuring
// child, one reference call and one generic timing per shape serve the whole
// batch. A setting the log holds on every shape counts as resumed.
std::vector<Knobs> draw_batch(const TuneOptions &options, Group &g, const TrialLog &log, int measured, int *resumed) {
    std::vector<Knobs> batch;
    while (static_cast<int>(batch.size()) < std::max(options.jobs, options.batch_size)) {
        if (options.max_trials && measured + *resumed + static_cast<int>(batch.size()) >= options.max_trials) break;
        std::optional<Knobs> k = g.search->next();
        if (!k) break;
        bool all_logged = true;
        for (size_t s = 0; s < g.shapes.size(); s++)
            all_logged = all_logged && log.measured(g.trial(*k, s, options.measure.evict_mb).measurement_key());
        if (all_logged) {
            ++*resumed;
            continue;
        }
        batch.push_back(*k);
    }
    return batch;
}

// Seconds per batch of each group: heavy groups (large convolutions at N=32)
// take a minute a batch, light ones seconds. A group whose next batch would
// end past the budget is not started again, so the run ends within the budget
// (up to the error of the estimate).
class BatchClock {
public:
    explicit BatchClock(size_t groups) : seconds_(groups, 0), batches_(groups, 0) {}
    bool all_done() const { return done_.size() == seconds_.size(); }
    bool done(size_t g) const { return done_.count(g) > 0; }
    void finish(size_t g) { done_.insert(g); }
    // Whether group g's next batch ends within the budget; if not, g is done.
    bool fits(size_t g, double elapsed, double budget) {
        const double estimate = batches_[g] ? seconds_[g] / batches_[g] : all_batches_ ? all_seconds_ / all_batches_ : 0;
        if (elapsed + estimate <= budget) return true;
        finish(g);
        return false;
    }
    void add(size_t g, double seconds) {
        seconds_[g] += seconds;
        batches_[g]++;
        all_seconds_ += seconds;
        all_batches_++;
    }

private:
    std::vector<double> seconds_;
    std::vector<int> batches_;
    double all_seconds_ = 0;
    int all_batches_ = 0;
    std::set<size_t> done_;
};

// Progress: candidates, the best so far in this group, time left.
void print_progress(const TuneOptions &options, double elapsed, int measured, int resumed, const Group &g,
                    size_t batch_size, const BatchOutcome &out, bool tty) {
    std::ostringstream line;
    line << "[tune " << clock_text(elapsed) << "/" << clock_text(options.budget_s) << "] " << measured << " measured, "
         << resumed << " resumed | " << g.op << " " << g.structure.key() << ": best " << std::fixed;
    line.precision(2);
    line << g.search->best_speedup() << "x over generic (geomean of " << g.shapes.size() << " shapes; batch of "
         << batch_size << (out.from_library ? ", " + std::to_string(out.from_library) + " from the library" : "")
         << ": compile " << out.compile_s << " s, measure " << out.measure_s << " s)";
    if (tty) {
        std::cerr << "\r\033[K" << line.str() << std::flush;
    } else {
        std::cerr << line.str() << "\n";
    }
}

}  // namespace

int tune(const TuneOptions &options) {
    const auto start = std::chrono::steady_clock::now();
    const bool tty = isatty(fileno(stderr));
    std::vector<SuiteEntry> suite;
    std::vector<Group> groups;  // point into `suite`
    if (!tuning_suite(options, &suite) || !device_present(options, suite)) return 2;
    if (int rc = make_groups(options, suite, &groups); rc != 0 || groups.empty()) return rc;
    TrialLog log(options.log_path);
    start_searches(options, log, &groups);
    std::cerr << "gradtune tune: " << groups.size() << " structure group(s), budget " << clock_text(options.budget_s)
              << (options.max_trials ? ", at most " + std::to_string(options.max_trials) + " candidates" : "")
              << ", log " << options.log_path << "\n";
    for (const Group &g : groups) std::cerr << "  " << g.label() << "\n";

    BatchRunner runner(options, &log, start);
    BatchClock clock(groups.size());
    Curve curve(groups.size());
    int measured = 0, resumed = 0;
    for (size_t i = 0; !clock.all_done(); i = (i + 1) % groups.size()) {
        if (seconds_since(start) >= options.budget_s) break;
        // The limit counts resumed candidates too: a killed and resumed run
        // ends with the same candidates as an uninterrupted one.
        if (options.max_trials && measured + resumed >= options.max_trials) break;
        if (clock.done(i) || !clock.fits(i, seconds_since(start), options.budget_s)) continue;
        Group &g = groups[i];
        const std::vector<Knobs> batch = draw_batch(options, g, log, measured, &resumed);
        if (batch.empty()) {
            if (g.search->exhausted()) clock.finish(i);
            continue;
        }
        const BatchOutcome out = runner.run(g, batch);
        for (const Trial &t : out.logged) g.search->notify(t);
        for (const Knobs &k : out.not_measured) g.search->give_back(k);
        measured += out.measured;
        clock.add(i, out.compile_s + out.measure_s);
        curve[i].push_back({seconds_since(start), measured, g.search->best_speedup()});
        print_progress(options, seconds_since(start), measured, resumed, g, batch.size(), out, tty);
    }
    if (tty) std::cerr << "\n";
    const double elapsed = seconds_since(start);
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f", elapsed > 0 ? 60.0 * measured / elapsed : 0.0);
    std::cerr << "gradtune tune: " << measured << " candidates measured (" << rate << " per minute), " << resumed
              << " found in the log, " << clock_text(elapsed) << " elapsed. Next: gradtune distill\n";
    write_curve(options.log_path, groups, curve, elapsed, measured);
    return 0;
}

}  // namespace gradtune::tooling
