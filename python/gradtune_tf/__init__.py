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
import sys
import threading

import tensorflow as tf
from tensorflow.python.framework import ops as _tf_ops
from tensorflow.python.eager import record as _record
from tensorflow.python.ops import control_flow_util as _control_flow_util

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
    return all("GPU" not in (getattr(t, "device", "") or "") for t in tensors if t is not None)


_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")
# A convolution family: its forward op and its two gradients, TF's names
# and gradtune's op functions.
_DENSE = (("Conv2D", ops.gradtune_conv2d),
          ("Conv2DBackpropInput", ops.gradtune_conv2d_backprop_input),
          ("Conv2DBackpropFilter", ops.gradtune_conv2d_backprop_filter))
_DEPTHWISE = (("DepthwiseConv2dNative", ops.gradtune_depthwise_conv2d_native),
              ("DepthwiseConv2dNativeBackpropInput", ops.gradtune_depthwise_conv2d_native_backprop_input),
              ("DepthwiseConv2dNativeBackpropFilter", ops.gradtune_depthwise_conv2d_native_backprop_filter))


class _Family:
    """The convolution family of `op` (TF's op or gradtune's), called on
    tensors with op's attrs: forward(x, f), TF's; backprop_input(x, f, dy)
    with x's shape and backprop_filter(x, f, dy) with f's shape, each
    gradtune's or TF's (served_by)."""

    def __init__(self, op, dtype, attrs=None):
        dense = op is None or op.type.replace("Gradtune", "", 1) in dict(_DENSE)
        self.ops = _DENSE if dense else _DEPTHWISE
        names = _CONV_ATTRS + (("use_cudnn_on_gpu",) if dense else ())
        self.attrs = attrs if op is None else {name: op.get_attr(name) for name in names}
        self.dtype = dtype

    def _gradient(self, which, inputs, **tensors):
        name, gradtune_op = self.ops[which]
        return _gradient_op(name, gradtune_op, self.dtype, inputs, self.attrs)(**tensors, **self.attrs)

    def forward(self, x, f):
        # TF's own: gradtune's forward ops are companions for its tests,
        # tuned for no layer (a DCGAN generator's 5x5 stride-2 ones ran on
        # the generic variant, its step 5x slower), and TF's forward
        # kernels are what its forward pass runs anyway.
        name, _ = self.ops[0]
        return getattr(tf.raw_ops, name)(input=x, filter=f, **self.attrs)

    def backprop_input(self, x, f, dy):
        return self._gradient(1, {"input_sizes": ("shape", x), "filter": ("tensor", f), "out_backprop": ("tensor", dy)},
                          input_sizes=tf.shape(x), filter=f, out_backprop=dy)

    def backprop_filter(self, x, f, dy):
        return self._gradient(2, {"input": ("tensor", x), "filter_sizes": ("shape", f), "out_backprop": ("tensor", dy)},
                          input=x, filter_sizes=tf.shape(f), out_backprop=dy)


# The gradient functions: TF's own (tensorflow/python/ops/nn_grad.py), with
# gradtune's ops in place of TF's.
def _convolution_grads(op, grad):
    """Conv2D, DepthwiseConv2dNative: (input, filter) -> output."""
    family, (x, f) = _Family(op, grad.dtype), op.inputs[:2]
    return [family.backprop_input(x, f, grad), family.backprop_filter(x, f, grad)]


def _backprop_input_grads(op, grad):
    """Conv2DBackpropInput (Conv2DTranspose's forward op) and its depthwise
    twin: (input_sizes, filter, out_backprop) -> input-shaped; linear in the
    filter and in out_backprop, whose gradients are the filter gradient of
    `grad` against out_backprop, and the forward convolution of `grad`."""
    family, (f, dy) = _Family(op, grad.dtype), op.inputs[1:3]
    return [None, family.backprop_filter(grad, f, dy), family.forward(grad, f)]


def _backprop_filter_grads(op, grad):
    """Conv2DBackpropFilter and its depthwise twin: (input, filter_sizes,
    out_backprop) -> filter-shaped."""
    family, (x, dy) = _Family(op, grad.dtype), (op.inputs[0], op.inputs[2])
    return [family.backprop_input(x, grad, dy), None, family.forward(x, grad)]


def _fractional_avg_pool_grads(op, grad_0, grad_1, grad_2):
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


