#!/usr/bin/env python3
"""aarch64 differential tests: the real aarch64 glibc loader is the oracle.

The fixtures are built from C source with the aarch64 cross gcc into an arm64
Debian root (tests/diff/aarch64/setup.sh: glibc 2.36 in root/, 2.41 in
root13/), and each load is asked twice: of the real loader, by running the
root's own /usr/local/bin/dlo (or its python3.11 with pydlo.py) under
qemu-aarch64-static chrooted into the root, and of
`abiscope why --json --root ROOT`.  Verdict and dlerror() text must agree.

    aarch64.py oracle [--record] [SUITE...]   live: qemu and abiscope (as root)
    aarch64.py check [SUITE...]               the recorded answers, no qemu

SUITE: fixtures (every cause at 4k and 64k pages, both roots; the default),
system (every library of both roots, at 4k and 64k pages), wheels DIR...
(extension modules and libraries of aarch64 wheels installed in a copy of the
root, dlopen()ed in its python; oracle only: the wheels are not rebuilt).

The real loader's answers are kept in tests/diff/aarch64/golden.jsonl, one
line a load: its key, the answer, and what makes it valid: the sha256 of every
file the real load probed or mapped (its LD_DEBUG=libs,files trace), of the
loader, of ld.so.cache and of the driver.  `check` rebuilds the fixtures
(they are reproducible: the same bytes from the same source and toolchain),
and compares abiscope with every golden whose files are still those bytes;
a golden whose files changed is listed as a skip, never compared.  `oracle
--record` rewrites the goldens of the suites it ran.

ABISCOPE_ARM_DIR: where setup.sh built the roots and the cross gcc
(default ~/.cache/abiscope/aarch64).  ABISCOPE: the binary under test.
Output: one "ok - NAME" / "not ok - NAME" line per load, and per comparison
set a line "# agreement SET: N cases, A agree, D disagree".
"""
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
ABISCOPE = os.path.abspath(os.environ.get("ABISCOPE", os.path.join(TOP, "abiscope")))
ARM = os.environ.get("ABISCOPE_ARM_DIR") or os.path.expanduser("~/.cache/abiscope/aarch64")
GOLDEN = os.path.join(HERE, "aarch64", "golden.jsonl")
CC = os.path.join(ARM, "bin", "aarch64-linux-gnu-gcc")
CXX = os.path.join(ARM, "bin", "aarch64-linux-gnu-g++")
ROOTS = {"2.36": os.path.join(ARM, "root"), "2.41": os.path.join(ARM, "root13")}
DLO = "/usr/local/bin/dlo"
PYTHON = "/usr/bin/python3.11"
CASES_DIR = "/abiscope-diff"          # in each root
PAGES = (4096, 65536)

MODE = "check"
results = {"ok": 0, "fail": 0, "skip": 0}
sets = {}                             # comparison set -> [cases, agree, disagree, skipped]
goldens = {}                          # key -> golden record (check: read; oracle --record: written)
golden_files = {}                     # (root tag, in-root path) -> short sha256
recorded = {}
recorded_files = {}
sha_memo = {}


def report(ok, name, detail=""):
    if ok is None:
        print(f"ok - {name} # SKIP {detail}")
        results["skip"] += 1
    elif ok:
        print(f"ok - {name}")
        results["ok"] += 1
    else:
        print(f"not ok - {name}")
        for line in detail.splitlines():
            print(f"#   {line}")
        results["fail"] += 1


def tally(setname, outcome):
    """outcome: True agree, False disagree, None skipped, "noanswer": the
    real process died before the loader's verdict was printed."""
    s = sets.setdefault(setname, [0, 0, 0, 0, 0])
    if outcome is None:
        s[3] += 1
        return
    if outcome == "noanswer":
        s[4] += 1
        return
    s[0] += 1
    s[1 if outcome else 2] += 1


