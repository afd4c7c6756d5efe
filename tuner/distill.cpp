#include "distill.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <optional>
#include <filesystem>
#include <iostream>
#include <cstdio>
#include <map>
#include <set>

#include "build_info.h"
#include "candidates.h"
#include "records.h"
#include "trials.h"

namespace gradtune::tooling {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A trial's time relative to the generic variant's, timed interleaved with it
// in the same measuring process. Trials are compared by this, never by their
// absolute times: those of different runs are hours apart, and this
// machine's speed drifts up to 1.6x in a day, so a candidate measured in a
// fast hour would beat a faster one measured in a slow hour.
double relative_time(const Trial &t) { return t.median_ms / t.generic_median_ms; }

// One (op, device, structure) group of distill_defaults: the trials' times
// relative to the generic variant's, by setting and shape.
struct DefaultGroup {
    const Trial *first = nullptr;
    std::map<std::string, double> best;  // shape key -> best relative time
    std::map<std::string, int> settings;  // shape key -> settings measured on it
    std::map<std::string, std::map<std::string, double>> times;  // knobs text -> shape key -> relative time
    std::map<std::string, std::set<std::string>> slow;  // knobs text -> shapes it was cut on
    std::map<std::string, Knobs> knobs;
};

// The trials by (op, device, structure) group.
std::map<std::string, DefaultGroup> group_trials(const std::vector<const Trial *> &trials) {
    std::map<std::string, DefaultGroup> groups;
    for (const Trial *trial : trials) {
        const Trial &t = *trial;
        DefaultGroup &g = groups[t.op + "|" + to_string(t.device) + "|" + t.structure.key()];
        if (!g.first) g.first = &t;
        const std::string shape = t.shape_key(), text = knobs_text(t.knobs);
        if (t.status == TrialStatus::slow) {
            auto ok = g.times.find(text);
            const bool measured_ok = ok != g.times.end() && ok->second.count(shape);
            if (!measured_ok && g.slow[text].insert(shape).second) g.settings[shape]++;
            continue;
        }
        if (auto cut = g.slow.find(text); cut != g.slow.end() && cut->second.erase(shape))
            g.settings[shape]--;  // measured ok after all
        const double relative = relative_time(t);
        auto best = g.best.find(shape);
        if (best == g.best.end() || relative < best->second) g.best[shape] = relative;
        auto &time = g.times[text];
        if (!time.count(shape)) g.settings[shape]++;
        if (!time.count(shape) || relative < time[shape]) time[shape] = relative;
        g.knobs[text] = t.knobs;
    }
    return groups;
}

// The structure default of each group measured on enough shapes, by op.
std::map<std::string, std::vector<StructureDefault>> choose_defaults(const std::map<std::string, DefaultGroup> &groups,
                                                                     const std::string &klass) {
    std::map<std::string, std::vector<StructureDefault>> chosen;  // op -> defaults
    for (const auto &[key, g] : groups) {
        int most = 0;
        for (const auto &[shape, n] : g.settings) most = std::max(most, n);
        std::set<std::string> core;
        for (const auto &[shape, n] : g.settings)
            if (2 * n >= most) core.insert(shape);
        std::string best_text;
        double best_worst = 0;
        int eligible = 0;
        for (const auto &[text, times] : g.times) {
            double worst = 1;
            size_t covered = 0;
            for (const auto &[shape, relative] : times) {
                if (!core.count(shape)) continue;
                covered++;
                worst = std::max(worst, relative / g.best.at(shape));
            }
            if (covered != core.size()) continue;  // not measured on every core shape
            eligible++;
            if (best_text.empty() || worst < best_worst) {
                best_text = text;
                best_worst = worst;
            }
        }
        if (best_text.empty()) continue;
        const Trial &t = *g.first;
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.2fx", best_worst);
        StructureDefault d;
        d.op = t.op;
        d.device = t.device;
        d.structure = t.structure;
        d.knobs = g.knobs.at(best_text);
        d.knob_space_version = t.knob_space_version;
        d.halide_version = t.halide_version;
        d.worst_ratio = best_worst;
        d.measured_on = klass;
        d.chosen_by = "lowest worst-case time ratio to each shape's best (" + std::string(ratio) + ") among " +
                      std::to_string(eligible) + " settings measured on " +
                      (core.size() == g.settings.size() ? "all " + std::to_string(core.size())
                                                        : std::to_string(core.size()) + " of the " +
                                                              std::to_string(g.settings.size())) +
                      " shapes of the group on " + klass +
                      " (seeded with every class's records, the previous default and the space's defaults)";
        chosen[t.op].push_back(d);
    }
    return chosen;
}

// Writes the chosen defaults into each op's file of options.defaults_dir,
// keeping the defaults of structures this log did not measure, and the
// settings of the other kind of target.
void merge_defaults(const std::map<std::string, std::vector<StructureDefault>> &chosen,
                    const DistillOptions &options, const std::string &klass) {
    // A log of the AVX2 target (tuned under GRADTUNE_MAX_CPU_ISA=avx2) sets
    // the defaults' AVX2 settings and leaves their own knobs as they are.
    const bool avx2 = class_isa(klass) == "avx2";
    for (auto &[op, defaults] : chosen) {
        // Keep the defaults of structures this log did not measure, and the
        // settings of the other kind of target.
        std::vector<StructureDefault> merged;
        try {
            std::vector<StructureDefault> old_defaults = read_structure_defaults(options.defaults_dir);
            for (StructureDefault &old : old_defaults) {
                if (old.op != op) continue;
                const StructureDefault *now = nullptr;
                for (const StructureDefault &d : defaults)
                    if (d.device == old.device && d.structure == old.structure) now = &d;
                if (now && avx2) {
                    old.avx2 = {now->knobs, now->chosen_by, now->worst_ratio, now->measured_on};
                } else if (now) {
                    const StructureDefault::Avx2 kept = old.avx2;
                    old = *now;
                    old.avx2 = kept;
                }
                merged.push_back(old);
            }
            for (const StructureDefault &d : defaults) {
                bool present = false;
                for (const StructureDefault &m : merged) present = present || (m.device == d.device && m.structure == d.structure);
                if (present) continue;
                if (avx2)
                    std::cerr << "gradtune distill: no structure default of " << op << " " << d.structure.key()
                              << " to give the AVX2 setting to; tune it without GRADTUNE_MAX_CPU_ISA first\n";
                else
                    merged.push_back(d);
            }
        } catch (const std::exception &e) {
            std::cerr << "gradtune distill: not touching the structure defaults: " << e.what() << "\n";
            return;
        }
        write_structure_defaults(options.defaults_dir, op, merged);
        std::cerr << "gradtune distill: " << options.defaults_dir << "/" << op << ".json: " << defaults.size()
                  << " structure default(s) chosen, " << merged.size() << " in all\n";
    }
}

// Structure defaults from the log: per (op, device, structure), among the
// settings measured ok on every core shape of the group, the one whose worst
// ratio to each core shape's best is lowest (times relative to the generic
// variant's, as everywhere in distill). The core shapes are those measured
// with at least half as many settings as the group's most measured shape,
// counting the settings cut as slow there (a clear loser is a measurement
// too: without it a group whose large shape cut most settings would choose
// its default on the small shape alone): a few shapes a retune adds later
// (with their own exact records) do not shrink the pool of settings the
// default is chosen from. The tuner seeds every group with the records of
// every class and the previous default, so the choice ranges over all of
// them and the tuner's own candidates.
void distill_defaults(const std::vector<const Trial *> &trials, const DistillOptions &options,
                      const std::string &klass) {
    merge_defaults(choose_defaults(group_trials(trials), klass), options, klass);
}

// How much faster than the committed record, side by side, a setting must
// be to replace it (the spreads of these timings are 5-20 %).
constexpr double kRecordMargin = 1.05;

// The key of a record, or of the record a trial is for: one record per
// (op, device, structure, shape).
template <typename RecordOrTrial>
std::string record_key(const RecordOrTrial &r) {
    return r.op + "|" + to_string(r.device) + "|" + r.structure.key() + "|" + r.shape_key();
}

// A trial's generic timing is an outlier when it is this much slower than
// the median generic timing of its shape's trials. Its relative time then
// flatters the trial: a record logged beside a generic of 12.5 ms, where the
// shape's other trials read 5.8-6.6 ms, looked 2x faster than it was, so no
// later trial could beat it in the log and it was never timed again.
constexpr double kGenericOutlier = 1.3;

// The median generic timing of each record key's trials.
std::map<std::string, double> median_generic(const std::vector<const Trial *> &usable) {
    std::map<std::string, std::vector<double>> times;
    for (const Trial *t : usable) times[record_key(*t)].push_back(t->generic_median_ms);
    std::map<std::string, double> median;
    for (auto &[key, list] : times) {
        std::nth_element(list.begin(), list.begin() + list.size() / 2, list.end());
        median[key] = list[list.size() / 2];
    }
    return median;
}

// The knobs of this class's committed records by record key (an unreadable
// file is reported by distill itself, which then writes nothing).
std::map<std::string, Knobs> committed_knobs(const std::vector<const Trial *> &usable, const DistillOptions &options,
                                             const std::string &klass) {
    std::map<std::string, Knobs> committed;
    std::set<std::string> ops;
    for (const Trial *t : usable) ops.insert(t->op);
    for (const std::string &op : ops) {
        try {
            const fs::path path = fs::path(options.records_dir) / klass / (op + ".json");
            if (!fs::exists(path)) continue;
            for (const Record &r : read_record_file(path.string()).records)
                if (!r.generic_wins) committed[record_key(r)] = r.knobs;
        } catch (const std::exception &) {
        }
    }
    return committed;
}

// Times the compiled settings of one shape (`first` names it) side by side,
// interleaved in one measuring process; the timed ones' results by their
// index. nullopt when fewer than two compiled or the measurement failed.
std::optional<std::map<size_t, json>> time_side_by_side(const Trial &first,
                                                        const std::vector<const CompiledCandidate *> &compiled,
                                                        const DistillOptions &options) {
    json batch = {{"shapes", json::array({{{"shape_id", first.shape_id}, {"call", first.call}}})},
                  {"candidates", json::array()},
                  {"measure", {{"samples", options.measure.samples},
                               {"min_sample_ms", options.measure.min_sample_ms},
                               {"evict_mb", options.measure.evict_mb},
                               {"slow_factor", 1e9}}},  // time every one
                  {"device", to_string(first.device)}};
    for (size_t i = 0; i < compiled.size(); i++) {
        if (compiled[i]->shared_object.empty()) continue;
        batch["candidates"].push_back({{"index", i},
                                       {"shared_object", compiled[i]->shared_object},
                                       {"function", compiled[i]->candidate.function_name()},
                                       {"knobs", knobs_text(compiled[i]->candidate.knobs)},
                                       {"structure", gradtune::to_json(first.structure)}});
    }
    if (batch["candidates"].size() < 2) return std::nullopt;
    const std::string batch_path = options.work_dir + "/remeasure.json";
    const std::string results_path = options.work_dir + "/remeasure.jsonl";
    std::ofstream(batch_path) << batch.dump();
    if (run_process({options.self, "measure", "--batch", batch_path}, results_path) != 0) {
        std::cerr << "gradtune distill: " << first.op << " " << first.shape_id
                  << ": the side-by-side measurement failed; the log's choice stands\n";
        return std::nullopt;
    }
    std::map<size_t, json> result_of;  // index in settings -> its result
    std::ifstream results(results_path);
    for (std::string line; std::getline(results, line);) {
        const json r = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!r.is_object() || !r.contains("candidate") || r.value("status", "") != "ok") continue;
        if (!(r.value("median_ms", 0.0) > 0) || !(r.value("generic_median_ms", 0.0) > 0)) continue;
        const size_t i = r.at("candidate").get<size_t>();
        if (i < compiled.size()) result_of[i] = r;
    }
    return result_of;
}

