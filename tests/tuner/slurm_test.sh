#!/usr/bin/env bash
# Sharded tuning on a real Slurm: starts a single-node cluster on this machine
# (MUNGE, slurmctld and slurmd from Debian, configured here, on ports of their
# own, torn down at exit), submits a 2-task array job of a two-group suite
# with scripts/slurm/submit.sh (each task `gradtune tune --shard K/2`) and its
# dependent merge-and-distill job, and checks:
#   - both jobs complete, the two tuning tasks never shared the node, and
#     the merged log measures exactly the candidates
#     and shapes that one unsharded run with the same seed measures;
#   - `gradtune merge` is byte-for-byte deterministic (inputs in any order,
#     a merged log merged again);
#   - distill of the merged log writes a record for every shape of the suite.
# Exits 77 (skipped) only where the Slurm packages cannot be installed.
# Usage: slurm_test.sh <gradtune> <python> <source dir>
set -euo pipefail
gradtune="$1"; python="$2"; root="$3"

if ! "$root/scripts/bootstrap.sh" "$root/scripts/apt-packages-slurm.txt" >/tmp/gradtune-slurm-bootstrap.log 2>&1; then
  echo "SKIPPED: Slurm and MUNGE cannot be installed here:"; tail -3 /tmp/gradtune-slurm-bootstrap.log
  exit 77
fi
for tool in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$tool" >/dev/null || PATH="$PATH:/usr/sbin"
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 77; }
done

