#!/usr/bin/env bash
# The layers, checked from the tree: nothing in the core (src/lib and the
# public header under include/) includes a header of the live layer
# (src/live, kernels) or of the command (src/cli), and nothing in the live
# layer includes one of the command's.  The include paths of the CMake
# targets already make such an include fail to compile; this test names
# the file and line, and also catches an include by a relative path
# ("../live/device.h"), which the include paths do not stop.
#
# Usage: tests/layout.sh (from the repository root)
set -u
fail=0

# check LAYER "DIRS..." "FORBIDDEN DIRS..."
# An #include is an offence when its file name is a header of a forbidden
# directory that the layer does not have a header of its own by (its own
# would be the one the include path finds), or when its path goes through
# a forbidden directory.
check() {
	local layer=$1 dirs=$2 forbidden=$3 d h f n own=" " bad=" " files
	local -A home=()
	for d in $dirs; do
		for h in $(find "$d" -name '*.h' 2>/dev/null); do
			own="$own$(basename "$h") "
		done
	done
	for d in $forbidden; do
		for h in $(find "$d" -name '*.h' 2>/dev/null); do
			n=$(basename "$h")
			case $own in *" $n "*) continue ;; esac
			bad="$bad$n "
			home[$n]=$d
		done
	done
	if [ "$bad" = " " ]; then
		echo "layout: no headers found in $forbidden (run from the repository root)"
		fail=1
		return
	fi
	files=$(find $dirs -name '*.[ch]' 2>/dev/null | sort)
	if [ -z "$files" ]; then
		echo "layout: no sources found in $dirs"
		fail=1
		return
	fi
	for f in $files; do
		while IFS=: read -r line inc; do
			n=$(basename "$inc")
			case $bad in *" $n "*)
				echo "layout: $f:$line: the $layer includes $inc, a header of ${home[$n]}"
				fail=1
				continue ;;
			esac
			for d in $forbidden; do
				case /$inc in */"${d##*/}"/*)
					echo "layout: $f:$line: the $layer includes $inc, a path into $d"
					fail=1 ;;
				esac
			done
		done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$f" |
			sed -n -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]+)[">].*/\1:\2/p')
	done
	echo "layout: $(echo "$files" | wc -l) files of the $layer checked"
}

check core "src/lib include" "src/live src/cli kernels"
check "live layer" "src/live" "src/cli"
exit $fail
