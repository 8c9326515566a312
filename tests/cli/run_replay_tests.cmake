# `bubble list`, `bubble run`, `bubble replay` and `bubble limiter replay` through the command line
# (label `cli`): the happy paths, the exit statuses (0 held, 1 a property failed, 2 bad usage with
# one line naming the option and its value), failure files and their exact replay.
# Uses cli_test, ${expect}, ${bubble} and ${out} from cli_tests.cmake.

# list and run.
cli_test(list 0 "^scenario suites \\(6\\):" ${bubble} list)
cli_test(list_help 0 "Examples:" ${bubble} list --help)
cli_test(run_all_suites 0 "summary: 4 suites, [0-9]+ properties passed, 0 failed$"
  ${bubble} run --cases 50 --seed 1)
cli_test(run_one_suite 0 "limiter: [0-9]+ properties passed, 0 failed"
  ${bubble} run limiter --cases 20 --seed 7)
cli_test(run_help 0 "^  bubble run exhibits  " ${bubble} run --help)
cli_test(run_exhibits_fail 1 "summary: 1 suites, 0 properties passed, 3 failed"
  ${bubble} run exhibits --cases 300 --seed 5 --failure-file ${out}/exhibits.json)
cli_test(run_unknown_suite 2 "^bubble run: no-such-suite: no such suite" ${bubble} run no-such-suite)
cli_test(run_zero_cases 2 "^bubble run: --cases 0: expected an integer from 1 to 1000000000$"
  ${bubble} run --cases 0)
cli_test(run_negative_seed 2 "^bubble run: --seed -1: expected an integer from 0 to" ${bubble} run --seed -1)
cli_test(run_unknown_option 2 "^bubble run: .*--bogus" ${bubble} run --bogus)
cli_test(run_missing_value 2 "^bubble run: --cases" ${bubble} run --cases)
cli_test(run_bad_failure_file 2 "^bubble run: --failure-file /nonexistent/dir/f.json: cannot write"
  ${bubble} run exhibits --cases 300 --seed 5 --failure-file /nonexistent/dir/f.json)
cli_test(unknown_command 2 "^bubble: .*bogus" ${bubble} bogus)
cli_test(top_help 0 "^  bubble run exhibits && bubble replay" ${bubble} --help)

