#!/usr/bin/env python3
"""Mutation search: damage a library's loader tables, compare with the real loader.

Builds a small library pair from C source (a target that imports from libc
and from a dependency, exports functions it calls itself, has constructors,
data relocations and version references), then writes one mutant per edit:
every dynamic entry set to a list of hostile values, and the fields of the
GNU hash table, the symbol table, the constructor array, the relocation
entries and DT_VERSYM edited in place, in the target and in its dependency.
Each mutant is dlopen()ed for real (tests/tools/dlopen_driver in a child
with a time limit: a dlerror text, a death by signal, a hang) and predicted
by `abiscope why --json --process dlopen_driver`.

    mutate_elf.py [--only SUBSTRING] [--all]

Prints one line per disagreement (all mutants with --all) and a summary.
FALSE-LOAD lines are the worst defect: the real process fails or dies and
abiscope says the object loads.  Not part of make test (it is a search);
what it finds becomes fixed cases in differential.py's hostile_table_cases.
"""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

ABISCOPE = os.environ.get("ABISCOPE", "./abiscope")
BUILD = os.environ.get("BUILD", "build")
DRIVER = os.path.abspath(os.path.join(BUILD, "tools", "dlopen_driver"))
WORK = os.path.abspath(os.path.join(BUILD, "mutate"))
CC = os.environ.get("FIXTURE_CC", "cc")

DEP_SRC = """
int dep_a(int x){return x+1;} int dep_b(int x){return x+2;} int dep_c(int x){return x+3;}
int dep_data = 7;
"""
TARGET_SRC = """
#include <stdio.h>
#include <string.h>
int dep_a(int); int dep_b(int); extern int dep_data;
int t_one(int x){return x*2;} int t_two(int x){return t_one(x)+1;}
int t_three(int x){return t_two(x)+dep_a(x);} int t_four(int x){return t_three(x)+dep_b(x);}
int (*t_ptr)(int) = t_four;
int *t_dptr = &dep_data;
static int ran;
__attribute__((constructor)) static void t_init(void){ ran = t_one(1) + (int)strlen("x"); }
int t_main(void){ return printf("%d\\n", ran) + t_ptr(1) + *t_dptr; }
"""


def sh(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"{cmd}: {p.stderr}")