// The settings distill times side by side, per shape whose log's best
// setting is not its committed record, or is the record only by a trial
// timed beside an outlier generic timing (kGenericOutlier): the log's
// `options.remeasure` best settings and the record; each setting compiled
// once.
struct Contenders {
    std::map<std::string, std::vector<Trial>> of_shape;  // record key -> settings, the log's best first
    std::vector<Candidate> candidates;                   // every setting, compiled once
    std::map<std::string, size_t> compiled_index;        // function name -> index in candidates
};

Contenders pick_contenders(const std::vector<const Trial *> &usable, const DistillOptions &options,
                           const std::map<std::string, Knobs> &committed) {
    std::map<std::string, std::vector<const Trial *>> by_key;  // the best trial of each setting
    for (const Trial *t : usable) {
        std::vector<const Trial *> &settings = by_key[record_key(*t)];
        auto same = std::find_if(settings.begin(), settings.end(),
                                 [&](const Trial *other) { return other->knobs == t->knobs; });
        if (same == settings.end()) settings.push_back(t);
        else if (relative_time(*t) < relative_time(**same)) *same = t;
    }
    const std::map<std::string, double> generic = median_generic(usable);
    Contenders c;
    for (auto &[key, settings] : by_key) {
        std::stable_sort(settings.begin(), settings.end(),
                         [](const Trial *a, const Trial *b) { return relative_time(*a) < relative_time(*b); });
        auto record = committed.find(key);
        const bool flattered = settings.front()->generic_median_ms > kGenericOutlier * generic.at(key);
        if (record != committed.end() && record->second == settings.front()->knobs && !flattered)
            continue;  // the log agrees with the record
        std::vector<Trial> list;
        for (const Trial *t : settings) {
            if (static_cast<int>(list.size()) >= options.remeasure) break;
            list.push_back(*t);
        }
        if (record != committed.end() &&
            std::none_of(list.begin(), list.end(), [&](const Trial &t) { return t.knobs == record->second; })) {
            Trial t = *settings.front();
            t.knobs = record->second;
            list.push_back(t);
        }
        if (list.size() < 2) continue;
        for (const Trial &t : list) {
            Candidate candidate{t.op, t.device, t.structure, t.knobs};
            if (c.compiled_index.emplace(candidate.function_name(), c.candidates.size()).second)
                c.candidates.push_back(candidate);
        }
        c.of_shape[key] = std::move(list);
    }
    return c;
}