def _bias_add_grads(op, grad):
    """BiasAdd in 16 bits: the bias gradient summed in float32 and rounded
    once (docs/tf-ops.md section 15.5). TF's oneDNN path computes it so when
    it fuses it into Conv2DBackpropFilter; once gradtune computes the filter
    gradient there is nothing to fuse it into, and TF's own BiasAddGrad sums
    in the 16-bit type: 19-29% off float32's sums under Keras'
    mixed_bfloat16 policy (tests/tf/test_keras.py), against 0.3-0.7%. Other
    dtypes keep TF's gradient."""
    rank = grad.shape.rank
    if grad.dtype not in (tf.bfloat16, tf.float16) or rank is None:
        return _saved_gradient(op.type)(op, grad)
    nchw = op.type == "BiasAdd" and op.get_attr("data_format") in (b"NCHW", "NCHW")
    channels = 1 if nchw else rank - 1
    axes = [a for a in range(rank) if a != channels]
    return [grad, tf.cast(tf.reduce_sum(tf.cast(grad, tf.float32), axis=axes), grad.dtype)]


_GRADIENTS = {
    "BiasAdd": _bias_add_grads,
    "BiasAddV1": _bias_add_grads,
    "Conv2D": _convolution_grads,
    "DepthwiseConv2dNative": _convolution_grads,
    "Conv2DBackpropInput": _backprop_input_grads,
    "DepthwiseConv2dNativeBackpropInput": _backprop_input_grads,
    "Conv2DBackpropFilter": _backprop_filter_grads,
    "DepthwiseConv2dNativeBackpropFilter": _backprop_filter_grads,
    "FractionalAvgPool": _fractional_avg_pool_grads,
}

# gradtune's own ops are differentiable, by the same functions.
for _name, _gradient in _GRADIENTS.items():
    if not _name.startswith("BiasAdd"):
        tf.RegisterGradient("Gradtune" + _name)(_gradient)


_xla_said = False


def _in_xla_graph():
    """Whether the graph being built is compiled by XLA (its own or an outer
    graph's XLA context)."""
    return _control_flow_util.GraphOrParentsInXlaContext(_tf_ops.get_default_graph())


def _compiled_by_xla(graph):
    """Whether `graph`, or a function graph it is nested in, is the body of a
    tf.function(jit_compile=True): the graph that calls it holds it as a
    function marked _XlaMustCompile."""
    while graph is not None:
        outer = getattr(graph, "outer_graph", None)
        caller = outer
        while caller is not None:
            for function in getattr(caller, "_functions", {}).values():
                if getattr(function, "graph", None) is graph:
                    attr = getattr(function, "attributes", {}).get("_XlaMustCompile")
                    if attr is not None and attr.b:
                        return True
            caller = getattr(caller, "outer_graph", None)
        graph = outer
    return False


def _in_xla(op):
    """Whether the gradient of `op` is compiled by XLA, which cannot run
    custom ops, so TF's gradients stay: the graph being built is (tf.function
    with jit_compile=True; Keras 3's jit_compile="auto" in fit), or `op` lies
    in the body of such a function, whose backward function XLA compiles too
    (as Keras 3 runs each grouped convolution on the CPU, outside
    use_for_gradients(): _keras_conv). Said once on stderr."""
    global _xla_said
    try:
        graph = op.graph
    except AttributeError:  # the tape's stand-in for an op it recorded: its outputs' graph
        graph = getattr(op.outputs[0], "graph", None) if getattr(op, "outputs", None) else None
    if not (_in_xla_graph() or _compiled_by_xla(graph)):
        return False
    if not _xla_said:
        _xla_said = True
        print("gradtune_tf: part of this step is compiled by XLA (jit_compile=True), which cannot run custom "
              "ops: those gradients are XLA's, not gradtune's. Compile without it (Keras: model.compile(..., "
              "jit_compile=False)) for gradtune's kernels.", file=sys.stderr, flush=True)
    return True


def _on_cpu_or(original, gradient):
    """TF's op gets `gradient` on the CPU outside XLA, and keeps `original`
    elsewhere (gradtune registers CPU kernels only)."""

    def grad(op, *grads):
        # (TF's tape keeps no inputs of an op whose gradient needs none, such as BiasAdd.)
        if not _on_cpu(*(op.inputs or ()), *grads) or _in_xla(op):
            return original(op, *grads)
        return gradient(op, *grads)

    return grad


