#!/bin/bash
# slurm_epilog.sh: runs contrib/slurm/oomdoc-epilog.sh under a real
# single-node Slurm (Debian's slurm-wlm and munge; slurmdbd and
# mariadb-server for the accounting part): writes a minimal slurm.conf
# (this host as controller and node, proctrack/linuxproc, task/none, the
# script as TaskEpilog and as Epilog, each with its own spool, every
# state directory under a temp directory), starts munged, MariaDB and
# slurmdbd (their data under the temp directory too), slurmctld and
# slurmd, submits a job that prints a real out-of-memory log and fails,
# waits (bounded) for both, checks both spools, the job's Comment through
# scontrol (set by the TaskEpilog, which runs as the job's user while the
# job runs, so with OOMDOC_COMMENT_FIELD=Comment as a user's would be)
# and its AdminComment in the accounting record through sacct (set by the
# Epilog, as root, after the job finished: slurmctld refuses to update a
# finished job, so the epilog uses sacctmgr modify job), submits a job
# with no OOM and checks that neither kept a report, and stops the
# daemons.  When the Slurm daemons cannot start here it prints why and
# exits 77 (ctest's SKIP_RETURN_CODE); without slurmdbd or MariaDB the
# accounting part alone is skipped, with a NOTE saying so.  It never
# fakes scontrol.
#
# Usage: slurm_epilog.sh OOMDOC
set -u
OOMDOC=$(readlink -f "$1")
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SKIP=77

skip() {
	echo "SKIP: $*"
	exit $SKIP
}
fail() {
	echo "FAIL: $*"
	for f in "$T"/slurmctld.log "$T"/slurmd.log "$T"/munged.log "$T"/slurmdbd.log; do
		[ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 15 "$f"; }
	done
	exit 1
}

for p in munged mungekey slurmctld slurmd scontrol sbatch sinfo; do
	command -v "$p" >/dev/null 2>&1 ||
		skip "$p not found (Debian packages slurm-wlm and munge)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root (uid $(id -u))"
acct=yes
for p in slurmdbd mariadbd mariadb-install-db sacctmgr sacct; do
	command -v "$p" >/dev/null 2>&1 || { acct="no: $p not found (Debian packages slurmdbd and mariadb-server)"; break; }
done

T=$(mktemp -d /tmp/oomdoc-slurm.XXXXXX) || skip "no temp directory"
chmod 755 "$T"
pids=()
cleanup() {
	local i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[$i]}" 2>/dev/null
	done
	for i in "${pids[@]}"; do
		wait "$i" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

# Ports that nothing listens on: chosen from this process's id.
base=$((20000 + ($$ % 20000)))
ctld_port=$base
slurmd_port=$((base + 1))
db_port=$((base + 2))
dbd_port=$((base + 3))
host=$(hostname -s)

# munge: its own key, socket and files.
mkdir -p "$T/munge" && chmod 711 "$T/munge"
mungekey -c -k "$T/munge/munge.key" >/dev/null 2>&1 ||
	skip "mungekey could not create a key"
munged --force --key-file="$T/munge/munge.key" \
	--socket="$T/munge/munge.sock" --pid-file="$T/munge/munged.pid" \
	--log-file="$T/munged.log" --seed-file="$T/munge/munged.seed" \
	>/dev/null 2>&1 || skip "munged did not start: $(tail -n 2 "$T/munged.log" 2>/dev/null)"
pids+=("$(cat "$T/munge/munged.pid")")

# The epilog: slurmd gives it a small environment, so a wrapper names
# the program, the spool and scontrol's configuration.
mkdir -p "$T/spool" "$T/spool-epilog" "$T/ctld" "$T/d"
for w in task-epilog:spool epilog:spool-epilog; do
	cat >"$T/${w%%:*}.sh" <<EOS
#!/bin/sh
export OOMDOC="$OOMDOC" OOMDOC_SPOOL="$T/${w#*:}" SLURM_CONF="$T/slurm.conf"
export PATH="$PATH"
exec "$ROOT/contrib/slurm/oomdoc-epilog.sh"
EOS
	chmod 755 "$T/${w%%:*}.sh"
done
# The TaskEpilog runs as the job's user, who may set Comment only.
sed -i '2a export OOMDOC_COMMENT_FIELD=Comment' "$T/task-epilog.sh"

