#include "records.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gradtune {

using nlohmann::json;

std::string knobs_text(const Knobs &knobs) {
    std::ostringstream out;
    bool first = true;
    for (const auto &[name, value] : knobs) {
        out << (first ? "" : " ") << name << "=" << value;
        first = false;
    }
    return out.str();
}

uint64_t fnv1a(const std::string &text) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    return h;
}

std::string Record::shape_key() const {
    std::ostringstream out;
    out << padding;
    for (const auto &[name, value] : shape) out << " " << name << "=" << value;
    return out.str();
}

json to_json(const Structure &s) {
    json j = {{"T", s.dtype}, {"data_format", s.data_format}};
    for (const auto &[name, value] : s.fixed) j[name] = value;
    return j;
}

Structure structure_from_json(const json &j) {
    Structure s;
    for (const auto &[key, value] : j.items()) {
        if (key == "T") {
            s.dtype = value.get<std::string>();
        } else if (key == "data_format") {
            s.data_format = value.get<std::string>();
        } else {
            s.fixed[key] = value.get<int>();
        }
    }
    return s;
}

json to_json(const Record &r) {
    return {
        {"op", r.op},
        {"device", to_string(r.device)},
        {"structure", to_json(r.structure)},
        {"padding", r.padding},
        {"shape", r.shape},
        {"call", r.call},
        {"knobs", r.knobs},
        {"generic_wins", r.generic_wins},
        {"median_ms", r.median_ms},
        {"min_ms", r.min_ms},
        {"spread_pct", r.spread_pct},
        {"generic_median_ms", r.generic_median_ms},
        {"samples", r.samples},
        {"threads", r.threads},
        {"target", r.target},
        {"cpu_model", r.cpu_model},
        {"halide_version", r.halide_version},
        {"source_hash", r.source_hash},
        {"tuned_at", r.tuned_at},
    };
}

json to_json(const RecordFile &f) {
    json records = json::array();
    for (const Record &r : f.records) records.push_back(to_json(r));
    return {{"schema_version", kRecordSchemaVersion},
            {"op", f.op},
            {"target_class", f.target_class},
            {"records", records}};
}

namespace {

[[noreturn]] void fail(const std::string &where, const std::string &what) {
    throw std::runtime_error(where + ": " + what);
}

Record record_from_json(const json &j, const std::string &where) {
    Record r;
    try {
        r.op = j.at("op").get<std::string>();
        auto device = device_from_string(j.at("device").get<std::string>());
        if (!device) fail(where, "unknown device '" + j.at("device").get<std::string>() + "'");
        r.device = *device;
        r.structure = structure_from_json(j.at("structure"));
        r.padding = j.at("padding").get<std::string>();
        r.shape = j.at("shape").get<std::map<std::string, int64_t>>();
        r.call = j.value("call", json::object());
        r.knobs = j.at("knobs").get<Knobs>();
        r.generic_wins = j.value("generic_wins", false);
        r.median_ms = j.at("median_ms").get<double>();
        r.min_ms = j.value("min_ms", 0.0);
        r.spread_pct = j.value("spread_pct", 0.0);
        r.generic_median_ms = j.value("generic_median_ms", 0.0);
        r.samples = j.value("samples", 0);
        r.threads = j.value("threads", 0);
        r.target = j.at("target").get<std::string>();
        r.cpu_model = j.value("cpu_model", "");
        r.halide_version = j.at("halide_version").get<std::string>();
        r.source_hash = j.at("source_hash").get<std::string>();
        r.tuned_at = j.value("tuned_at", "");
    } catch (const json::exception &e) {
        fail(where, std::string("malformed record: ") + e.what());
    }
    const OpSchema *op = find_op(r.op);
    if (!op) fail(where, "unknown op '" + r.op + "'");
    if (std::find(op->devices.begin(), op->devices.end(), r.device) == op->devices.end())
        fail(where, r.op + " has no " + to_string(r.device) + " variants");
    if (std::string why = op->check_structure(r.structure); !why.empty()) fail(where, why);
    if (r.structure.is_generic() && !r.structure.fixed.empty())
        fail(where, "a tuned record must fix its structure (all structural values are 0)");
    if (std::string why = op->space(r.device, r.structure).check(r.knobs); !why.empty()) fail(where, why);
    if (r.padding != "SAME" && r.padding != "VALID" && r.padding != "EXPLICIT")
        fail(where, "unknown padding '" + r.padding + "'");
    return r;
}

bool record_less(const Record &a, const Record &b) {
    auto key = [](const Record &r) {
        return std::make_tuple(std::string(to_string(r.device)), r.structure.key(), r.shape_key());
    };
    return key(a) < key(b);
}

}  // namespace

