#!/usr/bin/env python3
"""Differential tests: the real loader is the oracle.

Every case builds tiny shared objects from C source at test time, then runs
the same request twice: for real through tests/tools/dlopen_driver, and as a
prediction through `abiscope why --json --process dlopen_driver`.  The two
must agree on whether the target loads and on the exact dlerror() text; the
first finding's id must name the same kind of failure; and each case states
what it expects, so a case cannot silently stop testing what it is for.

    differential.py fixtures            the built cases
    differential.py system DIR...       every shared library in DIR

Output is one "ok - NAME" / "not ok - NAME" line per check (plus "skip").
"""
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

ABISCOPE = os.environ.get("ABISCOPE", "./abiscope")
BUILD = os.environ.get("BUILD", "build")
DRIVER = os.path.join(BUILD, "tools", "dlopen_driver")
WORK = os.path.join(BUILD, "diff")
CC = os.environ.get("FIXTURE_CC", "cc")

results = {"ok": 0, "fail": 0, "skip": 0}
# The assertion text carries a source line number that differs by release.
ASSERT_RE = re.compile(r"([\w./-]+\.[ch]): ([0-9]+: )?")


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


def sh(cmd, cwd=None, check=True):
    p = subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"command failed: {cmd}\n{p.stdout}{p.stderr}")
    return p


def id_of_error(err, target_is_foreign=False):
    """The abiscope finding id that a dlerror() text corresponds to."""
    if err is None:
        return None
    if "cannot open shared object file" in err:
        return "wrong-elf" if target_is_foreign else "library-not-found"
    if "wrong ELF class" in err:
        return "wrong-elf"
    if "undefined symbol" in err:
        return "undefined-symbol"
    if "version `" in err and "not found" in err:
        return "version-not-found"
    for s in ("invalid ELF header", "file too short", "cannot read file data", "not little-endian",
              "OS ABI invalid", "ABI version invalid", "padding in e_ident", "version does not match",
              "only ET_DYN", "phentsize"):
        if s in err:
            return "invalid-elf"
    if "Inconsistency detected by ld.so" in err:
        return "no-version-information" if "dl-lookup.c" in err else "corrupt-elf"
    if re.search(r"unsupported version [0-9]+ of Ver(need|def) record", err):
        return "corrupt-elf"
    if re.search(r"unexpected (PLT )?reloc type 0x", err):
        return "corrupt-elf"
    if "static TLS" in err:
        return "static-tls-exhausted"
    if "executable stack" in err:
        return "executable-stack"
    return "cannot-load"


def run_pair(name, target, preload=(), lazy=False, env=None, cwd=None, as_user=None, expect=None,
             driver=None, foreign=False, abiscope=None, noload=False, deepbind=False, from_obj=None,
             exit_code=None,
             meaning=None, assumption=None, died=False):
    """Runs the oracle and the prediction and compares them.

    The driver leaves its result file empty when the process never started
    (the loader refused the executable: its stderr is the verdict), and
    "started" when it died during a load (a constructor).  exit_code: the
    status abiscope must exit with; meaning / assumption: text its
    "target_meaning" / one of its "assumptions" must contain; died: the
    real process is expected to die in a constructor, which abiscope
    cannot run: then it must name the symbol it died on in an assumption.
    """
    driver = driver or DRIVER
    env2 = dict(os.environ)
    env2.pop("LD_LIBRARY_PATH", None)
    env2.pop("LD_BIND_NOW", None)
    if env:
        env2.update(env)
    out = tempfile.NamedTemporaryFile(prefix="abiscope-drv-", suffix=".json", delete=False)
    out.close()
    os.chmod(out.name, 0o666)
    prefix = []
    if as_user is not None:
        prefix = ["setpriv", f"--reuid={as_user}", f"--regid={as_user}", "--clear-groups"]
    args = []
    for path, glob in preload:
        args += ["--preload-global" if glob else "--preload", path]
    if lazy:
        args.append("--lazy")
    if noload:
        args.append("--noload")
    if deepbind:
        args.append("--deepbind")
    if from_obj:
        args += ["--from", from_obj]
    real = subprocess.run(prefix + [os.path.abspath(driver), "--out", out.name] + args + [target],
                          env=env2, cwd=cwd, capture_output=True, text=True, timeout=60)
    with open(out.name) as f:
        content = f.read()
    died_in_load = None
    try:
        if not content:
            # the loader refused the executable before main(): its message is the verdict
            r = {"preloads": [], "loads": False, "error": real.stderr.rstrip("\n"), "not_started": True}
        else:
            r = json.loads(content)
    except (OSError, ValueError):
        # glibc <= 2.40 aborts the process on a versioned reference to an
        # object without version information: that is the verdict too.
        line = next((l for l in real.stderr.splitlines() if "Inconsistency detected by ld.so" in l), None)
        if not line and not died and real.returncode < 0:
            # the loader read or wrote outside the object (a corrupt table): SIGSEGV, SIGFPE
            r = {"preloads": [], "loads": False, "error": None, "crashed": True, "signal": -real.returncode}
        elif not line and died:
            died_in_load = real.stderr.strip()
            r = {"preloads": [], "loads": None, "error": None}
        elif not line:
            report(False, name, f"driver produced no result (status {real.returncode})\n{real.stderr}")
            os.unlink(out.name)
            return None
        if line:
            r = {"preloads": [], "loads": False, "error": ASSERT_RE.sub(r"\1: ", line)}
    finally:
        if os.path.exists(out.name):
            os.unlink(out.name)
    if r.get("error") and "Inconsistency detected" in r["error"]:
        r["error"] = ASSERT_RE.sub(r"\1: ", r["error"])
    pred = subprocess.run(prefix + [os.path.abspath(abiscope or ABISCOPE), "why", "--json", "--process",
                                    os.path.abspath(driver)] + args + [target],
                          env=env2, cwd=cwd, capture_output=True, text=True, timeout=120)
    try:
        a = json.loads(pred.stdout)
    except ValueError:
        report(False, name, f"abiscope produced no JSON (status {pred.returncode})\n{pred.stderr}")
        return None
    if a.get("error") and "Inconsistency detected" in a["error"]:
        a["error"] = ASSERT_RE.sub(r"\1: ", a["error"])
    problems = []
    if died_in_load is not None or died:
        m = re.search(r"undefined symbol: (\S+)", died_in_load or "")
        first = next((f for f in a["findings"] if f.get("first_error")), None)
        if died_in_load is None:
            problems.append("the real process was meant to die in a constructor; it did not")
        elif died == "assumed":
            # a call abiscope cannot see: the assumption must name the symbol
            if not m or not any(m.group(1) in x for x in a.get("assumptions", [])):
                problems.append(f"the real process died ({died_in_load}); abiscope's assumptions do not "
                                f"name it: {a.get('assumptions')}")
        elif a["loads"] is not False or not first or not first.get("process_dies") or \
                a.get("error") != died_in_load.splitlines()[-1]:
            # a direct call from the constructor: abiscope must say the process dies, in ld.so's words
            problems.append(f"the real process died: {died_in_load}\n  abiscope: loads {a['loads']}, error "
                            f"{a.get('error')}, first error {first and first.get('id')} process_dies "
                            f"{first and first.get('process_dies')}")
        if assumption and not any(assumption in x for x in a.get("assumptions", [])):
            problems.append(f"no assumption mentions {assumption!r}: {a.get('assumptions')}")
        report(not problems, name, "\n".join(problems))
        return a
    if a["loads"] != r["loads"]:
        problems.append(f"loads: real {r['loads']}, abiscope {a['loads']}")
    if a["error"] != r["error"]:
        problems.append(f"error:\n  real     {r['error']}\n  abiscope {a['error']}")
    for i, p in enumerate(r["preloads"]):
        ap = a["preloads"][i] if i < len(a["preloads"]) else None
        if not ap or ap["loads"] != p["loads"] or ap["error"] != p["error"]:
            problems.append(f"preload {p['path']}: real {p['error']}, abiscope {ap and ap['error']}")
    rf = r.get("from")
    if rf:
        af = a.get("from") or {}
        if af.get("loads") != rf["loads"] or af.get("error") != rf["error"]:
            problems.append(f"caller {rf['path']}: real {rf['error']}, abiscope {af.get('error')}")
    first = next((f for f in a["findings"] if f.get("first_error")), None)
    want_id = id_of_error(r["error"], foreign)
    if r.get("crashed"):
        want_id = "corrupt-elf"
        if not (first and first.get("process_dies")):
            problems.append(f"the real process died of signal {r['signal']}; abiscope's first error does not "
                            "say it dies")
    if r.get("not_started"):
        want_id = "process-cannot-start"
    elif noload and not r["loads"] and r["error"] is None:
        want_id = "not-loaded-noload"
    if r.get("not_started") and not a.get("process_cannot_start"):
        problems.append("the real process cannot start; abiscope does not say so")
    if want_id and (not first or first["id"] != want_id):
        problems.append(f"first error id: expected {want_id}, abiscope {first and first['id']}")
    if exit_code is not None:
        if pred.returncode != exit_code:
            problems.append(f"exit status {pred.returncode}, expected {exit_code}")
    elif r["loads"] and pred.returncode != 0:
        problems.append(f"exit status {pred.returncode} for a target that loads")
    elif not r["loads"] and pred.returncode != 1:
        problems.append(f"exit status {pred.returncode} for a target that does not load")
    if meaning and meaning not in (a.get("target_meaning") or ""):
        problems.append(f"target_meaning does not say {meaning!r}: {a.get('target_meaning')}")
    if assumption and not any(assumption in x for x in a.get("assumptions", [])):
        problems.append(f"no assumption mentions {assumption!r}: {a.get('assumptions')}")
    if expect is not None:
        got = "loads" if r["loads"] else want_id
        if got != expect:
            problems.append(f"the case is meant to show {expect}, the real loader says {got}: "
                            f"{r['error']}")
    report(not problems, name, "\n".join(problems))
    return a


# ---------------------------------------------------------------- fixtures