work="$(mktemp -d)"
chmod 700 "$work"
pids=()
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --full -u "$(id -un)" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for f in "$work"/slurmctld.log "$work"/slurmd.log "$work"/shards/*.out; do
    [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }
  done
  exit 1
}

# --- MUNGE and Slurm, on this machine only ----------------------------------
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge.key"
munged --force --foreground --key-file="$work/munge.key" --socket="$work/munge.sock" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munged.seed" >"$work/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -S "$work/munge.sock" ] && break; sleep 0.1; done
[ -S "$work/munge.sock" ] || fail "munged did not start: $(cat "$work/munged.log" 2>/dev/null)"

port=$((20000 + RANDOM % 20000))
host="$(hostname -s)"
mkdir -p "$work/state" "$work/spool" "$work/shards"
cat >"$work/slurm.conf" <<EOF
ClusterName=gradtune-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1 State=UNKNOWN
PartitionName=gradtune Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 1 300); do
  state="$(sinfo -h -o %T 2>/dev/null || true)"
  [ "$state" = "idle" ] && break
  sleep 0.1
done
[ "$state" = "idle" ] || fail "the node did not come up (state '$state')"
echo "single-node Slurm up on $host, ports $port-$((port + 1))"

# --- A sharded tuning job: 2 array tasks, then merge + distill ---------------
cat >"$work/suite.txt" <<'EOF'
DepthwiseConv2dNativeBackpropInput N=1 H=20 W=20 C=32 f=3 s=1 id=S1
FractionalAvgPoolGrad N=1 H=20 W=20 C=16 OH=14 OW=14 id=S2
EOF
# --slow-factor 1e9: every candidate is timed in full. A candidate whose first
# call is slow is cut and never becomes a record, and on a 2-core machine a
# first call that waits for a core (slurmd launching the next job) was cut in
# about one run in three; this test is about sharding, merge and distill.
common=(--suite "$work/suite.txt" --batch-size 1 --jobs 1 --samples 2 --min-sample-ms 2 --slow-factor 1e9 --seed 7)
# 1 candidate per shard (one group each), 2 unsharded: the same first batch of each group.
tune=("${common[@]}" --max-trials 1)
export GRADTUNE_BIN="$gradtune" GRADTUNE_SHARD_DIR="$work/shards"
submitted="$("$root/scripts/slurm/submit.sh" 2 "${tune[@]}" -- --records-dir "$work/records" --defaults-dir "")" \
  || fail "submit.sh: $submitted"
echo "$submitted"
ids=$(echo "$submitted" | grep -o 'job [0-9]*' | awk '{print $2}' | tr '\n' ',')
for _ in $(seq 1 1200); do
  [ -z "$(squeue -h -j "${ids%,}" 2>/dev/null)" ] && break
  sleep 0.25
done
[ -z "$(squeue -h -j "${ids%,}" 2>/dev/null)" ] && [ -f "$work/shards/merge.out" ] || fail "the jobs did not finish in 5 minutes"
for id in ${ids//,/ }; do
  states="$(scontrol -o show job "$id" | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')"
  [ "$states" = "JobState=COMPLETED " ] || fail "job $id ended $states"
done
[ -f "$work/shards/trials-shard-0.jsonl" ] && [ -f "$work/shards/trials-shard-1.jsonl" ] || fail "a shard wrote no log"
# Each tuning task held the node alone (tune-array.sbatch asks --exclusive):
# in slurmctld's log, no task is allocated before the one before it completed.
"$python" - "$work/slurmctld.log" "${ids%%,*}" <<'PY' || fail "two tuning tasks shared the node"
import re, sys
running, overlap, seen = set(), [], 0
for line in open(sys.argv[1]):
    m = re.search(r"Allocate JobId=(%s_\d+)" % sys.argv[2], line)
    if m:
        seen += 1
        if running: overlap.append((m.group(1), sorted(running)))
        running.add(m.group(1))
    m = re.search(r"_job_complete: JobId=(%s_\d+)\S* done" % sys.argv[2], line)
    if m: running.discard(m.group(1))
print(f"tuning tasks allocated: {seen}, while another ran: {overlap or 'none'}")
sys.exit(1 if overlap or seen != 2 else 0)
PY

# --- The same tuning unsharded -----------------------------------------------
"$gradtune" tune "${common[@]}" --max-trials 2 --log "$work/whole.jsonl" --work-dir "$work/whole" \
  >"$work/whole.out" 2>&1 || { cat "$work/whole.out"; fail "the unsharded run"; }
"$python" - "$work/shards/trials.jsonl" "$work/whole.jsonl" <<'PY' || fail "sharded and unsharded runs differ"
import json, sys
def measured(path):
    keys = set()
    for line in open(path):
        t = json.loads(line)
        keys.add((t["op"], json.dumps(t["structure"], sort_keys=True), json.dumps(t["knobs"], sort_keys=True),
                  t["shape_id"], t["status"] != "compile_error"))
    return keys
sharded, whole = measured(sys.argv[1]), measured(sys.argv[2])
print(f"sharded and merged: {len(sharded)} measurement(s); unsharded: {len(whole)}")
if sharded != whole or len(whole) != 2:
    for k in sorted(sharded ^ whole):
        print("only in", "sharded" if k in sharded else "unsharded", k)
    sys.exit(1)
PY

# --- merge: deterministic and idempotent (more in merge_test.sh) --------------
"$gradtune" merge "$work/shards/trials-shard-1.jsonl" "$work/shards/trials-shard-0.jsonl" -o "$work/reversed.jsonl" 2>/dev/null
cmp -s "$work/reversed.jsonl" "$work/shards/trials.jsonl" || fail "merge depends on the order of its inputs"
"$gradtune" merge "$work/shards/trials.jsonl" "$work/shards/trials-shard-0.jsonl" -o "$work/again.jsonl" 2>/dev/null
cmp -s "$work/again.jsonl" "$work/shards/trials.jsonl" || fail "merging a merged log changed it"

# --- distill of the merged log: a record per shape ---------------------------
"$python" - "$work/records" <<'PY' || fail "distill of the merged log"
import glob, json, os, sys
files = sorted(glob.glob(sys.argv[1] + "/*/*.json"))
count = {os.path.basename(f)[:-5]: len(json.load(open(f))["records"]) for f in files}
print("records:", count)
assert count == {"DepthwiseConv2dNativeBackpropInput": 1, "FractionalAvgPoolGrad": 1}, count
PY
echo "PASSED"
