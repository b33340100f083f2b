#!/usr/bin/env python3
"""Ground truth for the mini corpus (fixtures/corpus), in the format of the shared
corpus's truth files (see fixtures/corpus/README.md and ../shared/corpus/README.md).

Every expected value comes from independent tools, never from profiler-symbol-server:
  * frames, names, file/line: llvm-symbolizer-19 --inlines --output-style=JSON, run three
    times (--functions=linkage --demangle, --no-demangle, --functions=short); the preferred
    name `function` is GNU c++filt of the linkage name (llvm-symbolizer's name for PE);
  * function ranges: llvm-dwarfdump-19 (DW_TAG_subprogram), llvm-pdbutil-19 (S_GPROC32 /
    S_LPROC32), llvm-nm-19 (symbol table);
  * module IDs: parsed here from the file headers with struct (build ID note, LC_UUID,
    CodeView RSDS), checked against the MODULE / INFO CODE_ID lines of the dump_syms .sym;
  * cross-checks (never used for `expect`): GNU addr2line -a -f -i -C (ELF), and the
    dump_syms .sym records covering each address.

Usage: gen-truth.py --corpus DIR --all        write DIR/truth/<case>.truth.json for all cases
       gen-truth.py --corpus DIR --profiles   write DIR/profiles/gecko-profile-*.json
No third-party modules.
"""
import argparse
import json
import os
import random
import re
import struct
import subprocess
import sys

LLVM = "/usr/lib/llvm-19/bin"
SYMBOLIZER = LLVM + "/llvm-symbolizer"
DWARFDUMP = LLVM + "/llvm-dwarfdump"
PDBUTIL = LLVM + "/llvm-pdbutil"
NM = LLVM + "/llvm-nm"
MAX_ADDRESSES = 45  # per case: keeps the committed corpus small

# case, image, debug file (for DWARF / PDB), label
CASES = [
    ("elf/shapes-gcc-O0-dwarf5", "elf/shapes-gcc-O0-dwarf5", None,
     "C, gcc 12 -O0 -g -gdwarf-5, PIE executable (image base 0)"),
    ("elf/shapes-gcc-O2-dwarf4", "elf/shapes-gcc-O2-dwarf4", None,
     "C, gcc 12 -O2 -g -gdwarf-4, PIE; static inline helpers inlined"),
    ("elf/shapes-clang19-O2-dwarf5-nopie", "elf/shapes-clang19-O2-dwarf5-nopie", None,
     "C, clang 19 -O2 -g -gdwarf-5, lld, NON-PIE: first PT_LOAD p_vaddr=0x200000"),
    ("elf/shapes-clang19-O2-dwarf4-pie", "elf/shapes-clang19-O2-dwarf4-pie", None,
     "C, clang 19 -O2 -g -gdwarf-4, lld, PIE"),
    ("elf/shapes-clang19-O0-dwarf4", "elf/shapes-clang19-O0-dwarf4", None,
     "C, clang 19 -O0 -g -gdwarf-4, lld, PIE"),
    ("elf/shapes-gcc-Os-dwarf4", "elf/shapes-gcc-Os-dwarf4", None,
     "C, gcc 12 -Os -g -gdwarf-4, PIE"),
    ("elf/split-debug/shapes", "elf/split-debug/shapes", "elf/split-debug/shapes.debug",
     "split debug: stripped shapes (copy of shapes-gcc-O2-dwarf4) + shapes.debug, "
     ".gnu_debuglink, and .build-id/xx/rest.debug"),
    ("elf/shapes-gcc-O2-dwarf4-zlib", "elf/shapes-gcc-O2-dwarf4-zlib", None,
     "shapes-gcc-O2-dwarf4 with objcopy --compress-debug-sections=zlib"),
    ("elf/split-dwarf/shapes-clang19-O2-splitdwarf", "elf/split-dwarf/shapes-clang19-O2-splitdwarf",
     None, "split DWARF: clang 19 -O2 -gdwarf-5 -gsplit-dwarf; skeleton CU in the binary, "
     "shapes.split.dwo and shapes-clang19-O2-splitdwarf.dwp beside it"),
    ("elf/libmathlib.so", "elf/libmathlib.so", None,
     "C shared library, gcc 12 -O2 -g -gdwarf-5 -shared -fPIC"),
    ("elf/libmathlib-gcc-O0.so", "elf/libmathlib-gcc-O0.so", None,
     "C shared library, gcc 12 -O0 -g -gdwarf-4 -shared -fPIC (nothing inlined)"),
    ("elf/libmathlib-clang19.so", "elf/libmathlib-clang19.so", None,
     "C shared library, clang 19 -O2 -g -gdwarf-5 -shared -fPIC, lld"),
    ("elf/tmpl-gcc-O2-dwarf4", "elf/tmpl-gcc-O2-dwarf4", None,
     "C++, g++ 12 -O2 -g -gdwarf-4: libstdc++ inlining, main.cold split (DW_AT_ranges)"),
    ("elf/tmpl-clang19-O2-dwarf5", "elf/tmpl-clang19-O2-dwarf5", None,
     "C++, clang++ 19 -O2 -g -gdwarf-5, lld, libstdc++"),
    ("pe/mathlib.dll", "pe/mathlib.dll", "pe/mathlib.pdb",
     "C DLL, clang 19 --target=x86_64-pc-windows-msvc -O2 -gcodeview, lld-link /debug, no CRT"),
    ("pe/mathlib-O0.dll", "pe/mathlib-O0.dll", "pe/mathlib-O0.pdb", "same C DLL at -O0"),
    ("pe/geomcpp.dll", "pe/geomcpp.dll", "pe/geomcpp.pdb",
     "freestanding C++ DLL (namespaces, templates, virtuals), -O2"),
    ("pe/geomcpp-O0.dll", "pe/geomcpp-O0.dll", "pe/geomcpp-O0.pdb", "same C++ DLL at -O0"),
    ("pe/petool.exe", "pe/petool.exe", "pe/petool.pdb",
     "freestanding EXE, custom entry point mainCRTStartup, -O2"),
    ("macho/arm64/libmathlib.dylib", "macho/arm64/libmathlib.dylib", None,
     "C dylib, clang 19 --target=arm64-apple-macos11 -O2 -g, ld64.lld, dsymutil .dSYM"),
    ("macho/x86_64/libmathlib.dylib", "macho/x86_64/libmathlib.dylib", None,
     "same source, x86_64-apple-macos11"),
    ("macho/arm64/libgeomcpp.dylib", "macho/arm64/libgeomcpp.dylib", None,
     "freestanding C++ dylib (Itanium mangling with Mach-O leading underscore), arm64"),
    ("macho/x86_64/libgeomcpp.dylib", "macho/x86_64/libgeomcpp.dylib", None,
     "freestanding C++ dylib, x86_64"),
    ("macho/x86_64/machotool", "macho/x86_64/machotool", None,
     "x86_64 Mach-O executable: __TEXT vmaddr 0x100000000"),
]


