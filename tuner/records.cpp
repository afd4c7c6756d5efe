#include "records.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "json_integer.h"

namespace gradtune {

using nlohmann::json;
namespace fs = std::filesystem;

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
            s.fixed[key] = tooling::json_integer<int>(value, key);
        }
    }
    return s;
}

json to_json(const Record &r) {
    json j = {
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
        {"knob_space_version", r.knob_space_version},
        {"source_hash", r.source_hash},
        {"tuned_at", r.tuned_at},
    };
    if (r.evict_mb > 0) j["evict_mb"] = r.evict_mb;  // warm records keep their bytes
    return j;
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

// Fills the knobs added since the record's knob-space version with their
// defaults; a record of an incompatible version is left as it is (staleness()
// then skips it; its knobs are not checked against this space).
void upgrade(const std::string &op_name, Device device, const Structure &structure, int *version, Knobs *knobs) {
    const OpSchema *op = find_op(op_name);
    if (op && op->check_structure(structure).empty()) op->upgrade(device, structure, version, knobs);
}

// Checks what every variant must satisfy: a known op and device, a legal
// fixed structure and legal knobs.
void check_variant(const std::string &where, const std::string &op_name, Device device, const Structure &structure,
                   const Knobs &knobs, int knob_space_version) {
    const OpSchema *op = find_op(op_name);
    if (!op) fail(where, "unknown op '" + op_name + "'");
    if (std::find(op->devices.begin(), op->devices.end(), device) == op->devices.end())
        fail(where, op_name + " has no " + to_string(device) + " variants");
    if (std::string why = op->check_structure(structure); !why.empty()) fail(where, why);
    if (structure.is_generic() && !structure.fixed.empty())
        fail(where, "a tuned record must fix its structure (all structural values are 0)");
    // Knobs of another knob-space version are not this space's: such a
    // record is stale (skipped with a warning), not malformed.
    if (knob_space_version != op->knob_space_version) return;
    if (std::string why = op->space(device, structure).check(knobs); !why.empty()) fail(where, why);
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
        r.shape = tooling::json_integer_map<int64_t>(j.at("shape"), "shape");
        r.call = j.value("call", json::object());
        r.knobs = tooling::json_integer_map<int>(j.at("knobs"), "knobs");
        r.generic_wins = j.value("generic_wins", false);
        r.median_ms = j.at("median_ms").get<double>();
        r.min_ms = j.value("min_ms", 0.0);
        r.spread_pct = j.value("spread_pct", 0.0);
        r.generic_median_ms = j.value("generic_median_ms", 0.0);
        r.samples = tooling::json_integer_or(j, "samples", 0);
        r.threads = tooling::json_integer_or(j, "threads", 0);
        r.evict_mb = j.value("evict_mb", 0.0);
        r.target = j.at("target").get<std::string>();
        r.cpu_model = j.value("cpu_model", "");
        r.halide_version = j.at("halide_version").get<std::string>();
        r.knob_space_version = tooling::json_integer_or(j, "knob_space_version", 1);
        r.source_hash = j.value("source_hash", "");
        r.tuned_at = j.value("tuned_at", "");
    } catch (const json::exception &e) {
        fail(where, std::string("malformed record: ") + e.what());
    }
    upgrade(r.op, r.device, r.structure, &r.knob_space_version, &r.knobs);
    check_variant(where, r.op, r.device, r.structure, r.knobs, r.knob_space_version);
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
        const int version = tooling::json_integer<int>(j.at("schema_version"), "schema_version");
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

void write_file_atomically(const std::string &path, const std::string &text) {
    const std::string temporary = path + ".tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw std::runtime_error(temporary + ": cannot be created");
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (done != text.size() || !synced || std::rename(temporary.c_str(), path.c_str()) != 0) {
        std::remove(temporary.c_str());
        throw std::runtime_error(path + ": cannot be written (is the disk full?)");
    }
}

void write_record_file(const std::string &path, RecordFile file) {
    std::sort(file.records.begin(), file.records.end(), record_less);
    // One record per line (keys sorted): a re-tune shows up in a diff as
    // the lines of the records that changed.
    std::ostringstream out;
    out << "{\n  \"schema_version\": " << kRecordSchemaVersion << ",\n  \"op\": " << json(file.op).dump()
        << ",\n  \"target_class\": " << json(file.target_class).dump() << ",\n  \"records\": [";
    for (size_t i = 0; i < file.records.size(); i++)
        out << (i ? ",\n    " : "\n    ") << to_json(file.records[i]).dump();
    out << (file.records.empty() ? "]\n}\n" : "\n  ]\n}\n");
    write_file_atomically(path, out.str());
}

std::string staleness(const std::string &op_name, int knob_space_version, const std::string &tuned_with_halide,
                      const std::string &halide_version) {
    if (tuned_with_halide != halide_version)
        return "tuned with Halide " + tuned_with_halide + ", this build uses " + halide_version;
    const OpSchema *op = find_op(op_name);
    if (!op) return "no op " + op_name + " in this build";
    // Readers upgrade what they can (OpSchema::upgrade); any other version is stale.
    if (knob_space_version != op->knob_space_version)
        return "tuned for knob-space version " + std::to_string(knob_space_version) + " of " + op_name +
               ", this build's is " + std::to_string(op->knob_space_version);
    return "";
}

namespace {

json to_json(const StructureDefault &d) {
    json j = {{"op", d.op},
              {"device", to_string(d.device)},
              {"structure", to_json(d.structure)},
              {"knobs", d.knobs},
              {"knob_space_version", d.knob_space_version},
              {"halide_version", d.halide_version},
              {"chosen_by", d.chosen_by},
              {"worst_ratio", d.worst_ratio},
              {"measured_on", d.measured_on}};
    if (!d.avx2.knobs.empty())
        j["avx2"] = {{"knobs", d.avx2.knobs},
                     {"chosen_by", d.avx2.chosen_by},
                     {"worst_ratio", d.avx2.worst_ratio},
                     {"measured_on", d.avx2.measured_on}};
    return j;
}

}  // namespace

std::vector<StructureDefault> read_structure_defaults(const std::string &dir) {
    std::vector<StructureDefault> result;
    if (dir.empty() || !fs::is_directory(dir)) return result;
    std::vector<fs::path> files;
    for (const auto &entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path &path : files) {
        if (!find_op(path.stem().string())) continue;  // an op outside this build (GRADTUNE_OP_FILTER)
        std::ifstream in(path);
        json j;
        try {
            j = json::parse(in);
            const int version = tooling::json_integer<int>(j.at("schema_version"), "schema_version");
            if (version != kRecordSchemaVersion)
                fail(path.string(), "schema_version " + std::to_string(version) + " (this build reads " +
                                        std::to_string(kRecordSchemaVersion) + ")");
            const json &defaults = j.at("defaults");
            for (size_t i = 0; i < defaults.size(); i++) {
                const json &e = defaults[i];
                const std::string where = path.string() + ": default " + std::to_string(i);
                StructureDefault d;
                d.op = e.at("op").get<std::string>();
                auto device = device_from_string(e.at("device").get<std::string>());
                if (!device) fail(where, "unknown device '" + e.at("device").get<std::string>() + "'");
                d.device = *device;
                d.structure = structure_from_json(e.at("structure"));
                d.knobs = tooling::json_integer_map<int>(e.at("knobs"), "knobs");
                d.knob_space_version = tooling::json_integer_or(e, "knob_space_version", 1);
                d.halide_version = e.at("halide_version").get<std::string>();
                d.chosen_by = e.value("chosen_by", "");
                d.worst_ratio = e.value("worst_ratio", 0.0);
                d.measured_on = e.value("measured_on", "");
                if (d.op != path.stem().string()) fail(where, "op '" + d.op + "' in the file of " + path.stem().string());
                if (e.contains("avx2")) {
                    const json &a = e.at("avx2");
                    if (d.device != Device::cpu) fail(where, "an AVX2 setting for a CUDA default");
                    d.avx2.knobs = tooling::json_integer_map<int>(a.at("knobs"), "avx2 knobs");
                    d.avx2.chosen_by = a.value("chosen_by", "");
                    d.avx2.worst_ratio = a.value("worst_ratio", 0.0);
                    d.avx2.measured_on = a.value("measured_on", "");
                    int version = d.knob_space_version;
                    upgrade(d.op, d.device, d.structure, &version, &d.avx2.knobs);
                    check_variant(where + " (avx2)", d.op, d.device, d.structure, d.avx2.knobs, version);
                }
                upgrade(d.op, d.device, d.structure, &d.knob_space_version, &d.knobs);
                check_variant(where, d.op, d.device, d.structure, d.knobs, d.knob_space_version);
                result.push_back(std::move(d));
            }
        } catch (const json::exception &e) {
            fail(path.string(), std::string("malformed structure defaults: ") + e.what());
        }
    }
    return result;
}

void write_structure_defaults(const std::string &dir, const std::string &op, std::vector<StructureDefault> defaults) {
    std::sort(defaults.begin(), defaults.end(), [](const StructureDefault &a, const StructureDefault &b) {
        return std::make_pair(std::string(to_string(a.device)), a.structure.key()) <
               std::make_pair(std::string(to_string(b.device)), b.structure.key());
    });
    fs::create_directories(dir);
    std::ostringstream out;
    out << "{\n  \"schema_version\": " << kRecordSchemaVersion << ",\n  \"op\": " << json(op).dump()
        << ",\n  \"defaults\": [";
    for (size_t i = 0; i < defaults.size(); i++) out << (i ? ",\n    " : "\n    ") << to_json(defaults[i]).dump();
    out << (defaults.empty() ? "]\n}\n" : "\n  ]\n}\n");
    write_file_atomically((fs::path(dir) / (op + ".json")).string(), out.str());
}

namespace {

// "amd", "intel" or "" from a class's feature level.
std::string class_vendor(const std::string &klass) {
    if (klass.find("zen") != std::string::npos) return "amd";
    for (const char *intel : {"sapphirerapids", "cannonlake", "skylake", "knl", "avx10"})
        if (klass.find(intel) != std::string::npos) return "intel";
    return "";
}

std::string class_arch(const std::string &klass) { return klass.substr(0, klass.find('-')); }

}  // namespace

std::string class_isa(const std::string &klass) {
    const auto dash = klass.rfind('-');
    std::string level = dash == std::string::npos ? klass : klass.substr(dash + 1);
    if (level.rfind("avx512", 0) == 0 || level.rfind("avx10", 0) == 0) return "avx512";
    return level;
}

std::vector<std::string> record_classes(const std::string &records_dir, const std::string &klass) {
    std::vector<std::string> classes;
    if (fs::is_directory(records_dir))
        for (const auto &entry : fs::directory_iterator(records_dir))
            if (entry.is_directory()) classes.push_back(entry.path().filename().string());
    std::sort(classes.begin(), classes.end(), [&](const std::string &a, const std::string &b) {
        return std::make_pair(class_distance(a, klass), a) < std::make_pair(class_distance(b, klass), b);
    });
    return classes;
}

int class_distance(const std::string &from, const std::string &to) {
    if (from == to) return 0;
    const bool same_isa = class_isa(from) == class_isa(to) && class_arch(from) == class_arch(to);
    if (same_isa && !class_vendor(from).empty() && class_vendor(from) == class_vendor(to)) return 1;
    if (same_isa) return 2;
    if (class_arch(from) == class_arch(to)) return 3;
    return 4;
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
