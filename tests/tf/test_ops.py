"""The TensorFlow drop-in (python/gradtune_tf): every Gradtune op against
TF's own op on random cases, TF's errors for bad input, and the gradients of
tf.nn.conv2d, tf.nn.depthwise_conv2d and tf.nn.fractional_avg_pool under
use_for_gradients() against TF's, in eager mode and in a tf.function.

Run by ctest (label tf) with .tf-venv's Python; GRADTUNE_TF_LIBRARY names
the built libgradtune_tf.so. TF runs its own kernels here
(TF_ENABLE_ONEDNN_OPTS=0), whose error texts gradtune reproduces.
"""

import os
import sys
import unittest

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# TF's own kernels (docs/tf-ops.md's reference, as for the fixtures'
# "native" path): pip TF's default oneDNN kernels word some errors otherwise.
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
# gradtune's kernels serve every gradient here (tests/tf/test_autotune.py
# tests the floor that may hand a call to TF's kernel).
os.environ["GRADTUNE_TF_AUTOTUNE"] = "0"
import tensorflow as tf  # noqa: E402

import gradtune_tf  # noqa: E402

# Normwise tolerances of the project (tests/test_util.h).
TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 1e-3, tf.bfloat16: 1e-2}


def normwise(got, want):
    got = np.asarray(tf.cast(got, tf.float64))
    want = np.asarray(tf.cast(want, tf.float64))
    scale = max(np.linalg.norm(want.ravel()), 1e-300)
    return np.linalg.norm((got - want).ravel()) / scale


