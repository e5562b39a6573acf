#!/bin/sh
# oomdoc-epilog.sh: a Slurm epilog that diagnoses a job's out-of-memory
# failure when the job ends.  Configure it in slurm.conf as
#
#   TaskEpilog=/path/to/it   run by slurmstepd as the job's user when the
#                            batch script ends, while the job still runs:
#                            the comment can be set (Comment; AdminComment
#                            needs an administrator);
#   Epilog=/path/to/it       run by slurmd as root after the job finished:
#                            slurmctld refuses to update a finished job
#                            ("Job has already finished": scontrol update
#                            job acts on running and pending jobs only),
#                            so the comment goes into the job's record in
#                            the accounting database instead, with
#                            `sacctmgr -i modify job where jobid=<id> set
#                            AdminComment=...` (sacctmgr(1): AdminComment,
#                            Comment, SystemComment, DerivedExitCode and
#                            WCKey are the fields that can be modified
#                            after the job completed; AdminComment by an
#                            administrator, from 22.05 on), which
#                            `sacct -o AdminComment` shows, lower-cased
#                            (22.05's sacctmgr lower-cases the values it
#                            sets: src/sacctmgr/job_functions.c,
#                            _set_rec, strip_quotes(..., 1)).  That needs
#                            slurmdbd (AccountingStorageType=
#                            accounting_storage/slurmdbd); without it
#                            the refusal is logged and the report and the
#                            syslog line are kept.
#
# As a TaskEpilog it acts for the batch script's task only (no
# SLURM_STEP_ID), not for every task of every srun step.
#
# It finds the job's output with `scontrol show job` (StdOut= and
# StdErr=), runs oomdoc on it, and on an out-of-memory failure (oomdoc's
# status 0):
#   - keeps the JSON report as $OOMDOC_SPOOL/<job id>.json,
#   - puts the top cause and the fingerprint into the job's AdminComment
#     (scontrol update job=<id> AdminComment=..., else sacctmgr modify job
#     for a finished job; Comment with OOMDOC_COMMENT_FIELD=Comment),
#   - logs one line to syslog (logger -t oomdoc).
# Without one (status 1) nothing is kept.  It never fails the node: every
# path exits 0, since a failing Epilog drains the node.
#
# Settings (environment; slurmd starts the Epilog with a small one, so a
# wrapper or the defaults below set them):
#   OOMDOC                the program (default: oomdoc on PATH)
#   OOMDOC_SPOOL          the report directory (default /var/spool/oomdoc)
#   OOMDOC_COMMENT_FIELD  AdminComment (default as root) or Comment
#                         (default otherwise)
#   SCONTROL              scontrol (default: scontrol on PATH)
#   SACCTMGR              sacctmgr (default: sacctmgr on PATH)
#   OOMDOC_TIMEOUT        seconds oomdoc may run (default 60)

OOMDOC=${OOMDOC:-oomdoc}
SPOOL=${OOMDOC_SPOOL:-/var/spool/oomdoc}
if [ "$(id -u)" -eq 0 ]; then
	FIELD=${OOMDOC_COMMENT_FIELD:-AdminComment}
else
	FIELD=${OOMDOC_COMMENT_FIELD:-Comment}
fi
SCONTROL=${SCONTROL:-scontrol}
SACCTMGR=${SACCTMGR:-sacctmgr}
TIMEOUT=${OOMDOC_TIMEOUT:-60}
job=${SLURM_JOB_ID:-${SLURM_JOBID:-}}

log() {
	logger -t oomdoc -- "$*" 2>/dev/null || :
}

main() {
	[ -n "$job" ] || return 0
	# A TaskEpilog runs after every task: only the batch script's.
	if [ "${SLURM_SCRIPT_CONTEXT:-}" = epilog_task ] &&
	    [ -n "${SLURM_STEP_ID:-}" ]; then
		return 0
	fi
	case $FIELD in AdminComment|Comment) ;; *) FIELD=AdminComment ;; esac
	info=$("$SCONTROL" show job "$job" 2>/dev/null) || return 0

	# One path a line; StdErr is often the same file as StdOut.
	files=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*Std\(Out\|Err\)=//p' |
		sort -u)
	set --
	old_ifs=$IFS
	IFS='
'
	for f in $files; do
		[ -f "$f" ] && [ -r "$f" ] && set -- "$@" "$f"
	done
	IFS=$old_ifs
	[ $# -gt 0 ] || return 0

	mkdir -p "$SPOOL" 2>/dev/null || :
	tmp="$SPOOL/.$job.json.$$"
	status=0
	timeout "$TIMEOUT" "$OOMDOC" --format json -- "$@" >"$tmp" 2>/dev/null ||
		status=$?
	if [ "$status" -ne 0 ]; then
		# 1: no out-of-memory failure; anything else: oomdoc's error.
		rm -f "$tmp"
		[ "$status" -eq 1 ] || log "job $job: oomdoc failed with status $status"
		return 0
	fi
	mv -f "$tmp" "$SPOOL/$job.json" || { rm -f "$tmp"; return 0; }

	# The report's summary: top_cause and fingerprint (jq when the node
	# has it; else the writer's fixed layout, the summary's keys indented
	# by four blanks).
	if command -v jq >/dev/null 2>&1; then
		cause=$(jq -r '.summary.top_cause // "unknown"' "$SPOOL/$job.json")
		fp=$(jq -r '.summary.fingerprint // ""' "$SPOOL/$job.json")
	else
		cause=$(sed -n 's/^    "top_cause": "\([A-Za-z0-9_]*\)",*$/\1/p' \
			"$SPOOL/$job.json" | head -n 1)
		fp=$(sed -n 's/^    "fingerprint": "\([0-9a-f]*\)",*$/\1/p' \
			"$SPOOL/$job.json" | tail -n 1)
	fi
	[ -n "$cause" ] || cause=unknown
	comment="oomdoc: $cause fingerprint=$fp report=$SPOOL/$job.json"
	if ! "$SCONTROL" update "job=$job" "$FIELD=$comment" >/dev/null 2>&1; then
		# A finished job (the Epilog's): its accounting record.
		if "$SACCTMGR" -i modify job where "jobid=$job" set \
		    "$FIELD=$comment" >/dev/null 2>&1; then
			log "job $job: $FIELD set in the accounting record (sacctmgr)"
		else
			log "job $job: scontrol update $FIELD and sacctmgr modify job failed"
		fi
	fi
	log "job $job: out of memory: $cause fingerprint=$fp report=$SPOOL/$job.json"
	return 0
}

main
exit 0
