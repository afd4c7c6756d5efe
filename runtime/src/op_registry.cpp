// The by-name op layer (gradtune/op_call.h): every op's entry, and helpers to
// read inputs and attrs from an OpCall.
#include <algorithm>
#include <new>
#include <stdexcept>

#include "channel_split.h"
#include "conv2d_backprop.h"
#include "dilation_phases.h"
#include "dispatch.h"
#include "float32_detour.h"
#include "group_blocks.h"
#include "nhwc_detour.h"
#include "taps_pointwise.h"
#include "op_entry.h"

namespace gradtune {

namespace internal {

// Each op's <stem>_entry() is in runtime/src/<stem>.cpp; the list comes from
// generators/ (cmake/GradtuneOps.cmake) through the generated op_list.inc.
#define GRADTUNE_OP(name, stem) OpEntry stem##_entry();
#include "op_list.inc"
#undef GRADTUNE_OP

namespace {

const std::vector<OpEntry> &entries() {
    static const std::vector<OpEntry> all = {
#define GRADTUNE_OP(name, stem) stem##_entry(),
#include "op_list.inc"
#undef GRADTUNE_OP
    };
    return all;
}

const OpEntry *find_entry(std::string_view name) {
    for (const OpEntry &e : entries())
        if (e.spec.name == name) return &e;
    return nullptr;
}

const AttrSpec *find_attr(const OpSpec &spec, const std::string &name) {
    for (const AttrSpec &a : spec.attrs)
        if (a.name == name) return &a;
    return nullptr;
}

// The attr's value in the call, else its default; an error for a missing
// required attr or a value of the wrong kind.
template <typename T>
Status get_attr(const OpCall &call, const OpSpec &spec, const std::string &name, T *value) {
    const AttrSpec *attr = find_attr(spec, name);
    auto it = call.attrs.find(name);
    if (it == call.attrs.end()) {
        if (!attr || attr->required)
            return InvalidArgument("NodeDef missing attr '" + name + "' from Op<name=" + spec.name + ">");
        *value = std::get<T>(attr->default_value);
        return Status::OK();
    }
    if (const T *v = std::get_if<T>(&it->second)) {
        *value = *v;
        return Status::OK();
    }
    return InvalidArgument("attr '" + name + "' of " + spec.name + " has the wrong type");
}

}  // namespace

Status GetInput(const OpCall &call, const std::string &name, ConstTensorRef *tensor) {
    auto it = call.inputs.find(name);
    if (it == call.inputs.end()) return InvalidArgument(call.op + " needs input '" + name + "'");
    *tensor = it->second;
    return Status::OK();
}

Status GetInputs(const OpCall &call, const OpSpec &spec, std::initializer_list<ConstTensorRef *> tensors) {
    size_t i = 0;
    for (ConstTensorRef *tensor : tensors) GRADTUNE_RETURN_IF_ERROR(GetInput(call, spec.inputs.at(i++), tensor));
    return Status::OK();
}

Status GetIntList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<int> *value) {
    std::vector<int64_t> list;
    GRADTUNE_RETURN_IF_ERROR(get_attr(call, spec, name, &list));
    value->clear();
    for (int64_t v : list) {
        if (v < INT32_MIN || v > INT32_MAX)
            return InvalidArgument("Attr " + name + " has value " + std::to_string(v) + " out of range for an int32");
        value->push_back(static_cast<int>(v));
    }
    return Status::OK();
}

Status GetString(const OpCall &call, const OpSpec &spec, const std::string &name, std::string *value) {
    return get_attr(call, spec, name, value);
}

Status GetBool(const OpCall &call, const OpSpec &spec, const std::string &name, bool *value) {
    return get_attr(call, spec, name, value);
}

Status GetFloatList(const OpCall &call, const OpSpec &spec, const std::string &name, std::vector<double> *value) {
    return get_attr(call, spec, name, value);
}

Status GetInt(const OpCall &call, const OpSpec &spec, const std::string &name, int64_t *value) {
    return get_attr(call, spec, name, value);
}

std::vector<AttrSpec> ConvolutionAttrs(bool use_cudnn_on_gpu) {
    std::vector<AttrSpec> attrs = {
        AttrSpec{"strides", AttrKind::kIntList, true, std::vector<int64_t>{}},
        AttrSpec{"padding", AttrKind::kString, true, std::string(), {"SAME", "VALID", "EXPLICIT"}},
        AttrSpec{"explicit_paddings", AttrKind::kIntList, false, std::vector<int64_t>{}},
        AttrSpec{"data_format", AttrKind::kString, false, std::string("NHWC"), {"NHWC", "NCHW"}},
        AttrSpec{"dilations", AttrKind::kIntList, false, std::vector<int64_t>{1, 1, 1, 1}},
    };
    if (use_cudnn_on_gpu) attrs.insert(attrs.begin() + 1, AttrSpec{"use_cudnn_on_gpu", AttrKind::kBool, false, true});
    return attrs;
}

OpSpec ConvolutionSpec(const char *name, std::vector<std::string> inputs, std::vector<std::string> input_types,
                       bool use_cudnn_on_gpu) {
    OpSpec spec;
    spec.name = name;
    spec.inputs = std::move(inputs);
    spec.input_types = std::move(input_types);
    spec.outputs = {"output"};
    spec.output_types = {"T"};
    spec.attrs = ConvolutionAttrs(use_cudnn_on_gpu);
    return spec;
}

}  // namespace internal

