#!/usr/bin/env bash
# The README's Slurm recipe on a real single-node Slurm (Debian's slurm-wlm and munge, started
# here as root with no systemd): one array task per rank's trace writes its JSON report, the
# reports are merged with `tracesight reports/`, and the merged job view must equal the one
# read from the traces directly. One trace is broken on purpose: its task must fail and the
# file must be named in the merged report, not lost. Skips, saying why, where Slurm cannot be
# installed or started (not root, no apt, daemons that do not come up).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$(realpath "${TRACESIGHT_BIN:-$ROOT/target/release/tracesight}")
skip() { echo "slurm: SKIPPED: $*"; exit 0; }
[ -x "$BIN" ] || { echo "slurm: no CLI at $BIN" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root to install and start slurmctld, slurmd and munged"

if ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || skip "no apt-get to install slurm-wlm and munge"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1 \
    || skip "apt-get could not install slurm-wlm and munge"
fi

WORK=$(mktemp -d /tmp/tracesight-slurm.XXXXXX)
HOST=$(hostname -s)
stop() {
  for p in /run/slurmctld.pid /run/slurmd.pid; do [ -f $p ] && kill "$(cat $p)" 2>/dev/null || true; done
  [ -f /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
  rm -rf "$WORK"
}
trap stop EXIT

# munge: a key and the daemon.
mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
[ -s /etc/munge/munge.key ] || head -c 1024 /dev/urandom > /etc/munge/munge.key
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
chmod 400 /etc/munge/munge.key
pgrep -x munged >/dev/null || runuser -u munge -- munged --force || skip "munged did not start"

# slurm: one node, one partition, this machine's cores.
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat > /etc/slurm/slurm.conf <<EOF
ClusterName=tracesight-test
SlurmctldHost=$HOST
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$HOST CPUs=$(nproc) RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
pgrep -x slurmctld >/dev/null || slurmctld || skip "slurmctld did not start"
pgrep -x slurmd >/dev/null || slurmd || skip "slurmd did not start"
for _ in $(seq 30); do sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break; sleep 1; done
sinfo -h -o %t | grep -qE '^(idle|mix|alloc)' || skip "the node did not come up: $(sinfo -h 2>&1 | head -1)"

# The job: the project's fixtures as ranks, and one broken trace among them.
mkdir -p "$WORK/traces" "$WORK/reports"
gzip -c tests/fixtures/current_schema.json > "$WORK/traces/rank0.json.gz"
gzip -c tests/fixtures/math_sdpa.json > "$WORK/traces/rank1.json.gz"
gzip -c tests/fixtures/old_schema.json > "$WORK/traces/rank2.json.gz"
printf '{"traceEvents": [' | gzip -c > "$WORK/traces/rank3-broken.json.gz"
N=$(ls "$WORK/traces" | wc -l)

# The README's recipe, word for word but for the paths.
cat > "$WORK/analyse.sbatch" <<EOF
#!/bin/bash
#SBATCH --array=0-$((N - 1)) --cpus-per-task=1 --mem=1G --output=$WORK/task-%a.out
cd $WORK
f=\$(ls traces/*.json.gz | sed -n "\$((SLURM_ARRAY_TASK_ID + 1))p")
$BIN --json "\$f" > "reports/\$(basename "\$f" .json.gz).report.json"
EOF
JOB=$(sbatch --parsable "$WORK/analyse.sbatch")
for _ in $(seq 120); do squeue -h -j "$JOB" 2>/dev/null | grep -q . || break; sleep 1; done
squeue -h -j "$JOB" | grep -q . && { echo "slurm: job $JOB did not finish in 120 s" >&2; exit 1; }

fail=0
check() { if eval "$2"; then echo "slurm: ok: $1"; else echo "slurm: FAILED: $1" >&2; fail=1; fi; }
STATES=$(scontrol -o show job "$JOB" | sed -E 's/.*ArrayTaskId=([0-9]+) .*JobState=([A-Z_]+) .*/task \1: \2/' | sort)
echo "slurm: job $JOB: $(echo "$STATES" | paste -sd, -)"
check "the task of the broken trace failed, the others completed" \
  '[ "$(echo "$STATES" | grep -c COMPLETED)" = $((N - 1)) ] && echo "$STATES" | grep -q "task 3: FAILED"'
check "$N array tasks wrote $N reports" '[ "$(ls "$WORK/reports" | wc -l)" = "$N" ]'
"$BIN" --json "$WORK/reports" > "$WORK/merged.json" || true
"$BIN" --json "$WORK/traces" > "$WORK/direct.json" || true
check "the merged reports equal the traces read directly (job view, ranks, errors)" \
  'python3 - "$WORK/merged.json" "$WORK/direct.json" <<PY
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a == b, "merged and direct reports differ"
assert len(a["traces"]) == 3 and a.get("job") is not None
PY'
check "the broken trace is named in the merged report" \
  'python3 -c "import json,sys; e=json.load(open(sys.argv[1]))[\"errors\"]; assert [x[\"file\"] for x in e]==[\"rank3-broken.json.gz\"], e" "$WORK/merged.json"'
exit $fail
