// How each op plugs into the by-name layer (op_call.h): its TF signature and
// two functions over an OpCall. Each op's runtime file defines one entry;
// op_registry.cpp lists them.
#pragma once

#include <functional>

#include "gradtune/op_call.h"

namespace gradtune::internal {

struct OpEntry {
    OpSpec spec;
    std::function<Status(const OpCall &, std::vector<Tensor> *, const RunOptions &)> run;
    std::function<Status(const OpCall &, CallInfo *)> describe;
};

// Helpers for reading an OpCall (they return TF-like errors for a missing
// input or attr of the wrong kind).
Status GetInput(const OpCall &call, const std::string &name, ConstTensorRef *tensor);
Status GetIntList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<int> *value);
Status GetString(const OpCall &call, const OpSpec &spec, const std::string &name, std::string *value);
Status GetBool(const OpCall &call, const OpSpec &spec, const std::string &name, bool *value);
Status GetFloatList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<double> *value);
Status GetInt(const OpCall &call, const OpSpec &spec, const std::string &name, int64_t *value);

}  // namespace gradtune::internal
