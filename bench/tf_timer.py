#!/usr/bin/env python3
"""TensorFlow's own time for gradtune-bench's calls, in TensorFlow's venv.

gradtune-bench starts one of these per TF CPU path (TF_ENABLE_ONEDNN_OPTS=1:
pip TF's default, oneDNN kernels; =0: the Eigen kernels) with .tf-venv's
python (scripts/tf-fixtures.sh makes it) and interleaves its samples with
gradtune's, as it does oneDNN's. The calls run inside a tf.function, as a
training step runs them, all of a sample's calls in one tf.function call
(python/gradtune_tf/timing.py), so that a sample times TF's kernels and not
the Python call of a tf.function, which costs more than a small kernel. This process times its
own calls, so the pipe's round trip is not counted.

Protocol, one JSON object per line:
  -> {"setup": CALL}  (CALL: gradtune's call JSON: op, inputs, attrs)
  <- {"ok": true} or {"ok": false, "error": "..."}
  -> {"run": K}       run the call K times
  <- {"ms": total milliseconds of the K calls} or {"error": "..."}
Environment: TF_ENABLE_ONEDNN_OPTS (set before TF is imported), and
GRADTUNE_TF_THREADS, TensorFlow's intra-op threads (gradtune's thread count).
"""
import importlib.util
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# python/gradtune_tf/timing.py by its path (the package needs libgradtune_tf.so).
_spec = importlib.util.spec_from_file_location(
    "gradtune_timing", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "gradtune_tf", "timing.py"))
_timing = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_timing)
tf_loop = _timing.tf_loop

# gradtune's thread count as TensorFlow's intra-op threads; the inter-op
# threads left at TensorFlow's default, as a training step has them. Held to
# one, TF's oneDNN filter gradient of a 32x32x16 3x3 layer at N=64 took
# 1.60-1.83 ms against 1.30-1.43 ms (this protocol, 9 samples of 20 calls,
# Sapphire Rapids, 2 cores): a baseline slower than users see.
threads = int(os.environ.get("GRADTUNE_TF_THREADS", "2"))
tf.config.threading.set_intra_op_parallelism_threads(threads)


def tensor(spec, rng):
    dtype = tf.as_dtype(spec["dtype"])
    if "values" in spec:
        return tf.constant(spec["values"], dtype=dtype)
    data = rng.standard_normal(spec["shape"]).astype(np.float32)
    return tf.cast(tf.constant(data), dtype)


def setup(call):
    """The call's runner: run(k) runs it k times and returns when done."""
    rng = np.random.default_rng(42)
    inputs = {name: tensor(spec, rng) for name, spec in call["inputs"].items()}
    attrs = call.get("attrs", {})
    calls = tf_loop(getattr(tf.raw_ops, call["op"]), inputs, attrs)
    calls(tf.constant(1))  # trace and warm up
    return lambda k: calls(tf.constant(k))


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    function = None
    for line in sys.stdin:
        request = json.loads(line)
        if "setup" in request:
            try:
                function = setup(request["setup"])
                reply({"ok": True})
            except Exception as e:  # TF refuses the call: no column for it
                function = None
                reply({"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
        elif "run" in request:
            if function is None:
                reply({"error": "no call set up"})
                continue
            start = time.perf_counter()
            function(int(request["run"]))
            reply({"ms": 1e3 * (time.perf_counter() - start)})


if __name__ == "__main__":
    main()
