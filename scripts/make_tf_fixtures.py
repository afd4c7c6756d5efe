#!/usr/bin/env python3
"""Writes tests/golden/<Op>.json: golden cases produced by real TensorFlow.

Run through scripts/tf-fixtures.sh (it makes .tf-venv with the pinned TF).

The cases live in the package scripts/tf_fixtures/, one module per op family:
convolutions.py (random geometries, TF's goldens), bad_inputs.py (error rows),
pooling.py (FractionalAvgPool and its gradient); common.py holds what they
share, worker.py the TensorFlow worker and the float64 reformulation,
parent.py the running of the workers and the expectations written here.

How it works
------------
The parent process never imports TensorFlow. It builds the case list
(inputs, attrs; deterministic data), then runs every case in worker
subprocesses under BOTH TF CPU paths:

  native  TF_ENABLE_ONEDNN_OPTS=0  the Eigen kernels docs/tf-ops.md describes;
                                   our reference semantics (docs/tf-ops.md section 0)
  onednn  TF_ENABLE_ONEDNN_OPTS=1  pip TF's default: _Mkl* kernels for the convs

(the variable must be set before TF is imported, hence subprocesses). A worker
that dies (CHECK failure, heap corruption) loses one case: the parent records
the crash for that case and restarts the worker after it. Cases marked
`isolate` (old CHECK-abort / out-of-bounds repros) run alone in their own
worker so they cannot poison other cases.

Every conv-family case is also computed by a float64 "reformulation" that uses
only what native TF CPU supports -- the forward Conv2D op (which handles
groups, dilations and strides) on zero-padded / zero-stuffed numpy arrays:
  forward         Conv2D(pad(x), dense filter)
  backprop input  Conv2D(pad(stuff(dy)), rot180(filter) with in/out swapped)
  backprop filter Conv2D(x with batch as channels, dy as filter,
                         strides=dilations, dilations=strides)
Depthwise and grouped filters are expanded to dense block-diagonal filters.
The reformulation is exact for integer data, and it serves three purposes:
  * the expectation under gradtune's policy (docs/tf-ops.md section 15.1)
    where TF's CPU kernels refuse (dilations, groups) or silently ignore
    (depthwise dilations);
  * a check of every TF result (a disagreement is printed as a SURPRISE);
  * 16-bit cases: when TF's 16-bit kernel (which rounds partial sums) is
    further than half the harness tolerance from the float64 result rounded
    once, the case expects the rounded float64 result (docs/tf-ops.md
    sections 14 and 15.5).
NCHW cases that native TF refuses get the NHWC native result, transposed
("policy": "nchw_via_transpose ...").

Output: tests/golden/<Op>.json =
  {"op", "tensorflow": version, "generated_by", "cases": [
    {"name", "tf_path": "both" | "native" | "onednn"  (which TF path's raw-op call gave
                                                        the expectation; "native" also
                                                        for expectations derived on the
                                                        native path or set by policy),
     "policy": why the expectation differs from TF's raw op (docs/tf-ops.md section 15), optional,
     "note": optional remark,
     "inputs": {"<TF input name>": {"dtype", "shape", "values": flat row-major}},
     "attrs": {"<TF attr name>": value},
     "expect": {"outputs": [tensors]} | {"error": {"kind", "message"[, "prefix"]}},
     "tf": what each path did where it differs from "expect" (optional)}]}
  "prefix": the harness matches only this prefix (TF appends data-dependent text).
  float16/bfloat16 values are written as their exact values; integral values
  as integers.
"""
import argparse
import collections
import json
import os

from tf_fixtures.bad_inputs import conv_bad_inputs, dw_bad_inputs
from tf_fixtures.common import ALL_OPS, CASES
from tf_fixtures.convolutions import build_conv_random, build_tf_goldens
from tf_fixtures.parent import SURPRISES, decide, run_cases
from tf_fixtures.pooling import build_fap, build_fapg_direct, build_fapg_from_fap
from tf_fixtures.worker import worker_main

GENERATOR = "scripts/make_tf_fixtures.py"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden"))
    ap.add_argument("--only", default="", help="comma-separated op names")
    ap.add_argument("--worker", nargs=4, metavar=("MODE", "CASES", "RESULTS", "START"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        mode, case_file, result_file, start = args.worker
        worker_main(mode, case_file, result_file, int(start))
        return

    import importlib.metadata
    tf_version = importlib.metadata.version("tensorflow-cpu")
    only = set(filter(None, args.only.split(",")))
    build_conv_random()
    build_tf_goldens()
    dw_bad_inputs()
    conv_bad_inputs()
    build_fap()
    build_fapg_direct()
    phase1 = [c for c in CASES if not only or c["op"] in only or
              (c["op"] == "FractionalAvgPool" and "FractionalAvgPoolGrad" in only)]
    names = collections.Counter((c["op"], c["name"]) for c in phase1)
    dup = [k for k, n in names.items() if n > 1]
    assert not dup, f"duplicate case names: {dup[:5]}"

    def run_both(cases):
        print(f"running {len(cases)} cases on the native path", flush=True)
        nat = run_cases(cases, "native")
        print(f"running {len(cases)} cases on the oneDNN path", flush=True)
        one = run_cases(cases, "onednn")
        return nat, one

    nat, one = run_both(phase1)
    # Phase 2: gradients over the sequences TF's forward op returned.
    n_before = len(CASES)
    build_fapg_from_fap([(c, nat[i]["raw"]) for i, c in enumerate(phase1) if c["flags"].get("fapg_seed")])
    phase2 = CASES[n_before:]
    if phase2 and (not only or "FractionalAvgPoolGrad" in only):
        nat2, one2 = run_both(phase2)
    else:
        phase2, nat2, one2 = [], {}, {}
    # FractionalAvgPool: both paths must return the same sequences (no oneDNN kernel).
    per_op = collections.defaultdict(list)
    for cases, n, o in ((phase1, nat, one), (phase2, nat2, one2)):
        for i, c in enumerate(cases):
            if only and c["op"] not in only:
                continue
            entry = decide(c, n[i], o[i])
            if entry is not None:
                per_op[c["op"]].append(entry)
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for op in ALL_OPS:
        if op not in per_op:
            continue
        doc = {"op": op, "tensorflow": tf_version, "generated_by": GENERATOR, "cases": per_op[op]}
        path = os.path.join(args.out, op + ".json")
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        size = os.path.getsize(path)
        total += size
        paths = collections.Counter(e["tf_path"] for e in per_op[op])
        pol = sum(1 for e in per_op[op] if "policy" in e)
        errs = sum(1 for e in per_op[op] if "error" in e["expect"])
        print(f"{op}: {len(per_op[op])} cases ({errs} errors, {pol} policy; tf_path {dict(paths)}), "
              f"{size / 1024:.0f} KiB")
    print(f"total {total / 1e6:.2f} MB in {args.out}")
    if SURPRISES:
        print("SURPRISES:")
        for s in SURPRISES:
            print("  " + s)


if __name__ == "__main__":
    main()
