// libgradtune_tf.so: gradtune's eight ops as TensorFlow custom ops, for
// tf.load_op_library (python/gradtune_tf/__init__.py). Each op is TF's own
// op under a "Gradtune" prefix: the same inputs, outputs, attrs (with TF's
// defaults and allowed values) and shape function. One kernel serves all
// eight: it hands TF's CPU tensors to gradtune's by-name API as views, lets
// gradtune validate the call like TF, allocates TF's outputs with the shapes
// gradtune reports and has gradtune write into them (RunOpInto: no copies).
// gradtune's errors become TF errors of the same kind and text. The kernels'
// parallel loops run on the op's intra-op threads (TfThreads), not on
// gradtune's own pool.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "gradtune/op_call.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/kernel_def_builder.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_def_builder.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/platform/threadpool.h"
#include "tensorflow/core/util/determinism.h"

namespace {

using tensorflow::DataType;
using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::shape_inference::InferenceContext;
using tensorflow::shape_inference::ShapeHandle;

// --- The ops: TF's definitions (tensorflow/core/ops/nn_ops.cc), from gradtune's OpSpec

// Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropInput/Filter and
// FractionalAvgPoolGrad: the output's shape is the value of a shape input.
absl::Status ShapeFromInput(InferenceContext *c, int input) {
    ShapeHandle shape;
    TF_RETURN_IF_ERROR(c->MakeShapeFromShapeTensor(input, &shape));
    TF_RETURN_IF_ERROR(c->WithRank(shape, 4, &shape));
    c->set_output(0, shape);
    return absl::OkStatus();
}

// FractionalAvgPool: TF's FractionalPoolShapeFn (each dimension divided by
// its pooling ratio, rounded down), but with the sequences one longer than the
// output's rows and columns, as TF's kernel returns them (TF's shape function
// infers them one shorter).
absl::Status FractionalPoolShape(InferenceContext *c) {
    ShapeHandle input;
    TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
    std::vector<float> ratio;
    TF_RETURN_IF_ERROR(c->GetAttr("pooling_ratio", &ratio));
    if (ratio.size() != 4) {
        return tensorflow::errors::InvalidArgument("pooling_ratio field must specify 4 dimensions");
    }
    std::vector<tensorflow::shape_inference::DimensionHandle> dims(4);
    for (int i = 0; i < 4; ++i) {
        tensorflow::shape_inference::DimensionHandle d = c->Dim(input, i);
        if (c->ValueKnown(d)) {
            const int64_t value = static_cast<int64_t>(c->Value(d) / ratio[i]);
            if (value < 0) return tensorflow::errors::InvalidArgument("Size computed for dim ", i, " is negative: ", value);
            dims[i] = c->MakeDim(value);
        } else {
            dims[i] = c->UnknownDim();
        }
    }
    c->set_output(0, c->MakeShape(dims));
    c->set_output(1, c->Vector(c->ValueKnown(dims[1]) ? c->MakeDim(c->Value(dims[1]) + 1) : c->UnknownDim()));
    c->set_output(2, c->Vector(c->ValueKnown(dims[2]) ? c->MakeDim(c->Value(dims[2]) + 1) : c->UnknownDim()));
    return absl::OkStatus();
}

// TF's own shape functions, for the ops whose output shape is not simply
// the value of a shape input.
tensorflow::OpShapeInferenceFn TfShapeFunction(const std::string &op) {
    if (op == "Conv2D") return tensorflow::shape_inference::Conv2DShapeWithExplicitPadding;
    if (op == "Conv2DBackpropInput") return tensorflow::shape_inference::Conv2DBackpropInputShape;
    if (op == "DepthwiseConv2dNative")
        return tensorflow::shape_inference::DepthwiseConv2DNativeShapeWithExplicitPadding;
    if (op == "FractionalAvgPool") return FractionalPoolShape;
    return nullptr;
}

std::string Joined(const std::vector<std::string> &items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
    return out;
}

std::string Number(int64_t v) { return std::to_string(v); }
std::string Number(double v) {
    std::ostringstream out;
    out << std::setprecision(9) << v;
    return out.str();
}

template <typename T>
std::string ListValue(const std::vector<T> &values) {
    std::vector<std::string> items;
    for (T v : values) items.push_back(Number(v));
    return "[" + Joined(items) + "]";
}

// An attr as TF's op definition writes it, e.g. "data_format: {'NHWC', 'NCHW'} = 'NHWC'".
std::string AttrDefinition(const gradtune::AttrSpec &attr) {
    using gradtune::AttrKind;
    std::string type;
    switch (attr.kind) {
    case AttrKind::kInt: type = "int"; break;
    case AttrKind::kFloat: type = "float"; break;
    case AttrKind::kBool: type = "bool"; break;
    case AttrKind::kString: type = "string"; break;
    case AttrKind::kIntList: type = "list(int)"; break;
    case AttrKind::kFloatList: type = "list(float)"; break;
    }
    if (!attr.allowed.empty()) {
        std::vector<std::string> quoted;
        for (const std::string &v : attr.allowed) quoted.push_back("'" + v + "'");
        type = "{" + Joined(quoted) + "}";
    }
    if (attr.min_length > 0) type += " >= " + std::to_string(attr.min_length);
    std::string text = attr.name + ": " + type;
    if (attr.required) return text;
    const gradtune::AttrValue &v = attr.default_value;
    if (const auto *i = std::get_if<int64_t>(&v)) return text + " = " + Number(*i);
    if (const auto *f = std::get_if<double>(&v)) return text + " = " + Number(*f);
    if (const auto *b = std::get_if<bool>(&v)) return text + (*b ? " = true" : " = false");
    if (const auto *s = std::get_if<std::string>(&v)) return text + " = '" + *s + "'";
    if (const auto *l = std::get_if<std::vector<int64_t>>(&v)) return text + " = " + ListValue(*l);
    return text + " = " + ListValue(std::get<std::vector<double>>(v));
}

// gradtune's op as TF's op "Gradtune<name>": TF's inputs, outputs and attrs
// (T where TF lists it), its statefulness and shape function.
tensorflow::OpDefBuilder OpDefinition(const gradtune::OpSpec &spec) {
    tensorflow::OpDefBuilder b("Gradtune" + spec.name);
    for (size_t i = 0; i < spec.inputs.size(); ++i) b.Input(spec.inputs[i] + ": " + spec.input_types[i]);
    for (size_t i = 0; i < spec.outputs.size(); ++i) b.Output(spec.outputs[i] + ": " + spec.output_types[i]);
    std::vector<std::string> types;
    for (gradtune::DataType t : spec.types) types.push_back(gradtune::DataTypeString(t));
    for (size_t i = 0; i <= spec.attrs.size(); ++i) {
        if (i == spec.type_attr_index) b.Attr("T: {" + Joined(types) + "}");
        if (i < spec.attrs.size()) b.Attr(AttrDefinition(spec.attrs[i]));
    }
    if (spec.stateful) b.SetIsStateful();
    if (tensorflow::OpShapeInferenceFn fn = TfShapeFunction(spec.name)) {
        b.SetShapeFn(fn);
    } else if (!spec.shape_input.empty()) {
        const int input = static_cast<int>(
            std::find(spec.inputs.begin(), spec.inputs.end(), spec.shape_input) - spec.inputs.begin());
        b.SetShapeFn([input](InferenceContext *c) { return ShapeFromInput(c, input); });
    } else {
        b.SetShapeFn(tensorflow::shape_inference::UnknownShape);
    }
    return b;
}

// --- The kernel ---------------------------------------------------------------

bool ToGradtune(DataType dtype, gradtune::DataType *out) {
    switch (dtype) {
    case tensorflow::DT_HALF: *out = gradtune::DataType::kHalf; return true;
    case tensorflow::DT_BFLOAT16: *out = gradtune::DataType::kBFloat16; return true;
    case tensorflow::DT_FLOAT: *out = gradtune::DataType::kFloat; return true;
    case tensorflow::DT_DOUBLE: *out = gradtune::DataType::kDouble; return true;
    case tensorflow::DT_INT32: *out = gradtune::DataType::kInt32; return true;
    case tensorflow::DT_INT64: *out = gradtune::DataType::kInt64; return true;
    default: return false;
    }
}

absl::Status ToTensorflow(const gradtune::Status &status) {
    switch (status.code()) {
    case gradtune::StatusCode::kOk: return absl::OkStatus();
    case gradtune::StatusCode::kInvalidArgument: return absl::InvalidArgumentError(status.message());
    case gradtune::StatusCode::kUnimplemented: return absl::UnimplementedError(status.message());
    case gradtune::StatusCode::kUnavailable: return absl::UnavailableError(status.message());
    case gradtune::StatusCode::kResourceExhausted: return absl::ResourceExhaustedError(status.message());
    case gradtune::StatusCode::kInternal: break;
    }
    return absl::InternalError(status.message());
}

// A TF tensor's memory as gradtune sees it: a view, never a copy.
template <typename Ref>
Ref View(const tensorflow::Tensor &t, gradtune::DataType dtype) {
    Ref ref;
    ref.dtype = dtype;
    for (int d = 0; d < t.dims(); ++d) ref.shape.push_back(t.dim_size(d));
    // tensor_data() is the tensor's buffer; an output's is written through it.
    ref.data = const_cast<char *>(t.tensor_data().data());
    return ref;
}

// The threads TensorFlow gives a CPU op (its intra-op pool, sized by
// tf.config.threading.set_intra_op_parallelism_threads), lent to gradtune's
// parallel loops: a training step then never has gradtune's threads running
// or spinning beside TensorFlow's own, and two gradtune ops that TensorFlow's
// inter-op threads run at once share the pool as TensorFlow's kernels do.
// GRADTUNE_TF_THREADS=gradtune keeps gradtune's own pool (for comparison).
//
// Run() hands the whole call to the pool and blocks until it is done, as
// TensorFlow's own kernels leave the inter-op thread waiting while the
// intra-op threads compute. Letting the inter-op thread join the loops made
// one thread more than the pool's: on 2 cores the intra-op thread that runs
// the helper shared a core with the calling thread, and CIFAR ResNet-20's
// gradient ops took 61.1 ms per step against 50.8 ms handed off (Intel Xeon,
// Sapphire Rapids class, 1 inter-op thread; bench/keras_models.py --breakdown).
class TfThreads : public gradtune::ParallelRunner {
public:
    explicit TfThreads(OpKernelContext *ctx) : workers_(ctx->device()->tensorflow_cpu_worker_threads()) {}
    int Threads() const override { return workers_->num_threads; }
    void Schedule(std::function<void()> work) override { workers_->workers->Schedule(std::move(work)); }

