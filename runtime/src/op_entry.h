// How each op plugs into the by-name layer (op_call.h): its TF signature and
// two functions over an OpCall. Each op's runtime file defines one entry;
// op_registry.cpp lists them.
#pragma once

#include <functional>

#include "gradtune/op_call.h"

namespace gradtune::internal {

// Where a by-name run writes its outputs: into caller memory (RunOpInto:
// a framework's tensors), into the caller's tensors of an earlier run (RunOp
// handed one tensor per output: timing loops reuse their outputs; allocating
// and faulting in a fresh output per call would be timed too), or into new
// tensors (RunOp).
struct Outputs {
    std::vector<Tensor> *owned = nullptr;           // RunOp
    const std::vector<TensorRef> *views = nullptr;  // RunOpInto
    // Whether the caller brings the memory of all `count` outputs.
    bool in_caller_memory(size_t count) const { return views || owned->size() == count; }
    TensorRef ref(size_t i) const { return views ? (*views)[i] : (*owned)[i].ref(); }
};

struct OpEntry {
    OpSpec spec;
    std::function<Status(const OpCall &, const Outputs &, const RunOptions &)> run;
    std::function<Status(const OpCall &, CallInfo *)> describe;
};

// The by-name run of a single-output op. `compute` is the op's Compute()
// bound to its arguments; it is called with a TensorRef or with a Tensor*
// (both Compute() overloads exist).
template <typename Compute>
Status run_single_output(const Outputs &outputs, Compute compute) {
    if (outputs.in_caller_memory(1)) return compute(outputs.ref(0));
    Tensor output;
    GRADTUNE_RETURN_IF_ERROR(compute(&output));
    outputs.owned->clear();
    outputs.owned->push_back(std::move(output));
    return Status::OK();
}

// Helpers for reading an OpCall (they return TF-like errors for a missing
// input or attr of the wrong kind).
Status GetInput(const OpCall &call, const std::string &name, ConstTensorRef *tensor);
Status GetIntList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<int> *value);
Status GetString(const OpCall &call, const OpSpec &spec, const std::string &name, std::string *value);
Status GetBool(const OpCall &call, const OpSpec &spec, const std::string &name, bool *value);
Status GetFloatList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<double> *value);
Status GetInt(const OpCall &call, const OpSpec &spec, const std::string &name, int64_t *value);

}  // namespace gradtune::internal
