#include "batch.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "build_info.h"
#include "gradtune/variants.h"
#include "records.h"

namespace gradtune::tooling {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Seconds a measuring process may run past the budget (a batch that started
// just before its end) before it is killed.
constexpr double kMeasureGraceS = 30;

}  // namespace

std::string Group::label() const {
    std::ostringstream out;
    out << op << " " << structure.key() << " (" << shapes.size() << " shapes)";
    return out.str();
}

Trial Group::trial(const Knobs &knobs, size_t s, double evict_mb) const {
    const BuildInfo &info = build_info();
    Trial t;
    t.op = op;
    t.device = device;
    t.structure = structure;
    t.target = info.target(device);
    t.halide_version = info.halide_version;
    t.source_hash = info.source_hash.count(op) ? info.source_hash.at(op) : "";
    t.knob_space_version = find_op(op)->knob_space_version;
    t.cpu_model = cpu_model();
    t.knobs = knobs;
    t.shape_id = shapes[s]->name();
    t.padding = infos[s].padding;
    t.shape = infos[s].shape;
    t.call = shapes[s]->call;
    t.evict_mb = evict_mb;
    return t;
}

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

BatchRunner::BatchRunner(const BatchOptions &options, TrialLog *log, std::chrono::steady_clock::time_point start)
    : options_(options), log_(*log), start_(start), reference_dir_(options.work_dir + "/reference") {
    fs::remove_all(reference_dir_);
    fs::create_directories(reference_dir_);
}

BatchRunner::~BatchRunner() {
    std::error_code ignored;
    fs::remove_all(reference_dir_, ignored);
}

double BatchRunner::seconds_left() const {
    return std::max(1.0, options_.budget_s - seconds_since(start_));
}

std::string BatchRunner::shape_key(const Group &g, size_t s) const {
    return g.op + "|" + g.shapes[s]->call.dump();
}

BatchOutcome BatchRunner::run(const Group &g, const std::vector<Knobs> &batch) {
    BatchOutcome out;
    const auto batch_start = std::chrono::steady_clock::now();
    std::vector<CompiledCandidate> compiled = compile(g, batch, &out);
    out.compile_s = seconds_since(batch_start);
    const json file = batch_file(g, compiled, &out);
    if (!file["candidates"].empty()) measure(g, compiled, file, &out);
    for (const CompiledCandidate &c : compiled)
        if (!c.shared_object.empty()) remove_compiled(c, options_.work_dir);
    out.measure_s = seconds_since(batch_start) - out.compile_s;
    return out;
}

// Compiles (in parallel) the candidates the library does not hold. A compile
// may not run past the budget: one the budget cuts short is not logged (it
// did not fail) but handed out again later.
std::vector<CompiledCandidate> BatchRunner::compile(const Group &g, const std::vector<Knobs> &batch,
                                                    BatchOutcome *out) {
    const double time_left = seconds_left();
    const bool budget_bound = time_left < options_.compile_timeout_s;
    std::vector<CompiledCandidate> compiled(batch.size());
    std::vector<Candidate> to_compile;
    std::vector<size_t> compiled_index;
    for (size_t i = 0; i < batch.size(); i++) {
        compiled[i].candidate = Candidate{g.op, g.device, g.structure, batch[i]};
        compiled[i].library_variant = library_variant(g, batch[i]);
        if (!compiled[i].library_variant.empty()) {
            out->from_library++;
            continue;
        }
        to_compile.push_back(compiled[i].candidate);
        compiled_index.push_back(i);
    }
    std::vector<CompiledCandidate> fresh = compile_candidates(to_compile, options_.work_dir, options_.jobs,
                                                              std::min(options_.compile_timeout_s, time_left));
    for (size_t j = 0; j < fresh.size(); j++) compiled[compiled_index[j]] = std::move(fresh[j]);
    for (CompiledCandidate &c : compiled) {
        if (!(c.timed_out && budget_bound)) continue;
        out->not_measured.push_back(c.candidate.knobs);
        c.error.clear();
    }
    return compiled;
}

// The measuring child's batch file. Per shape: the cached generic timing and
// reference, and the fastest time measured so far (a candidate far slower
// than it is logged "slow" after one call instead of being timed). Candidates
// that failed to compile are logged here, as compile errors.
json BatchRunner::batch_file(const Group &g, const std::vector<CompiledCandidate> &compiled, BatchOutcome *out) {
    json batch = {{"shapes", json::array()},
                  {"candidates", json::array()},
                  {"measure",
                   {{"samples", options_.measure.samples},
                    {"min_sample_ms", options_.measure.min_sample_ms},
                    {"slow_factor", options_.measure.slow_factor},
                    {"evict_mb", options_.measure.evict_mb}}},
                  {"device", to_string(g.device)}};
    std::vector<double> best_ms(g.shapes.size(), 0);
    for (const Trial &t : log_.trials()) {
        if (t.status != TrialStatus::ok || t.median_ms <= 0 || t.op != g.op || t.device != g.device ||
            t.structure != g.structure || t.evict_mb != options_.measure.evict_mb)
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
                      {"reference", reference_dir_ + "/" + prefix}};
        if (auto it = generic_timing_.find(shape_key(g, s)); it != generic_timing_.end()) shape["generic"] = it->second;
        if (best_ms[s] > 0) shape["best_ms"] = best_ms[s];
        batch["shapes"].push_back(shape);
    }
    for (size_t i = 0; i < compiled.size(); i++) {
        const CompiledCandidate &c = compiled[i];
        if (!c.library_variant.empty()) {
            batch["candidates"].push_back(
                {{"index", i}, {"variant", c.library_variant}, {"structure", gradtune::to_json(g.structure)}});
        } else if (!c.shared_object.empty()) {
            batch["candidates"].push_back({{"index", i},
                                           {"shared_object", c.shared_object},
                                           {"function", c.candidate.function_name()},
                                           {"knobs", knobs_text(c.candidate.knobs)},
                                           {"structure", gradtune::to_json(g.structure)}});
        } else if (!c.error.empty()) {  // else cut short by the budget
            std::vector<Trial> failed_to_compile;
            for (size_t s = 0; s < g.shapes.size(); s++) {
                Trial t = g.trial(c.candidate.knobs, s, options_.measure.evict_mb);
                t.status = TrialStatus::compile_error;
                t.error = c.error;
                t.compile_s = c.compile_s;
                t.timestamp = now_utc();
                t.seed = options_.seed;
                failed_to_compile.push_back(t);
            }
            log_.append(failed_to_compile);
            out->logged.insert(out->logged.end(), failed_to_compile.begin(), failed_to_compile.end());
            out->measured++;
        }
    }
    return batch;
}

