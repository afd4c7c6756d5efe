// Distilled records: the best knob setting per (op, device, structure, shape)
// for one target class, committed as schedules/records/<class>/<op>.json.
// Shared by `gradtune distill` (writes), the configure-time records tool
// (validates, turns records into variants) and the tests.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "knob_space.h"

namespace gradtune {

constexpr int kRecordSchemaVersion = 1;

// What a tuned variant was built from and measured on.
struct Record {
    std::string op;
    Device device = Device::cpu;
    Structure structure;                   // all structural values fixed
    std::string padding;                   // SAME, VALID or EXPLICIT
    std::map<std::string, int64_t> shape;  // run-time sizes, e.g. N, H, W, C
    nlohmann::json call;                   // the TF call it was tuned on (shapes and attrs)
    Knobs knobs;                           // the best tuned setting found
    // The generic variant beat every tuned setting on this shape (in the
    // same run): dispatch serves the shape with the generic variant.
    bool generic_wins = false;
    // Measurement (milliseconds per call, median over samples).
    double median_ms = 0, min_ms = 0, spread_pct = 0;
    double generic_median_ms = 0;  // the generic default variant, same run
    int samples = 0, threads = 0;
    // Provenance: a record is used only where all of these still hold.
    std::string target, cpu_model, halide_version, source_hash, tuned_at;

    // "SAME C=32 H=112 N=1 W=112": identifies the call's run-time shape.
    std::string shape_key() const;
};

struct RecordFile {
    std::string op;
    std::string target_class;
    std::vector<Record> records;
};

nlohmann::json to_json(const Record &record);
nlohmann::json to_json(const RecordFile &file);
Structure structure_from_json(const nlohmann::json &j);
nlohmann::json to_json(const Structure &structure);

// Parses and validates a record file against the op schemas: unknown op,
// unknown or illegal knob, illegal structure. Throws std::runtime_error with
// a message naming the file, the record index and the knob.
RecordFile read_record_file(const std::string &path);
// Deterministic JSON (sorted keys and records, 2-space indent), written to a
// temporary file and renamed over `path`.
void write_record_file(const std::string &path, RecordFile file);

// Why a record cannot be used with this build ("" when it can): other Halide
// version, other generator/schedule sources, other target.
std::string staleness(const Record &record, const std::string &halide_version,
                      const std::string &source_hash, const std::string &target);

// The target class of a Halide target string: arch-bits-os plus its most
// specific CPU feature level, e.g. "x86-64-linux-avx512_zen5". Records are
// kept per class.
std::string target_class(const std::string &target);

// "name=value name=value ..." in knob-name order: how knob settings are
// named in logs, variant tables and hashes.
std::string knobs_text(const Knobs &knobs);

// 64-bit FNV-1a of `text`: stable names and seeds (variant and candidate
// function names, sampler seeds) that do not change from build to build.
uint64_t fnv1a(const std::string &text);

}  // namespace gradtune
