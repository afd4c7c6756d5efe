// FractionalAvgPoolGrad: TF validation (docs/tf-ops.md section 9, in TF's
// order, with TF's texts), the cells' search ranges, dispatch and the kernel
// call.
#include "gradtune/fractional_avg_pool_grad.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "FractionalAvgPoolGrad_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "dispatch.h"
#include "halide_call.h"
#include "op_entry.h"
#include "structures.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using internal::HalideBuffer;

constexpr const char *kOp = "FractionalAvgPoolGrad";

// The Halide signature of every variant (generators/fractional_avg_pool_grad_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&FractionalAvgPoolGrad_cpu_float32_NHWC_generic);

// A dense 1-D or 2-D halide_buffer_t over host memory (sequences and cell
// tables; the 4-D tensors use HalideBuffer).
class SmallBuffer {
public:
    SmallBuffer(halide_type_t type, const void *data, std::vector<int32_t> extents) {
        int32_t stride = 1;
        for (size_t i = 0; i < extents.size(); i++) {
            dims_[i] = {0, extents[i], stride, 0};
            stride *= extents[i];
        }
        buffer_.host = static_cast<uint8_t *>(const_cast<void *>(data));
        buffer_.type = type;
        buffer_.dimensions = static_cast<int32_t>(extents.size());
        buffer_.dim = dims_.data();
        buffer_.flags = halide_buffer_flag_host_dirty;  // CUDA kernels copy it to the device
    }
    halide_buffer_t *get() { return &buffer_; }

private:
    halide_buffer_t buffer_{};
    std::array<halide_dimension_t, 2> dims_{};
};

// A 1-D tensor as Eigen prints it in TF's message (TensorIOFormat::Plain):
// every value right-aligned to the widest, separated by one space.
std::string EigenVectorString(const int64_t *values, int64_t count) {
    std::vector<std::string> text(static_cast<size_t>(count));
    size_t width = 0;
    for (int64_t i = 0; i < count; i++) {
        text[i] = std::to_string(values[i]);
        width = std::max(width, text[i].size());
    }
    std::string out;
    for (int64_t i = 0; i < count; i++) {
        if (i) out += ' ';
        out += std::string(width - text[i].size(), ' ') + text[i];
    }
    return out;
}

// One spatial axis of the cells: TF's in_row_start / in_row_end.
struct Axis {
    const int64_t *sequence = nullptr;  // >= cells + 1 values
    int64_t sequence_length = 0;        // all values (they appear in TF's message)
    int64_t cells = 0;                  // out_rows or out_cols
    int64_t input = 0;                  // in_rows or in_cols
    bool overlapping = false;

    int64_t start(int64_t cell) const { return sequence[cell]; }
    // min(overlapping ? seq[cell+1] : seq[cell+1] - 1, input - 1), without
    // overflow for any int64 value (TF's own `- 1` would overflow at INT64_MIN).
    int64_t end(int64_t cell) const {
        const int64_t next = sequence[cell + 1];
        const int64_t last = overlapping ? next : (next == INT64_MIN ? INT64_MIN : next - 1);
        return std::min(last, input - 1);
    }
    // TF's check inside its loops: the start and the clamped end non-negative.
    bool valid(int64_t cell) const { return start(cell) >= 0 && end(cell) >= 0; }
};

struct Prepared {
    CallInfo info;
    std::vector<int64_t> input_shape;  // orig_input_tensor_shape, NHWC
    Axis rows, cols;
};

// The op's part of the shared front end (op_entry.h).
struct Definition {
    struct Args {
        const ConstTensorRef &orig_input_tensor_shape, &out_backprop, &row_pooling_sequence, &col_pooling_sequence;
        const FractionalAvgPoolGrad::Attrs &attrs;
    };
    struct Values {
        ConstTensorRef orig_input_tensor_shape, out_backprop, row_pooling_sequence, col_pooling_sequence;
        FractionalAvgPoolGrad::Attrs attrs;
        Args args() const { return {orig_input_tensor_shape, out_backprop, row_pooling_sequence, col_pooling_sequence, attrs}; }
    };
    using Prepared = gradtune::Prepared;
    static constexpr const char *kShapeInput = "orig_input_tensor_shape";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64};
    static OpSpec Spec();
    static Status Unpack(const OpCall &call, const OpSpec &spec, Values *v);
    static Status Prepare(const Args &args, Prepared *p);
    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &options);
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options);
};

