#include "conv_backprop_shape.h"

#include <sstream>

namespace gradtune::tf {

namespace {

// ConvBackpropExtractAndVerifyDimension: one spatial dimension. `spatial_dim`
// is the tensor dimension (1/2 in NHWC, 2/3 in NCHW), `filter_dim` the
// filter's (0 rows, 1 columns).
Status ExtractAndVerifyDimension(std::string_view label, const std::vector<int64_t> &input_shape,
                                 const std::vector<int64_t> &filter_shape,
                                 const std::vector<int64_t> &output_shape, const std::vector<int> &dilations,
                                 const std::vector<int> &strides, Padding padding, int64_t padding_before,
                                 int64_t padding_after, int spatial_dim, int filter_dim,
                                 ConvBackpropSpatialDimension *dim) {
    dim->input_size = input_shape[spatial_dim];
    dim->filter_size = filter_shape[filter_dim];
    dim->output_size = output_shape[spatial_dim];
    dim->stride = strides[spatial_dim];
    dim->dilation = dilations[spatial_dim];
    int64_t out_size = 0;
    GRADTUNE_RETURN_IF_ERROR(GetWindowedOutputSizeVerbose(dim->input_size, dim->filter_size, dim->dilation,
                                                          dim->stride, padding, &out_size, &padding_before,
                                                          &padding_after));
    if (dim->output_size != out_size) {
        std::ostringstream out;
        out << label << ": Size of out_backprop doesn't match computed: actual = " << dim->output_size
            << ", computed = " << out_size << " spatial_dim: " << spatial_dim << " input: " << dim->input_size
            << " filter: " << dim->filter_size << " output: " << dim->output_size << " stride: " << dim->stride
            << " dilation: " << dim->dilation;
        return InvalidArgument(out.str());
    }
    const int64_t effective_filter_size = EffectiveFilterSize(dim->filter_size, dim->dilation);
    dim->expanded_output_size = (dim->output_size - 1) * dim->stride + 1;
    const int64_t padded_out_size = dim->input_size + effective_filter_size - 1;
    dim->pad_before = effective_filter_size - 1 - padding_before;
    dim->pad_after = padded_out_size - dim->expanded_output_size - dim->pad_before;
    dim->forward_pad_before = padding_before;
    dim->forward_pad_after = padding_after;
    return Status::OK();
}

}  // namespace

Status ConvBackpropComputeDimensionsV2(std::string_view label, const std::vector<int64_t> &input_shape,
                                       const std::vector<int64_t> &filter_shape,
                                       const std::vector<int64_t> &out_backprop_shape,
                                       const std::vector<int> &dilations, const std::vector<int> &strides,
                                       Padding padding, const std::vector<int> &explicit_paddings,
                                       DataFormat data_format, ConvBackpropDimensions *dims) {
    const std::string l(label);
    if (input_shape.size() != 4) return InvalidArgument(l + ": input must be 4-dimensional");
    if (filter_shape.size() != 4) return InvalidArgument(l + ": filter must be 4-dimensional");
    if (out_backprop_shape.size() != 4) return InvalidArgument(l + ": out_backprop must be 4-dimensional");
    const int batch_dim = DimIndex(data_format, 'N');
    dims->batch_size = input_shape[batch_dim];
    if (dims->batch_size != out_backprop_shape[batch_dim])
        return InvalidArgument(l + ": input and out_backprop must have the same batch size. Input batch: " +
                               std::to_string(dims->batch_size) +
                               ", outbackprop batch: " + std::to_string(out_backprop_shape[batch_dim]) +
                               ", batch_dim: " + std::to_string(batch_dim));
    const int feature_dim = DimIndex(data_format, 'C');
    dims->in_depth = input_shape[feature_dim];
    // CVE-2021-29524: a zero filter depth used to reach the modulo below.
    // ("greated" is TF's typo.)
    if (filter_shape[2] <= 0) return InvalidArgument(l + ": filter depth must be strictly greated than zero");
    if (dims->in_depth % filter_shape[2] != 0)
        return InvalidArgument(l + ": input depth must be evenly divisible by filter depth");
    dims->out_depth = filter_shape[3];
    if (dims->out_depth != out_backprop_shape[feature_dim])
        return InvalidArgument(l + ": filter and out_backprop must have the same out_depth");
    const int spatial[2] = {DimIndex(data_format, 'H'), DimIndex(data_format, 'W')};
    for (int i = 0; i < 2; i++) {
        const int image_dim = spatial[i];
        int64_t padding_before = -1, padding_after = -1;
        if (padding == Padding::kExplicit) {
            padding_before = explicit_paddings[2 * image_dim];
            padding_after = explicit_paddings[2 * image_dim + 1];
        }
        GRADTUNE_RETURN_IF_ERROR(ExtractAndVerifyDimension(label, input_shape, filter_shape, out_backprop_shape,
                                                           dilations, strides, padding, padding_before,
                                                           padding_after, image_dim, i, &dims->spatial_dims[i]));
    }
    return Status::OK();
}

Status MakeShape(const ConstTensorRef &sizes, std::vector<int64_t> *shape) {
    const int64_t n = sizes.num_elements();
    if (n > 254) return InvalidArgument("Too many dimensions");
    shape->clear();
    int64_t num_elements = 1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t dim = ShapeElement(sizes, i);
        if (dim < 0) return InvalidArgument("Dimension " + std::to_string(dim) + " must be >= 0");
        if (__builtin_mul_overflow(num_elements, dim, &num_elements)) {
            // TF prints every requested size, as TensorShape::DebugString does.
            std::ostringstream out;
            out << "Shape [";
            for (int64_t j = 0; j < n; j++) out << (j ? "," : "") << ShapeElement(sizes, j);
            out << "] would have more than 2**63 - 1 elements";
            return InvalidArgument(out.str());
        }
        shape->push_back(dim);
    }
    return Status::OK();
}

