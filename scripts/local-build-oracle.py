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


def is_macho(path):
    with open(path, "rb") as f:
        return f.read(4) in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe")


def debug_id(path):
    if is_macho(path):  # LC_UUID as is, age 0
        uuid = run([L + "/llvm-dwarfdump", "--uuid", path]).split()[1]
        return uuid.replace("-", "").upper() + "0"
    notes = run(["readelf", "-n", path])
    b = bytes.fromhex(re.search(r"Build ID: (\w+)", notes).group(1))[:16].ljust(16, b"\0")
    g = b[0:4][::-1] + b[4:6][::-1] + b[6:8][::-1] + b[8:16]
    return g.hex().upper() + "0"


def image_base(path):
    if is_macho(path):  # vmaddr of __TEXT
        lines = run([L + "/llvm-objdump", "--macho", "--private-headers", path]).splitlines()
        for i, line in enumerate(lines):
            if line.split() == ["segname", "__TEXT"]:
                return int(lines[i + 1].split()[1], 16)
    for line in run(["readelf", "-lW", path]).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            return int(f[2], 16)
    raise SystemExit("no PT_LOAD")


def main():
    image, obj = sys.argv[1], sys.argv[2]
    base = image_base(image)
    # A dSYM holds no code: Mach-O instructions come from the image itself.
    code = image if is_macho(image) else obj
    text = "__text" if is_macho(image) else ".text"
    dis = [L + "/llvm-objdump", "-d", "--no-show-raw-insn", "--section=" + text, code]
    addrs = [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s", run(dis), re.M)]
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