def sh(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"command failed: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p


def sha(path):
    """sha256 of a file (memoised for the run), or None when absent."""
    if path in sha_memo:
        return sha_memo[path]
    h = None
    if os.path.isfile(path):
        d = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                d.update(chunk)
        h = d.hexdigest()
    sha_memo[path] = h
    return h


# ---------------------------------------------------------------- the two sides

class Load:
    """One dlopen() in one root: what both sides are asked."""

    def __init__(self, name, root, target, pagesize=4096, cwd="/", llp=None, tunables=None,
                 preload=(), lazy=False, process=DLO, expect=None, setname=None, rootdir=None):
        self.name, self.root, self.target = name, root, target
        self._rootdir = rootdir
        self.pagesize, self.cwd, self.llp, self.tunables = pagesize, cwd, llp, tunables
        self.preload, self.lazy, self.process = list(preload), lazy, process
        self.expect = expect
        self.setname = setname or f"fixtures glibc {root} {pagesize // 1024}k"

    def key(self):
        return "|".join([self.setname, self.name])

    def rootdir(self):
        return self._rootdir or ROOTS[self.root]


def driver_args(ld):
    args = []
    if ld.process != DLO:
        args.append("/usr/local/bin/pydlo.py")
    for path, glob in ld.preload:
        args += ["-g" if glob else "-l", path]
    if ld.lazy:
        args.append("-z")
    return args + [ld.target]


def run_in_root(root, cwd, argv, pagesize=None, env=None, timeout=600):
    """argv inside root under qemu-aarch64-static (chrooted: the root's loader,
    its ld.so.cache); the environment is this one minus LD_*, QEMU_*, GLIBC_*."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("LD_", "QEMU_", "GLIBC_"))}
    e.update(env or {})
    q = ["/usr/bin/qemu-aarch64-static"] + (["-p", str(pagesize)] if pagesize else [])

    def enter():
        os.chroot(root)
        os.chdir(cwd)
    return subprocess.run(q + argv, env=e, preexec_fn=enter, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def ask_real(ld, debug=False):
    env = {}
    if ld.llp is not None:
        env["LD_LIBRARY_PATH"] = ld.llp
    if ld.tunables:
        env["GLIBC_TUNABLES"] = ld.tunables
    if debug:
        env["LD_DEBUG"] = "libs,files"
    p = run_in_root(ld.rootdir(), ld.cwd, [ld.process] + driver_args(ld), ld.pagesize, env)
    line = (p.stdout.splitlines() or [""])[0]
    if line == "OK":
        answer = "OK"
    elif line.startswith("FAIL "):
        answer = line
    else:
        answer = "ORACLE-ERROR " + (line or p.stderr.strip()[-300:])
    return answer, p.stderr


def probed_files(ld, trace):
    """The in-root files the real load probed or mapped (its LD_DEBUG trace),
    with the loader, the cache and the driver: what the answer depends on."""
    files = {"/usr/lib/ld-linux-aarch64.so.1", "/etc/ld.so.cache", ld.process}
    if ld.process != DLO:
        files.add("/usr/local/bin/pydlo.py")
    if "/" in ld.target:
        files.add(os.path.normpath(os.path.join(ld.cwd, ld.target)))
    for m in re.finditer(r"(?:trying file|file)=(\S+)", trace):
        p = m.group(1)
        if not p.startswith("/"):
            p = os.path.normpath(os.path.join(ld.cwd, p))
        files.add(p)
    root = ld.rootdir()
    return sorted(p for p in files if os.path.exists(root + p) and not os.path.isdir(root + p)
                  and p not in BASE_FILES)


# What every load depends on, recorded once per root
BASE_FILES = ("/usr/lib/ld-linux-aarch64.so.1", "/etc/ld.so.cache", "/lib/aarch64-linux-gnu/libc.so.6",
              DLO, "/usr/local/bin/pydlo.py", PYTHON)


def depends_on(root, files):
    return [p for p in BASE_FILES if os.path.exists(root + p)] + list(files)


def root_sha(root, path):
    """The short sha256 of an in-root file, links followed inside the root."""
    real = path
    for _ in range(40):
        if not os.path.islink(root + real):
            break
        t = os.readlink(root + real)
        real = os.path.normpath(t if t.startswith("/") else os.path.join(os.path.dirname(real), t))
    h = sha(root + real)
    return h[:16] if h else None


def ask_abiscope(ld):
    cmd = [ABISCOPE, "why", "--json", "--root", ld.rootdir(), "--cwd", ld.cwd,
           "--page-size", str(ld.pagesize), "--process", ld.process,
           "--ld-library-path", ld.llp if ld.llp is not None else ""]
    if ld.llp is None:
        cmd = cmd[:-2]
    if ld.tunables:
        cmd += ["--glibc-tunables", ld.tunables]
    for path, glob in ld.preload:
        cmd += ["--preload-global" if glob else "--preload", path]
    if ld.lazy:
        cmd.append("--lazy")
    p = subprocess.run(cmd + [ld.target], capture_output=True, text=True, timeout=600)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return "TOOL-ERROR " + (p.stderr.strip()[-300:] or f"status {p.returncode}"), None
    for pre in j.get("preloads") or []:
        if not pre.get("loads"):
            return "PRELOAD-FAIL " + str(pre.get("error")), j
    if j.get("loads") is True:
        return "OK", j
    if j.get("loads") is False:
        return "FAIL " + str(j.get("error")), j
    return f"TOOL-ERROR loads={j.get('loads')!r}", j


def kind_of(answer):
    """The kind of failure a dlerror() text names (for a case's `expect`)."""
    if answer == "OK":
        return "loads"
    for needle, kind in (("cannot allocate memory in static TLS block", "static-tls"),
                         ("unexpected PLT reloc type", "bad-plt-reloc"),
                         ("unexpected reloc type", "bad-reloc"),
                         ("not page-aligned", "page-aligned"),
                         ("undefined symbol", "undefined-symbol"),
                         ("cannot open shared object file", "not-found"),
                         ("version `", "version"),
                         ("invalid ELF header", "invalid-elf"),
                         ("position-independent executable", "pie")):
        if needle in answer:
            return kind
    return "other"


def compare(ld):
    """One load, live (oracle) or against its golden (check)."""
    key = ld.key()
    name = f"[{ld.setname}] {ld.name}"
    if MODE == "oracle":
        real, _ = ask_real(ld)
        if re.match(r"ORACLE-ERROR (qemu: uncaught target signal|PRELOAD-FAIL)", real):
            # a constructor that crashes (under qemu -p 65536 the big
            # libraries' do), or a preload that fails: no verdict to compare
            report(None, name, f"no answer from the real loader: {real[len('ORACLE-ERROR '):]}")
            tally(ld.setname, "noanswer")
            return
        if real.startswith("ORACLE-ERROR"):
            report(False, name, real)
            tally(ld.setname, False)
            return
        _, trace = ask_real(ld, debug=True)
        root = ld.rootdir()
        files = probed_files(ld, trace)
        recorded[key] = {"key": key, "real": real, "root": root_tag(root), "files": files}
        for p in depends_on(root, files):
            recorded_files[(root_tag(root), p)] = root_sha(root, p)
    else:
        g = goldens.get(key)
        if g is None:
            report(None, name, "no golden: run make test-aarch64 (records with --record)")
            tally(ld.setname, None)
            return
        root = ld.rootdir()
        changed = [p for p in depends_on(root, g["files"])
                   if root_sha(root, p) != golden_files.get((g["root"], p))]
        if changed:
            report(None, name, f"the golden was recorded with other bytes of {', '.join(changed[:3])}"
                               f"{' ...' if len(changed) > 3 else ''}: make test-aarch64 compares it live")
            tally(ld.setname, None)
            return
        real = g["real"]
    tool, _ = ask_abiscope(ld)
    problems = []
    if tool != real:
        problems.append(f"real loader  {real}\nabiscope     {tool}")
    if ld.expect is not None:
        want = ld.expect.get(ld.root) if isinstance(ld.expect, dict) else ld.expect
        if want is not None and kind_of(real) != want:
            problems.append(f"the case is meant to show {want}; the real loader says {real}")
    report(not problems, name, "\n".join(problems))
    tally(ld.setname, tool == real)


# ---------------------------------------------------------------- fixtures

class Fx:
    """A fixture directory in a root: objects built from C source with the
    aarch64 cross compiler, named by their in-root paths."""

    def __init__(self, root, name, rootdir=None):
        self.root = root
        self.rel = f"{CASES_DIR}/{name}"
        self.dir = (rootdir or ROOTS[root]) + self.rel
        if os.path.exists(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)

    def p(self, rel):
        """The in-root path."""
        return f"{self.rel}/{rel}"

    def host(self, rel):
        return f"{self.dir}/{rel}"

    def lib(self, rel, src, soname=None, flags=(), libs=(), cxx=False, version_script=None, pie=False):
        """Builds rel from source, reproducibly: in its directory, by relative
        names (no path of this machine ends up in the object)."""
        out = self.host(rel)
        d, base = os.path.dirname(out), os.path.basename(out)
        os.makedirs(d, exist_ok=True)
        src_name = base + (".cc" if cxx else ".c")
        with open(os.path.join(d, src_name), "w") as f:
            f.write(src)
        cmd = [CXX if cxx else CC, "-O2", "-fPIC", "-o", base, src_name]
        cmd += ["-pie", "-fPIE"] if pie else ["-shared"]
        if soname is not False and not pie:
            cmd.append(f"-Wl,-soname,{soname or base}")
        if version_script:
            with open(os.path.join(d, base + ".map"), "w") as f:
                f.write(version_script)
            cmd.append(f"-Wl,--version-script={base}.map")
        cmd += list(flags)
        cmd += [self.host(x[len(self.rel) + 1:]) if x.startswith(self.rel + "/") else x for x in libs]
        sh(cmd, cwd=d)
        return self.p(rel)

    def write(self, rel, data):
        out = self.host(rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
        return self.p(rel)


def runpath(*dirs):
    return [f"-Wl,--enable-new-dtags,-rpath,{':'.join(dirs)}"]


def rpath(*dirs):
    return [f"-Wl,--disable-new-dtags,-rpath,{':'.join(dirs)}"]


def set_reloc_type(path, section, old, new, nth=0):
    """In an ELF64 little-endian object, the nth relocation of type `old` in
    section `section` (.rela.dyn, .rela.plt) becomes type `new`."""
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
        strtab_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
        for i in range(shnum):
            sh_name, sh_type = struct.unpack_from("<II", data, shoff + i * shentsize)
            end = data.index(b"\0", strtab_off + sh_name)
            if data[strtab_off + sh_name:end].decode() != section:
                continue
            off, size = struct.unpack_from("<QQ", data, shoff + i * shentsize + 0x18)
            seen = 0
            for e in range(off, off + size, 24):
                info, = struct.unpack_from("<Q", data, e + 8)
                if info & 0xffffffff == old:
                    if seen == nth:
                        struct.pack_into("<Q", data, e + 8, (info & ~0xffffffff) | new)
                        f.seek(0)
                        f.write(data)
                        return
                    seen += 1
        raise RuntimeError(f"{path}: no relocation {old} #{nth} in {section}")


def ie_tls(size, name="ie", align=None):
    al = f" __attribute__((aligned({align})))" if align else ""
    return (f"__thread char {name}[{size}]{al} __attribute__((tls_model(\"initial-exec\")));"
            f"char *f_{name}(void){{return {name};}}")


def each_root(fn):
    for root in ROOTS:
        if os.path.isdir(ROOTS[root]):
            fn(root)


def basic_cases(root):
    fx = Fx(root, "basic")
    fx.lib("libplain.so", "int plain(void){return 1;}")
    fx.lib("libundef.so", "int nowhere(void); int u(void){return nowhere();}")
    fx.lib("dep/libdep.so", "int dep(void){return 1;}")
    fx.lib("libneeds.so", "int dep(void); int n(void){return dep();}", libs=[fx.p("dep/libdep.so")])
    fx.lib("libneeds_rp.so", "int dep(void); int n(void){return dep();}", libs=[fx.p("dep/libdep.so")],
           flags=runpath("$ORIGIN/dep"))
    fx.lib("v1/libv.so", "int vf(void){return 1;}", version_script="V1 { global: vf; local: *; };")
    fx.lib("v2/libv.so", "int vf(void){return 2;}", version_script="V2 { global: vf; local: *; };")
    fx.lib("libneeds_v2.so", "int vf(void); int n(void){return vf();}", libs=[fx.p("v2/libv.so")],
           flags=runpath(fx.p("v1")))
    fx.lib("libcxx.so", "#include <string>\nstd::string s(int x){return std::to_string(x);}", cxx=True)
    fx.lib("liblazyfn.so", "int nosuch_fn(void); int u(void){return nosuch_fn();}", flags=["-Wl,-z,lazy"])
    fx.lib("liblazydata.so", "extern int nosuch_data; int u(void){return nosuch_data;}", flags=["-Wl,-z,lazy"])
    fx.lib("aarch64/libplat.so", "int plat(void){return 1;}")
    fx.lib("libuses_plat.so", "int plat(void); int u(void){return plat();}",
           libs=[fx.p("aarch64/libplat.so")], flags=runpath("$ORIGIN/$PLATFORM"))
    fx.lib("lib/aarch64-linux-gnu/libq.so", "int q(void){return 1;}")
    fx.lib("libuses_lib.so", "int q(void); int u(void){return q();}",
           libs=[fx.p("lib/aarch64-linux-gnu/libq.so")], flags=runpath("$ORIGIN/$LIB"))
    fx.lib("rp/libc3.so", "int c3(void){return 3;}")
    fx.lib("rp/mid/libb.so", "int c3(void); int b(void){return c3();}", libs=[fx.p("rp/libc3.so")])
    fx.lib("rp/liba.so", "int b(void); int a(void){return b();}", libs=[fx.p("rp/mid/libb.so")],
           flags=rpath(fx.p("rp"), fx.p("rp/mid")))
    fx.lib("rn/libc3.so", "int c3(void){return 3;}")
    fx.lib("rn/mid/libb.so", "int c3(void); int b(void){return c3();}", libs=[fx.p("rn/libc3.so")])
    fx.lib("rn/liba.so", "int b(void); int a(void){return b();}", libs=[fx.p("rn/mid/libb.so")],
           flags=runpath(fx.p("rn"), fx.p("rn/mid")))
    fx.write("notelf/libdep.so", b"/* GNU ld script */\nGROUP ( libdep.so.1 )\n" + b" " * 64)
    fx.lib("libneeds_shadowed.so", "int dep(void); int n(void){return dep();}", libs=[fx.p("dep/libdep.so")],
           flags=runpath(fx.p("notelf"), fx.p("dep")))
    fx.lib("pie", "int main(void){return 0;}", pie=True)
    for ps in PAGES:
        for name, target, expect, kw in (
                ("a plain library", fx.p("libplain.so"), "loads", {}),
                ("an undefined symbol", fx.p("libundef.so"), "undefined-symbol", {}),
                ("a NEEDED found nowhere", fx.p("libneeds.so"), "not-found", {}),
                ("a NEEDED through RUNPATH $ORIGIN", fx.p("libneeds_rp.so"), "loads", {}),
                ("a NEEDED through LD_LIBRARY_PATH", fx.p("libneeds.so"), "loads", {"llp": fx.p("dep")}),
                ("a missing version", fx.p("libneeds_v2.so"), "version", {}),
                ("a C++ library (libstdc++ from the cache)", fx.p("libcxx.so"), "loads", {}),
                ("an undefined function under RTLD_LAZY", fx.p("liblazyfn.so"), "loads", {"lazy": True}),
                ("an undefined function under RTLD_NOW", fx.p("liblazyfn.so"), "undefined-symbol", {}),
                ("undefined data under RTLD_LAZY", fx.p("liblazydata.so"), "undefined-symbol", {"lazy": True}),
                ("$PLATFORM is aarch64", fx.p("libuses_plat.so"), "loads", {}),
                ("$LIB is lib/aarch64-linux-gnu", fx.p("libuses_lib.so"), "loads", {}),
                ("RPATH is inherited", fx.p("rp/liba.so"), "loads", {}),
                ("RUNPATH is not inherited", fx.p("rn/liba.so"), "not-found", {}),
                ("a non-ELF file earlier in RUNPATH stops the search", fx.p("libneeds_shadowed.so"),
                 "invalid-elf", {}),
                ("a PIE under dlopen", fx.p("pie"), "pie", {}),
                ("a system library by name", "libstdc++.so.6", "loads", {}),
                ("a name in no directory", "libabiscope-nowhere.so.1", "not-found", {})):
            compare(Load(name, root, target, pagesize=ps, expect=expect, **kw))


def tls_cases(root):
    """Cause 1: static TLS.  aarch64 lays TLS out after the thread pointer
    (TLS_DTV_AT_TP, a 16-byte TCB) and its linker sets no DF_STATIC_TLS:
    initial-exec TLS shows as R_AARCH64_TLS_TPREL64 relocations."""
    fx = Fx(root, "tls")
    sizes = (1000, 1600, 1616, 1624, 1632, 1640, 1648, 1656, 1664, 1672, 1680, 4096, 102400)
    for n in sizes:
        fx.lib(f"libie{n}.so", ie_tls(n, f"ie{n}"))
    for al in (16, 32, 64):
        fx.lib(f"libie_al{al}.so", ie_tls(16, f"ial{al}", align=al))
    fx.lib("libtop1672.so", "char *f_ie1672(void); char *t(void){return f_ie1672();}",
           libs=[fx.p("libie1672.so")], flags=runpath("$ORIGIN"))
    # initial-exec access to another library's TLS: the error names the owner
    fx.lib("own/libowner.so", "__thread char owned[2000]; char *o(void){return owned;}")
    fx.lib("libie_extern.so", "extern __thread char owned[2000] __attribute__((tls_model(\"initial-exec\")));"
           "char *e(void){return owned;}", libs=[fx.p("own/libowner.so")], flags=runpath("$ORIGIN/own"))
    fx.lib("own/libsmallowner.so", "__thread char sowned[200]; char *o(void){return sowned;}")
    fx.lib("libie_extern_small.so", "extern __thread char sowned[200] __attribute__((tls_model(\"initial-exec\")));"
           "char *e(void){return sowned;}", libs=[fx.p("own/libsmallowner.so")], flags=runpath("$ORIGIN/own"))
    # TLS descriptors (the default dialect): static only within the optional surplus
    for n in (400, 600, 102400):
        fx.lib(f"libdesc{n}.so", f"__thread char d{n}[{n}]; char *g(void){{return d{n};}}")
    fx.lib("libie1300.so", ie_tls(1300, "ie1300"))
    fx.lib("libundef_desc.so", "extern __thread int nosuch_tls; int g(void){return nosuch_tls;}",
           flags=["-Wl,-z,lazy"])
    for ps in PAGES:
        def c(name, target, expect=None, **kw):
            compare(Load(name, root, target, pagesize=ps, expect=expect, **kw))
        for n in sizes:
            c(f"{n} bytes of initial-exec TLS", fx.p(f"libie{n}.so"),
              "static-tls" if n >= 4096 else "loads" if n <= 1600 else None)
        for al in (16, 32, 64):
            c(f"16 bytes of initial-exec TLS aligned to {al}", fx.p(f"libie_al{al}.so"),
              "static-tls" if al > 32 else "loads")
        c("a dependency with too much initial-exec TLS: named by the dependency",
          fx.p("libtop1672.so"), "static-tls")
        c("initial-exec access to another library's TLS: the owner's block is taken",
          fx.p("libie_extern.so"), "static-tls")
        c("initial-exec access to another library's small TLS", fx.p("libie_extern_small.so"), "loads")
        c("100 KiB of TLS through descriptors stays dynamic", fx.p("libdesc102400.so"), "loads")
        c("1300 bytes of initial-exec TLS", fx.p("libie1300.so"), "loads")
        c("... after 400 bytes that descriptors took of the optional surplus", fx.p("libie1300.so"),
          "static-tls", preload=[(fx.p("libdesc400.so"), False)])
        c("... after 600 bytes of descriptors, more than the optional surplus", fx.p("libie1300.so"),
          "loads", preload=[(fx.p("libdesc600.so"), False)])
        c("1672 bytes with glibc.rtld.optional_static_tls=1024", fx.p("libie1672.so"), "loads",
          tunables="glibc.rtld.optional_static_tls=1024")
        c("1000 bytes with glibc.rtld.nns=1", fx.p("libie1000.so"), "static-tls", tunables="glibc.rtld.nns=1")
        c("1672 bytes under RTLD_LAZY", fx.p("libie1672.so"), "static-tls", lazy=True)
        c("an undefined TLS descriptor under RTLD_LAZY (bound at load)", fx.p("libundef_desc.so"),
          "undefined-symbol", lazy=True)


def reloc_cases(root):
    """Cause 2: relocation types glibc's aarch64 elf_machine_rela refuses."""
    fx = Fx(root, "reloc")
    src = "extern int ext_data; int *p(void){return &ext_data;} int call(void); int c(void){return call();}"
    fx.lib("dep/libext.so", "int ext_data = 1; int call(void){return 2;}")
    variants = (("abs32", ".rela.dyn", 1025, 258, "loads", "loads"),
                ("abs16", ".rela.dyn", 1025, 259, "bad-reloc", "bad-reloc"),
                ("prel32", ".rela.dyn", 1025, 261, "bad-reloc", "bad-reloc"),
                ("type7f", ".rela.dyn", 1025, 0x7f, "bad-reloc", "bad-reloc"),
                ("type409", ".rela.dyn", 1025, 0x409, "bad-reloc", "bad-reloc"),
                ("plt_globdat", ".rela.plt", 1026, 1025, "loads", "bad-plt-reloc"),
                ("plt_abs16", ".rela.plt", 1026, 259, "bad-reloc", "bad-plt-reloc"))
    for v, sec, old, new, _, _ in variants:
        fx.lib(f"lib{v}.so", src, libs=[fx.p("dep/libext.so")], flags=runpath("$ORIGIN/dep") + ["-Wl,-z,lazy"])
        set_reloc_type(fx.host(f"lib{v}.so"), sec, old, new)
    fx.lib("libifunc.so", "static int one(void){return 1;} static void *r(void){return (void*)one;}"
           "int f(void) __attribute__((ifunc(\"r\")));")
    # DT_AARCH64_VARIANT_PCS: a vector-PCS function's PLT slot is bound at load even lazily
    fx.lib("libvpcs.so", "__attribute__((aarch64_vector_pcs)) void vfn(void); void u(void){vfn();}",
           flags=["-Wl,-z,lazy"])
    fx.lib("libplainpcs.so", "void pfn(void); void u(void){pfn();}", flags=["-Wl,-z,lazy"])
    for ps in PAGES:
        for v, sec, old, new, now, lazy in variants:
            for is_lazy, want in ((False, now), (True, lazy)):
                compare(Load(f"{sec} type {old} made {new:#x}{' (RTLD_LAZY)' if is_lazy else ''}", root,
                             fx.p(f"lib{v}.so"), pagesize=ps, lazy=is_lazy, expect=want))
        compare(Load("an IFUNC (R_AARCH64_IRELATIVE)", root, fx.p("libifunc.so"), pagesize=ps, expect="loads"))
        compare(Load("an undefined vector-PCS function under RTLD_LAZY (bound at load)", root, fx.p("libvpcs.so"),
                     pagesize=ps, lazy=True, expect="undefined-symbol"))
        compare(Load("an undefined plain function under RTLD_LAZY", root, fx.p("libplainpcs.so"), pagesize=ps,
                     lazy=True, expect="loads"))


def hwcap_cases(root):
    """Cause 3: the legacy hwcap subdirectories (glibc <= 2.36): atomics
    (AT_HWCAP bit 0x100), the platform aarch64 and tls, in every directory."""
    fx = Fx(root, "hwcaps")
    for sub in ("atomics", "tls", "aarch64", "tls/aarch64/atomics", "aarch64/atomics"):
        tag = sub.replace("/", "_")
        fx.lib(f"{tag}/{sub}/libhw.so", f"int hw(void){{return 1;}} int hw_{tag}(void){{return 1;}}",
               soname="libhw.so")
        fx.lib(f"{tag}/libhw.so", "int hw(void){return 0;}", soname="libhw.so")
        fx.lib(f"libneeds_{tag}.so", f"int hw_{tag}(void); int u(void){{return hw_{tag}();}}",
               libs=[fx.p(f"{tag}/{sub}/libhw.so")], flags=runpath(fx.p(tag)))
    for ps in PAGES:
        for sub in ("atomics", "tls", "aarch64", "tls/aarch64/atomics", "aarch64/atomics"):
            tag = sub.replace("/", "_")
            compare(Load(f"the legacy subdirectory {sub}/ of a RUNPATH directory", root,
                         fx.p(f"libneeds_{tag}.so"), pagesize=ps,
                         expect={"2.36": "loads", "2.41": "undefined-symbol"}))
        compare(Load("glibc.cpu.hwcap_mask=0 drops atomics/", root, fx.p("libneeds_atomics.so"), pagesize=ps,
                     tunables="glibc.cpu.hwcap_mask=0", expect="undefined-symbol"))


def hwcap_cache_root(root):
    """A hard-link copy of the root whose ld.so.cache has a legacy hwcap
    entry: /opt/hwc/lib in ld.so.conf.d, libhwc.so there and in its atomics/
    subdirectory, the cache made by the root's own ldconfig (oracle mode; check
    mode uses the copy an oracle run left, or skips)."""
    base = ROOTS[root]
    copy = base + "-hwcache"
    if MODE != "oracle":
        return copy if os.path.isdir(copy) else None
    if os.path.exists(copy):
        shutil.rmtree(copy)
    sh(["cp", "-al", base, copy])
    shutil.rmtree(copy + CASES_DIR, ignore_errors=True)
    return copy


def hwcap_cache_cases(root):
    """Cause 3, the cache: an ld.so.cache entry with hwcap bit 0x100
    (atomics) is preferred by glibc <= 2.36 and skipped by 2.37 and later."""
    copy = hwcap_cache_root(root)
    if copy is None:
        report(None, f"[fixtures glibc {root}] ld.so.cache hwcap entries",
               "no hwcap cache root: make test-aarch64 makes it")
        return
    fx = Fx(root, "hwcache", rootdir=copy)
    if MODE == "oracle":
        lib = copy + "/opt/hwc/lib"
        os.makedirs(lib + "/atomics", exist_ok=True)
        with open(copy + "/etc/ld.so.conf.d/abiscope-hwc.conf", "w") as f:
            f.write("/opt/hwc/lib\n")
        fx.lib("src/plain/libhwc.so", "int hw(void){return 0;}", soname="libhwc.so")
        fx.lib("src/atomics/libhwc.so", "int hw(void){return 1;} int hw_atomics(void){return 1;}",
               soname="libhwc.so")
        shutil.copy(fx.host("src/plain/libhwc.so"), lib + "/libhwc.so")
        shutil.copy(fx.host("src/atomics/libhwc.so"), lib + "/atomics/libhwc.so")
        p = run_in_root(copy, "/", ["/sbin/ldconfig"])
        if p.returncode:
            report(False, f"[fixtures glibc {root}] ldconfig in the hwcap cache root", p.stderr)
            return
    else:
        fx.lib("src/plain/libhwc.so", "int hw(void){return 0;}", soname="libhwc.so")
        fx.lib("src/atomics/libhwc.so", "int hw(void){return 1;} int hw_atomics(void){return 1;}",
               soname="libhwc.so")
    fx.lib("libneeds_hwc.so", "int hw_atomics(void); int u(void){return hw_atomics();}",
           libs=[fx.p("src/atomics/libhwc.so")])
    for ps in PAGES:
        compare(Load("an ld.so.cache entry for atomics/ (hwcap 0x100)", root, fx.p("libneeds_hwc.so"),
                     pagesize=ps, rootdir=copy, expect={"2.36": "loads", "2.41": "undefined-symbol"}))
        compare(Load("... with glibc.cpu.hwcap_mask=0", root, fx.p("libneeds_hwc.so"), pagesize=ps,
                     rootdir=copy, tunables="glibc.cpu.hwcap_mask=0", expect="undefined-symbol"))
        compare(Load("... dlopen(\"libhwc.so\") by name", root, "libhwc.so", pagesize=ps, rootdir=copy,
                     expect="loads"))


def page_cases(root):
    """Cause 4: a library linked for 4 KiB pages on a kernel with 16 or 64 KiB."""
    fx = Fx(root, "pages")
    for mp in (4096, 16384, 65536):
        fx.lib(f"libmp{mp}.so", "int f(void){return 1;} int data[64] = {1};",
               flags=[f"-Wl,-z,max-page-size={mp}", f"-Wl,-z,common-page-size={mp}"])
    fx.lib("libtop_on4k.so", "int f(void); int t(void){return f();}", libs=[fx.p("libmp4096.so")],
           flags=runpath("$ORIGIN"))
    for ps in (4096, 16384, 65536):
        for mp in (4096, 16384, 65536):
            compare(Load(f"linked for {mp // 1024} KiB pages", root, fx.p(f"libmp{mp}.so"), pagesize=ps,
                         expect="loads" if mp >= ps else "page-aligned",
                         setname=f"fixtures glibc {root} {ps // 1024}k"))
        compare(Load("a dependency linked for 4 KiB pages", root, fx.p("libtop_on4k.so"), pagesize=ps,
                     expect="loads" if ps == 4096 else "page-aligned",
                     setname=f"fixtures glibc {root} {ps // 1024}k"))


def cwd_cases(root):
    """--root's working directory: relative names resolve against the cwd in the root."""
    fx = Fx(root, "cwd")
    fx.lib("here/librel.so", "int rel(void){return 1;}")
    fx.lib("libneeds_rel.so", "int rel(void); int u(void){return rel();}", libs=[fx.p("here/librel.so")])
    for ps in PAGES:
        for cwd, want in ((fx.p("here"), "loads"), ("/", "not-found")):
            compare(Load(f"dlopen(\"./librel.so\") from {cwd}", root, "./librel.so", pagesize=ps, cwd=cwd,
                         expect=want))
        compare(Load("LD_LIBRARY_PATH=. from the library's directory", root, fx.p("libneeds_rel.so"),
                     pagesize=ps, cwd=fx.p("here"), llp=".", expect="loads"))
        compare(Load("an empty LD_LIBRARY_PATH element is the cwd", root, fx.p("libneeds_rel.so"),
                     pagesize=ps, cwd=fx.p("here"), llp=":/nonexistent", expect="loads"))


def python_cases(root):
    """An extension module that takes its symbols from the interpreter."""
    if not os.path.exists(ROOTS[root] + PYTHON):
        return
    fx = Fx(root, "python")
    fx.lib("ext.so", "void *PyLong_FromLong(long); void *PyInit_ext(void){return PyLong_FromLong(1);}")
    fx.lib("ext_bad.so", "void *PyLong_FromLongAndMore(long);"
           "void *PyInit_ext_bad(void){return PyLong_FromLongAndMore(1);}")
    for ps in PAGES:
        compare(Load("an extension module in python3.11", root, fx.p("ext.so"), pagesize=ps, process=PYTHON,
                     expect="loads"))
        compare(Load("... and in a process without the interpreter's symbols", root, fx.p("ext.so"),
                     pagesize=ps, expect="undefined-symbol"))
        compare(Load("an extension module whose symbol python lacks", root, fx.p("ext_bad.so"), pagesize=ps,
                     process=PYTHON, expect="undefined-symbol"))


def fixture_suite():
    for fn in (basic_cases, tls_cases, reloc_cases, hwcap_cases, hwcap_cache_cases, page_cases, cwd_cases,
               python_cases):
        each_root(fn)
    sha256_on_arm()


def sha256_on_arm():
    """abiscope's SHA-256 (src/core/sha256.c) built for aarch64 and run under
    qemu: its unit test, whose vectors are NIST's and whose accelerated path
    (ARMv8's SHA2 instructions, what NVIDIA Grace runs) is held to the
    portable code.  A live run only: it needs qemu, not the roots."""
    if MODE != "oracle":
        return
    tmp = tempfile.mkdtemp(prefix="abiscope-sha-")
    out = os.path.join(tmp, "test_sha256")
    try:
        sh([CC, "-std=c11", "-D_GNU_SOURCE", "-O2", "-Wall", "-Wextra", "-Werror", "-static",
            "-I" + os.path.join(TOP, "src"), "-I" + os.path.join(TOP, "tests", "unit"), "-o", out,
            os.path.join(TOP, "tests", "unit", "test_sha256.c"), os.path.join(TOP, "src", "core", "sha256.c")])
        p = subprocess.run(["/usr/bin/qemu-aarch64-static", out], capture_output=True, text=True, timeout=300)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        report(False, "sha256 built for aarch64 and run under qemu", str(e))
        return
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines = p.stdout.splitlines()
    report("# sha256 runs: ARMv8 SHA2 instructions" in lines,
           "aarch64: sha256 runs the ARMv8 SHA2 instructions where the CPU has them (qemu's does)", p.stdout[-2000:])
    bad = [l for l in lines if l.startswith("not ok")]
    report(p.returncode == 0 and not bad and any(l.startswith("ok - the SHA instructions") for l in lines),
           "aarch64: sha256's unit test passes (NIST vectors, the instructions against the portable code)",
           p.stdout[-2000:] + p.stderr[-1000:])


# ---------------------------------------------------------------- system libraries

def soname_of(path):
    """DT_SONAME of an aarch64 ELF64 little-endian object, or None (via readelf)."""
    p = subprocess.run([os.path.join(ARM, "bin", "aarch64-linux-gnu-readelf"), "-d", path],
                       capture_output=True, text=True)
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", p.stdout)
    return m.group(1) if m else None


def system_suite():
    """Every shared object of each root, dlopen()ed alone with RTLD_NOW: by
    path (the multiarch directory and its subdirectories: gconv, engines...),
    by its SONAME as a bare name (the cache), and python's lib-dynload
    extension modules in the root's python3.11."""
    skip = ("libasan", "libtsan", "liblsan", "libubsan", "libhwasan", "libmemusage", "libpcprofile",
            "libSegFault")
    for root, rdir in ROOTS.items():
        if not os.path.isdir(rdir):
            continue
        loads = []
        top = "/usr/lib/aarch64-linux-gnu"
        for d, _, names in sorted(os.walk(rdir + top)):
            for name in sorted(names):
                p = d[len(rdir):] + "/" + name
                if ".so" not in name or os.path.islink(rdir + p) or not os.path.isfile(rdir + p) \
                        or name.startswith(skip):
                    continue
                loads.append((p, p, DLO))
                so = soname_of(rdir + p) if d == rdir + top else None
                if so and so != name:
                    loads.append((f"{so} (by name)", so, DLO))
        dyn = "/usr/lib/python3.11/lib-dynload"
        if os.path.isdir(rdir + dyn) and os.path.exists(rdir + PYTHON):
            for name in sorted(os.listdir(rdir + dyn)):
                if name.endswith(".so"):
                    loads.append((f"{dyn}/{name} in python3.11", f"{dyn}/{name}", PYTHON))
        for ps in PAGES:
            for name, target, proc in loads:
                compare(Load(name, root, target, pagesize=ps, process=proc,
                             setname=f"system glibc {root} {ps // 1024}k"))


# ---------------------------------------------------------------- wheels

def wheels_root(sites):
    """root-wheels: a hard-link copy of the glibc 2.36 root with each SITE
    (a folder aarch64 wheels were installed into: uv pip install
    --python-platform aarch64-manylinux_2_28 --target SITE) hard-linked at
    /opt/site (the first), /opt/site2, ...  Oracle mode makes it afresh;
    check mode uses the one an oracle run left."""
    copy = ROOTS["2.36"] + "-wheels"
    if MODE != "oracle":
        return copy if os.path.isdir(copy + "/opt") else None
    if os.path.exists(copy):
        shutil.rmtree(copy)
    sh(["cp", "-al", ROOTS["2.36"], copy])
    shutil.rmtree(copy + CASES_DIR, ignore_errors=True)
    os.makedirs(copy + "/opt")
    for i, site in enumerate(sites):
        sh(["cp", "-al", os.path.abspath(site), f"{copy}/opt/site{i + 1 if i else ''}"])
    return copy


def wheels_suite(sites):
    """Every shared object the wheels installed, dlopen()ed in the root's
    python3.11 (pydlo.py: RTLD_NOW|RTLD_LOCAL, as an import does): alone, and
    the extension modules of other packages again after `import torch`
    (libtorch_global_deps.so RTLD_GLOBAL, then torch._C), at 4 and 64 KiB pages."""
    copy = wheels_root(sites)
    if copy is None:
        report(None, "[wheels] aarch64 wheels in the root's python", "no wheels root: "
               "tests/diff/aarch64.py oracle wheels SITE makes it")
        return
    objs = []
    for site in sorted(os.listdir(copy + "/opt")):
        top = f"{copy}/opt/{site}"
        for d, dirs, names in os.walk(top):
            dirs.sort()
            for name in sorted(names):
                p = os.path.join(d, name)
                if (name.endswith(".so") or ".so." in name) and os.path.isfile(p) and not os.path.islink(p):
                    objs.append(p[len(copy):])
    torch_c = next((o for o in objs if re.search(r"/torch/_C\.cpython-[^/]*\.so$", o)), None)
    glob = next((o for o in objs if o.endswith("/torch/lib/libtorch_global_deps.so")), None)
    after_torch = [(glob, True), (torch_c, False)] if torch_c and glob else None
    for ps in PAGES:
        setname = f"wheels glibc 2.36 {ps // 1024}k"
        for o in objs:
            rel = o[len("/opt/"):]
            compare(Load(rel, "2.36", o, pagesize=ps, process=PYTHON, rootdir=copy, setname=setname))
            is_module = ".cpython-" in o or o.endswith(".abi3.so")
            if after_torch and is_module and not o.startswith(("/opt/site/torch/", "/opt/site/nvidia/")):
                compare(Load(rel + " after import torch", "2.36", o, pagesize=ps, process=PYTHON, rootdir=copy,
                             preload=after_torch, setname=setname))


# ---------------------------------------------------------------- main

def root_tag(rootdir):
    """A root's name in the goldens: its directory's name under ABISCOPE_ARM_DIR."""
    return os.path.basename(rootdir.rstrip("/"))


def load_goldens():
    """Two kinds of lines: a load ({"key", "real", "root", "files"}) and a
    file it depends on ({"root", "path", "sha"}: 64 bits of its sha256)."""
    if os.path.exists(GOLDEN):
        with open(GOLDEN) as f:
            for line in f:
                if not line.strip():
                    continue
                g = json.loads(line)
                if "key" in g:
                    goldens[g["key"]] = g
                else:
                    golden_files[(g["root"], g["path"])] = g["sha"]


def write_goldens(suites):
    prefixes = tuple(s + " " for s in suites)
    keep = {k: g for k, g in goldens.items() if not k.startswith(prefixes)}
    keep.update(recorded)
    files = dict(golden_files)
    files.update(recorded_files)
    used = {(g["root"], p) for g in keep.values() for p in g["files"]}
    used |= {(r, p) for r, p in files if p in BASE_FILES}
    with open(GOLDEN, "w") as f:
        for k in sorted(keep):
            f.write(json.dumps(keep[k], sort_keys=True) + "\n")
        for r, p in sorted(used):
            f.write(json.dumps({"root": r, "path": p, "sha": files.get((r, p))}, sort_keys=True) + "\n")
    print(f"# {len(recorded)} answers recorded in {os.path.relpath(GOLDEN, TOP)}")


def main():
    global MODE
    args = sys.argv[1:]
    if not args or args[0] not in ("check", "oracle"):
        print(__doc__)
        return 2
    MODE = args.pop(0)
    record = "--record" in args
    args = [a for a in args if a != "--record"]
    sites = []
    if "wheels" in args:
        i = args.index("wheels")
        sites = [a for a in args[i + 1:] if a not in ("fixtures", "system")]
        args = [a for a in args if a not in sites]
    suites = args or ["fixtures"]
    missing = [p for p in (CC, ROOTS["2.36"], ROOTS["2.41"]) if not os.path.exists(p)]
    if missing:
        print(f"ok - aarch64 differential # SKIP no aarch64 oracle ({', '.join(missing)}): "
              "make aarch64-oracle builds it (as root, network)")
        return 0
    unwritable = [r for r in ROOTS.values() if not os.access(r, os.W_OK)]
    if unwritable and "fixtures" in suites:
        print(f"ok - aarch64 differential # SKIP the fixtures are built into the roots, and "
              f"{', '.join(unwritable)} is not writable by this user")
        return 0
    if MODE == "oracle" and os.geteuid() != 0:
        print("not ok - aarch64 oracle: the real loader runs chrooted into the root: run as root")
        return 1
    load_goldens()
    for s in suites:
        {"fixtures": fixture_suite, "system": system_suite, "wheels": lambda: wheels_suite(sites)}[s]()
    if MODE == "oracle" and record:
        write_goldens(suites)
    for name in sorted(sets):
        n, agree, disagree, skipped, noanswer = sets[name]
        print(f"# agreement {name}: {n} cases, {agree} agree, {disagree} disagree"
              f"{f', {skipped} skipped' if skipped else ''}"
              f"{f', {noanswer} without an answer (the real process died first)' if noanswer else ''}")
    print(f"# aarch64 {MODE}: {results['ok']} ok, {results['fail']} failed, {results['skip']} skipped")
    print(f"{results['ok']} passed, {results['fail']} failed")
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
