#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for as long as one command runs:
#
#   scripts/slurm-local.sh COMMAND [ARG...]
#
# Installs Debian's slurm-wlm and munge if they are missing (apt-get, needs root), writes a
# minimal slurm.conf in a temporary directory (this host as the controller and the only node,
# loopback only, free ports), starts munged, slurmctld and slurmd, waits (bounded) until the node
# is idle, runs COMMAND with SLURM_CONF pointing at that configuration (so srun, sinfo, … use it),
# then stops exactly the daemons it started, by PID, and exits with COMMAND's status.
#
# Why these settings: a container often lacks the cgroup features Slurm's defaults need, so
# processes are tracked by parent PID (proctrack/linuxproc), tasks are not bound (task/none) and
# there is no accounting (jobacct_gather/none, accounting_storage/none). Everything runs as root
# (SlurmUser=root) because this is a throwaway cluster for tests; munged needs --force for that.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARG...]" >&2
    exit 2
fi

need_install=()
command -v slurmctld >/dev/null 2>&1 || need_install+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || need_install+=(munge)
if [ ${#need_install[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "slurm-local.sh: ${need_install[*]} missing and not root: cannot install" >&2
        exit 1
    fi
    # A fresh machine may never have fetched the package lists.
    if ! apt-get install -y -q --no-install-recommends "${need_install[@]}" >/dev/null 2>&1; then
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            "${need_install[@]}" >/dev/null
    fi
fi
MUNGED=$(command -v munged || echo /usr/sbin/munged)
SLURMCTLD=$(command -v slurmctld || echo /usr/sbin/slurmctld)
SLURMD=$(command -v slurmd || echo /usr/sbin/slurmd)

dir=$(mktemp -d /tmp/slurm-local.XXXXXX)
chmod 700 "$dir"
pids=()
# Processes Slurm started for us (slurmstepd outlives slurmd by design): found by our own
# SLURM_CONF in their environment, so only this cluster's are ever touched.
ours() {
    grep -lsz "^SLURM_CONF=$dir/slurm.conf\$" /proc/[0-9]*/environ 2>/dev/null |
        sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | grep -vx "$$" || true
}
stop() {
    local status=$?
    # Let finished job steps report to slurmd before it goes (bounded).
    for _ in $(seq 20); do
        [ -z "$(squeue -h 2>/dev/null)" ] && break
        sleep 0.25
    done
    # Ours only, newest first: slurmd, slurmctld, munged.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    done
    unset SLURM_CONF # so the search below does not find its own grep
    for pid in $(ours); do
        kill "$pid" 2>/dev/null || true
    done
    if [ "$status" != 0 ] && [ -z "${SLURM_LOCAL_KEEP:-}" ]; then
        for log in munged slurmctld slurmd; do
            echo "--- $log.log (last lines)" >&2
            tail -n 15 "$dir/$log.log" >&2 2>/dev/null || true
        done
    fi
    rm -rf "$dir"
    exit "$status"
}
trap stop EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
host=$(hostname -s)
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done

# munge: a fresh key, its own socket, state and log in $dir.
mkdir -p "$dir/munge" "$dir/spool" "$dir/state"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
"$MUNGED" --foreground --force \
    --key-file="$dir/munge/munge.key" \
    --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" \
    --seed-file="$dir/munge/munged.seed" \
    --log-file="$dir/munged.log" >>"$dir/munged.log" 2>&1 &
pids+=($!)

cat >"$dir/slurm.conf" <<CONF
ClusterName=respbench-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$dir/slurm.conf"

for _ in $(seq 50); do
    [ -S "$dir/munge/munge.socket" ] && break
    sleep 0.1
done
"$SLURMCTLD" -D -i -f "$SLURM_CONF" >>"$dir/slurmctld.log" 2>&1 &
pids+=($!)
"$SLURMD" -D -f "$SLURM_CONF" -N "$host" >>"$dir/slurmd.log" 2>&1 &
pids+=($!)

state=""
for _ in $(seq 60); do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1 || true)
    case "$state" in idle | mix | alloc) break ;; esac
    for pid in "${pids[@]}"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "slurm-local.sh: a Slurm daemon (PID $pid) exited during start-up" >&2
            exit 1
        fi
    done
    sleep 0.5
done
case "$state" in
idle | mix | alloc) ;;
*)
    echo "slurm-local.sh: the node did not become idle within 30 s (state: ${state:-none})" >&2
    exit 1
    ;;
esac

set +e
"$@"
status=$?
set -e
exit "$status"