class Elf:
    """Offsets of the tables of a little-endian ELF64 object."""

    def __init__(self, data):
        self.data = data
        phoff, = struct.unpack_from("<Q", data, 32)
        shoff, = struct.unpack_from("<Q", data, 40)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 54)
        self.loads, self.dyn = [], None
        for i in range(phnum):
            typ, _fl, off, vaddr, _pa, filesz, _m, _al = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
            if typ == 1:
                self.loads.append((vaddr, off, filesz))
            elif typ == 2:
                self.dyn = (off, filesz)
        self.sec = {}
        secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        stroff = secs[shstrndx][4]
        for name, typ, _fl, addr, off, size, link, info, _al, entsize in secs:
            n = data[stroff + name:data.index(b"\0", stroff + name)].decode()
            self.sec[n] = (off, size, addr, entsize)
        self.ents = []
        for k in range(self.dyn[1] // 16):
            tag, val = struct.unpack_from("<qQ", data, self.dyn[0] + 16 * k)
            self.ents.append((self.dyn[0] + 16 * k, tag, val))
            if tag == 0:
                break

    def v2o(self, vaddr):
        for va, off, sz in self.loads:
            if va <= vaddr < va + sz:
                return off + vaddr - va
        return None

    def dyn_val(self, tag):
        return next((v for _o, t, v in self.ents if t == tag), None)


TAGS = {5: "DT_STRTAB", 6: "DT_SYMTAB", 10: "DT_STRSZ", 11: "DT_SYMENT", 7: "DT_RELA", 8: "DT_RELASZ",
        9: "DT_RELAENT", 23: "DT_JMPREL", 2: "DT_PLTRELSZ", 20: "DT_PLTREL", 25: "DT_INIT_ARRAY",
        27: "DT_INIT_ARRAYSZ", 26: "DT_FINI_ARRAY", 28: "DT_FINI_ARRAYSZ", 12: "DT_INIT", 13: "DT_FINI",
        0x6ffffef5: "DT_GNU_HASH", 4: "DT_HASH", 0x6ffffff0: "DT_VERSYM", 0x6ffffffe: "DT_VERNEED",
        0x6fffffff: "DT_VERNEEDNUM", 0x6ffffff9: "DT_RELACOUNT", 1: "DT_NEEDED", 14: "DT_SONAME",
        3: "DT_PLTGOT", 30: "DT_FLAGS", 0x6ffffffb: "DT_FLAGS_1", 29: "DT_RUNPATH",
        0x6ffffffc: "DT_VERDEF", 0x6ffffffd: "DT_VERDEFNUM", 24: "DT_BIND_NOW", 16: "DT_SYMBOLIC",
        22: "DT_TEXTREL", 0x6ffffdf5: "DT_GNU_PRELINKED"}


def mutants(e, rng):
    """(name, [(offset, fmt, value)...]) edits of one object."""
    size = len(e.data)
    out = []
    for at, tag, val in e.ents:
        if tag == 0:
            continue
        name = TAGS.get(tag, hex(tag))
        vals = {0, 1, 8, 0x40, val + 8, val - 8 if val >= 8 else 3, val + 0x1000, size, size - 8,
                0x7fff0000, 0xffffffffffffffff, 0x8000000000000000, 0x100000}
        vals |= {rng.randrange(0, max(size, 2)) for _ in range(3)}
        for v in sorted(vals):
            out.append((f"{name}={v:#x}", [(at + 8, "<Q", v & 0xffffffffffffffff)]))
    gh = e.dyn_val(0x6ffffef5)
    if gh is not None:
        o = e.v2o(gh)
        nb, so, bs, shift = struct.unpack_from("<IIII", e.data, o)
        fields = (("nbuckets", 0, [0, 1, nb + 1, 0xffffffff, 0x10000000]),
                  ("symoffset", 4, [0, 1, so + 1, so + 50, 0xffffffff]),
                  ("bloom_size", 8, [0, 1, 3, bs * 2, 0xffffffff, 0x10000000]),
                  ("bloom_shift", 12, [0, 1, 31, 32, 63, 64, 255, 0xffffffff]))
        for fname, off, vs in fields:
            for v in vs:
                out.append((f"gnu_hash.{fname}={v:#x}", [(o + off, "<I", v)]))
        for v in (0, 0xffffffffffffffff):
            out.append((f"gnu_hash.bloom[0]={v:#x}", [(o + 16, "<Q", v)]))
        bo = o + 16 + 8 * bs
        for i in range(nb):
            b, = struct.unpack_from("<I", e.data, bo + 4 * i)
            for v in (0, 1, so - 1 if so else 2, b + 1, b + 100, 0x7fffffff, 0xffffffff):
                out.append((f"gnu_hash.bucket[{i}]={v:#x} (was {b:#x})", [(bo + 4 * i, "<I", v)]))
        co = bo + 4 * nb
        nch = (e.sec[".dynsym"][1] // 24) - so if ".dynsym" in e.sec else 0
        for k in range(nch):
            h, = struct.unpack_from("<I", e.data, co + 4 * k)
            out.append((f"gnu_hash.chain[{k}] end bit flipped", [(co + 4 * k, "<I", h ^ 1)]))
            out.append((f"gnu_hash.chain[{k}]=0", [(co + 4 * k, "<I", 0)]))
        # every chain entry without its end bit: the walk runs off the table
        out.append(("gnu_hash.chain all open", [(co + 4 * k, "<I", struct.unpack_from("<I", e.data, co + 4 * k)[0] & ~1)
                                                 for k in range(nch)]))
    if ".dynsym" in e.sec:
        off, sz, _a, _es = e.sec[".dynsym"]
        for i in range(1, sz // 24):
            s = off + 24 * i
            for fname, fo, fmt, vs in (("st_name", 0, "<I", [0, 0xffffffff, 0x7fffffff]),
                                       ("st_info", 4, "<B", [0x1a, 0x16, 0x10, 0x00, 0xff, 0x22]),
                                       ("st_other", 5, "<B", [1, 2, 3, 0xff]),
                                       ("st_shndx", 6, "<H", [0, 0xfff1, 0xfff2, 0xffff, 0x7fff]),
                                       ("st_value", 8, "<Q", [0, 0x7fff0000, 0xffffffffffffffff])):
                for v in vs:
                    out.append((f"dynsym[{i}].{fname}={v:#x}", [(s + fo, fmt, v)]))
    for sec in (".init_array", ".fini_array"):
        if sec in e.sec:
            off, sz, _a, _es = e.sec[sec]
            for i in range(sz // 8):
                for v in (0, 1, 0x7fff0000, 0xffffffffffffffff, e.sec[".data"][2] if ".data" in e.sec else 0x4000,
                          e.sec[".rodata"][2] if ".rodata" in e.sec else 0x2000):
                    out.append((f"{sec}[{i}]={v:#x}", [(off + 8 * i, "<Q", v)]))
    for sec in (".rela.dyn", ".rela.plt"):
        if sec in e.sec:
            off, sz, _a, _es = e.sec[sec]
            for i in range(sz // 24):
                r = off + 24 * i
                info, = struct.unpack_from("<Q", e.data, r + 8)
                for v in (0, 0x7fff0000, 0xffffffffffffffff):
                    out.append((f"{sec}[{i}].r_offset={v:#x}", [(r, "<Q", v)]))
                for t in (0, 3, 5, 11, 0x25, 0x2a, 0xff):
                    out.append((f"{sec}[{i}].type={t:#x}", [(r + 8, "<Q", (info & ~0xffffffff) | t)]))
                for sidx in (0, 0xffff, 0x7fffffff):
                    out.append((f"{sec}[{i}].sym={sidx:#x}", [(r + 8, "<Q", (sidx << 32) | (info & 0xffffffff))]))
    if ".gnu.version" in e.sec:
        off, sz, _a, _es = e.sec[".gnu.version"]
        for i in range(1, sz // 2):
            for v in (0x7fff, 0x8001, 0x1234, 0xffff):
                out.append((f"versym[{i}]={v:#x}", [(off + 2 * i, "<H", v)]))
    return out


def real_outcome(target, timeout=10):
    out = tempfile.NamedTemporaryFile(prefix="abiscope-mut-", suffix=".json", delete=False)
    out.close()
    try:
        p = subprocess.run([DRIVER, "--out", out.name, target], capture_output=True, errors="replace",
                           timeout=timeout, cwd=WORK, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        os.unlink(out.name)
        return ("hang", None)
    content = open(out.name, errors="replace").read()
    os.unlink(out.name)
    if p.returncode < 0:
        return (f"signal {-p.returncode}", p.stderr.strip()[-200:] or None)
    try:
        j = json.loads(content)
    except ValueError:
        line = next((l for l in p.stderr.splitlines() if "Inconsistency" in l or "ld.so" in l), None)
        return ("abort", line or p.stderr.strip()[-200:])
    return ("loads", None) if j["loads"] else ("error", j["error"])


def predicted(target):
    p = subprocess.run([ABISCOPE, "why", "--json", "--process", DRIVER, target], capture_output=True,
                       errors="replace", timeout=60, cwd=WORK)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return ("abiscope-broken", f"status {p.returncode}: {p.stderr[-300:]}")
    if j["loads"]:
        return ("loads", None)
    first = next((f for f in j["findings"] if f.get("first_error")), None)
    if first and first.get("process_dies"):
        return ("dies", first.get("reason"))
    return ("error", j["error"])


def agree(r, a):
    kind, text = r
    if kind == "loads":
        return a[0] == "loads"
    if kind == "error":
        return a == ("error", text)
    if kind.startswith("signal") or kind == "abort":
        return a[0] == "dies" or (kind == "abort" and a[0] == "error" and a[1] and "Inconsistency" in a[1])
    if kind == "hang":
        return a[0] == "dies"
    return False


def main():
    only = None
    show_all = "--all" in sys.argv
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    with open(os.path.join(WORK, "dep.c"), "w") as f:
        f.write(DEP_SRC)
    with open(os.path.join(WORK, "t.c"), "w") as f:
        f.write(TARGET_SRC)
    sh([CC, "-shared", "-fPIC", "-o", os.path.join(WORK, "libmdep.so"), os.path.join(WORK, "dep.c"),
        "-Wl,-soname,libmdep.so"])
    sh([CC, "-shared", "-fPIC", "-o", os.path.join(WORK, "libmt.so"), os.path.join(WORK, "t.c"),
        "-Wl,-soname,libmt.so", "-L" + WORK, "-lmdep", "-Wl,--enable-new-dtags,-rpath,$ORIGIN"])
    rng = random.Random(13)
    counts = {}
    for which in ("libmt.so", "libmdep.so"):
        base = open(os.path.join(WORK, which), "rb").read()
        e = Elf(bytearray(base))
        d = os.path.join(WORK, "m-" + which)
        os.makedirs(d)
        for i, (name, edits) in enumerate(mutants(e, rng)):
            label = f"{which}: {name}"
            if only and only not in label:
                continue
            data = bytearray(base)
            for off, fmt, v in edits:
                struct.pack_into(fmt, data, off, v)
            sub = os.path.join(d, str(i))
            os.makedirs(sub)
            shutil.copy(os.path.join(WORK, "libmt.so"), sub)
            shutil.copy(os.path.join(WORK, "libmdep.so"), sub)
            with open(os.path.join(sub, which), "wb") as f:
                f.write(data)
            target = os.path.join(sub, "libmt.so")
            r = real_outcome(target)
            a = predicted(target)
            ok = agree(r, a)
            if ok:
                cls = "agree"
            elif a[0] == "loads":
                cls = "FALSE-LOAD"
            elif r[0] == "loads":
                cls = "false-fail"
            else:
                cls = "differ"
            counts[cls] = counts.get(cls, 0) + 1
            if not ok or show_all:
                print(f"{cls:10} {label}\n    real     {r[0]}: {r[1]}\n    abiscope {a[0]}: {a[1]}", flush=True)
            if ok:
                shutil.rmtree(sub)
    print("# " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
