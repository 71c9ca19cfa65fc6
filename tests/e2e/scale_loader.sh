#!/bin/sh
# Scale tests of the ELF reader and the loader model (issue 25): built here,
# each input four times as large as the other, compared by the CPU the two
# runs used (tests/scale.py: 4x the input within 5x the CPU; a quadratic
# cost takes 16x); never a wall-clock limit.
#   - DT_INIT_ARRAY entries and relocations: the slots' relocations were
#     found by a pass over every relocation per slot
#   - extension modules that all load one library with many relocations:
#     the library was looked up whole again for each module
#   - a deep dependency chain, and many distributions
#   - a hash table whose one chain holds every symbol: each lookup walked
#     the whole table
. "$(dirname "$0")/lib.sh"
fixture_dir scale_loader
SCALE="python3 $TOP/tests/scale.py --timeout 300"
scale() { $SCALE "$@" || fails=$((fails + 1)); }
pybin=$(command -v python3)

make_env() {
	E=$1
	mkdir -p "$E/bin" "$E/lib/python3.11/site-packages/pkg/lib" "$E/lib/python3.11/site-packages/pkg-1.0.dist-info"
	ln -sf "$pybin" "$E/bin/python3"
	printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.11.2\n' "$(dirname "$pybin")" >"$E/pyvenv.cfg"
	printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >"$E/lib/python3.11/site-packages/pkg-1.0.dist-info/METADATA"
}

# ---- N and 4N constructors (DT_INIT_ARRAY slots, each relocated through
# DT_RELR) beside 100 and 400 thousand symbolic DT_RELA entries
for n in 1000 4000; do
	python3 - "$n" "$FX/init$n" <<'PY'
import sys
n, base = int(sys.argv[1]), sys.argv[2]
with open(base + ".c", "w") as f:
    f.write("".join(f"void g{i}(void) {{}}\n" for i in range(1000)))
    f.write("".join(f"__attribute__((constructor)) static void c{i}(void) {{}}\n" for i in range(n)))
with open(base + ".s", "w") as f:
    f.write('.section .data.rel,"aw"\n.globl tab\ntab:\n' + "".join(f".quad g{i % 1000}\n" for i in range(n * 100)))
    f.write('.section .note.GNU-stack,"",@progbits\n')
PY
	$CC -shared -fPIC -O0 -Wl,-z,pack-relative-relocs -o "$FX/libinit$n.so" "$FX/init$n.c" "$FX/init$n.s"
done
slots=$(readelf -d "$FX/libinit4000.so" | awk '/INIT_ARRAYSZ/ {print $3 / 8}')
expect_eq "$slots" 4001 "the large object has 4,001 DT_INIT_ARRAY slots"
scale --rc 0 --floor 0.01 "why: 1,000 and 4,000 constructors beside 100,000 and 400,000 relocations" \
	"$FX/libinit1000.so" "$FX/libinit4000.so" -- $ABISCOPE why --json {}

# ---- N and 4N extension modules, each loading one library whose symbols
# and relocations grow with N (500 per module: a distinct symbol each, so a
# distinct lookup each): the library is bound once, not once per module
for n in 20 80; do
	E=$FX/mods$n
	P=$E/lib/python3.11/site-packages/pkg
	make_env "$E"
	python3 - "$n" "$FX/prov$n.s" "$FX/shared$n.s" <<'PY'
import sys
n, prov, shared = int(sys.argv[1]) * 500, sys.argv[2], sys.argv[3]
note = '.section .note.GNU-stack,"",@progbits\n'
with open(prov, "w") as f:
    f.write(".text\n" + "".join(f".globl h{i}\n.type h{i},@function\nh{i}: ret\n" for i in range(n)) + note)
with open(shared, "w") as f:
    f.write('.section .data.rel,"aw"\n.globl htab\n.type htab,@object\n' + f".size htab,{n * 8}\nhtab:\n"
            + "".join(f".quad h{i}\n" for i in range(n)) + note)
PY
	# libshared.so binds every symbol of libprov.so, as libtensorflow_cc does
	# libtensorflow_framework's
	$CC -shared -fPIC -o "$P/lib/libprov.so" "$FX/prov$n.s" -Wl,-soname,libprov.so
	$CC -shared -fPIC -o "$P/lib/libshared.so" "$FX/shared$n.s" -Wl,-soname,libshared.so \
		-L"$P/lib" -lprov -Wl,-rpath,'$ORIGIN'
	i=0
	while [ $i -lt $n ]; do
		printf 'extern void *htab[]; int PyInit__m%d(void) { return htab[0] != 0; }\n' $i >"$FX/m$i.c"
		$CC -shared -fPIC -o "$P/_m$i.cpython-311-x86_64-linux-gnu.so" "$FX/m$i.c" \
			-L"$P/lib" -lshared -Wl,-rpath,'$ORIGIN/lib'
		i=$((i + 1))
	done
