#!/bin/sh
# Guide: choosing workers, queue and policy for a pool (docs/GUIDE-POOL-SIZING.md). Runs the
# guide's `bubble size` and `bubble sim` commands and checks the figures the guide quotes.
#   pool_sizing.sh BUBBLE
set -eu
bubble=$1
"$bubble" size --rate 300/s --latency 80ms > size.out
grep -Eq '^in_flight +24 ' size.out
grep -Eq '^workers +30 ' size.out
# 30 workers, a queue of 30 that refuses when full: about 80% busy, almost nothing refused.
"$bubble" sim --workers 30 --queue 30 --policy reject --job-time exp:80ms \
  --arrivals poisson:300/s --duration 10m --json > sized.json
# 24 workers (exactly the in-flight average, no headroom): saturated, and it refuses work.
"$bubble" sim --workers 24 --queue 30 --policy reject --job-time exp:80ms \
  --arrivals poisson:300/s --duration 10m --json > tight.json
python3 -c "
import json
sized, tight = json.load(open('sized.json')), json.load(open('tight.json'))
assert 0.75 < sized['utilization'] < 0.85, sized['utilization']
assert sized['rejected'] < 0.001 * sized['completed'], sized['rejected']
assert tight['utilization'] > 0.9, tight['utilization']
assert tight['rejected'] > 10 * max(1, sized['rejected']), (tight['rejected'], sized['rejected'])
assert tight['latency_ms']['p99'] > sized['latency_ms']['p99'], (tight['latency_ms'], sized['latency_ms'])
"
echo ok
