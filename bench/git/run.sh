#!/bin/sh
# Runs the status benchmark of a 20,000-file repository (1 % modified, 20
# untracked): `git status --porcelain=v2 -z` as a whole process (the
# reference), workspace/git's Status through the git CLI, and through go-git,
# each alone and then paired (every op runs all three in a rotating order).
# Prints the medians over -count runs and the ratios to git status.
#
# Usage: bench/git/run.sh [benchtime] [count]   (default 5x and 5)
set -eu
cd "$(dirname "$0")/../.."
benchtime="${1:-5x}"
count="${2:-5}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
out="$(go test -tags sqlite_fts5 -run '^$' -bench '^BenchmarkStatus20k$' -benchtime "$benchtime" -count "$count" ./workspace/git/)"
printf '%s\n' "$out"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
printf '%s\n' "$out" | awk '
function median(key,    n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^BenchmarkStatus20k\// {
	split($1, parts, "/"); name = parts[2]; sub(/-[0-9]+$/, "", name)
	if (name != "paired") vals[name "/wall"] = vals[name "/wall"] " " $3 / 1e6
	for (i = 4; i < NF; i++) if ($(i + 1) ~ /^(cpu-ms\/op|(git|cli|gogit)-(cpu-)?ms|(cli|gogit)\/git(-cpu)?)$/)
		vals[name "/" $(i + 1)] = vals[name "/" $(i + 1)] " " $i
}
END {
	printf "\nmedians over the runs\n%-12s %10s %10s %14s %14s\n", "path", "wall ms", "cpu ms", "wall / git", "cpu / git"
	gw = median("git-status/wall"); gc = median("git-status/cpu-ms/op")
	split("git-status cli gogit", names, " ")
	for (k = 1; k <= 3; k++) {
		n = names[k]; w = median(n "/wall"); c = median(n "/cpu-ms/op")
		printf "%-12s %10.1f %10.1f %13.2fx %13.2fx\n", n, w, c, w / gw, (gc > 0 ? c / gc : 0)
	}
	printf "\npaired (median of per-op values and ratios, then median over the runs)\n"
	printf "wall: git %.1f ms, cli %.1f ms, gogit %.1f ms; cli/git %.2fx, gogit/git %.2fx\n",
		median("paired/git-ms"), median("paired/cli-ms"), median("paired/gogit-ms"),
		median("paired/cli/git"), median("paired/gogit/git")
	printf "cpu:  git %.1f ms, cli %.1f ms, gogit %.1f ms; cli/git %.2fx, gogit/git %.2fx\n",
		median("paired/git-cpu-ms"), median("paired/cli-cpu-ms"), median("paired/gogit-cpu-ms"),
		median("paired/cli/git-cpu"), median("paired/gogit/git-cpu")
}'
