#!/usr/bin/env bash
# oomdoc.torch against a real PyTorch wheel, on a machine without a GPU:
# a virtual environment under the build directory with torch==2.0.1 from
# PyPI (the CUDA build, with its nvidia-* wheels: it imports and runs
# without a GPU) and this checkout's package (pip install --no-deps
# --no-build-isolation .), then tests/python/test_torch.py with
# CUDA_VISIBLE_DEVICES empty, so that torch.cuda is unavailable even on a
# machine with a GPU (tests/gpu/run.sh's hook step is the GPU part).
#
# Why 2.0.1: the out-of-memory observer
# (torch._C._cuda_attach_out_of_memory_observer) came with the allocator's
# trace buffer in pytorch/pytorch#86241, first released in 2.0.0, which
# also has torch.cuda.memory._record_memory_history; 2.0.1 is the smallest
# release with both (about 2.3 GB with its nvidia-* wheels; 2.1 and later
# need larger cuDNN and cuBLAS wheels), and it has the older of the two
# history APIs.  Its wheels are for CPython 3.8 to 3.11.
#
# Cost: the first run downloads about 2.3 GB into BUILD/python-torch-wheels
# and installs it into BUILD/python-torch-venv; both are kept with the list
# of requirements they were made from: a rerun with the same list reuses
# the environment and reinstalls only this checkout's package
# (whose CMake tree, BUILD/python-build, the python test shares: the
# tests hold the python_build lock).  Status 77 (skipped) with pip's
# reason when the wheels cannot be downloaded.
#
# Usage: tests/python_torch.sh BUILD   (from the repository root)
set -u
build=$(cd "$1" && pwd)
root=$(pwd)
py=${PYTHON:-/usr/bin/python3}
venv=$build/python-torch-venv
wbuild=$build/python-build
wheels=$build/python-torch-wheels
reqs="torch==2.0.1 scikit-build-core>=0.10"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)

# The wheels are downloaded once into BUILD/python-torch-wheels (with the
# list they were downloaded for) and installed from there with
# --no-index, as tests/python.sh does: pip's own cache need not keep
# responses of this size (behind some proxies it keeps none).
if [ "$(cat "$venv/requirements" 2>/dev/null)" != "$reqs" ] ||
	! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
	rm -rf "$venv"
	if ! "$py" -m venv "$venv"; then
		echo "python_torch: $py -m venv failed (apt-get install python3-venv)" >&2
		exit 1
	fi
	if [ "$(cat "$wheels/requirements" 2>/dev/null)" != "$reqs" ]; then
		rm -rf "$wheels"
		mkdir -p "$wheels"
		# shellcheck disable=SC2086
		if ! timeout 1200 "${pip[@]}" download -q -d "$wheels" $reqs \
			>"$build/python-torch-download.log" 2>&1; then
			echo "SKIP: cannot download $reqs from PyPI into $wheels:" >&2
			tail -5 "$build/python-torch-download.log" >&2
			rm -rf "$venv"
			exit 77
		fi
		echo "$reqs" >"$wheels/requirements"
	fi
	# shellcheck disable=SC2086
	if ! timeout 900 "${pip[@]}" install -q --no-index --find-links "$wheels" \
		$reqs >"$build/python-torch-install.log" 2>&1; then
		echo "python_torch: installing $reqs from $wheels failed:" >&2
		tail -20 "$build/python-torch-install.log" >&2
		rm -rf "$venv"
		exit 1
	fi
	echo "$reqs" >"$venv/requirements"
fi

launcher=()
command -v ccache >/dev/null &&
	launcher=(--config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache)
if ! timeout 600 "${pip[@]}" install -q --no-deps --no-build-isolation \
	--force-reinstall --config-settings=build-dir="$wbuild" \
	${launcher[@]+"${launcher[@]}"} "$root" \
	>"$build/python-torch-package.log" 2>&1; then
	echo "python_torch: pip install . failed:" >&2
	tail -40 "$build/python-torch-package.log" >&2
	exit 1
fi
CUDA_VISIBLE_DEVICES= "$venv/bin/python" tests/python/test_torch.py
