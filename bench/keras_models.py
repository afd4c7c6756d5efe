"""Training-step time of real Keras models with TensorFlow's gradients and
with gradtune's (gradtune_tf.use_for_gradients()), side by side in one
process, and where the time of one step goes, op by op.

    PYTHONPATH=python .tf-venv/bin/python bench/keras_models.py \\
        [--models mobilenet_v2,resnet50,...] [--steps 12] [--breakdown mobilenet_v2] \\
        [--markdown F] [--json F] [--inter-op-threads 1]

Each model is built twice from the same seed (weights=None), once per side,
and trained with SGD on the same random batch in a custom training step
compiled with tf.function, as Keras' own train_step is: the side with
gradtune is traced inside use_for_gradients(). The two sides' steps are
interleaved (machine noise hits both alike); the table gives the median step
time of each side, the spread (interquartile range, % of the median), the
ratio, TensorFlow's step time over gradtune's (> 1: gradtune's step is
faster), and each side's CPU time per step (every thread of the process:
TensorFlow runs independent ops at once, so a step's time follows the CPU
work of its kernels). The first step of each side (tracing) is left out.

The breakdown profiles a few steps of each side with TensorFlow's profiler
(the host trace, tensorflow.tsl's XPlane) and sums, per op type, the time
each op kernel ran inside the step (its wall time on the thread that ran it:
a kernel that waits for its helper threads counts the wait). Ops run
concurrently on TensorFlow's inter-op threads, so the per-op times of a step
may add up to more than the step. oneDNN's rewritten op names (_MklNative...)
and gradtune's (Gradtune...) are folded into TensorFlow's op names, so that
the two sides' rows line up.

The models are the layer mixes people train, at sizes two cores can step
through in seconds: the keras.applications families with weights=None
(MobileNetV2, MobileNetV3Small, EfficientNetB0, ResNet50, DenseNet121,
Xception), a RegNetX-200MF (grouped convolutions), a CIFAR-style ResNet, a DCGAN generator and discriminator
(Conv2DTranspose: Conv2DBackpropInput forward) and a MobileNetV2-style net
with fractional average pooling.
"""

import argparse
import contextlib
import glob
import json
import re
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

import gradtune_tf  # noqa: E402
from gradtune_tf import autotune  # noqa: E402
from gradtune_tf.timing import process_cpu_seconds  # noqa: E402

# --- The models ---------------------------------------------------------------


class FractionalAvgPool(keras.layers.Layer):
    """tf.nn.fractional_avg_pool as a layer (Keras has none): Graham's
    fractional pooling, ratio 1.6, overlapping, a fixed seed. TensorFlow's
    pooling has no bfloat16 kernel, so under mixed_bfloat16 it pools in
    float32 (as a Keras user sets dtype="float32" on such a layer)."""

    def call(self, x):
        y = tf.nn.fractional_avg_pool(tf.cast(x, tf.float32), [1.0, 1.6, 1.6, 1.0], pseudo_random=True,
                                      overlapping=True, seed=7)[0]
        return tf.cast(y, x.dtype)


def _inverted_residual(x, expand, out, stride):
    y = keras.layers.Conv2D(expand, 1, use_bias=False)(x)
    y = keras.layers.ReLU(6.0)(y)
    y = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(y)
    y = keras.layers.ReLU(6.0)(y)
    y = keras.layers.Conv2D(out, 1, use_bias=False)(y)
    if stride == 1 and x.shape[-1] == out:
        y = keras.layers.Add()([x, y])
    return y


def fractional_net(shape, classes):
    """A small MobileNetV2-style net: 3x3 stride-2 stem, inverted residual
    blocks (1x1, depthwise 3x3, 1x1), a 3x3 layer and fractional average
    pooling between the blocks."""
    inputs = keras.Input(shape)
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(inputs)
    x = keras.layers.ReLU(6.0)(x)
    x = _inverted_residual(x, 32, 16, 1)
    x = _inverted_residual(x, 64, 24, 2)
    x = keras.layers.Conv2D(32, 3, padding="same")(x)
    x = FractionalAvgPool()(x)
    x = _inverted_residual(x, 96, 32, 1)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(classes)(x))


