#!/usr/bin/env python3
"""Counts per job of one pool_bench row: process CPU, context switches and futex calls.

Runs pool_bench once for one benchmark row under `perf record`, recording every futex system
call (the syscalls:sys_enter_futex tracepoint) and every context switch, and prints per job:
the row's throughput and process CPU (from the benchmark's own report), context switches, and
futex waits and wakes (FUTEX_WAIT / FUTEX_WAIT_BITSET, FUTEX_WAKE / FUTEX_WAKE_BITSET), each
split between the submitter (the benchmark's main thread) and the other threads (the pool's).
Wall-clock throughput on a shared machine varies from run to run; these counts much less.

perf stat cannot split the tracepoint by operation without a tracepoint filter, which an
unprivileged user may not set (perf_event_paranoid 2), hence perf record and perf script.

    tools/bench/pool_counts.py build/release/tools/bench/pool_bench 'BM_BubblePool/busy:0/measure_latency:1'
"""

import collections
import os
import re
import subprocess
import sys
import tempfile


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print("usage: pool_counts.py POOL_BENCH FILTER [LABEL]", file=sys.stderr)
        return 2
    bench, row = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) == 4 else row
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        run = subprocess.run(
            ["perf", "record", "-q", "-c", "1", "-o", data,
             "-e", "syscalls:sys_enter_futex", "-e", "context-switches",
             bench, "--benchmark_filter=" + row, "--benchmark_format=csv"],
            capture_output=True, text=True, check=True)
        script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,tid,event,trace"],
                                capture_output=True, text=True, check=True).stdout
    report = [line.split(",") for line in run.stdout.splitlines() if line.startswith('"BM_')]
    if not report:
        print("pool_counts.py: no benchmark matched " + row, file=sys.stderr)
        return 1
    iterations, cpu_ms, items_per_s = int(report[0][1]), float(report[0][3]), float(report[0][6])
    jobs_per_iteration = 200_000 if "busy:1" in row else 1_000_000  # kBusyJobs / kJobs
    jobs = iterations * jobs_per_iteration
    counts = collections.Counter()
    for line in script.splitlines():
        fields = line.split()
        if len(fields) < 2 or "/" not in fields[0]:
            continue
        pid, tid = fields[0].split("/")
        who = "submitter" if pid == tid else "pool"
        if "sys_enter_futex" in fields[1]:
            op = int(re.search(r"op: (0x[0-9a-f]+)", line).group(1), 16) & 127
            kind = "wait" if op in (0, 9) else "wake" if op in (1, 10) else "other"
            counts[(kind, who)] += 1
        elif "context-switches" in fields[1]:
            counts[("switch", who)] += 1

    def per_job(kind: str, who: str) -> float:
        return counts[(kind, who)] / jobs

    print(f"{label}: {items_per_s / 1e6:.2f} M jobs/s, {cpu_ms * 1e6 / jobs_per_iteration:.0f} ns CPU"
          f" | switches submitter {per_job('switch', 'submitter'):.3f} pool {per_job('switch', 'pool'):.3f}"
          f" | futex waits submitter {per_job('wait', 'submitter'):.3f} pool {per_job('wait', 'pool'):.3f}"
          f" | futex wakes submitter {per_job('wake', 'submitter'):.3f} pool {per_job('wake', 'pool'):.3f}"
          f" (per job)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
