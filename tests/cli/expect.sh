#!/bin/sh
# expect.sh STATUS PATTERN COMMAND...: runs COMMAND, and succeeds when it exits with STATUS and
# its output (stdout and stderr together) matches the extended regular expression PATTERN.
status=$1
pattern=$2
shift 2
out=$("$@" 2>&1)
got=$?
if [ "$got" -ne "$status" ]; then
  printf 'expected exit status %s, got %s; output:\n%s\n' "$status" "$got" "$out"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
  printf 'output does not match /%s/:\n%s\n' "$pattern" "$out"
  exit 1
fi
printf '%s\n' "$out"
