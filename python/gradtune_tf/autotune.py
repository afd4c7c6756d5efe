"""The floor under use_for_gradients(): never slower than TensorFlow's own
kernel on any call.

The first time a gradient function meets a call signature (op, dtype, static
shapes, attrs), it times gradtune's op against TensorFlow's own on random
tensors of those shapes, side by side (alternating samples, medians), and
keeps the faster, as cuDNN's benchmark mode and TensorFlow's GPU convolution
autotuner do. The choice is cached for the process and in a file that later
runs reuse: one file per context (the library's build, TensorFlow's version,
the CPU, TensorFlow's intra-op thread count), so a rebuilt library, another
TensorFlow or another machine measures again.

    GRADTUNE_TF_AUTOTUNE=0           gradtune serves every call (no timing)
    GRADTUNE_TF_AUTOTUNE_CACHE=DIR   the cache's folder (default
                                     ~/.cache/gradtune/tf-autotune)
    GRADTUNE_VERBOSE=1               one line per choice on stderr:
      gradtune_tf_autotune,<op>,<signature>,<side>,gradtune <ms>,tensorflow <ms>,<measured|cached>

A signature whose shapes are not all known when the gradient is built (a
tf.function traced with unknown dimensions) is served by gradtune.
"""

import hashlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time

import numpy as np
import tensorflow as tf

from .timing import tf_loop

GRADTUNE = "gradtune"
TENSORFLOW = "tensorflow"
_SAMPLES = 7  # per side, alternating
_SAMPLE_MS = 10.0  # a sample runs the op about this long (a tf.function call's own cost, ~0.3 ms, amortised)
_FILE_VERSION = 1


def enabled():
    return os.environ.get("GRADTUNE_TF_AUTOTUNE", "1") != "0"


def _verbose():
    v = os.environ.get("GRADTUNE_VERBOSE", "")
    return bool(v) and v != "0"


