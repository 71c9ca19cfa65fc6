#!/usr/bin/env python3
"""skeleton.py: shrink a measured field env to what abiscope reads.

    python3 tests/field/skeleton.py ENV...

The disk bound of the field matrix: once the oracle has run in an env (its
answers are kept in $ABISCOPE_FIELD/results), every ELF file of the env is
rewritten in place as a sparse file of the same size in which the bytes of
code (SHF_EXECINSTR sections), read-only data (.rodata, .lrodata) and CUDA
fatbins are holes (read back as zeros, no disk).  Headers, the dynamic
section, symbol and version tables, notes and everything else stay, so
abiscope's loader verdicts can be measured again after a fix without the
gigabytes; its CUDA kernel verdicts cannot (the matrix does not use them:
it runs abiscope with --no-driver).  The env is marked (.abiscope-skeleton)
and never run again: the oracle's answers for it are the ones kept.
matrix.py checks on each env it shrinks that abiscope's answer is the same
before and after.
"""
import os
import struct
import sys

SHF_EXECINSTR = 0x4
HOLES = {".rodata", ".lrodata", ".nv_fatbin", "__nv_relfatbin", ".nvFatBinSegment"}


def sections(f, size):
    f.seek(0)
    h = f.read(64)
    if len(h) < 64 or h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
        return None  # only 64-bit little-endian ELF (x86_64) is shrunk
    shoff, = struct.unpack_from("<Q", h, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", h, 0x3A)
    if shoff == 0 or shentsize != 64 or shoff + shnum * 64 > size or shstrndx >= shnum:
        return None
    f.seek(shoff)
    raw = f.read(shnum * 64)
    secs = [struct.unpack_from("<IIQQQQIIQQ", raw, i * 64) for i in range(shnum)]
    strtab = secs[shstrndx]
    f.seek(strtab[4])
    names = f.read(strtab[5])
    out = []
    for s in secs:
        n = names[s[0]:names.index(b"\0", s[0])].decode("latin-1") if s[0] < len(names) else ""
        out.append((n, s[1], s[2], s[4], s[5]))  # name, type, flags, offset, size
    return out


def shrink(path):
    size = os.path.getsize(path)
    if size < 1 << 20:
        return 0
    with open(path, "rb") as f:
        secs = sections(f, size)
        if not secs:
            return 0
        holes = sorted((off, off + sz) for n, typ, flags, off, sz in secs
                       if typ != 8 and sz > 4096 and (flags & SHF_EXECINSTR or n in HOLES))
        keep, pos = [], 0
        for a, b in holes:
            if a > pos:
                keep.append((pos, a))
            pos = max(pos, b)
        if pos < size:
            keep.append((pos, size))
        tmp = path + ".skeleton-tmp"
        with open(tmp, "wb") as out:
            for a, b in keep:
                f.seek(a)
                out.seek(a)
                left = b - a
                while left:
                    chunk = f.read(min(left, 1 << 22))
                    if not chunk:
                        break
                    out.write(chunk)
                    left -= len(chunk)
            out.truncate(size)
    st = os.stat(path)
    os.chmod(tmp, st.st_mode & 0o7777)
    os.replace(tmp, path)
    return sum(b - a for a, b in holes)


def main(argv):
    for env in argv:
        saved = 0
        for dirpath, _, files in os.walk(env):
            for fn in files:
                p = os.path.join(dirpath, fn)
                if os.path.islink(p) or ".so" not in fn:
                    continue
                try:
                    saved += shrink(p)
                except OSError as e:
                    print(f"skeleton: {p}: {e}", file=sys.stderr)
        with open(os.path.join(env, ".abiscope-skeleton"), "w") as f:
            f.write("code, .rodata and fatbins are holes: see tests/field/skeleton.py\n")
        print(f"skeleton {env}: {saved / 1e9:.1f} GB of code and fatbins made holes")


if __name__ == "__main__":
    main(sys.argv[1:])
