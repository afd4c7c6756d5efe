#!/usr/bin/env bash
# The main job's plots and summary (scripts/report_plots.py), from a real
# benchmark run and a real tuning run of a two-op suite:
#   - one speedup chart per op, the roofline chart and the tuning curves, each
#     a PNG that decodes to an image of sensible size;
#   - five summary lines naming this machine's target class, and image links
#     that resolve from the markdown file's folder;
#   - clear errors for a missing or empty benchmark file, and a missing or
#     wrong tuning curve.
# Usage: report_plots_test.sh <gradtune> <gradtune-bench> <python> <source dir>
set -euo pipefail
gradtune="$1"; bench="$2"; python="$3"; root="$4"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Two ops, two small shapes (a text suite: the benchmark knows their flops
# and bytes, so the rows have a roofline).
suite="$work/suite.txt"
cat >"$suite" <<'SUITE'
DepthwiseConv2dNativeBackpropInput N=1 H=20 W=20 C=32 f=3 s=1 id=S1
FractionalAvgPoolGrad N=1 H=20 W=20 C=16 OH=14 OW=14 id=S2
SUITE
plots=("$python" "$root/scripts/report_plots.py")

"$gradtune" tune --suite "$suite" --max-trials 4 --log "$work/trials.jsonl" --work-dir "$work/candidates" \
  --samples 2 --min-sample-ms 0 --jobs 1 >"$work/tune.log" 2>&1 || { cat "$work/tune.log"; exit 1; }
env -u OMP_WAIT_POLICY "$bench" --suite "$suite" --samples 2 --min-sample-ms 2 --json "$work/rows.json" \
  >/dev/null 2>"$work/bench.err" || { cat "$work/bench.err"; exit 1; }
"${plots[@]}" --rows "$work/rows.json" --out-dir "$work/report/png" --curve "$work/trials.jsonl.curve.json" \
  --markdown "$work/report/summary.md" || { echo "report_plots.py failed"; exit 1; }
klass="$("$gradtune" variants | awk 'NR == 1 {print $3}')"

"$python" - "$work/report" "$klass" <<'PY'
import os, re, sys
import matplotlib.image
report, klass = sys.argv[1], sys.argv[2]
text = open(os.path.join(report, "summary.md")).read()
print(text)
summary = [l for l in text.splitlines() if l.startswith("- **")]
assert len(summary) == 5, summary
assert klass in summary[0], f"the summary does not name the target class {klass}"
assert "candidates in" in summary[4] and "roofline median" in summary[4], summary[4]
links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
names = sorted(os.path.basename(l) for l in links)
assert names == ["roofline.png", "speedup-DepthwiseConv2dNativeBackpropInput.png",
                 "speedup-FractionalAvgPoolGrad.png", "tuning-curves.png"], names
for link in links:
    path = os.path.join(report, link)
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n", f"{link} is not a PNG"
    height, width = matplotlib.image.imread(path).shape[:2]
    assert height >= 300 and width >= 500, (link, height, width)
print(f"{len(links)} plots, 5 summary lines")
PY

# Bad input: a clear message and a non-zero exit, never a traceback.
expect_error() {
  local what="$1"; shift
  if "${plots[@]}" "$@" >"$work/err" 2>&1; then echo "no error for $what"; exit 1; fi
  grep -q "^report_plots: " "$work/err" && ! grep -q Traceback "$work/err" || { echo "$what:"; cat "$work/err"; exit 1; }
  echo "$what: $(cat "$work/err")"
}
expect_error "a missing benchmark file" --rows "$work/none.json" --out-dir "$work/x"
echo "[]" >"$work/empty.json"
expect_error "no timed row" --rows "$work/empty.json" --out-dir "$work/x"
expect_error "a missing tuning curve" --rows "$work/rows.json" --out-dir "$work/x" --curve "$work/none.json"
expect_error "a file that is not a tuning curve" --rows "$work/rows.json" --out-dir "$work/x" --curve "$work/trials.jsonl"
echo "PASSED"
