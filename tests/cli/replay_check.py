"""Checks of `bubble run` failure files and `bubble replay`, run through CTest.

replay_check.py property BUBBLE WORKDIR
    A known-bad suite's failure file replays to the identical message and trace, twice.
replay_check.py test BUBBLE PROGRAM WORKDIR
    A failing BUBBLE_TEST with BUBBLE_FAILURE_FILE set writes a failure file; `bubble replay`
    prints the command that reproduces it, and that command fails with the same replay line.
replay_check.py catch2|doctest PROGRAM WORKDIR
    A planted bug in a Catch2 or doctest bubble test passes under fifo and is found by exploring;
    the printed replay line, run as printed, fails with the same message byte for byte, twice,
    and the printed shrunk line fails with the same assertion.
"""
import json
import os
import re
import subprocess
import sys


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=env)


def check_property(bubble, work):
    failure = os.path.join(work, "exhibits-failure.json")
    if os.path.exists(failure):
        os.remove(failure)
    r = run([bubble, "run", "exhibits", "--cases", "300", "--seed", "5", "--failure-file", failure])
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "failure file: " + failure in r.stdout, r.stdout
    f = json.load(open(failure))
    assert f["format"] == "bubble-failure-1" and f["kind"] == "property", f
    assert f["suite"] == "exhibits" and f["seed"] == 5 and f["cases"] == 300, f
    assert f["property"] == "a pool that closes before draining loses accepted jobs", f
    assert f["reproduce"] and f["schedule"], f
    assert "pool property violated" in f["message"], f["message"]
    # The recorded schedule is the one of the shrunk case's failing run, which its message names.
    assert f["message"].endswith("BUBBLE_STRATEGY=" + f["schedule"]), (f["schedule"], f["message"])
    outputs, traces, charts = [], [], []
    for i in range(2):
        text = os.path.join(work, "replay%d.trace" % i)
        chrome = os.path.join(work, "replay%d.trace.json" % i)
        for path in (text, chrome):
            if os.path.exists(path):
                os.remove(path)
        r = run([bubble, "replay", failure, "--trace-text", text, "--trace-chrome", chrome])
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        # The replay prints the recorded message first, byte for byte, then says so.
        assert r.stdout.startswith(f["message"] + "\n\n"), (r.stdout, f["message"])
        assert "the same message, byte for byte" in r.stdout, r.stdout
        outputs.append(r.stdout.replace(str(i) + ".trace", "N.trace"))
        traces.append(open(text).read())
        charts.append(open(chrome).read())
    assert outputs[0] == outputs[1], outputs
    assert traces[0] and traces[0] == traces[1]
    assert charts[0] == charts[1]
    events = json.loads(charts[0])["traceEvents"]
    assert any(e.get("args", {}).get("name", "").startswith("pool/worker-0") for e in events)
    # A replay of a case the suite does not have is bad usage.
    f["property"] = "no such property"
    json.dump(f, open(failure, "w"))
    r = run([bubble, "replay", failure])
    assert r.returncode == 2 and "no property \"no such property\"" in r.stderr, r


def check_test(bubble, program, work):
    failure = os.path.join(work, "bubble-test-failure.json")
    if os.path.exists(failure):
        os.remove(failure)
    env = dict(os.environ, BUBBLE_FAILURE_FILE=failure)
    r = run([program], env=env)
    assert r.returncode != 0, r
    f = json.load(open(failure))
    assert f["format"] == "bubble-failure-1" and f["kind"] == "test", f
    assert f["test"] == "KnownBad.UnlockedIncrementsLoseAnUpdate", f
    assert f["strategy"] == "fifo", f
    assert f["command"].startswith("BUBBLE_STRATEGY=fifo "), f
    assert "--gtest_filter=KnownBad.UnlockedIncrementsLoseAnUpdate" in f["command"], f
    assert "replay: " + f["command"] in f["message"], f
    # The message holds the assertion that failed, not only a reference to it.
    assert "known_bad_test_program.cpp:" in f["message"] and "Which is: 1" in f["message"], f
    r = run([bubble, "replay", failure])
    assert r.returncode == 1, r
    assert "cannot run" in r.stdout and "  " + f["command"] + "\n" in r.stdout, r.stdout
    # The printed command reproduces the failure: it fails with the same replay line.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BUBBLE_")}
    again = subprocess.run(f["command"], shell=True, capture_output=True, text=True, env=clean)
    assert again.returncode != 0, again
    assert "replay: " + f["command"] in again.stdout, again.stdout