const std::vector<OpSpec> &RegisteredOps() {
    static const std::vector<OpSpec> specs = [] {
        std::vector<OpSpec> s;
        for (const internal::OpEntry &e : internal::entries()) s.push_back(e.spec);
        return s;
    }();
    return specs;
}

const OpSpec *FindOpSpec(std::string_view name) {
    const internal::OpEntry *e = internal::find_entry(name);
    return e ? &e->spec : nullptr;
}

namespace {

Status run_entry(const OpCall &call, const internal::Outputs &outputs, const RunOptions &options) {
    const internal::OpEntry *e = internal::find_entry(call.op);
    if (!e) return InvalidArgument("Op type not registered '" + call.op + "'");
    if (outputs.views && outputs.views->size() != e->spec.outputs.size())
        return InvalidArgument(call.op + " has " + std::to_string(e->spec.outputs.size()) + " output(s), " +
                               std::to_string(outputs.views->size()) + " given");
    // status.h promises that nothing throws across the API: an allocation
    // that fails anywhere below (sequences, scratch buffers) is TF's
    // ResourceExhausted, anything else a bug reported as Internal.
    try {
        return e->run(call, outputs, options);
    } catch (const std::bad_alloc &) {
        return ResourceExhausted("OOM when running " + call.op + " on /job:localhost/replica:0/task:0/device:CPU:0");
    } catch (const std::exception &error) {
        return Internal(call.op + ": " + error.what());
    }
}

}  // namespace

Status RunOp(const OpCall &call, std::vector<Tensor> *outputs, const RunOptions &options) {
    return run_entry(call, {outputs, nullptr}, options);
}

Status RunOpInto(const OpCall &call, const std::vector<TensorRef> &outputs, const RunOptions &options) {
    return run_entry(call, {nullptr, &outputs}, options);
}

Status DescribeCall(const OpCall &call, CallInfo *info) {
    const internal::OpEntry *e = internal::find_entry(call.op);
    if (!e) return InvalidArgument("Op type not registered '" + call.op + "'");
    return e->describe(call, info);
}

