"""bench/tf_calls.py: a suite's calls timed inside TensorFlow, TF's kernel
and gradtune's op side by side. Both sides must compute the same call (the
table's difference column), every row of the suite gets a row of the
table, and a bad suite row is refused with its line number before anything
is timed.

Run by ctest (label tf) with .tf-venv's Python.
"""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "tf_calls.py")
SUITE = """# dense and depthwise, SAME and VALID, a stride, a depth multiplier
Conv2DBackpropInput  N=2 H=8 W=8 C=16 K=32 f=3 s=1 id=A
Conv2DBackpropFilter N=2 H=9 W=9 C=8 K=16 f=3 s=2 VALID id=B   # a comment
DepthwiseConv2dNativeBackpropInput  N=2 H=8 W=8 C=16 f=3 s=1 M=2 id=C
DepthwiseConv2dNativeBackpropFilter N=2 H=8 W=8 C=16 f=5 s=2 id=D
"""


def run(text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as suite:
        suite.write(text)
        suite.flush()
        return subprocess.run([sys.executable, SCRIPT, suite.name, "--samples", "3"], capture_output=True, text=True,
                              timeout=300)


class TfCalls(unittest.TestCase):
    def test_rows_and_same_results(self):
        done = run(SUITE)
        self.assertEqual(done.returncode, 0, done.stderr)
        rows = [line.split("|")[1:-1] for line in done.stdout.splitlines() if line.startswith("| ")]
        rows = rows[1:]  # the header
        self.assertEqual([r[1].split()[0] for r in rows], ["A", "B", "C", "D"])
        for r in rows:
            wall_tf, wall_gradtune, cpu_tf, cpu_gradtune = (float(x) for x in r[2:6])
            self.assertGreater(min(wall_tf, wall_gradtune, cpu_tf, cpu_gradtune), 0.0, r)
            self.assertLess(float(r[8]), 1e-5, r)  # both sides computed the same call
        self.assertIn("Geomean over 4 calls", done.stdout)

    def test_bad_rows_refused(self):
        for row, why in (("Conv2DBackprop N=2 H=8 W=8 C=16 K=32 f=3 s=1", "op 'Conv2DBackprop' is not one of"),
                         ("Conv2DBackpropInput N=2 H=8 W=8 C=16 f=3 s=1", "no K= given")):
            done = run("# first line\n" + row + "\n")
            self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
            self.assertIn(":2: " + why, done.stderr)
            self.assertEqual(done.stdout, "")  # nothing timed


if __name__ == "__main__":
    unittest.main()
