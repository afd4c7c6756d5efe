"""Keras as people use it, inside gradtune_tf.use_for_gradients():
model.fit under Keras' defaults (jit_compile="auto" compiles no XLA on a
machine without a GPU: gradtune's kernels compute the gradients) and with
jit_compile=True (XLA cannot run custom ops: TF's gradients stay, and
gradtune says so once), a grouped Conv2D (which Keras compiles with XLA on
the CPU by itself: gradtune's gradients outside XLA), the mixed_bfloat16 policy (bfloat16 gradients from
gradtune, as accurate against float32's as TF's), and a SavedModel of a
model trained inside use_for_gradients() that loads and runs where gradtune
is not installed.

Each scenario runs in a process of its own (stderr is read at the file
descriptor: gradtune's GRADTUNE_VERBOSE lines come from C++). The autotune
floor is off (GRADTUNE_TF_AUTOTUNE=0): gradtune's kernels serve every call.
Run by ctest (label tf) with .tf-venv's Python.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

PRELUDE = """
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras

def small_model():
    keras.utils.set_random_seed(3)
    inputs = keras.Input((16, 16, 8))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.DepthwiseConv2D(3, strides=2, padding="same")(x)
    x = keras.layers.Conv2D(8, 1)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(4)(x))

def grouped_model():
    keras.utils.set_random_seed(5)
    inputs = keras.Input((16, 16, 8))
    x = keras.layers.Conv2D(16, 3, padding="same", groups=2)(inputs)
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", groups=4)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(4)(x))

rng = np.random.default_rng(0)
images = rng.standard_normal((16, 16, 16, 8)).astype("float32")
labels = rng.integers(0, 4, 16)

# The gradients of one training step of `model` on (images, labels), in a
# tf.function traced inside use_for_gradients() where `use`.
def step_gradients(model, use):
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function(jit_compile=False)
    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        return tape.gradient(loss, model.trainable_variables)
    if use:
        with gradtune_tf.use_for_gradients():
            step.get_concrete_function()
    return step()