class Fx:
    """A fixture directory and the helpers to build objects in it."""

    def __init__(self, name):
        self.dir = os.path.abspath(os.path.join(WORK, name))
        if os.path.exists(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)

    def p(self, rel):
        return os.path.join(self.dir, rel)

    def lib(self, rel, src, soname=None, flags=(), libs=(), version_script=None, cc_flags=()):
        """Builds DIR/rel from C source."""
        out = self.p(rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        c = out + ".c"
        with open(c, "w") as f:
            f.write(src)
        cmd = [CC, "-shared", "-fPIC", "-o", out, c] + list(cc_flags)
        if soname is not False:
            cmd.append(f"-Wl,-soname,{soname or os.path.basename(rel)}")
        if version_script:
            vs = out + ".map"
            with open(vs, "w") as f:
                f.write(version_script)
            cmd.append(f"-Wl,--version-script={vs}")
        cmd += list(flags) + list(libs)
        sh(cmd)
        return out

    def write(self, rel, data, mode=None):
        out = self.p(rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(out, mode)
        return out

    def patch(self, rel, offset, value):
        with open(self.p(rel), "r+b") as f:
            f.seek(offset)
            f.write(bytes([value]))


def rpath(*dirs):
    return [f"-Wl,--disable-new-dtags,-rpath,{':'.join(dirs)}"]


def runpath(*dirs):
    return [f"-Wl,--enable-new-dtags,-rpath,{':'.join(dirs)}"]


def real_platform():
    """The $PLATFORM the real loader expands, read from its LD_DEBUG search path."""
    env = dict(os.environ, LD_DEBUG="libs", LD_LIBRARY_PATH="/nonexistent-abiscope/$PLATFORM")
    out = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True).stderr
    m = re.search(r"/nonexistent-abiscope/([^/:\s]+)", out)
    return m.group(1) if m else os.uname().machine


def have_m32():
    try:
        d = tempfile.mkdtemp()
        c = os.path.join(d, "t.c")
        open(c, "w").write("int f(void){return 0;}\n")
        ok = subprocess.run([CC, "-m32", "-shared", "-fPIC", "-o", os.path.join(d, "t.so"), c],
                            capture_output=True).returncode == 0
        shutil.rmtree(d)
        return ok
    except OSError:
        return False


def fixture_cases():
    # -- search order -------------------------------------------------
    fx = Fx("rpath-inherited")
    fx.lib("deps/libc3.so", "int c3(void){return 3;}")
    fx.lib("mid/libb.so", "int c3(void); int b(void){return c3();}",
           libs=[fx.p("deps/libc3.so")])
    fx.lib("top/liba.so", "int b(void); int a(void){return b();}",
           libs=[fx.p("mid/libb.so")], flags=rpath(fx.p("deps"), fx.p("mid")))
    run_pair("rpath of the requester's loader is inherited", fx.p("top/liba.so"), expect="loads")

    fx = Fx("runpath-not-inherited")
    fx.lib("deps/libc3.so", "int c3(void){return 3;}")
    fx.lib("mid/libb.so", "int c3(void); int b(void){return c3();}",
           libs=[fx.p("deps/libc3.so")])
    fx.lib("top/liba.so", "int b(void); int a(void){return b();}",
           libs=[fx.p("mid/libb.so")], flags=runpath(fx.p("deps"), fx.p("mid")))
    run_pair("runpath is not inherited by dependencies", fx.p("top/liba.so"),
             expect="library-not-found")

    fx = Fx("runpath-blocks-rpath")
    fx.lib("deps/libc3.so", "int c3(void){return 3;}")
    fx.lib("mid/libb.so", "int c3(void); int b(void){return c3();}",
           libs=[fx.p("deps/libc3.so")], flags=runpath("/nonexistent"))
    fx.lib("top/liba.so", "int b(void); int a(void){return b();}",
           libs=[fx.p("mid/libb.so")], flags=rpath(fx.p("deps"), fx.p("mid")))
    run_pair("a requester with RUNPATH ignores inherited RPATH", fx.p("top/liba.so"),
             expect="library-not-found")

    fx = Fx("rpath-and-runpath")
    fx.lib("deps/libc3.so", "int c3(void){return 3;}")
    fx.lib("top/liba.so", "int c3(void); int a(void){return c3();}", libs=[fx.p("deps/libc3.so")],
           flags=["-Wl,--enable-new-dtags,-rpath,/nonexistent", "-Wl,-z,origin"])
    # give liba both tags: RPATH is dropped when RUNPATH is present
    sh(["patchelf", "--force-rpath", "--set-rpath", fx.p("deps"), fx.p("top/liba.so")], check=False)
    run_pair("RPATH and RUNPATH in one object", fx.p("top/liba.so"))

    fx = Fx("llp-order")
    fx.lib("one/libdep.so", "int dep(void){return 1;} int only_in_one(void){return 1;}")
    fx.lib("two/libdep.so", "int dep(void){return 2;}")
    fx.lib("top/liba.so", "int only_in_one(void); int a(void){return only_in_one();}",
           libs=[fx.p("one/libdep.so")])
    run_pair("LD_LIBRARY_PATH order decides which copy loads", fx.p("top/liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('two')}:{fx.p('one')}"}, expect="undefined-symbol")
    run_pair("LD_LIBRARY_PATH in the other order", fx.p("top/liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('one')};{fx.p('two')}"}, expect="loads")
    run_pair("empty LD_LIBRARY_PATH element is the current directory", fx.p("top/liba.so"),
             env={"LD_LIBRARY_PATH": ":/nonexistent"}, cwd=fx.p("one"), expect="loads")
    run_pair("LD_LIBRARY_PATH with $ORIGIN of the executable", fx.p("top/liba.so"),
             env={"LD_LIBRARY_PATH": "$ORIGIN/../diff/llp-order/one"}, expect="loads")

    fx = Fx("origin")
    fx.lib("lib/libdep.so", "int dep(void){return 1;}")
    fx.lib("bin/liba.so", "int dep(void); int a(void){return dep();}", libs=[fx.p("lib/libdep.so")],
           flags=runpath("$ORIGIN/../lib"))
    run_pair("$ORIGIN in RUNPATH", fx.p("bin/liba.so"), expect="loads")
    os.symlink(fx.p("bin/liba.so"), fx.p("link.so"))
    run_pair("$ORIGIN of an object opened through a symlink is the link's directory",
             fx.p("link.so"), expect="library-not-found")
    fx.lib("lib/x86_64-linux-gnu/libq.so", "int q(void){return 1;}")
    fx.lib("libuse_lib.so", "int q(void); int u(void){return q();}",
           libs=[fx.p("lib/x86_64-linux-gnu/libq.so")], flags=runpath("$ORIGIN/$LIB"))
    run_pair("$LIB expands as the installed glibc does", fx.p("libuse_lib.so"), expect="loads")
    # $PLATFORM is the CPU's (glibc picks "haswell" or "xeon_phi" on CPUs
    # with those features, else AT_PLATFORM): ask the real loader which.
    plat = real_platform()
    fx.lib(plat + "/libp.so", "int pp(void){return 1;}")
    fx.lib("libuse_plat.so", "int pp(void); int u(void){return pp();}",
           libs=[fx.p(plat + "/libp.so")], flags=runpath("${ORIGIN}/${PLATFORM}"))
    run_pair("${PLATFORM} in braces", fx.p("libuse_plat.so"), expect="loads")

    fx = Fx("nodeflib")
    fx.lib("libz_user.so", "int zlibVersion(void); int u(void){return zlibVersion()!=0;}",
           libs=["-lz"], flags=["-Wl,-z,nodefaultlib"])
    run_pair("DF_1_NODEFLIB skips cache entries in system directories", fx.p("libz_user.so"),
             expect="library-not-found")

    fx = Fx("cache")
    fx.lib("libz_user.so", "int zlibVersion(void); int u(void){return zlibVersion()!=0;}",
           libs=["-lz"])
    run_pair("ld.so.cache finds a system library", fx.p("libz_user.so"), expect="loads")

    fx = Fx("absolute-needed")
    fx.lib("dep/libabs.so", "int ab(void){return 1;}", soname=False)
    fx.lib("liba.so", "int ab(void); int a(void){return ab();}", libs=[fx.p("dep/libabs.so")])
    run_pair("a NEEDED entry with an absolute path", fx.p("liba.so"), expect="loads")
    os.rename(fx.p("dep/libabs.so"), fx.p("dep/gone.so"))
    run_pair("a missing absolute NEEDED path", fx.p("liba.so"), expect="library-not-found")

    fx = Fx("relative-needed")
    fx.lib("sub/librel.so", "int rl(void){return 1;}", soname="sub/librel.so")
    fx.lib("liba.so", "int rl(void); int a(void){return rl();}", libs=[fx.p("sub/librel.so")])
    run_pair("a NEEDED with a slash is relative to the current directory", fx.p("liba.so"),
             cwd=fx.dir, expect="loads")
    run_pair("... and fails from another directory", fx.p("liba.so"), cwd="/",
             expect="library-not-found")

    fx = Fx("deep-chain")
    n = 24
    fx.lib(f"d{n}/libl{n}.so", f"int l{n}(void){{return {n};}}")
    for i in range(n - 1, -1, -1):
        fx.lib(f"d{i}/libl{i}.so", f"int l{i+1}(void); int l{i}(void){{return l{i+1}();}}",
               libs=[fx.p(f"d{i+1}/libl{i+1}.so")])
    dirs = [fx.p(f"d{i}") for i in range(n + 1)]
    fx.lib("top/libtop.so", "int l0(void); int t(void){return l0();}",
           libs=[fx.p("d0/libl0.so")], flags=rpath(*dirs))
    run_pair(f"a chain of {n} libraries through an inherited RPATH", fx.p("top/libtop.so"),
             expect="loads")
    os.unlink(fx.p(f"d{n}/libl{n}.so"))
    run_pair("the end of a deep chain missing", fx.p("top/libtop.so"), expect="library-not-found")

    fx = Fx("hwcaps")
    fx.lib("base/glibc-hwcaps/x86-64-v2/libhw.so", "int hw(void){return 2;} int hw_v2(void){return 1;}")
    fx.lib("base/libhw.so", "int hw(void){return 1;}")
    fx.lib("libuse_hw.so", "int hw_v2(void); int u(void){return hw_v2();}",
           libs=[fx.p("base/glibc-hwcaps/x86-64-v2/libhw.so")], flags=runpath(fx.p("base")))
    run_pair("glibc-hwcaps/x86-64-v2 is preferred to the directory itself", fx.p("libuse_hw.so"),
             expect="loads")
    fx.lib("only/glibc-hwcaps/x86-64-v2/libonly.so", "int on(void){return 1;}")
    fx.lib("libuse_only.so", "int on(void); int u(void){return on();}",
           libs=[fx.p("only/glibc-hwcaps/x86-64-v2/libonly.so")], flags=runpath(fx.p("only")))
    run_pair("a library only in a hwcaps subdirectory is found", fx.p("libuse_only.so"),
             expect="loads")
    fx.lib("leg/tls/libleg.so", "int lg(void){return 1;}")
    fx.lib("libuse_leg.so", "int lg(void); int u(void){return lg();}",
           libs=[fx.p("leg/tls/libleg.so")], flags=runpath(fx.p("leg")))
    run_pair("legacy tls/ subdirectory (searched only by glibc <= 2.36)", fx.p("libuse_leg.so"))

    # -- candidates skipped and fatal -------------------------------------
    fx = Fx("candidates")
    fx.lib("good/libcand.so", "int cand(void){return 1;}")
    fx.lib("liba.so", "int cand(void); int a(void){return cand();}", libs=[fx.p("good/libcand.so")])
    fx.write("script/libcand.so", b"/* GNU ld script\n   Use the shared library. */\nGROUP ( libcand.so.1 )\n")
    run_pair("a GNU ld script earlier on the path stops the search", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('script')}:{fx.p('good')}"}, expect="invalid-elf")
    fx.write("empty/libcand.so", b"")
    run_pair("an empty file earlier on the path stops the search", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('empty')}:{fx.p('good')}"}, expect="invalid-elf")
    os.makedirs(fx.p("isdir/libcand.so"))
    run_pair("a directory named like the library stops the search", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('isdir')}:{fx.p('good')}"}, expect="invalid-elf")
    fx.lib("foreign/libcand.so", "int cand(void){return 7;}")
    fx.patch("foreign/libcand.so", 18, 183)   # e_machine = EM_AARCH64
    fx.patch("foreign/libcand.so", 19, 0)
    run_pair("a library for another machine is skipped", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('foreign')}:{fx.p('good')}"}, expect="loads")
    run_pair("only a library for another machine: glibc says no such file", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": fx.p("foreign")}, expect="library-not-found")
    if have_m32():
        fx.lib("m32/libcand.so", "int cand(void){return 32;}", cc_flags=["-m32"])
        run_pair("a 32-bit library is skipped", fx.p("liba.so"),
                 env={"LD_LIBRARY_PATH": f"{fx.p('m32')}:{fx.p('good')}"}, expect="loads")
        run_pair("only a 32-bit library: wrong ELF class", fx.p("liba.so"),
                 env={"LD_LIBRARY_PATH": fx.p("m32")}, expect="wrong-elf")
        run_pair("a 32-bit target", fx.p("m32/libcand.so"), expect="wrong-elf")
    else:
        report(None, "32-bit candidates", "no -m32 toolchain (apt: gcc-multilib)")
    run_pair("a target for another machine", fx.p("foreign/libcand.so"), expect="wrong-elf",
             foreign=True)
    for label, off, val in (("big-endian data encoding", 5, 2), ("an invalid OS ABI", 7, 9),
                            ("nonzero padding in e_ident", 12, 1), ("an invalid ABI version", 8, 7)):
        d = label.replace(" ", "-")
        fx.lib(f"{d}/libcand.so", "int cand(void){return 9;}")
        fx.patch(f"{d}/libcand.so", off, val)
        run_pair(f"a candidate with {label} stops the search", fx.p("liba.so"),
                 env={"LD_LIBRARY_PATH": f"{fx.p(d)}:{fx.p('good')}"}, expect="invalid-elf")
    fx.write("trunc/libcand.so", open(fx.p("good/libcand.so"), "rb").read()[:40])
    run_pair("a truncated candidate (40 bytes) stops the search", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('trunc')}:{fx.p('good')}"}, expect="invalid-elf")
    fx.write("trunc2/libcand.so", open(fx.p("good/libcand.so"), "rb").read()[:200])
    run_pair("a candidate cut after its header", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('trunc2')}:{fx.p('good')}"})
    os.makedirs(fx.p("loop"), exist_ok=True)
    os.symlink("libcand.so", fx.p("loop/libcand.so"))
    run_pair("a symlink loop on the path", fx.p("liba.so"),
             env={"LD_LIBRARY_PATH": f"{fx.p('loop')}:{fx.p('good')}"})
    if os.geteuid() == 0 and shutil.which("setpriv"):
        # The unprivileged user must reach the driver, abiscope and the
        # fixture: the clone may sit under a 0700 folder (mktemp -d), so
        # they are copied into a folder every user can traverse.
        pub = tempfile.mkdtemp(prefix="abiscope-eacces-")
        os.chmod(pub, 0o755)
        for rel in ("liba.so", "good/libcand.so"):
            os.makedirs(os.path.dirname(os.path.join(pub, rel)), exist_ok=True)
            shutil.copy(fx.p(rel), os.path.join(pub, rel))
        os.makedirs(os.path.join(pub, "noperm"))
        shutil.copy(fx.p("good/libcand.so"), os.path.join(pub, "noperm/libcand.so"))
        os.chmod(os.path.join(pub, "noperm/libcand.so"), 0o000)
        drv = shutil.copy(DRIVER, os.path.join(pub, "dlopen_driver"))
        # the binary itself, not tests/run.sh's recording wrapper
        tool = shutil.copy(os.environ.get("ABISCOPE_BINARY", ABISCOPE), os.path.join(pub, "abiscope"))
        for d in ("", "good", "noperm"):
            os.chmod(os.path.join(pub, d), 0o755)
        pp = lambda rel: os.path.join(pub, rel)  # noqa: E731
        run_pair("an unreadable candidate is skipped (EACCES)", pp("liba.so"),
                 env={"LD_LIBRARY_PATH": f"{pp('noperm')}:{pp('good')}"}, as_user=65534,
                 expect="loads", driver=drv, abiscope=tool)
        run_pair("only an unreadable candidate", pp("liba.so"),
                 env={"LD_LIBRARY_PATH": pp("noperm")}, as_user=65534, expect="library-not-found",
                 driver=drv, abiscope=tool)
        shutil.rmtree(pub)
    elif os.geteuid() != 0:
        fx.write("noperm/libcand.so", open(fx.p("good/libcand.so"), "rb").read(), mode=0o000)
        run_pair("an unreadable candidate is skipped (EACCES)", fx.p("liba.so"),
                 env={"LD_LIBRARY_PATH": f"{fx.p('noperm')}:{fx.p('good')}"}, expect="loads")
    else:
        report(None, "EACCES candidates", "running as root without setpriv")
    fx.write("notelf.so", b"this is not an ELF file at all, but it is long enough to be read as one." * 2)
    run_pair("a target that is not ELF", fx.p("notelf.so"), expect="invalid-elf")
    fx.write("exe.c", b"int main(void){return 0;}\n")
    sh([CC, "-fPIE", "-pie", "-o", fx.p("pie"), fx.p("exe.c")])
    run_pair("a PIE executable cannot be dlopen()ed", fx.p("pie"), expect="cannot-load")
    sh([CC, "-no-pie", "-fno-pie", "-o", fx.p("nopie"), fx.p("exe.c")])
    run_pair("a non-PIE executable cannot be dlopen()ed", fx.p("nopie"), expect="cannot-load")
    fx.lib("libnoopen.so", "int x(void){return 1;}", flags=["-Wl,-z,nodlopen"])
    run_pair("DF_1_NOOPEN", fx.p("libnoopen.so"), expect="cannot-load")
    fx.lib("libexecstack.so", "int x(void){return 1;}", flags=["-Wl,-z,execstack"])
    run_pair("an object that asks for an executable stack", fx.p("libexecstack.so"))

    # -- symbols ----------------------------------------------------------
    fx = Fx("symbols")
    fx.lib("libundef_fn.so", "int nosuch(void); int f(void){return nosuch();}")
    run_pair("undefined function under RTLD_NOW", fx.p("libundef_fn.so"), expect="undefined-symbol")
    run_pair("undefined function under RTLD_LAZY loads", fx.p("libundef_fn.so"), lazy=True,
             expect="loads")
    fx.lib("libundef_now.so", "int nosuch(void); int f(void){return nosuch();}", flags=["-Wl,-z,now"])
    run_pair("undefined function in a -z now object under RTLD_LAZY", fx.p("libundef_now.so"),
             lazy=True, expect="undefined-symbol")
    fx.lib("libundef_data.so", "extern int nosuch_var; int f(void){return nosuch_var;}")
    run_pair("undefined data under RTLD_LAZY", fx.p("libundef_data.so"), lazy=True,
             expect="undefined-symbol")
    fx.lib("libundef_fnptr.so", "int nosuch(void); void *f(void){return (void*)nosuch;}")
    run_pair("address of an undefined function under RTLD_LAZY", fx.p("libundef_fnptr.so"),
             lazy=True, expect="undefined-symbol")
    fx.lib("libweak.so", "int nosuch(void) __attribute__((weak)); int f(void){return nosuch?nosuch():0;}")
    run_pair("weak undefined function", fx.p("libweak.so"), expect="loads")
    fx.lib("libweak_data.so", "extern int nosuch_var __attribute__((weak)); int f(void){return &nosuch_var?nosuch_var:0;}")
    run_pair("weak undefined data", fx.p("libweak_data.so"), expect="loads")
    fx.lib("libfromexe.so", "int abiscope_driver_exported(int); int f(void){return abiscope_driver_exported(1);}")
    run_pair("a symbol exported by the executable", fx.p("libfromexe.so"), expect="loads")
    fx.lib("libhid.so", "__attribute__((visibility(\"hidden\"))) int hidden_fn(void){return 1;} int vis(void){return hidden_fn();}")
    fx.lib("libuse_hid.so", "int hidden_fn(void); int u(void){return hidden_fn();}",
           libs=[fx.p("libhid.so")])
    run_pair("a hidden symbol is not exported", fx.p("libuse_hid.so"), expect="undefined-symbol")
    fx.lib("libmany.so", "".join(f"int nosuch{i}(void);" for i in range(40)) +
           "int f(void){return " + "+".join(f"nosuch{i}()" for i in range(40)) + ";}")
    run_pair("forty undefined functions: the first in relocation order is reported",
             fx.p("libmany.so"), expect="undefined-symbol")
    fx.lib("deep/libleaf.so", "int leafmissing(void); int leaf(void){return leafmissing();}")
    fx.lib("deep/libmid.so", "int leaf(void); int midmissing(void); int mid(void){return leaf()+midmissing();}",
           libs=[fx.p("deep/libleaf.so")], flags=runpath(fx.p("deep")))
    fx.lib("deep/libroot.so", "int mid(void); int rootmissing(void); int r(void){return mid()+rootmissing();}",
           libs=[fx.p("deep/libmid.so")], flags=runpath(fx.p("deep")))
    run_pair("undefined symbols at three depths: dependencies are relocated first",
             fx.p("deep/libroot.so"), expect="undefined-symbol")

    # -- versions ---------------------------------------------------------
    fx = Fx("versions")
    fx.lib("v1/libv.so", "int vfun(void){return 1;}", version_script="V1 { global: vfun; local: *; };")
    fx.lib("v2/libv.so", "int vfun(void){return 2;} int vfun2(void){return 2;}",
           version_script="V1 { global: vfun; local: *; };\nV2 { global: vfun2; } V1;")
    fx.lib("libneeds_v2.so", "int vfun2(void); int u(void){return vfun2();}",
           libs=[fx.p("v2/libv.so")], flags=runpath(fx.p("v1")))
    run_pair("a missing version", fx.p("libneeds_v2.so"), expect="version-not-found")
    fx.lib("v3/libv.so", "int vfun(void){return 3;} int vfun2(void){return 3;}",
           version_script="V1 { global: vfun; local: *; };\nV2 { } V1;\nV3 { global: vfun2; } V2;")
    fx.lib("libmoved.so", "int vfun2(void); int u(void){return vfun2();}",
           libs=[fx.p("v2/libv.so")], flags=runpath(fx.p("v3")))
    run_pair("a symbol that moved to another version", fx.p("libmoved.so"),
             expect="undefined-symbol")
    fx.lib("wk/libwv.so", "int wv(void){return 1;}", version_script="W1 { global: wv; local: *; };")
    fx.lib("libweakver.so", "int wv(void); int u(void){return wv();}", libs=[fx.p("wk/libwv.so")],
           flags=runpath(fx.p("wk")))
    sh(["python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "set_weak_version.py"),
        fx.p("libweakver.so"), "W1"], check=False)
    run_pair("a weak version requirement", fx.p("libweakver.so"))
    fx.lib("hidden/libhv.so", "int hv_old(void){return 1;} int hv_new(void){return 2;}\n"
           "__asm__(\".symver hv_old,hv@HV1\"); __asm__(\".symver hv_new,hv@@HV2\");",
           version_script="HV1 { local: *; };\nHV2 { } HV1;")
    fx.lib("stub/libhv.so", "int hv(void){return 0;}", soname="libhv.so")
    fx.lib("libuse_hv.so", "int hv(void); int u(void){return hv();}", libs=[fx.p("stub/libhv.so")],
           flags=runpath(fx.p("hidden")))
    run_pair("an unversioned reference binds the default version", fx.p("libuse_hv.so"),
             expect="loads")
    fx.lib("hidden2/libhv.so", "int hv_old(void){return 1;}\n__asm__(\".symver hv_old,hv@HV1\");",
           version_script="HV1 { local: *; };")
    fx.lib("libuse_hv2.so", "int hv(void); int u(void){return hv();}", libs=[fx.p("stub/libhv.so")],
           flags=runpath(fx.p("hidden2")))
    run_pair("only a hidden (non-default) version: an unversioned reference fails",
             fx.p("libuse_hv2.so"), expect="undefined-symbol")
    fx.lib("nover/libv.so", "int vfun2(void){return 1;}")
    fx.lib("libneeds_v2b.so", "int vfun2(void); int u(void){return vfun2();}",
           libs=[fx.p("v2/libv.so")], flags=runpath(fx.p("nover")))
    run_pair("the provider has no version information at all", fx.p("libneeds_v2b.so"))

    # -- corrupt ELF where glibc's verdict is not the obvious one (issue 13 item 15)
    fx = Fx("corrupt")
    fx.lib("libok.so", "#include <stdio.h>\nint g(void){return puts(\"x\");}")
    base = open(fx.p("libok.so"), "rb").read()

    def phdrs(b):
        phoff = struct.unpack_from("<Q", b, 0x20)[0]
        phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
        return [(phoff + i * phentsize,) + struct.unpack_from("<IIQQQQQQ", b, phoff + i * phentsize)
                for i in range(phnum)]

    def dyn_entries(b):
        for _, typ, _, off, _, _, filesz, _, _ in phdrs(b):
            if typ == 2:	# PT_DYNAMIC
                return [(off + 16 * i,) + struct.unpack_from("<qQ", b, off + 16 * i) for i in range(filesz // 16)]
        return []

    def variant(name, edit):
        b = bytearray(base)
        edit(b)
        return fx.write(name, bytes(b))

    def empty_dynamic(b):
        for at, typ, *_ in phdrs(b):
            if typ == 2:
                struct.pack_into("<Q", b, at + 32, 0)	# p_filesz

    def misaligned_load(b):
        for at, typ, _, off, *_ in phdrs(b):
            if typ == 1:
                struct.pack_into("<Q", b, at + 8, off + 1)	# p_offset
                return

    def set_dyn(tag, value):
        def edit(b):
            for at, t, _ in dyn_entries(b):
                if t == tag:
                    struct.pack_into("<Q", b, at + 8, value)
        return edit

    run_pair("PT_DYNAMIC with p_filesz 0", variant("dyn0.so", empty_dynamic), expect="cannot-load")
    run_pair("a PT_LOAD whose offset and address disagree modulo the page size",
             variant("misaligned.so", misaligned_load), expect="cannot-load")
    run_pair("DT_STRSZ 0: glibc reads the names anyway", variant("strsz0.so", set_dyn(10, 0)), expect="loads")
    run_pair("DT_JMPREL pointing at the ELF header", variant("jmprel.so", set_dyn(23, 0)))
    # what elf_get_dynamic_info asserts, relocation and constructor tables
    # out of the object, and the DT_RELACOUNT promise (checked at run time)
    run_pair("DT_PLTREL saying DT_REL on x86-64", variant("pltrel.so", set_dyn(20, 17)), expect="corrupt-elf")
    run_pair("DT_RELAENT 16", variant("relaent.so", set_dyn(9, 16)), expect="corrupt-elf")
    run_pair("DT_RELA far outside the object", variant("relafar.so", set_dyn(7, 0x7fff0000)),
             expect="corrupt-elf")
    run_pair("DT_RELASZ reaching past the object", variant("relasz.so", set_dyn(8, 0x100000)),
             expect="corrupt-elf")
    run_pair("DT_PLTRELSZ that wraps the loader's end pointer: nothing is read",
             variant("pltrelsz.so", set_dyn(2, 0xffffffffffffffff)), expect="loads")
    run_pair("DT_VERSYM far outside the object", variant("versymfar.so", set_dyn(0x6ffffff0, 0x7fff0000)),
             expect="corrupt-elf")
    relacount = next(v for _a, t, v in dyn_entries(base) if t == 0x6ffffff9)
    run_pair("DT_RELACOUNT covering a relocation that is not R_X86_64_RELATIVE",
             variant("relacount.so", set_dyn(0x6ffffff9, relacount + 1)), expect="corrupt-elf")
    run_pair("DT_INIT outside executable memory", variant("init.so", set_dyn(12, 8)), expect="corrupt-elf")
    run_pair("DT_INIT_ARRAY far outside the object", variant("initarray.so", set_dyn(25, 0x7fff0000)),
             expect="corrupt-elf")
    # PT_DYNAMIC is read at p_vaddr: with p_offset off, glibc still sees the
    # missing dependency
    fx.lib("gone/libgone.so", "int gone(void){return 1;}")
    fx.lib("libneedsgone.so", "int gone(void); int ng(void){return gone();}", libs=[fx.p("gone/libgone.so")])
    shutil.rmtree(fx.p("gone"))
    nb = bytearray(open(fx.p("libneedsgone.so"), "rb").read())
    for at, typ, *_ in phdrs(nb):
        if typ == 2:
            struct.pack_into("<Q", nb, at + 8, struct.unpack_from("<Q", nb, at + 8)[0] + 8)	# p_offset
    run_pair("PT_DYNAMIC's p_offset off by 8: the loader reads it at p_vaddr",
             fx.write("dynoff.so", bytes(nb)), expect="library-not-found")

    # -- process context ---------------------------------------------------
    fx = Fx("context")
    fx.lib("hidden/libdep.so", "int dep(void){return 1;}")
    fx.lib("libusesdep.so", "int dep(void); int u(void){return dep();}", libs=[fx.p("hidden/libdep.so")])
    run_pair("without the preload the dependency is not found", fx.p("libusesdep.so"),
             expect="library-not-found")
    run_pair("a preloaded SONAME satisfies a later NEEDED", fx.p("libusesdep.so"),
             preload=[(fx.p("hidden/libdep.so"), False)], expect="loads")
    fx.lib("old/libdep.so", "int dep(void){return 0;}")
    fx.lib("new/libdep.so", "int dep(void){return 1;} int dep_new(void){return 2;}")
    fx.lib("libnewdep.so", "int dep_new(void); int u(void){return dep_new();}",
           libs=[fx.p("new/libdep.so")], flags=runpath(fx.p("new")))
    run_pair("loads alone", fx.p("libnewdep.so"), expect="loads")
    run_pair("a preloaded older copy shadows the better one", fx.p("libnewdep.so"),
             preload=[(fx.p("old/libdep.so"), False)], expect="undefined-symbol")
    fx.lib("libprov.so", "int provided(void){return 1;}")
    fx.lib("libcons.so", "int provided(void); int c(void){return provided();}")
    run_pair("RTLD_LOCAL symbols are invisible to later loads", fx.p("libcons.so"),
             preload=[(fx.p("libprov.so"), False)], expect="undefined-symbol")
    run_pair("RTLD_GLOBAL symbols are visible to later loads", fx.p("libcons.so"),
             preload=[(fx.p("libprov.so"), True)], expect="loads")
    run_pair("a preload that itself fails", fx.p("libcons.so"),
             preload=[(fx.p("libusesdep.so"), True), (fx.p("libprov.so"), True)])
    run_pair("a bare library name is searched like dlopen() does", "libz.so.1", expect="loads")
    run_pair("a bare library name that is nowhere", "libabiscope-nosuch.so.7",
             expect="library-not-found")
    # an executable with its own RPATH: the main program's RPATH applies to deps
    exe_dir = fx.p("exe")
    os.makedirs(exe_dir)
    sh([CC, "-std=c11", "-D_GNU_SOURCE", "-rdynamic", "-o", os.path.join(exe_dir, "driver_rpath"),
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "dlopen_driver.c"),
        f"-Wl,--disable-new-dtags,-rpath,{fx.p('hidden')}"])
    run_pair("the executable's RPATH applies to a dlopen()ed object's dependencies",
             fx.p("libusesdep.so"), driver=os.path.join(exe_dir, "driver_rpath"), expect="loads")
    sh([CC, "-std=c11", "-D_GNU_SOURCE", "-rdynamic", "-o", os.path.join(exe_dir, "driver_runpath"),
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "dlopen_driver.c"),
        f"-Wl,--enable-new-dtags,-rpath,{fx.p('hidden')}"])
    run_pair("... but not its RUNPATH", fx.p("libusesdep.so"),
             driver=os.path.join(exe_dir, "driver_runpath"), expect="library-not-found")
    fx.lib("tls/libbigtls.so", "__thread char big[4096] __attribute__((tls_model(\"initial-exec\")));"
           "char *f(void){return big;}")
    run_pair("initial-exec TLS larger than the static TLS surplus", fx.p("tls/libbigtls.so"),
             expect="static-tls-exhausted")
    fx.lib("tls/libsmalltls.so", "__thread int small __attribute__((tls_model(\"initial-exec\")));"
           "int *f(void){return &small;}")
    run_pair("a little initial-exec TLS fits", fx.p("tls/libsmalltls.so"), expect="loads")
    fifo = fx.p("fifo/libdep.so")
    os.makedirs(os.path.dirname(fifo))
    os.mkfifo(fifo)
    a = subprocess.run([ABISCOPE, "why", "--json", "--process", DRIVER, "--ld-library-path",
                        os.path.dirname(fifo), fx.p("libusesdep.so")],
                       capture_output=True, text=True, timeout=20)
    ok = a.returncode == 1 and '"loader-would-hang"' in a.stdout
    report(ok, "a FIFO on the path: abiscope does not hang and says the loader would",
           a.stdout[-2000:] + a.stderr)


# -- version records the loader walks (issue 13 item 15): garbage in DT_VERNEED /
# DT_VERDEF.  glibc's dl-version.c follows vn_aux/vna_next/vn_next and
# vd_aux/vd_next through memory, ignores vn_cnt, vd_cnt and DT_VERNEEDNUM, and
# checks only the first Verneed record's vn_version and, in each Verdef chain it
# walks for a match, every vd_version up to the match.
def version_record_cases():
    fx = Fx("verrec")
    fx.lib("libprov.so", "int pf1(void){return 1;} int pf2(void){return 2;} int pf3(void){return 3;}",
           version_script="VP_1 { global: pf1; local: *; };\nVP_2 { global: pf2; } VP_1;\n"
                          "VP_3 { global: pf3; } VP_2;\n")
    fx.lib("libuser.so", "#include <stdio.h>\nint pf1(void); int pf2(void);"
           "int u(void){puts(\"x\"); return pf1() + pf2();}",
           libs=[fx.p("libprov.so")], flags=["-Wl,--enable-new-dtags,-rpath,$ORIGIN"])

    def records(path):
        """(bytes, {tag: (entry offset, value)}, [Verneed record offsets], {record: [Vernaux offsets]},
        [Verdef offsets]) of path, following the chains as glibc does."""
        data, ents, v2o = elf64_dynamic(path)
        tags = {t: (o, v) for o, t, v in ents}
        vn, aux = [], {}
        if 0x6ffffffe in tags:
            at = v2o(tags[0x6ffffffe][1])
            while True:
                vn.append(at)
                _ver, _cnt, _file, a, nxt = struct.unpack_from("<HHIII", data, at)
                aux[at] = []
                x = at + a
                while True:
                    aux[at].append(x)
                    anext, = struct.unpack_from("<I", data, x + 12)
                    if not anext:
                        break
                    x += anext
                if not nxt:
                    break
                at += nxt
        vd = []
        if 0x6ffffffc in tags:
            at = v2o(tags[0x6ffffffc][1])
            while True:
                vd.append(at)
                nxt, = struct.unpack_from("<I", data, at + 16)
                if not nxt:
                    break
                at += nxt
        return data, tags, vn, aux, vd

    def variant(src, name, edit):
        data, tags, vn, aux, vd = records(fx.p(src))
        edit(data, tags, vn, aux, vd)
        return fx.write(name, bytes(data))

    def put(fmt, field_off, value, which):
        def edit(data, tags, vn, aux, vd):
            struct.pack_into(fmt, data, which(tags, vn, aux, vd) + field_off, value)
        return edit

    first_vn = lambda t, vn, aux, vd: vn[0]
    second_vn = lambda t, vn, aux, vd: vn[1]
    last_aux = lambda t, vn, aux, vd: aux[vn[0]][-1]
    first_aux = lambda t, vn, aux, vd: aux[vn[0]][0]
    dt = lambda tag: (lambda t, vn, aux, vd: t[tag][0])
    user = lambda name, edit: variant("libuser.so", name, edit)

    def with_prov(name, edit):
        """libuser.so next to a libprov.so edited by edit."""
        d = "prov-" + name
        os.makedirs(fx.p(d), exist_ok=True)
        data, tags, vn, aux, vd = records(fx.p("libprov.so"))
        edit(data, tags, vn, aux, vd)
        fx.write(os.path.join(d, "libprov.so"), bytes(data))
        shutil.copy(fx.p("libuser.so"), fx.p(os.path.join(d, "libuser.so")))
        return fx.p(os.path.join(d, "libuser.so"))

    run_pair("version records intact", fx.p("libuser.so"), expect="loads")
    run_pair("vn_version 2 in the first Verneed record", user("vn2.so", put("<H", 0, 2, first_vn)), expect="corrupt-elf")
    run_pair("vn_version 0 in the second Verneed record: glibc checks only the first",
             user("vn2nd.so", put("<H", 0, 0, second_vn)), expect="loads")
    run_pair("DT_VERNEED pointing at the ELF header", user("vnhdr.so", put("<Q", 8, 0, dt(0x6ffffffe))),
             expect="corrupt-elf")
    run_pair("DT_VERNEEDNUM 1000: glibc does not read it",
             user("vnnum.so", put("<Q", 8, 1000, dt(0x6fffffff))), expect="loads")
    run_pair("vn_cnt 1 where the chain holds 2 and the second's hash is wrong",
             user("vncnt.so", lambda *a: (put("<H", 2, 1, first_vn)(*a), put("<I", 0, 0x12345678, last_aux)(*a))),
             expect="version-not-found")
    run_pair("vn_cnt 0: glibc follows vna_next", user("vncnt0.so", put("<H", 2, 0, first_vn)), expect="loads")
    run_pair("vn_file naming no loaded object", user("vnfile.so", put("<I", 4, 1, first_vn)),
             expect="corrupt-elf")
    run_pair("vn_aux pointing at the next record", user("vnaux.so", put("<I", 8, 0x30, first_vn)),
             expect="loads")
    run_pair("vna_next of the last entry pointing past it", user("vnanext.so", put("<I", 12, 0x20, last_aux)),
             expect="version-not-found")
    run_pair("vna_hash wrong", user("vnahash.so", put("<I", 0, 0x1234, first_aux)),
             expect="version-not-found")
    run_pair("vna_name pointing at another string", user("vnaname.so", put("<I", 8, 1, first_aux)),
             expect="version-not-found")
    run_pair("DT_VERNEED far outside the object", user("vnfar.so", put("<Q", 8, 0x8000000000000000, dt(0x6ffffffe))),
             expect="corrupt-elf")

    first_vd = lambda t, vn, aux, vd: vd[0]
    second_vd = lambda t, vn, aux, vd: vd[1]
    last_vd = lambda t, vn, aux, vd: vd[-1]
    run_pair("vd_version 2 in the provider's first Verdef", with_prov("vd2", put("<H", 0, 2, first_vd)),
             expect="corrupt-elf")
    run_pair("vd_version 0 in a Verdef the walk meets before the match",
             with_prov("vdmid", put("<H", 0, 0, second_vd)), expect="corrupt-elf")
    run_pair("vd_version 0 in a Verdef after every match: glibc stops at the match",
             with_prov("vdlast", put("<H", 0, 0, last_vd)), expect="loads")
    run_pair("vd_hash wrong", with_prov("vdhash", put("<I", 8, 0x1234, second_vd)), expect="version-not-found")
    run_pair("vd_cnt 0: glibc reads vd_aux anyway", with_prov("vdcnt", put("<H", 6, 0, second_vd)), expect="loads")
    run_pair("vd_aux pointing at the next Verdef", with_prov("vdaux", put("<I", 12, 0x1c, second_vd)),
             expect="version-not-found")
    run_pair("vd_next of the base pointing past the table", with_prov("vdnext", put("<I", 16, 0x1000, first_vd)),
             expect="corrupt-elf")
    run_pair("DT_VERDEF pointing at the ELF header", with_prov("vdhdr", put("<Q", 8, 0, dt(0x6ffffffc))),
             expect="corrupt-elf")
    run_pair("DT_VERDEF far outside the provider", with_prov("vdfar", put("<Q", 8, 0x8000000000000000, dt(0x6ffffffc))),
             expect="corrupt-elf")

    # the executable's own tables: start-up prints the refusal, or aborts
    drv = build_driver(fx, "drv")
    for name, edit in (("drv-vn2", put("<H", 0, 2, first_vn)), ("drv-vnfile", put("<I", 4, 1, first_vn))):
        variant(drv, name, edit)
        os.chmod(fx.p(name), 0o755)
        run_pair(f"the executable's Verneed: {name}", fx.p("libuser.so"), driver=fx.p(name),
                 expect="process-cannot-start")

    drvp = build_driver(fx, "prov-vd2/drvp", extra_src="int pf1(void); int use_pf1(void){return pf1();}\n", libs=[fx.p("prov-vd2/libprov.so")], flags=["-Wl,-rpath,$ORIGIN"])
    run_pair("the executable needs a provider whose Verdef is of version 2", fx.p("libuser.so"), driver=drvp,
             expect="process-cannot-start")


# -- tables the loader reads, writes or calls through while mapping and
# relocating (issue 13's leftovers): garbage DT_SYMTAB, DT_GNU_HASH,
# DT_INIT_ARRAY entries, relocation entries, DT_RELA 0, strings outside the
# object.  Found by tests/diff/mutate_elf.py; each is the real loader's
# outcome on glibc 2.36: a dlerror, an assertion, or a death by signal
# (then abiscope must say the process dies, never that the object loads).
def hostile_table_cases():
    import mutate_elf
    fx = Fx("tables")
    fx.lib("libhdep.so", "int hdep(int x){return x+1;} int hdep_data = 7;")
    fx.lib("libhost.so", "#include <string.h>\nint hdep(int); extern int hdep_data;"
           "int t_one(int x){return x*2;} int t_two(int x){return t_one(x)+hdep(x);}"
           "int (*t_ptr)(int) = t_two; int *t_dptr = &hdep_data; static int ran;"
           "__attribute__((constructor)) static void t_init(void){ ran = t_one(1) + (int)strlen(\"x\"); }"
           "int t_main(void){ return ran + t_ptr(1) + *t_dptr; }",
           libs=[fx.p("libhdep.so")], flags=runpath("$ORIGIN"))
    base = open(fx.p("libhost.so"), "rb").read()
    e = mutate_elf.Elf(bytearray(base))

    def variant(name, edits):
        d = fx.p(name)
        os.makedirs(d)
        b = bytearray(base)
        for off, fmt, v in edits:
            struct.pack_into(fmt, b, off, v)
        shutil.copy(fx.p("libhdep.so"), d)
        return fx.write(os.path.join(name, "libhost.so"), bytes(b))

    def dyn(tag, value):
        return [(at + 8, "<Q", value) for at, t, _v in e.ents if t == tag]

    gh = e.v2o(e.dyn_val(0x6ffffef5))
    nb, so, bs, _sh = struct.unpack_from("<IIII", base, gh)
    rela_off, rela_sz = e.sec[".rela.dyn"][0], e.sec[".rela.dyn"][1]
    relas = [struct.unpack_from("<QQq", base, rela_off + 24 * i) for i in range(rela_sz // 24)]
    first_symbolic = next(i for i, (_o, info, _a) in enumerate(relas) if info & 0xffffffff not in (0, 8))

    run_pair("intact", fx.p("libhost.so"), expect="loads")
    # DT_SYMTAB
    run_pair("DT_SYMTAB far outside the object", variant("symfar", dyn(6, 0x7fff0000)), expect="corrupt-elf")
    run_pair("DT_SYMTAB pointing at the dynamic section", variant("symdyn", dyn(6, e.sec[".dynamic"][2])),
             expect="corrupt-elf")
    # DT_GNU_HASH
    run_pair("DT_GNU_HASH far outside the object", variant("ghfar", dyn(0x6ffffef5, 0x7fff0000)), expect="corrupt-elf")
    run_pair("a GNU hash bloom filter of 3 words: _dl_setup_hash's assertion",
             variant("gh3", [(gh + 8, "<I", 3)]), expect="corrupt-elf")
    run_pair("a GNU hash bloom filter of 0x10000000 words",
             variant("ghbig", [(gh + 8, "<I", 0x10000000)]), expect="corrupt-elf")
    run_pair("GNU hash buckets that miss the object's own symbols: undefined symbol",
             variant("ghbucket", [(gh + 16 + 8 * bs + 4 * i, "<I", 0) for i in range(nb)]),
             expect="undefined-symbol")
    run_pair("a GNU hash bucket pointing far past the chains",
             variant("ghchain", [(gh + 16 + 8 * bs + 4 * i, "<I", 0x7fffffff) for i in range(nb)]),
             expect="corrupt-elf")
    run_pair("a GNU hash bloom shift of 64: the loader shifts by 0",
             variant("ghshift", [(gh + 12, "<I", 64)]))
    # relocation tables
    run_pair("DT_RELA 0 with DT_RELASZ > 0: not processed, the constructors stay unrelocated",
             variant("rela0", dyn(7, 0)), expect="corrupt-elf")
    run_pair("DT_RELACOUNT 0x8000000000000000: the product wraps to no relative entry",
             variant("relacount", dyn(0x6ffffff9, 0x8000000000000000)), expect="loads")
    run_pair("DT_RELASZ 0: DT_RELACOUNT's entries are still applied",
             variant("relasz0", dyn(8, 0)), expect="loads")
    run_pair("a relocation of type 0x2a: unexpected reloc type",
             variant("badtype", [(rela_off + 24 * first_symbolic + 8, "<I", 0x2a)]), expect="corrupt-elf")
    run_pair("a relocation writing at 0x7fff0000",
             variant("roffset", [(rela_off + 24 * first_symbolic, "<Q", 0x7fff0000)]), expect="corrupt-elf")
    run_pair("a relocation writing into the read-only text",
             variant("rotext", [(rela_off + 24 * first_symbolic, "<Q", 0x1000)]), expect="corrupt-elf")
    run_pair("a relocation naming symbol 0x7fffffff",
             variant("relsym", [(rela_off + 24 * first_symbolic + 12, "<I", 0x7fffffff)]), expect="corrupt-elf")
    # constructors
    run_pair("a DT_INIT_ARRAY entry no relocation writes (its raw value is called)",
             variant("initraw", dyn(25, e.sec[".dynstr"][2])), expect="corrupt-elf")
    run_pair("DT_INIT_ARRAY pointing at the GOT",
             variant("initgot", dyn(25, e.sec[".got"][2])), expect="corrupt-elf")
    run_pair("DT_INIT_ARRAYSZ 0x8000000000000000: counted in an unsigned int, 0 entries",
             variant("initsz", dyn(27, 0x8000000000000000)), expect="loads")
    run_pair("a relocated DT_INIT_ARRAY entry pointing into .rodata",
             variant("initro", [(rela_off + 24 * i + 16, "<q", e.sec[".rodata"][2] if ".rodata" in e.sec
                                 else e.sec[".dynstr"][2])
                                for i, (o, info, _a) in enumerate(relas) if o == e.sec[".init_array"][2] + 8]),
             expect="corrupt-elf")
    # strings
    run_pair("a DT_NEEDED name far outside the object", variant("needfar", dyn(1, 0x7fff0000)), expect="corrupt-elf")
    run_pair("an empty DT_RUNPATH: ignored, not the current directory", variant("runpath0", dyn(29, 0)),
             cwd=fx.dir, expect="library-not-found")


# ------------------------------------------- glibc's own tests, peers' tests
# Cases rebuilt from glibc's elf/ and dlfcn/ tests and from the peer
# tools' suites (issue 16): the executable's own start-up, the name in
# errors raised after a file is opened, bare names that are not modules,
# missing paths, DT_NEEDED strings past DT_STRSZ, GLIBC_TUNABLES,
# constructors, RTLD_NOLOAD, RTLD_DEEPBIND and dlopen called from a library.

DRIVER_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "dlopen_driver.c")


def build_driver(fx, name, extra_src=None, flags=(), libs=()):
    """A copy of the dlopen driver with more code and link flags: a process
    whose own start-up can fail."""
    out = fx.p(name)
    cmd = [CC, "-std=c11", "-D_GNU_SOURCE", "-rdynamic", "-o", out, DRIVER_SRC]
    if extra_src:
        c = out + "-extra.c"
        with open(c, "w") as f:
            f.write(extra_src)
        cmd.append(c)
    sh(cmd + ["-Wl,--no-as-needed"] + list(flags) + list(libs) + ["-ldl"])
    return out


def elf64_dynamic(path):
    """(file bytes, [(entry offset, tag, value)], vaddr->offset) of an ELF64 object."""
    import struct
    data = bytearray(open(path, "rb").read())
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    loads, dyn = [], None
    for i in range(phnum):
        typ, _flags, off, vaddr, _pa, filesz, _memsz, _al = struct.unpack_from("<IIQQQQQQ", data,
                                                                              phoff + i * phentsize)
        if typ == 1:
            loads.append((vaddr, off, filesz))
        elif typ == 2:
            dyn = (off, filesz)
    ents = []
    for k in range(dyn[1] // 16):
        tag, val = struct.unpack_from("<qQ", data, dyn[0] + 16 * k)
        ents.append((dyn[0] + 16 * k, tag, val))
        if tag == 0:
            break

    def v2o(v):
        for va, off, sz in loads:
            if va <= v < va + sz:
                return v - va + off
        return None
    return data, ents, v2o


def cut_strsz_before(path, needed):
    """Shrinks DT_STRSZ so that the DT_NEEDED string `needed` lies past it,
    as patchelf 0.14 left such entries."""
    import struct
    data, ents, v2o = elf64_dynamic(path)
    strtab = next(v for _o, t, v in ents if t == 5)
    soff = v2o(strtab)
    for _o, t, v in ents:
        if t == 1 and data[soff + v:].split(b"\0", 1)[0] == needed.encode():
            cut = v
            break
    else:
        raise RuntimeError(f"{path}: no DT_NEEDED {needed}")
    for o, t, _v in ents:
        if t == 10:
            struct.pack_into("<Q", data, o + 8, cut)
    open(path, "wb").write(data)


def real_search_prefixes(env):
    """The subdirectories the real loader probes in each directory, from its
    LD_DEBUG search path (CPU- and tunables-dependent)."""
    e = dict(os.environ, LD_DEBUG="libs", LD_LIBRARY_PATH="/nonexistent-abiscope")
    e.pop("GLIBC_TUNABLES", None)
    e.update(env or {})
    out = subprocess.run(["/bin/true"], env=e, capture_output=True, text=True).stderr
    m = re.search(r"search path=(\S+)\s+\(LD_LIBRARY_PATH\)", out)
    if not m:
        return []
    return [x[len("/nonexistent-abiscope"):].strip("/") for x in m.group(1).split(":")]


def startup_cases():
    # (1) the --process executable's own start-up, checked like a dlopen
    fx = Fx("startup")
    fx.lib("one/libx.so", "int vfun(void){return 1;}", soname="libx.so",
           version_script="VER_1 { global: vfun; local: *; };")
    fx.lib("two/libx.so", "int vfun(void){return 2;} int vfun2(void){return 2;} int vfun3(void){return 3;}",
           soname="libx.so",
           version_script="VER_1 { global: vfun; local: *; };\nVER_2 { global: vfun2; } VER_1;\n"
                          "VER_3 { global: vfun3; } VER_2;")
    fx.lib("libz_user.so", "int zlibVersion(void); int u(void){return zlibVersion()!=0;}", libs=["-lz"])
    target = fx.p("libz_user.so")
    drv = build_driver(fx, "drv_version", "int vfun2(void); int use_v2(void){return vfun2();}",
                       flags=rpath(fx.p("one")), libs=[fx.p("two/libx.so")])
    run_pair("start-up: the executable's RPATH finds a copy without the version it needs", target,
             driver=drv, expect="process-cannot-start")
    drv = build_driver(fx, "drv_versions2",
                       "int vfun2(void); int vfun3(void); int use_v(void){return vfun2()+vfun3();}",
                       flags=rpath(fx.p("one")), libs=[fx.p("two/libx.so")])
    run_pair("start-up: every missing version is printed before the process exits", target,
             driver=drv, expect="process-cannot-start")
    fx.lib("gone/libgone_start.so", "int gone(void){return 1;}")
    drv = build_driver(fx, "drv_missing", "int gone(void); int use_gone(void){return gone();}",
                       libs=[fx.p("gone/libgone_start.so")])
    os.unlink(fx.p("gone/libgone_start.so"))
    run_pair("start-up: a NEEDED of the executable that is nowhere", target, driver=drv,
             expect="process-cannot-start")
    fx.lib("data/libdata.so", "int start_var = 1; int start_fn(void){return 1;}", soname="libdata.so")
    drv = build_driver(fx, "drv_undef_data", "extern int start_var; int use_var(void){return start_var;}",
                       flags=runpath(fx.p("data")), libs=[fx.p("data/libdata.so")])
    # -z lazy said: Ubuntu's gcc links -z now by default (DF_BIND_NOW), Debian's does not
    drv_fn = build_driver(fx, "drv_undef_fn", "int start_fn(void); int use_fn(void){return start_fn();}",
                          flags=runpath(fx.p("data")) + ["-Wl,-z,lazy"], libs=[fx.p("data/libdata.so")])
    drv_now = build_driver(fx, "drv_undef_now", "int start_fn(void); int use_fn(void){return start_fn();}",
                           flags=runpath(fx.p("data")) + ["-Wl,-z,now"], libs=[fx.p("data/libdata.so")])
    fx.lib("data/libdata.so", "int other(void){return 1;}", soname="libdata.so")
    run_pair("start-up: the executable's undefined data symbol", target, driver=drv,
             expect="process-cannot-start")
    run_pair("start-up: an undefined function of the executable binds lazily", target, driver=drv_fn,
             expect="loads")
    run_pair("start-up: ... and fails with LD_BIND_NOW", target, driver=drv_fn,
             env={"LD_BIND_NOW": "1"}, expect="process-cannot-start")
    run_pair("start-up: ... and fails when the executable is linked -z now", target, driver=drv_now,
             expect="process-cannot-start")
    fx.lib("slash/libslash.so", "int sl(void){return 1;}", soname="/")
    drv = build_driver(fx, "drv_slash", "int sl(void); int use_sl(void){return sl();}",
                       libs=[fx.p("slash/libslash.so")])
    run_pair("start-up: a NEEDED \"/\" (ld.so's own strerror: Error 21)", target, driver=drv,
             expect="process-cannot-start")


def requested_name_cases():
    # (2) errors raised after the file is opened name it as requested;
    # (3) a bare name without ".so" that is no module is searched like dlopen()
    fx = Fx("requested-name")
    fx.write("e.c", b"int main(void){return 0;}\n")
    os.makedirs(fx.p("d"))
    sh([CC, "-fPIE", "-pie", "-o", fx.p("d/tst-pie1"), fx.p("e.c")])
    sh([CC, "-no-pie", "-fno-pie", "-o", fx.p("d/tst-exec"), fx.p("e.c")])
    fx.lib("d/libnoopen16.so", "int x(void){return 1;}", flags=["-Wl,-z,nodlopen"])
    llp = {"LD_LIBRARY_PATH": fx.p("d")}
    nm = "not an importable module"
    run_pair("a bare name found on LD_LIBRARY_PATH: a PIE, named as requested", "tst-pie1", env=llp,
             expect="cannot-load", meaning=nm)
    run_pair("a bare name: a non-PIE executable, named as requested", "tst-exec", env=llp,
             expect="cannot-load", meaning=nm)
    run_pair("a bare name: DF_1_NOOPEN, named as requested", "libnoopen16.so", env=llp, expect="cannot-load")
    fx.lib("libuses_noopen.so", "int x(void); int u(void){return x();}",
           libs=["-Wl,--no-as-needed", "-L" + fx.p("d"), "-lnoopen16"], flags=runpath(fx.p("d")))
    run_pair("a NEEDED bare name reaching a DF_1_NOOPEN object: named by the NEEDED string",
             fx.p("libuses_noopen.so"), expect="cannot-load")
    run_pair("a bare name that exists nowhere and is no module", "tst-nowhere16",
             expect="library-not-found", meaning=nm)
    # (4) a missing path: the loader's text, exit status 3
    run_pair("a missing absolute path: the loader's text, exit 3", fx.p("gone/libgone16.so"),
             expect="library-not-found", exit_code=3)
    run_pair("a missing relative path", "./libgone16.so", cwd=fx.dir, expect="library-not-found",
             exit_code=3)
    run_pair("a path through a file (ENOTDIR)", fx.p("e.c") + "/libx.so", expect="library-not-found",
             exit_code=3)


def strsz_cases():
    # (5) DT_NEEDED strings past DT_STRSZ are used as glibc does
    fx = Fx("strsz")
    fx.lib("dep/libpast_strsz.so", "int ps(void){return 1;}")
    fx.lib("libneeds_past.so", "int ps(void); int u(void){return ps();}",
           libs=[fx.p("dep/libpast_strsz.so")], flags=runpath(fx.p("dep")))
    cut_strsz_before(fx.p("libneeds_past.so"), "libpast_strsz.so")
    run_pair("a NEEDED past DT_STRSZ is still loaded", fx.p("libneeds_past.so"), expect="loads")
    os.rename(fx.p("dep/libpast_strsz.so"), fx.p("dep/moved.so"))
    run_pair("a NEEDED past DT_STRSZ that is missing fails the load", fx.p("libneeds_past.so"),
             expect="library-not-found")
    fx.lib("slash/libslash.so", "int sl(void){return 1;}", soname="/")
    fx.lib("libneeds_slash.so", "int sl(void); int u(void){return sl();}",
           libs=[fx.p("slash/libslash.so")])
    cut_strsz_before(fx.p("libneeds_slash.so"), "/")
    run_pair("a NEEDED \"/\" past DT_STRSZ under dlopen", fx.p("libneeds_slash.so"), expect="invalid-elf")
    target = fx.p("libneeds_slash.so")
    drv = build_driver(fx, "drv_slash", "int sl(void); int use_sl(void){return sl();}",
                       libs=[fx.p("slash/libslash.so")])
    cut_strsz_before(drv, "/")
    run_pair("... and at the executable's start-up", target, driver=drv, expect="process-cannot-start")


def tunables_cases():
    # (6) GLIBC_TUNABLES, read from the environment like LD_LIBRARY_PATH
    fx = Fx("tunables")
    best = real_search_prefixes({})
    for level, tun in (("x86-64-v4", "glibc.cpu.hwcaps=-AVX512F"), ("x86-64-v3", "glibc.cpu.hwcaps=-AVX2"),
                       ("x86-64-v2", "glibc.cpu.hwcaps=-SSE4_2")):
        # one directory per level: the plain copy lacks what the level's copy has
        sym = f"hw_{level.replace('-', '_')}"
        fx.lib(f"{level}/libhw.so", "int hw_base(void){return 1;}", soname="libhw.so")
        fx.lib(f"{level}/glibc-hwcaps/{level}/libhw.so", f"int {sym}(void){{return 1;}}", soname="libhw.so")
        lib = fx.lib(f"libneeds_{sym}.so", f"int {sym}(void); int u(void){{return {sym}();}}",
                     libs=[fx.p(f"{level}/glibc-hwcaps/{level}/libhw.so")], flags=runpath(fx.p(level)))
        active = f"glibc-hwcaps/{level}" in real_search_prefixes({"GLIBC_TUNABLES": tun})
        was = f"glibc-hwcaps/{level}" in best
        if not was:
            report(None, f"{tun} on a CPU without {level}", "the CPU does not have the level")
            continue
        run_pair(f"glibc-hwcaps/{level} is used on this CPU", lib, expect="loads")
        run_pair(f"{tun} drops glibc-hwcaps/{level}", lib, env={"GLIBC_TUNABLES": tun},
                 expect="loads" if active else "undefined-symbol", assumption="GLIBC_TUNABLES")
    plat = real_platform()
    fx.lib(f"{plat}/libplat.so", "int pl(void){return 1;}")
    lib = fx.lib("libuses_plat.so", "int pl(void); int u(void){return pl();}",
                 libs=[fx.p(f"{plat}/libplat.so")], flags=runpath("$ORIGIN/$PLATFORM"))
    tun = {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"}
    plat_tuned = next((x for x in real_search_prefixes(tun) if x and "/" not in x and x != "tls"
                       and x not in ("x86_64", "avx512_1")), "x86_64")
    run_pair("$PLATFORM with glibc.cpu.hwcaps=-AVX2 (haswell needs AVX2)", lib, env=tun,
             expect="loads" if plat_tuned == plat else "library-not-found")
    fx.lib("leg/x86_64/libleg.so", "int lg(void){return 1;}", soname="libleg.so")
    lib = fx.lib("libuses_leg.so", "int lg(void); int u(void){return lg();}",
                 libs=[fx.p("leg/x86_64/libleg.so")], flags=runpath(fx.p("leg")))
    for label, env in (("the legacy x86_64 subdirectory is searched (glibc 2.36)", {}),
                       ("glibc.cpu.hwcap_mask=0 drops the legacy hwcap subdirectories",
                        {"GLIBC_TUNABLES": "glibc.cpu.hwcap_mask=0"})):
        run_pair(label, lib, env=env,
                 expect="loads" if "x86_64" in real_search_prefixes(env) else "library-not-found")
    fx.lib("tls/libbig16.so", "__thread char big16[4096] __attribute__((tls_model(\"initial-exec\")));"
           "char *f(void){return big16;}")
    fx.lib("tls/libsmall16.so", "__thread int small16 __attribute__((tls_model(\"initial-exec\")));"
           "int *f(void){return &small16;}")
    run_pair("glibc.rtld.optional_static_tls=8192 makes room for 4096 bytes", fx.p("tls/libbig16.so"),
             env={"GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=8192"}, expect="loads",
             assumption="optional_static_tls")
    # the surplus is 1664 bytes by default; what dlopen may take also
    # depends on the start-up's own TLS and alignment: probe the edge
    def ie(size):
        return fx.lib(f"tls/libie{size}.so",
                      f"__thread char ie{size}[{size}] __attribute__((tls_model(\"initial-exec\")));"
                      f"char *f(void){{return ie{size};}}")
    for size in (1000, 1260):
        ie(size)
    # the largest size (a multiple of 4) the real loader still takes: 1712 on
    # Debian 12, 1720 on Ubuntu 24.04, whose libc's own start-up TLS differs;
    # abiscope must agree on both sides of it
    def real_loads(size):
        out = fx.p(f"tls/ie{size}.json")
        subprocess.run([DRIVER, "--out", out, ie(size)], capture_output=True, timeout=60)
        with open(out) as f:
            return json.load(f)["loads"]
    lo, hi = 1024, 2048  # fits, does not fit (checked below through run_pair)
    while hi - lo > 4:
        mid = (lo + hi) // 2 // 4 * 4
        lo, hi = (mid, hi) if real_loads(mid) else (lo, mid)
    run_pair(f"{lo} bytes of initial-exec TLS fit in the default surplus", ie(lo), expect="loads")
    run_pair(f"{hi} bytes do not", ie(hi), expect="static-tls-exhausted")
    run_pair("glibc.rtld.optional_static_tls=0 shrinks the surplus by 512 bytes", fx.p("tls/libie1260.so"),
             env={"GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=0"}, expect="static-tls-exhausted")
    run_pair("glibc.rtld.nns=1 shrinks it by 864 bytes", fx.p("tls/libie1000.so"),
             env={"GLIBC_TUNABLES": "glibc.rtld.nns=1"}, expect="static-tls-exhausted",
             assumption="glibc.rtld.nns")
    run_pair("glibc.rtld.nns out of its bounds is ignored", fx.p("tls/libie1000.so"),
             env={"GLIBC_TUNABLES": "glibc.rtld.nns=99:glibc.rtld.optional_static_tls=-1"}, expect="loads")
    run_pair("a small initial-exec TLS with no optional surplus", fx.p("tls/libsmall16.so"),
             env={"GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=0"}, expect="loads")
    run_pair("a tunable that does not change a load is listed as not modelled", fx.p("tls/libsmall16.so"),
             env={"GLIBC_TUNABLES": "glibc.malloc.check=3"}, expect="loads", assumption="not modelled")


def constructor_cases():
    # (7) constructors: what abiscope cannot run is an assumption of the verdict
    fx = Fx("constructors")
    fx.lib("libctor_dlopen.so", "#include <dlfcn.h>\n"
           "__attribute__((constructor)) static void c(void){ dlopen(\"libabiscope-ctor-missing.so\", RTLD_NOW); }"
           "int f(void){return 1;}", libs=["-ldl"])
    run_pair("a constructor that dlopens a missing library: the load succeeds", fx.p("libctor_dlopen.so"),
             expect="loads", assumption="imports dlopen")
    fx.lib("libctor_lazy_ok.so", "int nosuch_ok(void);"
           "__attribute__((constructor)) static void c(void){}"
           "int f(void){return nosuch_ok();}", flags=["-Wl,-z,lazy"])
    run_pair("unresolved PLT slots under --lazy, not called by the constructor", fx.p("libctor_lazy_ok.so"),
             lazy=True, expect="loads", assumption="nosuch_ok")
    fx.lib("libctor_lazy_call.so", "int nosuch_ctor(void);"
           "__attribute__((constructor)) static void c(void){ nosuch_ctor(); }"
           "int f(void){return 1;}", flags=["-Wl,-z,lazy", "-Wl,--unresolved-symbols=ignore-all"])
    run_pair("a constructor calls an unresolved lazy function: the real process dies",
             fx.p("libctor_lazy_call.so"), lazy=True, died=True)
    # glibc's elf/tst-initfinilazyfail in its forms: a tail call at -O2, with IBT's .plt.sec, a C++
    # static initialiser (through the initialiser function), and calls abiscope cannot see or that
    # do not run (a conditional call; a call of a function pointer; -O0 C++'s guarded initialiser)
    for tag, flags in (("o2", ["-O2"]), ("ibt", ["-O2", "-fcf-protection"])):
        fx.lib(f"libctor_lazy_{tag}.so", "void nosuch_ctor2(void);"
               "__attribute__((constructor)) static void c(void){ nosuch_ctor2(); }",
               flags=["-Wl,-z,lazy", "-Wl,--unresolved-symbols=ignore-all"] + flags)
        run_pair(f"a constructor's call of an unresolved lazy function ({' '.join(flags)}): dies",
                 fx.p(f"libctor_lazy_{tag}.so"), lazy=True, died=True)
    fx.lib("libctor_lazy_cond.so", "void nosuch_cond(void); static int n;"
           "__attribute__((constructor)) static void c(void){ if (++n > 5) nosuch_cond(); }",
           flags=["-O0", "-Wl,-z,lazy", "-Wl,--unresolved-symbols=ignore-all"])
    run_pair("a constructor's conditional call that does not run: loads, the assumption named",
             fx.p("libctor_lazy_cond.so"), lazy=True, expect="loads", assumption="nosuch_cond")


def dlopen_mode_cases():
    # RTLD_NOLOAD, RTLD_DEEPBIND and dlopen called from a library
    fx = Fx("dlopen-modes")
    fx.lib("lib/libnl.so", "int nl(void){return 1;}")
    run_pair("RTLD_NOLOAD of an object not loaded: NULL, no error", fx.p("lib/libnl.so"), noload=True,
             expect="not-loaded-noload")
    run_pair("RTLD_NOLOAD of a preloaded object", fx.p("lib/libnl.so"), noload=True,
             preload=[(fx.p("lib/libnl.so"), False)], expect="loads")
    run_pair("RTLD_NOLOAD by SONAME of an object loaded by path", "libnl.so", noload=True,
             preload=[(fx.p("lib/libnl.so"), False)], expect="loads")
    run_pair("RTLD_NOLOAD of a name that is nowhere", "libabiscope-noload-none.so", noload=True,
             expect="library-not-found")
    run_pair("RTLD_NOLOAD of libc, loaded at start-up", "libc.so.6", noload=True, expect="loads")
    fx.write("e.c", b"int main(void){return 0;}\n")
    sh([CC, "-fPIE", "-pie", "-o", fx.p("pie16"), fx.p("e.c")])
    run_pair("RTLD_NOLOAD of a PIE: NULL before the PIE check", fx.p("pie16"), noload=True,
             expect="not-loaded-noload")
    # RTLD_DEEPBIND: the local scope first; here it reaches a provider without
    # version information that glibc <= 2.40 asserts on
    fx.lib("v2/libv.so", "int vf(void){return 2;}", version_script="V2 { global: vf; local: *; };")
    fx.lib("nover/libv.so", "int vf(void){return 1;}")
    fx.lib("libg16.so", "int vf(void){return 3;}")
    fx.lib("libdeep.so", "int vf(void); int u(void){return vf();}", libs=[fx.p("v2/libv.so")],
           flags=runpath(fx.p("nover")))
    run_pair("without RTLD_DEEPBIND the global scope provides the symbol", fx.p("libdeep.so"),
             preload=[(fx.p("libg16.so"), True)], expect="loads")
    run_pair("RTLD_DEEPBIND binds in the object's own dependencies first", fx.p("libdeep.so"),
             preload=[(fx.p("libg16.so"), True)], deepbind=True, expect="no-version-information")
    run_pair("RTLD_DEEPBIND of a plain library", fx.p("lib/libnl.so"), deepbind=True, expect="loads")
    # --from: dlopen called from a library (its RPATH/RUNPATH, its $ORIGIN)
    caller = ("#include <dlfcn.h>\n"
              "void *abiscope_dlopen_from(const char *n, int f){ void *h = dlopen(n, f); "
              "__asm__ volatile(\"\" ::: \"memory\"); return h; }")
    fx.lib("t/libt16.so", "int t16(void){return 1;}")
    fx.lib("t/sub/libt16o.so", "int t16o(void){return 1;}")
    fx.lib("callers/libcaller_runpath.so", caller, libs=["-ldl"], flags=runpath(fx.p("t")))
    fx.lib("callers/libcaller_rpath.so", caller, libs=["-ldl"], flags=rpath(fx.p("t")))
    fx.lib("callers/libcaller_none.so", caller, libs=["-ldl"])
    os.symlink(fx.p("t/sub"), fx.p("callers/sub"))
    run_pair("dlopen from the executable: the caller's RUNPATH is not there", "libt16.so",
             expect="library-not-found")
    run_pair("dlopen from a library: its RUNPATH applies", "libt16.so",
             from_obj=fx.p("callers/libcaller_runpath.so"), expect="loads")
    run_pair("dlopen from a library: its RPATH applies", "libt16.so",
             from_obj=fx.p("callers/libcaller_rpath.so"), expect="loads")
    run_pair("dlopen from a library without either", "libt16.so",
             from_obj=fx.p("callers/libcaller_none.so"), expect="library-not-found")
    run_pair("dlopen(\"$ORIGIN/...\") from a library: the caller's $ORIGIN", "$ORIGIN/sub/libt16o.so",
             from_obj=fx.p("callers/libcaller_none.so"), expect="loads")
    run_pair("... and from the executable", "$ORIGIN/sub/libt16o.so", expect="library-not-found")
    run_pair("a caller already loaded by a preload", "libt16.so",
             preload=[(fx.p("callers/libcaller_runpath.so"), False)],
             from_obj=fx.p("callers/libcaller_runpath.so"), expect="loads")


def glibc_test_cases():
    startup_cases()
    requested_name_cases()
    strsz_cases()
    tunables_cases()
    constructor_cases()
    dlopen_mode_cases()


def system_cases(dirs):
    """Every shared library in dirs, dlopen()ed alone with RTLD_NOW."""
    skip_names = ("libasan", "libtsan", "liblsan", "libubsan", "libhwasan", "libmemusage",
                  "libpcprofile", "libSegFault")
    libs = []
    for d in dirs:
        if not os.path.isdir(d):
            report(None, f"system libraries in {d}", "directory absent")
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if ".so" not in name or not os.path.isfile(p):
                continue
            if name.startswith(skip_names):
                continue
            libs.append(p)
    agree, disagree, broken = 0, [], []
    for p in libs:
        out = tempfile.NamedTemporaryFile(prefix="abiscope-drv-", delete=False)
        out.close()
        try:
            subprocess.run([DRIVER, "--out", out.name, p], capture_output=True, timeout=30,
                           stdin=subprocess.DEVNULL)
            with open(out.name) as f:
                r = json.load(f)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            broken.append(p)   # the library's own constructor crashed or hung
            os.unlink(out.name)
            continue
        os.unlink(out.name)
        a = subprocess.run([ABISCOPE, "why", "--json", "--process", DRIVER, p],
                           capture_output=True, text=True, timeout=120)
        try:
            j = json.loads(a.stdout)
        except ValueError:
            disagree.append((p, r["error"], "abiscope failed: " + a.stderr[-300:]))
            continue
        if j["loads"] == r["loads"] and j["error"] == r["error"]:
            agree += 1
        else:
            disagree.append((p, r["error"], j["error"]))
    detail = "\n".join(f"{p}\n  real     {e1}\n  abiscope {e2}" for p, e1, e2 in disagree[:20])
    report(not disagree and agree > 0,
           f"system libraries agree with the real loader ({agree} compared, "
           f"{len(broken)} whose constructors crash excluded)", detail)
    for p in broken:
        print(f"# excluded (constructor crashed or hung under the real loader): {p}")


def main():
    if not os.path.exists(DRIVER):
        print(f"not ok - dlopen driver {DRIVER} missing (run make test)")
        return 1
    os.makedirs(WORK, exist_ok=True)
    mode = sys.argv[1] if len(sys.argv) > 1 else "fixtures"
    if mode == "fixtures":
        fixture_cases()
        version_record_cases()
        hostile_table_cases()
        glibc_test_cases()
    elif mode == "system":
        system_cases(sys.argv[2:])
    else:
        print(__doc__)
        return 2
    print(f"# differential {mode}: {results['ok']} ok, {results['fail']} failed, {results['skip']} skipped")
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
