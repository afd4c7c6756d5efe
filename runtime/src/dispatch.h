// Dispatch: which compiled variant serves a call. In order of preference:
//   exact        a variant tuned on this machine's class for this very shape
//                (same structure and padding),
//   transferred  a record of another class for this very shape, compiled for
//                this target,
//   nearest      the record (of any class) for the nearest shape with the same
//                structure, this machine's class first at equal distance,
//   default      the structure default (one setting per structure group,
//                chosen from the records of every class),
//   generic      the op's generic variant for the dtype, layout and device.
// A caller may force a variant by name (RunOptions::variant) or hand in an
// external kernel (the tuner). GRADTUNE_VERBOSE=1 prints one line per call.
// On a CPU that cannot run the targets tuned records are compiled for
// (Kernel::tuned_targets_only), the first three tiers are skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "variant_table.h"

namespace gradtune::internal {

// How dispatch chose (the tiers above, in order), or that the caller did.
enum class Tier { exact, transferred, nearest, structure_default, generic, forced, external };
// "exact", "transferred", "nearest", "default", "generic", "forced", "external":
// the names DispatchInfo, GRADTUNE_VERBOSE and the shape journal use.
const char *to_string(Tier tier);

struct Selection {
    KernelFunction function = nullptr;
    std::string name;
    Tier tier = Tier::generic;
    std::string why;
    // The output channels of the kernel's register tile in the knob setting
    // it runs with on this CPU (channel_split.h; 0 where its knobs name
    // none). Read from the knobs once, when the kernel is selected.
    int64_t output_channel_tile = 0;
    // Chosen by a probe (probe_dispatch), which `why` reports.
    bool probed = false;
};

Status select_kernel(const CallInfo &call, const RunOptions &options, Selection *selection);
// The same over explicit tables (unit tests); tuned_usable says whether
// tuned-only kernels may run on this CPU.
Status select_kernel(const CallInfo &call, const RunOptions &options, const std::vector<Kernel> &kernels,
                     const std::vector<TunedShape> &tuned, Selection *selection, bool tuned_usable = true);

// One op's entries in the tables (indices into kernels and tuned shapes), so
// that a call scans only its own op's: a few dozen entries, not every op's
// hundreds, on every call.
struct OpEntries {
    std::vector<size_t> kernels, tuned;
};
using OpIndex = std::map<std::string, OpEntries, std::less<>>;
OpIndex index_by_op(const std::vector<Kernel> &kernels, const std::vector<TunedShape> &tuned);
// The same with the tables' index by op (index_by_op of the same tables).
Status select_kernel(const CallInfo &call, const RunOptions &options, const std::vector<Kernel> &kernels,
                     const std::vector<TunedShape> &tuned, const OpIndex &index, Selection *selection,
                     bool tuned_usable);

// What serves a call that no measured shape serves: the most specific
// structure default that fits it, else the generic variant.
Status select_unmeasured(const CallInfo &call, Device device, const std::vector<Kernel> &kernels,
                         const OpEntries &entries, Selection *selection);

// Probes: a record tuned for another shape (nearest) or on another machine
// class (transferred) serves a call only once it has measured faster, on
// that call, than the variant it displaces (the structure default, else the
// generic variant). The first call of such a signature in a process runs
// both, three times each, alternately, on its own tensors; the faster (by its
// better run) serves that call and every later one of the signature, its
// why saying what was measured. CPU calls that dispatch chooses for (no
// RunOptions::variant or external kernel) only; RunOptions::probe_dispatch =
// false or GRADTUNE_DISPATCH_PROBE=0 keep the static choice (a process's
// choices then never depend on its timings).
//
// Whether the call's options let probes choose.
bool probing(const RunOptions &options);
// A call's signature as probes key their decisions: device, op, dtype,
// layout, structure, padding and shape.
std::string signature_key(const CallInfo &call, Device device);
// What probes decided, per signature, for the process's life; the first
// decision for a signature stands. Thread-safe.
template <typename Choice>
class ProbeDecisions {
public:
    std::optional<Choice> find(const std::string &signature) {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = chosen_.find(signature);
        if (it == chosen_.end()) return std::nullopt;
        return it->second;
    }
    void remember(const std::string &signature, Choice choice) {
        std::lock_guard<std::mutex> lock(mutex_);
        chosen_.emplace(signature, std::move(choice));
    }

private:
    std::mutex mutex_;
    std::map<std::string, Choice> chosen_;
};
// The probe of a call, before its own run: `execute` runs the call with the
// options it is given (a variant forced by name). Does nothing where the
// call is not to be probed, or its signature is decided. After a failed run
// the static choice stands for the signature (the call's own run reports the
// error).
void probe_dispatch(const CallInfo &call, const RunOptions &options,
                    const std::function<Status(const RunOptions &)> &execute);
// True on a thread while it runs a probe's calls: they are neither reported
// (GRADTUNE_VERBOSE) nor journalled.
bool probe_running_here();
// Marks the calling thread as running a probe's calls while it lives.
class ProbeRun {
public:
    ProbeRun();
    ~ProbeRun();
    ProbeRun(const ProbeRun &) = delete;
    ProbeRun &operator=(const ProbeRun &) = delete;

private:
    bool outer_;
};
// Marks the calling thread's calls as unreported (neither GRADTUNE_VERBOSE
// nor the journal) while it lives, their own probes still running: a
// detour's warm-up run before its probe.
class QuietRun {
public:
    QuietRun();
    ~QuietRun();
    QuietRun(const QuietRun &) = delete;
    QuietRun &operator=(const QuietRun &) = delete;

private:
    bool outer_;
};
// Whether the calling thread's calls go unreported: a probe's or a QuietRun's.
bool unreported_here();

// Two ways of running a call, chosen per signature: a detour (the call in
// another form: taps_pointwise.h, float32_detour.h) or the call's own
// kernels. Forced with an environment variable (NAME=detour|direct), else
// what the signature's first call measured (run_two_ways), else, where
// probes are off or before that call, the static choice the detour gives.
struct DetourChoice {
    bool known = false;
    bool detour = false;
    std::string why;        // what decided it
    bool measured = false;  // a probe's (not the static choice or the variable's)
};
class DetourDecisions {
public:
    // `variable` forces the choice; `detour_words` and `direct_words` name
    // the two ways in the probe's why ("as the pointwise call").
    DetourDecisions(const char *variable, const char *detour_words, const char *direct_words)
        : variable_(variable), detour_words_(detour_words), direct_words_(direct_words) {}
    // The variable's choice, else the probe's, else `unprobed()` where probes
    // are off, else unknown (the call is to measure both ways).
    DetourChoice choice(const CallInfo &call, const RunOptions &options,
                        const std::function<DetourChoice()> &unprobed);
    void remember(const CallInfo &call, bool detour, double detour_ms, double direct_ms);

private:
    const char *variable_, *detour_words_, *direct_words_;
    ProbeDecisions<DetourChoice> decided_;
};
// The probe of a signature's two ways: `detour()` and `direct()` alternately,
// at least three times each (short calls more), as a probe's runs (neither
// reported nor journalled);
// the better run of each is remembered in `decisions`. Each way has run once
// before (the caller's warm-up, its own probes decided) where that matters.
Status probe_two_ways(DetourDecisions &decisions, const CallInfo &call, const std::function<Status()> &detour,
                      const std::function<Status()> &direct);

// Whether `kernel` can run `call` on `device`.
bool fits(const Kernel &kernel, const CallInfo &call, Device device);

// "SAME C=32 H=112 N=1 W=112"
std::string shape_key(const std::string &padding, const std::map<std::string, int64_t> &shape);

bool verbose_enabled();
// One line on stderr:
// gradtune_verbose,<device>,<op>,<T>,<layout>,<structure>,<shape>,<variant>,<tier>,<why>,<ms>
void report_call(const CallInfo &call, Device device, const Selection &selection, double milliseconds);

}  // namespace gradtune::internal
