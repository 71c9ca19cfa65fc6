#!/bin/sh
# contrib/fleet/srun-snapshot.sh on a real Slurm cluster: Debian's munged,
# slurmctld and five slurmd started here as this suite's own processes on
# loopback (node1..node5 at 127.0.0.1..5, 4 CPUs each), stopped when it ends.
# Each slurmd is a host of its own (in_node): its hostname, its file system.
# node4 has no abiscope installed, node5's view of the shared folder
# $FX/srun-fail is read-only (a full disk).  Partition "good" is
# node[1-3] (the default), "mixed" node1, node4 and node5.
# Skipped, with a SKIP line, without the packages (slurm-wlm, munge), root
# or a mounted /sys/fs/cgroup.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_fleet.sh"
fixture_dir fleet_slurm
R=$TOP/contrib/fleet
RECIPES="slurm-srun slurm-sbatch slurm-array slurm-failures"
for c in munged munge slurmctld slurmd srun sbatch sinfo unshare; do
	command -v $c >/dev/null 2>&1 || skip_suite "$RECIPES" "$c is not installed (Debian: slurm-wlm, munge)"
done
can_make_nodes || skip_suite "$RECIPES" "needs root and mount/UTS namespaces to run slurmd nodes here"
# slurmd reads the cgroup file system at start (also with proctrack/linuxproc
# and task/none); a container or a chroot may not have it mounted
grep -q ' /sys/fs/cgroup' /proc/self/mounts ||
	skip_suite "$RECIPES" "/sys/fs/cgroup is not mounted here (a container or a chroot?): slurmd cannot start"
fleet_fixture
t0=$(date +%s)

# munge: a key of our own, a socket of our own
M=$FX/munge
mkdir -p "$M" && chmod 700 "$M"
dd if=/dev/urandom of="$M/key" bs=1024 count=1 2>/dev/null && chmod 400 "$M/key"
stop_at_exit "$M/pid"
munged -f --socket="$M/sock" --key-file="$M/key" --log-file="$M/log" --pid-file="$M/pid" \
	--seed-file="$M/seed" || skip_suite "$RECIPES" "munged did not start: $(tail -3 "$M/log")"

C=$FX/slurm.conf
# No accounting database, and so no associations.  Pending jobs are started
# by the backfill scheduler alone (sched_interval=-1 turns the main
# scheduling loop off): before 24.11 (SchedMD commit 4790a7ac53) slurmctld
# hands a stale errno to assoc_mgr_init(), which without a database then
# fails and leaves the association lists unmade, and the main loop's
# assoc_mgr_validate_assoc_id() holds every queued job (batch jobs, array
# elements) with reason "InvalidAccount", forever.  Ubuntu 24.04's 23.11
# does: its mpi/pmix plugins fail to load (no libpmix), mpi.conf is missing,
# the errno is ENOENT.  Backfill does not look at associations; srun's jobs
# start at submission and reach neither loop.
mkdir -p "$FX/state" "$FX/spool" "$FX/log" "$FX/srun-fail"
ctld_port=$(free_port)
{
	cat <<EOF
ClusterName=abiscope-test
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$M/sock
StateSaveLocation=$FX/state
SlurmdSpoolDir=$FX/spool/%n
SlurmctldPidFile=$FX/slurmctld.pid
SlurmdPidFile=$FX/slurmd-%n.pid
SlurmctldLogFile=$FX/log/slurmctld.log
SlurmdLogFile=$FX/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=-1,bf_interval=1
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
MailProg=/bin/true
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=2
EOF
	for n in 1 2 3 4 5; do
		echo "NodeName=node$n NodeAddr=127.0.0.$n Port=$(free_port) CPUs=4 State=UNKNOWN"
	done
	echo "PartitionName=good Nodes=node[1-3] Default=YES MaxTime=INFINITE State=UP"
	echo "PartitionName=mixed Nodes=node1,node4,node5 MaxTime=INFINITE State=UP"
} >"$C"
export SLURM_CONF="$C"
stop_at_exit "$FX/slurmctld.pid" "$FX"/slurmd-node1.pid "$FX"/slurmd-node2.pid "$FX"/slurmd-node3.pid \
	"$FX"/slurmd-node4.pid "$FX"/slurmd-node5.pid
slurmctld -f "$C" -i
for n in 1 2 3 4 5; do
	hide= ro=
	[ $n = 4 ] && hide=$bin
	[ $n = 5 ] && ro=$FX/srun-fail
	in_node node$n "$hide" "$ro" slurmd -f "$C" -N node$n