// Picks one shape's setting from its side-by-side medians (`result_of`:
// index in `settings` -> result): the fastest, unless the committed record
// (`kept`) is within kRecordMargin of it, so that records do not flip
// between settings within the noise. Says what it chose, with every median.
size_t pick_fastest(const std::vector<Trial> &settings, const std::map<size_t, json> &result_of,
                    std::optional<size_t> kept) {
    auto median = [&](size_t i) { return result_of.at(i).at("median_ms").get<double>(); };
    size_t fastest = result_of.begin()->first;
    for (const auto &[i, r] : result_of)
        if (median(i) < median(fastest)) fastest = i;
    if (kept && median(fastest) * kRecordMargin > median(*kept)) fastest = *kept;
    char faster[64] = "";
    if (kept && fastest != *kept)
        std::snprintf(faster, sizeof faster, ", %.2fx the committed record's speed", median(*kept) / median(fastest));
    std::string medians;  // every setting's, so that a note can quote the margins
    for (const auto &[i, r] : result_of) {
        char one[64];
        std::snprintf(one, sizeof one, "%s%s%.3f", medians.empty() ? "" : ", ", kept && i == *kept ? "record " : "",
                      median(i));
        medians += one;
    }
    const bool replaced = !kept || fastest != *kept;
    std::cerr << "gradtune distill: " << settings.front().op << " " << settings.front().shape_id
              << ": side by side with " << settings.size() - 1 << " other(s), "
              << (replaced ? "setting " + std::to_string(fastest + 1) + " of the log's best" + faster
                           : std::string("the committed record stays"))
              << " (medians, ms: " << medians << ")\n";
    return fastest;
}