# The accounting database: MariaDB on a port of its own, slurmdbd on it.
if [ "$acct" = yes ]; then
	mkdir -p "$T/db"
	if ! mariadb-install-db --no-defaults --datadir="$T/db" --user=root \
		--auth-root-authentication-method=normal --skip-test-db \
		>"$T/db-install.log" 2>&1; then
		acct="no: mariadb-install-db failed: $(tail -n 2 "$T/db-install.log")"
	else
		mariadbd --no-defaults --datadir="$T/db" --user=root \
			--bind-address=127.0.0.1 --port="$db_port" \
			--socket="$T/db.sock" --pid-file="$T/db.pid" \
			--log-error="$T/db.err" --innodb-buffer-pool-size=16M \
			--skip-log-bin >/dev/null 2>&1 &
		pids+=($!)
		for ((i = 0; i < 60; i++)); do
			[ -S "$T/db.sock" ] && break
			sleep 0.5
		done
		[ -S "$T/db.sock" ] ||
			acct="no: MariaDB did not start: $(tail -n 2 "$T/db.err" 2>/dev/null)"
	fi
fi
if [ "$acct" = yes ]; then
	cat >"$T/slurmdbd.conf" <<EOS
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
DbdHost=$host
DbdPort=$dbd_port
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=root
StorageLoc=oomdoc_acct
PidFile=$T/slurmdbd.pid
LogFile=$T/slurmdbd.log
DebugLevel=info
EOS
	chmod 600 "$T/slurmdbd.conf"
fi

cat >"$T/slurm.conf" <<EOS
ClusterName=oomdoctest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
StateSaveLocation=$T/ctld
SlurmdSpoolDir=$T/d
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/linear
Epilog=$T/epilog.sh
TaskEpilog=$T/task-epilog.sh
MinJobAge=600
NodeName=$host CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=5 State=UP
EOS
export SLURM_CONF="$T/slurm.conf"
if [ "$acct" = yes ]; then
	sed -i "s|^AccountingStorageType=.*|AccountingStorageType=accounting_storage/slurmdbd\\
AccountingStorageHost=$host\\
AccountingStoragePort=$dbd_port\\
AccountingStoragePass=$T/munge/munge.sock|" "$T/slurm.conf"
	# slurmdbd reads slurmdbd.conf beside $SLURM_CONF.
	slurmdbd -D >"$T/slurmdbd.out" 2>&1 &
	pids+=($!)
	# The cluster's record, which slurmctld needs to register: 30 s at
	# most for slurmdbd to create its tables and answer.
	end=$((SECONDS + 30))
	while [ $SECONDS -lt $end ] && kill -0 "${pids[-1]}" 2>/dev/null; do
		timeout 10 sacctmgr -i add cluster oomdoctest >"$T/sacctmgr.out" 2>&1
		timeout 10 sacctmgr -n -P list cluster format=cluster 2>/dev/null |
			grep -qx oomdoctest && break
		sleep 0.5
	done
	timeout 10 sacctmgr -n -P list cluster format=cluster 2>/dev/null |
		grep -qx oomdoctest ||
		acct="no: slurmdbd did not take the cluster: $(tail -n 3 "$T/sacctmgr.out" "$T/slurmdbd.log" 2>/dev/null)"
	if [ "$acct" != yes ]; then
		sed -i "s|^AccountingStorageType=.*|AccountingStorageType=accounting_storage/none|; /^AccountingStorage\(Host\|Port\|Pass\)=/d" "$T/slurm.conf"
	fi
fi
[ "$acct" = yes ] || echo "NOTE: the accounting part is skipped: ${acct#no: }"

slurmctld -i -D -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
pids+=($!)

# The node up and idle: 30 s at most.
for ((i = 0; i < 60; i++)); do
	state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	for p in "${pids[@]:1}"; do
		kill -0 "$p" 2>/dev/null || skip "a Slurm daemon exited at start: $(
			cat "$T"/slurmctld.out "$T"/slurmd.out 2>/dev/null | tail -n 3
			tail -n 3 "$T"/slurmctld.log "$T"/slurmd.log 2>/dev/null)"
	done
	sleep 0.5
done
[ "$state" = idle ] || skip "the node did not come up (state '${state:-none}'): $(
	tail -n 3 "$T"/slurmd.log "$T"/slurmctld.log 2>/dev/null)"

