#!/usr/bin/env bash
# The step of the oomdoc action (action.yml): oomdoc over the logs a failed
# job left, written as workflow-command annotations on standard output
# (oomdoc --format github: one per event, with its top cause and fix) and
# as the Markdown report appended to $GITHUB_STEP_SUMMARY; "found=true" or
# "found=false" appended to $GITHUB_OUTPUT.
#
# Environment:
#   OOMDOC_LOGS          the logs, separated by white space (globs expanded)
#   OOMDOC               the program (default: oomdoc)
#   OOMDOC_FAIL_ON_OOM   "true": exit 1 when a failure is found
#   GITHUB_STEP_SUMMARY, GITHUB_OUTPUT   set by the runner (either may be
#                        unset: that part is then skipped)
#
# Exit status: 0, or 1 with OOMDOC_FAIL_ON_OOM=true and a failure found;
# oomdoc's own status (2 and up) when it could not read the logs or rules.
set -u
oomdoc=${OOMDOC:-oomdoc}
# Word splitting and globbing of the list are wanted here: it is a list of
# names and patterns, as a shell would take it.
# shellcheck disable=SC2206
logs=(${OOMDOC_LOGS:-})
if [ ${#logs[@]} -eq 0 ]; then
	echo "::error title=oomdoc::no logs given (the action's 'logs' input)"
	exit 2
fi

"$oomdoc" --format github -- "${logs[@]}"
status=$?
case $status in
0) found=true ;;
1) found=false ;;
*) echo "::error title=oomdoc::oomdoc exited with status $status" \
	"(its message is in the log above)"
   exit "$status" ;;
esac

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	if [ $found = true ]; then
		"$oomdoc" --format markdown --color never -- "${logs[@]}" \
			>>"$GITHUB_STEP_SUMMARY"
	else
		echo "oomdoc found no out-of-memory failure in the logs." \
			>>"$GITHUB_STEP_SUMMARY"
	fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	echo "found=$found" >>"$GITHUB_OUTPUT"
fi
if [ $found = true ] && [ "${OOMDOC_FAIL_ON_OOM:-false}" = true ]; then
	exit 1
fi
exit 0
