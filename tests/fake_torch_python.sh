#!/bin/sh
# fake_torch_python.sh: a stand-in for the Python interpreter of
# --torch-baseline (src/live/torch_baseline.h), for tests without a GPU
# or PyTorch.  It ignores its arguments (-c SCRIPT), prints the line the
# real script prints, with the figures the test gives, and waits for its
# standard input to end, as the real one does.
#
#   FAKE_TORCH_LINE     the whole line after the tag (default: a reading
#                       from FAKE_TORCH_FREE and FAKE_TORCH_TOTAL)
#   FAKE_TORCH_ENV_OUT  a file to write its CUDA_VISIBLE_DEVICES to
#   FAKE_TORCH_SILENT   set: print nothing and exit, as a broken one would
if [ -n "$FAKE_TORCH_ENV_OUT" ]; then
	printf '%s\n' "${CUDA_VISIBLE_DEVICES-unset}" >"$FAKE_TORCH_ENV_OUT"
fi
[ -n "$FAKE_TORCH_SILENT" ] && exit 1
if [ -n "$FAKE_TORCH_LINE" ]; then
	printf 'oomdoc-torch-baseline 1 %s\n' "$FAKE_TORCH_LINE"
else
	printf 'oomdoc-torch-baseline 1 pid=%s torch=2.5.1 cuda=12.4 free=%s total=%s loading=%s\n' \
	    "$$" "${FAKE_TORCH_FREE:?}" "${FAKE_TORCH_TOTAL:?}" \
	    "${CUDA_MODULE_LOADING:-unset}"
fi
cat >/dev/null
