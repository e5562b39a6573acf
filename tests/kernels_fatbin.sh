#!/bin/bash
# kernels_fatbin.sh FATBIN N [PTX ISA ARCH]: every kernel that
# src/live/device_cuda.c launches by name (its cd_kernel_name table) is
# in the embedded fatbin, as an extern "C" (unmangled) entry, in the SASS
# of each of the N architectures built; and in the fallback PTX image,
# which declares PTX ISA version ISA for sm_ARCH (what drivers older
# than the toolkit read) and assembles at that version with this
# toolkit's ptxas.  A kernel renamed on one side only, or PTX that only a
# new driver reads, would otherwise fail only on a GPU.
set -u
fatbin=$1
n=$2
ptx=${3:-}
isa=${4:-}
arch=${5:-}
command -v strings >/dev/null || { echo "strings is missing (binutils)"; exit 1; }
names=$(sed -n '/^static const char \*const cd_kernel_name/,/^};/p' src/live/device_cuda.c |
	grep -o '"kn_[a-z_0-9]*"' | tr -d '"')
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
if [ -n "$ptx" ]; then
	v=$(grep -E '^\.version ' "$ptx")
	t=$(grep -E '^\.target ' "$ptx")
	if [ "$v" != ".version $isa" ] || [ "$t" != ".target sm_$arch" ]; then
		echo "FAIL: $ptx declares '$v' and '$t', want '.version $isa' and '.target sm_$arch'"
		fail=1
	fi
	for k in $names; do
		grep -q -E "^\.visible \.entry $k\(" "$ptx" ||
			{ echo "FAIL: $k is not an entry of $ptx"; fail=1; }
	done
	ptxas=${PTXAS:-ptxas}
	if ! "$ptxas" -arch="sm_$arch" "$ptx" -o /dev/null; then
		echo "FAIL: $ptxas does not assemble $ptx at PTX ISA $isa"
		fail=1
	fi
	[ "$fail" = 0 ] && echo "ok: $ptx: PTX ISA $isa for sm_$arch, assembled by $ptxas"
fi
exit $fail
