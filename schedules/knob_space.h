// Halide-free description of an op's schedule space: the knobs a schedule
// reads, their legal values and defaults, and the structural parameters a
// variant may fix at compile time. The tuner samples from it, the configure
// step validates committed records against it, and each op's apply() (in
// schedules/<stem>.h, compiled into the generators alone) reads the chosen
// values. Nothing here may
// include Halide.h: the records tool compiles this at configure time.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gradtune/device.h"

namespace gradtune {

// Knob name -> value. Ordered so that records and trial keys are deterministic.
using Knobs = std::map<std::string, int>;

struct Knob {
    std::string name;
    std::vector<int> values;  // the legal domain, in increasing order
    int default_value;
    std::string why;  // what the knob trades off, for `gradtune space`
    // The op's knob-space version that added this knob. Its default must do
    // what the op did before, so a record of an older version reads as that
    // version's setting plus this default (OpSchema::upgrade).
    int since_version = 1;
    // The version that last added values to its domain (0: none since
    // since_version). The old values keep their meaning, so older records
    // stay valid; the tuner tries the new values on them.
    int values_since = 0;
    // Where the space has an `algorithm` knob: the algorithms that read this
    // knob (empty: every one). The others keep it at its default (checked
    // and canonicalised by KnobSpace), so no two settings compile the same
    // code.
    std::vector<int> algorithms = {};
};

// The knob that chooses between an op's algorithms, where it has several.
inline constexpr std::string_view kAlgorithmKnob = "algorithm";

// ---- Knob tables: each knob is declared once ----
// An op's schedules/<stem>.h declares the knobs of each device in one X-macro
// table, one line per knob:
//   #define GRADTUNE_<OP>_CPU_KNOBS(KNOB, SHARED)
//       KNOB(name, (legal values, increasing), default, "why"[, .since_version = v][, .values_since = v]
//            [, .algorithms = {...}])
// SHARED marks a knob of the CUDA table that the CPU table has too (the two
// devices' spaces give it their own domain and default; the generator has
// one GeneratorParam for both). A default may use the locals of the space
// function that expands the table (e.g. `native`, the lanes of one vector).
// From the table come:
//   GRADTUNE_KNOB_LIST(TABLE)          the space's std::vector<Knob>
//   GRADTUNE_TYPED_KNOBS(Type, TABLE)  a struct read as `k.vector_width`:
//                                      Type::from(knobs), typed.map()
//   GRADTUNE_GENERATOR_KNOBS(...)      the generator's GeneratorParams (halide_knobs.h)
#define GRADTUNE_UNPAREN(...) __VA_ARGS__
#define GRADTUNE_KNOB_ENTRY(knob, domain, initial, text, ...)                                        \
    Knob{.name = #knob, .values = {GRADTUNE_UNPAREN domain}, .default_value = (initial), .why = text \
         __VA_OPT__(, ) __VA_ARGS__},
#define GRADTUNE_KNOB_LIST(TABLE) std::vector<Knob>{TABLE(GRADTUNE_KNOB_ENTRY, GRADTUNE_KNOB_ENTRY)}
#define GRADTUNE_KNOB_FIELD(knob, ...) int knob = 0;
#define GRADTUNE_KNOB_READ(knob, ...) typed.knob = values.at(#knob);
#define GRADTUNE_KNOB_WRITE(knob, ...) values[#knob] = knob;
#define GRADTUNE_TYPED_KNOBS(Type, TABLE)                                                      \
    struct Type {                                                                              \
        TABLE(GRADTUNE_KNOB_FIELD, GRADTUNE_KNOB_FIELD)                                        \
        static Type from(const Knobs &values) {                                                \
            Type typed;                                                                        \
            TABLE(GRADTUNE_KNOB_READ, GRADTUNE_KNOB_READ)                                      \
            return typed;                                                                      \
        }                                                                                      \
        Knobs map() const {                                                                    \
            Knobs values;                                                                      \
            TABLE(GRADTUNE_KNOB_WRITE, GRADTUNE_KNOB_WRITE)                                    \
            return values;                                                                     \
        }                                                                                      \
    }

struct KnobSpace {
    std::vector<Knob> knobs;
    // Cross-knob legality: returns "" when the combination is legal, else the
    // reason (e.g. "accumulator tile needs 40 vector registers, more than 32").
    std::function<std::string(const Knobs &)> constraint;
    // CPU spaces with a register tile: the vector registers it needs, counted
    // as the constraint counts them (AVX-512's: 64 bytes, at most 32). Null
    // where the space has none. fit_register_file() reads it.
    std::function<int(const Knobs &)> registers;
    // Where the space holds more than one algorithm: a starting point for
    // each other one (the defaults are the first's), which the tuner measures
    // right after the defaults, so that every algorithm is tried on every
    // shape before any hill climbing.
    std::vector<Knobs> algorithm_seeds;
    // Adds a seed where the space accepts it (check() is ""): a start that
    // the variant's structure rules out (a register tile too large for its
    // filter, Winograd on a stride-2 variant) is left out, not measured.
    void add_seed(const Knobs &knobs) {
        if (check(knobs).empty()) algorithm_seeds.push_back(knobs);
    }

