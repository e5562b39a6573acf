#!/bin/bash
# kernels_fatbin.sh FATBIN N: every kernel that src/live/device_cuda.c
# launches by name (its cd_kernel_name table) is in the embedded fatbin,
# as an extern "C" (unmangled) entry, in the SASS of each of the N
# architectures built.  A kernel renamed on one side only would otherwise
# fail only on a GPU.
set -u
fatbin=$1
n=$2
command -v strings >/dev/null || { echo "strings is missing (binutils)"; exit 1; }
names=$(sed -n '/^static const char \*const cd_kernel_name/,/^};/p' src/live/device_cuda.c |
	grep -o '"kn_[a-z_]*"' | tr -d '"')
[ -n "$names" ] || { echo "FAIL: no kernel names found in src/live/device_cuda.c"; exit 1; }
fail=0
for k in $names; do
	c=$(strings "$fatbin" | grep -c -x "\.text\.$k")
	# At least once per cubin (each names it in more than one table).
	if [ "$c" -lt "$n" ]; then
		echo "FAIL: $k: in $c section names of $fatbin, want one in each of $n cubins"
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "ok: $(wc -w <<<"$names") kernels in each of $n architectures"
exit $fail