RecordFile read_record_file(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::exception &e) {
        fail(path, std::string("not valid JSON: ") + e.what());
    }
    RecordFile file;
    try {
        const int version = j.at("schema_version").get<int>();
        if (version != kRecordSchemaVersion)
            fail(path, "schema_version " + std::to_string(version) + " (this build reads " +
                           std::to_string(kRecordSchemaVersion) + ")");
        file.op = j.at("op").get<std::string>();
        file.target_class = j.at("target_class").get<std::string>();
        const json &records = j.at("records");
        for (size_t i = 0; i < records.size(); i++) {
            Record r = record_from_json(records[i], path + ": record " + std::to_string(i));
            if (r.op != file.op) fail(path + ": record " + std::to_string(i), "op '" + r.op + "' in a file of " + file.op);
            file.records.push_back(std::move(r));
        }
    } catch (const json::exception &e) {
        fail(path, std::string("malformed record file: ") + e.what());
    }
    return file;
}

void write_record_file(const std::string &path, RecordFile file) {
    std::sort(file.records.begin(), file.records.end(), record_less);
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary);
        if (!out) throw std::runtime_error(temporary + ": cannot be written");
        // One record per line (keys sorted): a re-tune shows up in a diff as
        // the lines of the records that changed.
        out << "{\n  \"schema_version\": " << kRecordSchemaVersion << ",\n  \"op\": " << json(file.op).dump()
            << ",\n  \"target_class\": " << json(file.target_class).dump() << ",\n  \"records\": [";
        for (size_t i = 0; i < file.records.size(); i++)
            out << (i ? ",\n    " : "\n    ") << to_json(file.records[i]).dump();
        out << (file.records.empty() ? "]\n}\n" : "\n  ]\n}\n");
        if (!out) throw std::runtime_error(temporary + ": write failed");
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0)
        throw std::runtime_error("cannot rename " + temporary + " to " + path);
}

std::string staleness(const Record &r, const std::string &halide_version, const std::string &source_hash,
                      const std::string &target) {
    if (r.halide_version != halide_version)
        return "tuned with Halide " + r.halide_version + ", this build uses " + halide_version;
    if (r.source_hash != source_hash)
        return "tuned on other generator/schedule sources (hash " + r.source_hash.substr(0, 12) + ", now " +
               source_hash.substr(0, 12) + ")";
    if (r.target != target) return "tuned for target " + r.target + ", this build compiles for " + target;
    return "";
}

std::string target_class(const std::string &target) {
    std::vector<std::string> parts;
    std::stringstream in(target);
    for (std::string part; std::getline(in, part, '-');) parts.push_back(part);
    if (parts.size() < 3) return target;
    std::string base = parts[0] + "-" + parts[1] + "-" + parts[2];
    // Most specific first.
    static const char *levels[] = {"avx10_1", "avx512_zen5", "avx512_sapphirerapids", "avx512_zen4",
                                   "avx512_cannonlake", "avx512_skylake", "avx512_knl", "avx512",
                                   "avx2", "avx", "sse41", "arm_dot_prod", "arm_fp16", "sve2", "sve"};
    for (const char *level : levels) {
        if (std::find(parts.begin() + 3, parts.end(), level) != parts.end()) return base + "-" + level;
    }
    return base;
}

}  // namespace gradtune