Status Definition::Prepare(const Args &args, Prepared *p) {
    const auto &[orig_input_tensor_shape, out_backprop, row_pooling_sequence, col_pooling_sequence, attrs] = args;
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("orig_input_tensor_shape", orig_input_tensor_shape));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("out_backprop", out_backprop));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("row_pooling_sequence", row_pooling_sequence));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("col_pooling_sequence", col_pooling_sequence));

    // Op definition: T and the int64 inputs.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(out_backprop.dtype, kTypes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 0, DataType::kInt64, orig_input_tensor_shape.dtype));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 2, DataType::kInt64, row_pooling_sequence.dtype));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 3, DataType::kInt64, col_pooling_sequence.dtype));

    // Compute, in TF's order. (TF's loop meant to check the shape's values
    // walks the shape of the shape tensor, [4], and never fails.)
    if (orig_input_tensor_shape.dims() != 1 || orig_input_tensor_shape.num_elements() != 4)
        return InvalidArgument("original input tensor shape must be1-dimensional and 4 elements");  // sic
    if (out_backprop.dims() != 4) return InvalidArgument("out_backprop must be 4-dimensional");
    for (int64_t size : out_backprop.shape) {
        if (size <= 0)
            return InvalidArgument("out_backprop must be positive for all dimension, got:" + std::to_string(size));
    }
    const int64_t out_batch = out_backprop.shape[0], out_rows = out_backprop.shape[1];
    const int64_t out_cols = out_backprop.shape[2], out_depth = out_backprop.shape[3];
    // CVE-2021-29578: the sequences must reach the last cell's end.
    const std::string given = "Given out_backprop shape " + ShapeString(out_backprop.shape);
    if (row_pooling_sequence.num_elements() <= out_rows)
        return InvalidArgument(given + ", row_seq_tensor must have at least " + std::to_string(out_rows + 1) +
                               " elements, but got " + std::to_string(row_pooling_sequence.num_elements()));
    if (col_pooling_sequence.num_elements() <= out_cols)
        return InvalidArgument(given + ", col_seq_tensor must have at least " + std::to_string(out_cols + 1) +
                               " elements, but got " + std::to_string(col_pooling_sequence.num_elements()));
    const int64_t *shape = orig_input_tensor_shape.as<int64_t>();
    // CVE-2021-37651.
    if (shape[0] == 0) return InvalidArgument("Batch dimension of input must not be 0");
    if (shape[1] == 0) return InvalidArgument("Rows dimension of input must not be 0");
    if (shape[2] == 0) return InvalidArgument("Columns dimension of input must not be 0");
    if (shape[3] == 0) return InvalidArgument("Depth dimension of input must not be 0");
    // CVE-2022-35963: negative sizes and overflow.
    tf::ShapeBuilder input_shape;
    for (int i = 0; i < 4; i++) GRADTUNE_RETURN_IF_ERROR(input_shape.AddDim(shape[i]));
    const std::vector<int64_t> &in = input_shape.dims();

    // CVE-2022-21730: TF checks the sequences inside its (b, r, c) loops: for
    // r = 0, 1, ...: row r, then every column. So a bad row 0 is reported
    // first, then any bad column, then any later bad row.
    Axis rows{row_pooling_sequence.as<int64_t>(), row_pooling_sequence.num_elements(), out_rows, in[1],
              attrs.overlapping_};
    Axis cols{col_pooling_sequence.as<int64_t>(), col_pooling_sequence.num_elements(), out_cols, in[2],
              attrs.overlapping_};
    auto bad_rows = [&] {
        return InvalidArgument("Row sequence tensor values must not be negative, got " +
                               EigenVectorString(rows.sequence, rows.sequence_length));
    };
    if (!rows.valid(0)) return bad_rows();
    for (int64_t c = 0; c < out_cols; c++) {
        if (!cols.valid(c))
            return InvalidArgument("Column sequence tensor values must not be negative, got " +
                                   EigenVectorString(cols.sequence, cols.sequence_length));
    }
    for (int64_t r = 1; r < out_rows; r++) {
        if (!rows.valid(r)) return bad_rows();
    }
    // Policy (docs/tf-ops.md section 15.3): TF writes out of bounds here.
    if (out_batch > in[0] || out_depth > in[3])
        return InvalidArgument("out_backprop batch/depth must match orig_input_tensor_shape");

    p->input_shape = in;
    p->rows = rows;
    p->cols = cols;
    p->info.op = kOp;
    p->info.dtype = DataTypeName(out_backprop.dtype);
    p->info.output_dtypes = {out_backprop.dtype};
    p->info.output_shapes = {p->input_shape};
    p->info.data_format = "NHWC";
    p->info.structure = PoolingStructure{.overlapping = attrs.overlapping_ ? 2 : 1}.values();
    p->info.padding = "VALID";  // pooling cells never reach outside the input
    p->info.shape = {{"N", in[0]}, {"H", in[1]}, {"W", in[2]}, {"C", in[3]}, {"OH", out_rows}, {"OW", out_cols}};
    return Status::OK();
}

