// FractionalAvgPool: TF validation (docs/tf-ops.md section 8: the kernel
// constructor's checks, then Compute's, with TF's texts), output sizes in
// float32, the pooling sequences from TF's Philox generator (philox.h),
// dispatch and the kernel call.
#include "gradtune/fractional_avg_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>

#include "FractionalAvgPool_cpu_float32_NHWC_generic.h"  // generated: checks KernelSignature
#include "dispatch.h"
#include "halide_call.h"
#include "op_entry.h"
#include "philox.h"
#include "structures.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using internal::HalideBuffer;

constexpr const char *kOp = "FractionalAvgPool";
// T's allowed dtypes, in TF's order.
constexpr DataType kTypes[] = {DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64};

// The Halide signature of every variant (generators/fractional_avg_pool_generator.cpp).
using KernelSignature = int (*)(const void *user_context, int32_t call_overlapping, int32_t max_row_span,
                                int32_t max_col_span, halide_buffer_t *row_pooling_sequence,
                                halide_buffer_t *col_pooling_sequence, halide_buffer_t *value, halide_buffer_t *output);
static_assert(std::is_same_v<decltype(&FractionalAvgPool_cpu_float32_NHWC_generic), KernelSignature>,
              "KernelSignature must match the generator's Inputs and Outputs");

// A float as TF's StrCat prints it (absl's six significant digits, %g style):
// 1.44f -> "1.44", 1.0000014f -> "1".
std::string SixDigits(float value) {
    if (std::isnan(value)) return "nan";
    char text[32];
    std::snprintf(text, sizeof(text), "%.6g", static_cast<double>(value));
    return text;
}

// A dense 1-D int64 halide_buffer_t over host memory.
class SequenceBuffer {
public:
    explicit SequenceBuffer(const std::vector<int64_t> &values) {
        dim_ = {0, static_cast<int32_t>(values.size()), 1, 0};
        buffer_.host = reinterpret_cast<uint8_t *>(const_cast<int64_t *>(values.data()));
        buffer_.type = halide_type_t(halide_type_int, 64);
        buffer_.dimensions = 1;
        buffer_.dim = &dim_;
        buffer_.flags = halide_buffer_flag_host_dirty;  // CUDA kernels copy it to the device
    }
    halide_buffer_t *get() { return &buffer_; }

private:
    halide_buffer_t buffer_{};
    halide_dimension_t dim_{};
};

struct Prepared {
    CallInfo info;
    std::vector<int64_t> output_shape;  // [N, OH, OW, C]
    int64_t seed = 0, seed2 = 0;        // what GuardedPhiloxRandom::Init gets
    bool pseudo_random = false, overlapping = false;
};

// TF draws these once per kernel instance for deterministic calls without
// seeds; gradtune once per process (see the header).
std::array<uint64_t, 2> ProcessSeeds() {
    static const std::array<uint64_t, 2> seeds = internal::RandomSeedPair();
    return seeds;
}

