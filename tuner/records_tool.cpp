// gradtune-records: run by CMake at configure time (cmake/GradtuneVariants.cmake).
// Turns the committed records into the list of variants the build compiles:
//   - the generic variants every op always has,
//   - the structure defaults (schedules/defaults/<op>.json: one knob setting
//     per structure group, chosen from the records of every class),
//   - the records of this machine's target class, and, for every shape that
//     class has no record of, the records of the other classes, nearest class
//     first (class_distance): "transferred" records, compiled for this target.
// Tuned records are compiled only for the --tuned-cpu-target targets where
// those are given (this machine's target, GRADTUNE_TUNED_CPU_TARGETS: see
// cmake/GradtuneDependencies.cmake); the table then lists those targets'
// features, so that dispatch skips tuned variants on a CPU that has none.
// It writes a CMake file with one gradtune_add_variant() per variant (PARAMS =
// the structural values and every knob) and the C++ variant table the runtime
// dispatches from. A record with an unknown knob or illegal value stops the
// configure step with a message naming the file; a stale record (another
// Halide or knob-space version) is skipped with a warning.
//
// Usage: gradtune-records --records DIR [--defaults DIR] --cpu-target T
//          [--cuda-target T] [--tuned-cpu-target T ...] --halide-version V
//          --cmake-out F --table-out F
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "records.h"

namespace fs = std::filesystem;
using namespace gradtune;

namespace {

struct Variant {
    std::string name, op;
    Device device;
    Structure structure;
    Knobs knobs;
    Knobs avx2_knobs;  // the structure default's setting for the AVX2 target (empty: `knobs`, fitted)
    bool structure_default = false;  // serves its structure where no record of any class does
    std::vector<Record> tuned_for;   // empty for generic variants
    std::vector<std::string> tuned_class;  // the class each of tuned_for came from

    // Generic variants and structure defaults serve every CPU, so they are
    // compiled for every target; tuned records may get fewer.
    bool every_cpu_target() const { return device != Device::cpu || structure.is_generic() || structure_default; }
};

struct Options {
    std::string records_dir, defaults_dir, cpu_target, cuda_target, halide_version, cmake_out, table_out;
    std::vector<std::string> tuned_cpu_targets;  // empty: tuned records get every target too
};

// "x86-64-linux-avx-avx2-user_context" -> {"avx", "avx2", "user_context"}: the
// names of Halide's halide_target_feature_* values (tune_* flags steer
// scheduling only and are no features).
std::vector<std::string> target_features(const std::string &target) {
    std::vector<std::string> parts;
    std::stringstream in(target);
    for (std::string part; std::getline(in, part, '-');) parts.push_back(part);
    if (parts.size() < 3) throw std::runtime_error("not a Halide target: " + target);
    std::vector<std::string> features;
    for (size_t i = 3; i < parts.size(); i++) {
        const std::string &f = parts[i];
        if (f.rfind("tune_", 0) == 0) continue;
        for (char c : f)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
                throw std::runtime_error("not a Halide target feature: " + f + " in " + target);
        features.push_back(f);
    }
    return features;
}

std::string variant_name(const std::string &op, Device device, const Structure &s, const Knobs &knobs,
                         const Knobs &avx2_knobs = {}) {
    std::string base = op + "_" + to_string(device) + "_" + s.dtype + "_" + s.data_format;
    if (s.is_generic()) return base + "_generic";
    std::string key = s.key() + "|" + knobs_text(knobs);
    if (!avx2_knobs.empty()) key += "|avx2 " + knobs_text(avx2_knobs);
    std::ostringstream hash;
    hash << std::hex << std::setw(8) << std::setfill('0') << (fnv1a(key) & 0xffffffffu);
    return base + "_t" + hash.str();
}

std::string c_string(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error("missing value after " + arg);
            return argv[++i];
        };
        if (arg == "--records") o.records_dir = value();
        else if (arg == "--defaults") o.defaults_dir = value();
        else if (arg == "--cpu-target") o.cpu_target = value();
        else if (arg == "--cuda-target") o.cuda_target = value();
        else if (arg == "--tuned-cpu-target") o.tuned_cpu_targets.push_back(value());
        else if (arg == "--halide-version") o.halide_version = value();
        else if (arg == "--cmake-out") o.cmake_out = value();
        else if (arg == "--table-out") o.table_out = value();
        else {
            throw std::runtime_error("unknown argument " + arg);
        }
    }
    if (o.records_dir.empty() || o.cpu_target.empty() || o.cmake_out.empty() || o.table_out.empty())
        throw std::runtime_error("usage: gradtune-records --records DIR [--defaults DIR] --cpu-target T "
                                 "[--cuda-target T] [--tuned-cpu-target T ...] --halide-version V --cmake-out F "
                                 "--table-out F");
    return o;
}

std::string target_of(const Options &o, Device device) {
    return device == Device::cpu ? o.cpu_target : o.cuda_target;
}

