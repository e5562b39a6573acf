#!/bin/sh
# k8s_manifests.sh: validates contrib/kubernetes/*.yaml against the
# Kubernetes API's schemas with kubernetes-validate (PyPI; it ships the
# JSON schemas generated from each release's OpenAPI document and checks
# offline with jsonschema), strictly (no unknown field), and checks that
# the sidecar runs oomdoc with --follow --format jsonl and the Job's Role
# grants pods/log get.  Without kubernetes-validate it says so and exits
# 77 (ctest's SKIP_RETURN_CODE).
#
# Usage: k8s_manifests.sh [KUBERNETES_VALIDATE]
set -u
cd "$(dirname "$0")/.."
kv=${1:-${KUBERNETES_VALIDATE:-kubernetes-validate}}
if ! command -v "$kv" >/dev/null 2>&1; then
	echo "SKIP: $kv not found (pip install kubernetes-validate)"
	exit 77
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
