// DepthwiseConv2dNative: TF validation (docs/tf-ops.md section 2, in TF's
// order, with TF's texts), geometry, dispatch and the kernel call.
#include "gradtune/depthwise_conv2d_native.h"

#include <algorithm>

#include "DepthwiseConv2dNative_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "dispatch.h"
#include "halide_call.h"
#include "nhwc_detour.h"
#include "op_entry.h"
#include "structures.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using internal::HalideBuffer;
using tf::DataFormat;
using tf::Padding;

constexpr const char *kOp = "DepthwiseConv2dNative";

// The Halide signature of every variant (generators/depthwise_conv2d_native_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&DepthwiseConv2dNative_cpu_float32_NHWC_generic);

struct Prepared {
    CallInfo info;
    DataFormat format = DataFormat::kNHWC;
    int64_t stride = 1, dilation_rows = 1, dilation_cols = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: the input or the filter is empty
};

// Compute()'s arguments but the output and the options.
struct Args {
    const ConstTensorRef &input, &filter;
    const std::vector<int> &strides;
    std::string_view padding;
    const DepthwiseConv2dNative::Attrs &attrs;
};

// The op's part of the shared front end (op_entry.h).
struct Definition : internal::ConvolutionDefinition<Args, 2> {
    using Prepared = gradtune::Prepared;
    static constexpr const char *kShapeInput = "";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble};
    static OpSpec Spec();
    static Status Prepare(const Args &args, Prepared *p);
    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &options);
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options);
};

// TF prints the rejected dilations through an Eigen row vector: elements
// right-aligned to the widest one and separated by a space, e.g. "[1 2 2 1]"
// or "[ 1  0 77  1]".
std::string EigenRowString(const std::vector<int> &values) {
    size_t width = 0;
    for (int v : values) width = std::max(width, std::to_string(v).size());
    std::string out = "[";
    for (size_t i = 0; i < values.size(); i++) {
        const std::string text = std::to_string(values[i]);
        if (i) out += " ";
        out += std::string(width - text.size(), ' ') + text;
    }
    return out + "]";
}

Status Definition::Prepare(const Args &args, Prepared *p) {
    const auto &[input, filter, strides, padding_text, attrs] = args;
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("input", input));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("filter", filter));

    // Op definition: T (from the input), the filter's type, attr values.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(input.dtype, kTypes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 1, input.dtype, filter.dtype));
    Padding padding;
    GRADTUNE_RETURN_IF_ERROR(tf::ParsePadding(padding_text, &padding));
    GRADTUNE_RETURN_IF_ERROR(tf::ParseDataFormat(attrs.data_format_, &p->format));
    const DataFormat format = p->format;
    const int n_dim = tf::DimIndex(format, 'N'), h_dim = tf::DimIndex(format, 'H');
    const int w_dim = tf::DimIndex(format, 'W'), c_dim = tf::DimIndex(format, 'C');

    // Kernel constructor.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckDepthwiseStrides(strides, padding, attrs.explicit_paddings_, format));
    // TF refuses every dilation != 1 here (Unimplemented). gradtune computes
    // real dilations (docs/tf-ops.md section 15.1), so only lists that are not
    // valid dilations keep TF's refusal: all ones (of any length, as TF accepts
    // them) mean no dilation; otherwise 4 values with N = C = 1 and H, W >= 1.
    const std::vector<int> &dilations = attrs.dilations_;
    int64_t dilation_rows = 1, dilation_cols = 1;
    const bool unit_dilations = std::all_of(dilations.begin(), dilations.end(), [](int d) { return d == 1; });
    if (!unit_dilations) {
        const bool valid = dilations.size() == 4 && dilations[n_dim] == 1 && dilations[c_dim] == 1 &&
                           dilations[h_dim] >= 1 && dilations[w_dim] >= 1;
        if (!valid)
            return Unimplemented("Current kernel implementation does not support dilations, received " +
                                 EigenRowString(dilations));
        dilation_rows = dilations[h_dim];
        dilation_cols = dilations[w_dim];
    }

    // Compute.
    if (input.dims() != 4)
        return InvalidArgument("input must be 4-dimensional" + ShapeString(input.shape));  // sic: no separator
    if (filter.dims() != 4) return InvalidArgument("filter must be 4-dimensional: " + ShapeString(filter.shape));
    const int64_t in_depth = input.shape[c_dim];
    if (in_depth != filter.shape[2])
        return InvalidArgument("input and filter must have the same depth: " + std::to_string(in_depth) + " vs " +
                               std::to_string(filter.shape[2]));
    const int64_t multiplier = filter.shape[3];
    const int64_t out_depth = tf::MultiplySaturated(in_depth, multiplier);
    if (!tf::FitsInt32(input.shape[h_dim])) return InvalidArgument("Input rows too large");
    if (!tf::FitsInt32(input.shape[w_dim])) return InvalidArgument("Input cols too large");

    const int64_t stride = strides[h_dim];
    tf::Window2D window;
    // TF passes dilation 1 (it refused any other); gradtune the real one.
    GRADTUNE_RETURN_IF_ERROR(tf::GetWindowedOutputSize2D(input.shape, filter.shape[0], filter.shape[1], dilation_rows,
                                                         dilation_cols, stride, stride, padding,
                                                         attrs.explicit_paddings_, format, &window));

    const int64_t batch = input.shape[n_dim];
    p->stride = stride;
    p->dilation_rows = dilation_rows;
    p->dilation_cols = dilation_cols;
    p->pad_top = window.pad_top;
    p->pad_left = window.pad_left;
    p->zeros = input.num_elements() == 0 || filter.num_elements() == 0;
    p->info.op = kOp;
    p->info.dtype = DataTypeName(input.dtype);
    p->info.output_dtypes = {input.dtype};
    p->info.output_shapes = {format == DataFormat::kNHWC
                                 ? std::vector<int64_t>{batch, window.rows, window.cols, out_depth}
                                 : std::vector<int64_t>{batch, out_depth, window.rows, window.cols}};
    p->info.data_format = tf::DataFormatName(format);
    const DepthwiseStructure structure{.depth_multiplier = static_cast<int>(multiplier),
                                       .dilation_height = static_cast<int>(dilation_rows),
                                       .dilation_width = static_cast<int>(dilation_cols),
                                       .filter_height = static_cast<int>(filter.shape[0]),
                                       .filter_width = static_cast<int>(filter.shape[1]),
                                       .stride = static_cast<int>(stride)};
    p->info.structure = structure.values();
    p->info.padding = tf::PaddingName(padding);
    p->info.explicit_paddings = tf::SpatialPaddings(padding, attrs.explicit_paddings_, format);
    p->info.shape = {{"N", batch}, {"H", input.shape[h_dim]}, {"W", input.shape[w_dim]}, {"C", in_depth}};
    return Status::OK();
}