def cifar_resnet(shape, classes):
    """He et al.'s CIFAR ResNet-20: 3x3 layers of 16, 32 and 64 channels at
    32x32, 16x16 and 8x8, with batch normalisation; 1x1 stride-2 shortcuts."""
    inputs = keras.Input(shape)
    x = keras.layers.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
    for stage, width in enumerate((16, 32, 64)):
        for block in range(3):
            stride = 2 if stage > 0 and block == 0 else 1
            y = keras.layers.Conv2D(width, 3, strides=stride, padding="same", use_bias=False)(x)
            y = keras.layers.ReLU()(keras.layers.BatchNormalization()(y))
            y = keras.layers.Conv2D(width, 3, padding="same", use_bias=False)(y)
            y = keras.layers.BatchNormalization()(y)
            if stride != 1 or x.shape[-1] != width:
                x = keras.layers.Conv2D(width, 1, strides=stride, use_bias=False)(x)
            x = keras.layers.ReLU()(keras.layers.Add()([x, y]))
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(classes)(x))


def regnetx_200mf(shape, classes):
    """Radosavovic et al.'s RegNetX-200MF ("Designing Network Design Spaces",
    2020; Keras 3 has no RegNet): stages of 24, 56, 152 and 368 channels
    (1, 1, 4 and 7 blocks), each block a 1x1, a grouped 3x3 (groups of 8
    channels, stride 2 in a stage's first block) and a 1x1 convolution with
    batch normalisation, and a 1x1 stride-2 shortcut where the shape
    changes."""
    def conv_bn(x, width, kernel, stride=1, groups=1, relu=True):
        x = keras.layers.Conv2D(width, kernel, strides=stride, padding="same", groups=groups, use_bias=False)(x)
        x = keras.layers.BatchNormalization()(x)
        return keras.layers.ReLU()(x) if relu else x

    inputs = keras.Input(shape)
    x = conv_bn(inputs, 32, 3, stride=2)
    for width, depth in ((24, 1), (56, 1), (152, 4), (368, 7)):
        for block in range(depth):
            stride = 2 if block == 0 else 1
            y = conv_bn(x, width, 1)
            y = conv_bn(y, width, 3, stride=stride, groups=width // 8)
            y = conv_bn(y, width, 1, relu=False)
            if stride != 1 or x.shape[-1] != width:
                x = conv_bn(x, width, 1, stride=stride, relu=False)
            x = keras.layers.ReLU()(keras.layers.Add()([x, y]))
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(classes)(x))


def dcgan(shape, classes):
    """Radford et al.'s DCGAN generator (a 4x4x256 seed upsampled by 5x5
    stride-2 Conv2DTranspose layers to 32x32x3) feeding its discriminator
    (5x5 stride-2 convolutions), trained end to end as one classifier: every
    gradient of both halves runs."""
    del shape
    inputs = keras.Input((100,))
    x = keras.layers.Dense(4 * 4 * 256, use_bias=False)(inputs)
    x = keras.layers.Reshape((4, 4, 256))(keras.layers.LeakyReLU()(x))
    for width in (128, 64):
        x = keras.layers.Conv2DTranspose(width, 5, strides=2, padding="same", use_bias=False)(x)
        x = keras.layers.LeakyReLU()(keras.layers.BatchNormalization()(x))
    x = keras.layers.Conv2DTranspose(3, 5, strides=2, padding="same", activation="tanh")(x)
    for width in (64, 128):
        x = keras.layers.Conv2D(width, 5, strides=2, padding="same")(x)
        x = keras.layers.LeakyReLU()(x)
    x = keras.layers.Flatten()(x)
    return keras.Model(inputs, keras.layers.Dense(classes)(x))


def _application(name):
    def make(shape, classes):
        return getattr(keras.applications, name)(input_shape=shape, weights=None, classes=classes,
                                                 classifier_activation=None)

    return make


# name: (builder, input shape, batch). Image sizes and batches are what a
# 2-core machine steps through in about a second or less per step.
MODELS = {
    "mobilenet_v2": (_application("MobileNetV2"), (128, 128, 3), 8),
    "mobilenet_v3_small": (_application("MobileNetV3Small"), (128, 128, 3), 8),
    "efficientnet_b0": (_application("EfficientNetB0"), (128, 128, 3), 8),
    "resnet50": (_application("ResNet50"), (128, 128, 3), 8),
    "densenet121": (_application("DenseNet121"), (96, 96, 3), 8),
    "xception": (_application("Xception"), (96, 96, 3), 8),
    "regnetx_200mf": (regnetx_200mf, (128, 128, 3), 8),
    "cifar_resnet20": (cifar_resnet, (32, 32, 3), 64),
    "dcgan": (dcgan, (100,), 32),
    "fractional_net": (fractional_net, (64, 64, 3), 8),
}
CLASSES = 10


