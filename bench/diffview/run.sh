#!/bin/sh
# Runs the diffview benchmarks (in-process diff + unified text, `git diff
# --no-index` and GNU `diff -u` as whole processes, and go-diff's plain line mode, all in the
# same run) and prints how many times faster diffview is than git, by wall
# time and by CPU time per op (steadier on a shared machine).
#
# Usage: bench/diffview/run.sh [benchtime]   (default 10x; e.g. 2s)
set -eu
cd "$(dirname "$0")/../.."
benchtime="${1:-10x}"
out="$(go test -tags sqlite_fts5 -run '^$' -bench '^BenchmarkDiff$' -benchtime "$benchtime" -count 1 ./diffview/)"
printf '%s\n' "$out"
printf '%s\n' "$out" | awk '
/^BenchmarkDiff\// {
	split($1, parts, "/"); name = parts[2]; impl = parts[3]; sub(/-[0-9]+$/, "", impl)
	wall[name "/" impl] = $3
	for (i = 4; i < NF; i++) if ($(i + 1) == "cpu-ms/op") cpu[name "/" impl] = $i
	if (!(name in seen)) { seen[name] = 1; order[++n] = name }
}
END {
	# The reference is the faster of git diff --no-index and GNU diff -u
	# (whole processes) in this same run, by wall and by CPU separately.
	printf "\n%-18s %12s %10s %10s %10s %10s %12s\n", "case", "diffview ms", "git ms", "diff ms", "wall x", "cpu x", "reference"
	for (k = 1; k <= n; k++) {
		c = order[k]; d = wall[c "/diffview"]; g = wall[c "/git-diff-no-index"]; u = wall[c "/gnu-diff"]
		if (d == "" || g == "") continue
		l = wall[c "/diffview-lazy"]; lc = cpu[c "/diffview-lazy"]
		ref = g; rc = cpu[c "/git-diff-no-index"]; name = "git"
		if (u != "" && u < g) { ref = u; name = "gnu-diff" }
		if (u != "" && cpu[c "/gnu-diff"] < rc) rc = cpu[c "/gnu-diff"]
		cx = (cpu[c "/diffview"] > 0) ? rc / cpu[c "/diffview"] : 0
		printf "%-18s %12.1f %10.1f %10.1f %9.2fx %9.2fx %12s\n", c, d / 1e6, g / 1e6, u / 1e6, ref / d, cx, name
		if (l != "" && lc > 0) printf "%-18s %12.1f %10s %10s %9.2fx %9.2fx %12s\n", "  lazy words", l / 1e6, "", "", ref / l, rc / lc, name
	}
	print "x = reference time / diffview time: above 1 means diffview is faster"
	print "lazy words: the diff without words, then WordSpans for the hunks of a first screen (400 rows)"
}'
