#!/usr/bin/env bash
# Re-tune the shapes an application runs:
#   GRADTUNE_JOURNAL=shapes.jsonl ./your_program   # any program on libgradtune
#   ./scripts/retune.sh shapes.jsonl
# 1. the journal's signatures as a suite, heaviest first
#    (build/retune/suite.json; GRADTUNE_RETUNE_TOP=K keeps the K heaviest),
# 2. the benchmark of those calls as they are served now (before),
# 3. gradtune tune --from-journal for GRADTUNE_TUNE_BUDGET seconds (default
#    300), resuming from the trials log,
# 4. distill into schedules/records/<target class>/ (a record changes only
#    for a setting faster than it side by side: --remeasure) and rebuild,
# 5. the benchmark again (after), and a report per signature: the dispatch
#    tier and the speedup over the generic variant before and after (each
#    measured side by side with the generic variant in its own run), and
#    oneDNN's time where it has the op (build/retune/report.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -eq 1 ] || { echo "usage: scripts/retune.sh JOURNAL (written by a program run with GRADTUNE_JOURNAL=JOURNAL)" >&2; exit 2; }
journal="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ -r "$journal" ] || { echo "retune: $1 cannot be read" >&2; exit 2; }
cd "$root"
budget="${GRADTUNE_TUNE_BUDGET:-300}"
top="${GRADTUNE_RETUNE_TOP:-0}"
./scripts/build.sh
export PATH="$root/.venv/bin:$PATH"
out=build/retune
mkdir -p "$out"
build/tuner/gradtune suite --from-journal "$journal" --top "$top" -o "$out/suite.json"
echo "[retune] before: the journalled calls as this build serves them"
build/bench/gradtune-bench --suite "$out/suite.json" --samples 5 --json "$out/before.json" >"$out/before.txt"
echo "[retune] tuning them for ${budget}s (GRADTUNE_TUNE_BUDGET to change)"
build/tuner/gradtune tune --from-journal "$journal" --top "$top" --budget "$budget" 2>&1 | tee "$out/tune.log"
# A record changes only for a setting that beats it side by side.
build/tuner/gradtune distill --remeasure 3
echo "[retune] rebuilding with the distilled records"
cmake --build build -j "$(nproc)"
echo "[retune] after"
build/bench/gradtune-bench --suite "$out/suite.json" --samples 5 --json "$out/after.json" >"$out/after.txt"
.venv/bin/python - "$out" <<'PY'
import json, sys
out = sys.argv[1]
before = {(r["op"], r["id"]): r for r in json.load(open(f"{out}/before.json"))}
after = {(r["op"], r["id"]): r for r in json.load(open(f"{out}/after.json"))}
suite = {e["id"]: e for e in json.load(open(f"{out}/suite.json"))}
def speedup(r):
    return r["generic_median_ms"] / r["tuned_median_ms"] if r.get("tuned_median_ms") else float("nan")
def onednn(r):
    best = min((t for t in (r.get("onednn_tf_layout_median_ms"), r.get("onednn_own_layout_median_ms")) if t), default=None)
    return f"{best / r['tuned_median_ms']:.2f}" if best and r.get("tuned_median_ms") else "-"
lines = ["# Retune report", "",
         "Speedup = generic variant time / served variant time, both measured side by side in one run;",
         "oneDNN = best oneDNN time / served time in the same run (> 1: gradtune faster).", "",
         "| signature | shape | tier before -> after | speedup before | speedup after | vs oneDNN before | after |",
         "|---|---|---|---|---|---|---|"]
for key in sorted(after, key=lambda k: int(k[1][1:])):
    a, b = after[key], before.get(key, {})
    e = suite[key[1]]
    lines.append(f"| {key[1]} {key[0]} | {e['description']} | {b.get('tier', '?')} -> {a['tier']} | "
                 f"{speedup(b):.2f}x | {speedup(a):.2f}x | {onednn(b) if b else '-'} | {onednn(a)} |")
open(f"{out}/report.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "[retune] report written to $out/report.md; the library is build/runtime/libgradtune.a"