    // A constraint (or register count) written against a typed knob struct
    // (GRADTUNE_TYPED_KNOBS).
    template <class Typed, class Function>
    static auto typed(Function function) {
        return [function](const Knobs &k) { return function(Typed::from(k)); };
    }

    Knobs defaults() const;
    // `knobs` with the knobs its algorithm does not read (Knob::algorithms)
    // at their defaults, so that a sampler's move lands on a legal setting.
    Knobs canonical(Knobs knobs) const;
    const Knob *find(std::string_view name) const;
    // "" when `knobs` names every knob of the space exactly once with a value
    // from its domain, leaves the knobs its algorithm does not read at their
    // defaults and passes the constraint; else a message naming the
    // offending knob.
    std::string check(const Knobs &knobs) const;
};

// Structural parameters fix TF attributes at compile time (docs/design.md
// section 4, rule 3). Every op has T (dtype) and data_format; the op adds
// integer parameters whose value 0 means "taken from the call at run time".
struct Structure {
    std::string dtype;        // TF's name: float32, float64, float16, bfloat16, int32, int64
    std::string data_format;  // NHWC or NCHW
    std::map<std::string, int> fixed;  // e.g. filter_height=3, stride=1; 0 = run time

    bool is_generic() const;  // every integer parameter is 0
    // "T=float32 data_format=NHWC filter_height=3 ..." in parameter order.
    std::string key() const;
    bool operator==(const Structure &other) const = default;
};

struct OpSchema {
    std::string name;                          // TF's op name; also the generator's name
    std::vector<std::string> dtypes;           // TF's registered T, in TF's order
    std::vector<std::string> data_formats;     // layouts the op supports
    std::vector<std::string> structure_params; // integer structural parameters
    std::vector<Device> devices;
    // Version of this op's knobs and structural parameters. Bump it when a
    // knob is added (with since_version = the new version and a default that
    // does what the op did before), renamed, removed, or its values come to
    // mean something else; not for a refactor, a comment or a faster schedule
    // of the same knobs (every compiled variant stays under the reference
    // tests either way).
    int knob_space_version = 1;
    // The oldest version whose records still mean the same here: raise it to
    // knob_space_version when a knob is renamed, removed or changes meaning
    // (records of older versions are then stale). Adding a knob keeps it.
    int compatible_since = 1;
    // Brings the knobs of a record (trial, default) of `version` to this
    // version: knobs added since get their defaults. Returns "" and sets
    // *version to knob_space_version, or says why the record is stale.
    std::string upgrade(Device device, const Structure &structure, int *version, Knobs *knobs) const;
    // The knob space of a variant with this structure on this device.
    std::function<KnobSpace(Device, const Structure &)> space;
    // "" when `structure` is a legal variant of this op, else why not.
    std::string check_structure(const Structure &structure) const;
    // Whether `param` is one of this op's structural parameters.
    bool declares(std::string_view param) const;
};

// Rules that several spaces share: "" when legal, else why not.
std::string check_vector_bytes(int bytes);         // a CPU vector of 16..256 bytes
std::string check_threads_per_block(int threads);  // a CUDA block of 32..1024 threads
// A register tile (`what`: "register tile", "dot tile", ...) of at most the 32
// AVX-512 vector registers.
std::string check_registers(std::string_view what, int registers);

// A CPU's vector registers: how many, of how many bytes. Knob spaces count
// AVX-512's (kAvx512Registers); a CPU target with fewer or narrower ones gets
// its knobs fitted by fit_register_file().
struct RegisterFile {
    int vector_bytes = 64;
    int count = 32;
    bool operator==(const RegisterFile &) const = default;
};
inline constexpr RegisterFile kAvx512Registers{64, 32};

// `knobs` (legal in `space`) fitted to `file`, for the same algorithm on a
// CPU whose register file is smaller than AVX-512's (AVX2: 16 registers of 32
// bytes). A register tile chosen for 32 zmm registers spills on such a CPU,
// every inner iteration: a default tuned on AVX-512 ran at half of oneDNN's
// speed on AVX2. So, keeping the setting legal at every step:
//   1. vector_width halves until one vector fills one of the file's registers
//      (the tile keeps its shape: a zmm accumulator becomes a ymm one);
//   2. while the tile needs more registers than the file has, the knob whose
//      next smaller value frees the fewest registers (the largest tile that
//      fits) steps down; vectors_per_tile halves, so that the tile's lanes
//      stay a power-of-two fraction of the tuned ones.
// A space that leaves `registers` null is compiled as tuned on every target
// (Conv2DBackpropFilter's says why).
// The knobs of a space without a register tile come back as they are. Fitted
// knobs are only compiled, never recorded: records keep the setting tuned on
// the machine that measured it.
Knobs fit_register_file(const KnobSpace &space, Knobs knobs, int accumulator_bytes, RegisterFile file);
// unroll_taps needs a variant that fixes a filter of at most 49 taps (0: not fixed).
std::string check_unroll_taps(int unroll_taps, int filter_height, int filter_width);

// A CUDA space whose only cross-knob rule is the block size: `threads(k)` is
// the threads per block of the typed setting k.
template <class Typed, class Threads>
KnobSpace cuda_block_space(std::vector<Knob> knobs, Threads threads) {
    KnobSpace space;
    space.knobs = std::move(knobs);
    space.constraint =
        KnobSpace::typed<Typed>([threads](const Typed &k) { return check_threads_per_block(threads(k)); });
    return space;
}

// cuda_block_space of an op whose block is threads_inner x threads_other x
// threads_y threads (its CUDA table's knobs).
template <class Typed>
KnobSpace cuda_tile_block_space(std::vector<Knob> knobs) {
    return cuda_block_space<Typed>(std::move(knobs),
                                   [](const Typed &k) { return k.threads_inner * k.threads_other * k.threads_y; });
}

// The rules a register-tiled CPU space starts with: a vector of
// `vector_bytes` (check_vector_bytes), and a register tile of `registers`.
std::string check_register_tile(int vector_bytes, int registers);

// A CPU space of a register tile whose only rules are check_register_tile and
// check_unroll_taps: `registers(k)` counts the tile's registers of the typed
// setting k (KnobSpace::registers), `dtype_bytes` the bytes of one lane.
template <class Typed, class Registers>
KnobSpace register_tile_space(std::vector<Knob> knobs, int dtype_bytes, Registers registers, int filter_height,
                              int filter_width) {
    KnobSpace space;
    space.knobs = std::move(knobs);
    space.registers = KnobSpace::typed<Typed>(registers);
    space.constraint = KnobSpace::typed<Typed>([=](const Typed &k) -> std::string {
        if (std::string why = check_register_tile(k.vector_width * dtype_bytes, registers(k)); !why.empty())
            return why;
        return check_unroll_taps(k.unroll_taps, filter_height, filter_width);
    });
    return space;
}

// An op's OpSchema::space: `cpu_space` for Device::cpu, `cuda_space` for
// Device::cuda.
std::function<KnobSpace(Device, const Structure &)> per_device(KnobSpace (*cpu_space)(const Structure &),
                                                               KnobSpace (*cuda_space)(const Structure &));

// Every op gradtune compiles, in a fixed order.
const std::vector<OpSchema> &all_ops();
const OpSchema *find_op(std::string_view name);

// Byte size of a TF dtype name; 0 when unknown.
int dtype_bytes(std::string_view dtype);
// Byte size of its accumulator (generators/common/window.h accumulator_type:
// 16-bit floats accumulate in float32); 0 when unknown.
int accumulator_bytes(std::string_view dtype);

}  // namespace gradtune
