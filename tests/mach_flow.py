#!/usr/bin/env python3
"""Replays what mach does with `samply load` (mozgeckoprofiler's symbolication.py and
profiler-edit.js --symbolicate-with-server), with this binary in samply's place:

  spawn `BIN load PROFILE --no-open --breakpad-symbol-server URL`, stdout and stderr on
  ONE pipe; read lines until the first that starts with `http`; split it on
  `symbolServer=` and URL-decode the rest; CLOSE the pipe; POST /symbolicate/v5 requests
  (up to 10 jobs each, several requests in parallel); SIGINT; the process must exit.

usage: mach_flow.py BIN PROFILE SERVER_URL EXPECTED.json
EXPECTED.json: {"memoryMap": [[debugName, breakpadId]...],
                "frames": [[moduleIndex, moduleOffset, function]...]}
Prints a summary; exit status 0 when every frame is named as expected and the process
exited after SIGINT, 1 otherwise.
"""
import json
import signal
import subprocess
import sys
import threading
import urllib.parse
import urllib.request


def main():
    binary, profile, server_url, expected_path = sys.argv[1:5]
    expected = json.load(open(expected_path))
    proc = subprocess.Popen(
        [binary, "load", profile, "--no-open", "--breakpad-symbol-server", server_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    symbol_server = None
    for line in proc.stdout:
        line = line.decode("utf-8", "replace")
        if line.startswith("http"):
            symbol_server = urllib.parse.unquote(line.split("symbolServer=")[1].strip())
            break
    # mach stops reading here: every later write of the binary meets a closed pipe.
    proc.stdout.close()
    if symbol_server is None:
        print("no URL line; exit status", proc.wait())
        return 1

    memory_map = expected["memoryMap"]
    frames = expected["frames"]
    # One job per frame, as profiler-edit.js batches them: 10 jobs per request, the
    # requests sent in parallel.
    jobs = [{"memoryMap": memory_map, "stacks": [[[f[0], f[1]]]]} for f in frames]
    batches = [jobs[i:i + 10] for i in range(0, len(jobs), 10)]
    answers = [None] * len(batches)
    errors = []

    def post(i):
        try:
            req = urllib.request.Request(
                symbol_server + "/symbolicate/v5",
                data=json.dumps({"jobs": batches[i]}).encode(),
                method="POST",
            )
            with urllib.request.urlopen(req, timeout=60) as r:
                answers[i] = json.load(r)
        except Exception as e:  # noqa: BLE001 (report whatever failed)
            errors.append(f"batch {i}: {e}")

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    named = 0
    misses = []
    for i, batch in enumerate(answers):
        if batch is None:
            continue
        for j, result in enumerate(batch["results"]):
            k = i * 10 + j
            frame = result["stacks"][0][0]
            want = frames[k][2]
            if frame.get("function") == want:
                named += 1
            else:
                misses.append((want, frame.get("function"), result.get("module_errors")))

    proc.send_signal(signal.SIGINT)
    try:
        status = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        status = "no exit within 10 s of SIGINT"

    print(f"named {named}/{len(frames)}; exit status after SIGINT: {status}")
    for e in errors:
        print("request failed:", e)
    for m in misses[:10]:
        print("miss:", m)
    return 0 if named == len(frames) and not errors and status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
