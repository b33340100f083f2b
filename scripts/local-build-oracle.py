#!/usr/bin/env python3
"""Oracle for a fixtures/local-builds case: llvm-symbolizer-19's answer for every
instruction of .text (addresses from llvm-objdump-19 -d), as module offsets.

Usage: local-build-oracle.py IMAGE ORACLE_OBJECT > CASE.oracle.json
IMAGE is the file under test (its build ID gives the debug ID, its first PT_LOAD the image
base); ORACLE_OBJECT is what llvm-symbolizer reads (the same code with debug info in a
form llvm reads: the build before dwz, the binary beside its .dwp). Nothing here comes
from profiler-symbol-server.
"""
import json
import os
import re
import subprocess
import sys

L = "/usr/lib/llvm-19/bin"


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True, text=True, check=True).stdout


def debug_id(path):
    notes = run(["readelf", "-n", path])
    b = bytes.fromhex(re.search(r"Build ID: (\w+)", notes).group(1))[:16].ljust(16, b"\0")
    g = b[0:4][::-1] + b[4:6][::-1] + b[6:8][::-1] + b[8:16]
    return g.hex().upper() + "0"


def image_base(path):
    for line in run(["readelf", "-lW", path]).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            return int(f[2], 16)
    raise SystemExit("no PT_LOAD")


def main():
    image, obj = sys.argv[1], sys.argv[2]
    base = image_base(image)
    dis = [L + "/llvm-objdump", "-d", "--no-show-raw-insn", "--section=.text", obj]
    addrs = [int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):", run(dis), re.M)]
    sym = [L + "/llvm-symbolizer", "--inlines", "--output-style=JSON", "--obj=" + obj]
    out = run(sym, "\n".join(hex(a) for a in addrs) + "\n")
    entries = []
    for a, line in zip(addrs, out.splitlines()):
        r = json.loads(line)
        frames = [{"function": s["FunctionName"], "file": s["FileName"], "line": s["Line"]}
                  for s in r["Symbol"]]
        entries.append({"module_offset": hex(a - base), "frames_innermost_first": frames})
    doc = {
        "image": os.path.basename(os.path.dirname(image)) + "/" + os.path.basename(image),
        "breakpad_id": debug_id(image),
        "commands": [" ".join(dis), " ".join(sym) + " < (each address, one a line)"],
        "llvm_symbolizer": run([L + "/llvm-symbolizer", "--version"]).splitlines()[1].strip(),
        "addresses": entries,
    }
    # One address a line: diffs stay readable.
    print("{")
    for k in ["image", "breakpad_id", "commands", "llvm_symbolizer"]:
        print(f" {json.dumps(k)}: {json.dumps(doc[k])},")
    print(' "addresses": [')
    print(",\n".join("  " + json.dumps(e) for e in entries))
    print(" ]\n}")


main()
