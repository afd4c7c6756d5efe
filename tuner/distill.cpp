#include "distill.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "build_info.h"
#include "records.h"
#include "trials.h"

namespace gradtune::tooling {

namespace fs = std::filesystem;

int distill(const DistillOptions &options) {
    const BuildInfo &info = build_info();
    TrialLog log(options.log_path);
    if (log.trials().empty()) {
        std::cerr << "gradtune distill: no trials in " << options.log_path << " (run gradtune tune first)\n";
        return 2;
    }
    // Best ok trial per record key, from trials that still fit this build.
    std::map<std::string, const Trial *> best;
    int stale = 0;
    for (const Trial &t : log.trials()) {
        if (t.status != "ok") continue;
        const auto hash = info.source_hash.find(t.op);
        if (hash == info.source_hash.end() || t.source_hash != hash->second ||
            t.halide_version != info.halide_version || t.target != info.target(t.device)) {
            stale++;
            continue;
        }
        const std::string key = t.op + "|" + to_string(t.device) + "|" + t.structure.key() + "|" + t.shape_key();
        auto it = best.find(key);
        if (it == best.end() || t.median_ms < it->second->median_ms) best[key] = &t;
    }
    if (stale) std::cerr << "gradtune distill: " << stale << " trial(s) of other sources/Halide/target ignored\n";
    // Merge into the committed files: every key the log measured is decided
    // by the log. A best trial that does not beat the generic variant by
    // min_speedup becomes a generic_wins record: dispatch then serves that
    // shape with the generic variant, and no tuned kernel is built for it.
    const std::string klass = info.target_class();
    const fs::path dir = fs::path(options.records_dir) / klass;
    std::map<std::string, RecordFile> files;
    auto same_key = [](const Record &r, const Trial &t) {
        return r.device == t.device && r.structure == t.structure && r.shape_key() == t.shape_key();
    };
    for (const auto &[key, t] : best) {
        RecordFile &file = files[t->op];
        if (file.op.empty()) {
            file.op = t->op;
            file.target_class = klass;
            const fs::path path = dir / (t->op + ".json");
            if (fs::exists(path)) {
                try {
                    file.records = read_record_file(path.string()).records;
                } catch (const std::exception &e) {
                    std::cerr << "gradtune distill: replacing unreadable " << path << ": " << e.what() << "\n";
                }
            }
        }
        file.records.erase(
            std::remove_if(file.records.begin(), file.records.end(), [&](const Record &r) { return same_key(r, *t); }),
            file.records.end());
        Record r;
        r.generic_wins = t->generic_median_ms < options.min_speedup * t->median_ms;
        r.op = t->op;
        r.device = t->device;
        r.structure = t->structure;
        r.padding = t->padding;
        r.shape = t->shape;
        r.call = t->call;
        r.knobs = t->knobs;
        r.median_ms = t->median_ms;
        r.min_ms = t->min_ms;
        r.spread_pct = t->spread_pct;
        r.generic_median_ms = t->generic_median_ms;
        r.samples = t->samples;
        r.threads = t->threads;
        r.target = t->target;
        r.cpu_model = t->cpu_model;
        r.halide_version = t->halide_version;
        r.source_hash = t->source_hash;
        r.tuned_at = t->timestamp;
        file.records.push_back(r);
    }
    fs::create_directories(dir);
    for (auto &[op, file] : files) {
        const std::string path = (dir / (op + ".json")).string();
        write_record_file(path, file);
        std::cerr << "gradtune distill: " << path << ": " << file.records.size() << " record(s)\n";
    }
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