// Per input row (column): the range of cells [first, first + count) that
// holds every cell covering it, in the kernel's (k, position) layout.
struct CellRanges {
    std::vector<int32_t> table;
    int32_t longest = 0;  // the longest range
    // Every cell of every range covers its pixel: true for monotonic
    // sequences (covering cells are then consecutive). Otherwise the kernel
    // tests each cell of a range.
    bool exact = true;
    // Every cell of position i's range lies within [band(i) - below,
    // band(i) + above], band(i) = i * cells / input (the kernel's
    // row_band_below / row_band_above).
    int32_t below = 0, above = 0;
};

CellRanges cell_ranges(const Axis &axis) {
    CellRanges ranges;
    ranges.table.assign(static_cast<size_t>(2 * axis.input), 0);
    std::vector<int64_t> last(static_cast<size_t>(axis.input), -1), covering(static_cast<size_t>(axis.input), 0);
    for (int64_t cell = 0; cell < axis.cells; cell++) {
        const int64_t end = axis.end(cell);
        for (int64_t pixel = axis.start(cell); pixel <= end; pixel++) {  // empty when start > end
            if (last[pixel] < 0) ranges.table[2 * pixel] = static_cast<int32_t>(cell);
            last[pixel] = cell;
            covering[pixel]++;
        }
    }
    for (int64_t pixel = 0; pixel < axis.input; pixel++) {
        if (last[pixel] < 0) continue;
        const int32_t count = static_cast<int32_t>(last[pixel] - ranges.table[2 * pixel] + 1);
        ranges.table[2 * pixel + 1] = count;
        ranges.longest = std::max(ranges.longest, count);
        ranges.exact = ranges.exact && covering[pixel] == count;
        const int64_t band = pixel * axis.cells / axis.input, first = ranges.table[2 * pixel];
        ranges.below = static_cast<int32_t>(std::max<int64_t>(ranges.below, band - first));
        ranges.above = static_cast<int32_t>(std::max<int64_t>(ranges.above, first + count - 1 - band));
    }
    return ranges;
}