void write_if_changed(const std::string &path, const std::string &text) {
    std::ifstream in(path);
    std::stringstream old;
    old << in.rdbuf();
    if (in && old.str() == text) return;  // keep the timestamp: no needless rebuild
    std::ofstream out(path);
    out << text;
    if (!out) throw std::runtime_error(path + ": cannot be written");
}

// The variants of a build, each once, by name.
struct VariantSet {
    std::vector<Variant> variants;
    std::map<std::string, size_t> by_name;

    Variant &add(const std::string &op, Device device, const Structure &s, const Knobs &knobs,
                 const Knobs &avx2_knobs = {}) {
        std::string name = variant_name(op, device, s, knobs, avx2_knobs);
        auto it = by_name.find(name);
        if (it != by_name.end()) return variants[it->second];
        by_name[name] = variants.size();
        variants.push_back({name, op, device, s, knobs, avx2_knobs, false, {}, {}});
        return variants.back();
    }
};

// Generic variants: every op, dtype, layout and device, default knobs.
void add_generic_variants(const Options &o, VariantSet *set) {
    for (const OpSchema &op : all_ops()) {
        for (Device device : op.devices) {
            if (device == Device::cuda && o.cuda_target.empty()) continue;
            for (const std::string &dtype : op.dtypes) {
                for (const std::string &layout : op.data_formats) {
                    Structure s{dtype, layout, {}};
                    for (const std::string &param : op.structure_params) s.fixed[param] = 0;
                    set->add(op.name, device, s, op.space(device, s).defaults());
                }
            }
        }
    }
}

// Structure defaults: one variant per structure group, whatever the class.
// Returns how many.
int add_structure_defaults(const Options &o, VariantSet *set) {
    int defaults = 0;
    for (const StructureDefault &d : read_structure_defaults(o.defaults_dir)) {
        if (d.device == Device::cuda && o.cuda_target.empty()) continue;
        if (std::string why = staleness(d, o.halide_version); !why.empty()) {
            std::cout << "gradtune: warning: skipping stale structure default [" << d.op << " " << d.structure.key()
                      << "]: " << why << "\n";
            continue;
        }
        set->add(d.op, d.device, d.structure, d.knobs, d.avx2.knobs).structure_default = true;
        defaults++;
    }
    return defaults;
}

// Tuned variants: this class's records, then, for every shape still without
// one, the records of the nearest other class. Returns the records taken per
// class; counts the stale ones.
std::map<std::string, int> add_records(const Options &o, const std::string &klass, VariantSet *set, int *stale) {
    std::set<std::string> covered;    // op|device|structure|shape of every record taken
    std::map<std::string, int> used;  // class -> records taken
    for (const std::string &from : record_classes(o.records_dir, klass)) {
        std::vector<fs::path> files;
        for (const auto &entry : fs::directory_iterator(fs::path(o.records_dir) / from)) files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        for (const fs::path &path : files) {
            if (path.extension() != ".json") continue;
            if (!find_op(path.stem().string())) {
                std::cout << "gradtune: note: " << path.string() << ": no op " << path.stem().string()
                          << " in this build (GRADTUNE_OP_FILTER or a misnamed file); skipped\n";
                continue;
            }
            RecordFile file = read_record_file(path.string());
            if (file.target_class != from)
                throw std::runtime_error(path.string() + ": target_class " + file.target_class + " in the folder of " +
                                         from);
            for (const Record &r : file.records) {
                std::string why = target_of(o, r.device).empty() ? "no CUDA variants in this build"
                                                                 : staleness(r, o.halide_version);
                if (!why.empty()) {
                    std::cout << "gradtune: warning: skipping stale record " << path.string() << " ["
                              << to_string(r.device) << " " << r.structure.key() << " " << r.shape_key()
                              << "]: " << why << "\n";
                    ++*stale;
                    continue;
                }
                const std::string key = r.op + "|" + to_string(r.device) + "|" + r.structure.key() + "|" + r.shape_key();
                if (!covered.insert(key).second) continue;  // a nearer class has this shape
                Variant *v = nullptr;
                if (r.generic_wins) {
                    // Served by the generic variant of its dtype, layout and device.
                    Structure generic = r.structure;
                    for (auto &entry : generic.fixed) entry.second = 0;
                    auto it = set->by_name.find(variant_name(r.op, r.device, generic, {}));
                    if (it == set->by_name.end())
                        throw std::runtime_error(path.string() + ": no generic variant for " + r.structure.key());
                    v = &set->variants[it->second];
                } else {
                    v = &set->add(r.op, r.device, r.structure, r.knobs);
                }
                v->tuned_for.push_back(r);
                v->tuned_class.push_back(from);
                used[from]++;
            }
        }
    }
    return used;
}

// Compiled for the --tuned-cpu-target targets only.
bool tuned_targets_only(const Options &o, const Variant &v) {
    return !o.tuned_cpu_targets.empty() && !v.every_cpu_target();
}

