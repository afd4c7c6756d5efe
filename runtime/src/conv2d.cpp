// Conv2D: TF validation (docs/tf-ops.md section 5: conv_ops.cc
// InitConv2DParameters, ComputeConv2DDimension, Conv2DOp::Compute and the CPU
// launcher, in TF's order, with TF's texts), geometry, dispatch and the
// kernel call.
#include "gradtune/conv2d.h"

#include "Conv2D_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "dispatch.h"
#include "forward_convolution.h"
#include "op_entry.h"
#include "structures.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using tf::DataFormat;

constexpr const char *kOp = "Conv2D";

// The Halide signature of every variant (generators/conv2d_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&Conv2D_cpu_float32_NHWC_generic);

struct Prepared : internal::ForwardConvolutionPrepared {
    int64_t stride_rows = 1, stride_cols = 1;
    bool empty_input = false;
    // The CPU launcher's checks, which TF reaches only for a non-empty output
    // and input (zero-element filter, groups that do not divide C_out).
    Status launch_status;
};

using Args = internal::ForwardConvolutionArgs<Conv2D::Attrs>;

// The op's part of the shared front end (op_entry.h).
struct Definition : internal::ConvolutionDefinition<Args, 2> {
    using Prepared = gradtune::Prepared;
    static constexpr const char *kShapeInput = "";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble,
                                          DataType::kInt32};
    static OpSpec Spec() {
        return internal::ConvolutionSpec(kOp, {"input", "filter"}, {"T", "T"}, /*use_cudnn_on_gpu=*/true);
    }
    static Status Prepare(const Args &args, Prepared *p);
    // The CPU launcher's checks, for a call that reaches a kernel.
    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
        if (output_elements == 0 || p.empty_input) return Status::OK();
        GRADTUNE_RETURN_IF_ERROR(p.launch_status);
        return internal::check_int32_elements(
            {output_elements, args.input.num_elements(), args.filter.num_elements()});
    }
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options);
};

