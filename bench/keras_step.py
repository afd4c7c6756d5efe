"""The step time of a Keras training loop with TensorFlow's gradients and
with gradtune's (gradtune_tf.use_for_gradients()), side by side: a small
MobileNetV2-style model (3x3 stride-2 stem, inverted residual blocks with
depthwise 3x3 and 1x1 convolutions, a fractional average pooling layer)
trained with SGD from the same weights on the same data, the two loops'
steps interleaved so that machine noise hits both alike.

    PYTHONPATH=python .tf-venv/bin/python bench/keras_step.py [--steps 20] [--markdown F]

tests/tf/test_keras_step.py runs the same loops and checks that the losses
and gradients agree; scripts/tune-and-build.sh adds this benchmark's table
to the report where libgradtune_tf.so is built.
"""

import argparse
import contextlib
import os
import statistics
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

import gradtune_tf  # noqa: E402

BATCH = 8


class FractionalAvgPool(keras.layers.Layer):
    def call(self, x):
        return tf.nn.fractional_avg_pool(x, [1.0, 1.6, 1.6, 1.0], pseudo_random=True, overlapping=True, seed=7)[0]


def block(x, expand, out, stride):
    y = keras.layers.Conv2D(expand, 1, use_bias=False)(x)
    y = keras.layers.ReLU(6.0)(y)
    y = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(y)
    y = keras.layers.ReLU(6.0)(y)
    y = keras.layers.Conv2D(out, 1, use_bias=False)(y)
    if stride == 1 and x.shape[-1] == out:
        y = keras.layers.Add()([x, y])
    return y


def make_model():
    keras.utils.set_random_seed(1234)
    inputs = keras.Input((64, 64, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(inputs)
    x = keras.layers.ReLU(6.0)(x)
    x = block(x, 32, 16, 1)
    x = block(x, 64, 24, 2)
    x = keras.layers.Conv2D(32, 3, padding="same")(x)
    x = FractionalAvgPool()(x)
    x = block(x, 96, 32, 1)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(10)(x)
    return keras.Model(inputs, outputs)


def make_step(use_gradtune):
    """A training step of a fresh model (same seed, same weights), traced
    with TF's gradients or gradtune's; and the op types of its graph."""
    model = make_model()
    optimizer = keras.optimizers.SGD(learning_rate=0.05)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(5)
    images = tf.constant(rng.standard_normal((BATCH, 64, 64, 3)), dtype=tf.float32)
    labels = tf.constant(rng.integers(0, 10, BATCH))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    tf.random.set_seed(99)
    with gradtune_tf.use_for_gradients() if use_gradtune else contextlib.nullcontext():
        concrete = step.get_concrete_function()  # traced here: the gradients are chosen now
    return step, {op.type for op in concrete.graph.get_operations()}


def train_side_by_side(steps_count):
    """Both trainings, their steps interleaved (machine noise hits both
    alike): per side the losses, the first step's gradients, the step times."""
    steps = {"tf": make_step(False), "gradtune": make_step(True)}
    out = {name: {"losses": [], "grads": None, "times": [], "types": types} for name, (_, types) in steps.items()}
    for i in range(steps_count):
        for name in (("tf", "gradtune") if i % 2 == 0 else ("gradtune", "tf")):
            start = time.perf_counter()
            loss, grads = steps[name][0]()
            loss = float(loss)
            out[name]["times"].append(time.perf_counter() - start)
            out[name]["losses"].append(loss)
            if out[name]["grads"] is None:
                out[name]["grads"] = [g.numpy() for g in grads]
    return out["tf"], out["gradtune"]


def summary(times):
    """Median and interquartile spread (percent of the median) of step
    times in ms, the first (tracing) step left out."""
    ms = sorted(t * 1e3 for t in times[1:])
    q = statistics.quantiles(ms, n=4) if len(ms) >= 2 else [ms[0]] * 3
    med = statistics.median(ms)
    return med, 100 * (q[2] - q[0]) / med


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--markdown", help="also write the result as a Markdown section")
    args = parser.parse_args()
    want, got = train_side_by_side(args.steps)
    tf_ms, tf_spread = summary(want["times"])
    gt_ms, gt_spread = summary(got["times"])
    lines = [
        "## Keras training step (bench/keras_step.py)",
        "",
        "A MobileNetV2-style model, batch %d, 64x64x3, %d SGD steps per side, interleaved; "
        "median step time (IQR spread), first step left out:" % (BATCH, args.steps),
        "",
        "| gradients by | step time (ms) | spread | final loss |",
        "|---|---|---|---|",
        "| TensorFlow | %.2f | %.0f%% | %.5f |" % (tf_ms, tf_spread, want["losses"][-1]),
        "| gradtune | %.2f | %.0f%% | %.5f |" % (gt_ms, gt_spread, got["losses"][-1]),
        "",
        "Step time with gradtune's gradients: %.2fx TensorFlow's speed." % (tf_ms / gt_ms),
    ]
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
