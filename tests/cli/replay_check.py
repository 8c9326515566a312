"""Checks of `bubble run` failure files and `bubble replay`, run through CTest.

replay_check.py property BUBBLE WORKDIR
    A known-bad suite's failure file replays to the identical message and trace, twice.
replay_check.py test BUBBLE PROGRAM WORKDIR
    A failing BUBBLE_TEST with BUBBLE_FAILURE_FILE set writes a failure file; `bubble replay`
    prints the command that reproduces it, and that command fails with the same replay line.
"""
import json
import os
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


if __name__ == "__main__":
    if sys.argv[1] == "property":
        check_property(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "disabled":
        check_disabled_test(sys.argv[2])
    else:
        check_test(sys.argv[2], sys.argv[3], sys.argv[4])
    print("ok")