// Times the contenders (pick_contenders) again, side by side in one
// measuring process per shape, and points `best` at each shape's pick
// (pick_fastest: a copy of its trial with the new times, kept in
// `remeasured`). A shape whose settings fail to compile or to measure keeps
// the log's choice.
void remeasure(const std::vector<const Trial *> &usable, const DistillOptions &options, const std::string &klass,
               std::map<std::string, const Trial *> *best, std::deque<Trial> *remeasured) {
    const std::map<std::string, Knobs> committed = committed_knobs(usable, options, klass);
    const Contenders contenders = pick_contenders(usable, options, committed);
    if (contenders.candidates.empty()) return;
    std::cerr << "gradtune distill: " << contenders.of_shape.size()
              << " shape(s) whose best in the log is not the record, or is by an outlier generic timing: "
              << "compiling " << contenders.candidates.size() << " setting(s) to time them side by side\n";
    const std::vector<CompiledCandidate> compiled = compile_candidates(contenders.candidates, options.work_dir, 2);
    int changed = 0, timed = 0;
    for (const auto &[key, settings] : contenders.of_shape) {
        std::vector<const CompiledCandidate *> compiled_settings;
        std::optional<size_t> kept;  // the committed record's index in `settings`
        for (size_t i = 0; i < settings.size(); i++) {
            const Trial &t = settings[i];
            compiled_settings.push_back(&compiled[contenders.compiled_index.at(
                Candidate{t.op, t.device, t.structure, t.knobs}.function_name())]);
            if (committed.count(key) && committed.at(key) == t.knobs) kept = i;
        }
        const std::optional<std::map<size_t, json>> result_of =
            time_side_by_side(settings.front(), compiled_settings, options);
        if (!result_of || result_of->empty()) continue;
        if (kept && !result_of->count(*kept)) kept.reset();  // the record failed to measure
        const size_t fastest = pick_fastest(settings, *result_of, kept);
        timed++;
        changed += !kept || fastest != *kept;
        Trial t = settings[fastest];
        read_measurement(result_of->at(fastest), &t);
        t.timestamp = now_utc();
        remeasured->push_back(t);
        (*best)[key] = &remeasured->back();
    }
    for (const CompiledCandidate &c : compiled) remove_compiled(c, options.work_dir);
    fs::remove(options.work_dir + "/remeasure.json");
    fs::remove(options.work_dir + "/remeasure.jsonl");
    std::cerr << "gradtune distill: " << timed << " shape(s) timed side by side, " << changed
              << " record(s) changed\n";
}