def _keras_conv(keras_conv):
    """Keras 3's TensorFlow conv (keras/src/backend/tensorflow/nn.py), with
    the gradients of its grouped 2-D convolutions gradtune's (or TF's, by
    the floor). On the CPU Keras runs each grouped convolution inside a
    tf.function(jit_compile=True) of its own, and XLA then compiles its
    gradients too: XLA's CPU gradients of RegNetX-200MF's grouped 3x3
    layers (groups of 8 channels, N=8) took 53-135 ms a layer, against
    2.3-11 ms for gradtune's forward and gradients together (Sapphire
    Rapids). The forward stays Keras' XLA-compiled one; its gradient is
    gradtune's ops, outside XLA."""

    def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
        nchw = sys.modules["keras.src.backend"].standardize_data_format(data_format) == "channels_first"
        rank = inputs.shape.rank if hasattr(inputs.shape, "rank") else len(inputs.shape)
        channels = inputs.shape[1 if nchw else -1] if rank == 4 else None
        grouped = rank == 4 and channels is not None and channels != kernel.shape[-2]
        # Only where a tape records: a graph traced for inference (a
        # SavedModel's serving function) keeps Keras' own, with no gradtune
        # op in its gradient, and loads where gradtune is not installed.
        if not grouped or padding not in ("valid", "same") or _in_xla_graph() or not _record.could_possibly_record():
            return keras_conv(inputs, kernel, strides, padding, data_format, dilation_rate)

        def pair(v):
            return [v, v] if isinstance(v, int) else list(v)

        sh, sw = pair(strides)
        dh, dw = pair(dilation_rate)
        attrs = {"strides": [1, 1, sh, sw] if nchw else [1, sh, sw, 1], "padding": padding.upper(),
                 "explicit_paddings": [], "data_format": "NCHW" if nchw else "NHWC",
                 "dilations": [1, 1, dh, dw] if nchw else [1, dh, dw, 1], "use_cudnn_on_gpu": True}

        @tf.custom_gradient
        def grouped_conv(x, f):
            y = keras_conv(x, f, strides, padding, data_format, dilation_rate)

            def gradient(dy):
                family = _Family(None, dy.dtype, attrs)
                return family.backprop_input(x, f, dy), family.backprop_filter(x, f, dy)

            return y, gradient

        return grouped_conv(inputs, kernel)

    return conv


_KERAS_NN = "keras.src.backend.tensorflow.nn"  # Keras 3's TensorFlow convolutions (conv)


def _keras_backend():
    """Keras 3's TensorFlow backend module of convolutions, where the process
    has loaded it and TensorFlow sees no GPU (gradtune's ops are CPU ops);
    None otherwise."""
    module = sys.modules.get(_KERAS_NN)
    if module is None or not callable(getattr(module, "conv", None)) or "keras.src.backend" not in sys.modules:
        return None
    return None if tf.config.list_physical_devices("GPU") else module


_lock = threading.Lock()
_depth = 0
_saved = {}


def _saved_gradient(op_type):
    """TF's own gradient function of `op_type`, as use_for_gradients() found it."""
    return _saved[op_type]["type"]


@contextlib.contextmanager
def use_for_gradients():
    """Inside, the gradients of Conv2D, DepthwiseConv2dNative and
    FractionalAvgPool on the CPU are gradtune's (eager mode, and inside any
    tf.function traced inside), and so are those of Conv2DBackpropInput
    (Conv2DTranspose's forward op) and of the gradient ops themselves
    (second derivatives), and, where Keras 3 is loaded, those of its grouped
    2-D convolutions, which it would leave to XLA (_keras_conv). Nests;
    restores TF's gradients and Keras' conv on exit."""
    global _depth
    # TF looks gradients up by op type in its registry, eagerly and when it
    # builds a tf.function's backward graph: the entries are swapped there.
    registry = _tf_ops._gradient_registry._registry
    with _lock:
        if _depth == 0:
            for op_type, gradient in _GRADIENTS.items():
                entry = registry[op_type]
                _saved[op_type] = dict(entry)
                entry["type"] = _on_cpu_or(entry["type"], gradient)
            keras_nn = _keras_backend()
            if keras_nn is not None:
                _saved["keras conv"] = keras_nn.conv
                keras_nn.conv = _keras_conv(keras_nn.conv)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for op_type in _GRADIENTS:
                    registry[op_type].clear()
                    registry[op_type].update(_saved.pop(op_type))
                if "keras conv" in _saved:
                    sys.modules[_KERAS_NN].conv = _saved.pop("keras conv")