done
scale --rc 0 --floor 0.01 "check: 20 and 80 extension modules loading one library of 10,000 and 40,000 symbols" \
	"$FX/mods20" "$FX/mods80" -- $ABISCOPE check {}

# ---- a dependency chain of N and 4N libraries, each calling the next
for n in 150 600; do
	D=$FX/chain$n
	mkdir -p "$D"
	printf 'int q_end(void) { return 1; }\n' >"$D/end.c"
	$CC -shared -fPIC -o "$D/libq$n.so" "$D/end.c" -Wl,-soname,libq$n.so
	prev=end
	i=$((n - 1))
	while [ $i -ge 0 ]; do
		printf 'int q_%s(void); int q_%d(void) { return q_%s(); }\n' "$prev" $i "$prev" >"$D/q.c"
		nxt=$((i + 1))
		$CC -shared -fPIC -o "$D/libq$i.so" "$D/q.c" -L"$D" -lq$nxt -Wl,-rpath,'$ORIGIN' -Wl,-soname,libq$i.so
		prev=$i
		i=$((i - 1))
	done
done
scale --rc 0 --floor 0.01 "why: a dependency chain of 150 and 600 libraries" \
	"$FX/chain150/libq0.so" "$FX/chain600/libq0.so" -- $ABISCOPE why --json {}

# ---- N and 4N distributions, each with its RECORD and a module file
for n in 1000 4000; do
	E=$FX/dists$n
	make_env "$E"
	python3 - "$n" "$E/lib/python3.11/site-packages" <<'PY'
import os, sys
n, sp = int(sys.argv[1]), sys.argv[2]
for i in range(n):
    d = f"{sp}/dist{i}-1.{i}.dist-info"
    os.makedirs(d, exist_ok=True)
    open(f"{d}/METADATA", "w").write(f"Metadata-Version: 2.1\nName: dist{i}\nVersion: 1.{i}\n")
    open(f"{sp}/dist{i}.py", "w").write("x = 1\n")
    open(f"{d}/RECORD", "w").write(f"dist{i}.py,sha256=AAAA,6\n{d.rsplit('/', 1)[1]}/RECORD,,\n")
PY
done
scale --rc 0 --floor 0.01 "check: 1,000 and 4,000 distributions" "$FX/dists1000" "$FX/dists4000" -- $ABISCOPE check {}

