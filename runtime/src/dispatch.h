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

// Whether `kernel` can run `call` on `device`.
bool fits(const Kernel &kernel, const CallInfo &call, Device device);

// "SAME C=32 H=112 N=1 W=112"
std::string shape_key(const std::string &padding, const std::map<std::string, int64_t> &shape);

bool verbose_enabled();
// One line on stderr:
// gradtune_verbose,<device>,<op>,<T>,<layout>,<structure>,<shape>,<variant>,<tier>,<why>,<ms>
void report_call(const CallInfo &call, Device device, const Selection &selection, double milliseconds);

}  // namespace gradtune::internal
