"""A real Keras training loop with and without gradtune_tf.use_for_gradients()
(bench/keras_models.py's fractional_net: a small MobileNetV2-style model with
depthwise 3x3, 1x1 and 3x3 convolutions and a fractional average pooling
layer, trained for a few SGD steps from the same weights on the same data,
the two loops interleaved). The traced steps must call gradtune's ops (and
the other TF's), the first step's gradients and the loss trajectories must
agree within float32's tolerance; prints both step times. The autotune floor
is off (GRADTUNE_TF_AUTOTUNE=0): every gradient is gradtune's kernel here.

Run by ctest (label tf) with .tf-venv's Python.
"""

import os
import sys
import unittest

import numpy as np

os.environ["GRADTUNE_TF_AUTOTUNE"] = "0"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import keras_models  # noqa: E402

STEPS = 6
MODEL = "fractional_net"


class KerasStep(unittest.TestCase):
    def test_same_training(self):
        want, got, steps = keras_models.train_side_by_side(MODEL, STEPS)
        # gradtune's ops are in the traced step, TF's are not.
        for name in ("GradtuneConv2DBackpropInput", "GradtuneConv2DBackpropFilter",
                     "GradtuneDepthwiseConv2dNativeBackpropInput", "GradtuneDepthwiseConv2dNativeBackpropFilter",
                     "GradtuneFractionalAvgPoolGrad"):
            self.assertIn(name, got["types"])
            self.assertNotIn(name, want["types"])
        self.assertIn("Conv2DBackpropFilter", want["types"])
        self.assertNotIn("Conv2DBackpropFilter", got["types"])
        for g, w in zip(got["grads"], want["grads"]):
            err = np.linalg.norm((g - w).ravel()) / max(np.linalg.norm(w.ravel()), 1e-30)
            self.assertLessEqual(err, 1e-5, "first step's gradient of a %s weight" % (w.shape,))
        np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
        self.assertLess(want["losses"][-1], want["losses"][0])  # it trains
        self.breakdown_lines_up(steps, got["types"])
        # Each step's CPU time (bench/keras_models.py's CPU column): both
        # threads of the machine worked, so at least the step's wall time.
        for side in (want, got):
            self.assertEqual(len(side["cpu"]), STEPS)
            self.assertGreater(keras_models.summary(side["cpu"])[0], 0.5 * keras_models.summary(side["times"])[0])
        tf_ms, _ = keras_models.summary(want["times"])
        gt_ms, _ = keras_models.summary(got["times"])
        print("\nKeras step (batch %d, %d steps): losses %s" % (keras_models.MODELS[MODEL][2], STEPS,
                                                              ", ".join("%.5f" % v for v in got["losses"])))
        print("median step time: TensorFlow's gradients %.2f ms, gradtune's %.2f ms (%.2fx)"
              % (tf_ms, gt_ms, tf_ms / gt_ms))

    def breakdown_lines_up(self, steps, types):
        """The profiled step's gradient calls, one row per layer and op, each
        with both sides' times: every traced gradient op is found on the
        executor's threads and named by its layer on both sides."""
        tables = keras_models.breakdown_rows(steps, 1)
        gradients = sum(n for t, n in types.items() if t.startswith("Gradtune") and t[8:] in keras_models.GRADIENT_OPS)
        # The first layer's input gradient is traced but never runs: nothing
        # needs the gradient of the images.
        self.assertEqual(len(tables["calls"]), gradients - 1)
        for c in tables["calls"]:
            self.assertGreater(c["tf_ms"], 0, c)
            self.assertGreater(c["gradtune_ms"], 0, c)
            self.assertNotIn("/", c["layer"], "a node no layer name matched: %s" % c["layer"])


if __name__ == "__main__":
    unittest.main(verbosity=2, argv=sys.argv[:1])