def make_step(name, use_gradtune):
    """A training step of a fresh model `name` (same seed, same weights on
    both sides), traced with TF's gradients or with gradtune's; how many
    ops of each type its graph holds; and its layers, in order."""
    builder, shape, batch = MODELS[name]
    keras.utils.set_random_seed(1234)
    model = builder(shape, CLASSES)
    optimizer = keras.optimizers.SGD(learning_rate=0.01)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(5)
    images = tf.constant(rng.standard_normal((batch,) + shape), dtype=tf.float32)
    labels = tf.constant(rng.integers(0, CLASSES, batch))

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
    return step, Counter(op.type for op in concrete.graph.get_operations()), model.layers


def train_side_by_side(name, steps_count):
    """Both sides of model `name`, their steps interleaved: per side the
    losses, the first step's gradients, the step times (s) and the graph's
    op types."""
    steps = {"tf": make_step(name, False), "gradtune": make_step(name, True)}
    out = {side: {"losses": [], "grads": None, "times": [], "cpu": [], "types": types}
           for side, (_, types, _) in steps.items()}
    for i in range(steps_count):
        for side in ("tf", "gradtune") if i % 2 == 0 else ("gradtune", "tf"):
            cpu_start = process_cpu_seconds()
            start = time.perf_counter()
            loss, grads = steps[side][0]()
            loss = float(loss)
            out[side]["times"].append(time.perf_counter() - start)
            out[side]["cpu"].append(process_cpu_seconds() - cpu_start)
            out[side]["losses"].append(loss)
            if out[side]["grads"] is None:
                out[side]["grads"] = [g.numpy() for g in grads]
    return out["tf"], out["gradtune"], {side: (step, layers) for side, (step, _, layers) in steps.items()}


def summary(times):
    """Median and interquartile spread (% of the median) of step times in
    ms, the first (tracing) step left out."""
    ms = sorted(t * 1e3 for t in times[1:])
    q = statistics.quantiles(ms, n=4) if len(ms) >= 2 else [ms[0]] * 3
    med = statistics.median(ms)
    return med, 100 * (q[2] - q[0]) / med


# --- The per-op breakdown -----------------------------------------------------

GRADIENT_OPS = (
    "Conv2DBackpropInput",
    "Conv2DBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter",
    "FractionalAvgPoolGrad",
    "Conv2DBackpropFilterWithBias",  # oneDNN's filter gradient fused with its bias gradient
)
# The per-call table of the Markdown report: this many rows.
PER_CALL_ROWS = 15
# A kernel's event on an executor thread: "node name:OpType" (TraceMe).
KERNEL_EVENT = re.compile(r"[^:]+:([A-Za-z_][A-Za-z0-9_]*)(#.*)?")


def op_type(kind):
    """TensorFlow's op type of a traced kernel's type, with oneDNN's
    rewrites and gradtune's prefix folded back, and the prefix."""
    for prefix in ("_MklNative", "_Mkl", "Gradtune"):
        if kind.startswith(prefix):
            return kind[len(prefix):], prefix
    return kind, ""


