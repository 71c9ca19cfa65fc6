#!/usr/bin/env python3
"""End to end: C++ ABI explanations, built from C++ source at test time.

Each case compiles a small "torch" (or other library) and an extension
with g++ exactly the way the real break happens -- an extension linked
against one version of a library and run against another, built with
_GLIBCXX_USE_CXX11_ABI=0 against a library built with 1, linked against a
newer libstdc++ than the one the loader finds -- then checks:

  * the real loader (tests/tools/dlopen_driver) fails the way abiscope says;
  * abiscope's JSON names the cause, the near misses with their element by
    element differences, the versions and releases, the expected provider;
  * the text output matches tests/golden/cxx_*.txt (UPDATE_GOLDEN=1 rewrites);
  * where abiscope recommends a fix that the loader's rules decide
    (LD_PRELOAD, --preload-global), the real loader agrees that it works,
    and that the alternative it rules out (LD_LIBRARY_PATH) does not.

Environment: ABISCOPE (the binary), BUILD (the build directory holding
tools/dlopen_driver).  Prints TAP lines.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ABISCOPE = os.path.abspath(os.environ.get("ABISCOPE", os.path.join(TOP, "abiscope")))
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(TOP, "build")))
DRIVER = os.path.join(BUILD, "tools", "dlopen_driver")
FX = os.path.join(BUILD, "cxx")
CXX = os.environ.get("FIXTURE_CXX", "g++")
CC = os.environ.get("FIXTURE_CC", "cc")
GOLDEN = os.path.join(TOP, "tests", "golden")

fails = 0


def ok(cond, name, detail=""):
    global fails
    if cond:
        print(f"ok - {name}")
    else:
        fails += 1
        print(f"not ok - {name}")
        for line in str(detail).splitlines()[:40]:
            print(f"#   {line}")


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def cxx_lib(out, src, soname=None, abi=1, flags=(), libs=()):
    """A shared library from C++ source text."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    srcf = out + ".cpp"
    write(srcf, src)
    cmd = [CXX, "-shared", "-fPIC", "-O1", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-o", out, srcf]
    if soname:
        cmd.append(f"-Wl,-soname,{soname}")
    sh(cmd + list(flags) + list(libs))
    return out


def c_lib(out, src, soname=None, flags=(), libs=()):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    srcf = out + ".c"
    write(srcf, src)
    cmd = [CC, "-shared", "-fPIC", "-o", out, srcf]
    if soname:
        cmd.append(f"-Wl,-soname,{soname}")
    sh(cmd + list(flags) + list(libs))
    return out


def torch_env(root, version="2.10.0+cu130", cuda="13.0"):
    """site-packages with a torch/ package: version.py (read as text by abiscope)."""
    sp = os.path.join(root, "lib", "python3.11", "site-packages")
    write(os.path.join(sp, "torch", "version.py"),
          "from typing import Optional\n"
          "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
          f"__version__ = '{version}'\n"
          "debug = False\n"
          f"cuda: Optional[str] = {repr(cuda) if cuda else 'None'}\n"
          "git_version = '0123456789abcdef0123456789abcdef01234567'\n"
          "hip: Optional[str] = None\n")
    os.makedirs(os.path.join(sp, "torch", "lib"), exist_ok=True)
    return sp


def real(target, driver=DRIVER, env=None, preload=()):
    """The oracle: dlopen for real in the driver process."""
    e = dict(os.environ)
    e.pop("LD_LIBRARY_PATH", None)
    e.pop("LD_PRELOAD", None)
    e.update(env or {})
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    args = []
    for p, glob in preload:
        args += ["--preload-global" if glob else "--preload", p]
    subprocess.run([driver, "--out", out] + args + [target], env=e, capture_output=True, timeout=60)
    try:
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def why(target, *opts, driver=DRIVER, env=None):
    e = dict(os.environ)
    e.pop("LD_LIBRARY_PATH", None)
    e["NO_COLOR"] = "1"
    e.update(env or {})
    j = subprocess.run([ABISCOPE, "why", "--json", "--process", driver] + list(opts) + [target],
                       capture_output=True, text=True, env=e, timeout=120)
    t = subprocess.run([ABISCOPE, "why", "--process", driver] + list(opts) + [target],
                       capture_output=True, text=True, env=e, timeout=120)
    try:
        doc = json.loads(j.stdout)
    except ValueError:
        doc = None
    return j.returncode, doc, t.stdout, j.stderr + t.stderr


def portable(text):
    """Output without what differs between machines and build directories."""
    text = text.replace(FX, "<fx>").replace(BUILD, "<build>").replace(TOP, "<top>")
    text = re.sub(r"GCC: \([^)]*\) [0-9][0-9.]*", "<compiler>", text)
    lines = []
    system_depth = None  # the tree column of the system library whose subtree is being left out
    for line in text.splitlines():
        if line.startswith("loader ") or line.startswith("gpu "):
            continue  # the glibc and the GPUs of this machine
        if re.match(r"\s+another copy: /(usr/)?lib", line):
            continue  # the system's own copies differ between machines
        # the dependencies of a system library differ between machines (Ubuntu
        # 24.04's libgcc_s.so.1 needs ld-linux-x86-64.so.2, Debian 12's does not):
        # its own line stays, the lines under it go
        at = line.find("\u2500\u2500 ")
        if at < 0:
            system_depth = None
        elif system_depth is not None and at > system_depth:
            continue
        else:
            system_depth = at if re.search(r" /(usr/)?lib(64|32|x32)?/\S+$", line) else None
        lines.append(line)
    return "\n".join(lines) + "\n"


def golden(name, text):
    want = os.path.join(GOLDEN, name)
    got = portable(text)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        with open(want, "w") as f:
            f.write(got)
        ok(True, f"golden {name} (updated)")
        return
    try:
        with open(want) as f:
            exp = f.read()
    except OSError:
        exp = None
    if exp == got:
        ok(True, f"golden {name}")
    else:
        import difflib
        diff = "".join(difflib.unified_diff((exp or "").splitlines(True), got.splitlines(True),
                                            "golden/" + name, "got"))
        ok(False, f"golden {name}", diff)


def finding(doc, fid):
    for f in (doc or {}).get("findings", []):
        if f["id"] == fid:
            return f
    return None


# ------------------------------------------------------------------ cases

C10_CUDA_NEW = r"""
namespace c10 { namespace cuda {
// torch 2.10: line_number became unsigned (the 2.9 -> 2.10 break)
void c10_cuda_check_implementation(int err, const char *file, const char *fn, unsigned int line, bool a)
{ (void)err; (void)file; (void)fn; (void)line; (void)a; }
void SetDevice(signed char d, bool b) { (void)d; (void)b; }
int device_count() { return 1; }
int current_device() { return 0; }
} }
"""

C10_CUDA_OLD = r"""
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int err, const char *file, const char *fn, int line, bool a)
{ (void)err; (void)file; (void)fn; (void)line; (void)a; }
} }
"""

EXT_CHECK = r"""
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int, const char *, const char *, int, bool);
} }
extern "C" int PyInit__C(void)
{ c10::cuda::c10_cuda_check_implementation(0, __FILE__, __func__, __LINE__, true); return 0; }
"""

C10_CORE = r"""
#include <string>
namespace c10 {
struct SourceLocation { const char *function; const char *file; unsigned line; };
struct Error { Error(SourceLocation loc, std::string msg); std::string msg_; };
Error::Error(SourceLocation loc, std::string msg) : msg_(msg) { (void)loc; }
namespace detail {
void torchCheckFail(const char *func, const char *file, unsigned line, const std::string &msg)
{ (void)func; (void)file; (void)line; (void)msg; }
}
namespace cuda { int c10_local_cuda_helper() { return 0; } }
}
"""


def case_signature():
    """The torch 2.9 -> 2.10 break: parameter 4 int -> unsigned int."""
    root = os.path.join(FX, "sig")
    sp = torch_env(root)
    cxx_lib(os.path.join(sp, "torch", "lib", "libc10.so"), C10_CORE, "libc10.so", abi=1)
    cxx_lib(os.path.join(sp, "torch", "lib", "libc10_cuda.so"), C10_CUDA_NEW, "libc10_cuda.so")
    # torch's CUDA library and the CUDA runtime it links (a stub with the real SONAME)
    cudart = c_lib(os.path.join(sp, "nvidia", "cu13", "lib", "libcudart.so.13"),
                   "int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n", "libcudart.so.13")
    c_lib(os.path.join(sp, "torch", "lib", "libtorch_cuda.so"),
          "int cudaGetDeviceCount(int *);\nint torch_cuda_probe(void) { int n; return cudaGetDeviceCount(&n); }\n",
          "libtorch_cuda.so", flags=["-L" + os.path.dirname(cudart), "-Wl,-rpath,$ORIGIN/../../nvidia/cu13/lib"],
          libs=["-l:libcudart.so.13"])
    old = cxx_lib(os.path.join(root, "oldtorch", "libc10_cuda.so"), C10_CUDA_OLD, "libc10_cuda.so")
    ext = cxx_lib(os.path.join(sp, "myext", "_C.abi3.so"), EXT_CHECK,
                  flags=["-L" + os.path.dirname(old), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib"],
                  libs=["-lc10_cuda"])
    r = real(ext)
    ok(not r["loads"] and "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib" in (r["error"] or ""),
       "signature: the real loader fails on the int version of the symbol", r)
    rc, doc, text, err = why(ext)
    ok(rc == 1 and doc is not None, "signature: abiscope exits 1 with JSON", err)
    f = finding(doc, "undefined-symbol")
    ok(doc and doc["error"] == r["error"], "signature: same dlerror as the real loader",
       f"{doc and doc['error']}\n{r['error']}")
    ok(f and f["cause"] == "signature-changed", "signature: cause signature-changed", f)
    near = f["near"][0] if f and f["near"] else {}
    ok(near.get("diff") == ["parameter 4: int -> unsigned int"], "signature: diff names parameter 4", near)
    ok(f and f["demangled"] == "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)",
       "signature: the wanted signature in full", f and f["demangled"])
    ok(near.get("demangled") ==
       "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, unsigned int, bool)",
       "signature: the installed signature in full", near)
    ok(near.get("provider", "").endswith("/torch/lib/libc10_cuda.so") and near.get("in_scope"),
       "signature: the provider is the installed libc10_cuda.so", near)
    tj = (f or {}).get("torch") or {}
    rels = (tj.get("compatible") or {}).get("releases") or []
    ok(tj.get("installed") == "2.10.0+cu130" and tj.get("built_against_other") is True and rels
       and "2.10.0" not in rels and "2.9.1" in rels,
       "signature: names the installed torch, and the releases that export the int signature", tj)
    ok(f and ("pip install torch==%s, or a myext built for torch 2.10.0+cu130" % (rels[-1] if rels else "?"))
       == f["fix"], "signature: the fix names the torch to install (the newest that has it)", f and f["fix"])
    bw = doc and doc.get("built_with") or {}
    t = bw.get("torch") or {}
    ok(t.get("version") == "2.10.0+cu130" and t.get("cuda") == "13.0" and t.get("local_tag") == "cu130"
       and t.get("git_version", "").startswith("0123456789") and t.get("cxx11_abi") == 1
       and t.get("cuda_runtime") == "libcudart.so.13" and t.get("cuda_build") is True,
       "signature: torch identity from version.py, libc10.so and libtorch_cuda.so", t)
    tg = bw.get("target") or {}
    ok(tg.get("torch_api") == "unstable" and tg.get("torch_cxx_imports") == 1,
       "signature: the extension uses the unstable C++ API", tg)
    ok(any(c.startswith("GCC: ") for c in tg.get("compilers", [])), "signature: compiler from .comment", tg)
    ok("was built against a different torch than the installed 2.10.0+cu130" in text,
       "signature: text says plainly it was built against a different torch", text)
    golden("cxx_signature.txt", text)


def case_cxx11_abi():
    """An extension built with the old std::string against a torch built with the new one."""
    root = os.path.join(FX, "abi")
    sp = torch_env(root, "2.7.1+cu126", "12.6")
    cxx_lib(os.path.join(sp, "torch", "lib", "libc10.so"), C10_CORE, "libc10.so", abi=1)
    old = cxx_lib(os.path.join(root, "abi0", "libc10.so"), C10_CORE, "libc10.so", abi=0)
    ext_src = r"""
#include <string>
namespace c10 { namespace detail {
void torchCheckFail(const char *func, const char *file, unsigned line, const std::string &msg);
} }
extern "C" int PyInit__C(void) { c10::detail::torchCheckFail("f", "x.cpp", 1, std::string("boom")); return 0; }
"""
    ext = cxx_lib(os.path.join(sp, "oldext", "_C.so"), ext_src, abi=0,
                  flags=["-L" + os.path.dirname(old), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib"],
                  libs=["-lc10"])
    r = real(ext)
    ok(not r["loads"] and "RKSs" in (r["error"] or ""), "cxx11-abi: the real loader fails on the Ss symbol", r)
    rc, doc, text, err = why(ext)
    f = finding(doc, "undefined-symbol")
    ok(f and f["cause"] == "cxx11-abi", "cxx11-abi: cause cxx11-abi", f)
    ok("built with _GLIBCXX_USE_CXX11_ABI=0, the installed libc10.so uses 1" in text,
       "cxx11-abi: names both flavours", text)
    near = f["near"][0] if f and f["near"] else {}
    ok("std::string flavour: _GLIBCXX_USE_CXX11_ABI=0 -> 1" in near.get("diff", []),
       "cxx11-abi: the diff names the flavour change", near)
    ok(f and "_GLIBCXX_USE_CXX11_ABI=1" in (f["fix"] or ""), "cxx11-abi: the fix names the flavour to build with",
       f and f["fix"])
    tg = (doc or {}).get("built_with", {}).get("target") or {}
    ok(tg.get("cxx11_abi") == 0, "cxx11-abi: the extension's own flavour is 0", tg)
    golden("cxx_cxx11_abi.txt", text)

    # the reverse, without torch: a new-ABI extension, an old-ABI library
    lib0 = cxx_lib(os.path.join(root, "plain", "lib", "libnames.so"),
                   "#include <string>\nnamespace names { int lookup(const std::string &s) { return (int)s.size(); } }\n",
                   "libnames.so", abi=0)
    lib1 = cxx_lib(os.path.join(root, "plain", "build1", "libnames.so"),
                   "#include <string>\nnamespace names { int lookup(const std::string &s) { return (int)s.size(); } }\n",
                   "libnames.so", abi=1)
    ext1 = cxx_lib(os.path.join(root, "plain", "app", "plugin.so"),
                   "#include <string>\nnamespace names { int lookup(const std::string &); }\n"
                   "extern \"C\" int plugin_init(void) { return names::lookup(std::string(\"x\")); }\n",
                   abi=1, flags=["-L" + os.path.dirname(lib1), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"],
                   libs=["-lnames"])
    rc, doc, text, err = why(ext1)
    f = finding(doc, "undefined-symbol")
    ok(f and f["cause"] == "cxx11-abi" and
       "built with _GLIBCXX_USE_CXX11_ABI=1, the installed libnames.so uses 0" in text,
       "cxx11-abi: the reverse direction, outside torch", text)
    ok(f and "rebuild plugin.so with _GLIBCXX_USE_CXX11_ABI=0" in (f["fix"] or ""),
       "cxx11-abi: the reverse fix", f and f["fix"])


def case_devtoolset_abi0():
    """torch 2.0-2.6 from PyPI: an old-ABI libc10.so (its own names pass the
    old std::string) that also exports new-ABI names of std:: itself, the
    parts of libstdc++ devtoolset links in statically.  Those say how that
    libstdc++ was built, not which std::string c10 passes: the flag is 0."""
    root = os.path.join(FX, "devtoolset")
    sp = torch_env(root, "2.6.0+cu124", "12.4")
    lib = os.path.join(sp, "torch", "lib")
    own = write(os.path.join(root, "own.cpp"),
                "#include <string>\nnamespace c10 { void LogAPIUsage(const std::string &s) { (void)s.size(); } }\n")
    std = write(os.path.join(root, "std.cpp"),
                "#include <string>\n#include <stdexcept>\nnamespace std {\n"
                "int abiscope_probe(const std::string &s) { static int n = (int)s.size(); return n; }\n}\n")
    sh([CXX, "-c", "-fPIC", "-O1", "-D_GLIBCXX_USE_CXX11_ABI=0", "-o", own + ".o", own])
    sh([CXX, "-c", "-fPIC", "-O1", "-D_GLIBCXX_USE_CXX11_ABI=1", "-o", std + ".o", std])
    c10 = os.path.join(lib, "libc10.so")
    sh([CXX, "-shared", "-o", c10, "-Wl,-soname,libc10.so", own + ".o", std + ".o"])
    ext = cxx_lib(os.path.join(sp, "oldext", "_C.so"),
                  "#include <string>\nnamespace c10 { void LogAPIUsage(const std::string &); }\n"
                  "extern \"C\" int PyInit__C(void) { c10::LogAPIUsage(std::string(\"x\")); return 0; }\n",
                  abi=0, flags=["-L" + lib, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib"], libs=["-lc10"])
    nm = sh(["nm", "-D", "--defined-only", c10]).stdout
    ok("_ZSt14abiscope_probeRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE" in nm
       and "_ZN3c1011LogAPIUsageERKSs" in nm, "devtoolset: libc10.so exports both flavours (nm)", nm)
    r = real(ext)
    ok(r["loads"], "devtoolset: the real loader binds an old-ABI extension to it", r)
    rc, doc, text, err = why(ext)
    t = (doc or {}).get("built_with", {}).get("torch") or {}
    ok(t.get("cxx11_abi") == 0, "devtoolset: the installed torch's flag is 0, from c10's own names", t)
    ok(rc == 0 and doc and doc.get("loads"), "devtoolset: abiscope says it loads, as the loader does", err)


def dist_info(sp, name, version, files):
    d = os.path.join(sp, f"{name}-{version}.dist-info")
    write(os.path.join(d, "METADATA"), f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    write(os.path.join(d, "RECORD"), "".join(f"{f},,\n" for f in files))


def case_torch_all():
    """check: where a torch mismatch is a cause, the environment-wide answer
    says whether any torch release satisfies every package at once.  Two
    packages: one built for torch 2.9 (the int signature), one for 2.10 on
    (unsigned int), beside an installed 2.14.1; the releases come from the
    built-in index, the loader's verdicts from the real loader."""
    root = os.path.join(FX, "torchall")
    sp = torch_env(root, "2.14.1+cu130", "13.0")
    lib = os.path.join(sp, "torch", "lib")
    cxx_lib(os.path.join(lib, "libc10.so"), C10_CORE, "libc10.so", abi=1)
    cxx_lib(os.path.join(lib, "libc10_cuda.so"), C10_CUDA_NEW, "libc10_cuda.so")
    old = cxx_lib(os.path.join(root, "oldtorch", "libc10_cuda.so"), C10_CUDA_OLD, "libc10_cuda.so")
    write(os.path.join(root, "pyvenv.cfg"), "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n")
    exts = {}
    for name, against, line in (("oldkern", os.path.dirname(old), "int"), ("newkern", lib, "unsigned int")):
        src = ("namespace c10 { namespace cuda {\n"
               f"void c10_cuda_check_implementation(int, const char *, const char *, {line}, bool);\n}} }}\n"
               'extern "C" int PyInit__C(void) { c10::cuda::c10_cuda_check_implementation(0, "f", "g", 1, false); '
               "return 0; }\n")
        exts[name] = cxx_lib(os.path.join(sp, name, "_C.abi3.so"), src,
                             flags=["-L" + against, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib"],
                             libs=["-lc10_cuda"])
        dist_info(sp, name, "1.0", [f"{name}/_C.abi3.so"])
    r_old, r_new = real(exts["oldkern"]), real(exts["newkern"])
    ok(not r_old["loads"] and r_new["loads"], "torch-all: the real loader refuses the 2.9 build, loads the 2.10 one",
       (r_old, r_new))
    e = dict(os.environ, NO_COLOR="1")
    e.pop("LD_LIBRARY_PATH", None)
    args = [ABISCOPE, "check", "--no-driver", root]
    j = subprocess.run(args[:2] + ["--json"] + args[2:], capture_output=True, text=True, env=e, timeout=120)
    t = subprocess.run(args, capture_output=True, text=True, env=e, timeout=120)
    try:
        doc = json.loads(j.stdout)
    except ValueError:
        doc = {}
    mods = {m["path"]: m["status"] for d in doc.get("environments", [{}])[0].get("distributions", [])
            for m in d.get("modules", [])}
    ok(mods.get(exts["oldkern"]) == "fails" and mods.get(exts["newkern"]) == "ok",
       "torch-all: check agrees with the loader on both", mods)
    tc = [c for c in doc.get("causes", []) if c["key"].startswith("torch:")]
    te = (tc[0].get("torch_environment") if tc else None) or {}
    pair = sorted(x["name"] for x in (te.get("conflicts") or [[]])[0])
    rel = {x["name"]: x["releases"] for x in (te.get("conflicts") or [[]])[0]}
    ok(te.get("satisfies_all") == [] and pair == ["newkern", "oldkern"]
       and "2.9.1" in rel.get("oldkern", []) and "2.10.0" not in rel.get("oldkern", [])
       and "2.10.0" in rel.get("newkern", []) and "2.9.1" not in rel.get("newkern", []),
       "torch-all: JSON: the torch cause says no release satisfies both, and each one's releases", tc)
    lines = t.stdout.splitlines()
    head = next((i for i, l in enumerate(lines) if "error[undefined-symbol]" in l), None)
    at = next((i for i, l in enumerate(lines) if "no torch release satisfies both " in l), None)
    ok(head is not None and at is not None and at - head <= 2 and "oldkern 1.0 (2." in lines[at]
       and "newkern 1.0 (2." in lines[at],
       "torch-all: text: one line under the cause's headline", t.stdout[-2500:])


def case_torch_own_cuda_lib():
    """torch's own libtorch_cuda.so whose libcusparseLt.so.0 is not
    installed (a torch wheel put in without its nvidia-* dependencies): the
    cusparseLt* symbols it also lacks are consequences of that library, not
    a torch built against another torch."""
    root = os.path.join(FX, "owncuda")
    sp = torch_env(root, "2.9.1+cu128", "12.8")
    lib = os.path.join(sp, "torch", "lib")
    cxx_lib(os.path.join(lib, "libc10.so"), C10_CORE, "libc10.so", abi=1)
    lt = c_lib(os.path.join(root, "elsewhere", "libcusparseLt.so.0"),
               "int cusparseLtInit(void *h) { (void)h; return 0; }\n"
               "int cusparseLtMatmul(void *h) { (void)h; return 0; }\n", "libcusparseLt.so.0")
    cs = c_lib(os.path.join(sp, "nvidia", "cusparse", "lib", "libcusparse.so.12"),
               "int cusparseCreate(void *h) { (void)h; return 0; }\n"
               "int cusparseDestroy(void *h) { (void)h; return 0; }\n", "libcusparse.so.12")
    c_lib(os.path.join(lib, "libtorch_cuda.so"),
          "int cusparseLtInit(void *); int cusparseLtMatmul(void *); int cusparseCreate(void *);\n"
          "int torch_cuda_fn(void) { return cusparseLtInit(0) + cusparseLtMatmul(0) + cusparseCreate(0); }\n",
          "libtorch_cuda.so", flags=["-Wl,-z,now", "-L" + os.path.dirname(lt), "-L" + os.path.dirname(cs),
                                     "-Wl,-rpath,$ORIGIN/../../nvidia/cusparse/lib"],
          libs=["-l:libcusparseLt.so.0", "-l:libcusparse.so.12"])
    ext = c_lib(os.path.join(sp, "torch", "_C.cpython-311-x86_64-linux-gnu.so"),
                "int torch_cuda_fn(void);\nint PyInit__C(void) { return torch_cuda_fn(); }\n",
                flags=["-L" + lib, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib"], libs=["-ltorch_cuda"])
    r = real(ext)
    ok(not r["loads"] and "libcusparseLt.so.0: cannot open shared object file" in (r["error"] or ""),
       "own-cuda: the real loader fails on the missing libcusparseLt.so.0", r)
    rc, doc, text, err = why(ext)
    ok(doc and doc["error"] == r["error"], "own-cuda: same dlerror as the real loader",
       f"{doc and doc['error']}\n{r['error']}")
    fs = (doc or {}).get("findings", [])
    lnf = [f for f in fs if f["id"] == "library-not-found" and "libcusparseLt.so.0" in f["title"]]
    und = [f for f in fs if f["id"] == "undefined-symbol" and "cusparseLt" in f["title"]]
    ok(lnf and und and all(f.get("caused_by") == lnf[0]["index"] for f in und),
       "own-cuda: the cusparseLt* undefined symbols are caused by the missing libcusparseLt.so.0",
       [(f["title"], f.get("caused_by")) for f in fs])
    ok("built against a different torch" not in text and
       not any((f.get("torch") or {}).get("built_against_other") for f in fs),
       "own-cuda: torch's own library is not said to be built against another torch", text)


def version_script(path, last, extra=()):
    lines = ["GLIBCXX_3.4 { global: old_glibcxx_marker; local: *; };"]
    prev = "GLIBCXX_3.4"
    for n in range(1, last + 1):
        lines.append(f"GLIBCXX_3.4.{n} {{ }} {prev};")
        prev = f"GLIBCXX_3.4.{n}"
    lines += list(extra)
    lines.append("CXXABI_1.3 { };")
    return write(path, "\n".join(lines) + "\n")


def case_glibcxx():
    """conda's old libstdc++ shadows the one the extension was built for."""
    root = os.path.join(FX, "conda")
    env = os.path.join(root, "env")
    # the env's libstdc++: GLIBCXX up to 3.4.29 (GCC 11.1's)
    c_lib(os.path.join(env, "lib", "libstdc++.so.6"), "void old_glibcxx_marker(void) {}\n", "libstdc++.so.6",
          flags=["-Wl,--version-script=" + version_script(os.path.join(root, "old.map"), 29)])
    # a newer copy elsewhere on the machine: has GLIBCXX_3.4.32 (GCC 13.2)
    newer = c_lib(os.path.join(root, "newer", "libstdc++.so.6"),
                  "void old_glibcxx_marker(void) {}\nvoid _ZSt21ios_base_library_initv(void) {}\n",
                  "libstdc++.so.6",
                  flags=["-Wl,--version-script=" + version_script(
                      os.path.join(root, "new.map"), 31,
                      ["GLIBCXX_3.4.32 { global: _ZSt21ios_base_library_initv; } GLIBCXX_3.4.31;"])])
    ext = c_lib(os.path.join(env, "lib", "python3.11", "site-packages", "fastops", "_fastops.so"),
                "void _ZSt21ios_base_library_initv(void);\n"
                "int PyInit__fastops(void) { _ZSt21ios_base_library_initv(); return 0; }\n",
                flags=["-L" + os.path.dirname(newer)], libs=["-l:libstdc++.so.6"])
    # the process: conda's python has RPATH $ORIGIN/../lib (a DT_RPATH, not RUNPATH)
    os.makedirs(os.path.join(env, "bin"), exist_ok=True)
    py = os.path.join(env, "bin", "python3")
    sh([CC, "-std=c11", "-D_GNU_SOURCE", "-O1", "-rdynamic", "-o", py,
        os.path.join(TOP, "tests", "tools", "dlopen_driver.c"),
        "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib", "-ldl"])
    llp = os.path.dirname(newer)
    r = real(ext, driver=py, env={"LD_LIBRARY_PATH": llp})
    ok(not r["loads"] and "version `GLIBCXX_3.4.32' not found" in (r["error"] or ""),
       "glibcxx: the real loader fails even with the newer copy on LD_LIBRARY_PATH", r)
    r2 = real(ext, driver=py, env={"LD_PRELOAD": newer})
    ok(r2["loads"], "glibcxx: LD_PRELOAD of the newer copy makes the real loader succeed", r2)
    rc, doc, text, err = why(ext, "--ld-library-path", llp, driver=py)
    f = finding(doc, "version-not-found")
    ok(doc and r["error"] == doc["error"], "glibcxx: same dlerror as the real loader",
       f"{doc and doc['error']}\n{r['error']}")
    ok(f and f["provider_versions"][:2] == ["GLIBCXX_3.4.29", "GLIBCXX_3.4.28"],
       "glibcxx: the provider's versions, newest first", f and f["provider_versions"][:4])
    ok(f and f["required_release"] == "GCC 13.2" and f["provider_newest"] == "GLIBCXX_3.4.29" and
       f["provider_newest_release"] == "GCC 11.1", "glibcxx: versions mapped to GCC releases", f)
    copies = {c["path"]: c for c in (f or {}).get("other_copies", [])}
    ok(copies.get(newer, {}).get("has_version") is True, "glibcxx: finds the copy that has the version", copies)
    ok("which is searched before LD_LIBRARY_PATH: setting LD_LIBRARY_PATH cannot make it pick" in text,
       "glibcxx: says why LD_LIBRARY_PATH cannot help (RPATH first)", text)
    ok(f and f["fix"] == f"start the process with LD_PRELOAD={newer}, or replace {env}/bin/../lib/libstdc++.so.6 "
       "with a copy that has it", "glibcxx: the fix the real loader confirmed", f and f["fix"])
    golden("cxx_glibcxx.txt", text)


def case_removed():
    """A symbol with no candidate anywhere: name the library that should have it."""
    root = os.path.join(FX, "removed")
    sp = torch_env(root)
    cxx_lib(os.path.join(sp, "torch", "lib", "libc10.so"), C10_CORE, "libc10.so")
    cxx_lib(os.path.join(sp, "torch", "lib", "libc10_cuda.so"), r"""
namespace c10 { namespace cuda {
void SetDevice(signed char d, bool b) { (void)d; (void)b; }
int device_count() { return 1; }
int current_device() { return 0; }
void synchronize() {}
} }
""", "libc10_cuda.so", libs=["-L" + os.path.join(sp, "torch", "lib"), "-lc10"])
    old = cxx_lib(os.path.join(root, "old", "libc10_cuda.so"), r"""
namespace c10 { namespace cuda {
void emptyCudaCache(int level) { (void)level; }
} }
""", "libc10_cuda.so")
    ext = cxx_lib(os.path.join(sp, "cacheext", "_C.so"), r"""
namespace c10 { namespace cuda { void emptyCudaCache(int); } }
extern "C" int PyInit__C(void) { c10::cuda::emptyCudaCache(1); return 0; }
""", flags=["-L" + os.path.dirname(old), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib"],
                  libs=["-lc10_cuda"])
    r = real(ext)
    ok(not r["loads"], "removed: the real loader fails", r)
    rc, doc, text, err = why(ext)
    f = finding(doc, "undefined-symbol")
    ok(f and f["cause"] == "removed" and f["near"] == [], "removed: cause removed, no near miss", f)
    ok(f and (f["expected_provider"] or "").endswith("/torch/lib/libc10_cuda.so") and
       f["expected_scope"] == "c10::cuda" and f["expected_guess"] is True,
       "removed: the expected provider exports the most of c10::cuda", f)
    ok("libc10_cuda.so, which exports 4 other symbols of c10::cuda, has nothing by this name" in text,
       "removed: text names the expected provider", text)
    golden("cxx_removed.txt", text)


def case_template():
    """A template instantiation that no longer exists (the const_data_ptr case)."""
    root = os.path.join(FX, "template")
    sp = torch_env(root, "2.12.0+cu130")
    tb = r"""
namespace at { struct TensorBase {
  template <typename T, int N = 0> const T *const_data_ptr() const;
  void *p;
};
template <typename T, int N> const T *TensorBase::const_data_ptr() const { return (const T *)p; }
%s
}
"""
    cxx_lib(os.path.join(sp, "torch", "lib", "libtorch_cpu.so"),
            tb % "template const float *TensorBase::const_data_ptr<float, 0>() const;\n"
                 "template const double *TensorBase::const_data_ptr<double, 0>() const;", "libtorch_cpu.so")
    old = cxx_lib(os.path.join(root, "old", "libtorch_cpu.so"),
                  tb % "template const int *TensorBase::const_data_ptr<int, 0>() const;", "libtorch_cpu.so")
    ext = cxx_lib(os.path.join(sp, "kern", "_C.so"), r"""
namespace at { struct TensorBase { template <typename T, int N = 0> const T *const_data_ptr() const; void *p; }; }
extern "C" int PyInit__C(void) { at::TensorBase t{nullptr}; return t.const_data_ptr<int>() != nullptr; }
""", flags=["-L" + os.path.dirname(old), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib"],
                  libs=["-ltorch_cpu"])
    rc, doc, text, err = why(ext)
    f = finding(doc, "undefined-symbol")
    ok(f and f["cause"] == "template-changed", "template: cause template-changed", f)
    diffs = [d for n in (f or {}).get("near", []) for d in n["diff"]]
    ok("template arguments: <int, 0> -> <float, 0>" in diffs and
       "template arguments: <int, 0> -> <double, 0>" in diffs, "template: names the instantiations", diffs)


def case_namespace():
    """The same function moved into another namespace."""
    root = os.path.join(FX, "namespace")
    new = cxx_lib(os.path.join(root, "lib", "libgeo.so"),
                  "namespace geo { namespace detail { double area(double w, double h) { return w * h; } } "
                  "double perimeter(double w, double h) { return 2 * (w + h); } }\n", "libgeo.so")
    old = cxx_lib(os.path.join(root, "old", "libgeo.so"),
                  "namespace geo { double area(double w, double h) { return w * h; } }\n", "libgeo.so")
    ext = cxx_lib(os.path.join(root, "app", "plugin.so"),
                  "namespace geo { double area(double, double); }\n"
                  "extern \"C\" double plugin(void) { return geo::area(1, 2); }\n",
                  flags=["-L" + os.path.dirname(old), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"],
                  libs=["-lgeo"])
    rc, doc, text, err = why(ext)
    f = finding(doc, "undefined-symbol")
    ok(f and f["cause"] == "namespace-changed", "namespace: cause namespace-changed", f)
    near = f["near"][0] if f and f["near"] else {}
    ok(near.get("diff") == ["scope: geo -> geo::detail"], "namespace: names both scopes", near)
    ok(f and f["fix"] == "rebuild plugin.so against the installed libgeo.so, or install the libgeo.so it was "
       "built against", "namespace: the fix", f and f["fix"])


def case_not_in_scope():
    """The symbol is in the process, but loaded RTLD_LOCAL by someone else."""
    root = os.path.join(FX, "scope")
    prov = c_lib(os.path.join(root, "libprov.so"), "int THPVariableClass_get(void) { return 1; }\n", "libprov.so")
    ext = c_lib(os.path.join(root, "ext.so"), "int THPVariableClass_get(void);\n"
                "int PyInit_ext(void) { return THPVariableClass_get(); }\n")
    r = real(ext, preload=[(prov, False)])
    ok(not r["loads"], "not-in-scope: the real loader fails after an RTLD_LOCAL preload", r)
    r2 = real(ext, preload=[(prov, True)])
    ok(r2["loads"], "not-in-scope: the real loader succeeds with RTLD_GLOBAL, as the fix says", r2)
    rc, doc, text, err = why(ext, "--preload", prov)
    f = finding(doc, "undefined-symbol")
    ok(f and f["cause"] == "not-in-scope", "not-in-scope: cause not-in-scope", f)
    ok(f and "load libprov.so with RTLD_GLOBAL before ext.so" in (f["fix"] or ""), "not-in-scope: the fix",
       f and f["fix"])


def case_other_copy():
    """The loader takes a stale copy through RUNPATH; a copy next to the extension has the symbol."""
    root = os.path.join(FX, "copy")
    app = os.path.join(root, "app")
    c_lib(os.path.join(app, "stale", "libfoo.so.1"), "int foo_old(void) { return 1; }\n", "libfoo.so.1")
    good = c_lib(os.path.join(app, "libfoo.so.1"),
                 "int foo_old(void) { return 1; }\nint foo_new(void) { return 2; }\n", "libfoo.so.1")
    ext = c_lib(os.path.join(app, "ext.so"), "int foo_new(void);\nint PyInit_ext(void) { return foo_new(); }\n",
                flags=["-L" + app, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/stale"], libs=["-l:libfoo.so.1"])
    r = real(ext)
    ok(not r["loads"] and "foo_new" in (r["error"] or ""), "other-copy: the real loader takes the stale copy", r)
    r2 = real(ext, env={"LD_LIBRARY_PATH": app})
    ok(r2["loads"], "other-copy: LD_LIBRARY_PATH before the RUNPATH makes the real loader take the good copy", r2)
    rc, doc, text, err = why(ext)
    f = finding(doc, "undefined-symbol")
    ok(f and f["cause"] == "other-copy" and f["near"] and f["near"][0]["provider"] == good,
       "other-copy: cause other-copy, the good copy named", f)
    ok(f and f["fix"] == f"start the process with LD_LIBRARY_PATH={app} (searched before the RUNPATH of ext.so), "
       f"or replace {app}/stale/libfoo.so.1 with a copy that has it", "other-copy: the fix the real loader confirmed",
       f and f["fix"])


def case_stable_abi():
    """An extension that uses only the LibTorch stable C ABI, and a pybind11 one."""
    root = os.path.join(FX, "stable")
    sp = torch_env(root, "2.11.0+cu130")
    c_lib(os.path.join(sp, "torch", "lib", "libtorch_cpu.so"),
          "int aoti_torch_get_data_ptr(void *t, void **p) { (void)t; *p = 0; return 0; }\n"
          "int aoti_torch_get_numel(void *t, long *n) { (void)t; *n = 0; return 0; }\n"
          "int torch_call_dispatcher(const char *op, const char *ov, void *s, long v) "
          "{ (void)op; (void)ov; (void)s; (void)v; return 0; }\n", "libtorch_cpu.so")
    cudart = c_lib(os.path.join(sp, "stableext", "libcudart.so.13"),
                   "int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n", "libcudart.so.13")
    ext = c_lib(os.path.join(sp, "stableext", "_C.abi3.so"),
                "int aoti_torch_get_data_ptr(void *, void **);\nint aoti_torch_get_numel(void *, long *);\n"
                "int torch_call_dispatcher(const char *, const char *, void *, long);\n"
                "int PyInit__C(void) { void *p; long n; return aoti_torch_get_data_ptr(0, &p) + "
                "aoti_torch_get_numel(0, &n) + torch_call_dispatcher(\"a\", \"\", 0, 0); }\n",
                flags=["-L" + os.path.join(sp, "torch", "lib"), "-L" + os.path.dirname(cudart),
                       "-Wl,--no-as-needed,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib:$ORIGIN"],
                libs=["-ltorch_cpu", "-l:libcudart.so.13"])
    rc, doc, text, err = why(ext)
    ok(rc == 0, "stable: the extension loads", err)
    tg = (doc or {}).get("built_with", {}).get("target") or {}
    ok(tg.get("torch_api") == "stable" and tg.get("torch_stable_imports") == 3 and tg.get("torch_cxx_imports") == 0,
       "stable: recognised as LibTorch stable ABI only", tg)
    ok(tg.get("cuda_runtime") == "libcudart.so.13" and tg.get("cuda_major") == 13,
       "stable: the CUDA runtime major it needs", tg)
    ok("uses only the LibTorch stable C ABI (3 aoti_torch_*/torch_* imports): it survives torch upgrades" in text,
       "stable: text says it survives torch upgrades", text)
    golden("cxx_stable.txt", text)

    # built against a newer torch: stable C ABI symbols the installed one
    # lacks (torchvision 0.29's _C_stable.so on torch 2.8) are one cause
    newer = c_lib(os.path.join(sp, "newerext", "_C.abi3.so"),
                  "int aoti_torch_get_numel(void *, long *);\nint torch_list_push_back(void *, void *);\n"
                  "int torch_new_list_reserve_size(long, void **);\n"
                  "int PyInit__C(void) { long n; void *l; return aoti_torch_get_numel(0, &n) + "
                  "torch_list_push_back(0, 0) + torch_new_list_reserve_size(1, &l); }\n",
                  flags=["-L" + os.path.join(sp, "torch", "lib"),
                         "-Wl,--no-as-needed,--enable-new-dtags,-rpath,$ORIGIN/../torch/lib"],
                  libs=["-ltorch_cpu"])
    r = real(newer)
    ok(not r["loads"] and "undefined symbol: torch_" in (r["error"] or ""),
       "stable, newer torch: the real loader refuses it on a torch stable symbol", r)
    rc, doc, text, err = why(newer)
    und = [f for f in (doc or {}).get("findings", []) if f["id"] == "undefined-symbol"]
    ok(len(und) == 2 and all(f["cause"] == "added" and (f.get("torch") or {}).get("built_against_other") for f in und),
       "stable, newer torch: both absent stable symbols are cause 'added', of another torch", und)
    ok("was built against a newer torch" in text, "stable, newer torch: the text says so", text)

    pyb = cxx_lib(os.path.join(sp, "pybext", "_pyb.so"), r"""
static const char internals_id[] = "__pybind11_internals_v4_gcc_libstdcpp_cxxabi1011__";
extern "C" const char *PyInit__pyb(void) { return internals_id; }
""")
    rc, doc, text, err = why(pyb)
    tg = (doc or {}).get("built_with", {}).get("target") or {}
    ok(tg.get("pybind11_internals") == "__pybind11_internals_v4_gcc_libstdcpp_cxxabi1011__",
       "pybind11: the internals id is read from .rodata", tg)


def case_own_exports():
    """A library that is not installed, needed by an extension that exports
    inline wrappers of its API (numba's tbbpool without libtbb.so.12: tbb's
    task_group_context::reset() around r1::reset(context&)): the missing
    library is the root cause of every undefined symbol.  The extension's own
    exports are what it was compiled with, never the provider it lacks (a
    definition of its own would have bound)."""
    root = os.path.join(FX, "own")
    lib = cxx_lib(os.path.join(root, "gone", "libpool.so.12"), r"""
namespace pool { namespace detail { namespace d1 { struct context { int state; }; }
namespace r1 { void reset(d1::context &c) { c.state = 0; } void spawn(d1::context &c) { c.state = 1; } } } }
""", "libpool.so.12")
    ext = cxx_lib(os.path.join(root, "app", "poolext.so"), r"""
namespace pool { namespace detail {
namespace d1 { struct context { int state; void reset(); void spawn(); }; }
namespace r1 { void reset(d1::context &); void spawn(d1::context &); }
void d1::context::reset() { r1::reset(*this); }
void d1::context::spawn() { r1::spawn(*this); }
} }
extern "C" int PyInit_poolext(void) { pool::detail::d1::context c{0}; c.reset(); c.spawn(); return c.state; }
""", flags=["-L" + os.path.dirname(lib)], libs=["-l:libpool.so.12"])
    shutil.rmtree(os.path.dirname(lib))  # never installed anywhere
    r = real(ext)
    ok(not r["loads"] and "libpool.so.12: cannot open shared object file" in (r["error"] or ""),
       "own exports: the real loader fails on the missing library", r)
    rc, doc, text, err = why(ext)
    missing = [f for f in (doc or {}).get("findings", []) if f["id"] == "library-not-found"]
    undef = [f for f in (doc or {}).get("findings", []) if f["id"] == "undefined-symbol"]
    ok(len(missing) == 1 and missing[0].get("caused_by") is None, "own exports: libpool.so.12 not found, a root cause",
       missing)
    ok(len(undef) == 2 and all(f.get("caused_by") == missing[0]["index"] for f in undef),
       "own exports: both undefined symbols are put down to the missing library", json.dumps(undef, indent=1))
    ok(undef and not any(f.get("expected_provider") == ext or f.get("cause") for f in undef),
       "own exports: the extension itself is never the expected provider, nor a near miss its cause",
       json.dumps(undef, indent=1))
    ok(not any(t in text for t in ("poolext.so, which exports", "poolext.so exports", "the installed poolext.so")),
       "own exports: the text does not blame the extension's own exports", text)


def main():
    if not shutil.which(CXX):
        print(f"ok - cxx fixtures # SKIP no {CXX}")
        return 0
    for p in (ABISCOPE, DRIVER):
        if not os.path.exists(p):
            print(f"not ok - {p} exists (build it first)")
            return 1
    shutil.rmtree(FX, ignore_errors=True)
    os.makedirs(FX)
    for case in (case_signature, case_cxx11_abi, case_devtoolset_abi0, case_torch_all, case_torch_own_cuda_lib, case_glibcxx, case_removed, case_template,
                 case_namespace, case_not_in_scope, case_other_copy, case_stable_abi, case_own_exports):
        try:
            case()
        except Exception as e:  # a fixture that does not build is a failure, not a crash
            ok(False, f"{case.__name__} ran", repr(e))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
