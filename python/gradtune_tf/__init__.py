"""gradtune's kernels inside TensorFlow training steps.

    import gradtune_tf
    with gradtune_tf.use_for_gradients():
        loss = train_step(...)   # eager or tf.function

Inside `use_for_gradients()`, the gradients of tf.nn.conv2d,
tf.nn.depthwise_conv2d and tf.nn.fractional_avg_pool (and of the Keras layers
built on them) are computed by gradtune's tuned CPU kernels instead of
TensorFlow's. The ops themselves are TensorFlow custom ops
(libgradtune_tf.so, built by scripts/tf-ops.sh) named like TF's raw ops with
a Gradtune prefix, with TF's inputs, attrs, shape functions and error
messages: `gradtune_tf.ops.gradtune_conv2d_backprop_input(...)` takes what
`tf.raw_ops.Conv2DBackpropInput` takes.

Never slower than TensorFlow: the first time a gradient meets a call
signature, gradtune's kernel is timed against TensorFlow's own and the
faster serves it (python/gradtune_tf/autotune.py; GRADTUNE_TF_AUTOTUNE=0
turns it off, GRADTUNE_VERBOSE=1 says which side serves each signature).

The library is looked up in $GRADTUNE_TF_LIBRARY, next to this file, then in
the build tree (build/python/gradtune_tf/).
"""

import contextlib
import os
import threading

import tensorflow as tf
from tensorflow.python.framework import ops as _tf_ops

from . import autotune

__all__ = ["ops", "library_path", "use_for_gradients", "served_by"]


