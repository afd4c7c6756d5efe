#include "tf_checks.h"

#include <unistd.h>

#include <limits>
#include <sstream>

namespace gradtune::tf {

namespace {

// This machine's memory: an output larger than all of it cannot be held (TF's
// allocator would fail it, or the kernel would be killed touching it).
uint64_t physical_memory_bytes() {
    static const uint64_t bytes = [] {
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                                     : std::numeric_limits<uint64_t>::max();
    }();
    return bytes;
}

// TF's text for an allocation its CPU allocator refuses.
Status Oom(DataType dtype, const std::vector<int64_t> &shape) {
    return ResourceExhausted("OOM when allocating tensor with shape" + ShapeString(shape) + " and type " +
                             DataTypeString(dtype) +
                             " on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu");
}

}  // namespace

Status CheckOutputFits(DataType dtype, const std::vector<int64_t> &shape) {
    uint64_t bytes = static_cast<uint64_t>(DataTypeSize(dtype));
    for (int64_t dim : shape) {
        if (dim < 0) return InvalidArgument("Dimension " + std::to_string(dim) + " must be >= 0");
        if (dim != 0 && bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / static_cast<uint64_t>(dim))
            return Oom(dtype, shape);
        bytes *= static_cast<uint64_t>(dim);
    }
    if (bytes > physical_memory_bytes()) return Oom(dtype, shape);
    return Status::OK();
}

Status AllocateOutput(DataType dtype, const std::vector<int64_t> &shape, Tensor *out) {
    GRADTUNE_RETURN_IF_ERROR(CheckOutputFits(dtype, shape));
    try {
        *out = Tensor(dtype, shape);
    } catch (const std::exception &) {  // std::bad_alloc, std::length_error
        return Oom(dtype, shape);
    }
    return Status::OK();
}

Status ParsePadding(std::string_view text, Padding *padding) {
    if (text == "SAME") *padding = Padding::kSame;
    else if (text == "VALID") *padding = Padding::kValid;
    else if (text == "EXPLICIT") *padding = Padding::kExplicit;
    else
        return InvalidArgument("Value for attr 'padding' of \"" + std::string(text) +
                               "\" is not in the list of allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"");
    return Status::OK();
}

Status ParseDataFormat(std::string_view text, DataFormat *format) {
    if (text == "NHWC") *format = DataFormat::kNHWC;
    else if (text == "NCHW") *format = DataFormat::kNCHW;
    else
        return InvalidArgument("Value for attr 'data_format' of \"" + std::string(text) +
                               "\" is not in the list of allowed values: \"NHWC\", \"NCHW\"");
    return Status::OK();
}

std::vector<int64_t> SpatialPaddings(Padding padding, const std::vector<int> &explicit_paddings, DataFormat format) {
    if (padding != Padding::kExplicit || explicit_paddings.size() != 8) return {};
    const int h = DimIndex(format, 'H'), w = DimIndex(format, 'W');
    return {explicit_paddings[2 * h], explicit_paddings[2 * h + 1], explicit_paddings[2 * w],
            explicit_paddings[2 * w + 1]};
}

const char *PaddingName(Padding padding) {
    switch (padding) {
    case Padding::kSame: return "SAME";
    case Padding::kValid: return "VALID";
    case Padding::kExplicit: return "EXPLICIT";
    }
    return "?";
}

const char *DataFormatName(DataFormat format) { return format == DataFormat::kNHWC ? "NHWC" : "NCHW"; }

int DimIndex(DataFormat format, char dim) {
    const char *order = format == DataFormat::kNHWC ? "NHWC" : "NCHW";
    for (int i = 0; i < 4; i++)
        if (order[i] == dim) return i;
    return -1;
}

Status CheckAllowedType(DataType dtype, std::span<const DataType> allowed) {
    for (DataType t : allowed)
        if (t == dtype) return Status::OK();
    std::ostringstream out;
    out << "Value for attr 'T' of " << DataTypeString(dtype) << " is not in the list of allowed values: ";
    for (size_t i = 0; i < allowed.size(); i++) out << (i ? ", " : "") << DataTypeString(allowed[i]);
    return InvalidArgument(out.str());
}

Status CheckInputType(std::string_view op, int index, DataType want, DataType got) {
    if (want == got) return Status::OK();
    return InvalidArgument("cannot compute " + std::string(op) + " as input #" + std::to_string(index) +
                           "(zero-based) was expected to be a " + DataTypeString(want) + " tensor but is a " +
                           DataTypeString(got) + " tensor");
}

Status CheckValidPadding(Padding padding, const std::vector<int> &explicit_paddings, DataFormat format) {
    if (padding == Padding::kExplicit) {
        if (explicit_paddings.size() != 8)
            return InvalidArgument("explicit_paddings attribute must contain 8 values, but got: " +
                                   std::to_string(explicit_paddings.size()));
        for (int p : explicit_paddings)
            if (p < 0) return InvalidArgument("All elements of explicit_paddings must be nonnegative");
        const int batch = DimIndex(format, 'N'), depth = DimIndex(format, 'C');
        if (explicit_paddings[2 * batch] != 0 || explicit_paddings[2 * batch + 1] != 0 ||
            explicit_paddings[2 * depth] != 0 || explicit_paddings[2 * depth + 1] != 0)
            return InvalidArgument("Nonzero explicit padding in the batch or depth dimensions is not supported");
    } else if (!explicit_paddings.empty()) {
        return InvalidArgument("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
    return Status::OK();
}

Status GetWindowedOutputSizeVerbose(int64_t input_size, int64_t filter_size, int64_t dilation_rate, int64_t stride,
                                    Padding padding, int64_t *output_size, int64_t *pad_before,
                                    int64_t *pad_after) {
    if (stride <= 0) return InvalidArgument("Stride must be > 0, but got " + std::to_string(stride));
    if (dilation_rate < 1)
        return InvalidArgument("Dilation rate must be >= 1, but got " + std::to_string(dilation_rate));
    // C++ integer division truncates toward zero, as TF's does.
    // The sizes are computed in 128 bits and saturated: TF's int64 arithmetic
    // overflows (undefined behaviour) for sizes and attrs near the limits.
    const int64_t effective_filter_size = EffectiveFilterSize(filter_size, dilation_rate);
    auto saturate = [](__int128 v) {
        constexpr __int128 limit = __int128{1} << 62;
        return static_cast<int64_t>(v > limit ? limit : v < -limit ? -limit : v);
    };
    const __int128 input = input_size, filter = effective_filter_size, step = stride;
    switch (padding) {
    case Padding::kValid:
        *output_size = saturate((input - filter + step) / step);
        *pad_before = *pad_after = 0;
        break;
    case Padding::kExplicit:
        *output_size = saturate((input + *pad_before + *pad_after - filter + step) / step);
        break;
    case Padding::kSame: {
        *output_size = saturate((input + step - 1) / step);
        const __int128 needed = std::max<__int128>(0, (__int128{*output_size} - 1) * step + filter - input);
        *pad_before = saturate(needed / 2);
        *pad_after = saturate(needed - needed / 2);
        break;
    }
    }
    if (*output_size < 0)
        return InvalidArgument("Computed output size would be negative: " + std::to_string(*output_size) +
                               " [input_size: " + std::to_string(input_size) +
                               ", effective_filter_size: " + std::to_string(effective_filter_size) +
                               ", stride: " + std::to_string(stride) + "]");
    return Status::OK();
}

Status GetWindowedOutputSize2D(const std::vector<int64_t> &input_shape, int64_t filter_rows, int64_t filter_cols,
                               int64_t dilation_rows, int64_t dilation_cols, int64_t stride_rows,
                               int64_t stride_cols, Padding padding, const std::vector<int> &explicit_paddings,
                               DataFormat format, Window2D *w) {
    const int h_dim = DimIndex(format, 'H'), w_dim = DimIndex(format, 'W');
    if (padding == Padding::kExplicit) {
        w->pad_top = explicit_paddings[2 * h_dim];
        w->pad_bottom = explicit_paddings[2 * h_dim + 1];
        w->pad_left = explicit_paddings[2 * w_dim];
        w->pad_right = explicit_paddings[2 * w_dim + 1];
    }
    GRADTUNE_RETURN_IF_ERROR(GetWindowedOutputSizeVerbose(input_shape[h_dim], filter_rows, dilation_rows, stride_rows,
                                                          padding, &w->rows, &w->pad_top, &w->pad_bottom));
    return GetWindowedOutputSizeVerbose(input_shape[w_dim], filter_cols, dilation_cols, stride_cols, padding,
                                        &w->cols, &w->pad_left, &w->pad_right);
}

Status CheckDepthwiseStrides(const std::vector<int> &strides, Padding padding,
                             const std::vector<int> &explicit_paddings, DataFormat format) {
    const int n_dim = DimIndex(format, 'N'), h_dim = DimIndex(format, 'H');
    const int w_dim = DimIndex(format, 'W'), c_dim = DimIndex(format, 'C');
    if (strides.size() != 4) return InvalidArgument("Sliding window strides field must specify 4 dimensions");
    if (strides[h_dim] != strides[w_dim])
        return InvalidArgument(
            "Current implementation only supports equal length strides in the row and column dimensions.");
    if (strides[n_dim] != 1 || strides[c_dim] != 1)
        return InvalidArgument("Current implementation does not yet support strides in the batch and depth dimensions.");
    return CheckValidPadding(padding, explicit_paddings, format);
}

Status CheckDepthwiseBackpropAttrs(const std::vector<int> &strides, Padding padding,
                                   const std::vector<int> &explicit_paddings, const std::vector<int> &dilations,
                                   DataFormat format) {
    const int n_dim = DimIndex(format, 'N'), c_dim = DimIndex(format, 'C');
    GRADTUNE_RETURN_IF_ERROR(CheckDepthwiseStrides(strides, padding, explicit_paddings, format));
    if (dilations.size() != 4) return InvalidArgument("Sliding window dilations field must specify 4 dimensions");
    if (dilations[n_dim] != 1 || dilations[c_dim] != 1)
        return InvalidArgument(
            "Current implementation does not yet support dilations in the batch and depth dimensions.");
    return Status::OK();
}

Status ShapeBuilder::AddDim(int64_t size) {
    if (dims_.size() >= 254) return InvalidArgument("Too many dimensions in tensor");
    if (size < 0) return InvalidArgument("Expected a non-negative size, got " + std::to_string(size));
    int64_t product;
    if (__builtin_mul_overflow(num_elements_, size, &product))
        return InvalidArgument("Encountered overflow when multiplying " + std::to_string(num_elements_) + " with " +
                               std::to_string(size) + ", result: -1");
    num_elements_ = product;
    dims_.push_back(size);
    return Status::OK();
}

int64_t ShapeElement(const ConstTensorRef &t, int64_t i) {
    return t.dtype == DataType::kInt64 ? t.as<int64_t>()[i] : t.as<int32_t>()[i];
}

Status CheckTensorArgument(std::string_view name, const ConstTensorRef &t) {
    int64_t elements = 1;
    for (int64_t d : t.shape) {
        if (d < 0)
            return InvalidArgument(std::string(name) + " has a negative dimension: " + ShapeString(t.shape));
        if (__builtin_mul_overflow(elements, d, &elements))
            return InvalidArgument(std::string(name) + " has more than 2**63 - 1 elements: " + ShapeString(t.shape));
    }
    if (elements > 0 && t.data == nullptr) return InvalidArgument(std::string(name) + " has no data");
    return Status::OK();
}

Status CheckCallerOutput(const TensorRef &output, DataType dtype, const std::vector<int64_t> &shape,
                         std::string_view shape_source) {
    if (output.dtype != dtype)
        return InvalidArgument(std::string("output has dtype ") + DataTypeString(output.dtype) + ", expected " +
                               DataTypeString(dtype));
    if (output.shape != shape)
        return InvalidArgument("output has shape " + ShapeString(output.shape) +
                               (shape_source.empty() ? ", expected " : ", but " + std::string(shape_source) + " is ") +
                               ShapeString(shape));
    return CheckTensorArgument("output", output);
}

std::string ListString(const std::vector<int> &values) {
    std::ostringstream out;
    out << "[";
    for (size_t i = 0; i < values.size(); i++) out << (i ? ", " : "") << values[i];
    out << "]";
    return out.str();
}

}  // namespace gradtune::tf