def run(args, stdin=None):
    r = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("%s failed: %s" % (" ".join(args), r.stderr))
    return r.stdout


def h(v):
    return None if v is None else "0x%x" % v


# ------------------------------------------------------------------ module headers

def elf_module(path):
    d = open(path, "rb").read()
    assert d[:4] == b"\x7fELF" and d[4] == 2, path
    (phoff,) = struct.unpack_from("<Q", d, 0x20)
    (shoff,) = struct.unpack_from("<Q", d, 0x28)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", d, 0x36)
    loads, build_id = [], None
    for i in range(phnum):
        p_type, p_flags, p_off, p_vaddr, _, p_filesz, p_memsz, _ = struct.unpack_from(
            "<IIQQQQQQ", d, phoff + i * phentsize)
        if p_type == 1:
            flags = ("R" if p_flags & 4 else "") + ("W" if p_flags & 2 else "") + ("X" if p_flags & 1 else "")
            loads.append({"vaddr": p_vaddr, "memsz": p_memsz, "flags": flags})
        if p_type == 4 and build_id is None:
            o = p_off
            while o < p_off + p_filesz:
                namesz, descsz, ntype = struct.unpack_from("<III", d, o)
                name = d[o + 12:o + 12 + namesz]
                desc_o = o + 12 + ((namesz + 3) & ~3)
                if ntype == 3 and name == b"GNU\0":
                    build_id = d[desc_o:desc_o + descsz]
                o = desc_o + ((descsz + 3) & ~3)
    sections = []
    if shoff and shnum:
        sh = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        stro = sh[shstrndx][4]
        for s in sh:
            name = d[stro + s[0]:d.index(b"\0", stro + s[0])].decode()
            sections.append({"name": name, "addr": s[3], "size": s[5], "flags": s[2]})
    base = loads[0]["vaddr"]
    b16 = (build_id or b"")[:16].ljust(16, b"\0")
    guid = struct.unpack("<IHH", b16[:8])
    bp = "%08X%04X%04X%s0" % (guid[0], guid[1], guid[2], b16[8:].hex().upper())
    module = {
        "format": "elf", "arch": "x86_64", "image_base": h(base),
        "image_base_definition": "p_vaddr of the first PT_LOAD program header",
        "load_segments": [{"vaddr": h(l["vaddr"]), "memsz": h(l["memsz"]), "flags": l["flags"]} for l in loads],
        "gnu_build_id": build_id.hex(), "code_id": build_id.hex(), "breakpad_id": bp,
        "image_size": h(max(l["vaddr"] + l["memsz"] for l in loads) - base),
    }
    data_addrs = [s["addr"] for s in sections if s["name"] in (".rodata", ".data", ".eh_frame") and s["addr"]]
    return module, base, max(l["vaddr"] + l["memsz"] for l in loads), data_addrs


def macho_module(path):
    d = open(path, "rb").read()
    magic, cputype, _, _, ncmds, _, _ = struct.unpack_from("<IiiIIII", d, 0)
    assert magic == 0xFEEDFACF, path
    arch = {0x01000007: "x86_64", 0x0100000C: "arm64"}[cputype]
    o, segs, uuid = 32, [], None
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", d, o)
        if cmd == 0x19:
            name = d[o + 8:o + 24].rstrip(b"\0").decode()
            vmaddr, vmsize = struct.unpack_from("<QQ", d, o + 24)
            segs.append({"name": name, "vmaddr": vmaddr, "vmsize": vmsize})
        if cmd == 0x1B:
            uuid = d[o + 8:o + 24]
        o += size
    text = [s for s in segs if s["name"] == "__TEXT"][0]
    base = text["vmaddr"]
    real = [s for s in segs if s["name"] != "__PAGEZERO"]
    end = max(s["vmaddr"] + s["vmsize"] for s in real)
    u = uuid.hex().upper()
    module = {
        "format": "macho", "arch": arch, "image_base": h(base),
        "image_base_definition": "vmaddr of the __TEXT segment",
        "segments": [{"name": s["name"], "vmaddr": h(s["vmaddr"]), "vmsize": h(s["vmsize"])} for s in segs],
        "uuid": "%s-%s-%s-%s-%s" % (u[:8], u[8:12], u[12:16], u[16:20], u[20:]),
        "breakpad_id": u + "0", "code_id": u, "image_size": h(end - base),
    }
    data = [s["vmaddr"] for s in real if s["name"] == "__DATA"]
    return module, base, end, data


