#!/usr/bin/env bash
# Fault injection for the tuner and distill (issue 10): a crashing and a
# hanging candidate, kill -9 at random points of tune and of distill, and a
# full disk under the trials log and under the records. Each time: an error
# or a failed trial with its reason, never a cut or overwritten file, no
# candidate measured twice, no child process left running.
#   crash/hang: GRADTUNE_FAULT_INJECT=crash:K:FILE|hang:K:FILE (tuner/tune.cpp)
#     makes one measuring process crash or hang at its K-th candidate.
#   full disk: `ulimit -f` with SIGXFSZ ignored, so that a write past the
#     limit fails (EFBIG) as one on a full disk fails (ENOSPC).
# Usage: fault_injection_test.sh <gradtune> <python> <tiny_suite.json>
set -euo pipefail
gradtune="$1"; python="$2"; suite="$3"
work="$(mktemp -d)"
trap 'pkill -9 -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT
tune=(tune --suite "$suite" --samples 2 --min-sample-ms 2 --jobs 1 --batch-size 3 --work-dir "$work/candidates")

fail() { echo "FAIL: $*"; exit 1; }
no_children() {
  for _ in $(seq 1 100); do
    pgrep -f "$work/candidates" >/dev/null || return 0
    sleep 0.05
  done
  pgrep -af "$work/candidates"
  fail "$1: a child of the tuner is still running"
}
# check_log LOG CANDIDATES [FAILED_REASON]: every line whole, no candidate
# twice on a shape; unless CANDIDATES is 0, that many candidates in all, one
# of them measured; with a reason, one candidate failed with it on every shape.
check_log() {
  "$python" - "$@" <<'PY'
import json, os, sys
path, want = sys.argv[1], int(sys.argv[2])
reason = sys.argv[3] if len(sys.argv) > 3 else None
# A kill -9 in the middle of a write may leave one cut line per kill (the
# next append starts on a line of its own); KILLS says how many may be.
kills = int(os.environ.get("KILLS", "0"))
lines, cut = [], 0
for n, l in enumerate(open(path), 1):
    if l.strip():
        try:
            lines.append(json.loads(l))
        except ValueError:
            cut += 1
            if cut > kills:
                sys.exit(f"{path}:{n}: a cut line: {l[:80]!r}")
keys = [(json.dumps(t["knobs"], sort_keys=True), t["shape_id"]) for t in lines]
assert len(keys) == len(set(keys)), "a candidate was measured twice on a shape"
candidates = {k for k, _ in keys}
shapes = {s for _, s in keys}
if want:
    assert len(candidates) == want, f"{len(candidates)} candidates, expected {want}"
    assert any(t["status"] == "ok" for t in lines), "no candidate measured"
if reason:
    failed = {}
    for t in lines:
        if t["status"] == "failed" and reason in t["error"]:
            failed.setdefault(json.dumps(t["knobs"], sort_keys=True), set()).add(t["shape_id"])
    assert any(s == shapes for s in failed.values()), f"no candidate failed with {reason!r} on every shape"
    print(f"{path}: {len(candidates)} candidates, {len(failed)} failed: {reason}")
PY
}

echo "== a crashing candidate is logged failed, the run goes on"
GRADTUNE_FAULT_INJECT="crash:2:$work/crashed" "$gradtune" "${tune[@]}" --max-trials 4 --log "$work/crash.jsonl" >"$work/crash.out" 2>&1 ||
  { cat "$work/crash.out"; fail "the tuner stopped at a crashing candidate"; }
check_log "$work/crash.jsonl" 4 "crashed (signal 11"
no_children crash

echo "== a hanging candidate is killed after --measure-timeout, logged failed, the run ends within its budget"
start=$SECONDS
GRADTUNE_FAULT_INJECT="hang:2:$work/hung" "$gradtune" "${tune[@]}" --max-trials 4 --measure-timeout 3 --budget 100 \
  --log "$work/hang.jsonl" >"$work/hang.out" 2>&1 || { cat "$work/hang.out"; fail "the tuner stopped at a hanging candidate"; }
