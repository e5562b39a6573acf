#!/bin/sh
# Quick start, step 1: install what is missing (Debian 12, as root), build
# oomdoc into build/ (the program is build/bin/oomdoc), and run it on the
# bundled sample log.
#
# Usage: tools/setup.sh [--deps-only]
set -eu
cd "$(dirname "$0")/.."

# Debian packages: the build, the libraries, and the tools the tests use.
packages="build-essential cmake pkg-config libpcre2-dev libvectorscan-dev
libyaml-dev zlib1g-dev libisal-dev libzstd-dev libbz2-dev liblzma-dev libjansson-dev libcmocka-dev mandoc valgrind python3
python3-venv python3-markdown-it python3-linkify-it python3-jsonschema
python3-prometheus-client cmark-gfm gzip zstd bzip2 xz-utils jq clang
libclang-rt-14-dev slurm-wlm munge slurmdbd mariadb-server shellcheck chromium
zsh fish ripgrep time"

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: missing packages:$missing" >&2
		echo "setup: run this as root, or: apt-get install$missing" >&2
		exit 2
	fi
	echo "setup: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
[ "${1:-}" = --deps-only ] && exit 0

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$(nproc)"
echo
echo "setup: built build/bin/oomdoc; here it is on the bundled sample log:"
echo
status=0
build/bin/oomdoc fixtures/sample/job.log || status=$?
# Status 0 means an OOM was found, which the sample has.
exit $status
