#!/usr/bin/env bash
# A tiny tuning run, killed (SIGKILL) mid-run and resumed: its child processes
# die with it, no candidate may be measured twice, the resumed run must finish
# the planned number of candidates, and distill must be byte-for-byte stable
# and never overwrite a records file it cannot read.
# Usage: tune_resume_test.sh <gradtune> <python> <tiny_suite.json>
set -euo pipefail
gradtune="$1"; python="$2"; suite="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/trials.jsonl"
args=(tune --suite "$suite" --max-trials 6 --log "$log" --work-dir "$work/candidates" --samples 2 --min-sample-ms 2 --jobs 1)

source "$(dirname "${BASH_SOURCE[0]}")/kill_tuner.sh"
kill_once_logged "$log" 2 "${args[@]}"
# Its children (generator, measuring process) die with it.
for _ in $(seq 1 100); do
  pgrep -f "$work" >/dev/null || break
  sleep 0.05
done
if pgrep -af "$work"; then echo "children of the killed tuner are still running"; pkill -9 -f "$work"; exit 1; fi
# A last line cut short (as a full disk leaves it): the next trial must not be glued onto it.
printf '{"op": "cut short by a full dis' >>"$log"
before=$(wc -l <"$log")
echo "killed after $before trial line(s)"
[ "$before" -ge 2 ] || { echo "the first run logged nothing"; cat "$work/first.log"; exit 1; }

"$gradtune" "${args[@]}" >"$work/second.log" 2>&1 || { cat "$work/second.log"; exit 1; }
grep -q "found in the log" "$work/second.log"

"$python" - "$log" <<'PY'
import json, sys
lines, cut = [], 0
for l in open(sys.argv[1]):
    if not l.strip():
        continue
    try:
        lines.append(json.loads(l))
    except ValueError:
        cut += 1
assert 1 <= cut <= 2, f"{cut} unreadable lines: a trial was glued onto a cut line"

keys = [(json.dumps(l["knobs"], sort_keys=True), l["shape_id"]) for l in lines]
dupes = len(keys) - len(set(keys))
candidates = {k for k, _ in keys}
print(f"{len(lines)} trial lines, {len(candidates)} candidates, {dupes} measured twice")
assert dupes == 0, "a candidate was measured twice"
assert len(candidates) == 6, f"expected 6 candidates, got {len(candidates)}"
assert all(l["status"] in ("ok", "slow", "wrong", "failed", "compile_error") for l in lines)
assert sum(l["status"] == "ok" for l in lines) > 0
PY

"$gradtune" distill --log "$log" --records-dir "$work/records" --defaults-dir "$work/defaults" >/dev/null 2>&1
first=$(find "$work/records" "$work/defaults" -name '*.json' -exec cat {} +)
"$gradtune" distill --log "$log" --records-dir "$work/records" --defaults-dir "$work/defaults" >/dev/null 2>&1
second=$(find "$work/records" "$work/defaults" -name '*.json' -exec cat {} +)
[ "$first" = "$second" ] || { echo "distill output changed between runs"; exit 1; }
ls "$work"/defaults/*.json >/dev/null 2>&1 || { echo "distill chose no structure default"; exit 1; }
# A records file cut short is refused, not overwritten.
victim=$(find "$work/records" -name '*.json' | head -1)
head -c 100 "$victim" >"$work/cut.json" && cp "$work/cut.json" "$victim"
if "$gradtune" distill --log "$log" --records-dir "$work/records" --defaults-dir "$work/defaults" >"$work/distill3.log" 2>&1; then
  echo "distill accepted an unreadable records file"; exit 1
fi
cmp -s "$victim" "$work/cut.json" || { echo "distill overwrote an unreadable records file"; exit 1; }
grep -q "nothing written" "$work/distill3.log" || { cat "$work/distill3.log"; exit 1; }
echo "resume and distill OK (records and structure defaults)"
