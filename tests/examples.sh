#!/usr/bin/env bash
# Runs the examples of the man page (the .Dl lines of EXAMPLES) and of the
# README (the lines of the ```sh blocks under "## Examples"), each in a
# scratch directory that holds the files they name: job.log (the bundled
# sample), slurm-81723.out.gz, rank0.log and rank1.log, oom-0.pickle and
# train.log (a memory snapshot and its log), and stand-ins: kubectl that
# prints the sample (a pod's YAML for "get pod") and sacct that prints a
# sacct table (fixtures/stacks).  Each example must exit 0 and print
# something (unless it writes to a file), and nothing may appear on
# standard error.
#
# Usage: tests/examples.sh OOMDOC   (from the repository root)
set -u
oomdoc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
ln -s "$oomdoc" "$tmp/bin/oomdoc"
cat >"$tmp/bin/kubectl" <<EOS
#!/bin/sh
case "\$*" in
"get pod "*) cat "$root/fixtures/stacks/kubectl-get-pod-yaml-oomkilled.log" ;;
*) cat "$root/fixtures/sample/job.log" ;;
esac
EOS
cat >"$tmp/bin/sacct" <<EOS
#!/bin/sh
cat "$root/fixtures/stacks/sacct-plain-out-of-memory.log"
EOS
chmod +x "$tmp/bin/kubectl" "$tmp/bin/sacct"
cp fixtures/sample/job.log "$tmp/job.log"
gzip -c fixtures/sample/job.log >"$tmp/slurm-81723.out.gz"
cp fixtures/pytorch/rank_prefix_multi.log "$tmp/rank0.log"
cp fixtures/pytorch/two_distinct_ooms.log "$tmp/rank1.log"
# A memory snapshot and the log of its failure (fixtures/snapshot).
cp fixtures/snapshot/fragmentation.pickle "$tmp/oom-0.pickle"
cp fixtures/snapshot/job.log "$tmp/train.log"
# A user's recogniser, for the example that teaches oomdoc a message: a
# made-up stack's message, with the example rules check runs.
cat >"$tmp/my-stack.yaml" <<'YAML'
recognisers:
  - id: my-stack-oom
    kind: cuda_raw
    framework: mystack
    confidence: high
    anchors:
      - 'MYSTACK: device allocation of'
    pattern: 'MYSTACK: device allocation of (?<req_b>\d+) bytes failed on GPU (?<device>\d+)'
    examples:
      - text: "MYSTACK: device allocation of 4096 bytes failed on GPU 1"
        fields: {req: 4096, device: 1}
YAML

examples() {
	sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' man/oomdoc.1 | sed -n 's/^\.Dl //p' |
		sed 's/\\-/-/g; s/\\e/\\/g' | sed 's/^/man: /'
	awk '/^## /{ ex = ($0 == "## Examples") }
	     ex && /^```sh/ { code = 1; next }
	     ex && /^```/ { code = 0; next }
	     ex && code && NF && !/^#/ { print "README: " $0 }' README.md
}

pass=0 fail=0 count=0
while IFS= read -r line; do
	src=${line%%: *}
	cmd=${line#*: }
	count=$((count + 1))
	out=$(cd "$tmp" && PATH="$tmp/bin:$PATH" bash -o pipefail -c "$cmd" 2>"$tmp/err")
	rc=$?
	# An example that writes to a file need not print anything.
	case $cmd in *" > "*) [ -n "$out" ] || out=quiet ;; esac
	if [ $rc -ne 0 ] || [ -z "$out" ] || [ -s "$tmp/err" ]; then
		echo "FAIL ($src) $cmd: exit $rc, stderr: $(head -c 300 "$tmp/err")"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
done < <(examples)
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $count -ge 5 ]
