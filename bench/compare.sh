#!/usr/bin/env bash
# Before/after benchmarks in one run: builds rboinc (the commands, rbbench,
# nop) from two git revisions, runs rbbench's stages for both interleaved
# (old, new, then new, old, ...), so that load and caches weigh on both
# alike, and prints for every figure the medians and the slowdown new/old
# (a time: new over old; a rate: old over new). Exits 1 when a figure is
# slower by more than --max (default 1.05, 5%).
#
# Usage: bench/compare.sh [options] OLDREV [NEWREV]
#   OLDREV, NEWREV   git revisions (NEWREV default: this work tree as it is,
#                    uncommitted changes included)
#   --rounds=N       runs of each revision (default 3; the median counts)
#   --size=short     rbbench -short: small sizes, a few minutes in all (default)
#   --size=full      rbbench's full sizes (several GB, long)
#   --stages=LIST    rbbench stages (default submit,hook,native,retrieve,status
#                    and those they build on)
#   --max=F          the largest slowdown that passes (default 1.05)
#   --keep           keep the working directory (results.json of every run)
# Example: bench/compare.sh --rounds=5 main HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 size=short stages=submit,hook,native,retrieve,status max=1.05 keep="" revs=()
for a in "$@"; do
	case "$a" in
	--rounds=*) rounds=${a#--rounds=} ;;
	--size=short | --size=full) size=${a#--size=} ;;
	--stages=*) stages=${a#--stages=} ;;
	--max=*) max=${a#--max=} ;;
	--keep) keep=1 ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	-*) echo "bench/compare.sh: unknown option $a" >&2; exit 2 ;;
	*) revs+=("$a") ;;
	esac
done
if [ ${#revs[@]} -lt 1 ] || [ ${#revs[@]} -gt 2 ]; then
	echo "usage: bench/compare.sh [--rounds=N] [--size=short|full] [--stages=LIST] [--max=F] [--keep] OLDREV [NEWREV]" >&2
	exit 2
fi
for tool in git go md5sum cp curl; do
	command -v "$tool" >/dev/null || { echo "bench/compare.sh: $tool is needed" >&2; exit 1; }
done
repo=$(pwd)
work=$(mktemp -d /tmp/rboinc-compare.XXXXXX)
trees=()
cleanup() {
	for t in "${trees[@]}"; do git -C "$repo" worktree remove --force "$t" >/dev/null 2>&1 || true; done
	if [ -z "$keep" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT

# build NAME REV: the programs of REV into $work/NAME/bin ("" REV: this tree).
build() {
	local name=$1 rev=$2 src=$repo
	if [ -n "$rev" ]; then
		src=$work/$name/src
		git -C "$repo" worktree add -q --detach "$src" "$rev"
		trees+=("$src")
	fi
	echo "== building $name (${rev:-this work tree}: $(git -C "$src" rev-parse --short HEAD)$([ -z "$rev" ] && [ -n "$(git -C "$src" status --porcelain)" ] && echo ' with changes'))"
	mkdir -p "$work/$name/bin"
	(cd "$src" && go build -o "$work/$name/bin/" ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-submit ./cmd/rboinc-retrieve ./bench/rbbench ./bench/nop)
}
build old "${revs[0]}"
build new "${revs[1]:-}"
go build -o "$work/rbcompare" ./bench/rbcompare

sizeflag=""
[ "$size" = short ] && sizeflag=-short
old_json="" new_json=""
# run NAME I: one rbbench run of NAME's programs in a directory of its own.
run() {
	local name=$1 i=$2 dir=$work/$1-$2
	mkdir -p "$dir"
	echo "== round $i: $name"
	if ! "$work/$name/bin/rbbench" -bin "$work/$name/bin" -work "$dir" -stages "$stages" $sizeflag >"$dir/rbbench.log" 2>&1; then
		tail -30 "$dir/rbbench.log"
		echo "bench/compare.sh: rbbench of $name failed (log: $dir/rbbench.log)" >&2
		keep=1
		exit 1
	fi
	rm -rf "$dir/server" "$dir/data"
	if [ "$name" = old ]; then old_json="$old_json,$dir/results.json"; else new_json="$new_json,$dir/results.json"; fi
}
for i in $(seq 1 "$rounds"); do
	# Alternating who goes first: neither always runs on a warmer machine.
	if [ $((i % 2)) = 1 ]; then run old "$i"; run new "$i"; else run new "$i"; run old "$i"; fi
done
echo "== old ${revs[0]}, new ${revs[1]:-this work tree}"
"$work/rbcompare" -old "${old_json#,}" -new "${new_json#,}" -max "$max"