Status Conv2DBackpropComputeInputShape(const ConstTensorRef &input_sizes, const std::vector<int64_t> &filter_shape,
                                       const std::vector<int64_t> &out_backprop_shape, DataFormat data_format,
                                       std::vector<int64_t> *input_shape) {
    if (input_sizes.dims() != 1)
        return InvalidArgument("Conv2DBackpropInput: input_sizes input must be 1-dim, not " +
                               std::to_string(input_sizes.dims()));
    const int64_t count = input_sizes.shape[0];
    if (count == 4) return MakeShape(input_sizes, input_shape);
    if (count == 2) {
        const int64_t batch_size = out_backprop_shape[DimIndex(data_format, 'N')];
        const int64_t output_height = ShapeElement(input_sizes, 0);
        const int64_t output_width = ShapeElement(input_sizes, 1);
        // TF reads filter dim 2 unconditionally; a filter of rank < 3 is
        // rejected right after by ConvBackpropComputeDimensionsV2.
        const int64_t output_depth = filter_shape.size() > 2 ? filter_shape[2] : 0;
        if (output_height < 0 || output_width < 0)
            return InvalidArgument("Conv2DBackpropInput: elements of input_sizes must be >= 0, not " +
                                   std::to_string(output_height) + "x" + std::to_string(output_width));
        // ShapeFromFormatWithStatus builds the shape with AddDimWithStatus.
        int64_t dims[4];
        dims[DimIndex(data_format, 'N')] = batch_size;
        dims[DimIndex(data_format, 'H')] = output_height;
        dims[DimIndex(data_format, 'W')] = output_width;
        dims[DimIndex(data_format, 'C')] = output_depth;
        ShapeBuilder builder;
        for (int64_t d : dims) GRADTUNE_RETURN_IF_ERROR(builder.AddDim(d));
        *input_shape = builder.dims();
        return Status::OK();
    }
    return InvalidArgument("Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: " +
                           std::to_string(count));
}

Status CheckConv2DBackpropStrides(const std::vector<int> &strides, DataFormat format, StatusCode batch_depth_kind) {
    if (strides.size() != 4) return InvalidArgument("Sliding window strides field must specify 4 dimensions");
    if (strides[DimIndex(format, 'N')] != 1 || strides[DimIndex(format, 'C')] != 1)
        return Status(batch_depth_kind,
                      "Current implementation does not yet support strides in the batch and depth dimensions.");
    if (strides[DimIndex(format, 'H')] <= 0 || strides[DimIndex(format, 'W')] <= 0)
        return InvalidArgument("Row and column strides should be larger than 0.");
    return Status::OK();
}

Status CheckConv2DBackpropDilations(const std::vector<int> &dilations, DataFormat format,
                                    StatusCode batch_depth_kind) {
    if (dilations.size() != 4) return InvalidArgument("Sliding window dilations field must specify 4 dimensions");
    if (dilations[DimIndex(format, 'N')] != 1 || dilations[DimIndex(format, 'C')] != 1)
        return Status(batch_depth_kind,
                      "Current implementation does not yet support dilations in the batch and depth dimensions.");
    // TF's CPU kernels refuse every dilation but 1 with this text (also 0 and
    // negative values, for which it reads oddly). gradtune supports dilations
    // (docs/tf-ops.md section 15.1); the values that stay invalid, below 1,
    // keep the CPU kernels' kind and text. (TF's GPU kernels say "Dilated rates
    // should be larger than 0." instead.)
    if (dilations[DimIndex(format, 'H')] < 1 || dilations[DimIndex(format, 'W')] < 1)
        return InvalidArgument("Current CPU implementations do not yet support dilation rates larger than 1.");
    return Status::OK();
}

int64_t LegalConv2DGroups(int64_t in_depth, int64_t filter_in_depth, int64_t out_depth) {
    if (filter_in_depth <= 0) return 0;
    const int64_t groups = in_depth / filter_in_depth;
    if (groups < 1 || out_depth % groups != 0) return 0;
    return groups;
}

}  // namespace gradtune::tf