class Case:
    """One random convolution: shapes in NHWC, moved to NCHW when asked."""

    def __init__(self, rng, n, h, w, c, k, f, s, d, padding, data_format, depthwise, dtype):
        self.depthwise = depthwise
        self.dtype = dtype
        self.data_format = data_format
        self.padding = padding
        self.strides = [1, s, s, 1] if data_format == "NHWC" else [1, 1, s, s]
        self.dilations = [1, d, d, 1] if data_format == "NHWC" else [1, 1, d, d]
        self.explicit = []
        if padding == "EXPLICIT":
            pads = [[0, 0], [1, 0], [2, 1], [0, 0]]
            if data_format == "NCHW":
                pads = [pads[0], pads[3], pads[1], pads[2]]
            self.explicit = [p for pair in pads for p in pair]
        x = rng.standard_normal((n, h, w, c))
        filt = rng.standard_normal((f, f, c, 1 if depthwise else k))
        if data_format == "NCHW":
            x = x.transpose(0, 3, 1, 2)
        self.x = tf.constant(x, dtype=dtype)
        self.filter = tf.constant(filt, dtype=dtype)

    def attrs(self):
        a = dict(strides=self.strides, padding=self.padding, explicit_paddings=self.explicit,
                 data_format=self.data_format, dilations=self.dilations)
        if not self.depthwise:
            a["use_cudnn_on_gpu"] = True
        return a

    def ops(self):
        if self.depthwise:
            return ("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                    "DepthwiseConv2dNativeBackpropFilter")
        return ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")


def gradtune_op(name):
    snake = "".join("_" + ch.lower() if ch.isupper() else ch for ch in "Gradtune" + name).lstrip("_")
    snake = snake.replace("conv2_d", "conv2d")
    return getattr(gradtune_tf.ops, snake)


def cases(rng):
    out = []
    for depthwise in (False, True):
        for dtype in (tf.float32, tf.float64):
            for data_format in ("NHWC", "NCHW"):
                for f, s, d, padding in ((3, 1, 1, "SAME"), (3, 2, 1, "VALID"), (1, 2, 1, "SAME"),
                                         (5, 1, 2, "SAME"), (3, 1, 1, "EXPLICIT")):
                    out.append(Case(rng, 2, 9, 11, 6, 5, f, s, d, padding, data_format, depthwise, dtype))
    return out


class OpsMatchTensorFlow(unittest.TestCase):
    def test_convolutions(self):
        rng = np.random.default_rng(7)
        checked = 0
        for case in cases(rng):
            fwd, bwd_in, bwd_filter = case.ops()
            attrs = case.attrs()
            tf_fwd = getattr(tf.raw_ops, fwd)
            if case.data_format == "NCHW" or case.dilations != [1, 1, 1, 1]:
                # TF's CPU kernels refuse NCHW and dilations: TF's answer is
                # computed in NHWC (below) and moved.
                want_y = None
            else:
                want_y = tf_fwd(input=case.x, filter=case.filter, **attrs)
            y = gradtune_op(fwd)(case.x, case.filter, **attrs)
            dy = tf.constant(np.random.default_rng(1).standard_normal(y.shape), dtype=case.dtype)
            got_dx = gradtune_op(bwd_in)(tf.shape(case.x), case.filter, dy, **attrs)
            got_df = gradtune_op(bwd_filter)(case.x, tf.shape(case.filter), dy, **attrs)
            # TF's answers through its own autodiff of its forward op, in NHWC.
            nhwc = case.data_format == "NHWC"
            x = case.x if nhwc else tf.transpose(case.x, [0, 2, 3, 1])
            dy_nhwc = dy if nhwc else tf.transpose(dy, [0, 2, 3, 1])
            to_nhwc = lambda v: [v[0], v[2], v[3], v[1]]  # noqa: E731
            a = dict(strides=case.strides if nhwc else to_nhwc(case.strides),
                     dilations=case.dilations if nhwc else to_nhwc(case.dilations),
                     data_format="NHWC", padding=case.padding)
            explicit = case.explicit
            if case.padding == "EXPLICIT" and not nhwc:
                pairs = [explicit[i:i + 2] for i in range(0, 8, 2)]
                explicit = [p for pair in (pairs[0], pairs[2], pairs[3], pairs[1]) for p in pair]
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                tape.watch(case.filter)
                if case.depthwise:
                    pad = case.padding if case.padding != "EXPLICIT" else [explicit[i:i + 2] for i in range(0, 8, 2)]
                    want = tf.nn.depthwise_conv2d(x, case.filter, strides=a["strides"], padding=pad,
                                                  dilations=a["dilations"][1:3], data_format="NHWC")
                else:
                    # TF's CPU gradients refuse dilations: the filter is
                    # dilated explicitly (zeros between its taps) instead.
                    d = a["dilations"][1]
                    filt = case.filter
                    if d > 1:
                        f = filt.shape[0]
                        taps = [[i * d, j * d] for i in range(f) for j in range(f)]
                        filt = tf.scatter_nd(taps, tf.reshape(filt, [f * f, *filt.shape[2:]]),
                                             [(f - 1) * d + 1, (f - 1) * d + 1, *filt.shape[2:]])
                    want = tf.raw_ops.Conv2D(input=x, filter=filt, explicit_paddings=explicit,
                                             **dict(a, dilations=[1, 1, 1, 1]))
            want_dx, want_df = tape.gradient(want, [x, case.filter], output_gradients=dy_nhwc)
            if not nhwc:
                want = tf.transpose(want, [0, 3, 1, 2])
                want_dx = tf.transpose(want_dx, [0, 3, 1, 2])
            if want_y is not None:
                self.assertLessEqual(normwise(y, want_y), TOL[case.dtype], fwd)
            where = "%s %s f=%s padding=%s" % (fwd, case.data_format, case.filter.shape, case.padding)
            self.assertLessEqual(normwise(y, want), TOL[case.dtype], where)
            self.assertLessEqual(normwise(got_dx, want_dx), TOL[case.dtype], bwd_in + " " + where)
            self.assertLessEqual(normwise(got_df, want_df), TOL[case.dtype], bwd_filter + " " + where)
            checked += 1
        self.assertEqual(checked, 40)

    def test_fractional_avg_pool(self):
        rng = np.random.default_rng(3)
        for dtype in (tf.float32, tf.float64):
            for overlapping in (False, True):
                x = tf.constant(rng.standard_normal((2, 13, 17, 4)), dtype=dtype)
                attrs = dict(pooling_ratio=[1.0, 1.44, 1.73, 1.0], pseudo_random=True, overlapping=overlapping,
                             deterministic=True, seed=5, seed2=9)
                want = tf.raw_ops.FractionalAvgPool(value=x, **attrs)
                got = gradtune_tf.ops.gradtune_fractional_avg_pool(x, **attrs)
                # Same seeds, same pooling sequences, bit for bit (README).
                np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
                np.testing.assert_array_equal(got[2].numpy(), want[2].numpy())
                self.assertLessEqual(normwise(got[0], want[0]), TOL[dtype])
                dy = tf.constant(rng.standard_normal(want[0].shape), dtype=dtype)
                shape = tf.constant(x.shape, dtype=tf.int64)
                want_dx = tf.raw_ops.FractionalAvgPoolGrad(orig_input_tensor_shape=shape, out_backprop=dy,
                                                           row_pooling_sequence=want[1], col_pooling_sequence=want[2],
                                                           overlapping=overlapping)
                got_dx = gradtune_tf.ops.gradtune_fractional_avg_pool_grad(shape, dy, want[1], want[2],
                                                                            overlapping=overlapping)
                self.assertLessEqual(normwise(got_dx, want_dx), TOL[dtype])

    def test_static_shapes(self):
        # The shape functions: TF's, so graphs know the outputs' shapes.
        @tf.function
        def f(x, filt, dy):
            return (gradtune_tf.ops.gradtune_conv2d_backprop_input([2, 8, 8, 3], filt, dy, strides=[1, 1, 1, 1],
                                                                   padding="SAME"),
                    gradtune_tf.ops.gradtune_conv2d(x, filt, strides=[1, 2, 2, 1], padding="VALID"))

        spec = f.get_concrete_function(tf.TensorSpec([2, 8, 8, 3]), tf.TensorSpec([3, 3, 3, 4]),
                                       tf.TensorSpec([2, 8, 8, 4]))
        self.assertEqual(spec.structured_outputs[0].shape.as_list(), [2, 8, 8, 3])
        self.assertEqual(spec.structured_outputs[1].shape.as_list(), [2, 3, 3, 4])

    def test_static_shapes_match_tf(self):
        # Every op's shape function infers what TF's own op infers in a graph.
        calls = {
            "Conv2D": (dict(input=[2, 9, 8, 3], filter=[3, 3, 3, 4]), dict(strides=[1, 2, 2, 1], padding="SAME")),
            "Conv2DBackpropInput": (dict(input_sizes=[2, 9, 8, 3], filter=[3, 3, 3, 4], out_backprop=[2, 5, 4, 4]),
                                    dict(strides=[1, 2, 2, 1], padding="SAME")),
            "Conv2DBackpropFilter": (dict(input=[2, 9, 8, 3], filter_sizes=[3, 3, 3, 4], out_backprop=[2, 5, 4, 4]),
                                     dict(strides=[1, 2, 2, 1], padding="SAME")),
            "DepthwiseConv2dNative": (dict(input=[2, 9, 8, 3], filter=[3, 3, 3, 2]),
                                      dict(strides=[1, 2, 2, 1], padding="VALID")),
            "DepthwiseConv2dNativeBackpropInput": (
                dict(input_sizes=[2, 9, 8, 3], filter=[3, 3, 3, 2], out_backprop=[2, 4, 3, 6]),
                dict(strides=[1, 2, 2, 1], padding="VALID")),
            "DepthwiseConv2dNativeBackpropFilter": (
                dict(input=[2, 9, 8, 3], filter_sizes=[3, 3, 3, 2], out_backprop=[2, 4, 3, 6]),
                dict(strides=[1, 2, 2, 1], padding="VALID")),
            "FractionalAvgPool": (dict(value=[2, 9, 8, 3]), dict(pooling_ratio=[1.0, 1.5, 1.44, 1.0])),
            "FractionalAvgPoolGrad": (dict(orig_input_tensor_shape=[2, 9, 8, 3], out_backprop=[2, 6, 5, 3],
                                           row_pooling_sequence=[7], col_pooling_sequence=[6]), {}),
        }
        # Every op the library registers: a new one fails here until it has a call.
        registered = {name for name in dir(gradtune_tf.ops) if name.startswith("Gradtune")}
        self.assertEqual(registered, {"Gradtune" + name for name in calls})
        shape_inputs = ("input_sizes", "filter_sizes", "orig_input_tensor_shape")
        int64_inputs = ("orig_input_tensor_shape", "row_pooling_sequence", "col_pooling_sequence")
        for name, (inputs, attrs) in calls.items():
            graphs = []
            for op in (getattr(tf.raw_ops, name), gradtune_op(name)):
                with tf.Graph().as_default():
                    args = {}
                    for arg, shape in inputs.items():
                        dtype = tf.int64 if arg in int64_inputs else tf.int32 if arg in shape_inputs else tf.float32
                        # Shape inputs are constants (their values give the
                        # output's shape); tensors are placeholders of a shape.
                        args[arg] = (tf.constant(shape, dtype) if arg in shape_inputs
                                     else tf.compat.v1.placeholder(dtype, shape))
                    out = op(**args, **attrs)
                    out = out if isinstance(out, (list, tuple)) else [out]
                    graphs.append([t.shape.as_list() for t in out])
            if name == "FractionalAvgPool":
                # TF infers the pooling sequences one shorter than its kernel
                # makes them (output rows, not rows + 1); gradtune infers the
                # length the kernel returns.
                graphs[0][1:] = [[n + 1] for [n] in graphs[0][1:]]
            self.assertEqual(graphs[1], graphs[0], name)

    def test_op_definitions_are_tf(self):
        # Registered from gradtune's OpSpec (python/gradtune_tf/ops.cc): each
        # op's definition is TF's own but for its name (and FractionalAvgPool,
        # stateful here: unseeded, it draws new sequences per call).
        from tensorflow.python.framework import op_def_registry
        names = [a[len("Gradtune"):] for a in dir(gradtune_tf.ops) if a.startswith("Gradtune")]
        # Every op of the build's op list (GRADTUNE_OPS, set by ctest), none else.
        self.assertEqual(sorted(names), sorted(os.environ["GRADTUNE_OPS"].split(",")))
        for name in names:
            want = op_def_registry.get(name)
            got = op_def_registry.get("Gradtune" + name)
            self.assertIsNotNone(got, name)
            want_copy = type(want)()
            want_copy.CopyFrom(want)
            want_copy.name = got.name
            want_copy.ClearField("deprecation")
            want_copy.is_stateful = want_copy.is_stateful or name == "FractionalAvgPool"
            self.assertEqual(got, want_copy, name)


class Errors(unittest.TestCase):
    """Bad input: TF's exception class and TF's message."""

    @staticmethod
    def text(error):
        # "{{function_node <kernel>}} <text> [Op:<op>] ...": the text, without
        # the kernel's and the op's names (TF's kernel may be oneDNN's).
        message = error.message.split(" [Op:")[0]
        return message.split("}} ", 1)[1] if message.startswith("{{") else message

    def assertSameError(self, tf_call, gradtune_call):
        with self.assertRaises(tf.errors.OpError) as want:
            tf_call()
        with self.assertRaises(tf.errors.OpError) as got:
            gradtune_call()
        self.assertIs(type(got.exception), type(want.exception))
        self.assertEqual(self.text(got.exception), self.text(want.exception))

    def test_bad_strides(self):
        x = tf.zeros([1, 4, 4, 2])
        filt = tf.zeros([3, 3, 2, 2])
        dy = tf.zeros([1, 4, 4, 2])
        attrs = dict(strides=[1, 0, 1, 1], padding="SAME")
        self.assertSameError(lambda: tf.raw_ops.Conv2DBackpropInput(input_sizes=[1, 4, 4, 2], filter=filt,
                                                                     out_backprop=dy, **attrs),
                             lambda: gradtune_tf.ops.gradtune_conv2d_backprop_input([1, 4, 4, 2], filt, dy, **attrs))
        self.assertSameError(lambda: tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 2, 2],
                                                                      out_backprop=dy, **attrs),
                             lambda: gradtune_tf.ops.gradtune_conv2d_backprop_filter(x, [3, 3, 2, 2], dy, **attrs))

    def test_mismatched_depth(self):
        filt = tf.zeros([3, 3, 5, 1])
        dy = tf.zeros([1, 4, 4, 2])
        attrs = dict(strides=[1, 1, 1, 1], padding="SAME")
        self.assertSameError(
            lambda: tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=[1, 4, 4, 2], filter=filt,
                                                                   out_backprop=dy, **attrs),
            lambda: gradtune_tf.ops.gradtune_depthwise_conv2d_native_backprop_input([1, 4, 4, 2], filt, dy, **attrs))

    def test_bad_pooling_shape(self):
        # Bad-input table row 57: the original shape must have 4 elements.
        dy = tf.zeros([1, 2, 2, 1])
        cells = tf.constant([0, 2, 4], dtype=tf.int64)
        shape = tf.constant([1, 4, 4], dtype=tf.int64)
        self.assertSameError(
            lambda: tf.raw_ops.FractionalAvgPoolGrad(orig_input_tensor_shape=shape, out_backprop=dy,
                                                     row_pooling_sequence=cells, col_pooling_sequence=cells),
            lambda: gradtune_tf.ops.gradtune_fractional_avg_pool_grad(shape, dy, cells, cells))

    def test_policy_error(self):
        # Where TF writes out of bounds, gradtune refuses (docs/tf-ops.md
        # section 15.3), as an InvalidArgumentError like TF's own.
        dy = tf.zeros([2, 2, 2, 1])
        cells = tf.constant([0, 2, 4], dtype=tf.int64)
        shape = tf.constant([1, 4, 4, 1], dtype=tf.int64)
        with self.assertRaises(tf.errors.InvalidArgumentError) as got:
            gradtune_tf.ops.gradtune_fractional_avg_pool_grad(shape, dy, cells, cells)
        self.assertEqual(self.text(got.exception), "out_backprop batch/depth must match orig_input_tensor_shape")


