# `bubble sim` and `bubble size` through the command line (label `cli`): the happy paths, the
# output formats, and bad usage (exit status 2, one line naming the option and its value).
set(expect sh ${CMAKE_CURRENT_SOURCE_DIR}/expect.sh)
set(bubble $<TARGET_FILE:bubble_cli>)
set(out ${CMAKE_CURRENT_BINARY_DIR})

function(cli_test name status pattern)
  add_test(NAME cli.${name} COMMAND ${expect} ${status} ${pattern} ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES LABELS cli)
endfunction()

# Happy paths.
cli_test(sim_summary 0 "analytic \\(M/M/c\\): load 50.0%.*mean 200.0"
  ${bubble} sim --workers 1 --job-time exp:100ms --arrivals poisson:5/s --duration 10m --analytic)
cli_test(sim_defaults 0 "^bubble sim: 4 workers, unbounded queue, fixed:400ms jobs"
  ${bubble} sim)
cli_test(size_littles_law 0 "^in_flight +24 +Little's law: 300/s x 80ms = 24"
  ${bubble} size --rate 300/s --latency 80ms)
cli_test(size_headroom 0 "^workers +30 +24 in flight / 80% busy = 30 workers"
  ${bubble} size --rate 300/s --latency 80ms)
cli_test(size_downstream 0 "ceiling_per_s +250 .*bigger quota"
  ${bubble} size --rate 300/s --latency 80ms --downstream-concurrency 20)
cli_test(size_goetz 0 "goetz_workers +80 .*Goetz"
  ${bubble} size --cores 8 --wait 90ms --compute 10ms)
cli_test(sim_help 0 "Examples:.*" ${bubble} sim --help)
cli_test(size_help 0 "Examples:.*" ${bubble} size --help)

# --json: exactly the documented fields; --json for size; the SVG plots parse as XML; --csv.
add_test(NAME cli.sim_json_fields COMMAND python3 -c "
import json, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
j = json.loads(out)
assert sorted(j) == sorted(['completed', 'rejected', 'timed_out', 'skipped', 'throughput_per_s',
    'goodput_per_s', 'utilization', 'max_queue', 'latency_ms', 'wait_ms', 'series']), sorted(j)
for k in ('latency_ms', 'wait_ms'):
    assert sorted(j[k]) == ['max', 'mean', 'p50', 'p90', 'p99'], j[k]
assert sorted(j['series']) == ['goodput', 'in_flight', 'p99_ms', 'queue_depth', 't_s']
assert all(len(v) == 30 for v in j['series'].values())
assert j['completed'] > 0 and j['timed_out'] > 0, j
" ${bubble} sim --workers 2 --job-time exp:400ms --arrivals poisson:6/s --client-timeout 1s
  --duration 30s --json)