Status Prepare(const ConstTensorRef &value, const std::vector<float> &pooling_ratio,
               const FractionalAvgPool::Attrs &attrs, Prepared *p) {
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("value", value));
    // Op definition: T, then pooling_ratio: list(float) with at least 4 values.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(value.dtype, kTypes));
    if (pooling_ratio.size() < 4)
        return InvalidArgument("Length for attr 'pooling_ratio' of " + std::to_string(pooling_ratio.size()) +
                               " must be at least minimum 4");

    // Kernel constructor.
    if (pooling_ratio.size() != 4) return InvalidArgument("pooling_ratio field must specify 4 dimensions");
    for (float ratio : pooling_ratio) {
        if (!(ratio >= 1))  // CVE-2022-41900 (NaN fails too)
            return InvalidArgument("pooling_ratio cannot be smaller than 1, got: " + SixDigits(ratio));
    }
    if (!(pooling_ratio[0] == 1 && pooling_ratio[3] == 1))  // AND since CVE-2023-25801
        return Unimplemented("Fractional average pooling is not yet supported on the batch nor channel dimension.");
    p->seed = attrs.seed_;
    p->seed2 = attrs.seed2_;
    if (attrs.deterministic_) {
        if (p->seed == 0 && p->seed2 == 0) {
            const auto seeds = ProcessSeeds();
            p->seed = static_cast<int64_t>(seeds[0]);
            p->seed2 = static_cast<int64_t>(seeds[1]);
        }
    } else if (p->seed != 0 || p->seed2 != 0) {
        return InvalidArgument("Both seed and seed2 should be 0 if deterministic is false.");
    }

    // Compute.
    if (value.dims() != 4) return InvalidArgument("tensor_in must be 4-dimensional");
    std::array<int, 4> input_size{}, output_size{};
    for (int i = 0; i < 4; i++) {
        input_size[i] = static_cast<int>(value.shape[i]);  // TF keeps sizes in int
        // CVE-2021-29550: an int against a float, as TF compares them.
        if (!(input_size[i] >= pooling_ratio[i]))
            return InvalidArgument("Pooling ratio is higher than input dimension size for dimension " +
                                   std::to_string(i) + ". Input dim size: " + std::to_string(input_size[i]) +
                                   " pooling ratio: " + SixDigits(pooling_ratio[i]));
    }
    // Output sizes divide in float32 (int / float), as TF.
    for (int i = 0; i < 4; i++)
        output_size[i] = static_cast<int>(std::floor(static_cast<float>(input_size[i]) / pooling_ratio[i]));

    p->output_shape = {output_size[0], output_size[1], output_size[2], output_size[3]};
    p->pseudo_random = attrs.pseudo_random_;
    p->overlapping = attrs.overlapping_;
    p->info.op = kOp;
    p->info.dtype = DataTypeName(value.dtype);
    p->info.output_dtypes = {value.dtype, DataType::kInt64, DataType::kInt64};
    p->info.output_shapes = {p->output_shape, {p->output_shape[1] + 1}, {p->output_shape[2] + 1}};
    p->info.data_format = "NHWC";
    p->info.structure = PoolingStructure{.overlapping = attrs.overlapping_ ? 2 : 1}.values();
    p->info.padding = "VALID";  // pooling cells never reach outside the input
    p->info.shape = {{"N", value.shape[0]}, {"H", value.shape[1]},  {"W", value.shape[2]},
                     {"C", value.shape[3]}, {"OH", output_size[1]}, {"OW", output_size[2]}};
    return Status::OK();
}

// The most pixels any cell has along one axis (the kernel's loop extent).
int32_t longest_cell(const std::vector<int64_t> &sequence, int64_t input, bool overlapping) {
    int64_t longest = 0;
    for (size_t cell = 0; cell + 1 < sequence.size(); cell++) {
        const int64_t end = std::min(overlapping ? sequence[cell + 1] : sequence[cell + 1] - 1, input - 1);
        longest = std::max(longest, end - sequence[cell] + 1);
    }
    return static_cast<int32_t>(longest);
}

// What Execute refuses once a call is valid: the Compute that allocates the
// output asks first, so that a refused output is never allocated.
Status Refusal(const ConstTensorRef &value, int64_t output_elements) {
    return internal::check_int32_elements({value.num_elements(), output_elements});
}