    // call() with this runner's threads: on the pool, the caller waiting
    // (asleep) unless it is one of the pool's threads already.
    gradtune::Status Run(const std::function<gradtune::Status(const gradtune::RunOptions &)> &call) {
        gradtune::RunOptions options;
        options.parallel = this;
        if (workers_->workers->CurrentThreadId() >= 0 || Threads() <= 1) return call(options);
        gradtune::Status status;
        std::mutex mutex;
        std::condition_variable finished;
        bool done = false;
        Schedule([&] {
            gradtune::Status result = call(options);
            std::lock_guard<std::mutex> lock(mutex);
            status = std::move(result);
            done = true;
            finished.notify_one();
        });
        std::unique_lock<std::mutex> lock(mutex);
        finished.wait(lock, [&] { return done; });
        return status;
    }

    static bool enabled() {
        static const bool on = [] {
            const char *v = std::getenv("GRADTUNE_TF_THREADS");
            return !(v && std::strcmp(v, "gradtune") == 0);
        }();
        return on;
    }

private:
    const tensorflow::DeviceBase::CpuWorkerThreads *workers_;
};

class GradtuneOp : public OpKernel {
public:
    explicit GradtuneOp(OpKernelConstruction *ctx) : OpKernel(ctx) {
        const std::string &name = ctx->def().op();
        call_.op = name.substr(std::string("Gradtune").size());
        const gradtune::OpSpec *spec = gradtune::FindOpSpec(call_.op);
        OP_REQUIRES(ctx, spec != nullptr,
                    absl::InternalError("libgradtune_tf: gradtune has no op " + call_.op));
        spec_ = spec;
        // The attrs, read once: TF has checked their types against the op.
        for (const gradtune::AttrSpec &attr : spec->attrs) {
            switch (attr.kind) {
            case gradtune::AttrKind::kInt: {
                int64_t v = 0;
                OP_REQUIRES_OK(ctx, ctx->GetAttr(attr.name, &v));
                call_.attrs[attr.name] = v;
                break;
            }
            case gradtune::AttrKind::kFloat: {
                float v = 0;
                OP_REQUIRES_OK(ctx, ctx->GetAttr(attr.name, &v));
                call_.attrs[attr.name] = static_cast<double>(v);
                break;
            }
            case gradtune::AttrKind::kBool: {
                bool v = false;
                OP_REQUIRES_OK(ctx, ctx->GetAttr(attr.name, &v));
                call_.attrs[attr.name] = v;
                break;
            }
            case gradtune::AttrKind::kString: {
                std::string v;
                OP_REQUIRES_OK(ctx, ctx->GetAttr(attr.name, &v));
                call_.attrs[attr.name] = v;
                break;
            }
            case gradtune::AttrKind::kIntList: {
                std::vector<int64_t> v;
                OP_REQUIRES_OK(ctx, ctx->GetAttr(attr.name, &v));
                call_.attrs[attr.name] = v;
                break;
            }
            case gradtune::AttrKind::kFloatList: {
                std::vector<float> v;
                OP_REQUIRES_OK(ctx, ctx->GetAttr(attr.name, &v));
                call_.attrs[attr.name] = std::vector<double>(v.begin(), v.end());
                break;
            }
            }
        }
    }

