"""The parent side: runs the cases in worker subprocesses on both TF paths,
compares the results (with each other and with the float64 reformulation),
decides each case's expectation and turns it into the fixture's JSON entry."""
import os
import pickle
import re
import subprocess
import sys
import tempfile

import numpy as np

from .common import CONV_OPS, DTYPE_NAMES, DW_OPS, F32, I32, I64, NCHW_REFUSALS, PREFIX_MESSAGES, TOLERANCE

# The script whose --worker mode runs worker.worker_main: the entry point, so
# that the worker imports this package exactly as the parent does.
ENTRY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "make_tf_fixtures.py")


# --------------------------------------------------------------------------
# Parent side: run workers, decide expectations, write JSON.

def run_cases(cases, mode):
    """Results per case for one TF path: dict idx -> result."""
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0" if mode == "native" else "1", TF_CPP_MIN_LOG_LEVEL="2",
               OMP_NUM_THREADS="1")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        groups = []
        shared = [i for i, c in enumerate(cases) if not c["flags"].get("isolate")]
        if shared:
            groups.append(shared)
        groups += [[i] for i, c in enumerate(cases) if c["flags"].get("isolate")]
        for group in groups:
            sub = [cases[i] for i in group]
            case_file = os.path.join(tmp, "cases.pkl")
            with open(case_file, "wb") as f:
                pickle.dump([{k: c[k] for k in ("op", "name", "inputs", "attrs")} for c in sub], f)
            result_file = os.path.join(tmp, "results.pkl")
            if os.path.exists(result_file):
                os.remove(result_file)
            start = 0
            while start < len(sub):
                proc = subprocess.run([sys.executable, ENTRY, "--worker", mode, case_file, result_file, str(start)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                done = {}
                if os.path.exists(result_file):
                    with open(result_file, "rb") as f:
                        while True:
                            try:
                                idx, res = pickle.load(f)
                            except (EOFError, pickle.UnpicklingError):
                                break
                            done[idx] = res
                for idx, res in done.items():
                    results[group[idx]] = res
                # Results of cases that crashed earlier are not in the file.
                nxt = max([start - 1] + list(done)) + 1
                if nxt >= len(sub):
                    break
                if proc.returncode == 0:
                    raise RuntimeError(f"worker stopped early without an error: {proc.stderr[-2000:]}")
                # The case at `nxt` took the worker down.
                crashed = sub[nxt]
                how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
                results[group[nxt]] = {"raw": {"crash": how, "stderr": crash_reason(proc.stderr)}}
                print(f"  [{mode}] {crashed['op']}/{crashed['name']}: process died ({how})", flush=True)
                start = nxt + 1
    return results


def crash_reason(stderr):
    """The stable part of a dead worker's stderr: TF's CHECK message without
    its timestamp, or the kind of glibc abort (its text varies run to run)."""
    for line in stderr.splitlines():
        m = re.match(r"^F\d{4} [\d:.]+\s+\d+ (.*)$", line)
        if m:
            return m.group(1).strip()
    if re.search(r"malloc\(\)|free\(\)|corrupted|double free", stderr):
        return "glibc heap-corruption abort"
    return ""


def norm_err(got, want):
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    if got.size == 0:
        return 0.0
    diff = np.max(np.abs(got - want))
    scale = np.max(np.abs(want))
    return float(diff / scale) if scale > 0 else float(diff)


def same_outputs(a, b):
    """max normwise error over the outputs, or None if shapes/dtypes differ."""
    if len(a) != len(b):
        return None
    worst = 0.0
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return None
        worst = max(worst, norm_err(x, y))
    return worst


def agree(ra, rb, dtype_name):
    """Do two raw results (outputs or error) agree?"""
    if "outputs" in ra and "outputs" in rb:
        e = same_outputs(ra["outputs"], rb["outputs"])
        return e is not None and e <= TOLERANCE.get(dtype_name, 0) / 2
    if "error" in ra and "error" in rb:
        return ra["error"] == rb["error"]
    return False


def summary(res, expect_outputs=None, dtype_name=None):
    """What one TF path did, for the fixture's "tf" record."""
    if "crash" in res:
        return {"crash": res["crash"], "stderr": res["stderr"]}
    if "error" in res:
        return {"error": res["error"]}
    if expect_outputs is not None:
        e = same_outputs(res["outputs"], expect_outputs)
        if e is None:
            return {"outputs": "different shape or dtype: " + ", ".join(
                f"{DTYPE_NAMES.get(o.dtype, str(o.dtype))}{list(o.shape)}" for o in res["outputs"])}
        if e <= TOLERANCE.get(dtype_name, 0) / 2:
            return {"outputs": "match expect" if e == 0 else f"match expect (normwise error {e:.3g})"}
        return {"outputs": f"differ from expect: normwise error {e:.3g}"}
    return {"outputs": "returned"}


def cast_like(a, dtype):
    if dtype in (I32, I64):
        return np.trunc(a).astype(dtype)
    return a.astype(dtype)


def out_dtype(case):
    """The op's T: the dtype of its first data input."""
    for k in ("out_backprop", "input", "value", "filter"):
        if k in case["inputs"]:
            return case["inputs"][k].dtype
    return F32


SURPRISES = []


def _grouped(case, fmt):
    """Whether a dense convolution gradient's case has a grouped filter (its
    input's channels differ from the filter's depth)."""
    op = case["op"]
    if op not in ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
        return False
    if op == "Conv2DBackpropInput":
        f = case["inputs"]["filter"]
        sizes = case["inputs"]["input_sizes"].ravel()
        cin = sizes[3 if fmt == "NHWC" else 1] if sizes.size == 4 else None
        fdepth = f.shape[2] if f.ndim == 4 else None
    else:
        x = case["inputs"]["input"]
        cin = x.shape[3 if fmt == "NHWC" else 1] if x.ndim == 4 else None
        fs = case["inputs"]["filter_sizes"].ravel()
        fdepth = fs[2] if fs.size == 4 else None
    return cin is not None and fdepth is not None and fdepth > 0 and cin != fdepth


def _against_float64(case, entry, ref, native, onednn, dtype, dname, decision):
    """A convolution expectation taken from TF, checked against the float64
    reformulation `ref`: 16-bit results too far from it are replaced by it
    rounded once; any other disagreement is a SURPRISE. Returns the
    (policy, expect, tfrec, tf_path) decision, updated."""
    policy, expect, tfrec, tf_path = decision
    op = case["op"]
    raw_n, raw_o = native["raw"], onednn["raw"]
    e = same_outputs([np.asarray(ref, np.float64)], [expect["outputs"][0].astype(np.float64)])
    tol = TOLERANCE.get(dname, 0)
    # 16-bit: keep TF's values only where they are within a quarter of the
    # harness tolerance of the once-rounded float64 result, so that a kernel
    # that rounds once (docs/tf-ops.md section 15.5) cannot fail on TF's own
    # error.
    limit = tol / 4 if dname in ("float16", "bfloat16") else max(tol, 1e-12)
    if e is None or e > limit:
        if dname in ("float16", "bfloat16") and e is not None:
            # TF's 16-bit CPU kernels round partial sums (docs/tf-ops.md
            # section 14); gradtune accumulates in f32 and rounds once
            # (docs/tf-ops.md section 15.5).
            policy = ((policy + "; ") if policy else "") + (
                f"spec 14 / 15.5: TF's {dname} CPU result is {e:.3g} (normwise) from the float64 result; "
                "expectation = float64 Conv2D-forward reformulation rounded once")
            expect = {"outputs": [cast_like(ref, dtype)]}
            tfrec = {"native": summary(raw_n, expect["outputs"], dname),
                     "onednn": summary(raw_o, expect["outputs"], dname)}
            tf_path = "onednn" if agree(raw_o, expect, dname) else "native"
        else:
            SURPRISES.append(f"{op}/{case['name']}: TF result differs from the float64 reformulation "
                             f"(normwise {e})")
    elif dname in ("float16", "bfloat16"):
        entry["tf_error_vs_float64"] = float(f"{e:.3g}")
    return policy, expect, tfrec, tf_path


def _entry_json(entry, case, policy, expect, tf_path, tfrec):
    """The fixture entry: `entry` (name and notes so far) with the decision."""
    flags, attrs = case["flags"], case["attrs"]
    if flags.get("note"):
        entry["note"] = flags["note"]
    if "error" in expect:
        msg = expect["error"]["message"]
        for p in PREFIX_MESSAGES:
            if msg.startswith(p):
                expect["error"]["prefix"] = p
    entry["tf_path"] = tf_path
    if policy:
        entry["policy"] = policy
    entry["inputs"] = {k: tensor_json(v) for k, v in case["inputs"].items()}
    entry["attrs"] = attrs
    entry["expect"] = {"outputs": [tensor_json(o) for o in expect["outputs"]]} if "outputs" in expect else \
        {"error": expect["error"]}
    if tfrec:
        entry["tf"] = tfrec
    return entry


def decide(case, native, onednn):
    """The fixture entry for one case."""
    op, attrs = case["op"], case["attrs"]
    flags = case["flags"]
    dtype = out_dtype(case)
    dname = DTYPE_NAMES.get(dtype, "float32")
    raw_n, raw_o = native["raw"], onednn["raw"]
    entry = {"name": case["name"]}
    policy, expect, tf_path = None, None, None
    ref = native.get("ref")
    fmt = attrs.get("data_format", "NHWC")
    dil = attrs.get("dilations", [1, 1, 1, 1])
    hw_dilated = len(dil) == 4 and fmt in ("NHWC", "NCHW") and (
        dil[1:3] if fmt == "NHWC" else dil[2:4]) != [1, 1] and min(dil) >= 1
    grouped = _grouped(case, fmt) and ref is not None

    if flags.get("policy_zeros"):
        shape = raw_n["outputs"][0].shape if "outputs" in raw_n else np.shape(ref)
        expect = {"outputs": [np.zeros(shape, dtype)]}
        policy = flags["policy_zeros"] + "; expect zeros"
        tf_path = "native"
        tfrec = {"native": {"outputs": "uninitialised memory (values not recorded)"} if "outputs" in raw_n
                 else summary(raw_n),
                 "onednn": {"outputs": "uninitialised memory (values not recorded)"} if "outputs" in raw_o
                 else summary(raw_o)}
    elif flags.get("policy_error"):
        kind, msg, note = flags["policy_error"]
        expect = {"error": {"kind": kind, "message": msg}}
        policy = note
        tf_path = "native"
        tfrec = {"native": summary(raw_n), "onednn": summary(raw_o)}
    elif op in DW_OPS + CONV_OPS and (
            (hw_dilated and op not in ("Conv2D",)) or grouped) and ref is not None:
        # docs/tf-ops.md section 15.1: dilations (depthwise: TF ignores or
        # refuses them; Conv2D backprops: CPU refuses) and grouped Conv2D
        # gradients are supported.
        what = []
        if hw_dilated and op not in ("Conv2D",):
            what.append("dilations" + (" (row 22)" if op in DW_OPS[1:] else
                                       " (section 10)" if op == DW_OPS[0] else " (row 30)"))
        if grouped:
            what.append("groups (row 41)" if op == "Conv2DBackpropInput" else "groups (row 42)")
        if fmt == "NCHW":
            what.append("NCHW")
        expect = {"outputs": [cast_like(ref, dtype)]}
        policy = ("spec 15.1: " + ", ".join(what) + " supported; expectation = float64 Conv2D-forward "
                  "reformulation on the native path, rounded once")
        onednn_ok = "outputs" in raw_o and agree(raw_o, expect, dname)
        tf_path = "onednn" if onednn_ok else "native"
        tfrec = {"native": summary(raw_n, expect["outputs"], dname), "onednn": summary(raw_o, expect["outputs"], dname)}
    elif fmt == "NCHW" and "error" in raw_n and raw_n["error"]["message"] in NCHW_REFUSALS:
        derived = native.get("nhwc")
        if derived is None or "outputs" not in derived:
            print(f"  dropped {op}/{case['name']}: NCHW refused and the NHWC call fails too "
                  f"({derived and derived.get('error')})")
            return None
        expect = {"outputs": derived["outputs"]}
        policy = ("nchw_via_transpose: spec 15.1 (section 10 / rows 21, 25): TF CPU refuses NCHW; expectation = "
                  "native NHWC result, transposed")
        tf_path = "both" if agree(raw_o, expect, dname) else "native"
        tfrec = {"native": summary(raw_n), "onednn": summary(raw_o, expect["outputs"], dname)}
    else:
        # Plain TF behaviour: native is the reference (docs/tf-ops.md
        # section 0).
        if "crash" in raw_n:
            print(f"  dropped {op}/{case['name']}: native TF crashed ({raw_n['crash']})")
            SURPRISES.append(f"{op}/{case['name']}: native TF process died ({raw_n['crash']}): {raw_n['stderr']}")
            return None
        expect = {k: raw_n[k] for k in ("outputs", "error") if k in raw_n}
        tf_path = "both" if agree(raw_n, raw_o, dname) else "native"
        tfrec = None if tf_path == "both" else {"onednn": summary(raw_o, expect.get("outputs"), dname)}
    from_tf = policy is None or policy.startswith("nchw_via_transpose")
    if "outputs" in expect and ref is not None and op in DW_OPS + CONV_OPS and from_tf:
        policy, expect, tfrec, tf_path = _against_float64(case, entry, ref, native, onednn, dtype, dname,
                                                          (policy, expect, tfrec, tf_path))
    return _entry_json(entry, case, policy, expect, tf_path, tfrec)


def number(v, dtype):
    if dtype in (I32, I64):
        return int(v)
    f = float(v)
    if f.is_integer() and abs(f) < 2 ** 53:
        return int(f)
    if dtype == F32:
        return float(str(np.float32(v)))  # shortest text that rounds back to this float32
    return f  # float64, and float16/bfloat16 values exactly


def tensor_json(a):
    a = np.asarray(a)
    return {"dtype": DTYPE_NAMES[a.dtype], "shape": [int(s) for s in a.shape],
            "values": [number(v, a.dtype) for v in a.ravel()]}