Status Execute(const Prepared &p, const ConstTensorRef &value, const TensorRef &output,
               const TensorRef &row_pooling_sequence, const TensorRef &col_pooling_sequence,
               const RunOptions &options) {
    GRADTUNE_RETURN_IF_ERROR(Refusal(value, output.num_elements()));
    internal::KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));

    // A fresh generator per call (TF: per Compute), rows first, then columns.
    internal::GuardedPhiloxRandom generator;
    generator.Init(p.seed, p.seed2);
    const int in_rows = static_cast<int>(value.shape[1]), in_cols = static_cast<int>(value.shape[2]);
    const std::vector<int64_t> rows =
        internal::GeneratePoolingSequence(in_rows, static_cast<int>(p.output_shape[1]), &generator, p.pseudo_random);
    const std::vector<int64_t> cols =
        internal::GeneratePoolingSequence(in_cols, static_cast<int>(p.output_shape[2]), &generator, p.pseudo_random);

    SequenceBuffer row_buffer(rows), col_buffer(cols);
    // Halide dimension order (innermost first): (d, w, h, n).
    const std::array<int, 4> nhwc{3, 2, 1, 0};
    HalideBuffer value_buffer(value.dtype, value.shape, value.data, nhwc);
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, nhwc);

    int result = call.kernel<KernelSignature>()(call.user_context(), p.overlapping ? 1 : 0,
                                                longest_cell(rows, in_rows, p.overlapping),
                                                longest_cell(cols, in_cols, p.overlapping), row_buffer.get(),
                                                col_buffer.get(), value_buffer.get(), output_buffer.get());
    Status status = call.finish(result, output_buffer.get(), {row_buffer.get(), col_buffer.get(), value_buffer.get()});
    GRADTUNE_RETURN_IF_ERROR(status);
    std::copy(rows.begin(), rows.end(), row_pooling_sequence.as<int64_t>());
    std::copy(cols.begin(), cols.end(), col_pooling_sequence.as<int64_t>());
    return Status::OK();
}

// A caller's output tensor must have the dtype and shape the op produces.
Status CheckOutput(const char *name, const TensorRef &t, DataType dtype, const std::vector<int64_t> &shape) {
    if (t.dtype != dtype)
        return InvalidArgument(std::string(name) + " has dtype " + DataTypeString(t.dtype) + ", expected " +
                               DataTypeString(dtype));
    if (t.shape != shape)
        return InvalidArgument(std::string(name) + " has shape " + ShapeString(t.shape) + ", expected " +
                               ShapeString(shape));
    return tf::CheckTensorArgument(name, t);
}

}  // namespace

Status FractionalAvgPool::Compute(const ConstTensorRef &value, const std::vector<float> &pooling_ratio,
                                  const TensorRef &output, const TensorRef &row_pooling_sequence,
                                  const TensorRef &col_pooling_sequence, const Attrs &attrs,
                                  const RunOptions &options) {
    Prepared p;
    GRADTUNE_RETURN_IF_ERROR(Prepare(value, pooling_ratio, attrs, &p));
    GRADTUNE_RETURN_IF_ERROR(CheckOutput("output", output, value.dtype, p.output_shape));
    GRADTUNE_RETURN_IF_ERROR(
        CheckOutput("row_pooling_sequence", row_pooling_sequence, DataType::kInt64, {p.output_shape[1] + 1}));
    GRADTUNE_RETURN_IF_ERROR(
        CheckOutput("col_pooling_sequence", col_pooling_sequence, DataType::kInt64, {p.output_shape[2] + 1}));
    return Execute(p, value, output, row_pooling_sequence, col_pooling_sequence, options);
}

Status FractionalAvgPool::Compute(const ConstTensorRef &value, const std::vector<float> &pooling_ratio, Tensor *output,
                                  Tensor *row_pooling_sequence, Tensor *col_pooling_sequence, const Attrs &attrs,
                                  const RunOptions &options) {
    Prepared p;
    GRADTUNE_RETURN_IF_ERROR(Prepare(value, pooling_ratio, attrs, &p));
    // TF's OOM, then Execute's int32 refusal, before the output is
    // allocated (a 46341 x 46341 input cost 8.4 GB before it).
    GRADTUNE_RETURN_IF_ERROR(tf::CheckOutputFits(value.dtype, p.output_shape));
    GRADTUNE_RETURN_IF_ERROR(Refusal(value, NumElements(p.output_shape)));
    Tensor result;
    GRADTUNE_RETURN_IF_ERROR(tf::AllocateOutput(value.dtype, p.output_shape, &result));
    Tensor rows(DataType::kInt64, {p.output_shape[1] + 1});
    Tensor cols(DataType::kInt64, {p.output_shape[2] + 1});
    GRADTUNE_RETURN_IF_ERROR(Execute(p, value, result.ref(), rows.ref(), cols.ref(), options));
    *output = std::move(result);
    *row_pooling_sequence = std::move(rows);
    *col_pooling_sequence = std::move(cols);
    return Status::OK();
}