Status Definition::Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &options) {
    const ConstTensorRef &input = args.input, &filter = args.filter;
    // TF's GPU kernel indexes with int32 (checked before the empty return).
    if (options.device == Device::cuda && !tf::FitsInt32(output_elements))
        return InvalidArgument("Output elements too large for GPU kernel");
    if (output_elements == 0 || p.zeros) return Status::OK();
    return internal::check_int32_elements({output_elements, input.num_elements(), filter.num_elements()});
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    const ConstTensorRef &input = args.input, &filter = args.filter;
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, args, output.num_elements(), options));
    // An empty input (only possible with explicit padding) or a filter
    // with no taps: every output element is a sum of nothing.
    if (internal::output_without_kernel(output, p.zeros)) return Status::OK();
    if (p.format == DataFormat::kNCHW && internal::detour_to_nhwc(p.info, options))
        return internal::run_on_nhwc(p, /*operand_is_activation=*/false, filter, input, output, options.parallel,
                                     [&](const Prepared &q, const ConstTensorRef &f, const ConstTensorRef &x,
                                         const TensorRef &out) { return Execute(q, {x, f, args.strides, args.padding, args.attrs}, out, options); });
    internal::KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));

    // Halide dimension orders (innermost first): activations (c, w, h, n);
    // the filter [FH, FW, C, M] as (m, c, fw, fh).
    const std::array<int, 4> activations = internal::activation_order(p.format);
    HalideBuffer input_buffer(input.dtype, input.shape, input.data, activations);
    HalideBuffer filter_buffer(filter.dtype, filter.shape, filter.data, {3, 2, 1, 0});
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, activations);

    int result = call.kernel<KernelSignature>()(
        call.user_context(), static_cast<int32_t>(p.stride), static_cast<int32_t>(p.dilation_rows),
        static_cast<int32_t>(p.dilation_cols), static_cast<int32_t>(p.pad_top), static_cast<int32_t>(p.pad_left),
        input_buffer.get(), filter_buffer.get(), output_buffer.get());
    return call.finish(result, output_buffer.get(), {input_buffer.get(), filter_buffer.get()});
}

OpSpec Definition::Spec() {
    return internal::ConvolutionSpec(kOp, {"input", "filter"}, {"T", "T"}, /*use_cudnn_on_gpu=*/false);
}

}  // namespace

Status DepthwiseConv2dNative::Run(const Call &call, const TensorRef &output) {
    return internal::RunConvolution<Definition>(call, output);
}

Status DepthwiseConv2dNative::Run(const Call &call, Tensor *output) {
    return internal::RunConvolution<Definition>(call, output);
}

namespace internal {

OpEntry depthwise_conv2d_native_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