def cpu_model():
    """The CPU's model name (/proc/cpuinfo), as the cache's context and the
    model benchmark's report name it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown cpu"


class Call:
    """One gradient call: TF's raw op name, gradtune's op function, T, the
    inputs and the attrs. Each input is (name, kind, value):
      "tensor"    a T tensor; value: its static shape (random values)
      "shape"     an int32 shape vector (FractionalAvgPoolGrad's: int64);
                  value: the shape
      "sequence"  a fractional pooling sequence (int64); value: (cells,
                  extent), timed with a regular sequence of those sizes
    The signature, the cache key, is all of it."""

    def __init__(self, op, gradtune_op, dtype, inputs, attrs):
        self.op = op
        self.gradtune_op = gradtune_op
        self.dtype = tf.as_dtype(dtype)
        self.inputs = inputs
        self.attrs = attrs

    def signature(self):
        parts = [self.op, self.dtype.name]
        parts += ["%s=%s" % (name, "x".join(map(str, value))) for name, _, value in self.inputs]
        parts += ["%s=%s" % (k, v.decode() if isinstance(v, bytes) else v) for k, v in sorted(self.attrs.items())]
        return " ".join(parts)

    def tensors(self, rng):
        out = {}
        for name, kind, value in self.inputs:
            if kind == "tensor":
                out[name] = tf.cast(tf.constant(rng.standard_normal(value).astype(np.float32)), self.dtype)
            elif kind == "sequence":
                cells, extent = value
                out[name] = tf.constant([i * extent // cells for i in range(cells + 1)], dtype=tf.int64)
            else:
                out[name] = tf.constant(value, dtype=tf.int64 if self.op == "FractionalAvgPoolGrad" else tf.int32)
        return out


def _time_side_by_side(ops, inputs, attrs):
    """Median milliseconds per call of each of `ops` (name -> op function)
    on `inputs` and `attrs`, samples alternating between the sides."""
    loops, counts = {}, {}
    for name, op in ops.items():
        loops[name] = tf_loop(op, inputs, attrs)
        loops[name](tf.constant(4))  # traced and warm
        start = time.perf_counter()
        loops[name](tf.constant(4))
        ms = max((time.perf_counter() - start) * 1e3 / 4, 1e-3)
        counts[name] = max(2, min(1000, int(_SAMPLE_MS / ms) + 1))
        loops[name](tf.constant(counts[name]))
    samples = {name: [] for name in ops}
    for i in range(_SAMPLES):
        order = list(ops) if i % 2 == 0 else list(reversed(list(ops)))
        for name in order:
            start = time.perf_counter()
            loops[name](tf.constant(counts[name]))
            samples[name].append((time.perf_counter() - start) * 1e3 / counts[name])
    return {name: statistics.median(values) for name, values in samples.items()}


class Autotuner:
    """The choices of one process, backed by the cache file of its context."""

    def __init__(self, library_path):
        self._lock = threading.Lock()
        self._said = set()  # signatures whose choice was reported (GRADTUNE_VERBOSE)
        stat = os.stat(library_path)
        self.context = {
            "library": "%s size=%d mtime=%d" % (os.path.abspath(library_path), stat.st_size, int(stat.st_mtime)),
            "tensorflow": tf.__version__,
            "cpu": cpu_model(),
            "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count(),
            "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        }
        digest = hashlib.sha1(json.dumps(self.context, sort_keys=True).encode()).hexdigest()[:16]
        folder = os.environ.get("GRADTUNE_TF_AUTOTUNE_CACHE") or os.path.join(
            os.path.expanduser("~"), ".cache", "gradtune", "tf-autotune")
        self.path = os.path.join(folder, digest + ".json")
        self._choices = self._read().get("choices", {})

    def _read(self):
        try:
            with open(self.path) as f:
                data = json.load(f)
            if data.get("version") == _FILE_VERSION and data.get("context") == self.context:
                return data
        except (OSError, ValueError):
            pass
        return {}

    def _write(self, signature, choice):
        """Adds one choice to the file (read, merge, write atomically: other
        processes' choices are kept). An unwritable cache only warns."""
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            choices = self._read().get("choices", {})
            choices[signature] = choice
            data = {"version": _FILE_VERSION, "context": self.context, "choices": choices}
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), prefix=".tf-autotune-")
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError as e:
            print("gradtune_tf: cannot write the autotune cache %s: %s" % (self.path, e), file=sys.stderr)

    def choose(self, call):
        """GRADTUNE or TENSORFLOW for `call`, measured once per signature."""
        signature = call.signature()
        with self._lock:
            choice = self._choices.get(signature)
            how = "cached"
            if choice is None:
                choice = self._measure(call)
                self._choices[signature] = choice
                self._write(signature, choice)
                how = "measured"
            said = signature in self._said
            self._said.add(signature)
        if _verbose() and not said:
            print("gradtune_tf_autotune,%s,%s,%s,gradtune %.4f ms,tensorflow %.4f ms,%s" % (
                call.op, signature, choice["served_by"], choice["gradtune_ms"], choice["tensorflow_ms"], how),
                file=sys.stderr, flush=True)
        return choice["served_by"]

    def _measure(self, call):
        # Eagerly, outside any graph being traced: the gradient function may
        # run inside a tf.function's trace.
        with tf.init_scope():
            inputs = call.tensors(np.random.default_rng(0))
            ops = {GRADTUNE: call.gradtune_op, TENSORFLOW: getattr(tf.raw_ops, call.op)}
            try:
                ms = _time_side_by_side(ops, inputs, call.attrs)
            except (tf.errors.OpError, ValueError, TypeError) as e:
                # TF cannot run this call (e.g. an attr its CPU kernel
                # refuses): gradtune serves it.
                print("gradtune_tf: autotune: timing %s failed (%s); gradtune serves it"
                      % (call.op, str(e).splitlines()[0] if str(e) else type(e).__name__), file=sys.stderr)
                return {"served_by": GRADTUNE, "gradtune_ms": float("nan"), "tensorflow_ms": float("nan")}
        served_by = GRADTUNE if ms[GRADTUNE] <= ms[TENSORFLOW] else TENSORFLOW
        return {"served_by": served_by, "gradtune_ms": ms[GRADTUNE], "tensorflow_ms": ms[TENSORFLOW]}

