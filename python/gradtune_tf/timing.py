"""Timing TensorFlow ops honestly: many calls inside one tf.function call.

One tf.function call per op call times Python's call of the function
(0.3-0.5 ms), more than a small kernel; and calls whose results nothing
uses, such as a chain of control dependencies, are pruned by TensorFlow's
graph optimizer. A while loop whose value is each call's result avoids
both. Used by the autotune floor (autotune.py) and by gradtune-bench's
TensorFlow columns (bench/tf_timer.py, which loads this file by its path:
the package itself needs libgradtune_tf.so, the benchmark does not).
"""

import resource

import tensorflow as tf


def tf_loop(op, inputs, attrs):
    """A tf.function of `count` (a scalar int32 tensor) that calls
    op(**inputs, **attrs) `count` times, one after the other, and returns
    the last result."""

    @tf.function
    def calls(count):
        first = op(**inputs, **attrs)
        body = lambda i, _: (i + 1, op(**inputs, **attrs))  # noqa: E731
        return tf.while_loop(lambda i, _: i < count, body, (tf.constant(1), first),
                             shape_invariants=(tf.TensorShape([]), tf.TensorShape(None)))[1]

    return calls


def process_cpu_seconds():
    """CPU time of every thread of this process so far (user + system), s:
    the work a call or a step cost, where TensorFlow runs ops at once."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
