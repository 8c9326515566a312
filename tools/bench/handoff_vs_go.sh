#!/usr/bin/env bash
# The bubble's channel hand-off against Go's goroutine hand-off, measured alternately in one run.
#
# Each repetition runs, one after the other:
#   go     tools/bench/go/handoff.go: two goroutines, two unbuffered channels, GOMAXPROCS=1;
#   bench  bubble_bench's BM_ChannelPingPong (the benchmark's own loop, watchdog and step budget
#          off), fifo and random;
#   user   handoff_bench's BM_UserChannelPingPong (a user's own program: its own translation unit,
#          public headers, default options), fifo and random.
# and prints CPU and wall nanoseconds per hand-off and each bubble figure's ratio to the Go figure
# of the same repetition; the last lines give the medians of the ratios. CPU time is the figure
# to compare on a loaded machine (the wall time counts the time other processes took the core);
# every repetition prints the load average.
#
# Usage: tools/bench/handoff_vs_go.sh [build-dir] [repetitions]
#   build-dir defaults to build/release (configure and build bubble_bench and handoff_bench
#   first); repetitions defaults to 5. Needs Go (Debian's golang-go) on PATH.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build/release"}
reps=${2:-5}
bench_dir="$build/tools/bench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for exe in bubble_bench handoff_bench; do
  if [[ ! -x "$bench_dir/$exe" ]]; then
    echo "handoff_vs_go.sh: $bench_dir/$exe not found; build it first:" >&2
    echo "  cmake --build $build --target bubble_bench handoff_bench" >&2
    exit 2
  fi
done
command -v go >/dev/null || { echo "handoff_vs_go.sh: go not found (apt-get install golang-go)" >&2; exit 2; }
(cd "$work" && go build -o "$work/go_handoff" "$root/tools/bench/go/handoff.go")

# Prints "<cpu ns per item> <wall ns per item>" for the one benchmark `filter` selects.
bubble_figure() {
  "$bench_dir/$1" --benchmark_filter="$2" --benchmark_format=csv 2>/dev/null |
    awk -F, -v name="\"$2\"" '$1 == name {
      # columns: name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second
      cpu = 1e9 / $7; printf "%.1f %.1f\n", cpu, cpu * $3 / $4 }'
}

results="$work/results"
: >"$results"
for ((rep = 1; rep <= reps; ++rep)); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  read -r _ go_wall go_cpu _ < <("$work/go_handoff" -rounds 2000000 | tr '=' ' ' |
    awk '{ print $1, $3, $5, $7 }')
  echo "rep $rep (load $load): go cpu ${go_cpu} ns, wall ${go_wall} ns per hand-off"
  for row in "bench fifo bubble_bench BM_ChannelPingPong/0" \
             "bench random bubble_bench BM_ChannelPingPong/1" \
             "user fifo handoff_bench BM_UserChannelPingPong/0" \
             "user random handoff_bench BM_UserChannelPingPong/1"; do
    read -r kind strategy exe filter <<<"$row"
    read -r cpu wall < <(bubble_figure "$exe" "$filter")
    ratio_cpu=$(awk -v a="$cpu" -v b="$go_cpu" 'BEGIN { printf "%.2f", a / b }')
    ratio_wall=$(awk -v a="$wall" -v b="$go_wall" 'BEGIN { printf "%.2f", a / b }')
    printf '  %-5s %-6s cpu %6.1f ns (%sx go), wall %6.1f ns (%sx go)\n' \
      "$kind" "$strategy" "$cpu" "$ratio_cpu" "$wall" "$ratio_wall"
    echo "$kind $strategy $ratio_cpu $ratio_wall $cpu" >>"$results"
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians over $reps repetitions (goal: fifo <= 0.5x, random <= 0.7x Go):"
for key in "bench fifo" "bench random" "user fifo" "user random"; do
  grep "^$key " "$results" | awk -v key="$key" '
    { cpu[NR] = $3; wall[NR] = $4; ns[NR] = $5 }
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { printf "  %-12s cpu %.2fx go (%.1f ns), wall %.2fx go\n", key, median(cpu, NR), median(ns, NR), median(wall, NR) }'
done