[ $((SECONDS - start)) -lt 100 ] || fail "the run with a hanging candidate took $((SECONDS - start)) s (budget 100 s)"
check_log "$work/hang.jsonl" 4 "--measure-timeout: it hung"
no_children hang

echo "== kill -9 at random points of a tune run, then resume"
log="$work/killed.jsonl"
RANDOM=$$
for round in 1 2 3 4; do
  "$gradtune" "${tune[@]}" --max-trials 5 --log "$log" >"$work/killed-$round.out" 2>&1 &
  pid=$!
  sleep "$((RANDOM % 4)).$((RANDOM % 10))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  no_children "kill -9 in round $round"
  [ ! -f "$log" ] || KILLS=$round check_log "$log" 0
done
"$gradtune" "${tune[@]}" --max-trials 5 --log "$log" >"$work/killed-last.out" 2>&1 ||
  { cat "$work/killed-last.out"; fail "the resumed run failed"; }
KILLS=4 check_log "$log" 5

echo "== kill -9 at random points of distill: every records file stays whole"
records="$work/records" defaults="$work/defaults"
"$gradtune" distill --log "$log" --records-dir "$records" --defaults-dir "$defaults" >/dev/null 2>&1 ||
  fail "distill of a clean log failed"
for round in $(seq 1 20); do
  "$gradtune" distill --log "$log" --records-dir "$records" --defaults-dir "$defaults" >/dev/null 2>&1 &
  pid=$!
  sleep "0.0$((RANDOM % 10))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for f in $(find "$records" "$defaults" -name '*.json'); do
    "$python" -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" || fail "distill killed in round $round left $f cut"
  done
done

echo "== a full disk under the records: an error, the records untouched"
cp -r "$records" "$work/records-before"
set +e
# (Its output through a pipe: the limit is on every file it writes.)
(trap '' XFSZ; ulimit -f 0; exec "$gradtune" distill --log "$log" --records-dir "$records" --defaults-dir "") 2>&1 |
  cat >"$work/distill-full.out"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -ne 0 ] || { cat "$work/distill-full.out"; fail "distill onto a full disk exited 0"; }
grep -q "is the disk full" "$work/distill-full.out" || { cat "$work/distill-full.out"; fail "no disk-full error"; }
diff -r -x "*.tmp" "$work/records-before" "$records" || fail "distill onto a full disk changed the records"

echo "== a full disk under the trials log: an error, the log keeps whole lines"
# The log padded past the size of any compiled candidate, then every file
# limited to 1-2 KB more than the log: the compiles fit, the next trial lines
# do not (one is cut by the limit and must be taken back).
full="$work/full.jsonl"
"$python" - "$log" "$full" <<'PY'
import json, sys
lines = []
for l in open(sys.argv[1]):
    try:
        lines.append(json.loads(l))
    except ValueError:
        pass  # blank, or cut by a kill above
with open(sys.argv[2], "w") as out:
    n = 0
    while out.tell() < 4 << 20:  # 4 MB of trials of another shape
        for t in lines:
            t = dict(t, shape_id=f"padding/{n}")
            out.write(json.dumps(t) + "\n")
            n += 1
PY
before=$(wc -c <"$full")
set +e
(trap '' XFSZ; ulimit -f $((before / 1024 + 2)); exec "$gradtune" "${tune[@]}" --max-trials 9 --log "$full") 2>&1 |
  cat >"$work/tune-full.out"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -ne 0 ] || { cat "$work/tune-full.out"; fail "tune onto a full disk exited 0"; }
grep -q "is the disk full" "$work/tune-full.out" || { cat "$work/tune-full.out"; fail "no disk-full error from tune"; }
check_log "$full" 0
no_children "full disk"
echo "fault injection OK"
