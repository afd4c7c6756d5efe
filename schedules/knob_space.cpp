#include "knob_space.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <sstream>

namespace gradtune {

Knobs KnobSpace::defaults() const {
    Knobs result;
    for (const Knob &knob : knobs) result[knob.name] = knob.default_value;
    return result;
}

namespace {

// Whether `knob` is read by the algorithm that `knobs` chooses (a space
// without an algorithm knob has one algorithm, which reads every knob).
bool read_by_algorithm(const Knob &knob, const Knobs &knobs) {
    if (knob.algorithms.empty()) return true;
    const auto algorithm = knobs.find(std::string(kAlgorithmKnob));
    return algorithm == knobs.end() ||
           std::find(knob.algorithms.begin(), knob.algorithms.end(), algorithm->second) != knob.algorithms.end();
}

}  // namespace

Knobs KnobSpace::canonical(Knobs setting) const {
    for (const Knob &knob : knobs)
        if (!read_by_algorithm(knob, setting) && setting.count(knob.name)) setting[knob.name] = knob.default_value;
    return setting;
}

const Knob *KnobSpace::find(std::string_view name) const {
    for (const Knob &knob : knobs) {
        if (knob.name == name) return &knob;
    }
    return nullptr;
}

std::string KnobSpace::check(const Knobs &values) const {
    for (const auto &[name, value] : values) {
        const Knob *knob = find(name);
        if (!knob) return "unknown knob '" + name + "'";
        if (std::find(knob->values.begin(), knob->values.end(), value) == knob->values.end()) {
            std::ostringstream legal;
            for (size_t i = 0; i < knob->values.size(); i++) legal << (i ? "," : "") << knob->values[i];
            return "illegal value " + std::to_string(value) + " for knob '" + name + "' (legal: " + legal.str() + ")";
        }
    }
    for (const Knob &knob : knobs) {
        if (!values.count(knob.name)) return "missing knob '" + knob.name + "'";
    }
    for (const Knob &knob : knobs) {
        if (!read_by_algorithm(knob, values) && values.at(knob.name) != knob.default_value)
            return "illegal knob combination: algorithm " + std::to_string(values.at(std::string(kAlgorithmKnob))) +
                   " ignores " + knob.name + " (keep " + std::to_string(knob.default_value) + ")";
    }
    if (constraint) {
        std::string why = constraint(values);
        if (!why.empty()) return "illegal knob combination: " + why;
    }
    return "";
}

bool Structure::is_generic() const {
    return std::all_of(fixed.begin(), fixed.end(), [](const auto &p) { return p.second == 0; });
}

std::string Structure::key() const {
    std::ostringstream out;
    out << "T=" << dtype << " data_format=" << data_format;
    for (const auto &[name, value] : fixed) out << " " << name << "=" << value;
    return out.str();
}

std::string OpSchema::check_structure(const Structure &structure) const {
    if (std::find(dtypes.begin(), dtypes.end(), structure.dtype) == dtypes.end())
        return "dtype '" + structure.dtype + "' is not registered for " + name;
    if (std::find(data_formats.begin(), data_formats.end(), structure.data_format) == data_formats.end())
        return "data_format '" + structure.data_format + "' is not supported by " + name;
    for (const auto &[param, value] : structure.fixed) {
        if (!declares(param)) return "unknown structural parameter '" + param + "'";
        if (value < 0) return "structural parameter '" + param + "' must be >= 0 (0 = run time)";
    }
    for (const std::string &param : structure_params) {
        if (!structure.fixed.count(param)) return "missing structural parameter '" + param + "'";
    }
    return "";
}

bool OpSchema::declares(std::string_view param) const {
    return std::find(structure_params.begin(), structure_params.end(), param) != structure_params.end();
}

std::string OpSchema::upgrade(Device device, const Structure &structure, int *version, Knobs *knobs) const {
    if (*version == knob_space_version) return "";
    if (*version > knob_space_version || *version < compatible_since)
        return "tuned for knob-space version " + std::to_string(*version) + " of " + name + ", this build's is " +
               std::to_string(knob_space_version) +
               (*version < compatible_since ? " (compatible since " + std::to_string(compatible_since) + ")" : "");
    for (const Knob &knob : space(device, structure).knobs)
        if (knob.since_version > *version && !knobs->count(knob.name)) (*knobs)[knob.name] = knob.default_value;
    *version = knob_space_version;
    return "";
}

const OpSchema *find_op(std::string_view name) {
    for (const OpSchema &op : all_ops()) {
        if (op.name == name) return &op;
    }
    return nullptr;
}

std::string check_vector_bytes(int bytes) {
    if (bytes >= 16 && bytes <= 256) return "";
    return "a vector of " + std::to_string(bytes) + " bytes (legal: 16..256)";
}

std::string check_threads_per_block(int threads) {
    if (threads >= 32 && threads <= 1024) return "";
    return std::to_string(threads) + " threads per block (legal: 32..1024)";
}

std::string check_registers(std::string_view what, int registers) {
    if (registers <= 32) return "";
    return "the " + std::string(what) + " needs " + std::to_string(registers) + " vector registers (max 32)";
}

std::string check_register_tile(int vector_bytes, int registers) {
    if (std::string why = check_vector_bytes(vector_bytes); !why.empty()) return why;
    return check_registers("register tile", registers);
}

namespace {

// The registers of `file` that the register tile of `knobs` needs.
// space.registers counts 64-byte registers (a vector of up to 64 bytes is
// one); such a vector takes ceil(bytes / file.vector_bytes) of the file's.
int registers_in(const KnobSpace &space, const Knobs &knobs, int accumulator_bytes, RegisterFile file) {
    const int vector_bytes = std::min(64, knobs.at("vector_width") * accumulator_bytes);
    return space.registers(knobs) * std::max(1, (vector_bytes + file.vector_bytes - 1) / file.vector_bytes);
}

}  // namespace

Knobs fit_register_file(const KnobSpace &space, Knobs knobs, int accumulator_bytes, RegisterFile file) {
    const Knob *width = space.find("vector_width");
    if (!space.registers || !width || accumulator_bytes <= 0 || file == kAvx512Registers) return knobs;
    // `k` with `knob` at its next smaller value, where that is legal. The
    // vectors of a tile halve (4 -> 2, not 3): a tile of 24 lanes divides no
    // channel count of a layer and falls off the schedules' divisible paths
    // (a 64x64x16 pointwise input gradient ran at 0.41x the generic variant).
    auto step_down = [&space](const Knob &knob, Knobs k) -> std::optional<Knobs> {
        auto at = std::find(knob.values.begin(), knob.values.end(), k.at(knob.name));
        if (at == knob.values.begin() || at == knob.values.end()) return std::nullopt;
        int value = *std::prev(at);
        if (knob.name == "vectors_per_tile") {
            value = 0;
            for (int v : knob.values)
                if (v <= *at / 2) value = v;
            if (value == 0) return std::nullopt;
        }
        k[knob.name] = value;
        if (!space.check(k).empty()) return std::nullopt;
        return k;
    };
    while (knobs.at(width->name) * accumulator_bytes > file.vector_bytes) {
        std::optional<Knobs> narrower = step_down(*width, knobs);
        if (!narrower) break;
        knobs = *narrower;
    }
    int needed = registers_in(space, knobs, accumulator_bytes, file);
    while (needed > file.count) {
        std::optional<Knobs> best;
        int best_needed = 0;
        for (const Knob &knob : space.knobs) {
            if (knob.name == width->name || knob.name == kAlgorithmKnob) continue;
            std::optional<Knobs> smaller = step_down(knob, knobs);
            if (!smaller) continue;
            const int n = registers_in(space, *smaller, accumulator_bytes, file);
            if (n < needed && (!best || n > best_needed)) {
                best = std::move(smaller);
                best_needed = n;
            }
        }
        if (!best) break;  // nothing smaller is legal: the closest fit
        knobs = std::move(*best);
        needed = best_needed;
    }
    return knobs;
}

std::string check_unroll_taps(int unroll_taps, int filter_height, int filter_width) {
    const bool fixed_filter = filter_height > 0 && filter_width > 0;
    if (!unroll_taps || (fixed_filter && filter_height * filter_width <= 49)) return "";
    return "unroll_taps needs a fixed filter of at most 49 taps";
}

std::function<KnobSpace(Device, const Structure &)> per_device(KnobSpace (*cpu_space)(const Structure &),
                                                               KnobSpace (*cuda_space)(const Structure &)) {
    return [cpu_space, cuda_space](Device device, const Structure &s) {
        return device == Device::cpu ? cpu_space(s) : cuda_space(s);
    };
}

int dtype_bytes(std::string_view dtype) {
    if (dtype == "float16" || dtype == "bfloat16") return 2;
    if (dtype == "float32" || dtype == "int32") return 4;
    if (dtype == "float64" || dtype == "int64") return 8;
    return 0;
}

int accumulator_bytes(std::string_view dtype) {
    const int bytes = dtype_bytes(dtype);
    return bytes == 2 ? 4 : bytes;
}

}  // namespace gradtune
