#!/usr/bin/env python3
"""A pyelftools peer: library and symbol resolution the way Python tools do it.

    pyelftools_resolve.py LIST

LIST has one ELF path per line.  For each object this resolves its
DT_NEEDED closure the way auditwheel's lddtree (a port of pax-utils'
lddtree.py) does: DT_RPATH (ignored when DT_RUNPATH is present), then
LD_LIBRARY_PATH, then DT_RUNPATH, then the directories of /etc/ld.so.conf
(with its includes) and the default ones, $ORIGIN expanded, a candidate
accepted when its ELF class and machine match.  Then, as a checker built
on that resolver would, it binds every undefined non-weak dynamic symbol
against the definitions of the closure, honouring symbol versions.

Parsed files are cached for the whole run (keyed by real path), so each
file is read once, as in abiscope; the peer is as fair to itself as it can
be.  It prints one line: objects, libraries resolved, references checked,
unresolved references.  It needs pyelftools (bench/prepare_envs.sh puts it
in the bench-tools venv).  This is benchmark code, written for this
repository; no code of auditwheel or pax-utils is copied.
"""
import glob
import os
import sys

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection, GNUVerSymSection
from elftools.elf.sections import SymbolTableSection


def ld_so_conf(path="/etc/ld.so.conf", seen=None):
    seen = set() if seen is None else seen
    dirs = []
    if path in seen:
        return dirs
    seen.add(path)
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return dirs
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include "):
            for inc in sorted(glob.glob(os.path.join(os.path.dirname(path), line[8:].strip()))):
                dirs += ld_so_conf(inc, seen)
        else:
            dirs.append(line)
    return dirs


LDPATHS = ld_so_conf() + ["/lib64", "/usr/lib64", "/lib", "/usr/lib"]
LLP = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]


class Obj:
    """What the resolver and the binder need from one ELF file."""

    def __init__(self, path):
        self.path = path
        self.ok = False
        self.needed, self.rpath, self.runpath = [], [], []
        self.defs = {}      # name -> set of version names ('' for unversioned)
        self.undef = []     # (name, version or '', weak)
        with open(path, "rb") as f:
            try:
                elf = ELFFile(f)
            except ELFError:
                return
            self.cls, self.machine = elf.elfclass, elf["e_machine"]
            for sec in elf.iter_sections():
                if isinstance(sec, DynamicSection):
                    for tag in sec.iter_tags():
                        if tag.entry.d_tag == "DT_NEEDED":
                            self.needed.append(tag.needed)
                        elif tag.entry.d_tag == "DT_RPATH":
                            self.rpath = tag.rpath.split(":")
                        elif tag.entry.d_tag == "DT_RUNPATH":
                            self.runpath = tag.runpath.split(":")
            versions = {}
            versym = None
            for sec in elf.iter_sections():
                if isinstance(sec, GNUVerDefSection):
                    for vd, auxes in sec.iter_versions():
                        names = [a.name for a in auxes]
                        if names:
                            versions[vd["vd_ndx"]] = names[0]
                elif isinstance(sec, GNUVerNeedSection):
                    for vn, auxes in sec.iter_versions():
                        for a in auxes:
                            versions[a["vna_other"] & 0x7FFF] = a.name
                elif isinstance(sec, GNUVerSymSection):
                    versym = sec
            dynsym = elf.get_section_by_name(".dynsym")
            if isinstance(dynsym, SymbolTableSection):
                for i, sym in enumerate(dynsym.iter_symbols()):
                    if i == 0:
                        continue
                    bind = sym["st_info"]["bind"]
                    if bind == "STB_LOCAL":
                        continue
                    ver = ""
                    if versym is not None:
                        ndx = versym.get_symbol(i)["ndx"]
                        if isinstance(ndx, int) and (ndx & 0x7FFF) >= 2:
                            ver = versions.get(ndx & 0x7FFF, "")
                    if sym["st_shndx"] == "SHN_UNDEF":
                        self.undef.append((sym.name, ver, bind == "STB_WEAK"))
                    else:
                        self.defs.setdefault(sym.name, set()).add(ver)
            self.ok = True


CACHE = {}


def load(path):
    real = os.path.realpath(path)
    o = CACHE.get(real)
    if o is None:
        try:
            o = Obj(real)
        except OSError:
            o = None
        CACHE[real] = o
    return o


def expand(dirs, origin):
    return [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for d in dirs if d]


def find(name, requester, obj):
    if "/" in name:
        return name if os.path.exists(name) else None
    origin = os.path.dirname(requester)
    paths = ([] if obj.runpath else expand(obj.rpath, origin)) + LLP + \
        expand(obj.runpath, origin) + LDPATHS
    for d in paths:
        cand = os.path.join(d, name)
        if os.path.exists(cand):
            c = load(cand)
            if c and c.ok and c.cls == obj.cls and c.machine == obj.machine:
                return cand
    return None


def check(path):
    root = load(path)
    if not root or not root.ok:
        return 0, 0, 0
    order, seen, queue = [], {os.path.realpath(path)}, [(path, root)]
    resolved = 0
    while queue:
        p, o = queue.pop(0)
        order.append(o)
        for n in o.needed:
            hit = find(n, p, o)
            if hit is None:
                continue
            resolved += 1
            real = os.path.realpath(hit)
            if real not in seen:
                seen.add(real)
                queue.append((hit, load(hit)))
    refs = unresolved = 0
    for o in order:
        for name, ver, weak in o.undef:
            refs += 1
            if weak:
                continue
            if not any(name in d.defs and (not ver or ver in d.defs[name] or "" in d.defs[name])
                       for d in order):
                unresolved += 1
    return resolved, refs, unresolved


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    paths = [l.strip() for l in open(sys.argv[1]) if l.strip()]
    tot = [0, 0, 0]
    for p in paths:
        r = check(p)
        tot = [a + b for a, b in zip(tot, r)]
    print(f"objects={len(paths)} libraries_resolved={tot[0]} refs={tot[1]} unresolved={tot[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