# The proofs suite (`bubble run --exhaustive K`): every proof at its bound ends with its
# certificate (label `proof`: release only, the asan preset leaves it out); shards' certificates
# merge into the whole search's; bad usage exits 2.
add_test(NAME cli.run_proofs COMMAND python3 -c "
import re, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
certificates = re.findall(r'^       (bubble: complete: [0-9,]+ schedules with at most 1 preemption, 0 failed)$', out, re.M)
assert len(certificates) == 2, out
assert out.rstrip().endswith('summary: 1 suites, 2 properties passed, 0 failed'), out
" ${bubble} run --exhaustive 1)
set_tests_properties(cli.run_proofs PROPERTIES LABELS "cli;proof")
add_test(NAME cli.run_proof_shards_merge COMMAND python3 -c "
import re, subprocess, sys
bubble = sys.argv[1]
def certificates(*args):
    out = subprocess.run([bubble, 'run', '--exhaustive', '0', *args], check=True, capture_output=True, text=True).stdout
    return re.findall(r'^       (bubble: complete: .*)$', out, re.M)
whole = certificates()
shards = [certificates('--shard', f'{i}/2') for i in range(2)]
assert len(whole) == 2 and all(len(s) == 2 for s in shards), (whole, shards)
for proof in range(2):
    merged = subprocess.run([bubble, 'certificate', 'merge', '/dev/stdin'], check=True, capture_output=True, text=True,
                            input=shards[0][proof] + '\\n' + shards[1][proof] + '\\n').stdout.strip()
    assert merged == whole[proof], (merged, whole[proof])
" ${bubble})
set_tests_properties(cli.run_proof_shards_merge PROPERTIES LABELS cli)
cli_test(run_exhaustive_other_suite 2 "^bubble run: pool: --exhaustive, --shard and --reduction apply to the proofs suite only"
  ${bubble} run pool --exhaustive 1)
cli_test(run_exhaustive_bad_bound 2 "^bubble run: --exhaustive x: expected an integer from 0 to 100$"
  ${bubble} run --exhaustive x)
cli_test(run_bad_shard 2 "^bubble run: --shard: \"2/2\" is not a shard: expected i/n with 0 <= i < n"
  ${bubble} run --exhaustive 0 --shard 2/2)

# Not a terminal: plain lines, no progress line rewritten with carriage returns.
add_test(NAME cli.run_plain_lines_when_not_a_terminal COMMAND python3 -c "
import subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True).stdout
assert b'\\r' not in out and b'\\x1b' not in out, out
assert b'  ok   rate limiter admits at most n per window (backpressure, refunds) (300 cases' in out, out
" ${bubble} run limiter --cases 300 --seed 2)
set_tests_properties(cli.run_plain_lines_when_not_a_terminal PROPERTIES LABELS cli)

# run --json: one object per property, then the summary; a failure names its file.
add_test(NAME cli.run_json COMMAND python3 -c "
import json, subprocess, sys
r = subprocess.run(sys.argv[2:], capture_output=True, text=True)
assert r.returncode == 1, r
lines = [json.loads(line) for line in r.stdout.splitlines()]
props, summary = lines[:-1], lines[-1]['summary']
assert len(props) == 3 and all(not p['passed'] and p['suite'] == 'exhibits' for p in props), props
assert props[0]['failure_file'] == sys.argv[1] and 'pool property violated' in props[0]['message']
# Each failure's schedule is its shrunk case's failing run's, which the message ends with.
assert all(p['message'].endswith('BUBBLE_STRATEGY=' + p['schedule']) for p in props), props
assert summary == {'suites': 1, 'passed': 0, 'failed': 3, 'seed': 5}, summary
json.load(open(sys.argv[1]))
" ${out}/json-failure.json ${bubble} run exhibits --cases 300 --seed 5 --json
  --failure-file ${out}/json-failure.json)
add_test(NAME cli.run_json_passing COMMAND python3 -c "
import json, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
lines = [json.loads(line) for line in out.splitlines()]
assert all(p['passed'] and p['cases'] == 20 for p in lines[:-1]), lines
assert lines[-1]['summary']['failed'] == 0 and lines[-1]['summary']['passed'] == len(lines) - 1
" ${bubble} run limiter --cases 20 --seed 3 --json)

# replay: a known-bad suite's failure file replays to the identical message and trace, twice;
# a BUBBLE_TEST's failure file gives the command that reproduces it.
add_test(NAME cli.replay_property_failure
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/replay_check.py property ${bubble} ${out})
add_executable(known_bad_test_program known_bad_test_program.cpp)
target_link_libraries(known_bad_test_program PRIVATE bubble::testing GTest::gtest_main)
bubble_set_warnings(known_bad_test_program)
add_test(NAME cli.replay_bubble_test_failure
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/replay_check.py test ${bubble}
    $<TARGET_FILE:known_bad_test_program> ${out})
add_test(NAME cli.replay_disabled_test_failure
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/replay_check.py disabled
    $<TARGET_FILE:known_bad_test_program>)
set_tests_properties(cli.run_json cli.run_json_passing cli.replay_property_failure
  cli.replay_bubble_test_failure cli.replay_disabled_test_failure PROPERTIES LABELS cli)
cli_test(replay_help 0 "^  bubble replay f.json --trace-text f.trace --trace-chrome" ${bubble} replay --help)
cli_test(replay_no_file 2 "^bubble replay: file is required" ${bubble} replay)
cli_test(replay_missing_file 2 "^bubble replay: /nonexistent/f.json: cannot read the file$"
  ${bubble} replay /nonexistent/f.json)
cli_test(replay_not_a_failure_file 2 "^bubble replay: .*CMakeLists.txt: not a failure file"
  ${bubble} replay ${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt)

# limiter replay.
set(limiter_input "0 allow 1\\n0 allow 2\\n0 reserve 1\\n300000000 allow 2\\n")
function(limiter_test name status pattern input)
  add_test(NAME cli.${name}
    COMMAND sh -c "printf '${input}' | sh ${CMAKE_CURRENT_SOURCE_DIR}/expect.sh ${status} '${pattern}' \"$0\" limiter replay \"$@\""
      ${bubble} ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES LABELS cli)
endfunction()
limiter_test(limiter_replay 0 "^true$" "${limiter_input}" --rate 10 --burst 2)
add_test(NAME cli.limiter_replay_decisions
  COMMAND sh -c "printf '${limiter_input}' | \"$0\" limiter replay --rate 10 --burst 2" ${bubble})
set_tests_properties(cli.limiter_replay_decisions PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "^true\nfalse\ntrue 0\ntrue\n$")
limiter_test(limiter_rate_overflow 2 "^bubble limiter replay: --rate 1e400: expected a finite"
  "0 allow 1\\n" --rate 1e400 --burst 1)
limiter_test(limiter_rate_inf 0 "^true$" "0 allow 1\\n" --rate inf --burst 1)
limiter_test(limiter_negative_burst 2 "^bubble limiter replay: --burst -1: expected an integer"
  "0 allow 1\\n" --rate 1 --burst -1)
limiter_test(limiter_negative_time 2 "^bubble limiter replay: stdin line 2: time -5: expected nanoseconds >= 0$"
  "0 allow 1\\n-5 allow 1\\n" --rate 1 --burst 1)
limiter_test(limiter_decreasing_time 2 "^bubble limiter replay: stdin line 2: time 5: expected times that never decrease"
  "10 allow 1\\n5 allow 1\\n" --rate 1 --burst 1)
limiter_test(limiter_malformed_line 2 "^bubble limiter replay: stdin line 1: bad n"
  "0 allow x\\n" --rate 1 --burst 1)
limiter_test(limiter_missing_rate 2 "^bubble limiter replay: --rate is required" "" --burst 1)
limiter_test(limiter_help 0 "Examples:" "" --help)
