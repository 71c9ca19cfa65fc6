#!/usr/bin/env python3
"""Marks a version requirement of an ELF64 little-endian object as weak.

    set_weak_version.py FILE VERSION

Sets VER_FLG_WEAK in the vna_flags of the Vernaux entry named VERSION
(section .gnu.version_r).  Used to build a fixture no linker option makes:
a weak version requirement, which glibc tolerates when unmet.
"""
import struct
import sys


def main(path, version):
    data = bytearray(open(path, "rb").read())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx]

    def name(off, base, size):
        end = data.index(b"\0", base + off)
        return data[base + off:end].decode()

    for s in secs:
        if name(s[0], strtab[4], strtab[5]) != ".gnu.version_r":
            continue
        dynstr = secs[s[6]]
        off = s[4]
        while True:
            vn_version, vn_cnt, vn_file, vn_aux, vn_next = struct.unpack_from("<HHIII", data, off)
            aoff = off + vn_aux
            for _ in range(vn_cnt):
                h, flags, other, nm, anext = struct.unpack_from("<IHHII", data, aoff)
                if name(nm, dynstr[4], dynstr[5]) == version:
                    struct.pack_into("<H", data, aoff + 4, flags | 2)
                    open(path, "wb").write(data)
                    return 0
                aoff += anext
            if not vn_next:
                break
            off += vn_next
    print(f"version {version} not found in {path}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
