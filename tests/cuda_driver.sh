#!/bin/bash
# cuda_driver.sh OOMDOC [FAKE_CUDA FAKE_NVML]: with the CUDA backend built
# in, live mode on a machine without a usable driver says which case it
# is, in one line, and fails: no libcuda.so.1 at all (OOMDOC_LIBCUDA
# pointing nowhere), and the toolkit's stub library, which answers every
# call with CUDA_ERROR_STUB_LIBRARY.  With the stand-in driver and NVML
# (tests/unit/fake_cuda.c, fake_nvml.c), the opening of a MIG instance:
# CUDA_VISIBLE_DEVICES set to its UUID before cuInit, CUDA's device
# cross-checked with the instance named and NVML's by cuDeviceGetUuid_v2,
# refused (status 5) when they disagree.  Without the CUDA backend it
# checks nothing.
set -u
oomdoc=$1
fake_cuda=${2:-}
fake_nvml=${3:-}
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
# The stand-in driver: a device opened and agreed on gets its report
# with the identity line, and status 7, since fake_nvml.c cannot list
# processes (only the read-only probes run, on counters); a device
# refused at the opening gets one line and status 5.
if [ -n "$fake_cuda" ] && [ -n "$fake_nvml" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mig=MIG-fa4e0000-0000-4000-8000-000000000100
	fake() {        # fake NAME WANT_STATUS PATTERN ENV... -- ARGS...
		local name=$1 want=$2 pat=$3 out rc
		shift 3
		local envs=()
		while [ "$1" != "--" ]; do envs+=("$1"); shift; done
		shift
		rm -f "$tmp/log"
		# CUPTI is left out (OOMDOC_CUPTI pointing nowhere): the
		# toolkit's real libcupti cannot attach to the stand-in driver
		# (CUPTI_ERROR_UNKNOWN) and leaks what it allocated trying,
		# which the sanitizer build reports.
		out=$(env -u CUDA_VISIBLE_DEVICES OOMDOC_LIBCUDA="$fake_cuda" OOMDOC_NVML="$fake_nvml" \
			OOMDOC_CUPTI=/nonexistent/libcupti.so \
			FAKE_CUDA_LOG="$tmp/log" "${envs[@]}" "$oomdoc" probe --backend cuda "$@" 2>&1)
		rc=$?
		if [ "$rc" -ne "$want" ] || ! grep -q -- "$pat" <<<"$out" ||
			{ [ "$want" -eq 5 ] && [ "$(wc -l <<<"$out")" -ne 1 ]; }; then
			echo "FAIL: $name: status $rc, want $want and '$pat':"
			echo "$out"
			fail=1
		else
			echo "ok: $name: status $rc"
		fi
	}
	# A GPU by index: CUDA_VISIBLE_DEVICES untouched, NVML by PCI bus id,
	# the two UUIDs agree.
	fake "GPU 0" 7 "^    identity   CUDA (cuDeviceGetUuid) and NVML agree: GPU-fa4e0000-0000-4000-8000-000000000000$" FAKE_CUDA_VERSION=12040 --
	grep -qx "cuInit CUDA_VISIBLE_DEVICES=(unset)" "$tmp/log" || { echo "FAIL: GPU 0: cuInit saw $(cat "$tmp/log")"; fail=1; }
	# The MIG instance by --device: set before cuInit, agreed.
	fake "MIG by --device" 7 "^    identity   CUDA (cuDeviceGetUuid_v2) and NVML agree: $mig, the MIG instance named$" FAKE_CUDA_VERSION=12040 -- --device $mig
	grep -qx "cuInit CUDA_VISIBLE_DEVICES=$mig" "$tmp/log" || { echo "FAIL: MIG: cuInit saw $(cat "$tmp/log")"; fail=1; }
	# A driver that leaves the whole GPU as device 0: refused.
	fake "CUDA_VISIBLE_DEVICES not honoured" 5 \
		"CUDA_VISIBLE_DEVICES=$mig CUDA's device 0 is MIG-fa4e0000-0000-4000-8000-000000000000 (cuDeviceGetUuid_v2), not the MIG instance named: refusing" \
		FAKE_CUDA_VERSION=12040 FAKE_CUDA_IGNORE_VISIBLE=1 -- --device $mig
	# A driver before CUDA 11.4 has no cuDeviceGetUuid_v2: the first one
	# (its GPU's UUID) is not taken for the instance's, and the report
	# says the check could not be made.
	fake "CUDA 11.3 driver" 7 "^    identity   not cross-checked: the driver gives no UUID for CUDA's device (a MIG instance's needs cuDeviceGetUuid_v2, CUDA 11.4)$" FAKE_CUDA_VERSION=11030 -- --device $mig
	# A MIG instance that is not there: no device.
	fake "no such MIG instance" 5 "no CUDA GPU is visible with CUDA_VISIBLE_DEVICES=MIG-fa4e0000-0000-4000-8000-000000000999" \
		FAKE_CUDA_VERSION=12040 -- --device MIG-fa4e0000-0000-4000-8000-000000000999
fi
exit $fail
