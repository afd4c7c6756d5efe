#!/usr/bin/env bash
# The tuner's cut for clear losers: with --slow-factor 0 and no minimum
# sample length every candidate counts as slower than the generic variant, so
# each is logged "slow" with its one untimed call, and distill keeps none, neither
# as a record nor as a structure default.
# Usage: tune_slow_test.sh <gradtune> <python> <tiny_suite.json>
set -euo pipefail
gradtune="$1"; python="$2"; suite="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/trials.jsonl"
"$gradtune" tune --suite "$suite" --max-trials 2 --log "$log" --work-dir "$work/candidates" --samples 2 \
  --min-sample-ms 0 --slow-factor 0 --jobs 1 >"$work/tune.log" 2>&1 || { cat "$work/tune.log"; exit 1; }

"$python" - "$log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{len(lines)} trial lines: {sorted({l['status'] for l in lines})}")
assert lines, "nothing logged"
for l in lines:
    assert l["status"] == "slow", l
    assert l["samples"] == 1 and l["iterations"] == 1, l
    assert l["median_ms"] > 0 and l["generic_median_ms"] > 0, l
    assert "not timed further" in l["error"], l
PY

"$gradtune" distill --log "$log" --records-dir "$work/records" --defaults-dir "$work/defaults" >"$work/distill.log" 2>&1 || { cat "$work/distill.log"; exit 1; }
if grep -rq '"knobs"' "$work/records" 2>/dev/null; then
  echo "distill kept a record of a slow candidate"; cat "$work/distill.log"; exit 1
fi
if grep -rq '"knobs"' "$work/defaults" 2>/dev/null; then
  echo "distill chose a structure default among slow candidates only"; cat "$work/distill.log"; exit 1
fi
echo "slow candidates logged, not timed, not distilled"
