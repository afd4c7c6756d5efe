// TensorFlow's shared validation helpers, reproduced with TF's error kinds and
// texts (docs/tf-ops.md sections 1.2-1.4). Every op's validation is built
// from these so that the texts exist once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune::tf {

enum class Padding { kSame, kValid, kExplicit };
enum class DataFormat { kNHWC, kNCHW };

// A new output tensor of `shape`, or TF's ResourceExhausted where it cannot
// be allocated (a byte count beyond the address space or this machine's
// memory, or the allocation failing): never an exception, never an empty
// tensor that claims elements.
Status AllocateOutput(DataType dtype, const std::vector<int64_t> &shape, Tensor *out);
// What AllocateOutput refuses without allocating: a negative dimension, a
// byte count past int64 or past this machine's memory (TF's OOM text).
Status CheckOutputFits(DataType dtype, const std::vector<int64_t> &shape);

// Attr validation of the op definition ("Value for attr 'padding' of ...").
Status ParsePadding(std::string_view text, Padding *padding);
Status ParseDataFormat(std::string_view text, DataFormat *format);
const char *PaddingName(Padding padding);
// The spatial pads of an EXPLICIT call as {top, bottom, left, right} (TF's
// explicit_paddings hold a pair per dimension in the data format's order,
// already checked by CheckValidPadding); empty for SAME and VALID.
std::vector<int64_t> SpatialPaddings(Padding padding, const std::vector<int> &explicit_paddings, DataFormat format);
const char *DataFormatName(DataFormat format);

// Index of dimension 'N', 'H', 'W' or 'C' in a 4-D tensor of this format.
int DimIndex(DataFormat format, char dim);

// Op-def dtype checks.
// "Value for attr 'T' of int32 is not in the list of allowed values: half, bfloat16, float, double"
Status CheckAllowedType(DataType dtype, std::span<const DataType> allowed);
// "cannot compute <op> as input #<i>(zero-based) was expected to be a <want> tensor but is a <got> tensor"
Status CheckInputType(std::string_view op, int index, DataType want, DataType got);

// util/padding.cc CheckValidPadding for 4-D tensors.
Status CheckValidPadding(Padding padding, const std::vector<int> &explicit_paddings, DataFormat format);

// kernel_shape_util.cc GetWindowedOutputSizeVerbose: output size and pads of
// one spatial dimension, with TF's truncating integer division.
// For EXPLICIT, *pad_before / *pad_after are inputs.
Status GetWindowedOutputSizeVerbose(int64_t input_size, int64_t filter_size, int64_t dilation_rate,
                                    int64_t stride, Padding padding, int64_t *output_size,
                                    int64_t *pad_before, int64_t *pad_after);

// GetWindowedOutputSizeVerbose for the rows, then the columns, of a 4-D
// input in `format`, EXPLICIT pads read from `explicit_paddings` (format
// order, as CheckValidPadding accepted them).
struct Window2D {
    int64_t rows = 0, cols = 0;  // the output's
    int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};
Status GetWindowedOutputSize2D(const std::vector<int64_t> &input_shape, int64_t filter_rows, int64_t filter_cols,
                               int64_t dilation_rows, int64_t dilation_cols, int64_t stride_rows,
                               int64_t stride_cols, Padding padding, const std::vector<int> &explicit_paddings,
                               DataFormat format, Window2D *window);

// The depthwise kernels' constructor checks of the strides (4 of them, equal
// rows and columns, 1 along N and C), then of the padding.
Status CheckDepthwiseStrides(const std::vector<int> &strides, Padding padding,
                             const std::vector<int> &explicit_paddings, DataFormat format);

// The depthwise gradient kernels' constructor checks (TF's steps 1-5:
// CheckDepthwiseStrides), then the dilations gradtune honours (docs/tf-ops.md
// section 15.1; TF never reads them).
Status CheckDepthwiseBackpropAttrs(const std::vector<int> &strides, Padding padding,
                                   const std::vector<int> &explicit_paddings, const std::vector<int> &dilations,
                                   DataFormat format);

// TensorShape::AddDimWithStatus on a growing shape: negative sizes and int64
// overflow of the element count, with TF's texts.
class ShapeBuilder {
public:
    Status AddDim(int64_t size);
    const std::vector<int64_t> &dims() const { return dims_; }

private:
    std::vector<int64_t> dims_;
    int64_t num_elements_ = 1;
};

// (filter_size - 1) * dilation + 1, saturated to +-2^61 instead of
// overflowing (TF computes it in int64 without a check: undefined behaviour
// for a filter size and dilation near the int limits). A saturated size is
// larger than any input, so the checks that follow refuse the call.
inline int64_t EffectiveFilterSize(int64_t filter_size, int64_t dilation) {
    constexpr __int128 limit = __int128{1} << 61;
    const __int128 size = (static_cast<__int128>(filter_size) - 1) * dilation + 1;
    return static_cast<int64_t>(size > limit ? limit : size < -limit ? -limit : size);
}

// a * b, saturated to the int64 limits instead of overflowing (TF multiplies
// shape values such as depth_multiplier * in_depth in int64 without a check:
// undefined behaviour near the limits). A saturated product equals no real
// dimension and is no allocatable size, so the checks that follow refuse
// the call with TF's message.
inline int64_t MultiplySaturated(int64_t a, int64_t b) {
    int64_t product;
    if (!__builtin_mul_overflow(a, b, &product)) return product;
    return (a < 0) == (b < 0) ? INT64_MAX : INT64_MIN;
}

// FastBoundsCheck(value, INT32_MAX): the TF "... too large" checks.
inline bool FitsInt32(int64_t value) {
    return static_cast<uint64_t>(value) < static_cast<uint64_t>(INT32_MAX);
}

// Reads element i of a 1-D int32/int64 shape tensor.
int64_t ShapeElement(const ConstTensorRef &t, int64_t i);

// A tensor handed to the API must be well formed: no negative dimension, data
// present when it has elements. (TF tensors always are; raw pointers may not be.)
Status CheckTensorArgument(std::string_view name, const ConstTensorRef &t);

// A caller-provided output must have the op's dtype and shape, and be well
// formed: "output has dtype D, expected T", "output has shape [..], but
// <shape_source> is [..]" (", expected [..]" when shape_source is empty).
Status CheckCallerOutput(const TensorRef &output, DataType dtype, const std::vector<int64_t> &shape,
                         std::string_view shape_source);

// "[1,2,3,4]" as TF prints list attrs.
std::string ListString(const std::vector<int> &values);

}  // namespace gradtune::tf
