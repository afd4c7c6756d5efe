#include "depthwise_backprop.h"

#include <string>

#include "structures.h"

namespace gradtune::internal {

using tf::DataFormat;
using tf::Padding;

Status PrepareDepthwiseBackprop(const DepthwiseBackpropCall &c, DepthwiseBackpropPrepared *p) {
    Padding padding;
    GRADTUNE_RETURN_IF_ERROR(tf::ParsePadding(c.padding, &padding));
    GRADTUNE_RETURN_IF_ERROR(tf::ParseDataFormat(c.data_format, &p->format));
    const DataFormat format = p->format;
    const int n_dim = tf::DimIndex(format, 'N'), h_dim = tf::DimIndex(format, 'H');
    const int w_dim = tf::DimIndex(format, 'W'), c_dim = tf::DimIndex(format, 'C');

    // Kernel constructor (steps 1-5), then the dilations that gradtune
    // honours (docs/tf-ops.md section 15.1; TF never reads them).
    GRADTUNE_RETURN_IF_ERROR(
        tf::CheckDepthwiseBackpropAttrs(c.strides, padding, c.explicit_paddings, c.dilations, format));
    const std::vector<int> &dilations = c.dilations;

    // Compute (steps 6-14): the sizes operand (TF's text names the dense
    // op), then EXTRACT_AND_VERIFY_DIMENSIONS.
    if (c.sizes.dims() != 1)
        return InvalidArgument(std::string(c.op.sizes_label) + ": " + c.op.sizes_name + " input must be 1-dim, not " +
                               std::to_string(c.sizes.dims()));
    tf::ShapeBuilder sizes;
    for (int64_t i = 0; i < c.sizes.num_elements(); i++) {
        const int64_t size = tf::ShapeElement(c.sizes, i);
        if (size < 0)
            return InvalidArgument("Dimension " + std::to_string(i) + " of " + c.op.sizes_name + " must be >= 0");
        GRADTUNE_RETURN_IF_ERROR(sizes.AddDim(size));
    }
    const std::vector<int64_t> &in = c.op.sizes_are_input ? sizes.dims() : c.tensor.shape;
    const std::vector<int64_t> &filter = c.op.sizes_are_input ? c.tensor.shape : sizes.dims();
    const std::vector<int64_t> &out = c.out_backprop.shape;
    const std::string label = c.op.label;
    if (in.size() != 4) return InvalidArgument(label + ": input must be 4-dimensional");
    if (filter.size() != 4) return InvalidArgument(label + ": filter must be 4-dimensional");
    if (out.size() != 4) return InvalidArgument(label + ": out_backprop must be 4-dimensional");
    if (in[n_dim] != out[n_dim])
        return InvalidArgument(label + ": input and out_backprop must have the same batch size");
    if (!tf::FitsInt32(in[h_dim])) return InvalidArgument("Input rows too large");
    if (!tf::FitsInt32(in[w_dim])) return InvalidArgument("Input cols too large");
    if (!tf::FitsInt32(out[h_dim])) return InvalidArgument("Output rows too large");
    if (!tf::FitsInt32(out[w_dim])) return InvalidArgument("Output cols too large");
    const int64_t in_depth = in[c_dim];
    if (in_depth != filter[2]) return InvalidArgument(label + ": input and filter must have the same in_depth");
    const int64_t multiplier = filter[3];
    if (!tf::FitsInt32(out[c_dim])) return InvalidArgument("Output depth too large");
    if (tf::MultiplySaturated(multiplier, in_depth) != out[c_dim])
        return InvalidArgument(label + ": depth_multiplier * in_depth not equal to out_depth");

    const int64_t stride = c.strides[h_dim];
    tf::Window2D window;
    // TF passes dilation 1 here (it ignores dilations); gradtune computes the
    // dilated gradient, so the effective filter size uses the real dilation.
    GRADTUNE_RETURN_IF_ERROR(tf::GetWindowedOutputSize2D(in, filter[0], filter[1], dilations[h_dim], dilations[w_dim],
                                                         stride, stride, padding, c.explicit_paddings, format,
                                                         &window));
    if (out[h_dim] != window.rows)
        return InvalidArgument(label + ": Number of rows of out_backprop doesn't match computed: actual = " +
                               std::to_string(out[h_dim]) + ", computed = " + std::to_string(window.rows));
    if (out[w_dim] != window.cols)
        return InvalidArgument(label + ": Number of cols of out_backprop doesn't match computed: actual = " +
                               std::to_string(out[w_dim]) + ", computed = " + std::to_string(window.cols));

    p->input_shape = in;
    p->filter_shape = filter;
    p->stride = stride;
    p->dilation_rows = dilations[h_dim];
    p->dilation_cols = dilations[w_dim];
    p->pad_top = window.pad_top;
    p->pad_left = window.pad_left;
    // An empty out_backprop (TF: uninitialised output, docs/tf-ops.md
    // section 15.2), or an empty tensor operand (every product is zero or
    // reads padding), gives zeros.
    p->zeros = c.out_backprop.num_elements() == 0 || c.tensor.num_elements() == 0;
    p->info.op = c.op.op;
    p->info.dtype = DataTypeName(c.tensor.dtype);
    p->info.output_dtypes = {c.tensor.dtype};
    p->info.output_shapes = {c.op.sizes_are_input ? p->input_shape : p->filter_shape};
    p->info.data_format = tf::DataFormatName(format);
    const DepthwiseStructure structure{.depth_multiplier = static_cast<int>(multiplier),
                                       .dilation_height = dilations[h_dim],
                                       .dilation_width = dilations[w_dim],
                                       .filter_height = static_cast<int>(filter[0]),
                                       .filter_width = static_cast<int>(filter[1]),
                                       .stride = static_cast<int>(stride)};
    p->info.structure = structure.values();
    p->info.padding = tf::PaddingName(padding);
    p->info.explicit_paddings = tf::SpatialPaddings(padding, c.explicit_paddings, format);
    p->info.shape = {{"N", in[n_dim]}, {"H", in[h_dim]}, {"W", in[w_dim]}, {"C", in_depth}};
    return Status::OK();
}

}  // namespace gradtune::internal
