#!/usr/bin/env bash
# The retune loop on a tiny shape: calls through the library (gradtune run)
# with GRADTUNE_JOURNAL write the journal (several processes, a line cut
# short in between); `gradtune suite --from-journal` rebuilds the calls;
# `gradtune tune --from-journal`, killed (SIGKILL) and resumed, measures
# exactly the journalled signatures; distill turns them into records, and a
# configure step takes them as this class's own (exact) records.
# Usage: journal_test.sh <gradtune> <python> <cmake> <source dir> <target class>
set -euo pipefail
gradtune="$1"; python="$2"; cmake="$3"; source="$4"; class="$5"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
journal="$work/journal.jsonl"
"$python" - "$work" <<'PY'
import numpy as np, sys
w = sys.argv[1]
np.save(f"{w}/filter.npy", np.arange(45, dtype=np.float32).reshape(3, 3, 5, 1) / 45)
np.save(f"{w}/dy_same.npy", np.ones((1, 7, 6, 5), np.float32))
np.save(f"{w}/dy_valid.npy", np.ones((1, 5, 4, 5), np.float32))
PY
call() {  # call <padding>: one process, one call
  local dy="$work/dy_$(echo "$1" | tr A-Z a-z).npy"
  GRADTUNE_JOURNAL="$journal" "$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,7,6,5 \
    filter="$work/filter.npy" out_backprop="$dy" strides=1,1,1,1 padding="$1" -o "$work/out.npy"
}
call SAME
call SAME
call VALID
printf '{"journal": 1, "process": "cut short by a cra' >>"$journal"
call SAME
# Unset, nothing is written.
"$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,7,6,5 filter="$work/filter.npy" \
  out_backprop="$work/dy_same.npy" strides=1,1,1,1 padding=SAME -o "$work/out.npy"

"$python" - "$journal" <<'PY'
import json, sys
lines, cut = [], 0
for text in open(sys.argv[1]):
    try:
        lines.append(json.loads(text))
    except ValueError:
        cut += 1
assert cut == 1, f"{cut} unreadable lines (the cut line must stay alone)"
assert len(lines) == 4, f"{len(lines)} lines, expected one per process"
same = [l for l in lines if l["padding"] == "SAME"]
assert len(same) == 3 and len({l["process"] for l in same}) == 3
assert all(l["calls"] == 1 and l["total_ms"] > 0 and l["tier"] != "exact" for l in lines), lines
assert same[0]["shape"] == {"C": 5, "H": 7, "N": 1, "W": 6}, same[0]["shape"]
assert same[0]["structure"]["filter_height"] == 3 and same[0]["device"] == "cpu"
print("journal: 4 lines from 4 processes, the cut line left alone")
PY

"$gradtune" suite --from-journal "$journal" -o "$work/suite.json" >"$work/suite.out" 2>"$work/suite.err"
grep -q "not a journal line" "$work/suite.err" || { echo "the cut line was not reported"; cat "$work/suite.err"; exit 1; }
"$python" - "$work/suite.json" "$journal" <<'PY'
import json, sys
suite = json.load(open(sys.argv[1]))
assert [e["id"] for e in suite] == ["J1", "J2"], suite
by_padding = {e["call"]["attrs"]["padding"]: e for e in suite}
same = by_padding["SAME"]["call"]["inputs"]
assert same["input_sizes"]["values"] == [1, 7, 6, 5] and same["filter"]["shape"] == [3, 3, 5, 1]
assert same["out_backprop"]["shape"] == [1, 7, 6, 5]
assert by_padding["VALID"]["call"]["inputs"]["out_backprop"]["shape"] == [1, 5, 4, 5]
# Heaviest first: the order of the summed journal times.
total = {}
for text in open(sys.argv[2]):
    try:
        l = json.loads(text)
    except ValueError:
        continue
    total[l["padding"]] = total.get(l["padding"], 0) + l["total_ms"]
expected = sorted(total, key=lambda p: -total[p])
assert [e["call"]["attrs"]["padding"] for e in suite] == expected, (suite, total)
print("suite: both signatures rebuilt as calls, heaviest first")
PY

log="$work/trials.jsonl"
args=(tune --from-journal "$journal" --max-trials 4 --log "$log" --work-dir "$work/candidates" --samples 2
      --min-sample-ms 2 --jobs 1)
source "$(dirname "${BASH_SOURCE[0]}")/kill_tuner.sh"
kill_once_logged "$log" 1 "${args[@]}"
[ -s "$log" ] || { echo "the first run logged nothing"; cat "$work/first.log"; exit 1; }
"$gradtune" "${args[@]}" >"$work/second.log" 2>&1 || { cat "$work/second.log"; exit 1; }
grep -q "found in the log" "$work/second.log" || { echo "the second run did not resume"; cat "$work/second.log"; exit 1; }
"$python" - "$log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert {l["shape_id"] for l in lines} == {"J1/N1", "J2/N1"}, {l["shape_id"] for l in lines}
keys = [(json.dumps(l["knobs"], sort_keys=True), l["shape_id"]) for l in lines]
assert len(keys) == len(set(keys)), "a candidate was measured twice"
assert any(l["status"] == "ok" for l in lines)
print(f"tune: {len(lines)} trials of the journalled signatures, resumed after SIGKILL")
PY

"$gradtune" distill --log "$log" --records-dir "$work/records" --defaults-dir "$work/defaults" >/dev/null
"$cmake" -S "$source" -B "$work/build" -G Ninja -DGRADTUNE_RECORDS_DIR="$work/records" -DGRADTUNE_CPU_TARGETS=host \
  -DGRADTUNE_OP_FILTER=DepthwiseConv2dNativeBackpropInput -DGRADTUNE_CUDA=OFF >"$work/configure.log" 2>&1 ||
  { echo "configure failed:"; cat "$work/configure.log"; exit 1; }
summary=$(grep "target class" "$work/configure.log")
[[ "$summary" == *"2 own record(s)"* ]] || { echo "expected both signatures as own records:"; echo "$summary"; exit 1; }
for padding in SAME VALID; do
  grep -q "\"$padding\"" "$work/build/runtime/variant_table.cpp" || { echo "no $padding record in the table"; exit 1; }
done
echo "journal -> tune -> distill -> build: both signatures are exact records of $class"
