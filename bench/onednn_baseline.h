// oneDNN as a baseline for the benchmark report (docs/design.md section 7):
// the same suite call as a oneDNN convolution backward-data or
// backward-weights primitive, with the call's layout, strides, dilations,
// padding, groups (depthwise = groups of one channel) and dtype, either on
// TF's layouts as given (what a framework handing over its tensors gets) or
// with weights in oneDNN's preferred layout (format_tag::any; the one-time
// reorder is not timed). Only built where Debian's libdnnl-dev is installed.
#pragma once

#include <memory>
#include <string>

#include "gradtune/status.h"
#include "suite.h"

namespace gradtune::tooling {

class OnednnBaseline {
public:
    virtual ~OnednnBaseline() = default;
    // nullptr (and `why_not`) for calls oneDNN has no primitive for (an op,
    // float64, a 16-bit type on a CPU without oneDNN's support for it).
    static std::unique_ptr<OnednnBaseline> create(const SuiteEntry &entry, bool tf_layouts, std::string *why_not);
    virtual Status run() = 0;
    virtual std::string implementation() const = 0;  // oneDNN's impl_info_str
};

}  // namespace gradtune::tooling