// A record of the best trial for its key.
Record record_of(const Trial &t, double min_speedup) {
    Record r;
    r.generic_wins = t.generic_median_ms < min_speedup * t.median_ms;
    r.op = t.op;
    r.device = t.device;
    r.structure = t.structure;
    r.padding = t.padding;
    r.shape = t.shape;
    r.call = t.call;
    r.knobs = t.knobs;
    r.median_ms = t.median_ms;
    r.min_ms = t.min_ms;
    r.spread_pct = t.spread_pct;
    r.generic_median_ms = t.generic_median_ms;
    r.samples = t.samples;
    r.threads = t.threads;
    r.evict_mb = t.evict_mb;
    r.target = t.target;
    r.cpu_model = t.cpu_model;
    r.halide_version = t.halide_version;
    r.knob_space_version = t.knob_space_version;
    r.source_hash = t.source_hash;
    r.tuned_at = t.timestamp;
    return r;
}

// Merges the best trials into the committed files: every key the log
// measured is decided by the log. A best trial that does not beat the
// generic variant by min_speedup becomes a generic_wins record: dispatch then
// serves that shape with the generic variant, and no tuned kernel is built
// for it. False (nothing written) when a committed file cannot be read.
bool write_records(const std::map<std::string, const Trial *> &best, const DistillOptions &options,
                   const std::string &klass) {
    const fs::path dir = fs::path(options.records_dir) / klass;
    std::map<std::string, RecordFile> files;
    for (const auto &[key, t] : best) {
        RecordFile &file = files[t->op];
        if (file.op.empty()) {
            file.op = t->op;
            file.target_class = klass;
            const fs::path path = dir / (t->op + ".json");
            if (fs::exists(path)) {
                // A file we cannot read (cut, garbage, a newer schema) is never
                // overwritten: its records would be lost.
                try {
                    file.records = read_record_file(path.string()).records;
                } catch (const std::exception &e) {
                    std::cerr << "gradtune distill: error: " << e.what()
                              << "\n  (nothing written: mend or move the file, then run distill again)\n";
                    return false;
                }
            }
        }
        auto same_key = [&](const Record &r) { return record_key(r) == key; };
        file.records.erase(std::remove_if(file.records.begin(), file.records.end(), same_key), file.records.end());
        file.records.push_back(record_of(*t, options.min_speedup));
    }
    fs::create_directories(dir);
    for (auto &[op, file] : files) {
        const std::string path = (dir / (op + ".json")).string();
        write_record_file(path, file);
        std::cerr << "gradtune distill: " << path << ": " << file.records.size() << " record(s)\n";
    }
    return true;
}

}  // namespace