    void Compute(OpKernelContext *ctx) override {
        gradtune::OpCall call = call_;
        for (size_t i = 0; i < spec_->inputs.size(); ++i) {
            const tensorflow::Tensor &t = ctx->input(static_cast<int>(i));
            gradtune::DataType dtype;
            OP_REQUIRES(ctx, ToGradtune(t.dtype(), &dtype),
                        absl::InvalidArgumentError("unsupported dtype " + tensorflow::DataTypeString(t.dtype())));
            call.inputs[spec_->inputs[i]] = View<gradtune::ConstTensorRef>(t, dtype);
        }
        // Validated like TF, and the outputs' shapes, before any allocation.
        gradtune::CallInfo info;
        OP_REQUIRES_OK(ctx, ToTensorflow(gradtune::DescribeCall(call, &info)));
        std::vector<gradtune::TensorRef> outputs;
        for (size_t i = 0; i < info.output_shapes.size(); ++i) {
            tensorflow::TensorShape shape;
            OP_REQUIRES_OK(ctx, tensorflow::TensorShape::BuildTensorShape(info.output_shapes[i], &shape));
            tensorflow::Tensor *out = nullptr;
            OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(i), shape, &out));
            outputs.push_back(View<gradtune::TensorRef>(*out, info.output_dtypes[i]));
        }
        // Under tf.config.experimental.enable_op_determinism() dispatch makes
        // the static choice: a probe's choice (dispatch.h) could differ
        // between processes, and with it the results' last bits.
        const bool probe = !tensorflow::OpDeterminismRequired();
        const auto run = [&](gradtune::RunOptions options) {
            options.probe_dispatch = probe;
            return gradtune::RunOpInto(call, outputs, options);
        };
        TfThreads threads(ctx);
        OP_REQUIRES_OK(ctx, ToTensorflow(TfThreads::enabled() ? threads.Run(run) : run({})));
    }

private:
    gradtune::OpCall call_;  // the attrs; inputs are added per call
    const gradtune::OpSpec *spec_ = nullptr;
};

OpKernel *NewGradtuneOp(OpKernelConstruction *ctx) { return new GradtuneOp(ctx); }

// Every op gradtune has (gradtune::RegisteredOps()), registered with TF as
// tf.load_op_library loads this library, like REGISTER_OP and
// REGISTER_KERNEL_BUILDER would: a new gradtune op needs no line here.
const bool kRegistered = [] {
    for (const gradtune::OpSpec &spec : gradtune::RegisteredOps()) {
        tensorflow::OpDefBuilder definition = OpDefinition(spec);
        tensorflow::OpRegistry::Global()->Register(
            [definition](tensorflow::OpRegistrationData *data) { return definition.Finalize(data); });
        // TF keeps the kernel's registration (KernelDef and factory) for the process's life.
        new tensorflow::kernel_factory::OpKernelRegistrar(
            tensorflow::KernelDefBuilder(("Gradtune" + spec.name).c_str()).Device(tensorflow::DEVICE_CPU).Build(),
            "GradtuneOp", NewGradtuneOp);
    }
    return true;
}();

}  // namespace
