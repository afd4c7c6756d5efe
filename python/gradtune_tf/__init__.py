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

The library is looked up in $GRADTUNE_TF_LIBRARY, next to this file, then in
the build tree (build/python/gradtune_tf/).
"""

import contextlib
import os
import threading

import tensorflow as tf
from tensorflow.python.framework import ops as _tf_ops

__all__ = ["ops", "library_path", "use_for_gradients"]


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
        shape_0, shape_1 = tf.shape_n([op.inputs[0], op.inputs[1]])
        return [
            ops.gradtune_conv2d_backprop_input(shape_0, op.inputs[1], grad, **attrs),
            ops.gradtune_conv2d_backprop_filter(op.inputs[0], shape_1, grad, **attrs),
        ]

    return grad


def _depthwise_grad(original):
    def grad(op, grad):
        if not _on_cpu(op.inputs[0], op.inputs[1], grad):
            return original(op, grad)
        attrs = _attrs(op, _CONV_ATTRS)
        return [
            ops.gradtune_depthwise_conv2d_native_backprop_input(tf.shape(op.inputs[0]), op.inputs[1], grad, **attrs),
            ops.gradtune_depthwise_conv2d_native_backprop_filter(op.inputs[0], tf.shape(op.inputs[1]), grad, **attrs),
        ]

    return grad


def _fractional_avg_pool_grad(original):
    def grad(op, grad_0, grad_1, grad_2):
        if not _on_cpu(op.inputs[0], grad_0):
            return original(op, grad_0, grad_1, grad_2)
        return ops.gradtune_fractional_avg_pool_grad(
            tf.shape(op.inputs[0], out_type=tf.int64),
            grad_0,
            op.outputs[1],
            op.outputs[2],
            overlapping=op.get_attr("overlapping"),
        )

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