int distill(const DistillOptions &options) {
    const BuildInfo &info = build_info();
    TrialLog log(options.log_path);
    if (log.trials().empty()) {
        std::cerr << "gradtune distill: no trials in " << options.log_path << " (run gradtune tune first)\n";
        return 2;
    }
    // The ok trials that still fit this build; the best per record key.
    // Slow ones (cut after one call at several times a shape's best) never
    // become records, but they tell the structure defaults that a setting
    // loses on that shape: without them a group whose larger shape cut most
    // settings would choose its default on the smaller shape alone.
    std::vector<const Trial *> usable, timed;  // timed: the usable ones and the slow ones
    std::map<std::string, const Trial *> best;
    int stale = 0, costly = 0, other_measure = 0;
    std::map<std::string, int> skipped;  // "op shape: why" -> trials (one line each, not one per trial)
    for (const Trial &t : log.trials()) {
        if (t.status != TrialStatus::ok && t.status != TrialStatus::slow) continue;
        // A trial the build would refuse as a record (a knob unknown to the
        // op's space, an illegal value or structure, no time) never becomes
        // one: the next configure step would stop on it.
        const OpSchema *op = find_op(t.op);
        std::string illegal = !op ? "unknown op " + t.op : op->check_structure(t.structure);
        if (illegal.empty() && !(t.median_ms > 0)) illegal = "median_ms " + std::to_string(t.median_ms);
        if (illegal.empty() && !(t.generic_median_ms > 0))
            illegal = "no generic variant timed beside it (generic_median_ms " + std::to_string(t.generic_median_ms) + ")";
        if (illegal.empty()) illegal = op->space(t.device, t.structure).check(t.knobs);
        if (!illegal.empty()) {
            skipped[t.op + " " + t.shape_id + ": " + illegal]++;
            continue;
        }
        // Valid as records are (Halide and knob-space version), and of this
        // machine's class (the log is per class; a trial of another class's
        // target would be mislabelled).
        if (!staleness(t, info.halide_version).empty() ||
            target_class(t.target) != info.target_class()) {
            stale++;
            continue;
        }
        // Measured as this distill asks (--evict-mb): cold-cache and warm
        // times of one setting are two measurements, not one.
        if (t.evict_mb != options.measure.evict_mb) {
            other_measure++;
            continue;
        }
        if (t.compile_s > options.max_compile_s) {
            costly++;
            continue;
        }
        timed.push_back(&t);
        if (t.status == TrialStatus::slow) continue;
        usable.push_back(&t);
        const std::string key = record_key(t);
        auto it = best.find(key);
        if (it == best.end() || relative_time(t) < relative_time(*it->second)) best[key] = &t;
    }
    for (const auto &[why, trials] : skipped)
        std::cerr << "gradtune distill: skipping " << trials << " trial(s) of " << why << "\n";
    if (stale)
        std::cerr << "gradtune distill: " << stale
                  << " trial(s) of another Halide or knob-space version or target class ignored\n";
    if (other_measure)
        std::cerr << "gradtune distill: " << other_measure << " trial(s) measured with another --evict-mb than "
                  << options.measure.evict_mb << " ignored\n";
    if (costly)
        std::cerr << "gradtune distill: " << costly << " trial(s) of settings that took over " << options.max_compile_s
                  << " s to compile ignored (--max-compile-s)\n";
    std::deque<Trial> remeasured;  // owns the trials `best` points to after remeasure()
    if (options.remeasure > 0) remeasure(usable, options, info.target_class(), &best, &remeasured);
    const std::string klass = info.target_class();
    if (!write_records(best, options, klass)) return 2;
    if (!options.defaults_dir.empty()) distill_defaults(timed, options, klass);
    for (const auto &[key, t] : best) {
        const double speedup = t->generic_median_ms / t->median_ms;
        std::cerr << "  " << t->op << " " << t->shape_id << " " << t->shape_key() << ": " << speedup
                  << (speedup < options.min_speedup ? "x: the generic variant serves it (best tuned below "
                                                    : "x over generic (")
                  << (speedup < options.min_speedup ? std::to_string(options.min_speedup) + "x)"
                                                    : knobs_text(t->knobs) + ")")
                  << "\n";
    }
    return 0;
}

}  // namespace gradtune::tooling