namespace internal {

OpEntry fractional_avg_pool_entry() {
    OpEntry entry;
    OpSpec &spec = entry.spec;
    spec.name = kOp;
    spec.inputs = {"value"};
    spec.input_types = {"T"};
    spec.outputs = {"output", "row_pooling_sequence", "col_pooling_sequence"};
    spec.output_types = {"T", "int64", "int64"};
    spec.attrs = {{"pooling_ratio", AttrKind::kFloatList, true, std::vector<double>{}, {}, /*min_length=*/4},
                  {"pseudo_random", AttrKind::kBool, false, false},
                  {"overlapping", AttrKind::kBool, false, false},
                  {"deterministic", AttrKind::kBool, false, false},
                  {"seed", AttrKind::kInt, false, int64_t{0}},
                  {"seed2", AttrKind::kInt, false, int64_t{0}}};
    spec.types.assign(std::begin(kTypes), std::end(kTypes));
    spec.type_attr_index = spec.attrs.size();  // TF lists T last
    spec.stateful = true;                      // unseeded, TF draws new pooling sequences per call
    // Reads the call's input and attrs into the typed API's arguments; TF
    // keeps list(float) attrs in float32.
    auto unpack = [spec = entry.spec](const OpCall &call, ConstTensorRef *value, std::vector<float> *ratio,
                                      FractionalAvgPool::Attrs *attrs) -> Status {
        GRADTUNE_RETURN_IF_ERROR(GetInput(call, "value", value));
        std::vector<double> ratio64;
        GRADTUNE_RETURN_IF_ERROR(GetFloatList(call, spec, "pooling_ratio", &ratio64));
        ratio->assign(ratio64.begin(), ratio64.end());
        GRADTUNE_RETURN_IF_ERROR(GetBool(call, spec, "pseudo_random", &attrs->pseudo_random_));
        GRADTUNE_RETURN_IF_ERROR(GetBool(call, spec, "overlapping", &attrs->overlapping_));
        GRADTUNE_RETURN_IF_ERROR(GetBool(call, spec, "deterministic", &attrs->deterministic_));
        GRADTUNE_RETURN_IF_ERROR(GetInt(call, spec, "seed", &attrs->seed_));
        return GetInt(call, spec, "seed2", &attrs->seed2_);
    };
    entry.run = [unpack](const OpCall &call, const Outputs &outputs, const RunOptions &options) -> Status {
        ConstTensorRef value;
        std::vector<float> ratio;
        FractionalAvgPool::Attrs attrs;
        GRADTUNE_RETURN_IF_ERROR(unpack(call, &value, &ratio, &attrs));
        if (outputs.in_caller_memory(3))
            return FractionalAvgPool::Compute(value, ratio, outputs.ref(0), outputs.ref(1), outputs.ref(2), attrs,
                                              options);
        Tensor output, rows, cols;
        GRADTUNE_RETURN_IF_ERROR(FractionalAvgPool::Compute(value, ratio, &output, &rows, &cols, attrs, options));
        outputs.owned->clear();
        outputs.owned->push_back(std::move(output));
        outputs.owned->push_back(std::move(rows));
        outputs.owned->push_back(std::move(cols));
        return Status::OK();
    };
    entry.describe = [unpack](const OpCall &call, CallInfo *info) -> Status {
        ConstTensorRef value;
        std::vector<float> ratio;
        FractionalAvgPool::Attrs attrs;
        GRADTUNE_RETURN_IF_ERROR(unpack(call, &value, &ratio, &attrs));
        Prepared p;
        GRADTUNE_RETURN_IF_ERROR(Prepare(value, ratio, attrs, &p));
        *info = p.info;
        return Status::OK();
    };
    return entry;
}

}  // namespace internal

}  // namespace gradtune
