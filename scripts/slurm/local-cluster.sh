#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the sharded-sweep test and for trying
# scripts/slurm/sweep.sh without a real cluster: munged, slurmctld and slurmd on 127.0.0.1, with
# every file (munge key and socket, slurm.conf, state, logs) in one directory.
#
# Usage:
#   scripts/slurm/local-cluster.sh start DIR   # starts it; then `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm/local-cluster.sh stop DIR    # stops the daemons started in DIR
#
# Debian's slurm-wlm 22.05 and munge (`apt-get install slurm-wlm munge`). It runs as root without
# systemd or cgroups: ProctrackType=proctrack/linuxproc and TaskPlugin=task/none need neither,
# SlurmUser=root runs the controller as the caller, and munged gets its own key and socket in DIR
# so that it never touches a system munged. Ports: $LEOPACE_SLURM_PORT (slurmctld, default 6817)
# and the next one (slurmd).
set -euo pipefail

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action="$1"
dir="$2"

# Sends SIGTERM to the daemon whose pid file is $1 and waits up to 10 s for it to exit.
stop_daemon() {
  local pidfile="$1" pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

case "$action" in
start)
  for tool in munged mungekey slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || {
      echo "$tool is missing: apt-get install slurm-wlm munge" >&2
      exit 1
    }
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd -P)
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
  chmod 700 "$dir/munge"
  port="${LEOPACE_SLURM_PORT:-6817}"
  cpus=$(nproc)

  [ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" --force
  chmod 600 "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed"

  cat >"$dir/slurm.conf" <<CONF
ClusterName=leopace
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  # -i: ignore a state left by an earlier cluster in DIR; slurmd names itself by NodeName.
  slurmctld -i -f "$SLURM_CONF"
  slurmd -N localhost -f "$SLURM_CONF"
  for _ in $(seq 1 100); do
    state=$(sinfo -h -N -o '%t' 2>/dev/null | head -1 || true)
    case "$state" in
    idle* | mix* | alloc*)
      echo "single-node Slurm up in $dir (node localhost, $cpus CPUs, ports $port-$((port + 1))); export SLURM_CONF=$SLURM_CONF"
      exit 0
      ;;
    esac
    sleep 0.2
  done
  echo "the node did not become idle within 20 s (state: ${state:-none}); logs:" >&2
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" "$dir/munge/munged.log" >&2 || true
  exit 1
  ;;
stop)
  [ -d "$dir" ] || exit 0
  stop_daemon "$dir/slurmd.pid"
  stop_daemon "$dir/slurmctld.pid"
  stop_daemon "$dir/munge/munged.pid"
  ;;
*)
  usage
  ;;
esac