Status Definition::Prepare(const Args &args, Prepared *p) {
    const auto &[input, filter, strides, padding_text, attrs] = args;
    // Op definition: T (from the input), the filter's type, attr values.
    internal::ForwardConvolutionLayout layout;
    GRADTUNE_RETURN_IF_ERROR(internal::CheckForwardConvolution(kOp, args, kTypes, p, &layout));
    const auto [padding, format, n_dim, h_dim, w_dim, c_dim] = layout;

    // Kernel constructor: InitConv2DParameters (dilations are checked for
    // length before strides, as TF does).
    const std::vector<int> &dilations = attrs.dilations_;
    if (dilations.size() != 4) return InvalidArgument("Sliding window dilations field must specify 4 dimensions");
    if (strides.size() != 4) return InvalidArgument("Sliding window strides field must specify 4 dimensions");
    if (strides[n_dim] != 1 || strides[c_dim] != 1)
        return Unimplemented("Current implementation does not yet support strides in the batch and depth dimensions.");
    if (strides[h_dim] <= 0 || strides[w_dim] <= 0)
        return InvalidArgument("Row and column strides should be larger than 0.");
    if (dilations[n_dim] != 1 || dilations[c_dim] != 1)
        return Unimplemented(
            "Current implementation does not yet support dilations in the batch and depth dimensions.");
    if (dilations[h_dim] <= 0 || dilations[w_dim] <= 0)
        return InvalidArgument("Dilated rates should be larger than 0.");
    GRADTUNE_RETURN_IF_ERROR(tf::CheckValidPadding(padding, attrs.explicit_paddings_, format));

    // Compute: ComputeConv2DDimension.
    if (input.dims() != 4)
        return InvalidArgument("convolution input must be 4-dimensional: " + ShapeString(input.shape));
    if (filter.dims() != 4)
        return InvalidArgument("convolution filter must be 4-dimensional: " + ShapeString(filter.shape));
    for (int i = 0; i < 3; i++)
        if (!tf::FitsInt32(filter.shape[i])) return InvalidArgument("filter too large");
    const int64_t in_depth = input.shape[c_dim];
    const int64_t patch_depth = filter.shape[2];
    if (!tf::FitsInt32(in_depth)) return InvalidArgument("Input depth too large");
    if (!tf::FitsInt32(patch_depth)) return InvalidArgument("Patch depth too large");
    if (patch_depth <= 0)
        return InvalidArgument("filter depth must be stricly positive, got " +  // sic: TF's typo
                               std::to_string(patch_depth));
    if (in_depth % patch_depth != 0)
        return InvalidArgument("input depth must be evenly divisible by filter depth: " + std::to_string(in_depth) +
                               " vs " + std::to_string(patch_depth));
    const int64_t out_depth = filter.shape[3];
    if (!tf::FitsInt32(input.shape[h_dim])) return InvalidArgument("Input rows too large");
    if (!tf::FitsInt32(input.shape[w_dim])) return InvalidArgument("Input cols too large");
    const int64_t batch = input.shape[n_dim];
    if (!tf::FitsInt32(batch)) return InvalidArgument("batch is too large");

    tf::Window2D window;
    GRADTUNE_RETURN_IF_ERROR(tf::GetWindowedOutputSize2D(
        input.shape, filter.shape[0], filter.shape[1], dilations[h_dim], dilations[w_dim], strides[h_dim],
        strides[w_dim], padding, attrs.explicit_paddings_, format, &window));

    // The CPU launcher (LaunchConv2DOp<CPUDevice>). Its NHWC-only refusal is
    // gone (docs/tf-ops.md section 15.1); the other checks stand.
    // num_groups <= 0 cannot happen there (the input is not empty), so only
    // these two remain.
    const int64_t groups = in_depth / patch_depth;
    if (filter.num_elements() <= 0) {
        p->launch_status = InvalidArgument("filter must not have zero elements (i.e. all dimensions must be non-zero)");
    } else if (groups > 0 && (out_depth % groups != 0 || out_depth < groups)) {
        p->launch_status = InvalidArgument("output depth must be evenly divisible by number of groups: " +
                                           std::to_string(out_depth) + " vs " + std::to_string(groups));
    }

    p->stride_rows = strides[h_dim];
    p->stride_cols = strides[w_dim];
    p->dilation_rows = dilations[h_dim];
    p->dilation_cols = dilations[w_dim];
    p->empty_input = input.num_elements() == 0;
    internal::DescribeForwardConvolution(kOp, input.dtype, format, batch, window, out_depth, p);
    const Conv2DStructure structure{.dilation_height = dilations[h_dim],
                                    .dilation_width = dilations[w_dim],
                                    .filter_height = static_cast<int>(filter.shape[0]),
                                    .filter_width = static_cast<int>(filter.shape[1]),
                                    .stride_height = strides[h_dim],
                                    .stride_width = strides[w_dim]};
    p->info.structure = structure.values();
    p->info.padding = tf::PaddingName(padding);
    p->info.explicit_paddings = tf::SpatialPaddings(padding, attrs.explicit_paddings_, format);
    p->info.shape = {{"N", batch},   {"H", input.shape[h_dim]}, {"W", input.shape[w_dim]},
                     {"C", in_depth}, {"O", out_depth},          {"G", groups}};
    return Status::OK();
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    // Conv2DOp::Compute: nothing to compute; then an empty input, where the
    // output can only come from padding, is zero.
    if (internal::output_without_kernel(output, p.empty_input)) return Status::OK();
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, args, output.num_elements(), options));
    return internal::CallForwardConvolution<Definition, KernelSignature>(
        p, args, output, options, p.stride_rows, p.stride_cols, p.dilation_rows, p.dilation_cols, p.pad_top, p.pad_left);
}

}  // namespace

Status Conv2D::Run(const Call &call, const TensorRef &output) {
    return internal::RunConvolution<Definition>(call, output);
}

Status Conv2D::Run(const Call &call, Tensor *output) {
    return internal::RunConvolution<Definition>(call, output);
}

namespace internal {

OpEntry conv2d_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
