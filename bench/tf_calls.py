"""A suite's gradient calls inside TensorFlow: TensorFlow's kernel and
gradtune's op (libgradtune_tf.so) side by side in one process, wall time
and CPU time per call.

    PYTHONPATH=python .tf-venv/bin/python bench/tf_calls.py SUITE [--intra-op-threads N] [--samples 7]

SUITE is a gradtune-bench suite file (bench/suites/zoo.txt's format; the
dense and depthwise convolution gradients). A sample runs the call inside
one tf.function, as many times as make the slower side's sample last 50 ms
(python/gradtune_tf/timing.py, as the autotune floor times), the two
sides' samples interleaved; the table gives
median wall ms and CPU ms per call (every thread of the process, user +
system) and the ratios, TensorFlow's over gradtune's (> 1: gradtune
faster). Both sides allocate their outputs through TensorFlow and run on
TensorFlow's threads, as in a training step; gradtune-bench times gradtune
in its own process and TensorFlow in another, which is not what a step
sees. In a step TensorFlow runs independent ops at once, so the CPU ratio
is the one that predicts the step (bench/keras_models.py's CPU column).
"""

import argparse
import math
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from gradtune_tf import ops  # noqa: E402
from gradtune_tf.timing import process_cpu_seconds, tf_loop  # noqa: E402

# A sample's calls run in one tf.function call, which costs 0.6-1.6 ms
# beyond its op calls: each sample runs enough calls that the slower side's
# sample lasts SAMPLE_MS (10 calls at least), the same count on both sides.
SAMPLE_MS = 50
OPS = {
    "Conv2DBackpropInput": ops.gradtune_conv2d_backprop_input,
    "Conv2DBackpropFilter": ops.gradtune_conv2d_backprop_filter,
    "DepthwiseConv2dNativeBackpropInput": ops.gradtune_depthwise_conv2d_native_backprop_input,
    "DepthwiseConv2dNativeBackpropFilter": ops.gradtune_depthwise_conv2d_native_backprop_filter,
}


def parse_row(line):
    """A suite row as (op, fields, flags), its sizes as integers; None for
    comments and blank lines. ValueError for a row that names no op of
    OPS, lacks a size, or has one that is no integer."""
    words = line.split("#", 1)[0].split()
    if not words:
        return None
    op = words[0]
    if op not in OPS:
        raise ValueError("op %r is not one of %s" % (op, ", ".join(OPS)))
    fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    flags = {w for w in words[1:] if "=" not in w}
    missing = [k for k in ("N", "H", "W", "C", "f", "s") + (() if op.startswith("Depthwise") else ("K",))
               if k not in fields]
    if missing:
        raise ValueError("no %s= given" % "=, ".join(missing))
    for key in set(fields) - {"id", "T"}:
        fields[key] = int(fields[key])
    fields["T"] = tf.as_dtype(fields.get("T", "float32"))
    return op, fields, flags