// CMake: one gradtune_add_variant() per variant.
std::string cmake_text(const Options &o, const std::string &klass, const std::vector<Variant> &variants) {
    std::ostringstream cmake;
    cmake << "# Generated by gradtune-records at configure time. Do not edit.\n"
          << "set(GRADTUNE_TARGET_CLASS " << klass << ")\n";
    for (const Variant &v : variants) {
        cmake << "gradtune_add_variant(" << v.name << " GENERATOR " << v.op << " DEVICE " << to_string(v.device)
              << (tuned_targets_only(o, v) ? " TUNED" : "") << "\n    PARAMS T=" << v.structure.dtype
              << " data_format=" << v.structure.data_format;
        for (const auto &[name, value] : v.structure.fixed) cmake << " " << name << "=" << value;
        cmake << "\n          ";
        for (const auto &[name, value] : v.knobs) cmake << " " << name << "=" << value;
        if (!v.avx2_knobs.empty()) {
            cmake << "\n          ";
            for (const auto &[name, value] : v.avx2_knobs) cmake << " avx2_" << name << "=" << value;
        }
        cmake << ")\n";
    }
    return cmake.str();
}

// "{a, b, c}" of a map's entries as {"name", value} pairs.
template <typename Map>
std::string pairs_text(const Map &entries) {
    std::ostringstream out;
    bool first = true;
    for (const auto &[name, value] : entries) {
        out << (first ? "" : ", ") << "{" << c_string(name) << ", " << value << "}";
        first = false;
    }
    return out.str();
}

// C++: the runtime's variant table.
std::string table_text(const Options &o, const std::string &klass, const std::vector<Variant> &variants) {
    std::ostringstream table;
    table << "// Generated by gradtune-records at configure time. Do not edit.\n"
          << "#include \"variant_table.h\"\n\n#include \"HalideRuntime.h\"\n\n";
    for (const Variant &v : variants) table << "#include \"" << v.name << ".h\"\n";
    table << "\nnamespace gradtune::internal {\n\n"
          << "const char *target_class() { return " << c_string(klass) << "; }\n\n"
          << "const std::vector<Kernel> &kernels() {\n    static const std::vector<Kernel> table = {\n";
    for (const Variant &v : variants) {
        table << "        {" << c_string(v.op) << ", " << c_string(v.name) << ", Device::" << to_string(v.device)
              << ", " << c_string(v.structure.dtype) << ", " << c_string(v.structure.data_format) << ",\n         {"
              << pairs_text(v.structure.fixed) << "},\n         " << c_string(knobs_text(v.knobs)) << ", "
              << (v.structure_default ? "true" : "false") << ", reinterpret_cast<KernelFunction>(&" << v.name
              << "), " << (tuned_targets_only(o, v) ? "true" : "false") << ", "
              << c_string(v.avx2_knobs.empty() ? "" : knobs_text(v.avx2_knobs)) << "},\n";
    }
    table << "    };\n    return table;\n}\n\n"
          << "const std::vector<std::vector<int>> &tuned_cpu_target_features() {\n"
          << "    static const std::vector<std::vector<int>> table = {\n";
    for (const std::string &target : o.tuned_cpu_targets) {
        table << "        {";
        bool first = true;
        for (const std::string &f : target_features(target)) {
            table << (first ? "" : ", ") << "halide_target_feature_" << f;
            first = false;
        }
        table << "},\n";
    }
    table << "    };\n    return table;\n}\n\n"
          << "const std::vector<TunedShape> &tuned_shapes() {\n    static const std::vector<TunedShape> table = {\n";
    for (size_t i = 0; i < variants.size(); i++) {
        for (size_t t = 0; t < variants[i].tuned_for.size(); t++) {
            const Record &r = variants[i].tuned_for[t];
            table << "        {" << i << ", " << c_string(variants[i].tuned_class[t]) << ", {"
                  << pairs_text(r.structure.fixed) << "}, " << c_string(r.padding) << ", {" << pairs_text(r.shape)
                  << "}, " << r.median_ms << ", " << r.generic_median_ms << "},\n";
        }
    }
    table << "    };\n    return table;\n}\n\n}  // namespace gradtune::internal\n";
    return table.str();
}

}  // namespace

int main(int argc, char **argv) {
    try {
        Options o = parse(argc, argv);
        const std::string klass = target_class(o.cpu_target);
        VariantSet set;
        add_generic_variants(o, &set);
        const int defaults = add_structure_defaults(o, &set);
        int stale = 0;
        std::map<std::string, int> used = add_records(o, klass, &set, &stale);
        std::cout << "gradtune: target class " << klass << ": " << used[klass] << " own record(s)";
        for (const auto &[from, count] : used)
            if (from != klass) std::cout << ", " << count << " transferred from " << from;
        std::cout << ", " << defaults << " structure default(s), " << stale << " stale, " << set.variants.size()
                  << " variants\n";
        write_if_changed(o.cmake_out, cmake_text(o, klass, set.variants));
        write_if_changed(o.table_out, table_text(o, klass, set.variants));
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "gradtune: error: " << e.what() << "\n";
        return 1;
    }
}
