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
    // MiB every kernel thread wrote before each timed call (gradtune tune
    // --evict-mb: cold caches); 0, and absent from the file, for warm times.
    double evict_mb = 0;
    // Validity: a record is used while the op's knob-space version and the
    // Halide version are still the ones it was tuned with.
    int knob_space_version = 1;  // records written before the field existed are version 1
    std::string halide_version;
    // Provenance only: where and on what sources it was tuned. A refactor
    // changes source_hash and keeps the record.
    std::string target, cpu_model, source_hash, tuned_at;

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
// Writes `text` to `path` through a temporary file beside it, synced before
// the rename: a full disk or a kill leaves the old file whole. Throws
// std::runtime_error (the temporary removed) when it cannot.
void write_file_atomically(const std::string &path, const std::string &text);

void write_record_file(const std::string &path, RecordFile file);

// The structure default of one structure group: the knob setting that
// serves the group's calls where no record of any class covers the shape,
// chosen by `gradtune distill` from the trials of every record's setting on
// every shape of the group (schedules/defaults/<op>.json, committed).
struct StructureDefault {
    std::string op;
    Device device = Device::cpu;
    Structure structure;  // all structural values fixed
    Knobs knobs;
    int knob_space_version = 1;
    std::string halide_version;
    // How it was chosen: candidates, shapes, worst-case ratio, class.
    std::string chosen_by;
    double worst_ratio = 0;  // its time / the best time, at its worst shape (>= 1)
    std::string measured_on;  // target class
    // The setting for x86 CPUs without AVX-512 (the multi-target library's
    // AVX2 baseline), chosen the same way from trials on such a target
    // (`gradtune tune` under GRADTUNE_MAX_CPU_ISA=avx2); empty: the knobs
    // above, fitted to AVX2's registers.
    struct Avx2 {
        Knobs knobs;
        std::string chosen_by;
        double worst_ratio = 0;
        std::string measured_on;
    } avx2;
};

// Reads every <op>.json of `dir` (none when `dir` is empty or missing);
// throws std::runtime_error naming the file on a malformed or illegal entry.
std::vector<StructureDefault> read_structure_defaults(const std::string &dir);
// Writes `defaults` (of one op) to dir/<op>.json, deterministic, atomically.
void write_structure_defaults(const std::string &dir, const std::string &op, std::vector<StructureDefault> defaults);

// Why a record or structure default cannot be used with this build (""
// when it can): another Halide version, or another knob-space version of
// its op.
std::string staleness(const std::string &op, int knob_space_version, const std::string &tuned_with_halide,
                      const std::string &halide_version);
template <typename T>
std::string staleness(const T &r, const std::string &halide_version) {
    return staleness(r.op, r.knob_space_version, r.halide_version, halide_version);
}

// How far apart two target classes are, for transferring records to a class
// that has none of its own: 0 the same class, 1 the same vendor and ISA level
// (e.g. two Intel AVX-512 classes), 2 the same ISA level, 3 the same
// architecture, 4 anything else.
int class_distance(const std::string &from, const std::string &to);

// A class's ISA level, without the microarchitecture: "avx512" (every AVX-512
// or AVX10 class), "avx2", ...
std::string class_isa(const std::string &klass);

// The class folders of `records_dir` (none where it does not exist), nearest
// to `klass` first (class_distance, then name): the order in which the build
// takes records and the tuner seeds from them.
std::vector<std::string> record_classes(const std::string &records_dir, const std::string &klass);

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