"""


def run(script, with_gradtune=True, args=()):
    """Runs PRELUDE + script in a fresh Python (sys.argv[1:] = args);
    returns (stdout, stderr)."""
    env = dict(os.environ, GRADTUNE_TF_AUTOTUNE="0", GRADTUNE_VERBOSE="1")
    if not with_gradtune:
        env.pop("GRADTUNE_TF_LIBRARY", None)
        env.pop("PYTHONPATH", None)
        env.pop("GRADTUNE_VERBOSE", None)
    body = PRELUDE + ("import gradtune_tf\n" if with_gradtune else "") + textwrap.dedent(script)
    done = subprocess.run([sys.executable, "-c", body, *args], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError("the scenario failed:\n" + done.stdout[-3000:] + done.stderr[-3000:])
    return done.stdout, done.stderr


def gradtune_calls(stderr, op=""):
    return sum(1 for line in stderr.splitlines() if line.startswith("gradtune_verbose,cpu," + op))


class Keras(unittest.TestCase):
    def test_op_determinism_keeps_dispatch_static(self):
        # A nearest record serves only after a probe (runtime/src/dispatch.h)
        # measured it against the default it displaces: a choice that can
        # differ between processes. Under enable_op_determinism() dispatch
        # makes the static choice instead.
        script = """
            if sys.argv[1:] == ["deterministic"]:
                tf.config.experimental.enable_op_determinism()
            model = small_model()
            model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)
            with gradtune_tf.use_for_gradients():
                model.fit(images, labels, epochs=1, batch_size=8, verbose=0)
        """
        # The small model's shapes have no exact records: records tuned for
        # other shapes serve some calls, after a probe. Where none has
        # another kernel to measure against (a CPU without AVX-512 runs only
        # the structure defaults' kernels), there is nothing to probe.
        _, free = run(script)
        if "probed on the signature's first call" not in free:
            free_lines = [l for l in free.splitlines() if l.startswith("gradtune_verbose,cpu,")]
            unprobed = [l for l in free_lines if ",nearest," in l or ",transferred," in l]
            self.assertTrue(all("not probed, nothing else to measure it against" in l for l in unprobed), unprobed)
            self.skipTest("no call here has two kernels to probe")
        _, deterministic = run(script, args=["deterministic"])
        lines = [l for l in deterministic.splitlines() if l.startswith("gradtune_verbose,cpu,")]
        self.assertTrue(lines)
        self.assertFalse([l for l in lines if "probed" in l])

    def test_fit_under_keras_defaults_and_under_xla(self):
        out, err = run("""
            for jit in ("auto", True, True):
                model = small_model()
                model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=jit)
                with gradtune_tf.use_for_gradients():
                    history = model.fit(images, labels, epochs=2, batch_size=8, verbose=0)
                losses = history.history["loss"]
                assert all(np.isfinite(losses)), losses
                print("jit_compile=%s (resolved: %s) losses %s" % (jit, model.jit_compile, losses), flush=True)
                sys.stderr.write("--- end of fit ---\\n")
                sys.stderr.flush()
        """)
        fits = err.split("--- end of fit ---")
        self.assertEqual(len(fits), 4)
        # Keras' default on a machine without a GPU compiles no XLA: gradtune's
        # kernels compute the gradients.
        self.assertIn("jit_compile=auto (resolved: False)", out)
        self.assertGreater(gradtune_calls(fits[0], "Conv2DBackpropFilter"), 0)
        self.assertGreater(gradtune_calls(fits[0], "DepthwiseConv2dNativeBackpropFilter"), 0)
        # Where XLA compiles the step: TF's gradients, said once for both fits.
        self.assertEqual(err.count("is compiled by XLA"), 1, err[-2000:])
        self.assertIn("is compiled by XLA", fits[1])
        self.assertEqual(gradtune_calls(fits[1]) + gradtune_calls(fits[2]), 0)

    def test_grouped_convolution(self):
        # Keras 3 runs a grouped Conv2D on the CPU inside a
        # tf.function(jit_compile=True) of its own, whose gradients XLA
        # would compile too: use_for_gradients() gives it gradtune's
        # gradients outside XLA (the forward stays Keras'). And the body of
        # any function XLA compiles keeps XLA's gradients, said once, the
        # rest of the step being gradtune's.
        out, err = run("""
            def grads(use):
                return [g.numpy().astype("float64") for g in step_gradients(grouped_model(), use)]
            want, got = grads(False), grads(True)
            print("keras worst %.3e" % max(np.linalg.norm(g - w) / np.linalg.norm(w) for g, w in zip(got, want)))
            sys.stderr.write("--- end of keras ---\\n")
            sys.stderr.flush()

            x = tf.constant(images)
            w = tf.constant(rng.standard_normal((3, 3, 8, 8)), dtype=tf.float32)
            def make_step():  # (a function of its own each time: TF caches a function's gradient)
                @tf.function(jit_compile=True)
                def xla_conv(x, w):
                    return tf.nn.conv2d(x, w, 1, "SAME")
                def step(x, w):
                    with tf.GradientTape() as tape:
                        tape.watch([x, w])
                        loss = tf.reduce_sum(tf.sin(xla_conv(x, w))) + tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME") ** 2)
                    return tape.gradient(loss, [x, w])
                return step
            want = tf.function(make_step())(x, w)
            with gradtune_tf.use_for_gradients():
                traced = tf.function(make_step())
                traced.get_concrete_function(x, w)
            got = traced(x, w)
            print("xla worst %.3e" % max(np.linalg.norm(g - v) / np.linalg.norm(v) for g, v in zip(got, want)))
        """)
        keras_err, xla_err = err.split("--- end of keras ---")
        self.assertLess(float(out.split("keras worst")[1].split()[0]), 1e-4, out)
        self.assertLess(float(out.split("xla worst")[1].split()[0]), 1e-4, out)
        self.assertNotIn("compiled by XLA", keras_err)
        # Both convolutions are grouped (their verbose lines name the
        # ungrouped calls of their group blocks).
        self.assertGreaterEqual(gradtune_calls(keras_err, "Conv2DBackpropFilter"), 2, keras_err[-2000:])
        self.assertGreaterEqual(gradtune_calls(keras_err, "Conv2DBackpropInput"), 1, keras_err[-2000:])
        self.assertEqual(xla_err.count("is compiled by XLA"), 1, xla_err[-2000:])

    def test_mixed_bfloat16(self):
        # Against the gradients of the same model in float32: gradtune's
        # bfloat16 gradients are as accurate as TF's, and the 16-bit bias
        # gradients (summed in float32, as TF's oneDNN path sums those it
        # fuses into the filter gradient) no less so.
        out, err = run("""
            def grads(use, policy):
                keras.mixed_precision.set_global_policy(policy)
                model = small_model()
                gradients = step_gradients(model, use)
                return [(v.path, g.numpy().astype("float64")) for v, g in zip(model.trainable_variables, gradients)]
            exact = grads(False, "float32")
            want, got = grads(False, "mixed_bfloat16"), grads(True, "mixed_bfloat16")
            for (name, r), (_, w), (_, g) in zip(exact, want, got):
                err = lambda x: np.linalg.norm(x - r) / np.linalg.norm(r)
                print("variable %s gradtune %.3e tensorflow %.3e" % (name, err(g), err(w)))
        """)
        rows = [line.split() for line in out.splitlines() if line.startswith("variable ")]
        self.assertEqual(len(rows), 8)
        for _, name, _, gradtune_error, _, tf_error in rows:
            self.assertLessEqual(float(gradtune_error), max(1.25 * float(tf_error), 1e-2), name)
            if "bias" in name:
                self.assertLessEqual(float(gradtune_error), 1e-2, name)
        self.assertGreater(gradtune_calls(err, "Conv2DBackpropFilter,bfloat16"), 0)
        self.assertGreater(gradtune_calls(err, "DepthwiseConv2dNativeBackpropInput,bfloat16"), 0)

    def test_saved_model_loads_without_gradtune(self):
        # Also a model of grouped convolutions, whose Keras conv
        # use_for_gradients() wraps.
        for builder in ("small_model", "grouped_model"):
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model")
                out, _ = run("""
                    model = %s()
                    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)
                    with gradtune_tf.use_for_gradients():
                        model.fit(images, labels, epochs=1, batch_size=8, verbose=0)
                        model.export(%r)
                    np.save(%r, model.predict(images, verbose=0))
                """ % (builder, path, path + ".npy"))
                out, _ = run("""
                    assert "gradtune_tf" not in sys.modules
                    loaded = tf.saved_model.load(%r)
                    got = loaded.serve(tf.constant(images)).numpy()
                    want = np.load(%r)
                    print("max difference %%.3e" %% float(np.max(np.abs(got - want))))
                """ % (path, path + ".npy"), with_gradtune=False)
                self.assertLessEqual(float(out.split("max difference")[1]), 1e-5, builder)


if __name__ == "__main__":
    unittest.main(verbosity=2, argv=sys.argv[:1])
