#!/usr/bin/env bash
# How the time per thread operation grows with the number of threads alive at once, in a bubble
# and in Go's scheduler, measured alternately in one run.
#
# Each round runs, one after the other:
#   go      tools/bench/go/scale.go: N goroutines each calling runtime.Gosched() 10 times,
#           GOMAXPROCS=1 (median of 9 runs per N);
#   bubble  scale_bench's BM_YieldingThreads/N: N bubble threads each calling yield() 10 times
#           (default strategy, watchdog and step budget off);
# for N = 10, 100, 1,000, 10,000 and 100,000, and prints nanoseconds per operation (13 per thread:
# start, 10 yields, end, join) and each figure's growth over its own N = 10 figure; the last lines
# give the medians over the rounds. The growth is what the goal "flat within 2x from 10 to
# 100,000 threads" is about; the Go column shows what a production scheduler does on the same
# machine once N threads' stacks and records no longer fit in its caches and TLB.
#
# Usage: tools/bench/scale_vs_go.sh [build-dir] [rounds]
#   build-dir defaults to build/release (configure and build scale_bench first); rounds defaults
#   to 3. Needs Go (Debian's golang-go) on PATH.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build/release"}
rounds=${2:-3}
bench="$build/tools/bench/scale_bench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ ! -x "$bench" ]]; then
  echo "scale_vs_go.sh: $bench not found; build it first:" >&2
  echo "  cmake --build $build --target scale_bench" >&2
  exit 2
fi
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "scale_vs_go.sh: rounds must be a positive integer, got '$rounds'" >&2
  exit 2
fi
command -v go >/dev/null || { echo "scale_vs_go.sh: go not found (apt-get install golang-go)" >&2; exit 2; }
(cd "$work" && GO111MODULE=off go build -o "$work/go_scale" "$root/tools/bench/go/scale.go")

counts="10 100 1000 10000 100000"
results="$work/results"
: >"$results"
for ((round = 1; round <= rounds; ++round)); do
  echo "round $round (load $(cut -d' ' -f1 /proc/loadavg)):"
  "$work/go_scale" -threads "${counts// /,}" -runs 9 | tr '=' ' ' |
    awk '{ print "go", $3, $5 }' >>"$results"
  "$bench" --benchmark_filter='BM_YieldingThreads/' --benchmark_format=csv 2>/dev/null |
    awk -F, '$1 ~ /^"BM_YieldingThreads\// {
      # columns: name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second
      n = $1; gsub(/"|BM_YieldingThreads\//, "", n); printf "bubble %s %.1f\n", n, 1e9 / $7 }' \
      >>"$results"
  tail -n 10 "$results" | awk '{ printf "  %-6s N = %-6s %7.1f ns per operation\n", $1, $2, $3 }'
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians over $rounds rounds: ns per operation (growth over N = 10)"
for who in go bubble; do
  awk -v who="$who" -v counts="$counts" '
    $1 == who { v[$2, ++k[$2]] = $3 }
    function median(n, m,   i, j, t, a) {
      for (i = 1; i <= m; ++i) a[i] = v[n, i]
      for (i = 1; i <= m; ++i) for (j = i + 1; j <= m; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
      split(counts, c, " ")
      base = median(c[1], k[c[1]])
      printf "  %-6s", who
      for (i = 1; i <= length(c); ++i) {
        m = median(c[i], k[c[i]])
        printf "  N = %s: %.1f (%.1fx)", c[i], m, m / base
      }
      printf "\n"
    }' "$results"
done