add_test(NAME cli.size_json COMMAND python3 -c "
import json, subprocess, sys
j = json.loads(subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout)
assert j['in_flight']['value'] == 24 and j['workers']['value'] == 30, j
assert j['ceiling_per_s']['value'] == 250 and 'why' in j['workers'], j
" ${bubble} size --rate 300/s --latency 80ms --downstream-concurrency 20 --json)
add_test(NAME cli.sim_svg_and_csv COMMAND python3 -c "
import csv, subprocess, sys, xml.etree.ElementTree as ET
svg, table = sys.argv[1], sys.argv[2]
subprocess.run(sys.argv[3:] + ['--svg', svg, '--csv', table], check=True, capture_output=True)
root = ET.parse(svg).getroot()
assert root.tag.endswith('svg'), root.tag
assert len(root.findall('.//{http://www.w3.org/2000/svg}polyline')) >= 3
rows = list(csv.DictReader(open(table)))
assert len(rows) == 60 and set(rows[0]) == {'t_s', 'queue_depth', 'in_flight', 'goodput', 'p99_ms'}
" ${out}/series.svg ${out}/series.csv ${bubble} sim --spike 15/s@20s-30s --client-timeout 2s)
add_test(NAME cli.sim_sweep_svg COMMAND python3 -c "
import json, subprocess, sys, xml.etree.ElementTree as ET
svg = sys.argv[1]
out = subprocess.run(sys.argv[2:] + ['--svg', svg], check=True, capture_output=True, text=True)
rows = json.loads(out.stdout)['sweep']
assert [round(r['load'], 2) for r in rows] == [0.2, 0.5, 0.8], rows
assert rows[0]['mean_ms'] < rows[1]['mean_ms'] < rows[2]['mean_ms'], rows
assert abs(rows[2]['analytic_mean_ms'] - 500) < 1e-6, rows
ET.parse(svg)
" ${out}/sweep.svg ${bubble} sim --workers 1 --job-time exp:100ms --sweep-load 0.2:0.8:0.3
  --duration 1h --json)
add_test(NAME cli.sim_json_analytic COMMAND python3 -c "
import json, subprocess, sys
j = json.loads(subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout)
assert 'analytic' in j and len(j) == 12, sorted(j)
a = j['analytic']
assert a['model'] == 'M/M/c' and abs(a['latency_ms']['mean'] - 200) < 1e-9, a
assert abs(a['latency_ms']['p99'] / a['latency_ms']['mean'] - 4.605) < 1e-3, a
" ${bubble} sim --workers 1 --job-time exp:100ms --arrivals poisson:5/s --duration 10m --json
  --analytic)
set_tests_properties(cli.sim_json_fields cli.sim_json_analytic cli.size_json cli.sim_svg_and_csv cli.sim_sweep_svg
  PROPERTIES LABELS cli)

# Bad usage: status 2, one line naming the option and the value (never CLI11's 104-109).
cli_test(sim_bad_workers 2 "^bubble sim: --workers 0: expected an integer from 1 to 10000$"
  ${bubble} sim --workers 0)
cli_test(sim_negative_seed 2 "^bubble sim: --seed -1: expected" ${bubble} sim --seed -1)
cli_test(sim_bad_rate 2 "^bubble sim: --arrivals poisson:1e400/s: expected"
  ${bubble} sim --arrivals poisson:1e400/s)
cli_test(sim_bad_duration 2 "^bubble sim: --duration 10: expected a duration"
  ${bubble} sim --duration 10)
cli_test(sim_bad_policy 2 "^bubble sim: --policy drop: expected unbounded, block or reject$"
  ${bubble} sim --policy drop)
cli_test(sim_bad_spike 2 "^bubble sim: --spike 15/s@40s-30s: expected"
  ${bubble} sim --spike 15/s@40s-30s)
cli_test(sim_warmup_too_long 2 "^bubble sim: --warmup 2m: expected a warmup shorter than --duration"
  ${bubble} sim --duration 1m --warmup 2m)
cli_test(sim_skip_needs_timeout 2 "^bubble sim: --deadline-skip: needs --client-timeout"
  ${bubble} sim --deadline-skip)
cli_test(sim_rate_limit_block 2 "^bubble sim: --rate-limit 5/s: cannot be combined with --policy block"
  ${bubble} sim --rate-limit 5/s --policy block)
cli_test(sim_unknown_option 2 "^bubble sim: .*--bogus" ${bubble} sim --bogus)
# Every usage error ends with a pointer to the command's --help.
cli_test(unknown_option_points_to_help 2 "^Run .bubble sim --help. for its options and examples[.]$"
  ${bubble} sim --frobnicate)
cli_test(bad_value_points_to_help 2 "^Run .bubble size --help. for its options and examples[.]$"
  ${bubble} size --cores 0 --wait 1ms --compute 1ms)
cli_test(unknown_command_points_to_help 2 "^Run .bubble --help. for its options and examples[.]$"
  ${bubble} frobnicate)
cli_test(sim_missing_value 2 "^bubble sim: .*--workers" ${bubble} sim --workers)
cli_test(sim_bad_svg_path 2 "^bubble sim: --svg /nonexistent/dir/x.svg: cannot write"
  ${bubble} sim --duration 5s --svg /nonexistent/dir/x.svg)
cli_test(size_nothing 2 "^bubble size: nothing to size" ${bubble} size)
cli_test(size_bad_rate 2 "^bubble size: --rate 1e400/s: expected" ${bubble} size --rate 1e400/s
  --latency 1ms)
cli_test(size_rate_needs_latency 2 "^bubble size: --rate 300/s: needs --latency"
  ${bubble} size --rate 300/s)
cli_test(size_bad_cores 2 "^bubble size: --cores 0: expected an integer"
  ${bubble} size --cores 0 --wait 1ms --compute 1ms)

# `bubble certificate merge`: the shards' certificates, found in whole logs, merge into the
# search's; a missing shard, a shard given twice or a file that cannot be read is bad usage.
file(WRITE ${out}/shard-0.log "[ RUN      ] Queue.Drains\nbubble: complete: shard 0/2: 1,000 schedules with at most 2 preemptions, 0 failed\n[       OK ] Queue.Drains\n")
file(WRITE ${out}/shard-1.log "bubble: complete: shard 1/2: 234 schedules with at most 2 preemptions, 0 failed\n")
file(WRITE ${out}/shard-1-failed.log "bubble: complete: shard 1/2: 234 schedules with at most 2 preemptions, 3 failed\n")
cli_test(certificate_merge 0 "^bubble: complete: 1,234 schedules with at most 2 preemptions, 0 failed$"
  ${bubble} certificate merge ${out}/shard-0.log ${out}/shard-1.log)
cli_test(certificate_merge_failed 1 "^bubble: complete: 1,234 schedules with at most 2 preemptions, 3 failed$"
  ${bubble} certificate merge ${out}/shard-1-failed.log ${out}/shard-0.log)
cli_test(certificate_missing_shard 2 "^bubble certificate merge: bubble: the certificate of shard 1/2 is missing"
  ${bubble} certificate merge ${out}/shard-0.log)
cli_test(certificate_shard_twice 2 "^bubble certificate merge: bubble: shard 0/2 is given twice"
  ${bubble} certificate merge ${out}/shard-0.log ${out}/shard-0.log ${out}/shard-1.log)
cli_test(certificate_unreadable 2 "^bubble certificate merge: /nonexistent/x.log: cannot read the file$"
  ${bubble} certificate merge /nonexistent/x.log)
cli_test(certificate_no_file 2 "^bubble certificate merge: .*files"
  ${bubble} certificate merge)
