#!/bin/bash
# glibc_versions.sh BINARY [MAX]: the binary links nothing of CUDA (no
# libcuda, libcudart, libnvidia-ml or libcupti in its DT_NEEDED, no
# undefined cu*/cuda*/nvml* symbol: live mode loads them all at run time),
# and, with MAX (2.28 for the portable release build), needs no glibc
# symbol version newer than MAX (objdump -T).  Fails listing what is wrong.
set -u
bin=$1
max=${2:-}
fail=0
command -v objdump >/dev/null || { echo "objdump is missing (binutils)"; exit 1; }
[ -x "$bin" ] || { echo "no binary $bin"; exit 1; }

needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }')
[ -n "$needed" ] || { echo "objdump -p found no DT_NEEDED in $bin"; exit 1; }
if grep -E 'libcuda|libcudart|libnvidia|libcupti' <<<"$needed"; then
	echo "FAIL: $bin is linked against CUDA libraries (above)"
	fail=1
fi
undef=$(objdump -T "$bin" | awk '$2 == "*UND*" || $3 == "*UND*" { print $NF }')
if grep -E '^(cu[A-Z]|cuda[A-Z]|nvml[A-Z]|cupti[A-Z])' <<<"$undef"; then
	echo "FAIL: $bin needs CUDA symbols at load time (above)"
	fail=1
fi

if [ -n "$max" ]; then
	# Every version the binary asks glibc for, newest last.
	versions=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V)
	[ -n "$versions" ] || { echo "objdump -T found no GLIBC_ version"; exit 1; }
	newest=$(tail -n 1 <<<"$versions")
	while read -r v; do
		n=${v#GLIBC_}
		if [ "$(printf '%s\n%s\n' "$n" "$max" | sort -V | tail -n 1)" != "$max" ]; then
			echo "FAIL: needs $v (newer than glibc $max):"
			objdump -T "$bin" | grep "($v)"
			fail=1
		fi
	done <<<"$versions"
	[ "$fail" = 0 ] && echo "ok: the newest glibc version $bin needs is $newest (at most $max)"
fi
[ "$fail" = 0 ] && echo "ok: $bin loads no CUDA library at link time (needs: $(tr '\n' ' ' <<<"$needed"))"
exit "$fail"
