#include "dispatch.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <sstream>
#include <utility>

#include "channel_split.h"
#include "cpu_features.h"

namespace gradtune::internal {

namespace {

std::string structure_text(const std::map<std::string, int> &structure) {
    std::ostringstream out;
    bool first = true;
    for (const auto &[name, value] : structure) {
        out << (first ? "" : " ") << name << "=" << value;
        first = false;
    }
    return out.str();
}

bool same_structure(const TunedShape &t, const CallInfo &call) {
    if (t.structure.size() != call.structure.size()) return false;
    for (const auto &[name, value] : t.structure) {
        auto it = call.structure.find(name);
        if (it == call.structure.end() || it->second != value) return false;
    }
    return true;
}

bool same_shape(const TunedShape &t, const CallInfo &call) {
    if (call.padding != t.padding || call.shape.size() != t.shape.size()) return false;
    for (const auto &[name, value] : t.shape) {
        auto it = call.shape.find(name);
        if (it == call.shape.end() || it->second != value) return false;
    }
    return true;
}

// Distance between shapes: the |log| ratios of the sizes, channels (C, O)
// weighted 3, batch and spatial sizes (N, H, W) 0.5, others 1, plus a
// penalty for another padding mode. The channels weigh most because the
// knobs that decide a kernel's speed are channel tiles (vector widths,
// channel blocks, channels per task): a record tuned for 256 channels runs a
// 40-channel call in tiles mostly empty. Checked on the layer zoo
// (bench/suites/zoo.txt, Sapphire Rapids): serving each measured shape with
// the best setting of its nearest other shape in its structure group, this
// weighting lands at 1.28x of the shape's best (geomean; worst 1.95x)
// against 1.43x (worst 15.9x) with equal weights, and against 1.45x (worst
// 2.55x) for the group's structure default: the nearest record, so
// weighted, beats the default it displaces.
double distance(const TunedShape &t, const CallInfo &call) {
    double d = call.padding == t.padding ? 0.0 : 0.5;
    for (const auto &[name, value] : t.shape) {
        auto it = call.shape.find(name);
        const double mine = it == call.shape.end() ? 1.0 : static_cast<double>(it->second);
        const std::string_view n = name;
        const double weight = n == "C" || n == "O" ? 3.0 : n == "N" || n == "H" || n == "W" ? 0.5 : 1.0;
        d += weight * std::fabs(std::log((mine + 1.0) / (static_cast<double>(value) + 1.0)));
    }
    return d;
}

std::map<std::string, int64_t> shape_map(const TunedShape &t) {
    std::map<std::string, int64_t> m;
    for (const auto &[name, value] : t.shape) m[name] = value;
    return m;
}

}  // namespace

std::string shape_key(const std::string &padding, const std::map<std::string, int64_t> &shape) {
    std::ostringstream out;
    out << padding;
    for (const auto &[name, value] : shape) out << " " << name << "=" << value;
    return out.str();
}

const char *to_string(Tier tier) {
    switch (tier) {
    case Tier::exact: return "exact";
    case Tier::transferred: return "transferred";
    case Tier::nearest: return "nearest";
    case Tier::structure_default: return "default";
    case Tier::generic: return "generic";
    case Tier::forced: return "forced";
    case Tier::external: return "external";
    }
    return "generic";
}

bool fits(const Kernel &kernel, const CallInfo &call, Device device) {
    if (call.op != kernel.op || kernel.device != device || call.dtype != kernel.dtype ||
        call.data_format != kernel.data_format)
        return false;
    for (const auto &[name, value] : kernel.structure) {
        if (value == 0) continue;
        auto it = call.structure.find(name);
        if (it == call.structure.end() || it->second != value) return false;
    }
    return true;
}

OpIndex index_by_op(const std::vector<Kernel> &kernels, const std::vector<TunedShape> &tuned) {
    OpIndex index;
    for (size_t i = 0; i < kernels.size(); i++) index[kernels[i].op].kernels.push_back(i);
    for (size_t i = 0; i < tuned.size(); i++) index[kernels[tuned[i].kernel].op].tuned.push_back(i);
    return index;
}

Status select_kernel(const CallInfo &call, const RunOptions &options, const std::vector<Kernel> &kernels,
                     const std::vector<TunedShape> &tuned, Selection *selection, bool tuned_usable) {
    return select_kernel(call, options, kernels, tuned, index_by_op(kernels, tuned), selection, tuned_usable);
}

namespace {

// Kernel `k` as the selection of a call.
Selection selected(const Kernel &k, Tier tier, std::string why) {
    return {k.function, k.name, tier, std::move(why), output_channel_tile(running_knobs(k))};
}

// The caller's choice: an external kernel (the tuner's) or a variant forced
// by name (RunOptions::variant); it must fit the call.
Status select_forced(const CallInfo &call, const RunOptions &options, const std::vector<Kernel> &kernels,
                     bool tuned_usable, Selection *selection) {
    const Device device = options.device;
    if (options.external_kernel) {
        const ExternalKernel &k = *options.external_kernel;
        Kernel view{call.op.c_str(), k.name.c_str(), k.device, k.dtype.c_str(), k.data_format.c_str(), {}, "",
                    /*structure_default=*/false, k.function};
        for (const auto &[name, value] : k.structure) view.structure.emplace_back(name.c_str(), value);
        if (!fits(view, call, device))
            return InvalidArgument("external kernel " + k.name + " does not fit this call");
        *selection = {k.function, k.name, Tier::external, "external kernel", output_channel_tile(k.knobs)};
        return Status::OK();
    }
    for (const Kernel &k : kernels) {
        if (options.variant != k.name) continue;
        if (!fits(k, call, device))
            return InvalidArgument("variant " + options.variant + " does not fit this call (" + call.op + " " +
                                   to_string(device) + " T=" + call.dtype + " data_format=" + call.data_format + " " +
                                   structure_text(call.structure) + ")");
        if (!tuned_usable && k.tuned_targets_only)
            return Unimplemented(
                "variant " + options.variant +
                " is a tuned record, compiled only for the build machine's CPU (GRADTUNE_TUNED_CPU_TARGETS); "
                "this CPU (or GRADTUNE_MAX_CPU_ISA) lacks its features");
        *selection = selected(k, Tier::forced, "RunOptions::variant");
        return Status::OK();
    }
    return InvalidArgument("no variant named " + options.variant + " in this build");
}

// The measured shapes with the call's structure (the op's `tuned` entries):
// this very shape on this machine's class, then on another class, then the
// nearest shape. Each is served by its tuned kernel, or by the generic one
// where that measured faster; but a nearest shape where the generic variant
// measured faster says nothing of the structure default, which it would
// displace (`has_default`): it is not a candidate then. False when no
// measured shape serves.
bool select_measured(const CallInfo &call, Device device, const std::vector<Kernel> &kernels,
                     const std::vector<TunedShape> &tuned, const OpEntries &entries, bool tuned_usable,
                     bool has_default, Selection *selection) {
    const std::string own = target_class();
    auto served_by = [&](const TunedShape &t) {
        return std::string(kernels[t.kernel].generic() ? "the generic variant measured fastest on " : "tuned on ") +
               t.source_class;
    };
    const TunedShape *nearest = nullptr, *transferred = nullptr;
    double best = std::numeric_limits<double>::infinity();
    int candidates = 0;
    for (size_t i : entries.tuned) {
        const TunedShape &t = tuned[i];
        const Kernel &k = kernels[t.kernel];
        if (!fits(k, call, device) || !same_structure(t, call)) continue;
        if (!tuned_usable && k.tuned_targets_only) continue;
        candidates++;
        const bool mine = own == t.source_class;
        if (same_shape(t, call)) {
            if (mine) {
                *selection = selected(k, Tier::exact,
                                      k.generic() ? "the generic variant measured fastest for this shape"
                                                  : "tuned for this shape");
                return true;
            }
            if (!transferred) transferred = &t;
            continue;
        }
        if (has_default && k.generic()) continue;
        // Another class's record counts as a little farther than our own.
        const double d = distance(t, call) + (mine ? 0.0 : 0.01);
        if (d < best) {
            best = d;
            nearest = &t;
        }
    }
    if (transferred) {
        const Kernel &k = kernels[transferred->kernel];
        *selection =
            selected(k, Tier::transferred, served_by(*transferred) + " for this shape, compiled for this machine");
        return true;
    }
    if (nearest) {
        const Kernel &k = kernels[nearest->kernel];
        *selection = selected(k, Tier::nearest,
                              served_by(*nearest) + " for " + shape_key(nearest->padding, shape_map(*nearest)) +
                                  ", the nearest of " + std::to_string(candidates) +
                                  " measured shape(s) with this structure");
        return true;
    }
    return false;
}

// The most specific structure default that fits the call: one for 3x3
// stride 2 before one for any filter at stride 2 (whatever the table's
// order); nullptr where none does.
const Kernel *structure_default(const CallInfo &call, Device device, const std::vector<Kernel> &kernels,
                                const OpEntries &entries) {
    const Kernel *fallback = nullptr;
    for (size_t i : entries.kernels) {
        const Kernel &k = kernels[i];
        if (k.structure_default && fits(k, call, device) && (!fallback || k.fixed_count() > fallback->fixed_count()))
            fallback = &k;
    }
    return fallback;
}

}  // namespace

Status select_unmeasured(const CallInfo &call, Device device, const std::vector<Kernel> &kernels,
                         const OpEntries &entries, Selection *selection) {
    if (const Kernel *fallback = structure_default(call, device, kernels, entries)) {
        *selection = selected(*fallback, Tier::structure_default, "the structure default (schedules/defaults)");
        return Status::OK();
    }
    for (size_t i : entries.kernels) {
        const Kernel &k = kernels[i];
        if (k.generic() && fits(k, call, device)) {
            *selection = selected(k, Tier::generic, "no tuned variant for this structure");
            return Status::OK();
        }
    }
    return Unimplemented("gradtune: this build has no " + std::string(to_string(device)) + " variant of " + call.op +
                         " for T=" + call.dtype + " data_format=" + call.data_format);
}

Status select_kernel(const CallInfo &call, const RunOptions &options, const std::vector<Kernel> &kernels,
                     const std::vector<TunedShape> &tuned, const OpIndex &index, Selection *selection,
                     bool tuned_usable) {
    if (options.external_kernel || !options.variant.empty())
        return select_forced(call, options, kernels, tuned_usable, selection);
    const Device device = options.device;
    static const OpEntries kNoEntries;
    const auto of_op = index.find(call.op);
    const OpEntries &entries = of_op == index.end() ? kNoEntries : of_op->second;
    const Kernel *fallback = structure_default(call, device, kernels, entries);
    if (select_measured(call, device, kernels, tuned, entries, tuned_usable, fallback != nullptr, selection))
        return Status::OK();
    return select_unmeasured(call, device, kernels, entries, selection);
}

namespace {

// A selection made for a call, kept for the next calls of the same kind.
struct RecentSelection {
    CallInfo call;  // op, dtype, layout, structure, padding and shape: all a selection depends on
    Device device = Device::cpu;
    bool probing = false;  // made where probes' choices count (probing())
    Selection selection;
};

bool same_kind(const CallInfo &a, const CallInfo &b) {
    return a.op == b.op && a.dtype == b.dtype && a.data_format == b.data_format && a.padding == b.padding &&
           a.structure == b.structure && a.shape == b.shape;
}

const OpIndex &table_index() {
    static const OpIndex index = index_by_op(kernels(), tuned_shapes());
    return index;
}

bool tuned_usable_on(Device device) { return device != Device::cpu || tuned_cpu_variants_usable(); }

// The probes' choices, per signature, for the process's life.
ProbeDecisions<Selection> &probe_choices() {
    static auto *choices = new ProbeDecisions<Selection>;  // never destroyed: calls may run from static destructors
    return *choices;
}

bool probed_choice(const CallInfo &call, Device device, Selection *selection) {
    const std::optional<Selection> chosen = probe_choices().find(signature_key(call, device));
    if (chosen) *selection = *chosen;
    return chosen.has_value();
}

}  // namespace

bool probing(const RunOptions &options) {
    static const bool enabled = [] {
        const char *v = std::getenv("GRADTUNE_DISPATCH_PROBE");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return enabled && options.probe_dispatch && options.device == Device::cpu && options.variant.empty() &&
           !options.external_kernel;
}

std::string signature_key(const CallInfo &call, Device device) {
    return std::string(to_string(device)) + " " + call.op + " " + call.dtype + " " + call.data_format + " " +
           structure_text(call.structure) + " " + shape_key(call.padding, call.shape);
}

namespace {

// A probe's decision for the call's signature (the first one stands).
void remember_probe(const CallInfo &call, Device device, Selection winner) {
    winner.probed = true;
    probe_choices().remember(signature_key(call, device), std::move(winner));
}

// True on a thread while it runs a probe's calls: they are neither reported
// (GRADTUNE_VERBOSE) nor journalled.
thread_local bool probe_running = false;

}  // namespace

ProbeRun::ProbeRun() : outer_(probe_running) { probe_running = true; }
ProbeRun::~ProbeRun() { probe_running = outer_; }

namespace {

// Whether a selection is one a probe measures before it serves: a record of
// another shape or class, or, on a CPU that runs the AVX2 baseline, a
// structure default (its knobs were chosen on AVX-512 machines: under
// GRADTUNE_MAX_CPU_ISA=avx2 FractionalAvgPoolGrad's defaults ran at
// 0.57-0.88x the generic variant, Zen 4, default suite).
bool measured_before_serving(const Selection &s, Device device) {
    if (s.tier == Tier::nearest || s.tier == Tier::transferred) return true;
    return s.tier == Tier::structure_default && device == Device::cpu && cpu_runs_avx2_baseline();
}

// What a probed selection displaces: a record, the structure default (else
// the generic variant); a structure default, the generic variant.
Status displaced_by(const CallInfo &call, const Selection &probed, Device device, Selection *displaced) {
    const auto of_op = table_index().find(call.op);
    if (of_op == table_index().end()) return Unimplemented("no variants of " + call.op);
    if (probed.tier != Tier::structure_default)
        return select_unmeasured(call, device, kernels(), of_op->second, displaced);
    for (size_t i : of_op->second.kernels) {
        const Kernel &k = kernels()[i];
        if (k.generic() && fits(k, call, device)) {
            *displaced = selected(k, Tier::generic, "no tuned variant for this structure");
            return Status::OK();
        }
    }
    return Unimplemented("no generic variant of " + call.op);
}

}  // namespace

void probe_dispatch(const CallInfo &call, const RunOptions &options,
                    const std::function<Status(const RunOptions &)> &execute) {
    if (!probing(options) || probe_running) return;
    Selection record, displaced;
    if (!select_kernel(call, options, &record).ok() || record.probed ||
        !measured_before_serving(record, options.device))
        return;
    if (!displaced_by(call, record, options.device, &displaced).ok() || displaced.function == record.function) {
        // Nothing to measure it against (the record's setting is the one it
        // would displace, or the op has no other variant here).
        record.why = "not probed, nothing else to measure it against: " + record.why;
        remember_probe(call, options.device, std::move(record));
        return;
    }
    const ProbeRun running;
    constexpr int kRounds = 3;
    const Selection *candidates[2] = {&record, &displaced};
    double best_ms[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    for (int round = 0; round < kRounds; round++) {
        for (int c = 0; c < 2; c++) {
            RunOptions forced = options;
            forced.variant = candidates[c]->name;
            const auto start = std::chrono::steady_clock::now();
            if (!execute(forced).ok()) {
                // The static choice stands (and is not probed again); the
                // call's own run reports any error.
                remember_probe(call, options.device, record);
                return;
            }
            const auto end = std::chrono::steady_clock::now();
            best_ms[c] = std::min(best_ms[c], std::chrono::duration<double, std::milli>(end - start).count());
        }
    }
    Selection winner = best_ms[0] <= best_ms[1] ? record : displaced;
    char measured[160];
    std::snprintf(measured, sizeof measured, "probed on the signature's first call (%s %.4f ms, %s %.4f ms): ",
                  to_string(record.tier), best_ms[0], to_string(displaced.tier), best_ms[1]);
    winner.why = measured + winner.why;
    remember_probe(call, options.device, std::move(winner));
}

bool probe_running_here() { return probe_running; }

namespace {
thread_local bool quiet_running = false;
}  // namespace

QuietRun::QuietRun() : outer_(quiet_running) { quiet_running = true; }
QuietRun::~QuietRun() { quiet_running = outer_; }
bool unreported_here() { return probe_running || quiet_running; }

DetourChoice DetourDecisions::choice(const CallInfo &call, const RunOptions &options,
                                     const std::function<DetourChoice()> &unprobed) {
    if (const char *v = std::getenv(variable_); v && *v) {
        if (std::strcmp(v, "detour") == 0) return {true, true, std::string(variable_) + "=detour"};
        if (std::strcmp(v, "direct") == 0) return {true, false, std::string(variable_) + "=direct"};
    }
    if (!probing(options)) return unprobed();
    return decided_.find(signature_key(call, Device::cpu)).value_or(DetourChoice{});
}

void DetourDecisions::remember(const CallInfo &call, bool detour, double detour_ms, double direct_ms) {
    char why[200];
    std::snprintf(why, sizeof why, "probed on the signature's first call (%s %.4f ms, %s %.4f ms)", detour_words_,
                  detour_ms, direct_words_, direct_ms);
    decided_.remember(signature_key(call, Device::cpu), DetourChoice{true, detour, why, true});
}

Status probe_two_ways(DetourDecisions &decisions, const CallInfo &call, const std::function<Status()> &detour,
                      const std::function<Status()> &direct) {
    const ProbeRun running;
    // At least three rounds, and short calls more (up to 20 ms of runs in
    // all, 20 rounds): a best of three runs of a 0.3 ms call still chose
    // the slower way now and then on a busy 2-core machine.
    double best[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    double spent = 0;
    for (int round = 0; round < 3 || (round < 20 && spent < 20); round++) {
        for (int way = 0; way < 2; way++) {
            const auto start = std::chrono::steady_clock::now();
            GRADTUNE_RETURN_IF_ERROR(way == 0 ? detour() : direct());
            const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
            best[way] = std::min(best[way], ms.count());
            spent += ms.count();
        }
    }
    decisions.remember(call, best[0] < best[1], best[0], best[1]);
    return Status::OK();
}

Status select_kernel(const CallInfo &call, const RunOptions &options, Selection *selection) {
    const bool tuned_usable = tuned_usable_on(options.device);
    if (!options.variant.empty() || options.external_kernel)
        return select_kernel(call, options, kernels(), tuned_shapes(), table_index(), selection, tuned_usable);
    // Each thread keeps its last few selections: a training step calls the
    // same shapes over and over, and the scan of an op's records costs a few
    // microseconds, a fifth of a small call. The tables are fixed for the
    // process's life, and a probe decides a signature once, before any call
    // of it runs without a probe: a selection never goes stale.
    constexpr size_t kRecent = 8;
    thread_local std::array<RecentSelection, kRecent> recent;
    thread_local size_t next = 0;
    const bool probe = probing(options);
    for (const RecentSelection &r : recent)
        if (r.device == options.device && r.probing == probe && r.selection.function && same_kind(r.call, call)) {
            *selection = r.selection;
            return Status::OK();
        }
    if (!probe || !probed_choice(call, options.device, selection)) {
        GRADTUNE_RETURN_IF_ERROR(
            select_kernel(call, options, kernels(), tuned_shapes(), table_index(), selection, tuned_usable));
        // A record that a probe has yet to measure is not kept: the next
        // call must find the probe's choice.
        if (probe && measured_before_serving(*selection, options.device)) return Status::OK();
    }
    recent[next] = {call, options.device, probe, *selection};
    next = (next + 1) % kRecent;
    return Status::OK();
}

bool verbose_enabled() {
    const char *v = std::getenv("GRADTUNE_VERBOSE");
    return v && *v && std::strcmp(v, "0") != 0;
}

void report_call(const CallInfo &call, Device device, const Selection &selection, double milliseconds) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    std::fprintf(stderr, "gradtune_verbose,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.4fms\n", to_string(device), call.op.c_str(),
                 call.dtype.c_str(), call.data_format.c_str(), structure_text(call.structure).c_str(),
                 shape_key(call.padding, call.shape).c_str(), selection.name.c_str(), to_string(selection.tier),
                 selection.why.c_str(), milliseconds);
}

}  // namespace gradtune::internal
