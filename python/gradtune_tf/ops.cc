// libgradtune_tf.so: gradtune's eight ops as TensorFlow custom ops, for
// tf.load_op_library (python/gradtune_tf/__init__.py). Each op is TF's own
// op under a "Gradtune" prefix: the same inputs, outputs, attrs (with TF's
// defaults and allowed values) and shape function. One kernel serves all
// eight: it hands TF's CPU tensors to gradtune's by-name API as views, lets
// gradtune validate the call like TF, allocates TF's outputs with the shapes
// gradtune reports and has gradtune write into them (RunOpInto: no copies).
// gradtune's errors become TF errors of the same kind and text.
#include <cstdint>
#include <string>
#include <vector>

#include "gradtune/op_call.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/util/padding.h"
#include "tensorflow/core/util/tensor_format.h"

namespace {

using tensorflow::DataType;
using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::shape_inference::InferenceContext;
using tensorflow::shape_inference::ShapeHandle;

// --- The ops: TF's definitions (tensorflow/core/ops/nn_ops.cc) -------------

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
// its pooling ratio, rounded down; the sequences one longer than the output's
// rows and columns).
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

// The attrs every convolution op ends with, in TF's order.
#define GRADTUNE_CONV_ATTRS                                       \
    .Attr(tensorflow::GetPaddingAttrStringWithExplicit())         \
    .Attr(tensorflow::GetExplicitPaddingsAttrString())            \
    .Attr(tensorflow::GetConvnetDataFormatAttrString())           \
    .Attr("dilations: list(int) = [1, 1, 1, 1]")

REGISTER_OP("GradtuneConv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    GRADTUNE_CONV_ATTRS
    .SetShapeFn(tensorflow::shape_inference::Conv2DShapeWithExplicitPadding);

REGISTER_OP("GradtuneConv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    GRADTUNE_CONV_ATTRS
    .SetShapeFn(tensorflow::shape_inference::Conv2DBackpropInputShape);

REGISTER_OP("GradtuneConv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    GRADTUNE_CONV_ATTRS
    .SetShapeFn([](InferenceContext *c) { return ShapeFromInput(c, 1); });

REGISTER_OP("GradtuneDepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    GRADTUNE_CONV_ATTRS
    .SetShapeFn(tensorflow::shape_inference::DepthwiseConv2DNativeShapeWithExplicitPadding);

REGISTER_OP("GradtuneDepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    GRADTUNE_CONV_ATTRS
    .SetShapeFn([](InferenceContext *c) { return ShapeFromInput(c, 0); });

REGISTER_OP("GradtuneDepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    GRADTUNE_CONV_ATTRS
    .SetShapeFn([](InferenceContext *c) { return ShapeFromInput(c, 1); });

REGISTER_OP("GradtuneFractionalAvgPool")
    .Input("value: T")
    .Output("output: T")
    .Output("row_pooling_sequence: int64")
    .Output("col_pooling_sequence: int64")
    .Attr("pooling_ratio: list(float) >=4")
    .Attr("pseudo_random: bool = false")
    .Attr("overlapping: bool = false")
    .Attr("deterministic: bool = false")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: {float, double, int32, int64}")
    .SetIsStateful()  // TF's op draws new pooling sequences per call when unseeded
    .SetShapeFn(FractionalPoolShape);

REGISTER_OP("GradtuneFractionalAvgPoolGrad")
    .Input("orig_input_tensor_shape: int64")
    .Input("out_backprop: T")
    .Input("row_pooling_sequence: int64")
    .Input("col_pooling_sequence: int64")
    .Output("output: T")
    .Attr("overlapping: bool = false")
    .Attr("T: {float, double, int32, int64}")
    .SetShapeFn([](InferenceContext *c) { return ShapeFromInput(c, 0); });

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
        OP_REQUIRES_OK(ctx, ToTensorflow(gradtune::RunOpInto(call, outputs)));
    }

private:
    gradtune::OpCall call_;  // the attrs; inputs are added per call
    const gradtune::OpSpec *spec_ = nullptr;
};

REGISTER_KERNEL_BUILDER(Name("GradtuneConv2D").Device(tensorflow::DEVICE_CPU), GradtuneOp);
REGISTER_KERNEL_BUILDER(Name("GradtuneConv2DBackpropInput").Device(tensorflow::DEVICE_CPU), GradtuneOp);
REGISTER_KERNEL_BUILDER(Name("GradtuneConv2DBackpropFilter").Device(tensorflow::DEVICE_CPU), GradtuneOp);
REGISTER_KERNEL_BUILDER(Name("GradtuneDepthwiseConv2dNative").Device(tensorflow::DEVICE_CPU), GradtuneOp);
REGISTER_KERNEL_BUILDER(Name("GradtuneDepthwiseConv2dNativeBackpropInput").Device(tensorflow::DEVICE_CPU), GradtuneOp);
REGISTER_KERNEL_BUILDER(Name("GradtuneDepthwiseConv2dNativeBackpropFilter").Device(tensorflow::DEVICE_CPU), GradtuneOp);
REGISTER_KERNEL_BUILDER(Name("GradtuneFractionalAvgPool").Device(tensorflow::DEVICE_CPU), GradtuneOp);
REGISTER_KERNEL_BUILDER(Name("GradtuneFractionalAvgPoolGrad").Device(tensorflow::DEVICE_CPU), GradtuneOp);

}  // namespace
