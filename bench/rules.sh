#!/usr/bin/env bash
# bench/rules.sh: how the time to load rules grows with their number.
#
# Usage: bench/rules.sh [OOMDOC]   (default build/bin/oomdoc)
#
# Writes directories of 256 rule files each (64 rules a file, the ids of
# every second directory repeating the first's, so that half the rules
# replace others by id), loads them with `oomdoc rules list`, and prints
# the wall time for 1, 4 and 16 directories (16,384 to 262,144 rules) with
# the ratio to the row before.  Loading is linear when each ratio is about
# 4 (the rules grow fourfold); a lookup by scan made it about 16.
set -eu
oomdoc=${1:-build/bin/oomdoc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" 16 <<'PY'
import os, sys
for d in range(int(sys.argv[2])):
    os.makedirs(f"{sys.argv[1]}/d{d}")
    for f in range(256):
        with open(f"{sys.argv[1]}/d{d}/f{f:03d}.yaml", "w") as o:
            o.write("rules:\n")
            for r in range(64):
                o.write(f"  - {{id: r{d % 2}_{d // 2}_{f}_{r}, title: t{d}, "
                        "when: requested > 0, score: 0.5, explain: x}\n")
PY

printf '%-6s %8s %10s %6s\n' dirs rules seconds ratio
prev=
for n in 1 4 16; do
	args=()
	for ((d = 0; d < n; d++)); do args+=(--rules "$tmp/d$d"); done
	start=$(date +%s%N)
	"$oomdoc" rules list --no-default-rules "${args[@]}" >/dev/null
	ns=$(($(date +%s%N) - start))
	ratio=-
	[ -n "$prev" ] && ratio=$(awk "BEGIN { printf \"%.1f\", $ns / $prev }")
	printf '%-6s %8s %10s %6s\n' "$n" $((n * 256 * 64)) \
		"$(awk "BEGIN { printf \"%.3f\", $ns / 1e9 }")" "$ratio"
	prev=$ns
done
