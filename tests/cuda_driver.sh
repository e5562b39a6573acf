#!/bin/bash
# cuda_driver.sh OOMDOC: with the CUDA backend built in, live mode on a
# machine without a usable driver says which case it is, in one line, and
# fails: no libcuda.so.1 at all (OOMDOC_LIBCUDA pointing nowhere), and the
# toolkit's stub library, which answers every call with
# CUDA_ERROR_STUB_LIBRARY.  Without the CUDA backend it checks nothing.
set -u
oomdoc=$1
"$oomdoc" --version | grep -q 'CUDA live mode: built' || { echo "skipped: no CUDA backend"; exit 0; }
fail=0
expect() {      # expect LIBCUDA PATTERN
	local out rc
	out=$(OOMDOC_LIBCUDA=$1 "$oomdoc" probe --backend cuda 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ] || [ "$(wc -l <<<"$out")" -ne 1 ] || ! grep -q -- "$2" <<<"$out"; then
		echo "FAIL: OOMDOC_LIBCUDA=$1: status $rc, want a failure and one line matching '$2':"
		echo "$out"
		fail=1
	else
		echo "ok: $1: status $rc: $out"
	fi
}
expect /nonexistent/libcuda.so.1 'no NVIDIA driver on this machine (/nonexistent/libcuda.so.1: '
for stub in /usr/local/cuda/lib64/stubs/libcuda.so /usr/local/cuda/targets/*/lib/stubs/libcuda.so; do
	if [ -f "$stub" ]; then
		expect "$stub" 'is the CUDA toolkit.s stub library, not a driver'
		break
	fi
done
exit $fail
