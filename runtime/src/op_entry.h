// How each op plugs into the by-name layer (op_call.h): its TF signature and
// two functions over an OpCall. Each op's runtime file defines one entry;
// op_registry.cpp lists them.
#pragma once

#include <array>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatch.h"
#include "gradtune/convolution_attrs.h"
#include "gradtune/op_call.h"
#include "tf_checks.h"

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

// The front end every single-output op shares, written once: the two
// Compute() overloads of the typed API and the by-name entry. An op's file
// holds only what is its own, in a `Definition`:
//
//   struct Definition {
//       struct Args;      // Compute()'s arguments but the output and the
//                         // options, as references (no copy per call)
//       struct Values;    // the same, owned (a by-name call's), with
//                         //   Args args() const;
//                         // (a convolution op inherits Values and Unpack
//                         // from ConvolutionDefinition, below)
//       struct Prepared;  // what Prepare() found: `info` (the CallInfo,
//                         // whose output_dtypes[0] / output_shapes[0] are
//                         // the output's) and the op's geometry
//       static constexpr const char *kShapeInput;  // the input whose value is the output's
//                                                  // shape, named when a caller's output has the
//                                                  // wrong shape ("" for none)
//       static constexpr DataType kTypes[];        // T's allowed dtypes, in TF's order
//       static OpSpec Spec();                      // TF's inputs, outputs and attrs (MakeEntry
//                                                  // adds kTypes and kShapeInput)
//       static Status Unpack(const OpCall &, const OpSpec &, Values *);
//       static Status Prepare(const Args &, Prepared *);  // TF's checks, in TF's order
//       // What Execute() would refuse, from the output's element count
//       // alone (asked before an output is allocated).
//       static Status Refusal(const Prepared &, const Args &, int64_t output_elements, const RunOptions &);
//       static Status Execute(const Prepared &, const Args &, const TensorRef &output, const RunOptions &);
//   };
//
// Execute() as dispatch runs it: first the probe of a call that a record
// tuned for another shape or class would serve (dispatch.h), then the run.
template <typename Definition>
Status ExecuteDispatched(const typename Definition::Prepared &p, const typename Definition::Args &args,
                         const TensorRef &output, const RunOptions &options) {
    probe_dispatch(p.info, options, [&](const RunOptions &o) { return Definition::Execute(p, args, output, o); });
    return Definition::Execute(p, args, output, options);
}

// Into caller memory: the caller's output must have the output's dtype and
// shape; on any error it is left untouched.
template <typename Definition>
Status Compute(const typename Definition::Args &args, const TensorRef &output, const RunOptions &options) {
    typename Definition::Prepared p;
    GRADTUNE_RETURN_IF_ERROR(Definition::Prepare(args, &p));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckCallerOutput(output, p.info.output_dtypes[0], p.info.output_shapes[0],
                                                   Definition::kShapeInput));
    return ExecuteDispatched<Definition>(p, args, output, options);
}

// Into a new tensor: TF's out-of-memory check first, then what Execute would
// refuse, so that an output is never allocated (and zero-filled) for nothing.
template <typename Definition>
Status Compute(const typename Definition::Args &args, Tensor *output, const RunOptions &options) {
    typename Definition::Prepared p;
    GRADTUNE_RETURN_IF_ERROR(Definition::Prepare(args, &p));
    const DataType dtype = p.info.output_dtypes[0];
    const std::vector<int64_t> &shape = p.info.output_shapes[0];
    GRADTUNE_RETURN_IF_ERROR(tf::CheckOutputFits(dtype, shape));
    GRADTUNE_RETURN_IF_ERROR(Definition::Refusal(p, args, NumElements(shape), options));
    Tensor result;
    GRADTUNE_RETURN_IF_ERROR(tf::AllocateOutput(dtype, shape, &result));
    GRADTUNE_RETURN_IF_ERROR(ExecuteDispatched<Definition>(p, args, result.ref(), options));
    *output = std::move(result);
    return Status::OK();
}

// The op's by-name entry: a run is a Compute() of the unpacked call, a
// describe is its Prepare().
template <typename Definition>
OpEntry MakeEntry() {
    OpEntry entry;
    entry.spec = Definition::Spec();
    entry.spec.types.assign(std::begin(Definition::kTypes), std::end(Definition::kTypes));
    entry.spec.shape_input = Definition::kShapeInput;
    entry.run = [spec = entry.spec](const OpCall &call, const Outputs &outputs, const RunOptions &options) -> Status {
        typename Definition::Values values;
        GRADTUNE_RETURN_IF_ERROR(Definition::Unpack(call, spec, &values));
        return run_single_output(
            outputs, [&](auto output) { return Compute<Definition>(values.args(), output, options); });
    };
    entry.describe = [spec = entry.spec](const OpCall &call, CallInfo *info) -> Status {
        typename Definition::Values values;
        GRADTUNE_RETURN_IF_ERROR(Definition::Unpack(call, spec, &values));
        typename Definition::Prepared p;
        GRADTUNE_RETURN_IF_ERROR(Definition::Prepare(values.args(), &p));
        *info = p.info;
        return Status::OK();
    };
    return entry;
}

