#!/usr/bin/env bash
# Regenerates the outputs and pictures of docs/SIMULATIONS.md with the release build of `bubble`.
# Usage: tools/sim/make-figures.sh [path/to/bubble]   (default build/release/tools/bubble)
set -euo pipefail
cd "$(dirname "$0")/../.."
bubble=${1:-build/release/tools/bubble}
img=docs/images
mkdir -p "$img"
run() { echo "\$ bubble $*"; "$bubble" "$@"; echo; }

run sim --workers 1 --job-time exp:100ms --arrivals poisson:5/s --duration 10h --analytic
run sim --workers 1 --job-time exp:100ms --arrivals poisson:9/s --duration 10h --analytic
run sim --workers 1 --job-time exp:100ms --sweep-load 0.1:0.95:0.05 --duration 10h \
  --svg $img/sim-hockey-1-worker.svg
run sim --workers 16 --job-time exp:100ms --arrivals poisson:128/s --duration 1h --analytic
run sim --workers 16 --job-time exp:100ms --sweep-load 0.5:0.95:0.05 --duration 1h \
  --svg $img/sim-hockey-16-workers.svg
collapse=(--workers 4 --job-time fixed:400ms --arrivals poisson:8/s --client-timeout 2s
          --duration 180s)
run sim "${collapse[@]}" --spike 15/s@30s-40s
run sim "${collapse[@]}" --spike 15/s@30s-60s --svg $img/sim-collapse-unbounded.svg
run sim "${collapse[@]}" --spike 15/s@30s-60s --policy reject --queue 8 --deadline-skip \
  --svg $img/sim-collapse-bounded.svg
slow=(--workers 2000 --job-time fixed:100ms --slowdown fixed:10s@30s --arrivals poisson:100/s
      --duration 90s)
run sim "${slow[@]}" --rate-limit 50/s --svg $img/sim-rate-limit.svg
run sim "${slow[@]}" --concurrency-limit 20 --svg $img/sim-concurrency-limit.svg
prio=(--workers 4 --job-time fixed:100ms --arrivals poisson:2/s --urgent poisson:44/s
      --tenant-queue 50 --measure main --duration 120s)
run sim "${prio[@]}"
run sim "${prio[@]}" --aging 100ms --svg $img/sim-priority-aging.svg
batch=(--workers 4 --job-time fixed:100ms --arrivals poisson:10/s --batch 50000@10s --measure main
       --warmup 10s --duration 1400s)
run sim "${batch[@]}" --fairness round-robin
run sim "${batch[@]}" --fairness fifo --svg $img/sim-tenant-fifo.svg
run size --rate 300/s --latency 80ms --downstream-concurrency 20
run size --cores 8 --wait 90ms --compute 10ms
