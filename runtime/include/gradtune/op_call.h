// A TF-style op call by names, for tools that handle any op: `gradtune run`,
// the tuner and the benchmark driver. Typed C++ entry points per op are in
// gradtune/<op>.h; this layer maps names onto them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>>;

enum class AttrKind { kInt, kFloat, kBool, kString, kIntList, kFloatList };

struct AttrSpec {
    std::string name;
    AttrKind kind;
    bool required;
    AttrValue default_value;
    std::vector<std::string> allowed = {};  // a string attr's allowed values, in TF's order (empty: any)
    int64_t min_length = 0;                 // a list attr's least length in TF's definition
};

// An op as TF's op definition states it (tensorflow/core/ops/nn_ops.cc):
// enough to register the same op with TensorFlow (python/gradtune_tf).
struct OpSpec {
    std::string name;
    std::vector<std::string> inputs;   // TF's input names, in order
    std::vector<std::string> input_types;  // per input: "T" or the fixed dtype ("int32", "int64")
    std::vector<std::string> outputs;  // TF's output names, in order
    std::vector<std::string> output_types;  // per output, like input_types
    std::vector<AttrSpec> attrs;       // excluding T, which the tensors give
    std::vector<DataType> types;       // T's allowed dtypes, in TF's order
    size_t type_attr_index = 0;        // where TF's definition lists T among attrs
    std::string shape_input;           // the input whose value is the output's shape ("" if none)
    bool stateful = false;             // TF's SetIsStateful (a result may differ between equal calls)
};

struct OpCall {
    std::string op;
    std::map<std::string, ConstTensorRef> inputs;
    std::map<std::string, AttrValue> attrs;
};

// What dispatch sees of a call: the structural values a variant may fix and
// the run-time shape a tuned record is keyed by.
struct CallInfo {
    std::string op;
    std::string dtype, data_format;
    std::map<std::string, int> structure;
    std::string padding;
    std::map<std::string, int64_t> shape;
    // EXPLICIT padding only: the pads {top, bottom, left, right}.
    std::vector<int64_t> explicit_paddings = {};
    // The call's outputs in TF's order: what a framework allocates for
    // RunOpInto.
    std::vector<DataType> output_dtypes = {};
    std::vector<std::vector<int64_t>> output_shapes = {};
};

// Which variant dispatch picks for a call, and why (what GRADTUNE_VERBOSE
// prints), without running it.
struct DispatchInfo {
    std::string variant;
    std::string tier;  // exact, transferred, nearest, default, generic, forced or external
    std::string why;
};

const std::vector<OpSpec> &RegisteredOps();
const OpSpec *FindOpSpec(std::string_view name);

// Validates like TF and runs; `outputs` receives one tensor per TF output.
// When `outputs` already holds one tensor per output (e.g. from an earlier
// RunOp of the same call), the op writes into those tensors instead of
// allocating new ones; they must have the right dtype and shape.
Status RunOp(const OpCall &call, std::vector<Tensor> *outputs, const RunOptions &options = {});
// The same into caller memory (a framework's tensors, without a copy): one
// view per output, of the dtype and shape DescribeCall gives in
// output_dtypes and output_shapes. The call is validated like TF before
// anything is written.
Status RunOpInto(const OpCall &call, const std::vector<TensorRef> &outputs, const RunOptions &options = {});
// Validates like TF and describes the call without running it.
Status DescribeCall(const OpCall &call, CallInfo *info);
Status ExplainDispatch(const OpCall &call, const RunOptions &options, DispatchInfo *info);

}  // namespace gradtune
