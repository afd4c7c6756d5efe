#include "trials.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "json_integer.h"
#include "records.h"

namespace gradtune::tooling {

using nlohmann::json;

std::string Trial::shape_key() const {
    std::ostringstream out;
    out << padding;
    for (const auto &[name, value] : shape) out << " " << name << "=" << value;
    return out.str();
}

std::string Trial::candidate_key() const {
    return op + "|" + to_string(device) + "|" + structure.key() + "|" + knobs_text(knobs) + "|" + target + "|v" +
           std::to_string(knob_space_version) + "|" + halide_version;
}

std::string Trial::measurement_key() const {
    std::string key = candidate_key() + "|" + shape_id + "|" + shape_key();
    if (evict_mb > 0) key += "|evict_mb=" + json(evict_mb).dump();  // warm trials keep their old keys
    return key;
}

json to_json(const Trial &t) {
    return {{"op", t.op},
            {"device", to_string(t.device)},
            {"structure", gradtune::to_json(t.structure)},
            {"knobs", t.knobs},
            {"shape_id", t.shape_id},
            {"padding", t.padding},
            {"shape", t.shape},
            {"call", t.call},
            {"target", t.target},
            {"cpu_model", t.cpu_model},
            {"halide_version", t.halide_version},
            {"knob_space_version", t.knob_space_version},
            {"source_hash", t.source_hash},
            {"threads", t.threads},
            {"evict_mb", t.evict_mb},
            {"status", to_string(t.status)},
            {"error", t.error},
            {"median_ms", t.median_ms},
            {"min_ms", t.min_ms},
            {"spread_pct", t.spread_pct},
            {"generic_median_ms", t.generic_median_ms},
            {"generic_spread_pct", t.generic_spread_pct},
            {"samples", t.samples},
            {"iterations", t.iterations},
            {"compile_s", t.compile_s},
            {"timestamp", t.timestamp},
            {"seed", t.seed}};
}

const char *to_string(TrialStatus status) {
    switch (status) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::slow: return "slow";
    case TrialStatus::wrong: return "wrong";
    case TrialStatus::failed: return "failed";
    case TrialStatus::compile_error: return "compile_error";
    }
    return "failed";
}

TrialStatus trial_status_from_string(const std::string &text) {
    for (TrialStatus s : {TrialStatus::ok, TrialStatus::slow, TrialStatus::wrong, TrialStatus::failed,
                          TrialStatus::compile_error})
        if (text == to_string(s)) return s;
    throw std::runtime_error("unknown trial status \"" + text + "\"");
}

void read_measurement(const json &r, Trial *t) {
    t->status = trial_status_from_string(r.at("status").get<std::string>());
    t->error = r.value("error", "");
    t->median_ms = r.value("median_ms", 0.0);
    t->min_ms = r.value("min_ms", 0.0);
    t->spread_pct = r.value("spread_pct", 0.0);
    t->generic_median_ms = r.value("generic_median_ms", 0.0);
    t->generic_spread_pct = r.value("generic_spread_pct", 0.0);
    t->samples = json_integer_or(r, "samples", 0);
    t->iterations = json_integer_or(r, "iterations", 0);
    t->threads = json_integer_or(r, "threads", 0);
}

Trial trial_from_json(const json &j) {
    Trial t;
    t.op = j.at("op").get<std::string>();
    t.device = device_from_string(j.at("device").get<std::string>()).value_or(Device::cpu);
    t.structure = structure_from_json(j.at("structure"));
    t.knobs = json_integer_map<int>(j.at("knobs"), "knobs");
    t.shape_id = j.at("shape_id").get<std::string>();
    t.padding = j.at("padding").get<std::string>();
    t.shape = json_integer_map<int64_t>(j.at("shape"), "shape");
    t.call = j.value("call", json::object());
    t.target = j.at("target").get<std::string>();
    t.cpu_model = j.value("cpu_model", "");
    t.halide_version = j.at("halide_version").get<std::string>();
    t.knob_space_version = json_integer_or(j, "knob_space_version", 1);
    // Knobs added since the trial's version read as their defaults (what the
    // op did then), so old trials resume and distill like new ones.
    if (const OpSchema *op = find_op(t.op); op && op->check_structure(t.structure).empty())
        op->upgrade(t.device, t.structure, &t.knob_space_version, &t.knobs);
    t.source_hash = j.value("source_hash", "");
    read_measurement(j, &t);
    t.compile_s = j.value("compile_s", 0.0);
    t.timestamp = j.value("timestamp", "");
    t.seed = json_integer_or(j, "seed", uint64_t{0});
    t.evict_mb = j.value("evict_mb", 0.0);  // logs before it was logged: warm
    return t;
}

TrialLog::TrialLog(std::string path) : path_(std::move(path)) {
    std::ifstream in(path_);
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        try {
            Trial t = trial_from_json(json::parse(line));
            keys_.insert(t.measurement_key());
            trials_.push_back(std::move(t));
        } catch (const std::exception &) {
            malformed_++;  // e.g. a line cut short by a kill: ignored, re-measured
        }
    }
}

void TrialLog::append(const Trial &t) { append(std::vector<Trial>{t}); }

void TrialLog::append(const std::vector<Trial> &trials) {
    if (trials.empty()) return;
    std::filesystem::path p(path_);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    std::string text;
    for (const Trial &t : trials) text += to_json(t).dump() + "\n";
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND, 0644);
    if (fd < 0) throw std::runtime_error(path_ + ": cannot be opened for appending");
    // One write (O_APPEND) for all the lines, so that a kill or a full disk
    // leaves whole lines or a cut last line, and a candidate is logged on
    // all of its shapes or on none (else a resumed run would measure it again
    // on the shapes already logged). A cut last line is ended first, so that
    // these lines are not glued onto it (and lost with it when the log is read).
    const off_t size = ::lseek(fd, 0, SEEK_END);
    char last = '\n';
    if (size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n') text = "\n" + text;
    const ssize_t written = ::write(fd, text.data(), text.size());
    const bool complete = written == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    // A short write (a full disk) is taken back: the log keeps whole lines.
    if (!complete && written > 0 && size >= 0) (void)::ftruncate(fd, size);
    ::close(fd);
    if (!complete)
        throw std::runtime_error(path_ + ": cannot be written (is the disk full?); the trial was not logged");
    for (const Trial &t : trials) {
        keys_.insert(t.measurement_key());
        trials_.push_back(t);
    }
}

}  // namespace gradtune::tooling