def check_disabled_test(program):
    """A disabled test run with --gtest_also_run_disabled_tests prints a replay line that runs it
    again: run as printed, it fails the same way instead of running no test."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BUBBLE_")}
    r = run([program, "--gtest_filter=KnownBad.DISABLED_*", "--gtest_also_run_disabled_tests"],
            env=clean)
    assert r.returncode != 0, r
    lines = [l for l in r.stdout.splitlines() if l.startswith("replay: BUBBLE_STRATEGY=")]
    assert lines, r.stdout
    command = lines[0][len("replay: "):]
    assert "--gtest_filter=KnownBad.DISABLED_UnlockedIncrementsLoseAnUpdate" in command, command
    assert "--gtest_also_run_disabled_tests" in command, command
    again = subprocess.run(command, shell=True, capture_output=True, text=True, env=clean)
    assert again.returncode != 0, again
    assert "1 FAILED TEST" in again.stdout and "replay: " + command in again.stdout, again.stdout


def check_glue(framework, program, work):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BUBBLE_")}
    test = "two clients book the last seat"
    # Under fifo alone the planted check-then-act hides.
    r = run([program], env=clean)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)

    explored_file = os.path.join(work, framework + "-explored.json")
    if os.path.exists(explored_file):
        os.remove(explored_file)
    r = run([program], env=dict(clean, BUBBLE_SCHEDULES="200", BUBBLE_FAILURE_FILE=explored_file))
    assert r.returncode != 0, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    replays = [l for l in lines if l.startswith("replay: BUBBLE_STRATEGY=")]
    shrunk = [l for l in lines if l.startswith("shrunk to ")]
    assert replays and shrunk, r.stdout
    f = json.load(open(explored_file))
    assert f["format"] == "bubble-failure-1" and f["kind"] == "test" and f["test"] == test, f
    assert replays[-1] == "replay: " + f["command"], (replays, f["command"])
    # The command selects the one test by its name, as the framework's own filter.
    selector = {"catch2": " '" + test + "'", "doctest": " '--test-case=" + test + "'"}[framework]
    assert f["command"].endswith(selector), f["command"]
    # The message holds the failed assertion itself, then the report and its last lines.
    assert "planted_bugs.hpp" not in f["message"], f["message"]
    assert "_known_bad_program.cpp:" in f["message"], f["message"]
    assert f["message"].endswith("\n" + replays[-1] + "\n" + shrunk[-1]), f["message"]

    # The replay line, run as printed, fails the same way, byte for byte, every time.
    messages = []
    for i in range(2):
        replay_file = os.path.join(work, "%s-replay%d.json" % (framework, i))
        if os.path.exists(replay_file):
            os.remove(replay_file)
        again = subprocess.run(f["command"], shell=True, capture_output=True, text=True,
                               env=dict(clean, BUBBLE_FAILURE_FILE=replay_file))
        assert again.returncode != 0, again
        assert replays[-1] in again.stdout.splitlines(), again.stdout
        g = json.load(open(replay_file))
        assert g["command"] == f["command"] and g["strategy"] == f["strategy"], (f, g)
        messages.append(g["message"])
    assert messages[0] == messages[1], messages
    # The exploration's message says which schedule failed and ends with the shrunk line; the
    # replay's says "the run": otherwise they are the same bytes.
    expected = re.sub(r"^bubble: schedule [0-9]+ of 200 \(", "bubble: the run (", f["message"],
                      count=1, flags=re.M)
    expected = expected[:-len("\n" + shrunk[-1])]
    assert messages[0] == expected, (messages[0], expected)

    # The shrunk line runs as printed too, and fails with the same assertion.
    command = shrunk[-1].split("): ", 1)[1]
    shrunk_file = os.path.join(work, framework + "-shrunk.json")
    if os.path.exists(shrunk_file):
        os.remove(shrunk_file)
    s = subprocess.run(command, shell=True, capture_output=True, text=True,
                       env=dict(clean, BUBBLE_FAILURE_FILE=shrunk_file))
    assert s.returncode != 0, s
    h = json.load(open(shrunk_file))
    first_failure = f["message"].split("\nbubble: ", 1)[0]
    assert h["message"].startswith(first_failure), (h["message"], first_failure)
    print(replays[-1])
    print(shrunk[-1])


if __name__ == "__main__":
    if sys.argv[1] == "property":
        check_property(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "disabled":
        check_disabled_test(sys.argv[2])
    elif sys.argv[1] in ("catch2", "doctest"):
        check_glue(sys.argv[1], sys.argv[2], sys.argv[3])
    else:
        check_test(sys.argv[2], sys.argv[3], sys.argv[4])
    print("ok")