class Gradients(unittest.TestCase):
    """use_for_gradients(): TF's gradients, computed by gradtune."""

    def setUp(self):
        rng = np.random.default_rng(11)
        self.x = tf.constant(rng.standard_normal((2, 12, 12, 8)), dtype=tf.float32)
        self.w = tf.constant(rng.standard_normal((3, 3, 8, 16)), dtype=tf.float32)
        self.dw = tf.constant(rng.standard_normal((3, 3, 8, 2)), dtype=tf.float32)

    def model(self, x, w, dw):
        y = tf.nn.conv2d(x, w, strides=2, padding="SAME")
        z = tf.nn.depthwise_conv2d(x, dw, strides=[1, 1, 1, 1], padding="VALID")
        p, _, _ = tf.nn.fractional_avg_pool(z, [1.0, 1.5, 1.5, 1.0], pseudo_random=True, seed=3)
        return tf.reduce_sum(y * y) + tf.reduce_sum(tf.sin(p))

    def grads(self, fn):
        with tf.GradientTape() as tape:
            tape.watch([self.x, self.w, self.dw])
            loss = fn(self.x, self.w, self.dw)
        return tape.gradient(loss, [self.x, self.w, self.dw])

    def test_eager(self):
        tf.random.set_seed(1)
        want = self.grads(self.model)
        tf.random.set_seed(1)
        with gradtune_tf.use_for_gradients():
            registry = gradtune_tf._tf_ops._gradient_registry
            self.assertIn("gradtune_tf", registry.lookup("Conv2D").__module__)
            got = self.grads(self.model)
        self.assertNotIn("gradtune_tf", registry.lookup("Conv2D").__module__)  # restored
        for g, w in zip(got, want):
            self.assertLessEqual(normwise(g, w), TOL[tf.float32])

    def test_tf_function(self):
        def step(x, w, dw):
            with tf.GradientTape() as tape:
                tape.watch([x, w, dw])
                loss = self.model(x, w, dw)
            return tape.gradient(loss, [x, w, dw])

        tf.random.set_seed(2)
        want = tf.function(step)(self.x, self.w, self.dw)
        with gradtune_tf.use_for_gradients():
            traced = tf.function(step)
            concrete = traced.get_concrete_function(self.x, self.w, self.dw)
        types = {op.type for op in concrete.graph.get_operations()}
        for name in ("GradtuneConv2DBackpropInput", "GradtuneConv2DBackpropFilter",
                     "GradtuneDepthwiseConv2dNativeBackpropInput", "GradtuneDepthwiseConv2dNativeBackpropFilter",
                     "GradtuneFractionalAvgPoolGrad"):
            self.assertIn(name, types)
        self.assertNotIn("Conv2DBackpropInput", types)
        tf.random.set_seed(2)
        got = traced(self.x, self.w, self.dw)
        for g, w in zip(got, want):
            self.assertLessEqual(normwise(g, w), TOL[tf.float32])


