#!/usr/bin/env bash
# The README's suite block ("To tune for your own shapes") as a tuner user
# would use it: the benchmark runs every call it describes (one per batch
# size), each without error, and names the block's id.
# Usage: readme_suite_test.sh GRADTUNE_BENCH PYTHON README
set -euo pipefail
bench="$1"; python="$2"; readme="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sed -n '/^To tune for your own shapes/,/^or as a JSON/p' "$readme" | sed -n '/^```$/,/^```$/p' | sed '1d;$d' \
  >"$work/suite.txt"
[ -s "$work/suite.txt" ] || { echo "no suite block after \"To tune for your own shapes\" in the README"; exit 1; }
"$bench" --suite "$work/suite.txt" --no-onednn --no-tf --samples 1 --min-sample-ms 1 --json "$work/rows.json" \
  >"$work/out.log" 2>&1 || { cat "$work/out.log"; echo "gradtune-bench failed on the README's suite"; exit 1; }
"$python" - "$work/suite.txt" "$work/rows.json" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
# One call per batch size of each line (N=1,32 is two).
calls = sum(len(l.split("N=")[1].split()[0].split(",")) for l in lines)
rows = json.load(open(sys.argv[2]))
if len(rows) != calls:
    sys.exit("the README's suite describes %d calls, the benchmark ran %d" % (calls, len(rows)))
bad = [r["id"] + ": " + r["error"] for r in rows if r["error"]]
if bad:
    sys.exit("calls of the README's suite failed: " + "; ".join(bad))
if "R2" not in {r["id"] for r in rows}:
    sys.exit("the README's id R2 is not in the benchmark's rows")
print("the README's suite: %d lines, %d calls, all ran" % (len(lines), calls))
PY