Status Definition::Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
    const ConstTensorRef &out_backprop = args.out_backprop;
    return internal::check_int32_elements(
        {output_elements, out_backprop.num_elements(), p.rows.cells + 1, p.cols.cells + 1});
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    const ConstTensorRef &out_backprop = args.out_backprop;
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, args, output.num_elements(), options));
    internal::KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));

    const CellRanges row_cells = cell_ranges(p.rows), col_cells = cell_ranges(p.cols);

    // The kernel's output has out_backprop's batch and depth. When those are
    // smaller than the original shape's (TF leaves the rest zero), it writes
    // into a scratch tensor that is copied into a zeroed output.
    const std::vector<int64_t> &in = p.input_shape;
    const bool partial = out_backprop.shape[0] != in[0] || out_backprop.shape[3] != in[3];
    Tensor scratch;
    TensorRef target = output;
    if (partial) {
        GRADTUNE_RETURN_IF_ERROR(
            tf::AllocateOutput(output.dtype, {out_backprop.shape[0], in[1], in[2], out_backprop.shape[3]}, &scratch));
        target = scratch.ref();
    }

    const halide_type_t int64_type(halide_type_int, 64), int32_type(halide_type_int, 32);
    SmallBuffer row_sequence(int64_type, p.rows.sequence, {static_cast<int32_t>(p.rows.cells + 1)});
    SmallBuffer col_sequence(int64_type, p.cols.sequence, {static_cast<int32_t>(p.cols.cells + 1)});
    SmallBuffer row_table(int32_type, row_cells.table.data(), {2, static_cast<int32_t>(in[1])});
    SmallBuffer col_table(int32_type, col_cells.table.data(), {2, static_cast<int32_t>(in[2])});
    // Halide dimension order (innermost first): (d, w, h, n).
    const std::array<int, 4> nhwc{3, 2, 1, 0};
    HalideBuffer out_backprop_buffer(out_backprop.dtype, out_backprop.shape, out_backprop.data, nhwc);
    HalideBuffer output_buffer(target.dtype, target.shape, target.data, nhwc);

    int result = call.kernel<KernelSignature>()(
        call.user_context(), p.rows.overlapping ? 1 : 0, row_cells.longest, col_cells.longest,
        row_cells.exact && col_cells.exact ? 1 : 0, row_cells.below, row_cells.above, row_sequence.get(),
        col_sequence.get(), row_table.get(), col_table.get(), out_backprop_buffer.get(), output_buffer.get());
    Status status = call.finish(
        result, output_buffer.get(),
        {row_sequence.get(), col_sequence.get(), row_table.get(), col_table.get(), out_backprop_buffer.get()});
    if (!status.ok() || !partial) return status;

    // Scatter the scratch [N', H, W, C'] into the zeroed [N, H, W, C] output.
    const size_t element = static_cast<size_t>(DataTypeSize(output.dtype));
    const int64_t pixels = in[1] * in[2], depth = out_backprop.shape[3];
    std::memset(output.data, 0, static_cast<size_t>(output.num_elements()) * element);
    for (int64_t i = 0; i < out_backprop.shape[0] * pixels; i++) {
        std::memcpy(static_cast<char *>(output.data) + i * in[3] * element,
                    static_cast<const char *>(scratch.data()) + i * depth * element, depth * element);
    }
    return Status::OK();
}

OpSpec Definition::Spec() {
    OpSpec spec;
    spec.name = kOp;
    spec.inputs = {"orig_input_tensor_shape", "out_backprop", "row_pooling_sequence", "col_pooling_sequence"};
    spec.input_types = {"int64", "T", "int64", "int64"};
    spec.outputs = {"output"};
    spec.output_types = {"T"};
    spec.attrs = {AttrSpec{"overlapping", AttrKind::kBool, false, false}};
    spec.type_attr_index = spec.attrs.size();  // TF lists T last
    return spec;
}

Status Definition::Unpack(const OpCall &call, const OpSpec &spec, Values *v) {
    using namespace internal;
    GRADTUNE_RETURN_IF_ERROR(GetInputs(
        call, spec, {&v->orig_input_tensor_shape, &v->out_backprop, &v->row_pooling_sequence, &v->col_pooling_sequence}));
    return GetBool(call, spec, "overlapping", &v->attrs.overlapping_);
}

}  // namespace

Status FractionalAvgPoolGrad::Compute(const ConstTensorRef &orig_input_tensor_shape, const ConstTensorRef &out_backprop,
                                      const ConstTensorRef &row_pooling_sequence,
                                      const ConstTensorRef &col_pooling_sequence, const TensorRef &output,
                                      const Attrs &attrs, const RunOptions &options) {
    return internal::Compute<Definition>({orig_input_tensor_shape, out_backprop, row_pooling_sequence, col_pooling_sequence, attrs}, output, options);
}

Status FractionalAvgPoolGrad::Compute(const ConstTensorRef &orig_input_tensor_shape, const ConstTensorRef &out_backprop,
                                      const ConstTensorRef &row_pooling_sequence,
                                      const ConstTensorRef &col_pooling_sequence, Tensor *output, const Attrs &attrs,
                                      const RunOptions &options) {
    return internal::Compute<Definition>({orig_input_tensor_shape, out_backprop, row_pooling_sequence, col_pooling_sequence, attrs}, output, options);
}

namespace internal {

OpEntry fractional_avg_pool_grad_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