class MoreGradients(unittest.TestCase):
    """gradtune's own ops are differentiable (their gradients are gradtune's
    gradient ops, and TF's forward convolutions); under use_for_gradients()
    so are Conv2DTranspose (whose forward op is Conv2DBackpropInput) and
    second derivatives. Each against TF's."""

    def setUp(self):
        rng = np.random.default_rng(13)
        self.x = tf.constant(rng.standard_normal((2, 9, 9, 4)), dtype=tf.float64)
        self.w = tf.constant(rng.standard_normal((3, 3, 4, 5)), dtype=tf.float64)
        self.dw = tf.constant(rng.standard_normal((3, 3, 4, 2)), dtype=tf.float64)

    def check(self, got, want):
        for g, w in zip(got, want):
            self.assertLessEqual(normwise(g, w), TOL[tf.float64])

    def test_own_ops_are_differentiable(self):
        a = dict(strides=[1, 2, 2, 1], padding="SAME")
        own = gradtune_tf.ops

        def losses(conv, depthwise, pool):
            y = conv(input=self.x, filter=self.w, **a)
            z = depthwise(input=self.x, filter=self.dw, **a)
            p = pool(value=self.x, pooling_ratio=[1.0, 1.5, 1.5, 1.0], pseudo_random=True, deterministic=True,
                     seed=5, seed2=6)[0]
            return tf.reduce_sum(tf.sin(y)) + tf.reduce_sum(z * z) + tf.reduce_sum(tf.cos(p))

        def grads(*fns):
            with tf.GradientTape() as tape:
                tape.watch([self.x, self.w, self.dw])
                loss = losses(*fns)
            return tape.gradient(loss, [self.x, self.w, self.dw])

        want = grads(tf.raw_ops.Conv2D, tf.raw_ops.DepthwiseConv2dNative, tf.raw_ops.FractionalAvgPool)
        got = grads(own.gradtune_conv2d, own.gradtune_depthwise_conv2d_native, own.gradtune_fractional_avg_pool)
        self.check(got, want)

    def test_conv2d_transpose_and_second_derivatives(self):
        dy = tf.constant(np.random.default_rng(3).standard_normal((2, 18, 18, 4)), dtype=tf.float64)
        kernel = tf.constant(np.random.default_rng(4).standard_normal((4, 4, 4, 5)), dtype=tf.float64)
        y = tf.constant(np.random.default_rng(5).standard_normal((2, 9, 9, 5)), dtype=tf.float64)

        def step(x, w, dw, y, kernel):
            with tf.GradientTape() as outer:
                outer.watch([x, w, dw, y, kernel])
                with tf.GradientTape() as inner:
                    inner.watch([x, w, dw])
                    loss = tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME") ** 2) + \
                        tf.reduce_sum(tf.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "VALID") ** 2)
                first = inner.gradient(loss, [x, w, dw])
                up = tf.nn.conv2d_transpose(y, kernel, [2, 18, 18, 4], 2, "SAME")  # Conv2DBackpropInput
                total = sum(tf.reduce_sum(g * g) for g in first) + tf.reduce_sum(up * dy)
            return outer.gradient(total, [x, w, dw, y, kernel])

        args = (self.x, self.w, self.dw, y, kernel)
        want = tf.function(step)(*args)
        with gradtune_tf.use_for_gradients():
            traced = tf.function(step)
            concrete = traced.get_concrete_function(*args)
        types = {op.type for op in concrete.graph.get_operations()}
        for name in ("GradtuneConv2DBackpropInput", "GradtuneConv2DBackpropFilter",
                     "GradtuneDepthwiseConv2dNativeBackpropInput", "GradtuneDepthwiseConv2dNativeBackpropFilter"):
            self.assertIn(name, types)
        # The forward convolutions inside gradients stay TF's.
        self.assertNotIn("GradtuneConv2D", types)
        self.check(traced(*args), want)


if __name__ == "__main__":
    unittest.main(verbosity=2, argv=sys.argv[:1])