def call_of(op, fields, flags):
    """The row's inputs and attrs, and a short description."""
    n, h, w, c = (fields[k] for k in "NHWC")
    f, s, d = fields["f"], fields["s"], fields.get("d", 1)
    dtype = fields["T"]
    depthwise = op.startswith("Depthwise")
    multiplier = fields.get("M", 1)
    groups = fields.get("G", 1)
    k = c * multiplier if depthwise else fields["K"]
    nchw = "NCHW" in flags
    padding = "VALID" if "VALID" in flags else "SAME"
    filter_shape = [f, f, c, multiplier] if depthwise else [f, f, c // groups, k]
    # The forward output's size, as TF computes it.
    extent = (f - 1) * d + 1
    out = [(x + s - 1) // s if padding == "SAME" else (x - extent) // s + 1 for x in (h, w)]
    x_shape, dy_shape = [n, h, w, c], [n, out[0], out[1], k]
    tile = [1, s, s, 1]
    dilations = [1, d, d, 1]
    if nchw:
        x_shape, dy_shape = [n, c, h, w], [n, k, out[0], out[1]]
        tile, dilations = [1, 1, s, s], [1, 1, d, d]
    rnd = lambda shape: tf.cast(tf.random.normal(shape, seed=1), dtype)  # noqa: E731
    attrs = {"strides": tile, "padding": padding, "data_format": "NCHW" if nchw else "NHWC", "dilations": dilations}
    if op.endswith("Input"):
        inputs = {"input_sizes": tf.constant(x_shape), "filter": rnd(filter_shape), "out_backprop": rnd(dy_shape)}
    else:
        inputs = {"input": rnd(x_shape), "filter_sizes": tf.constant(filter_shape), "out_backprop": rnd(dy_shape)}
    text = "%s N=%d %dx%dx%d f%d s%d%s%s%s%s %s" % (
        fields.get("id", "-"), n, h, w, c, f, s, " d%d" % d if d > 1 else "", " G%d" % groups if groups > 1 else "",
        " M%d" % multiplier if multiplier > 1 else "", " NCHW" if nchw else "", dtype.name)
    return inputs, attrs, text


def relative_difference(loops):
    """Normwise difference of the two sides' results (both sides must
    compute the same call)."""
    want, got = (tf.cast(loop(tf.constant(1)), tf.float64).numpy() for loop in loops.values())
    return float(np.linalg.norm((got - want).ravel()) / max(np.linalg.norm(want.ravel()), 1e-30))


def measure(loops, samples):
    """Median wall and CPU ms per call of each side, samples interleaved."""
    slowest = 0.0
    for loop in loops.values():
        loop(tf.constant(10)).numpy()  # traced and warm
        start = time.perf_counter()
        loop(tf.constant(10)).numpy()
        slowest = max(slowest, (time.perf_counter() - start) * 1e3 / 10)
    calls = max(10, min(1000, math.ceil(SAMPLE_MS / max(slowest, 1e-3))))
    count = tf.constant(calls)
    wall = {side: [] for side in loops}
    cpu = {side: [] for side in loops}
    for i in range(samples):
        for side in list(loops) if i % 2 == 0 else list(loops)[::-1]:
            c0, t0 = process_cpu_seconds(), time.perf_counter()
            loops[side](count).numpy()
            wall[side].append((time.perf_counter() - t0) * 1e3 / calls)
            cpu[side].append((process_cpu_seconds() - c0) * 1e3 / calls)
    return ({side: statistics.median(v) for side, v in wall.items()},
            {side: statistics.median(v) for side, v in cpu.items()})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite")
    parser.add_argument("--intra-op-threads", type=int, default=2, help="TensorFlow's intra-op threads")
    parser.add_argument("--samples", type=int, default=7)
    args = parser.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(args.intra_op_threads)
    rows = []
    with open(args.suite) as f:
        for number, line in enumerate(f, 1):
            try:
                row = parse_row(line)  # every row checked before anything is timed
                if row:
                    rows.append(row)
            except (ValueError, TypeError) as e:
                print("tf_calls: %s:%d: %s (%s)" % (args.suite, number, e, line.strip()), file=sys.stderr)
                return 2
    print("| op | call | TF wall ms | gradtune wall ms | TF CPU ms | gradtune CPU ms | wall TF/gradtune "
          "| CPU TF/gradtune | results' rel. difference |")
    print("|---|---|---|---|---|---|---|---|---|")
    logs = {"wall": [], "cpu": []}
    for op, fields, flags in rows:
        inputs, attrs, text = call_of(op, fields, flags)
        loops = {"tf": tf_loop(getattr(tf.raw_ops, op), inputs, attrs), "gradtune": tf_loop(OPS[op], inputs, attrs)}
        try:
            difference = relative_difference(loops)
            wall, cpu = measure(loops, args.samples)
        except (tf.errors.OpError, ValueError, TypeError) as e:
            print("| %s | %s | %s |" % (op, text, str(e).splitlines()[0][:120]), flush=True)
            continue
        logs["wall"].append(math.log(wall["tf"] / wall["gradtune"]))
        logs["cpu"].append(math.log(cpu["tf"] / cpu["gradtune"]))
        print("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.1e |" % (
            op, text, wall["tf"], wall["gradtune"], cpu["tf"], cpu["gradtune"], wall["tf"] / wall["gradtune"],
            cpu["tf"] / cpu["gradtune"], difference), flush=True)
    if logs["wall"]:
        print("\nGeomean over %d calls, TensorFlow / gradtune: wall %.2fx, CPU %.2fx (%d intra-op threads)." % (
            len(logs["wall"]), math.exp(statistics.mean(logs["wall"])), math.exp(statistics.mean(logs["cpu"])),
            args.intra_op_threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
