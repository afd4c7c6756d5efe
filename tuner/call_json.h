// Op calls as JSON (the suite, trial logs and `gradtune run` share this
// form), and turning them into OpCalls with real tensors:
//   {"op": "DepthwiseConv2dNativeBackpropInput",
//    "inputs": {"input_sizes": {"dtype": "int32", "values": [1, 112, 112, 32]},
//               "filter": {"dtype": "float32", "shape": [3, 3, 32, 1]}, ...},
//    "attrs": {"strides": [1, 1, 1, 1], "padding": "SAME"}}
// An input with "values" holds exactly those; one with only "shape" is
// filled with seeded random data (uniform in [-1, 1], small integers for
// integer tensors).
#pragma once

#include <nlohmann/json.hpp>

#include <deque>
#include <string>

#include "gradtune/op_call.h"

namespace gradtune::tooling {

// An OpCall together with the tensors it points into.
struct MaterialisedCall {
    OpCall call;
    std::deque<Tensor> storage;
};

// Fails (Status) on an unknown op, input or attr, or a value of the wrong kind.
// Inputs without "values" are filled with seeded random values, or left zero
// where only the call's shapes and attrs matter (kZeros: no time spent).
enum class Fill { kRandom, kZeros };
Status materialise(const nlohmann::json &spec, uint32_t seed, MaterialisedCall *out, Fill fill = Fill::kRandom);

// JSON value -> AttrValue of the kind the op declares.
Status attr_from_json(const AttrSpec &attr, const nlohmann::json &value, AttrValue *out);

// Tensor <-> {"dtype", "shape", "values"}.
Status tensor_from_json(const nlohmann::json &j, Tensor *out);
nlohmann::json tensor_to_json(const Tensor &t);

}  // namespace gradtune::tooling