# A job that prints a real out-of-memory log and fails.
cat >"$T/job.sh" <<EOS
#!/bin/sh
cat "$ROOT/fixtures/sample/job.log"
exit 1
EOS
chmod 755 "$T/job.sh"
job=$(sbatch --parsable -o "$T/job-%j.out" -D "$T" "$T/job.sh" 2>&1) ||
	fail "sbatch: $job"
job=${job%%;*}
echo "submitted job $job"

# The reports, the Comment (TaskEpilog) and the AdminComment in the
# accounting record (Epilog): 30 s at most.
field() {        # field NAME: the job's NAME in scontrol show job
	scontrol show job "$job" 2>/dev/null |
		sed -n "s/^[[:space:]]*$1=\(.*[^[:space:]]\)[[:space:]]*\$/\1/p"
}
admin=
for ((i = 0; i < 60; i++)); do
	comment=$(field Comment)
	[ "$acct" = yes ] &&
		admin=$(sacct -n -X -P -j "$job" -o AdminComment%400 2>/dev/null | head -n 1)
	[ -f "$T/spool/$job.json" ] && [ -f "$T/spool-epilog/$job.json" ] &&
		[ -n "$comment" ] && { [ "$acct" != yes ] || [ -n "$admin" ]; } && break
	sleep 0.5
done
scontrol show job "$job" | sed -n '/JobState=\|StdOut=\|Comment=/p'
want_cause=$("$OOMDOC" --format json "$ROOT/fixtures/sample/job.log" |
	sed -n 's/^    "top_cause": "\(.*\)",$/\1/p')
for s in spool spool-epilog; do
	[ -f "$T/$s/$job.json" ] || fail "no report $T/$s/$job.json"
	grep -q '"schema": "oomdoc.report/2"' "$T/$s/$job.json" ||
		fail "$s: the report is not an oomdoc report"
	grep -q "\"top_cause\": \"$want_cause\"" "$T/$s/$job.json" ||
		fail "$s: the report does not name the top cause $want_cause"
done
case $comment in
"oomdoc: $want_cause fingerprint="[0-9a-f]*" report=$T/spool/$job.json")
	echo "Comment (TaskEpilog, scontrol): $comment" ;;
*) fail "Comment is '$comment', not the top cause '$want_cause' and a fingerprint" ;;
esac
fp=${comment#*fingerprint=}
fp=${fp%% *}
grep -q "^    \"fingerprint\": \"$fp\"" "$T/spool/$job.json" ||
	fail "the comment's fingerprint $fp is not the report's"
if grep -q "_slurm_rpc_update_job: JobId=$job uid=0: Job has already finished" \
	"$T/slurmctld.log"; then
	echo "NOTE: slurmctld refused the Epilog's scontrol update of the finished job"
fi
if [ "$acct" = yes ]; then
	# sacctmgr lower-cases what it sets (the temp directory's name).
	want_admin="oomdoc: $want_cause fingerprint=$fp report=$T/spool-epilog/$job.json"
	case $admin in
	"${want_admin,,}")
		echo "AdminComment (Epilog, sacctmgr, sacct): $admin" ;;
	*) fail "the accounting record's AdminComment is '$admin', not the Epilog's comment" ;;
	esac
fi
ls -a "$T/spool" "$T/spool-epilog" | grep -q '^\.[^.]' &&
	fail "a temporary report was left in a spool"

# A job with no out-of-memory failure keeps nothing.
cat >"$T/ok.sh" <<EOS
#!/bin/sh
echo "epoch 1 done"
EOS
chmod 755 "$T/ok.sh"
ok=$(sbatch --parsable -o "$T/ok-%j.out" -D "$T" "$T/ok.sh" 2>&1) ||
	fail "sbatch: $ok"
ok=${ok%%;*}
for ((i = 0; i < 60; i++)); do
	st=$(scontrol show job "$ok" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
	[ "$st" = COMPLETED ] && ! scontrol show job "$ok" | grep -q 'COMPLETING' && break
	sleep 0.5
done
sleep 1
[ -e "$T/spool/$ok.json" ] || [ -e "$T/spool-epilog/$ok.json" ] &&
	fail "a report was kept for job $ok, which had no OOM"
if [ "$acct" = yes ]; then
	echo "PASS: job $job: reports from the TaskEpilog and the Epilog, Comment set, AdminComment in the accounting record; job $ok: none"
else
	echo "PASS: job $job: reports from the TaskEpilog and the Epilog, Comment set (accounting skipped); job $ok: none"
fi
exit 0