// Helpers for reading an OpCall (they return TF-like errors for a missing
// input or attr of the wrong kind).
Status GetInput(const OpCall &call, const std::string &name, ConstTensorRef *tensor);
// Every input of the op, in spec.inputs' order.
Status GetInputs(const OpCall &call, const OpSpec &spec, std::initializer_list<ConstTensorRef *> tensors);
Status GetIntList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<int> *value);
Status GetString(const OpCall &call, const OpSpec &spec, const std::string &name, std::string *value);
Status GetBool(const OpCall &call, const OpSpec &spec, const std::string &name, bool *value);
Status GetFloatList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<double> *value);
Status GetInt(const OpCall &call, const OpSpec &spec, const std::string &name, int64_t *value);

// The attrs of TF's 2-D convolution ops, in TF's order; use_cudnn_on_gpu is
// an attr of the dense ones only.
std::vector<AttrSpec> ConvolutionAttrs(bool use_cudnn_on_gpu);

// The OpSpec of a 2-D convolution op: its inputs and their types (T or
// int32), one output of type T, and ConvolutionAttrs.
OpSpec ConvolutionSpec(const char *name, std::vector<std::string> inputs, std::vector<std::string> input_types,
                       bool use_cudnn_on_gpu);

// Reads a call's convolution attrs (ConvolutionAttrs) into the typed API's
// strides, padding and Attrs, in the same order.
template <typename Attrs>
Status GetConvolutionAttrs(const OpCall &call, const OpSpec &spec, std::vector<int> *strides, std::string *padding,
                           Attrs *attrs) {
    GRADTUNE_RETURN_IF_ERROR(GetIntList(call, spec, "strides", strides));
    if constexpr (requires { attrs->use_cudnn_on_gpu_; })
        GRADTUNE_RETURN_IF_ERROR(GetBool(call, spec, "use_cudnn_on_gpu", &attrs->use_cudnn_on_gpu_));
    GRADTUNE_RETURN_IF_ERROR(GetString(call, spec, "padding", padding));
    GRADTUNE_RETURN_IF_ERROR(GetIntList(call, spec, "explicit_paddings", &attrs->explicit_paddings_));
    GRADTUNE_RETURN_IF_ERROR(GetString(call, spec, "data_format", &attrs->data_format_));
    return GetIntList(call, spec, "dilations", &attrs->dilations_);
}

// The part of a Definition that every 2-D convolution op shares: its
// Compute() takes `Inputs` tensors, then strides, padding and Attrs (TF's
// order). The op names its arguments in its own `Args`, an aggregate of
//   const ConstTensorRef &...;  (Inputs of them, in TF's input order)
//   const std::vector<int> &strides;  std::string_view padding;  const Attrs &attrs;
// and derives its Definition from ConvolutionDefinition<Args, Inputs>, which
// brings Values (the same, owned) and Unpack().
template <typename OpArgs, size_t Inputs>
struct ConvolutionDefinition {
    using Args = OpArgs;
    using Attrs = std::remove_cvref_t<decltype(std::declval<Args>().attrs)>;
    struct Values {
        std::array<ConstTensorRef, Inputs> inputs;
        std::vector<int> strides;
        std::string padding;
        Attrs attrs;
        Args args() const {
            return std::apply([&](const auto &...in) { return Args{in..., strides, padding, attrs}; }, inputs);
        }
    };
    // The inputs in spec order, then the attrs (ConvolutionAttrs).
    static Status Unpack(const OpCall &call, const OpSpec &spec, Values *v) {
        for (size_t i = 0; i < Inputs; i++) GRADTUNE_RETURN_IF_ERROR(GetInput(call, spec.inputs.at(i), &v->inputs[i]));
        return GetConvolutionAttrs(call, spec, &v->strides, &v->padding, &v->attrs);
    }
};

// Op::Run of a convolution op (ConvolutionOp, gradtune/convolution_attrs.h):
// the call as the Definition's Args, then Compute() into `output` (a
// TensorRef or a Tensor*).
template <typename Definition, typename Call, typename Output>
Status RunConvolution(const Call &call, Output output) {
    using Args = typename Definition::Args;
    const Args args = std::apply(
        [&](const auto *...inputs) { return Args{*inputs..., call.strides, call.padding, call.attrs}; }, call.inputs);
    return Compute<Definition>(args, output, call.options);
}

}  // namespace gradtune::internal