// Runs the measuring child on the batch and logs its results. A hanging
// candidate must not stop the run: the child is killed after
// --measure-timeout, or when the budget is spent (plus a grace for a batch
// that started just before its end).
void BatchRunner::measure(const Group &g, const std::vector<CompiledCandidate> &compiled, const json &batch,
                          BatchOutcome *out) {
    const std::string batch_path = options_.work_dir + "/batch.json";
    const std::string results_path = options_.work_dir + "/results.jsonl";
    write_file_atomically(batch_path, batch.dump());  // throws on a full disk
    const double measure_left = seconds_left() + kMeasureGraceS;
    const bool budget_bound = measure_left < options_.measure_timeout_s;
    const double timeout = std::min(options_.measure_timeout_s, measure_left);
    const int rc = run_process({options_.self, "measure", "--batch", batch_path}, results_path, timeout);
    const bool killed = rc == kProcessTimedOut;
    std::string running;                              // the candidate the child was running when it ended, if any
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
        Trial t = g.trial(compiled[i].candidate.knobs, s, options_.measure.evict_mb);
        read_measurement(r, &t);
        if (t.status == TrialStatus::ok && t.generic_median_ms > 0)
            generic_timing_.emplace(shape_key(g, s),
                                    json{{"median_ms", t.generic_median_ms}, {"spread_pct", t.generic_spread_pct}});
        t.compile_s = compiled[i].compile_s;
        t.timestamp = now_utc();
        t.seed = options_.seed;
        results_of[i].push_back(t);
    }
    // The candidate the child died or hung in is logged as failed below, its
    // shapes measured before with it. A child the budget cut short blames
    // nobody: its candidates go back to the queue.
    const std::optional<size_t> crashed = rc != 0 && !running.empty() && !(killed && budget_bound)
                                              ? std::optional<size_t>(json::parse(running).at("running").get<size_t>())
                                              : std::nullopt;
    std::set<size_t> reported;
    auto log = [&](size_t i, const std::vector<Trial> &trials) {
        log_.append(trials);
        out->logged.insert(out->logged.end(), trials.begin(), trials.end());
        reported.insert(i);
    };
    for (const auto &[i, trials] : results_of)
        if (!(crashed && *crashed == i)) log(i, trials);
    if (rc != 0) {
        // The child crashed, hung or ran out of budget: log the culprit (if
        // any), measure the rest again later.
        const std::string why =
            killed ? "the measuring process was killed after " + std::to_string(static_cast<int>(timeout)) + " s (" +
                         (budget_bound ? "the budget was spent" : "--measure-timeout: it hung") + ")"
            : rc > 128
                ? "the measuring process crashed (signal " + std::to_string(rc - 128) + ", " + strsignal(rc - 128) + ")"
                : "the measuring process crashed (exit status " + std::to_string(rc) + ")";
        std::cerr << "\ngradtune tune: " << why << "\n";
        if (crashed) {
            std::vector<Trial> failed;
            for (size_t s = 0; s < g.shapes.size(); s++) {
                Trial t = g.trial(compiled[*crashed].candidate.knobs, s, options_.measure.evict_mb);
                t.status = TrialStatus::failed;
                t.error = why;
                t.timestamp = now_utc();
                failed.push_back(t);
            }
            log(*crashed, failed);
        }
        for (size_t i = 0; i < compiled.size(); i++)
            if ((!compiled[i].shared_object.empty() || !compiled[i].library_variant.empty()) && !reported.count(i))
                out->not_measured.push_back(compiled[i].candidate.knobs);
    }
    out->measured += static_cast<int>(reported.size());
}

}  // namespace gradtune::tooling