def profile_steps(step, count):
    """Runs `step` `count` times under TensorFlow's profiler; per op type,
    the summed wall time (ms) of its kernels and their number of calls, per
    step, and which implementation ran them (TF, oneDNN or gradtune); and
    per gradient call (node name), its op type and ms per step."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        for _ in range(count):
            float(step()[0])
        tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        (path,) = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
        with open(path, "rb") as f:
            space.ParseFromString(f.read())
    times = defaultdict(float)
    calls = defaultdict(int)
    served = defaultdict(set)
    per_call = defaultdict(lambda: {"op": "", "ms": 0.0})
    for plane in space.planes:
        if plane.name != "/host:CPU":
            continue
        for line in plane.lines:
            # The executor's threads ("tf_Compute/...") run the kernels.
            if not line.name.startswith("tf_Compute"):
                continue
            for event in line.events:
                match = KERNEL_EVENT.fullmatch(plane.event_metadata[event.metadata_id].name)
                if not match:
                    continue
                kind, prefix = op_type(match.group(1))
                times[kind] += event.duration_ps / 1e9 / count
                calls[kind] += 1
                if kind in GRADIENT_OPS:
                    node = plane.event_metadata[event.metadata_id].name.split(":")[0]
                    per_call[node]["op"] = kind
                    per_call[node]["ms"] += event.duration_ps / 1e9 / count
                served[kind].add({"_MklNative": "oneDNN", "_Mkl": "oneDNN", "Gradtune": "gradtune"}.get(prefix, "TF"))
    by_type = {kind: {"ms": times[kind], "calls": calls[kind] / count, "by": sorted(served[kind])} for kind in times}
    return by_type, dict(per_call)


def layer_of(node, index):
    """The place in the model (`index`: layer name -> place) of the layer
    whose gradient node `node` is
    (\"gradient_tape/functional_1/conv2d_3_1/convolution/Conv2DBackpropFilter\"):
    the first path component that is a layer's name with the numeric suffix
    TensorFlow's name scopes add (\"conv2d_3\" + \"_1\"), else exactly a
    layer's name. None when no component is."""
    for part in node.split("/"):
        stem = re.sub(r"_\d+$", "", part)
        if stem != part and stem in index:
            return index[stem]
        if part in index:
            return index[part]
    return None


def describe_layer(layer):
    """A convolution layer as "name: KxK sS, HxWxC -> HxWxO" (its input's and
    output's shapes), else its name."""
    try:
        kernel = tuple(layer.kernel.shape)
        strides = getattr(layer, "strides", (1, 1))
        shape = lambda t: "x".join(str(d) for d in tuple(t.shape)[1:])  # noqa: E731
        return "%s: %dx%d s%d, %s -> %s" % (layer.name, kernel[0], kernel[1], strides[0], shape(layer.input),
                                            shape(layer.output))
    except (AttributeError, IndexError, TypeError, ValueError):
        return layer.name


# --- Reporting ----------------------------------------------------------------


def gradient_error(got, want):
    """Normwise relative error of all of a step's gradients together (one
    vector of every variable's), and the worst of the variables whose
    gradient is not rounding noise (norm >= 1e-3 of the largest: a bias
    before batch normalisation has a gradient of zero in exact arithmetic)."""
    diff = np.sqrt(sum(float(np.sum((g - w).astype(np.float64) ** 2)) for g, w in zip(got, want)))
    norms = [float(np.linalg.norm(w.ravel())) for w in want]
    total = np.sqrt(sum(n * n for n in norms))
    worst = max((float(np.linalg.norm((g - w).ravel())) / n for g, w, n in zip(got, want, norms)
                 if n >= 1e-3 * max(norms)), default=0.0)
    return diff / max(total, 1e-30), worst


def model_row(name, steps_count):
    want, got, steps = train_side_by_side(name, steps_count)
    tf_ms, tf_spread = summary(want["times"])
    gt_ms, gt_spread = summary(got["times"])
    tf_cpu, _ = summary(want["cpu"])
    gt_cpu, _ = summary(got["cpu"])
    error, worst = gradient_error(got["grads"], want["grads"])
    # Which side serves the gradient ops of gradtune's step (the autotune
    # floor may hand a signature to TensorFlow's kernel).
    by_gradtune = sum(n for t, n in got["types"].items() if t.startswith("Gradtune") and t[8:] in GRADIENT_OPS)
    by_tf = sum(n for t, n in got["types"].items() if t in GRADIENT_OPS)
    _, shape, batch = MODELS[name]
    return {
        "model": name,
        "input": "x".join(map(str, shape)),
        "batch": batch,
        "tf_ms": tf_ms,
        "tf_spread": tf_spread,
        "gradtune_ms": gt_ms,
        "gradtune_spread": gt_spread,
        "speedup": tf_ms / gt_ms,
        "tf_cpu_ms": tf_cpu,
        "gradtune_cpu_ms": gt_cpu,
        "cpu_ratio": tf_cpu / gt_cpu,
        "gradient_rel_error": error,
        "worst_variable_rel_error": worst,
        "served_by_gradtune": by_gradtune,
        "served_by_tensorflow": by_tf,
    }, steps


def breakdown_rows(steps, count):
    """The breakdown of one model: per op type (rows), and per gradient call
    (calls), the two sides' calls lined up by their layer's place in the
    model."""
    profiled = {side: profile_steps(step, count) for side, (step, _) in steps.items()}
    profiles = {side: by_type for side, (by_type, _) in profiled.items()}
    kinds = set(profiles["tf"]) | set(profiles["gradtune"])
    rows = []
    for kind in kinds:
        t, g = profiles["tf"].get(kind, {}), profiles["gradtune"].get(kind, {})
        rows.append({
            "op": kind,
            "gradient": kind in GRADIENT_OPS,
            "tf_ms": t.get("ms", 0.0),
            "tf_calls": t.get("calls", 0),
            "tf_by": t.get("by", []),
            "gradtune_ms": g.get("ms", 0.0),
            "gradtune_calls": g.get("calls", 0),
            "gradtune_by": g.get("by", []),
        })
    rows.sort(key=lambda r: -max(r["tf_ms"], r["gradtune_ms"]))
    calls = {}
    for side, (_, per_call) in profiled.items():
        layers = steps[side][1]
        index = {layer.name: i for i, layer in enumerate(layers)}
        for node, c in per_call.items():
            i = layer_of(node, index)
            name = describe_layer(layers[i]) if i is not None else node
            # oneDNN's filter gradient fused with the bias gradient is the
            # layer's filter gradient (its time counts the bias's too).
            fused = c["op"] == "Conv2DBackpropFilterWithBias"
            op = "Conv2DBackpropFilter" if fused else c["op"]
            row = calls.setdefault((i if i is not None else node, op),
                                   {"layer": name, "op": op, "tf_ms": 0.0, "gradtune_ms": 0.0})
            if fused:
                row["op"] = op + " (TF: with the bias gradient)"
            if side == "tf":
                row["layer"] = name  # TF's side names it
            row[side + "_ms"] += c["ms"]
    ordered = [calls[k] for k in sorted(calls, key=lambda k: (str(type(k[0])), k[0], k[1]))]
    return {"ops": rows, "calls": ordered}


def geomean(values):
    return float(np.exp(np.mean(np.log(values)))) if values else float("nan")


def markdown(rows, breakdown, steps_count, cpu):
    lines = [
        "## Keras training steps (bench/keras_models.py)",
        "",
        "%s. Each model trained with SGD from the same weights on the same batch, "
        "%d steps per side interleaved in one process; median step time and spread (IQR, %% of "
        "the median), first step left out. Speedup: TensorFlow's step time / gradtune's "
        "(> 1: faster with gradtune). Gradient calls: the gradient ops of gradtune's traced step, by the "
        "side that serves them (the autotune floor, GRADTUNE_TF_AUTOTUNE, hands a signature to TensorFlow's "
        "kernel where that measured faster). Gradients' error: normwise, all of the first step's "
        "gradients against TensorFlow's. CPU ms: the median step's CPU time, every thread of the process "
        "(user + system); TensorFlow runs independent ops at once, so on a busy machine a step's time follows "
        "the CPU work of its kernels more than any one kernel's time alone." % (cpu, steps_count),
        "",
        "| model | input | batch | TensorFlow ms | spread | gradtune ms | spread | speedup "
        "| CPU ms TF / gradtune | gradient calls served by gradtune / TF | gradients' rel. error |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append("| %s | %s | %d | %.1f | %.0f%% | %.1f | %.0f%% | **%.2fx** | %.0f / %.0f (%.2fx) | %d / %d | %.1e |" % (
            r["model"], r["input"], r["batch"], r["tf_ms"], r["tf_spread"], r["gradtune_ms"],
            r["gradtune_spread"], r["speedup"], r["tf_cpu_ms"], r["gradtune_cpu_ms"], r["cpu_ratio"],
            r["served_by_gradtune"], r["served_by_tensorflow"], r["gradient_rel_error"]))
    lines += ["", "Geomean speedup over the models: **%.2fx**." % geomean([r["speedup"] for r in rows])]
    for name, tables in breakdown.items():
        ops = tables["ops"]
        lines += [
            "",
            "### Where one step of %s goes (ms per step, TensorFlow's profiler)" % name,
            "",
            "Per op type: the summed wall time of its kernels inside one step on each side, and who "
            "ran them (TF: Eigen, oneDNN: TF's oneDNN kernels). Gradient ops first, then the rest "
            "by time.",
            "",
            "| op | calls | TensorFlow's step: ms (by) | gradtune's step: ms (by) | ratio |",
            "|---|---|---|---|---|",
        ]
        ordered = [r for r in ops if r["gradient"]] + [r for r in ops if not r["gradient"]][:12]
        for r in ordered:
            ratio = "%.2fx" % (r["tf_ms"] / r["gradtune_ms"]) if r["gradtune_ms"] > 0 and r["tf_ms"] > 0 else "-"
            lines.append("| %s | %g | %.2f (%s) | %.2f (%s) | %s |" % (
                "**%s**" % r["op"] if r["gradient"] else r["op"], max(r["tf_calls"], r["gradtune_calls"]),
                r["tf_ms"], ", ".join(r["tf_by"]) or "-", r["gradtune_ms"], ", ".join(r["gradtune_by"]) or "-", ratio))
        total = {side: sum(r[side + "_ms"] for r in ops if r["gradient"]) for side in ("tf", "gradtune")}
        lines.append("| gradient ops, all | | %.2f | %.2f | %.2fx |" % (
            total["tf"], total["gradtune"], total["tf"] / total["gradtune"] if total["gradtune"] else float("nan")))
        # Amdahl: the kernels of both executor threads together, so a share
        # of kernel time, not of the step's wall time.
        share = total["tf"] / sum(r["tf_ms"] for r in ops)
        lines += ["", "Gradient ops are %.0f%% of the kernel time of TensorFlow's step: even if they took no time, "
                  "the step could be at most %.2fx faster; %.2fx faster gradient ops make a step at most %.2fx "
                  "faster." % (100 * share, 1 / (1 - share), total["tf"] / total["gradtune"] if total["gradtune"] else
                               float("nan"), 1 / (1 - share + share * total["gradtune"] / total["tf"])
                               if total["tf"] else float("nan"))]
        # The calls where the two sides differ most (all of them: --json).
        calls = tables["calls"]
        shown = sorted(calls, key=lambda c: -abs(c["tf_ms"] - c["gradtune_ms"]))[:PER_CALL_ROWS]
        lines += [
            "",
            "Per gradient call: the %d of %d calls where the two sides differ most, in the model's layer order "
            "(the layer's filter, stride, input and output shapes; ms per step on each side; all calls in --json):"
            % (len(shown), len(calls)),
            "",
            "| layer | op | TensorFlow's step ms | gradtune's step ms | ratio |",
            "|---|---|---|---|---|",
        ]
        for c in [c for c in calls if c in shown]:
            ratio = "%.2fx" % (c["tf_ms"] / c["gradtune_ms"]) if c["tf_ms"] > 0 and c["gradtune_ms"] > 0 else "-"
            lines.append("| %s | %s | %.3f | %.3f | %s |" % (c["layer"], c["op"], c["tf_ms"], c["gradtune_ms"], ratio))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma list of: " + ", ".join(MODELS))
    parser.add_argument("--steps", type=int, default=12, help="timed steps per side and model")
    parser.add_argument("--breakdown", default="", help="comma list of models to profile op by op")
    parser.add_argument("--profile-steps", type=int, default=3)
    parser.add_argument("--markdown", help="also write the tables as Markdown to this file")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    parser.add_argument("--inter-op-threads", type=int, default=0,
                        help="TensorFlow's inter-op threads (0: its default). 1 runs one op at a time: each kernel's "
                             "time in the breakdown is then its own, not shared with ops running beside it")
    parser.add_argument("--policy", default="float32", choices=("float32", "mixed_bfloat16"),
                        help="Keras dtype policy of the models (mixed_bfloat16: bfloat16 gradients, float32 weights)")
    args = parser.parse_args()
    if args.inter_op_threads:
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    keras.mixed_precision.set_global_policy(args.policy)
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names + [m for m in args.breakdown.split(",") if m] if m not in MODELS]
    if unknown:
        parser.error("unknown model(s) %s; known: %s" % (", ".join(unknown), ", ".join(MODELS)))
    rows, breakdown = [], {}
    for name in names:
        print("[keras_models] %s: %d steps per side" % (name, args.steps), file=sys.stderr, flush=True)
        row, steps = model_row(name, args.steps)
        rows.append(row)
        print("[keras_models] %s: TF %.1f ms, gradtune %.1f ms: %.2fx" % (
            name, row["tf_ms"], row["gradtune_ms"], row["speedup"]), file=sys.stderr, flush=True)
        if name in args.breakdown.split(","):
            breakdown[name] = breakdown_rows(steps, args.profile_steps)
    machine = "%s, %d threads" % (autotune.cpu_model(), os.cpu_count())
    if args.policy != "float32":
        machine += ", Keras policy " + args.policy
    if args.inter_op_threads:
        machine += ", %d inter-op thread(s)" % args.inter_op_threads
    text = markdown(rows, breakdown, args.steps, machine)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"models": rows, "breakdown": breakdown}, f, indent=1)


if __name__ == "__main__":
    main()