done
i=0
while [ "$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | grep -c ' idle$')" -lt 5 ] && [ $i -lt 100 ]; do
	sleep 0.2
	i=$((i + 1))
done
idle=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | grep -c ' idle$')
expect_eq "$idle" 5 "slurm: five nodes idle ($((($(date +%s) - t0))) s to start)"
if [ "$idle" != 5 ]; then
	tail -n 5 "$FX"/log/*.log
	exit 1
fi

# the recipe as written: srun --nodes=3 --ntasks-per-node=1
OUT=$FX/srun NODES=3 ENV=$ENV PATH=$P sh "$R/srun-snapshot.sh" >"$FX/srun.txt" 2>"$FX/srun.err"
expect_eq "$?:$(count "$FX/srun")" "0:3" "slurm-srun: one snapshot per node, exit 0"
expect_eq "$(ls "$FX/srun")" "$(printf 'node1.json.gz\nnode2.json.gz\nnode3.json.gz')" "slurm-srun: files named by node"
expect_contains "$(cat "$FX/srun.txt")" "3 hosts, 1 group" "slurm-srun: fleet groups the nodes"
expect_not_contains "$(cat "$FX/srun.txt")" "missing" "slurm-srun: no node missing"

OUT=$FX/srun2 NODES=2 ENV=$ENV PATH=$P sh "$R/srun-snapshot.sh" >"$FX/srun2.txt" 2>&1
expect_eq "$?:$(count "$FX/srun2")" "0:2" "slurm-srun: NODES=2 gives two snapshots"

# as a batch job: the node count comes from the allocation
# (a job that never starts fails the case, it does not hang the suite: a
# Slurm that holds it pending, as Ubuntu 24.04's 23.11 did with
# "InvalidAccount" under the main scheduler, is a failure with the reason
# squeue gives)
OUT=$FX/sbatch ENV=$ENV PATH=$P timeout 180 sbatch --wait --nodes=3 --output="$FX/sbatch.out" \
	"$R/srun-snapshot.sh" >"$FX/sbatch.txt" 2>&1
st=$?
[ $st = 124 ] && echo "# sbatch --wait gave up after 180 s: $(squeue -h -o '%i %T %r' 2>&1 | tr '\n' ' ')"
expect_eq "$st:$(count "$FX/sbatch")" "0:3" "slurm-sbatch: the recipe as a batch job on 3 nodes"
expect_contains "$(cat "$FX/sbatch.out")" "3 hosts, 1 group" "slurm-sbatch: its report in the job's output"

# a job array: each element runs the recipe in its own one-node allocation
OUT=$FX/array ENV=$ENV PATH=$P timeout 180 sbatch --wait --array=1-3 --nodes=1 --exclusive \
	--output="$FX/array-%a.out" --wrap "OUT=\$OUT/\$SLURM_ARRAY_TASK_ID sh $R/srun-snapshot.sh" \
	>"$FX/array.txt" 2>&1
expect_eq "$?:$(count "$FX/array/1"):$(count "$FX/array/2"):$(count "$FX/array/3")" "0:1:1:1" \
	"slurm-array: each element of a job array writes its node's snapshot"

# failures: node4 has no abiscope, node5 cannot write the shared folder
OUT=$FX/srun-fail NODES=3 SLURM_PARTITION=mixed ENV=$ENV PATH=$P sh "$R/srun-snapshot.sh" \
	>"$FX/fail.txt" 2>"$FX/fail.err"
expect_eq "$?:$(ls "$FX/srun-fail")" "1:node1.json.gz" "slurm-failures: exit 1, only node1 wrote a snapshot"
expect_contains "$(cat "$FX/fail.txt")" "missing (2 of 3 expected hosts, no snapshot): node4, node5" \
	"slurm-failures: the fleet report names the missing nodes"
expect_contains "$(cat "$FX/fail.err")" "no snapshot from node4 (exit 127)" "slurm-failures: abiscope missing on node4"
expect_contains "$(cat "$FX/fail.err")" "Read-only file system" "slurm-failures: node5's write error is shown"
expect_contains "$(cat "$FX/fail.err")" "no snapshot from node5 (exit 3)" "slurm-failures: node5 exits 3 (not written)"
echo "# slurm suite: $(($(date +%s) - t0)) s"
finish
