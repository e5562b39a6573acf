#!/usr/bin/env bash
# follow_chunks.sh OOMDOC: --follow on a file that grows in chunks, with
# pauses longer than the idle flush (CLI_FOLLOW_IDLE_MS, 500 ms) between
# them, writes the events that the whole file gives, no more, no fewer.
#
# A handful of fixtures with messages of several lines (hard-wrapped at
# 80 and at 116 columns, a traceback, a JSON-lines shipper's records), each
# appended by tests/chunk_feed.py to its own followed file a few lines at a
# time (so that pauses fall inside messages and between a line and its
# wrap's continuation) or in pseudo-random chunks that end inside lines;
# all are followed at once, each by two: --format json and --format jsonl.
# Then SIGTERM: status 143, and the events, less their input's name, must
# be the file's: all of the JSON report's, and each line of jsonl but for
# what lines after its event may add to it (aftermath, first_failure),
# which the line written when the event was complete cannot have.
#
# Cost: about 6 s of wall-clock time (the pauses), little CPU.
set -u
OOMDOC=${1:?usage: follow_chunks.sh OOMDOC}
feed=$(dirname "$0")/chunk_feed.py
T=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
fail=0

cases=(
	"lines:3 fixtures/stacks/vllm-v1-kv-cache-wrapped-116.log"
	"lines:16 fixtures/stacks/tf-bfc-chunk-dump-wrapped-80.log"
	"lines:2 fixtures/pytorch/wrapped_pr99699.log"
	"lines:4 fixtures/sample/job.log"
	"rand:11 fixtures/structured/fluentbit.log"
	"lines:1 fixtures/stacks/xla-out-of-memory-wrapped-after-blank.log"
)
n=0
for c in "${cases[@]}"; do
	spec=${c%% *} f=${c#* }
	[ -f "$f" ] || { echo "FAIL: $f is missing"; fail=1; continue; }
	: >"$T/$n.log"
	"$OOMDOC" --follow --format jsonl "$T/$n.log" >"$T/$n.out" 2>"$T/$n.err" &
	pids+=($!)
	"$OOMDOC" --follow --format json "$T/$n.log" >"$T/$n.jout" 2>"$T/$n.jerr" &
	pids+=($!)
	n=$((n + 1))
done
sleep 0.5
feeders=()
k=0
for c in "${cases[@]}"; do
	spec=${c%% *} f=${c#* }
	PAUSE_MS=700 python3 "$feed" --follow "$T/$k.log" "$spec" "$f" \
	    2>>"$T/feed.err" &
	feeders+=($!)
	k=$((k + 1))
done
for p in "${feeders[@]}"; do wait "$p" || { echo "FAIL: chunk_feed.py"; fail=1; }; done
sleep 1
k=0
for c in "${cases[@]}"; do
	f=${c#* }
	for j in 0 1; do
		p=${pids[$((2 * k + j))]}
		kill -TERM "$p"
		wait "$p"
		rc=$?
		[ "$rc" = 143 ] || { echo "FAIL: $f: status $rc, want 143"; fail=1; }
	done
	if [ -s "$T/$k.err" ] || [ -s "$T/$k.jerr" ]; then
		echo "FAIL: $f: standard error: $(head -2 "$T/$k.err" "$T/$k.jerr")"
		fail=1
	fi
	"$OOMDOC" --format jsonl "$f" >"$T/$k.want" 2>/dev/null
	"$OOMDOC" --format json "$f" >"$T/$k.jwant" 2>/dev/null
	python3 - "$T/$k" "$f" <<'EOF' || fail=1
import json, sys
def clean(e, streamed):
    e.pop("input", None)
    for i in e.get("inputs", []):
        i.pop("name", None)
    # What lines after an event say of it (the end of the run it
    # started, whether an earlier one came first) is not in the line
    # that --format jsonl wrote when the event was complete.
    if streamed:
        e.pop("aftermath", None)
        e.pop("first_failure", None)
    return json.dumps(e, sort_keys=True)
def events(path):
    return [clean(json.loads(line), True) for line in open(path)]
def report(path):
    return [clean(e, False) for e in json.load(open(path))["events"]]
base = sys.argv[1]
sys.argv[1:] = [base + ".want", base + ".out", sys.argv[2]]
if report(base + ".jwant") != report(base + ".jout"):
    print("FAIL: %s: followed in chunks, the JSON report's events are not "
          "the file's" % sys.argv[3])
    sys.exit(1)
want, got = events(sys.argv[1]), events(sys.argv[2])
if not want:
    print("FAIL: %s: no event in the file" % sys.argv[3])
    sys.exit(1)
if sorted(want) != sorted(got):
    print("FAIL: %s: followed in chunks, %d events, not the file's %d:" % (
        sys.argv[3], len(got), len(want)))
    for e in got:
        if e not in want:
            d = json.loads(e)
            print("  only followed: line %s: %s" % (d.get("line"),
                                                    d.get("message", "")[:90]))
    for e in want:
        if e not in got:
            d = json.loads(e)
            print("  only the file: line %s: %s" % (d.get("line"),
                                                    d.get("message", "")[:90]))
    sys.exit(1)
EOF
	k=$((k + 1))
done
pids=()
if [ "$fail" -eq 0 ]; then echo "PASS follow_chunks ($k fixtures)"; else echo "FAIL follow_chunks"; fi
exit "$fail"