def library_path():
    """Where libgradtune_tf.so is loaded from."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.environ.get("GRADTUNE_TF_LIBRARY", ""),
        os.path.join(here, "libgradtune_tf.so"),
        os.path.join(here, "..", "..", "build", "python", "gradtune_tf", "libgradtune_tf.so"),
    ]
    for path in candidates:
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    raise ImportError(
        "gradtune_tf: libgradtune_tf.so not found (looked in: "
        + ", ".join(p for p in candidates if p)
        + ") -- build it with ./scripts/tf-ops.sh, or set GRADTUNE_TF_LIBRARY"
    )


ops = tf.load_op_library(library_path())
_autotuner = None


def served_by(call):
    """Which side serves a gradient call (autotune.Call): autotune.GRADTUNE
    or autotune.TENSORFLOW. gradtune where the floor is off or the call's
    shapes are not all known."""
    global _autotuner
    if not autotune.enabled():
        return autotune.GRADTUNE
    for _, _, value in call.inputs:
        if any(v is None for v in value):
            return autotune.GRADTUNE
    if _autotuner is None:
        _autotuner = autotune.Autotuner(library_path())
    return _autotuner.choose(call)


def _shape(tensor):
    return tensor.shape.as_list() if tensor.shape.rank is not None else [None]


def _gradient_op(name, gradtune_op, dtype, inputs, attrs):
    """The op that computes one gradient, gradtune's or TF's (served_by).
    `inputs` describes its inputs as {name: (kind, x)} (autotune.Call's
    kinds): a "tensor" input is x itself, a "shape" input measures x, a
    "sequence" input is given as (cells, extent)."""
    described = [(name, kind, x if kind == "sequence" else _shape(x)) for name, (kind, x) in inputs.items()]
    op = gradtune_op
    if served_by(autotune.Call(name, gradtune_op, dtype, described, attrs)) == autotune.TENSORFLOW:
        op = getattr(tf.raw_ops, name)
    return op


def _on_cpu(*tensors):
    # gradtune registers CPU kernels only: a GPU op keeps TF's gradient.
    return all("GPU" not in (getattr(t, "device", "") or "") for t in tensors)


_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def _attrs(op, names):
    return {name: op.get_attr(name) for name in names}


# The gradient functions: TF's own (tensorflow/python/ops/nn_grad.py), with
# gradtune's ops in place of TF's.
def _conv2d_grad(original):
    def grad(op, grad):
        if not _on_cpu(op.inputs[0], op.inputs[1], grad):
            return original(op, grad)
        attrs = _attrs(op, _CONV_ATTRS + ("use_cudnn_on_gpu",))
        x, f = op.inputs[0], op.inputs[1]
        shape_0, shape_1 = tf.shape_n([x, f])
        backprop_input = _gradient_op("Conv2DBackpropInput", ops.gradtune_conv2d_backprop_input, grad.dtype,
                                      {"input_sizes": ("shape", x), "filter": ("tensor", f),
                                       "out_backprop": ("tensor", grad)}, attrs)
        backprop_filter = _gradient_op("Conv2DBackpropFilter", ops.gradtune_conv2d_backprop_filter, grad.dtype,
                                       {"input": ("tensor", x), "filter_sizes": ("shape", f),
                                        "out_backprop": ("tensor", grad)}, attrs)
        return [
            backprop_input(input_sizes=shape_0, filter=f, out_backprop=grad, **attrs),
            backprop_filter(input=x, filter_sizes=shape_1, out_backprop=grad, **attrs),
        ]

    return grad


def _depthwise_grad(original):
    def grad(op, grad):
        if not _on_cpu(op.inputs[0], op.inputs[1], grad):
            return original(op, grad)
        attrs = _attrs(op, _CONV_ATTRS)
        x, f = op.inputs[0], op.inputs[1]
        backprop_input = _gradient_op(
            "DepthwiseConv2dNativeBackpropInput", ops.gradtune_depthwise_conv2d_native_backprop_input, grad.dtype,
            {"input_sizes": ("shape", x), "filter": ("tensor", f), "out_backprop": ("tensor", grad)}, attrs)
        backprop_filter = _gradient_op(
            "DepthwiseConv2dNativeBackpropFilter", ops.gradtune_depthwise_conv2d_native_backprop_filter, grad.dtype,
            {"input": ("tensor", x), "filter_sizes": ("shape", f), "out_backprop": ("tensor", grad)}, attrs)
        return [
            backprop_input(input_sizes=tf.shape(x), filter=f, out_backprop=grad, **attrs),
            backprop_filter(input=x, filter_sizes=tf.shape(f), out_backprop=grad, **attrs),
        ]

    return grad


def _fractional_avg_pool_grad(original):
    def grad(op, grad_0, grad_1, grad_2):
        if not _on_cpu(op.inputs[0], grad_0):
            return original(op, grad_0, grad_1, grad_2)
        x, rows, cols = op.inputs[0], op.outputs[1], op.outputs[2]
        attrs = {"overlapping": op.get_attr("overlapping")}
        # The sequences' cells are the pooled rows and columns (their static
        # lengths are TF's shape function's, one short).
        sizes = _shape(x) if x.shape.rank == 4 else [None] * 4
        cells = _shape(grad_0) if grad_0.shape.rank == 4 else [None] * 4
        pool_grad = _gradient_op(
            "FractionalAvgPoolGrad", ops.gradtune_fractional_avg_pool_grad, grad_0.dtype,
            {"orig_input_tensor_shape": ("shape", x), "out_backprop": ("tensor", grad_0),
             "row_pooling_sequence": ("sequence", (cells[1], sizes[1])),
             "col_pooling_sequence": ("sequence", (cells[2], sizes[2]))}, attrs)
        return pool_grad(orig_input_tensor_shape=tf.shape(x, out_type=tf.int64), out_backprop=grad_0,
                         row_pooling_sequence=rows, col_pooling_sequence=cols, **attrs)

    return grad


_OVERRIDES = {
    "Conv2D": _conv2d_grad,
    "DepthwiseConv2dNative": _depthwise_grad,
    "FractionalAvgPool": _fractional_avg_pool_grad,
}
_lock = threading.Lock()
_depth = 0
_saved = {}


@contextlib.contextmanager
def use_for_gradients():
    """Inside, the gradients of Conv2D, DepthwiseConv2dNative and
    FractionalAvgPool on the CPU are gradtune's (eager mode, and inside any
    tf.function traced inside). Nests; restores TF's gradients on exit."""
    global _depth
    # TF looks gradients up by op type in its registry, eagerly and when it
    # builds a tf.function's backward graph: the entries are swapped there.
    registry = _tf_ops._gradient_registry._registry
    with _lock:
        if _depth == 0:
            for op_type, make in _OVERRIDES.items():
                entry = registry[op_type]
                _saved[op_type] = dict(entry)
                entry["type"] = make(entry["type"])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for op_type in _OVERRIDES:
                    registry[op_type].clear()
                    registry[op_type].update(_saved.pop(op_type))
