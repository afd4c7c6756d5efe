"""The floor under use_for_gradients() (python/gradtune_tf/autotune.py): each
gradient call signature is served by the faster of gradtune's and
TensorFlow's kernels, measured once and kept in the cache file of its
context; GRADTUNE_TF_AUTOTUNE=0 serves every call with gradtune's; a call
with unknown shapes is gradtune's. Whichever side serves, the gradients are
TensorFlow's.

Run by ctest (label tf) with .tf-venv's Python.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

import gradtune_tf  # noqa: E402
from gradtune_tf import autotune  # noqa: E402

GRADIENT_OPS = ("Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropInput",
                "DepthwiseConv2dNativeBackpropFilter", "FractionalAvgPoolGrad")


def model(x, w, dw):
    y = tf.nn.conv2d(x, w, strides=2, padding="SAME")
    z = tf.nn.depthwise_conv2d(x, dw, strides=[1, 1, 1, 1], padding="VALID")
    p, _, _ = tf.nn.fractional_avg_pool(z, [1.0, 1.5, 1.5, 1.0], pseudo_random=True, seed=3)
    return tf.reduce_sum(y * y) + tf.reduce_sum(tf.sin(p))


def step(x, w, dw):
    with tf.GradientTape() as tape:
        tape.watch([x, w, dw])
        loss = model(x, w, dw)
    return tape.gradient(loss, [x, w, dw])


class Floor(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(11)
        self.args = [tf.constant(rng.standard_normal(s), dtype=tf.float32)
                     for s in ((2, 12, 12, 8), (3, 3, 8, 16), (3, 3, 8, 2))]
        self.cache = tempfile.mkdtemp(prefix="gradtune-autotune-")
        os.environ["GRADTUNE_TF_AUTOTUNE_CACHE"] = self.cache
        os.environ.pop("GRADTUNE_TF_AUTOTUNE", None)
        gradtune_tf._autotuner = None  # a fresh process's state

    def tearDown(self):
        shutil.rmtree(self.cache, ignore_errors=True)
        os.environ.pop("GRADTUNE_TF_AUTOTUNE", None)
        gradtune_tf._autotuner = None

    def traced(self, *signature):
        tf.random.set_seed(2)  # the fractional pooling's sequences: check_gradients' seed
        with gradtune_tf.use_for_gradients():
            function = tf.function(step, input_signature=signature or None)
            concrete = function.get_concrete_function(*(signature or self.args))
        return function, [op.type for op in concrete.graph.get_operations()]

    def check_gradients(self, function):
        tf.random.set_seed(2)
        want = tf.function(step)(*self.args)
        tf.random.set_seed(2)
        got = function(*self.args)
        for g, w in zip(got, want):
            err = np.linalg.norm((g - w).numpy().ravel()) / np.linalg.norm(w.numpy().ravel())
            self.assertLessEqual(err, 1e-5)

    def cache_file(self):
        files = [f for f in os.listdir(self.cache) if f.endswith(".json")]
        self.assertEqual(len(files), 1, files)
        with open(os.path.join(self.cache, files[0])) as f:
            return json.load(f)

    def test_each_signature_measured_once_and_the_faster_serves(self):
        function, types = self.traced()
        choices = self.cache_file()["choices"]
        self.assertEqual(sorted(c.split(" ", 1)[0] for c in choices), sorted(GRADIENT_OPS))
        for signature, choice in choices.items():
            op = signature.split(" ", 1)[0]
            self.assertGreater(choice["gradtune_ms"], 0)
            self.assertGreater(choice["tensorflow_ms"], 0)
            faster = "gradtune" if choice["gradtune_ms"] <= choice["tensorflow_ms"] else "tensorflow"
            self.assertEqual(choice["served_by"], faster, signature)
            # The traced step holds the chosen side's op, not the other's.
            self.assertIn(("Gradtune" + op) if faster == "gradtune" else op, types)
            self.assertNotIn(op if faster == "gradtune" else ("Gradtune" + op), types)
        self.check_gradients(function)
        # Traced again: no signature is measured twice.
        mtime = os.path.getmtime(os.path.join(self.cache, os.listdir(self.cache)[0]))
        self.traced()
        self.assertEqual(mtime, os.path.getmtime(os.path.join(self.cache, os.listdir(self.cache)[0])))

    def test_a_later_process_reuses_the_file(self):
        # The file of this context, written as an earlier run would have:
        # TensorFlow serves the input gradients, gradtune the others.
        tuner = autotune.Autotuner(gradtune_tf.library_path())
        self.traced()
        choices = self.cache_file()["choices"]
        for signature, choice in choices.items():
            tf_side = signature.split(" ", 1)[0] in ("Conv2DBackpropInput", "DepthwiseConv2dNativeBackpropInput")
            choice.update(served_by="tensorflow" if tf_side else "gradtune", gradtune_ms=1.0, tensorflow_ms=1.0)
        with open(tuner.path, "w") as f:
            json.dump({"version": 1, "context": tuner.context, "choices": choices}, f)
        gradtune_tf._autotuner = None
        function, types = self.traced()
        for op in ("Conv2DBackpropInput", "DepthwiseConv2dNativeBackpropInput"):
            self.assertIn(op, types)
            self.assertNotIn("Gradtune" + op, types)
        for op in ("Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropFilter", "FractionalAvgPoolGrad"):
            self.assertIn("Gradtune" + op, types)
        self.assertEqual(self.cache_file()["choices"], choices)  # read, not measured again
        self.check_gradients(function)

    def test_another_context_or_a_broken_file_is_measured_again(self):
        tuner = autotune.Autotuner(gradtune_tf.library_path())
        os.makedirs(self.cache, exist_ok=True)
        with open(tuner.path, "w") as f:
            f.write('{"version": 1, "context": {"cpu": "another"}, "choices": {"x": 1}}')
        self.traced()
        data = self.cache_file()
        self.assertEqual(data["context"], tuner.context)
        self.assertNotIn("x", data["choices"])
        with open(tuner.path, "w") as f:
            f.write('{"version": 1, "cont')  # cut short
        gradtune_tf._autotuner = None
        self.traced()
        self.assertEqual(len(self.cache_file()["choices"]), len(GRADIENT_OPS))

    def test_off_serves_every_call_with_gradtune(self):
        os.environ["GRADTUNE_TF_AUTOTUNE"] = "0"
        function, types = self.traced()
        for op in GRADIENT_OPS:
            self.assertIn("Gradtune" + op, types)
            self.assertNotIn(op, types)
        self.assertEqual(os.listdir(self.cache), [])
        self.check_gradients(function)

    def test_unknown_shapes_are_served_by_gradtune(self):
        signature = [tf.TensorSpec([None, 12, 12, 8], tf.float32), tf.TensorSpec([3, 3, 8, 16], tf.float32),
                     tf.TensorSpec([3, 3, 8, 2], tf.float32)]
        function, types = self.traced(*signature)
        for op in ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
            self.assertIn("Gradtune" + op, types)
        self.check_gradients(function)


if __name__ == "__main__":
    unittest.main(verbosity=2, argv=sys.argv[:1])