# one_chain LIB: rewrites LIB's hash table (DT_GNU_HASH, else SysV DT_HASH)
# so that every bucket starts one chain that holds every symbol: GNU, the
# first hashed symbol's, one end bit at the last word, a bloom filter of
# ones; SysV, symbol 1's, each symbol linked to the next
one_chain() {
	python3 - "$1" <<'PY'
import struct, sys
path = sys.argv[1]
b = bytearray(open(path, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum = struct.unpack_from("<HH", b, 0x3A)
for k in range(shnum):
    sh = shoff + k * shentsize
    kind, = struct.unpack_from("<I", b, sh + 4)
    off, size = struct.unpack_from("<QQ", b, sh + 0x18)
    if kind == 0x6FFFFFF6:  # SHT_GNU_HASH
        nb, symoff, nbloom, _ = struct.unpack_from("<IIII", b, off)
        bloom = off + 16
        struct.pack_into("<%dQ" % nbloom, b, bloom, *([0xFFFFFFFFFFFFFFFF] * nbloom))
        buckets = bloom + 8 * nbloom
        struct.pack_into("<%dI" % nb, b, buckets, *([symoff] * nb))
        chain = buckets + 4 * nb
        words = (off + size - chain) // 4
        for w in range(words):
            v, = struct.unpack_from("<I", b, chain + 4 * w)
            struct.pack_into("<I", b, chain + 4 * w, (v & ~1) | (1 if w == words - 1 else 0))
        break
    if kind == 5:  # SHT_HASH
        nb, nchain = struct.unpack_from("<II", b, off)
        struct.pack_into("<%dI" % nb, b, off + 8, *([1] * nb))
        chain = off + 8 + 4 * nb
        struct.pack_into("<%dI" % nchain, b, chain, *([0] + [i + 1 for i in range(1, nchain - 1)] + [0]))
        break
else:
    sys.exit(path + ": no hash table")
open(path, "wb").write(bytes(b))
PY
}
# ---- a hash table of N and 4N symbols all in one chain: every bucket
# starts at the first symbol and only the last word ends the chain, so each
# lookup walks up to the whole table, as glibc's would (a table made so; no
# linker writes one).  libhc binds its own symbols (R_X86_64_64 against
# them: each walks its own table), libhcuser binds every one of them.
for n in 5000 20000; do
	python3 - "$n" "$FX/hc$n" <<'PY'
import sys
n, base = int(sys.argv[1]), sys.argv[2]
note = '.section .note.GNU-stack,"",@progbits\n'
with open(base + ".s", "w") as f:
    f.write(".text\n" + "".join(f".globl hc{i}\n.type hc{i},@function\nhc{i}: ret\n" for i in range(n)))
    f.write('.section .data.rel,"aw"\n.globl hctab\n.type hctab,@object\n' + f".size hctab,{n * 8}\nhctab:\n"
            + "".join(f".quad hc{i}\n" for i in range(n)) + note)
with open(base + "user.s", "w") as f:
    f.write('.section .data.rel,"aw"\n.globl usertab\n.type usertab,@object\n' + f".size usertab,{n * 8}\n"
            + "usertab:\n" + "".join(f".quad hc{i}\n" for i in range(n)) + note)
PY
	$CC -shared -fPIC -o "$FX/libhc$n.so" "$FX/hc$n.s" -Wl,-soname,libhc$n.so -Wl,--hash-style=gnu
	one_chain "$FX/libhc$n.so"
	$CC -shared -fPIC -o "$FX/libhcuser$n.so" "$FX/hc${n}user.s" -L"$FX" -lhc$n -Wl,-rpath,'$ORIGIN' \
		-Wl,-soname,libhcuser$n.so
	# the same with only a SysV DT_HASH, whose one chain links every symbol
	mkdir -p "$FX/sysv$n"
	$CC -shared -fPIC -o "$FX/sysv$n/libhc$n.so" "$FX/hc$n.s" -Wl,-soname,libhc$n.so -Wl,--hash-style=sysv
	one_chain "$FX/sysv$n/libhc$n.so"
	$CC -shared -fPIC -o "$FX/sysv$n/libhcuser$n.so" "$FX/hc${n}user.s" -L"$FX/sysv$n" -lhc$n \
		-Wl,-rpath,'$ORIGIN' -Wl,-soname,libhcuser$n.so -Wl,--hash-style=sysv
done
# the real loader loads them (slowly: it walks the chain for each lookup)
expect_eq "$(python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1]); print("loaded")' "$FX/libhcuser5000.so" 2>&1)" \
	"loaded" "the real loader loads a library of 5,000 symbols in one chain"
$ABISCOPE why --json "$FX/libhcuser5000.so" >"$FX/hc.json" 2>&1
expect_eq "$(jq_py 'j["loads"], any("hash chains are too long to walk" in a for a in j["assumptions"])' \
	<"$FX/hc.json" 2>&1)" "True True" \
	"why on it: loads, as the real loader does, a guess that names the library whose chains it did not walk to the end"
scale --rc 0 --floor 0.01 "why: 5,000 and 20,000 symbols in one hash chain, each bound by the library and by its user" \
	"$FX/libhcuser5000.so" "$FX/libhcuser20000.so" -- $ABISCOPE why --json {}
expect_eq "$(python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1]); print("loaded")' "$FX/sysv5000/libhcuser5000.so" \
	2>&1)" "loaded" "the real loader loads a library of 5,000 symbols in one SysV chain"
$ABISCOPE why --json "$FX/sysv5000/libhcuser5000.so" >"$FX/sysv.json" 2>&1
expect_eq "$(jq_py 'j["loads"], any("hash chains are too long to walk" in a for a in j["assumptions"])' \
	<"$FX/sysv.json" 2>&1)" "True True" "why on it: loads, a guess, as with DT_GNU_HASH"
scale --rc 0 --floor 0.01 "why: 5,000 and 20,000 symbols in one SysV hash chain" \
	"$FX/sysv5000/libhcuser5000.so" "$FX/sysv20000/libhcuser20000.so" -- $ABISCOPE why --json {}
finish