Status ExplainDispatch(const OpCall &call, const RunOptions &options, DispatchInfo *info) {
    CallInfo call_info;
    GRADTUNE_RETURN_IF_ERROR(DescribeCall(call, &call_info));
    // The detours, in the order the ops take them: a 16-bit call to float32,
    // NCHW to NHWC, a grouped call to its group blocks, a dilated call to its
    // undilated phases, a strided or small-grid call to its pointwise call;
    // then the kernel, on slices of a filter gradient's output channels where
    // its tile does not divide them.
    std::string detours;
    if (internal::float32_detour_fits(call_info, options)) {
        // Decided by the signature's first call where a 16-bit variant fits
        // (or not yet: it then runs both ways, and this names its own kernels).
        const internal::DetourChoice choice = internal::float32_detour_choice(call_info, options);
        if (choice.known && choice.detour) {
            detours += "a " + call_info.dtype + " call as its float32 call, its operands widened and its output "
                       "rounded once (" + choice.why + "): ";
            call_info = internal::float32_twin(call_info);
        } else if (!choice.known) {
            detours += "on the call's " + call_info.dtype + " kernels until the signature's first call has measured "
                       "them against its float32 call: ";
        } else if (choice.measured) {
            detours += "on the call's " + call_info.dtype + " kernels (" + choice.why + "): ";
        }
    }
    if (internal::detour_to_nhwc(call_info, options)) {
        call_info = internal::nhwc_twin(call_info);
        detours += "an NCHW call on the NHWC kernels (transposed; only the generic variant has NCHW): ";
    }
    const bool group_blocks = internal::detour_to_group_blocks(call_info, options);
    if (group_blocks) {
        const internal::GroupBlocks blocks = internal::group_blocks(call_info);
        call_info = internal::block_twin(call_info, blocks);
        const int64_t last = blocks.groups_of(blocks.blocks() - 1);
        detours += "a grouped call as " + std::to_string(blocks.blocks()) + " ungrouped calls of " +
                   std::to_string(blocks.per_block) + (blocks.per_block == 1 ? " group" : " groups") +
                   (last < blocks.per_block ? " (the last of " + std::to_string(last) + ")" : "") +
                   " (only the generic variant has its groups): ";
    }
    if (internal::detour_to_phases(call_info, options)) {
        const internal::DilationPhases phases = internal::dilation_phases(call_info);
        call_info = internal::phase_twin(call_info, phases);
        detours += "a dilated call as " + std::to_string(phases.phases()) +
                   " undilated phases (only the generic variant has its dilation): ";
    }
    // Not for group blocks: their activations are channel slices (conv2d_backprop.h).
    if (int64_t rows = 0, cols = 0;
        !group_blocks && internal::taps_pointwise_fits(call_info, options, &rows, &cols)) {
        // Decided by the signature's first call (or not yet: it then runs
        // both ways, and this names the call's own kernels).
        const internal::DetourChoice choice = internal::taps_pointwise_choice(call_info, options);
        if (choice.known && choice.detour) {
            internal::Conv2DBackpropPrepared p;
            p.info = call_info;
            p.stride_rows = call_info.structure.at("stride_height");
            p.stride_cols = call_info.structure.at("stride_width");
            call_info = internal::taps_pointwise_prepared(p, rows, cols).info;
            detours += call_info.op == "Conv2DBackpropInput"
                           ? "an input gradient as the stride-1 1x1 call of its out_backprop positions, the "
                             "filter's taps as channels, summed into place (" + choice.why + "): "
                           : "a filter gradient as the stride-1 1x1 call of its out_backprop positions, the "
                             "input's taps gathered as channels (" + choice.why + "): ";
        } else if (!choice.known) {
            detours += "on the call's own kernels until the signature's first call has measured them against "
                       "its stride-1 pointwise call: ";
        } else if (choice.measured) {
            detours += "on the call's own kernels (" + choice.why + "): ";
        }
    }
    internal::Selection selection;
    GRADTUNE_RETURN_IF_ERROR(internal::select_kernel(call_info, options, &selection));
    std::string why = detours + selection.why;
    if (const int64_t split = internal::split_output_channels(call_info, options.device, selection.output_channel_tile)) {
        const int64_t channels = call_info.shape.at("O");
        why += "; run on output channels [0, " + std::to_string(split) + ") then [" + std::to_string(split) +
                   ", " + std::to_string(channels) + ") (its register tile of " +
                   std::to_string(selection.output_channel_tile) + " does not divide " +
                   std::to_string(channels) + ")";
    }
    *info = {selection.name, to_string(selection.tier), why};
    return Status::OK();
}

}  // namespace gradtune