def pe_module(path):
    d = open(path, "rb").read()
    (pe,) = struct.unpack_from("<I", d, 0x3C)
    assert d[pe:pe + 4] == b"PE\0\0", path
    machine, nsec, timestamp, _, _, optsize, _ = struct.unpack_from("<HHIIIHH", d, pe + 4)
    opt = pe + 24
    assert struct.unpack_from("<H", d, opt)[0] == 0x20B  # PE32+
    (image_base,) = struct.unpack_from("<Q", d, opt + 24)
    (size_of_image,) = struct.unpack_from("<I", d, opt + 56)
    dbg_rva, dbg_size = struct.unpack_from("<II", d, opt + 112 + 6 * 8)
    secs = []
    so = opt + optsize
    for i in range(nsec):
        name, vsize, rva, rawsize, rawptr = struct.unpack_from("<8sIIII", d, so + i * 40)
        secs.append({"name": name.rstrip(b"\0").decode(), "rva": rva, "vsize": vsize, "rawptr": rawptr})

    def file_off(rva):
        for s in secs:
            if s["rva"] <= rva < s["rva"] + s["vsize"]:
                return rva - s["rva"] + s["rawptr"]
        raise ValueError(rva)
    guid = age = pdb_path = None
    o = file_off(dbg_rva)
    for i in range(dbg_size // 28):
        _, _, _, _, typ, size, addr, ptr = struct.unpack_from("<IIHHIIII", d, o + i * 28)
        if typ == 2 and d[ptr:ptr + 4] == b"RSDS":
            guid = d[ptr + 4:ptr + 20]
            (age,) = struct.unpack_from("<I", d, ptr + 20)
            pdb_path = d[ptr + 24:d.index(b"\0", ptr + 24)].decode()
    g = struct.unpack("<IHH", guid[:8])
    gs = "%08X%04X%04X%s" % (g[0], g[1], g[2], guid[8:].hex().upper())
    module = {
        "format": "pe", "arch": {0x8664: "x86_64"}[machine], "image_base": h(image_base),
        "image_base_definition": "OptionalHeader.ImageBase (module offsets are RVAs)",
        "timestamp": "%08X" % timestamp, "size_of_image": h(size_of_image), "image_size": h(size_of_image),
        "sections": [{"name": s["name"], "rva": h(s["rva"]), "vsize": h(s["vsize"])} for s in secs],
        "code_id": "%08X%x" % (timestamp, size_of_image),
        "pdb_guid": "%s-%s-%s-%s-%s" % (gs[:8], gs[8:12], gs[12:16], gs[16:20], gs[20:]),
        "pdb_age": age, "pdb_path_in_image": pdb_path, "debug_name": os.path.basename(pdb_path),
        "breakpad_id": gs + "%X" % age,
    }
    data = [image_base + s["rva"] for s in secs if s["name"] in (".rdata", ".data")]
    return module, image_base, image_base + size_of_image, data, secs


# ------------------------------------------------------------------ function ranges

class Func:
    def __init__(self, name, linkage, ranges, source, decl_file=None, decl_line=None, entry=None):
        self.name, self.linkage, self.ranges, self.source = name, linkage, sorted(ranges), source
        self.decl_file, self.decl_line = decl_file, decl_line
        self.entry = entry if entry is not None else self.ranges[0][0]

    def size(self):
        return sum(e - s for s, e in self.ranges)

    def covering(self, a):
        for s, e in self.ranges:
            if s <= a < e:
                return (s, e)
        return None


def dwarf_functions(path, dwo=False):
    """DW_TAG_subprogram DIEs with code, from llvm-dwarfdump's text output."""
    args = [DWARFDUMP, "--debug-info"] + (["--dwo"] if dwo else []) + [path]
    text = run(args)
    dies, cur, order, unit = {}, None, [], 0
    lines = text.splitlines()
    i = 0
    die_re = re.compile(r"^(0x[0-9a-f]+):\s+(DW_TAG_\w+)")
    attr_re = re.compile(r"^\s+(DW_AT_\w+)\s+\((.*)$")
    while i < len(lines):
        ln = lines[i]
        m = die_re.match(ln)
        if "Compile Unit:" in ln or "Type Unit:" in ln:
            unit += 1
        if m:
            cur = {"off": int(m.group(1), 16), "tag": m.group(2), "attrs": {}, "unit": unit}
            # Offsets of a .dwo's DIEs overlap the skeleton's: key by unit too.
            dies[(unit, cur["off"])] = cur
            order.append(cur)
        else:
            m = attr_re.match(ln)
            if m and cur is not None:
                name, val = m.group(1), m.group(2)
                if name == "DW_AT_ranges":
                    rs = []
                    while not val.rstrip().endswith("))") and i + 1 < len(lines):
                        i += 1
                        val += "\n" + lines[i]
                    for a, b in re.findall(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)", val):
                        rs.append((int(a, 16), int(b, 16)))
                    cur["attrs"][name] = rs
                else:
                    cur["attrs"][name] = val.rstrip()[:-1] if val.rstrip().endswith(")") else val
        i += 1

    def sval(v):
        m = re.search(r'"(.*)"', v or "")
        return m.group(1) if m else None

    def ref(v, u):
        m = re.match(r"(0x[0-9a-f]+)", v or "")
        if not m:
            return None
        o = int(m.group(1), 16)
        return dies.get((u, o)) or next((d for (uu, oo), d in dies.items() if oo == o), None)

    def lookup(d, attr, depth=0):
        if d is None or depth > 4:
            return None
        if attr in d["attrs"]:
            return d["attrs"][attr]
        for via in ("DW_AT_specification", "DW_AT_abstract_origin"):
            if via in d["attrs"]:
                r = lookup(ref(d["attrs"][via], d["unit"]), attr, depth + 1)
                if r is not None:
                    return r
        return None

    out = []
    for d in order:
        if d["tag"] != "DW_TAG_subprogram":
            continue
        a = d["attrs"]
        ranges = []
        if "DW_AT_ranges" in a:
            ranges = a["DW_AT_ranges"]
        elif "DW_AT_low_pc" in a and "DW_AT_high_pc" in a:
            lo = int(re.match(r"(0x[0-9a-f]+)", a["DW_AT_low_pc"]).group(1), 16)
            hv = a["DW_AT_high_pc"]
            hi = int(re.match(r"(0x[0-9a-f]+)", hv).group(1), 16)
            ranges = [(lo, hi)]
        ranges = [(s, e) for s, e in ranges if e > s and s != 0]
        if not ranges:
            continue
        name = sval(lookup(d, "DW_AT_name"))
        linkage = sval(lookup(d, "DW_AT_linkage_name")) or sval(lookup(d, "DW_AT_MIPS_linkage_name"))
        decl_file = sval(lookup(d, "DW_AT_decl_file"))
        dl = lookup(d, "DW_AT_decl_line")
        decl_line = int(dl, 0) if dl and re.match(r"^\d+$|^0x", dl.strip()) else None
        out.append(Func(name, linkage, ranges, "DWARF DW_TAG_subprogram (llvm-dwarfdump)", decl_file, decl_line))
    return out


def pdb_functions(pdb, secs, image_base):
    text = run([PDBUTIL, "dump", "-symbols", pdb])
    out = []
    for m in re.finditer(r"S_[GL]PROC32 \[size = \d+\] `(.*)`\n\s+parent = \d+, end = \d+, "
                         r"addr = (\d+):(\d+), code size = (\d+)", text):
        sec = secs[int(m.group(2)) - 1]
        start = image_base + sec["rva"] + int(m.group(3))
        size = int(m.group(4))
        if size:
            out.append(Func(m.group(1), None, [(start, start + size)], "pdb S_GPROC32/S_LPROC32"))
    return out


def symtab(path, macho):
    """(name, start, size or None) of defined code symbols, sorted by address."""
    text = run([NM, "--defined-only", "-n", "-S", path] if not macho else [NM, "--defined-only", "-n", path])
    syms = []
    for ln in text.splitlines():
        f = ln.split()
        if macho:
            if len(f) == 3 and f[1] in "tT":
                syms.append([f[2], int(f[0], 16), None])
        elif len(f) == 4 and f[2] in "tTwW":
            # Zero-size symbols (crtstuff's register_tm_clones, _fini) are functions too:
            # their size is unknown, not zero.
            syms.append([f[3], int(f[0], 16), int(f[1], 16) or None])
        elif len(f) == 3 and f[1] in "tT":
            syms.append([f[2], int(f[0], 16), None])
    syms.sort(key=lambda s: s[1])
    if macho:  # no sizes in Mach-O: the distance to the next symbol
        for i, s in enumerate(syms):
            s[2] = syms[i + 1][1] - s[1] if i + 1 < len(syms) else None
    return syms


# ------------------------------------------------------------------ tools per address

def symbolize(obj, addrs, extra):
    res = {}
    stdin = "\n".join("0x%x" % a for a in addrs) + "\n"
    for mode, flags in (("llvm", ["--functions=linkage", "--demangle"]),
                        ("mangled", ["--functions=linkage", "--no-demangle"]),
                        ("short", ["--functions=short", "--demangle"])):
        out = run([SYMBOLIZER, "--inlines", "--output-style=JSON", "--obj=" + obj] + flags + extra, stdin)
        for ln in out.splitlines():
            for item in json.loads(ln) if ln.startswith("[") else [json.loads(ln)]:
                res.setdefault(int(item["Address"], 16), {})[mode] = item.get("Symbol", [])
    return res


def cxxfilt(names):
    names = [n for n in names if n]
    if not names:
        return {}
    out = run(["c++filt"], "\n".join(names) + "\n").splitlines()
    return dict(zip(names, out))


def gnu_addr2line(obj, addrs):
    out = run(["addr2line", "-a", "-f", "-i", "-C", "-e", obj] + ["0x%x" % a for a in addrs])
    res, cur = {}, None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            cur = int(lines[i], 16)
            res[cur] = []
            i += 1
            continue
        fn, loc = lines[i], lines[i + 1]
        f, _, ln = loc.rpartition(":")
        ln = ln.split(" ")[0]
        res[cur].append({"function": None if fn == "??" else fn, "file": None if f in ("??", "") else f,
                         "line": int(ln) if ln.isdigit() and int(ln) else None})
        i += 2
    return res


class Sym:
    """A dump_syms .sym: FUNC, line, INLINE and PUBLIC records."""

    def __init__(self, path):
        self.files, self.origins, self.funcs, self.publics = {}, {}, [], []
        self.module = self.code_id = None
        cur = None
        for ln in open(path):
            f = ln.rstrip("\n").split(" ")
            if f[0] == "MODULE":
                self.module = f
            elif f[0] == "INFO" and f[1] == "CODE_ID":
                self.code_id = f[2]
            elif f[0] == "FILE":
                self.files[int(f[1])] = " ".join(f[2:])
            elif f[0] == "INLINE_ORIGIN":
                self.origins[int(f[1])] = " ".join(f[2:])
            elif f[0] == "FUNC":
                if f[1] == "m":
                    f = f[1:]
                cur = {"start": int(f[1], 16), "size": int(f[2], 16), "name": " ".join(f[4:]),
                       "lines": [], "inlines": []}
                self.funcs.append(cur)
            elif f[0] == "PUBLIC":
                if f[1] == "m":
                    f = f[1:]
                self.publics.append((int(f[1], 16), " ".join(f[3:])))
                cur = None
            elif f[0] == "INLINE" and cur is not None:
                depth, cline, cfile, origin = int(f[1]), int(f[2]), int(f[3]), int(f[4])
                rs = [(int(f[i], 16), int(f[i + 1], 16)) for i in range(5, len(f) - 1, 2)]
                cur["inlines"].append((depth, cline, cfile, origin, rs))
            elif f[0] in ("STACK", "INFO"):
                cur = None if f[0] == "STACK" else cur
            elif cur is not None and re.match(r"^[0-9a-f]+$", f[0]) and len(f) == 4:
                cur["lines"].append((int(f[0], 16), int(f[1], 16), int(f[2]), int(f[3])))

    def at(self, off):
        for fn in self.funcs:
            if fn["start"] <= off < fn["start"] + fn["size"]:
                line = None
                for a, s, l, fi in fn["lines"]:
                    if a <= off < a + s:
                        line = {"file": self.files.get(fi), "line": l}
                inl = [(d, cl, cf, o) for d, cl, cf, o, rs in fn["inlines"]
                       if any(a <= off < a + s for a, s in rs)]
                inl.sort()
                return {"function": fn["name"], "function_start": h(fn["start"]),
                        "function_size": h(fn["size"]), "line": line,
                        "inlines_outer_to_inner": [
                            {"depth": d, "function": self.origins.get(o), "call_file": self.files.get(cf),
                             "call_line": cl} for d, cl, cf, o in inl]}
        return None


# ------------------------------------------------------------------ one case

def frame_of(llvm, mangled, short, demangled, is_pe, outer_start):
    fm = mangled.get("FunctionName") or None
    fl = llvm.get("FunctionName") or None
    fs = short.get("FunctionName") or None
    fm = None if fm == "??" else fm
    fl = None if fl == "??" else fl
    fs = None if fs == "??" else fs
    name = fl if is_pe else (demangled.get(fm, fm) if fm else fl)
    line = llvm.get("Line") or None
    return {"function": name, "function_llvm": fl, "function_mangled": fm, "function_short": fs,
            "file": (llvm.get("FileName") or None) if line else (llvm.get("FileName") or None),
            "line": line, "column": llvm.get("Column") or None, "function_start": outer_start,
            "function_decl_file": llvm.get("StartFileName") or None,
            "function_decl_line": llvm.get("StartLine") or None}


def gen_case(root, case, image_rel, debug_rel, label, rng):
    image = os.path.join(root, image_rel)
    debug = os.path.join(root, debug_rel) if debug_rel else image
    fmt = "pe" if image_rel.startswith("pe/") else "macho" if image_rel.startswith("macho/") else "elf"
    notes_global = []
    extra = []
    secs = None
    if fmt == "elf":
        module, base, end, data = elf_module(image)
        dwo = case.startswith("elf/split-dwarf/")
        funcs = dwarf_functions(debug, dwo=dwo)
        syms = symtab(debug, False)
    elif fmt == "macho":
        module, base, end, data = macho_module(image)
        dsym = "%s.dSYM/Contents/Resources/DWARF/%s" % (image, os.path.basename(image))
        debug = dsym
        funcs = dwarf_functions(dsym)
        syms = symtab(image, True)
    else:
        module, base, end, data, secs = pe_module(image)
        funcs = pdb_functions(debug, secs, base)
        syms = [[f.name, f.ranges[0][0], f.size()] for f in funcs]
    # The entry of a function in parts is where its symbol-table name points.
    by_name = {}
    for n, s, z in syms:
        by_name.setdefault(n, s)
    for f in funcs:
        for key in (f.linkage, f.name):
            s = by_name.get(key) if key else None
            if s is not None and f.covering(s):
                f.entry = s
                break
    # Symbol-table-only code: sized symbols that no DWARF/PDB function covers.
    symonly = []
    if fmt == "elf":
        for n, s, z in syms:
            if z and not any(f.covering(s) for f in funcs):
                symonly.append(Func(n, n, [(s, s + z)], "symbol table only (no DWARF subprogram covers this address)"))
    allf = funcs + symonly

    def covering(a):
        return [f for f in allf if f.covering(a)]

    # ---- choose addresses
    cands = {}

    def add(a, cat):
        if base <= a < end + 0x100 and a not in cands:
            cands[a] = cat
    focus = [f for f in funcs if fmt == "pe" or (f.decl_file or "").startswith("/corpus/src")]
    others = [f for f in allf if f not in focus]
    rng.shuffle(others)
    for f in focus + others[:6]:
        for s, e in f.ranges:
            add(s, "function_start" if s == f.entry else "function_part_start")
            add(s + 1, "function_body")
            add((s + e) // 2, "function_middle")
            add(e - 1, "function_last_byte")
            for k in range(1, 4):
                add(s + (e - s) * k // 4, "function_body")
            if not covering(e):
                add(e, "just_past_function_end")
    # gaps between functions
    spans = sorted(r for f in allf for r in f.ranges)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        if s2 > e1 and not covering(e1):
            add(e1, "gap_after_function")
            if s2 - e1 > 2:
                add((e1 + s2) // 2, "gap_middle")
    for a in [base, base + 0x10] + data + [end + 0x40]:
        add(a, "outside_any_function")
    # inline-rich: every byte of the focus functions, distinct inline chains
    every = sorted({a for f in focus for s, e in f.ranges for a in range(s, e)})
    inl = symbolize(image, every, extra) if every else {}
    seen = set()
    inline_addrs = []
    for a in every:
        fr = inl[a].get("llvm", [])
        if len(fr) > 1:
            key = tuple((x.get("FunctionName"), x.get("FileName"), x.get("Line")) for x in fr)
            if key not in seen:
                seen.add(key)
                inline_addrs.append(a)
    # Quotas: all outside/gap/start addresses, then inline-rich ones, then the rest.
    keep = []
    for cats, cap in ((("function_start", "function_part_start"), 14), (("outside_any_function",), 5),
                      (("gap_after_function",), 3)):
        these = [a for a, c in cands.items() if c in cats]
        rng.shuffle(these)
        keep += these[:cap]
    rest = [a for a, c in cands.items() if a not in keep]
    rng.shuffle(inline_addrs)
    rng.shuffle(rest)
    budget = MAX_ADDRESSES - len(keep)
    take_inl = inline_addrs[:max(budget * 2 // 3, budget - len(rest))]
    take_rest = rest[:max(0, budget - len(take_inl))]
    chosen = sorted(set(keep) | set(take_inl) | set(take_rest))

    # ---- run the tools on the chosen addresses
    res = symbolize(image, chosen, extra)
    mangled_names = {fr.get("FunctionName") for a in chosen for fr in res[a].get("mangled", [])}
    mangled_names |= {f.linkage for f in allf if f.linkage}
    demangled = cxxfilt(sorted(n for n in mangled_names if n and n != "??"))
    gnu = gnu_addr2line(debug if fmt == "elf" else image, chosen) if fmt == "elf" else None
    sym_rel, sym = find_sym(root, module, fmt, image_rel)
    if sym:
        if sym.module[3] != module["breakpad_id"]:
            raise SystemExit("%s: our debug ID %s, dump_syms %s" % (case, module["breakpad_id"], sym.module[3]))
        if sym.code_id and sym.code_id.lower() != module["code_id"].lower():
            raise SystemExit("%s: our code ID %s, dump_syms %s" % (case, module["code_id"], sym.code_id))

    entries = []
    stats = {"total": 0, "with_inline_frames": 0, "gnu_mismatch": 0, "sym_mismatch": 0}
    for a in chosen:
        off = a - base
        cov = covering(a)
        cat = cands.get(a, "inlined_code")
        e = {"module_offset": h(off), "tool_address": h(a), "category": cat}
        if fmt == "pe":
            e["tool_address_note"] = "VA = ImageBase + RVA, as passed to llvm-symbolizer"
        notes = []
        r = res[a]
        if not cov:
            exp = {"found": False}
            prev = [s for s in syms if s[1] <= a]
            if prev:
                exp["nearest_preceding_symbol"] = {"name": prev[-1][0], "start": h(prev[-1][1] - base)}
            fr = r.get("llvm", [])
            if fr and fr[0].get("FunctionName") not in (None, "", "??"):
                notes.append("llvm-symbolizer still names %r (nearest preceding symbol-table entry); "
                             "expected: no function" % fr[0]["FunctionName"])
        else:
            f = cov[0]
            rs, re_ = f.covering(a)
            frames = []
            n = len(r.get("llvm", []))
            for k in range(n):
                outer = k == n - 1
                frames.append(frame_of(r["llvm"][k], r["mangled"][k] if k < len(r.get("mangled", [])) else {},
                                       r["short"][k] if k < len(r.get("short", [])) else {}, demangled,
                                       fmt == "pe", h(f.entry - base) if outer else None))
            if fmt == "pe" or f in symonly:
                outer_name = frames[-1]["function"] if frames else f.name
            else:
                outer_name = demangled.get(f.linkage, f.linkage) if f.linkage else f.name
            ofr = frames[-1] if frames else {}
            exp = {"found": True}
            if ofr.get("function") and ofr["function"] != outer_name and fmt != "pe":
                exp["function_name_note"] = ("llvm-symbolizer outer frame says %r, the DWARF subprogram "
                                             "says %r; expect uses the DWARF name" % (ofr["function"], outer_name))
            exp.update({
                "function": outer_name, "function_llvm": ofr.get("function_llvm"),
                "function_mangled": ofr.get("function_mangled") or f.linkage or f.name,
                "function_short": ofr.get("function_short"),
                "function_start": h(f.entry - base), "range_start": h(rs - base), "range_size": h(re_ - rs),
                "function_size": h(f.size()), "function_ranges": [[h(s - base), h(x - base)] for s, x in f.ranges],
                "range_source": f.source,
            })
            if fmt == "pe":
                exp["function_name_in_pdb"] = f.name
            st = [s for s in syms if s[1] <= a and (s[2] is None or a < s[1] + s[2])]
            if st:
                exp["symtab"] = {"name": st[-1][0], "start": h(st[-1][1] - base),
                                 "size": h(st[-1][2]), "size_is_next_symbol_heuristic": fmt == "macho"}
            inner = frames[0] if frames else {}
            exp["file"] = inner.get("file") if inner.get("line") else (inner.get("file") if f not in symonly else None)
            exp["line"] = inner.get("line")
            if f in symonly:
                for x in frames:
                    x["file"] = x["file"] if x["line"] else None
                exp["file"] = None
            exp["frames_innermost_first"] = frames
            exp["inline_depth"] = max(0, len(frames) - 1)
            if len(cov) > 1:
                alts = []
                for g in cov[1:]:
                    alts += [x for x in (demangled.get(g.linkage) if g.linkage else None, g.linkage, g.name) if x]
                exp["alternative_names_same_code"] = alts
                exp["alternative_names_note"] = ("several DWARF subprograms cover this address (identical "
                                                 "code folding); any of these names is acceptable")
            if len(frames) > 1:
                stats["with_inline_frames"] += 1
        e["expect"] = exp
        if gnu is not None:
            g = gnu.get(a, [])
            e["gnu_addr2line_agreement"] = agreement(exp, g)
            if e["gnu_addr2line_agreement"] != "match":
                e["gnu_addr2line"] = g
                stats["gnu_mismatch"] += 1
        if sym:
            b = sym.at(off)
            e["breakpad_sym"] = b
            e["breakpad_sym_agreement"] = sym_agreement(exp, b)
            if e["breakpad_sym_agreement"] != "match":
                stats["sym_mismatch"] += 1
        if notes:
            e["notes"] = notes
        entries.append(e)
        stats["total"] += 1

    versions = tool_versions()
    header = {
        "schema": "symbolication-ground-truth/1",
        "label": label,
        "image_file": os.path.relpath(image, os.path.dirname(truth_path(root, case))),
        "debug_file": os.path.relpath(debug, os.path.dirname(truth_path(root, case))),
        "module": module,
        "module_offset_definition": (
            "module_offset = tool_address - image_base. ELF: image_base = p_vaddr of the first PT_LOAD; "
            "Mach-O: vmaddr of __TEXT; PE: ImageBase (so module_offset == RVA). This is what the Firefox "
            "profiler / samply send as module offsets."),
        "not_found_semantics": (
            "expect.found=false is strict truth: the address is not inside any DWARF subprogram / PDB "
            "procedure / sized symbol. A server falling back to the nearest preceding symbol (like Breakpad "
            "PUBLIC records) may report expect.nearest_preceding_symbol, but must not report a file/line."),
        "frame_order": (
            "frames_innermost_first[0] is the innermost inlined callee containing the address; the last frame "
            "is the real (outer) function whose code this is. file/line at top level = innermost frame's "
            "file/line."),
        "tools": dict(versions, **({"dump_syms": sym_version(root) + " --inlines",
                                    "breakpad_sym": os.path.relpath(os.path.join(root, sym_rel), os.path.dirname(
            truth_path(root, case)))} if sym else {})),
        "generated_by": "scripts/gen-truth.py (profiler-symbol-server repo)",
        "stats": stats,
    }
    if sym is None and fmt == "elf":
        header["tools"]["breakpad_sym_note"] = "no .sym: dump_syms does not read split DWARF (.dwo/.dwp)"
    out = truth_path(root, case)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    head = json.dumps(header, indent=1)
    with open(out, "w") as fh:
        fh.write(head[:-2].rstrip() + ",\n \"addresses\": [\n")
        fh.write(",\n".join(json.dumps(x, separators=(",", ":")) for x in entries))
        fh.write("\n ]\n}\n")
    return header, entries


def agreement(exp, g):
    if not exp["found"]:
        if all(x["function"] is None and x["line"] is None for x in g):
            return "match"
        return "mismatch: gnu returned %s" % [(x["function"], x["file"], x["line"]) for x in g]
    want = exp["frames_innermost_first"]
    if len(g) != len(want):
        return "mismatch: inline depth %d vs %d" % (len(g) - 1, len(want) - 1)
    if [(x["file"], x["line"]) for x in g] != [(w["file"], w["line"]) for w in want]:
        return "mismatch: file/line %s" % [(x["file"], x["line"]) for x in g]
    if [x["function"] for x in g] != [w["function"] for w in want]:
        return "file/line match, names differ: gnu=%s" % [x["function"] for x in g]
    return "match"


def sym_agreement(exp, b):
    if b is None:
        return "match" if not exp["found"] else "mismatch: no FUNC in .sym"
    if not exp["found"]:
        return "mismatch: .sym has FUNC %s, truth says no function" % b["function"]
    why = []
    if b["function_start"] not in (exp["function_start"], exp["range_start"]):
        why.append("function_start %s vs %s" % (b["function_start"], exp["function_start"]))
    if len(b["inlines_outer_to_inner"]) != exp["inline_depth"]:
        why.append("inline depth %d vs %d" % (len(b["inlines_outer_to_inner"]), exp["inline_depth"]))
    bl = b["line"]["line"] if b["line"] and b["line"]["line"] else None
    if bl != exp["line"]:
        why.append("line %s vs %s" % (bl, exp["line"]))
    if b["function_start"] != exp["function_start"] and not why:
        why.append("function_start %s is the part's start (%s)" % (b["function_start"], exp["function_start"]))
    return "match" if not why else "mismatch: " + "; ".join(why)


def truth_path(root, case):
    return os.path.join(root, "truth", case + ".truth.json")


def find_sym(root, module, fmt, image_rel):
    name = module["debug_name"] if fmt == "pe" else os.path.basename(image_rel)
    stem = name[:-4] if name.endswith(".pdb") else name
    rel = "breakpad/%s/%s/%s.sym" % (name, module["breakpad_id"], stem)
    p = os.path.join(root, rel)
    return (rel, Sym(p)) if os.path.isfile(p) else (None, None)


_versions = None


def sym_version(root):
    with open(os.path.join(root, "breakpad", "GENERATED-BY.txt")) as fh:
        return fh.readline().strip()


def tool_versions():
    global _versions
    if _versions is None:
        first = lambda args: run(args).strip().splitlines()[0].strip()
        _versions = {
            "llvm_symbolizer": first([SYMBOLIZER, "--version"]).replace("llvm-symbolizer\n", ""),
            "llvm_symbolizer_flags": "--inlines --output-style=JSON and --functions=linkage --demangle | "
                                     "--no-demangle | --functions=short",
            "function_ranges": "llvm-dwarfdump --debug-info [--dwo] / llvm-pdbutil dump -symbols / "
                               "llvm-nm --defined-only -n -S (LLVM 19)",
            "cxxfilt": first(["c++filt", "--version"]),
            "gnu_addr2line": " ".join(run(["addr2line", "--version"]).split()[:7]) + " (addr2line -a -f -i -C -e FILE)",
        }
        v = run([SYMBOLIZER, "--version"]).split("\n")
        _versions["llvm_symbolizer"] = " ".join(x.strip() for x in v[:2] if x.strip())
    return _versions


# ------------------------------------------------------------------ profiles

def gen_profiles(root):
    """Synthetic Gecko profiles (meta.version 36) whose libs are corpus binaries, with the
    expected symbolication of every native frame taken from the truth files."""
    specs = {
        "linux": [("elf/shapes-gcc-O2-dwarf4", 0x55d4c0a00000), ("elf/shapes-clang19-O2-dwarf5-nopie", None),
                  ("elf/libmathlib.so", 0x7f3a11000000), ("elf/tmpl-clang19-O2-dwarf5", 0x7f3a13000000)],
        "macos": [("macho/x86_64/machotool", 0x10a3c0000), ("macho/x86_64/libmathlib.dylib", 0x10e000000)],
        "windows": [("pe/petool.exe", 0x7ff6a1230000), ("pe/mathlib.dll", 0x7ffa4c560000),
                    ("pe/geomcpp.dll", 0x7ffa4d560000)],
    }
    os.makedirs(os.path.join(root, "profiles"), exist_ok=True)
    for osname, libs_spec in specs.items():
        rng = random.Random("profile-" + osname)
        libs, frames_by_lib = [], []
        for case, start in libs_spec:
            t = load_truth(truth_path(root, case))
            hd, addrs = t
            m = hd["module"]
            base = int(m["image_base"], 16)
            if start is None:
                start = base  # non-PIE: loaded at its link address
            size = (int(m["image_size"], 16) + 0xfff) & ~0xfff
            img = os.path.normpath(os.path.join(os.path.dirname(truth_path(root, case)), hd["image_file"]))
            rel = os.path.relpath(img, root)
            if m["format"] == "pe":
                dbg = os.path.basename(hd["debug_file"])
                path, dpath, dname = "C:\\corpus\\" + os.path.basename(rel), "C:\\corpus\\" + dbg, m["debug_name"]
            elif m["format"] == "macho":
                path = "/corpus/" + rel
                dpath = "/corpus/%s.dSYM/Contents/Resources/DWARF/%s" % (rel, os.path.basename(rel))
                dname = os.path.basename(rel)
            else:
                path = dpath = "/corpus/" + rel
                dname = os.path.basename(rel)
            libs.append({"start": start, "end": start + size, "offset": 0, "name": os.path.basename(rel),
                         "path": path, "debugName": dname, "debugPath": dpath, "breakpadId": m["breakpad_id"],
                         "codeId": m["code_id"], "arch": m["arch"]})
            good = [a for a in addrs if a["expect"]["found"] and a["category"] != "function_part_start"
                    and a["expect"].get("file")]
            rng.shuffle(good)
            frames_by_lib.append((case, start, good[:12]))
        expected = {"profile": "gecko-profile-%s.json" % osname,
                    "note": "frame location strings are absolute addresses; module_offset = address - lib.start "
                            "(lib.offset is 0 for every lib here). They are code addresses taken from the truth "
                            "files, not real return addresses, so do not subtract 1 before looking them up.",
                    "frames": {}}
        strings = ["(root)"]
        for (case, start, good), lib in zip(frames_by_lib, libs):
            for a in good:
                e = a["expect"]
                addr = "0x%x" % (start + int(a["module_offset"], 16))
                strings.append(addr)
                expected["frames"][addr] = {
                    "lib": lib["name"], "debugName": lib["debugName"], "breakpadId": lib["breakpadId"],
                    "module_offset": a["module_offset"], "category": a["category"], "function": e["function"],
                    "function_start": e["function_start"], "function_size": e["function_size"],
                    "file": e["file"], "line": e["line"],
                    "frames_innermost_first": [{"function": f["function"], "file": f["file"], "line": f["line"]}
                                               for f in e["frames_innermost_first"]],
                    "truth_file": "truth/%s.truth.json" % case}
        if osname == "linux":  # JIT code outside every lib keeps its hex string
            for jit in (0x3a2f00001234, 0x3a2f00002468):
                strings.append("0x%x" % jit)
                expected["frames"]["0x%x" % jit] = {"lib": None, "note": "JIT code outside every lib"}
        # Stacks: (root) -> a few native frames each.
        stack_data, frame_data, samples = [[None, 0]], [[0, False, 0, None, None, None, 0, 0]], []
        for i in range(1, len(strings)):
            frame_data.append([i, False, 0, None, None, None, None, None])
        for i in range(1, len(strings)):
            prefix = 0 if i % 3 == 1 else len(stack_data) - 1
            stack_data.append([prefix, i])
            samples.append([len(stack_data) - 1, round(i * 1.01, 3), 0.0, 1000 * i])
        profile = {
            "meta": {"version": 36, "startTime": 1764670000000.0, "interval": 1, "stackwalk": 1,
                     "processType": 0, "product": "Firefox",
                     "oscpu": {"linux": "Linux x86_64", "macos": "Intel Mac OS X 10.15",
                               "windows": "Windows NT 10.0; Win64; x64"}[osname],
                     "categories": [{"name": "Other", "color": "grey", "subcategories": ["Other"]}],
                     "markerSchema": []},
            "libs": libs, "pages": [], "counters": [], "pausedRanges": [],
            "threads": [{
                "name": "GeckoMain", "registerTime": 0, "processType": "default", "unregisterTime": None,
                "tid": 4242, "pid": 4242,
                "samples": {"schema": {"stack": 0, "time": 1, "eventDelay": 2, "threadCPUDelta": 3},
                            "data": samples},
                "markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4,
                                       "data": 5}, "data": []},
                "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": stack_data},
                "frameTable": {"schema": {"location": 0, "relevantForJS": 1, "innerWindowID": 2,
                                          "implementation": 3, "line": 4, "column": 5, "category": 6,
                                          "subcategory": 7}, "data": frame_data},
                "stringTable": strings}],
            "processes": [],
        }
        with open(os.path.join(root, "profiles", "gecko-profile-%s.json" % osname), "w") as fh:
            json.dump(profile, fh, separators=(",", ":"))
            fh.write("\n")
        with open(os.path.join(root, "profiles", "gecko-profile-%s.expected.json" % osname), "w") as fh:
            json.dump(expected, fh, indent=1)
            fh.write("\n")


def gen_hint_profiles(root):
    """Two profiles of made-up modules (nothing to symbolicate locally) for the tests of
    serving, lib hints and subprocesses: a Gecko profile with a subprocess, and a processed
    (front-end) profile. Names, IDs, paths and addresses are the ones tests/profiles.rs and
    tests/symbolicate.rs use."""
    def thread(name, tid, strings):
        return {
            "name": name, "registerTime": 0, "processType": "default", "unregisterTime": None,
            "tid": tid, "pid": tid,
            "samples": {"schema": {"stack": 0, "time": 1, "responsiveness": 2},
                        "data": [[1, 0.0, 0.0], [2, 1.0, 0.0], [2, 2.0, 0.0]]},
            "markers": {"schema": {"name": 0, "time": 1, "data": 2}, "data": []},
            "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[None, 0], [0, 1], [1, 2]]},
            "frameTable": {"schema": {"location": 0, "implementation": 1, "optimizations": 2, "line": 3,
                                      "category": 4}, "data": [[0], [1], [2]]},
            "stringTable": strings}

    def meta(product, ptype):
        return {"startTime": 1700000000000.5, "shutdownTime": None, "abi": "x86_64-gcc3", "version": 13,
                "product": product, "platform": "Macintosh", "interval": 1, "toolkit": "cocoa",
                "processType": ptype, "stackwalk": 1, "oscpu": "Intel Mac OS X 10.15"}
    root_lib = {"arch": "x86_64", "name": "firefox", "path": "/Applications/FirefoxNightly.app/Contents/MacOS/firefox",
                "debugName": "firefox", "breakpadId": "F1D957D30B413D55A539BBA06F90DD8F0", "debugPath": "",
                "start": 0x100000000, "end": 0x100002710}
    sub_lib = {"arch": "x86_64", "name": "firefox-webcontent",
               "path": "/Applications/FirefoxNightly.app/Contents/MacOS/firefox-webcontent.app/Contents/MacOS/"
                       "firefox-webcontent",
               "debugName": "firefox-webcontent", "breakpadId": "9F950E2CE3CD3E1ABD06D80788B606E60",
               "debugPath": "", "start": 0x100000000, "end": 0x100002710}
    gecko = {
        "meta": meta("Firefox", 0), "libs": [root_lib], "counters": [], "pages": [], "pausedRanges": [],
        "threads": [thread("GeckoMain", 7000, ["(root)", "0x100000f84", "0x100001a45"])],
        "processes": [{"meta": meta("Firefox", 2), "libs": [sub_lib], "pages": [], "pausedRanges": [],
                       "processes": [],
                       "threads": [thread("GeckoMain", 7001, ["(root)", "0x100000f84", "0x100001a45"])]}],
    }
    with open(os.path.join(root, "profiles", "gecko-with-subprocess.json"), "w") as fh:
        json.dump(gecko, fh, indent=2)
        fh.write("\n")
    libs = [{"name": "dyld", "path": "/usr/lib/dyld", "debugName": "dyld", "debugPath": "/usr/lib/dyld",
             "breakpadId": "F635824E318B3F0C842CC369737F2B680", "codeId": "F635824E318B3F0C842CC369737F2B68",
             "arch": "arm64e"},
            {"name": "a.out", "path": "/usr/helloworld/a.out", "debugName": "a.out",
             "debugPath": "/usr/helloworld/a.out", "breakpadId": "F61DA4D57CBB38CA8BDF059C645834520",
             "codeId": "F61DA4D57CBB38CA8BDF059C64583452", "arch": "arm64"}]
    processed = {
        "meta": {"categories": [{"name": "Other", "color": "grey", "subcategories": ["Other"]}],
                 "interval": 1.0, "preprocessedProfileVersion": 49, "processType": 0, "product": "a.out",
                 "oscpu": "macOS 14.6.1", "startTime": 1700000000000.5, "symbolicated": False,
                 "version": 24, "markerSchema": []},
        "libs": libs, "pages": [], "counters": [],
        "threads": [{
            "processType": "default", "processStartupTime": 0, "processShutdownTime": None,
            "registerTime": 0, "unregisterTime": None, "pausedRanges": [], "name": "GeckoMain",
            "isMainThread": True, "pid": "4242", "tid": 4242,
            "samples": {"weightType": "samples", "weight": None, "stack": [2, 2], "time": [0.0, 1.0], "length": 2},
            "markers": {"data": [], "name": [], "startTime": [], "endTime": [], "phase": [], "category": [],
                        "length": 0},
            "stackTable": {"frame": [0, 1, 2], "prefix": [None, 0, 1], "category": [0, 0, 0],
                           "subcategory": [0, 0, 0], "length": 3},
            "frameTable": {"address": [0x3f6c, 0x1000, 0x1f08], "inlineDepth": [0, 0, 0], "category": [0, 0, 0],
                           "subcategory": [0, 0, 0], "func": [0, 1, 2], "nativeSymbol": [None, None, None],
                           "innerWindowID": [0, 0, 0], "implementation": [None, None, None],
                           "line": [None, None, None], "column": [None, None, None], "length": 3},
            "funcTable": {"isJS": [False] * 3, "relevantForJS": [False] * 3, "name": [0, 1, 2],
                          "resource": [0, 1, 1], "fileName": [None] * 3, "lineNumber": [None] * 3,
                          "columnNumber": [None] * 3, "length": 3},
            "resourceTable": {"lib": [0, 1], "name": [3, 4], "host": [None, None], "type": [1, 1], "length": 2},
            "nativeSymbols": {"libIndex": [], "address": [], "name": [], "functionSize": [], "length": 0},
            "stringArray": ["0x3f6c", "0x1000", "0x1f08", "dyld", "a.out"]}],
    }
    with open(os.path.join(root, "profiles", "processed-unsymbolicated.json"), "w") as fh:
        json.dump(processed, fh, indent=2)
        fh.write("\n")


def load_truth(path):
    text = open(path).read()
    i = text.index('"addresses": [')
    header = json.loads(text[:i].rstrip().rstrip(",") + "}")
    addrs = [json.loads(l.rstrip(",")) for l in text[i:].splitlines() if l.startswith("{")]
    return header, addrs


def update_readme(root):
    """The case table of README.md (between its `<!-- cases -->` markers), from the truths."""
    rows = ["| case | format | debug ID (breakpadId) | code ID | image base | addresses (with inline frames) |",
            "|---|---|---|---|---|---|"]
    for case, _, _, _ in CASES:
        hd, addrs = load_truth(truth_path(root, case))
        m = hd["module"]
        rows.append("| `%s` | %s %s | `%s` | `%s` | %s | %d (%d) |" % (
            case, m["format"], m["arch"], m["breakpad_id"], m["code_id"], m["image_base"], len(addrs),
            hd["stats"]["with_inline_frames"]))
    path = os.path.join(root, "README.md")
    text = open(path).read()
    a, b = text.index("<!-- cases -->"), text.index("<!-- /cases -->")
    with open(path, "w") as fh:
        fh.write(text[:a] + "<!-- cases -->\n" + "\n".join(rows) + "\n" + text[b:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--profiles", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.corpus)
    if a.all or a.case:
        for case, image, debug, label in CASES:
            if a.all or case in a.case:
                hd, entries = gen_case(root, case, image, debug, label, random.Random(case))
                print("%-48s %3d addresses (%d with inline frames), gnu mismatch %d, .sym mismatch %d" % (
                    case, len(entries), hd["stats"]["with_inline_frames"], hd["stats"]["gnu_mismatch"],
                    hd["stats"]["sym_mismatch"]), file=sys.stderr)
    if a.profiles:
        gen_profiles(root)
        gen_hint_profiles(root)
        update_readme(root)


if __name__ == "__main__":
    main()
