#!/bin/sh
# Guide: from a failing run to its replay and a trace in Perfetto (docs/GUIDE-REPLAY.md). Runs the
# guide's commands in DIR and checks what the guide says they do.
#   failure_to_perfetto.sh BUBBLE DIR
set -eu
bubble=$1
cd "$2"
rm -f bubble-failure-exhibits.json failure.trace failure.trace.json
# 1. A failing run: status 1, and a failure file.
status=0
"$bubble" run exhibits --seed 5 --cases 300 > run.out 2>&1 || status=$?
test "$status" -eq 1
grep -q '^failure file: bubble-failure-exhibits.json' run.out
# 2. Its replay, with the trace in both formats: the same message, byte for byte.
status=0
"$bubble" replay bubble-failure-exhibits.json --trace-text failure.trace \
  --trace-chrome failure.trace.json > replay.out 2>&1 || status=$?
test "$status" -eq 1
grep -q 'the same message, byte for byte' replay.out
# 3. The trace: text, and Chrome JSON (what Perfetto opens) with one track per bubble thread.
grep -q ' root spawn pool/worker-0 ' failure.trace
python3 -c "
import json, sys
events = json.load(open('failure.trace.json'))['traceEvents']
names = {e['args']['name'] for e in events if e.get('name') == 'thread_name'}
assert any(n.startswith('pool/worker-0') for n in names), names
"
echo ok
