#!/usr/bin/env bash
# The Python package, as a user installs it: a fresh virtual environment
# (Debian's python3 and python3-venv), `pip install .[fleet]` from this
# checkout (scikit-build-core builds the wheel with this CMake project;
# dask and distributed for examples/fleet_dask.py), then the issue's line
#   python -c "import oomdoc; print(oomdoc.diagnose('fixtures/sample/job.log')['summary'])"
# and `oomdoc --version` from the wheel, then tests/python/test_package.py.
#
# What comes from PyPI is downloaded once into BUILD/python-wheels (the
# list of requirements is kept beside it: a new list downloads again) and
# installed from there with --no-index, so a rerun needs no network; the
# wheel's CMake tree is BUILD/python-build, kept between runs, so a rerun
# recompiles only what changed.  Status 77 (skipped) when PyPI cannot be
# reached and nothing is in the cache: the reason is printed.
#
# Usage: tests/python.sh BUILD   (from the repository root; BUILD is the
# CMake build directory)
set -u
build=$(cd "$1" && pwd)
root=$(pwd)
py=${PYTHON:-/usr/bin/python3}
cache=$build/python-wheels
venv=$build/python-venv
wbuild=$build/python-build
reqs="scikit-build-core>=0.10 dask distributed"

rm -rf "$venv"
if ! "$py" -m venv "$venv"; then
	echo "python: $py -m venv failed (apt-get install python3-venv)" >&2
	exit 1
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
if [ "$(cat "$cache/requirements" 2>/dev/null)" != "$reqs" ]; then
	mkdir -p "$cache"
	# shellcheck disable=SC2086
	if ! timeout 240 "${pip[@]}" download -q -d "$cache" $reqs \
		>"$build/python-download.log" 2>&1; then
		echo "SKIP: cannot download $reqs from PyPI into $cache:" >&2
		tail -3 "$build/python-download.log" >&2
		exit 77
	fi
	echo "$reqs" >"$cache/requirements"
fi

launcher=()
command -v ccache >/dev/null &&
	launcher=(--config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache)
if ! timeout 600 "${pip[@]}" install -q --no-index --find-links "$cache" \
	--config-settings=build-dir="$wbuild" ${launcher[@]+"${launcher[@]}"} \
	"$root[fleet]" >"$build/python-install.log" 2>&1; then
	echo "python: pip install . failed:" >&2
	tail -40 "$build/python-install.log" >&2
	exit 1
fi

fail=0
out=$("$venv/bin/python" -c "import oomdoc; print(oomdoc.diagnose('fixtures/sample/job.log')['summary'])") || fail=1
echo "summary: $out"
case $out in
*"'events': 1,"*"'top_cause': "*) ;;
*) echo "python: no summary from oomdoc.diagnose" >&2; fail=1 ;;
esac
"$venv/bin/oomdoc" --version || fail=1
"$venv/bin/python" tests/python/test_package.py || fail=1

# The package from this checkout, on the build tree's shared library (as
# tests/gpu/run.sh uses it, with no pip): the same report as the program
# built here, and the build tree's rules.
if [ -f "$build/liboomdoc.so.0" ] && [ -x "$build/bin/oomdoc" ]; then
	if ! OOMDOC_LIBRARY=$build/liboomdoc.so.0 PYTHONPATH=$root/python \
		"$py" - "$build" <<'EOF'
import json, os, subprocess, sys
import oomdoc
build = sys.argv[1]
assert oomdoc.shipped_rules_dir() == os.path.join(build, "share", "oomdoc", "rules")
want = json.loads(subprocess.run([os.path.join(build, "bin", "oomdoc"), "--format",
                                  "json", "fixtures/sample/job.log"],
                                 capture_output=True, text=True).stdout)
assert oomdoc.diagnose("fixtures/sample/job.log") == want
print("python: the checkout's package on OOMDOC_LIBRARY=%s/liboomdoc.so.0" % build)
EOF
	then
		echo "python: the checkout's package on the build tree's library failed" >&2
		fail=1
	fi
fi
[ $fail -eq 0 ] && echo "python: the package works from a fresh virtual environment"
exit $fail
