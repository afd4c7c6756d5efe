#!/usr/bin/env bash
# gradtune-bench on a tiny suite: every row timed, the report and the JSON
# written; oneDNN's columns where the build has it; TensorFlow's columns where
# its venv exists (scripts/tf-venv.sh), else the report says why they are
# missing. The benchmark restarts itself with OMP_WAIT_POLICY=PASSIVE.
# Usage: bench_test.sh <gradtune-bench> <python> <tiny suite> <source dir>
set -euo pipefail
bench="$1"; python="$2"; suite="$3"; root="$4"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
env -u OMP_WAIT_POLICY "$bench" --suite "$suite" --samples 2 --min-sample-ms 2 --json "$work/rows.json" \
  --markdown "$work/report.md" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
grep -q "OMP_WAIT_POLICY=PASSIVE" "$work/report.md" || { echo "the benchmark did not restart with OMP_WAIT_POLICY=PASSIVE"; exit 1; }
tf=0
[ -x "$root/.tf-venv/bin/python" ] && tf=1
"$python" - "$work/rows.json" "$work/report.md" "$tf" <<'PY'
import json, sys
rows, report, tf = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3] == "1"
assert len(rows) == 2, rows
for r in rows:
    assert not r["error"] and r["tuned_median_ms"] > 0 and r["generic_median_ms"] > 0, r
    if tf:
        assert r["tf_default_median_ms"] > 0 and r["tf_eigen_median_ms"] > 0, r
if not tf:
    assert "TensorFlow columns: not run" in report, "the report must say why TensorFlow's columns are missing"
print("2 rows timed;", "with TensorFlow's columns" if tf else "TensorFlow's columns not run (no .tf-venv)")
PY
# --idle-us: a 2 ms sleep before each call, outside the call's time (a
# median of 2 ms or more would mean the sleep was timed).
"$bench" --suite "$suite" --samples 2 --min-sample-ms 2 --no-tf --no-onednn --idle-us 2000 --evict-mb 1 \
  --json "$work/idle.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
"$python" - "$work/idle.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    assert not r["error"] and 0 < r["tuned_median_ms"] < 2 and 0 < r["generic_median_ms"] < 2, r
print("--idle-us/--evict-mb: the time between calls is not timed")
PY
# A bad suite file: a one-line error naming the file and line, exit 1, no abort.
printf 'FractionalAvgPoolGrad N=1 H=-56 W=56 C=128 OH=39 OW=39\n' >"$work/bad.txt"
set +e
"$bench" --suite "$work/bad.txt" --no-onednn --no-tf >"$work/bad.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "^gradtune-bench: error: $work/bad.txt:1: 'H' = -56 is out of range" "$work/bad.log" ||
  { cat "$work/bad.log"; echo "a bad suite file gave exit $rc, not a one-line error and exit 1"; exit 1; }
echo "a bad suite file: $(head -1 "$work/bad.log")"
