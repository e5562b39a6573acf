#!/bin/sh
# k8s_manifests.sh: validates contrib/kubernetes/*.yaml against the
# Kubernetes API's schemas with kubernetes-validate (PyPI; it ships the
# JSON schemas generated from each release's OpenAPI document and checks
# offline with jsonschema), strictly (no unknown field), and checks that
# the sidecar runs oomdoc with --follow --format jsonl and the Job's Role
# grants pods/log get.
#
# kubernetes-validate comes from PATH, or else from PyPI into a virtual
# environment kept in BUILD/k8s-venv (made once; a rerun needs no network).
# Status 77 only when neither is possible, with the reason.
#
# Usage: k8s_manifests.sh BUILD   (from the repository root)
set -u
cd "$(dirname "$0")/.."
build=${1:?usage: k8s_manifests.sh BUILD}
kv=${KUBERNETES_VALIDATE:-kubernetes-validate}
if ! command -v "$kv" >/dev/null 2>&1; then
	venv=$build/k8s-venv
	kv=$venv/bin/kubernetes-validate
	if [ ! -x "$kv" ]; then
		rm -rf "$venv"
		if ! python3 -m venv "$venv" ||
			! timeout 240 "$venv/bin/python" -m pip -q \
				--disable-pip-version-check install kubernetes-validate \
				>"$build/k8s-venv.log" 2>&1; then
			echo "SKIP: cannot install kubernetes-validate from PyPI:"
			tail -3 "$build/k8s-venv.log" 2>/dev/null
			rm -rf "$venv"
			exit 77
		fi
	fi
fi
status=0
for f in contrib/kubernetes/*.yaml; do
	if "$kv" --strict -k 1.32.0 "$f"; then
		:
	else
		echo "FAIL: $f does not validate"
		status=1
	fi
done
grep -q '"oomdoc", "--follow", "--format", "jsonl"' \
	contrib/kubernetes/oomdoc-sidecar.yaml ||
	{ echo "FAIL: the sidecar does not run oomdoc --follow --format jsonl"; status=1; }
grep -q 'resources: \["pods/log"\]' contrib/kubernetes/oomdoc-postmortem-job.yaml ||
	{ echo "FAIL: the Job's Role does not grant pods/log"; status=1; }
[ "$status" -eq 0 ] && echo "PASS: the manifests validate"
exit "$status"
