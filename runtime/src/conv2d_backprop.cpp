#include "conv2d_backprop.h"

#include <algorithm>
#include <map>
#include <string>

#include "structures.h"

namespace gradtune::internal {

bool FitsKernelIndices(const tf::ConvBackpropSpatialDimension &d) {
    const int64_t effective_filter = tf::EffectiveFilterSize(d.filter_size, d.dilation);
    const int64_t reach = d.input_size + d.forward_pad_before + d.forward_pad_after + effective_filter + d.stride;
    return reach < INT32_MAX && d.output_size * d.stride < INT32_MAX;
}

void DescribeConv2DBackprop(const char *op, DataType dtype, const std::vector<int64_t> &output_shape,
                            const std::vector<int64_t> &filter_shape, int64_t groups,
                            const tf::ConvBackpropDimensions &dims, tf::Padding padding,
                            const std::vector<int> &explicit_paddings, const std::vector<int> &strides,
                            const std::vector<int> &dilations, Conv2DBackpropPrepared *p) {
    const int h_dim = tf::DimIndex(p->format, 'H'), w_dim = tf::DimIndex(p->format, 'W');
    p->stride_rows = strides[h_dim];
    p->stride_cols = strides[w_dim];
    p->dilation_rows = dilations[h_dim];
    p->dilation_cols = dilations[w_dim];
    p->groups = groups;
    p->pad_top = dims.spatial_dims[0].forward_pad_before;
    p->pad_left = dims.spatial_dims[1].forward_pad_before;
    p->info.op = op;
    p->info.dtype = DataTypeName(dtype);
    p->info.output_dtypes = {dtype};
    p->info.output_shapes = {output_shape};
    p->info.data_format = tf::DataFormatName(p->format);
    const Conv2DBackpropStructure structure{.dilation_height = static_cast<int>(p->dilation_rows),
                                            .dilation_width = static_cast<int>(p->dilation_cols),
                                            .filter_height = static_cast<int>(filter_shape[0]),
                                            .filter_width = static_cast<int>(filter_shape[1]),
                                            .groups = static_cast<int>(groups),
                                            .stride_height = static_cast<int>(p->stride_rows),
                                            .stride_width = static_cast<int>(p->stride_cols)};
    p->info.structure = structure.values();
    p->info.padding = tf::PaddingName(padding);
    p->info.explicit_paddings = tf::SpatialPaddings(padding, explicit_paddings, p->format);
    p->info.shape = {{"N", dims.batch_size},
                     {"H", dims.spatial_dims[0].input_size},
                     {"W", dims.spatial_dims[1].input_size},
                     {"C", dims.in_depth},
                     {"O", dims.out_depth}};
    PointwiseView(p);
}

void PointwiseView(Conv2DBackpropPrepared *p) {
    CallInfo &info = p->info;
    const std::map<std::string, int> &s = info.structure;
    if (s.at("filter_height") != 1 || s.at("filter_width") != 1 || p->stride_rows != 1 || p->stride_cols != 1 ||
        p->pad_top != 0 || p->pad_left != 0 || p->zeros)
        return;
    for (int64_t pad : info.explicit_paddings)
        if (pad != 0) return;
    const bool nhwc = p->format == tf::DataFormat::kNHWC;
    const int64_t images = info.shape.at("N"), rows = info.shape.at("H"), cols = info.shape.at("W");
    const int64_t positions = (nhwc ? images : 1) * rows * cols;
    if (positions < 4) return;
    int64_t view_cols = 1;
    for (int64_t c = std::min<int64_t>(64, positions / 2); c > 1; c--) {
        if (positions % c == 0) {
            view_cols = c;
            break;
        }
    }
    if (view_cols <= cols) return;  // no longer rows than the call's own
    p->pointwise_images = nhwc ? 1 : images;
    p->pointwise_rows = positions / view_cols;
    p->pointwise_cols = view_cols;
    info.shape["N"] = p->pointwise_images;
    info.shape["H"] = p->pointwise_rows;
    info.shape["W"] = p->pointwise_cols;
    info.padding = "VALID";
    info.explicit_paddings.clear();
    info.structure["dilation_height"] = info.structure["dilation_width"] = 1;
    p->dilation_rows = p->dilation_cols = 1;
}

}  // namespace gradtune::internal
