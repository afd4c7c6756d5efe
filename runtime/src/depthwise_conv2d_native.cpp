// DepthwiseConv2dNative: TF validation (docs/tf-ops.md section 2, in TF's
// order, with TF's texts), geometry, dispatch and the kernel call.
#include "gradtune/depthwise_conv2d_native.h"

#include <algorithm>

#include "DepthwiseConv2dNative_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "dispatch.h"
#include "forward_convolution.h"
#include "op_entry.h"
#include "structures.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using tf::DataFormat;

constexpr const char *kOp = "DepthwiseConv2dNative";

// The Halide signature of every variant (generators/depthwise_conv2d_native_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&DepthwiseConv2dNative_cpu_float32_NHWC_generic);

struct Prepared : internal::ForwardConvolutionPrepared {
    int64_t stride = 1;
    bool zeros = false;  // nothing reaches the output: the input or the filter is empty
};

using Args = internal::ForwardConvolutionArgs<DepthwiseConv2dNative::Attrs>;

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
    // Op definition: T (from the input), the filter's type, attr values.
    internal::ForwardConvolutionLayout layout;
    GRADTUNE_RETURN_IF_ERROR(internal::CheckForwardConvolution(kOp, args, kTypes, p, &layout));
    const auto [padding, format, n_dim, h_dim, w_dim, c_dim] = layout;

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
    p->zeros = input.num_elements() == 0 || filter.num_elements() == 0;
    internal::DescribeForwardConvolution(kOp, input.dtype, format, batch, window, out_depth, p);
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
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, args, output.num_elements(), options));
    // An empty input (only possible with explicit padding) or a filter
    // with no taps: every output element is a sum of nothing.
    if (internal::output_without_kernel(output, p.zeros)) return Status::OK();
    return internal::CallForwardConvolution<Definition, KernelSignature>(
        p, args, output, options, p.stride, p.dilation_rows, p.dilation_cols, p.pad_top, p.pad_left);
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
