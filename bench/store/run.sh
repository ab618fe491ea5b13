#!/bin/sh
# Runs the event-log benchmarks of backend/store and backend/engine in one go
# and prints the figures docs/PERFORMANCE.md quotes: ingestion through the
# store and the engine as a share of the raw mattn/go-sqlite3 batched insert
# (measured in the same run, and paired op by op), the sqlite3 CLI doing the
# same inserts, commit latency at 2,000 deltas/s, replay of a 100k-event run,
# and the last 500 events of one run in a 1M-event database. With count > 1
# every figure is the median of the runs.
#
# Usage: bench/store/run.sh [benchtime] [count]   (default 3x 1; e.g. 5x 3)
set -eu
cd "$(dirname "$0")/../.."
benchtime="${1:-3x}"
count="${2:-1}"

if command -v sqlite3 >/dev/null 2>&1; then
	echo "sqlite3 CLI:    $(sqlite3 --version | cut -d' ' -f1)"
else
	echo "sqlite3 CLI:    missing, the sqlite3-cli case is skipped (apt-get install sqlite3)" >&2
fi
drv="$(go list -m -f '{{.Dir}}' github.com/mattn/go-sqlite3)"
echo "go-sqlite3:     $(go list -m -f '{{.Version}}' github.com/mattn/go-sqlite3)," \
	"SQLite $(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$drv/sqlite3-binding.h")"

out="$(go test -tags sqlite_fts5 -run '^$' -bench 'Ingest|CommitLatency|Replay100k|LastEvents1M' -benchtime "$benchtime" \
	-count "$count" -timeout 60m ./backend/store/ 2>&1 &&
	go test -tags sqlite_fts5 -run '^$' -bench 'EngineStream|SubscribeReplay100k' -benchtime "$benchtime" -count "$count" \
		-timeout 60m ./backend/engine/ 2>&1)" || {
	printf '%s\n' "$out"
	exit 1
}
printf '%s\n' "$out" | grep -E '^(goos|goarch|cpu|Benchmark)'
printf '%s\n' "$out" | awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	for (i = 3; i < NF; i += 2) { k = name " " $(i + 1); n[k]++; v[k, n[k]] = $i }
}
function med(k,    m, i, j, t, a) {
	m = n[k]; if (m == 0) return -1
	for (i = 1; i <= m; i++) a[i] = v[k, i]
	for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function row(label, k, unit, fmt) { if (med(k) >= 0) printf "%-44s " fmt " %s\n", label, med(k), unit }
# pair prints a benchmark that times each op against the raw reference on a
# fresh file in the same op: its rate, the paired raw rate and both ratios.
function pair(label, b) {
	row(label, b " events/s", "events/s", "%10.0f")
	row("  CPU per event", b " cpu-us/event", "us", "%10.2f")
	row("  raw in the same ops (paired)", b " raw-events/s", "events/s", "%10.0f")
	row("  / raw, wall (target >= 90)", b " pct-of-raw", "%", "%10.1f")
	row("  / raw, CPU", b " pct-of-raw-cpu", "%", "%10.1f")
}
END {
	raw = med("Ingest/raw events/s"); cli = med("Ingest/sqlite3-cli events/s")
	print "\ningestion, 100,000 events of 300 bytes per op"
	row("raw go-sqlite3, batches of 1,000", "Ingest/raw events/s", "events/s", "%10.0f")
	row("  CPU per event", "Ingest/raw cpu-us/event", "us", "%10.2f")
	row("raw, no checkpoint during the op (a bound)", "Ingest/raw-nockpt events/s", "events/s", "%10.0f")
	row("  CPU per event", "Ingest/raw-nockpt cpu-us/event", "us", "%10.2f")
	pair("store: Store.Emit, group commit", "Ingest/store")
	if (med("Ingest/raw-nockpt events/s") > 0)
		printf "%-44s %10.1f %%\n", "  store / raw-nockpt, wall (medians)",
			100 * med("Ingest/store events/s") / med("Ingest/raw-nockpt events/s")
	pair("store with the secret redactor", "Ingest/store-redacted")
	pair("store: one Store.Go job per event (before)", "Ingest/store-job")
	pair("raw-multirow: the same inserts, no store", "Ingest/raw-multirow")
	if (med("Ingest/raw-multirow events/s") > 0)
		printf "%-44s %10.1f %%\n", "  store / raw-multirow, wall (own overhead)",
			100 * med("Ingest/store events/s") / med("Ingest/raw-multirow events/s")
	row("sqlite3 CLI, same rows as SQL text", "Ingest/sqlite3-cli events/s", "events/s", "%10.0f")
	row("  CPU per event (whole process)", "Ingest/sqlite3-cli cpu-us/event", "us", "%10.2f")
	if (raw > 0 && cli > 0) printf "%-44s %10.2f x\n", "raw go-sqlite3 / sqlite3 CLI", raw / cli
	if (cli > 0) printf "%-44s %10.2f x\n", "store / sqlite3 CLI", med("Ingest/store events/s") / cli
	pair("engine, 1 run streaming deltas", "EngineStream/1-runs")
	pair("engine, 1 run, with the secret redactor", "EngineStream/1-runs-redacted")
	pair("engine, 4 runs in 4 sessions", "EngineStream/4-runs")
	print "\ncommit latency of a streamed delta at 2,000 events/s (target p99 < 10 ms)"
	row("p50", "CommitLatency p50-ms", "ms", "%10.3f")
	row("p99", "CommitLatency p99-ms", "ms", "%10.3f")
	row("max", "CommitLatency max-ms", "ms", "%10.3f")
	print "\nreplay of a 100,000-event run (target < 300 ms)"
	row("store.Events from 0, one query", "Replay100k/from-0 ms/replay", "ms", "%10.1f")
	row("  CPU", "Replay100k/from-0 cpu-ms/replay", "ms", "%10.1f")
	row("store.Events from 0, pages of 1,000", "Replay100k/from-0-pages-of-1000 ms/replay", "ms", "%10.1f")
	row("  CPU", "Replay100k/from-0-pages-of-1000 cpu-ms/replay", "ms", "%10.1f")
	row("store.Events from 50,000, one query", "Replay100k/from-50000 ms/replay", "ms", "%10.1f")
	row("engine.Subscribe from 0", "SubscribeReplay100k/from-0 ms/replay", "ms", "%10.1f")
	row("  CPU", "SubscribeReplay100k/from-0 cpu-ms/replay", "ms", "%10.1f")
	row("engine.Subscribe from 50,000", "SubscribeReplay100k/from-50000 ms/replay", "ms", "%10.1f")
	print "\nlast 500 events of one run, 1,000,000 events in 1,000 runs (target < 20 ms)"
	row("store.LastEvents", "LastEvents1M ms/read", "ms", "%10.2f")
}'
