#!/usr/bin/env python3
"""check --host and wheel against the real thing: a real copy, a real pip install.

Everything is built from C++ source at test time, as real CPython extension
modules (Python.h), packed as real wheels and installed with the real pip
into real venvs of this machine's python3:

  hosts     A  torch 2.9  (c10_cuda_check_implementation(..., int line, ...))
               + nvidia-cuda-nvrtc-cu12 (libnvrtc.so.12)
            B  torch 2.10 (unsigned line) + nvidia-cuda-nvrtc-cu13 (libnvrtc.so.13)
            C  nothing installed
  packages  oldext   built against torch 2.9, RPATH $ORIGIN/../torch/lib
            newext   built against torch 2.10
            norpath  needs libc10.so with no RPATH: loads only after import torch
            nvrtcext needs libnvrtc.so.12 (RPATH into nvidia/cuda_nvrtc/lib)
            plainext needs nothing
            fooext   needs libfoo.so of the distribution foolib 1.0

check --host: every package x host, and the whole source venv x host.  The
truth: copy the host venv, copy the package folder into its site-packages,
and `import pkg._ext` with the copy's own interpreter (each package's
__init__ imports torch first, as real ones do).  abiscope: `check --json
--host SNAPSHOT PATH` with PATH in the source venv.  Verdict and error text
must be identical (paths of the copy written as the host's).

--root: host R is a tree built here (this machine's interpreter, its
standard library, the libraries they and the fixtures load, the loader, an
ld.so.cache made by `ldconfig -r`) holding a venv at /srv/R; abiscope
snapshots it with --root, and the truth runs the tree's interpreter with
the tree as / (chroot; `unshare -r chroot` when not root).

wheel: upgrade, downgrade, reinstall, a new distribution, a wheel that
overwrites another distribution's file, a wheel whose new version drops a
library another distribution needs, torch replaced under an extension, a
damaged member (bad CRC) and a member escaping the folder.  The truth: copy
the venv, `pip install --no-deps` the wheel into the copy, import every
extension module before and after.  abiscope's "its modules", "breaks" and
"fixes" must be exactly what happened; a wheel pip refuses must be refused.
"""
import base64
import ctypes.util
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile

ABISCOPE = os.environ.get("ABISCOPE", "./abiscope")
BUILD = os.environ.get("BUILD", "build")
WORK = os.path.abspath(os.path.join(BUILD, "e2e", "host_oracle"))
CXX = os.environ.get("CXX", "c++")
PY = sys.executable
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
PYTAG = "cp%d%d" % sys.version_info[:2]
INCLUDE = sysconfig.get_paths()["include"]

results = {"ok": 0, "fail": 0}
table = []	# (case, agree)


def report(ok, name, detail=""):
    results["ok" if ok else "fail"] += 1
    print(("ok - " if ok else "not ok - ") + name)
    if not ok and detail:
        for line in str(detail).splitlines()[:30]:
            print("#   " + line)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# ---- building: shared objects, extension modules, wheels

def cxx(out, src, *args):
    path = out + ".cpp"
    with open(path, "w") as f:
        f.write(src)
    p = sh([CXX, "-shared", "-fPIC", "-O1", "-I" + INCLUDE, "-o", out, path] + list(args))
    if p.returncode:
        raise SystemExit("not ok - building %s\n#   %s" % (out, p.stderr[-800:]))
    with open(out, "rb") as f:
        return f.read()


def c10(line_type):
    return ("namespace c10 { namespace cuda {\n"
            "void c10_cuda_check_implementation(int e, const char *f, const char *fn, %s line, bool a)\n"
            "{ (void)e; (void)f; (void)fn; (void)line; (void)a; }\n"
            "int device_count() { return 0; }\n} }\n" % line_type)


def pymodule(name, body, decls=""):
    return ("#include <Python.h>\n%s\n"
            "static struct PyModuleDef def = { PyModuleDef_HEAD_INIT, \"%s\", NULL, -1, NULL };\n"
            "extern \"C\" PyObject *PyInit_%s(void) { %s return PyModule_Create(&def); }\n"
            % (decls, name, name, body))


def wheel(fname, name, version, files):
    """A real wheel: members, METADATA, WHEEL and a RECORD with hashes."""
    di = "%s-%s.dist-info" % (name.replace("-", "_"), version)
    files = list(files) + [
        (di + "/METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)),
        (di + "/WHEEL", "Wheel-Version: 1.0\nGenerator: host_oracle\nRoot-Is-Purelib: false\nTag: %s\n"
         % "-".join(fname[:-4].split("-")[-3:]))]
    record = []
    path = os.path.join(WORK, "wheels", fname)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            b = data.encode() if isinstance(data, str) else data
            z.writestr(arc, b)
            h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (arc, h, len(b)))
        record.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(record) + "\n")
    return path


def whl_name(name, version):
    return "%s-%s-%s-%s-manylinux2014_x86_64.whl" % (name, version, PYTAG, PYTAG)


def build_wheels():
    src = os.path.join(WORK, "src")
    os.makedirs(src)
    os.makedirs(os.path.join(WORK, "wheels"))
    W = {}
    for tv, lt in (("2.9.0", "int"), ("2.10.0", "unsigned int")):
        lib = cxx(os.path.join(src, "libc10_%s.so" % tv), c10(lt), "-Wl,-soname,libc10.so")
        c = cxx(os.path.join(src, "C_%s.so" % tv),
                pymodule("_C", "c10::cuda::device_count();", "namespace c10 { namespace cuda { int device_count(); } }"),
                "-L" + src, "-l:libc10_%s.so" % tv, "-Wl,-rpath,$ORIGIN/lib")
        W["torch-" + tv] = wheel(whl_name("torch", tv), "torch", tv, [
            ("torch/lib/libc10.so", lib), ("torch/_C" + SUFFIX, c),
            ("torch/__init__.py", "from torch._C import *\nfrom .version import __version__\n"),
            ("torch/version.py", '__version__ = "%s"\ncuda = "%s"\n' % (tv, "12.8" if tv == "2.9.0" else "13.0"))])
    for cu, d in ((12, "cuda_nvrtc"), (13, "cu13")):
        lib = cxx(os.path.join(src, "libnvrtc.so.%d" % cu), "extern \"C\" int nvrtcVersion(int *a, int *b) { *a = %d; *b = 0; return 0; }\n" % cu,
                  "-Wl,-soname,libnvrtc.so.%d" % cu)
        W["nvrtc-%d" % cu] = wheel(whl_name("nvidia_cuda_nvrtc_cu%d" % cu, "%d.0.1" % cu), "nvidia-cuda-nvrtc-cu%d" % cu,
                                   "%d.0.1" % cu, [("nvidia/%s/lib/libnvrtc.so.%d" % (d, cu), lib)])
    call = "namespace c10 { namespace cuda { void c10_cuda_check_implementation(int, const char *, const char *, %s, bool); } }"
    for pkg, version, lt, against in (("oldext", "1.0", "int", "2.9.0"), ("oldext", "2.0", "unsigned int", "2.10.0"),
                                      ("newext", "1.0", "unsigned int", "2.10.0")):
        so = cxx(os.path.join(src, "%s_%s.so" % (pkg, version)),
                 pymodule("_ext", "c10::cuda::c10_cuda_check_implementation(0, \"\", \"\", 1, false);", call % lt),
                 "-L" + src, "-l:libc10_%s.so" % against, "-Wl,-rpath,$ORIGIN/../torch/lib")
        W["%s-%s" % (pkg, version)] = wheel(whl_name(pkg, version), pkg, version,
                                            [(pkg + "/_ext" + SUFFIX, so), (pkg + "/__init__.py", "import torch\n")])
    so = cxx(os.path.join(src, "norpath.so"),
             pymodule("_ext", "c10::cuda::device_count();", "namespace c10 { namespace cuda { int device_count(); } }"),
             "-L" + src, "-l:libc10_2.9.0.so")
    W["norpath-1.0"] = wheel(whl_name("norpath", "1.0"), "norpath", "1.0",
                             [("norpath/_ext" + SUFFIX, so), ("norpath/__init__.py", "import torch\n")])
    so = cxx(os.path.join(src, "nvrtcext.so"), pymodule("_ext", "int a, b; nvrtcVersion(&a, &b);",
                                                      "extern \"C\" int nvrtcVersion(int *, int *);"),
             "-L" + src, "-l:libnvrtc.so.12", "-Wl,-rpath,$ORIGIN/../nvidia/cuda_nvrtc/lib")
    W["nvrtcext-1.0"] = wheel(whl_name("nvrtcext", "1.0"), "nvrtcext", "1.0",
                              [("nvrtcext/_ext" + SUFFIX, so), ("nvrtcext/__init__.py", "import torch\n")])
    so = cxx(os.path.join(src, "plainext.so"), pymodule("_ext", ""))
    W["plainext-1.0"] = wheel(whl_name("plainext", "1.0"), "plainext", "1.0",
                              [("plainext/_ext" + SUFFIX, so), ("plainext/__init__.py", "")])
    # foolib 1.0 ships libfoo.so, 2.0 no longer does; fooext needs it
    foo = cxx(os.path.join(src, "libfoo.so"), "extern \"C\" int foo(void) { return 1; }\n", "-Wl,-soname,libfoo.so")
    W["foolib-1.0"] = wheel(whl_name("foolib", "1.0"), "foolib", "1.0", [("foolib/libfoo.so", foo), ("foolib/__init__.py", "")])
    W["foolib-2.0"] = wheel(whl_name("foolib", "2.0"), "foolib", "2.0", [("foolib/__init__.py", "")])
    so = cxx(os.path.join(src, "fooext.so"), pymodule("_ext", "foo();", "extern \"C\" int foo(void);"),
             "-L" + src, "-l:libfoo.so", "-Wl,-rpath,$ORIGIN/../foolib")
    W["fooext-1.0"] = wheel(whl_name("fooext", "1.0"), "fooext", "1.0", [("fooext/_ext" + SUFFIX, so), ("fooext/__init__.py", "")])
    # a wheel of another name that overwrites oldext's module with newext's
    with open(os.path.join(src, "newext_1.0.so"), "rb") as f:
        W["shadow-1.0"] = wheel(whl_name("shadow", "1.0"), "shadow", "1.0", [("oldext/_ext" + SUFFIX, f.read())])
    # a damaged member: oldext 1.0 with one byte of the module flipped in the archive
    good = W["oldext-1.0"]
    bad = os.path.join(WORK, "wheels", "damaged", whl_name("oldext", "1.0"))
    os.makedirs(os.path.dirname(bad))
    with zipfile.ZipFile(good) as z:
        info = z.getinfo("oldext/_ext" + SUFFIX)
        raw = bytearray(open(good, "rb").read())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.compress_size // 2] ^= 0xFF
    with open(bad, "wb") as f:
        f.write(raw)
    W["damaged"] = bad
    W["escape"] = wheel(whl_name("escape", "1.0"), "escape", "1.0", [("../../escape.py", "x = 1\n")])
    return W


# ---- environments

def site_of(env):
    return os.path.join(env, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")


def pip_install(env, *wheels):
    # --force-reinstall: a reinstall of the installed version happens (without
    # it pip says "already satisfied" and installs nothing)
    return sh([PY, "-m", "pip", "--python", os.path.join(env, "bin", "python"), "install", "--no-deps", "--no-index",
               "--no-compile", "--force-reinstall", "--disable-pip-version-check", "-q"] + list(wheels))


def make_env(path, *wheels):
    p = sh([PY, "-m", "venv", "--without-pip", path])
    if p.returncode:
        raise SystemExit("not ok - venv %s\n#   %s" % (path, p.stderr[-500:]))
    if wheels:
        p = pip_install(path, *wheels)
        if p.returncode:
            raise SystemExit("not ok - pip install into %s\n#   %s" % (path, p.stderr[-800:]))
    return path


def copy_env(env, to):
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(env, to, symlinks=True)
    return to


def extension_modules(env):
    """Every extension module of the env's site-packages, by import name."""
    site = site_of(env)
    mods = {}
    for root, _dirs, files in os.walk(site):
        for f in files:
            if f.endswith(SUFFIX) and ".dist-info" not in root:
                rel = os.path.relpath(os.path.join(root, f[:-len(SUFFIX)]), site)
                mods[rel.replace("/", ".")] = os.path.join(root, f)
    return mods


ORACLE = r"""
import importlib, sys
try:
    importlib.import_module(sys.argv[1])
    print("OK")
except BaseException as e:
    print("FAIL " + (e.msg if isinstance(e, ImportError) and e.msg else "%s: %s" % (type(e).__name__, e)))
"""


def real_import(env, module):
    """The truth: the env's own interpreter imports the module."""
    p = sh([os.path.join(env, "bin", "python"), "-c", ORACLE, module], cwd="/")
    out = p.stdout.strip().splitlines()
    line = out[-1] if out else "FAIL crashed: " + p.stderr[-300:]
    return (True, None) if line == "OK" else (False, line[5:])


# ---- check --host

def predicted_check(snap, path):
    p = sh([ABISCOPE, "check", "--json", "--no-driver", "--host", snap, path])
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return None, "no JSON (exit %d): %s" % (p.returncode, (p.stdout + p.stderr)[-600:])
    out = {}
    for e in j["environments"]:
        for d in e["distributions"]:
            for m in d["modules"]:
                if m.get("module"):
                    out[m["module"]] = (m["status"] == "ok", m["error"])
    return (out, j), None


def judge_placed(name, pred, err, truth):
    """Scores check --host PATH (pred, err: predicted_check's answer) against
    the real imports (truth: module -> (ok, error)) and records it; only the
    modules the check placed are judged."""
    if pred is None:
        report(False, name, err)
        table.append((name, False))
        return
    got, j = pred
    # only the placed modules are judged by check --host PATH
    want = {m: v for m, v in truth.items() if m in got or m.split(".")[0] in placed_packages(j)}
    agree = got == want and bool(want)
    detail = "\n".join("%s: abiscope %s, real %s" % (m, got.get(m), want.get(m))
                       for m in sorted(set(got) | set(want)) if got.get(m) != want.get(m))
    report(agree, "%s: %s" % (name, ", ".join("%s %s" % (m, "imports" if v[0] else "fails")
                                               for m, v in sorted(want.items()))), detail)
    table.append((name, agree))


def check_host_case(name, host, snap, path, copy_into):
    pred, err = predicted_check(snap, path)
    tmp = copy_env(host, os.path.join(WORK, "copy"))
    site = site_of(tmp)
    copy_into(site)
    truth = {}
    for mod, f in extension_modules(tmp).items():
        ok, msg = real_import(tmp, mod)
        truth[mod] = (ok, msg.replace(tmp, host) if msg else None)
    judge_placed(name, pred, err, truth)


def placed_packages(j):
    pk = set()
    for p in j.get("host", {}).get("placed", []):
        rel = os.path.relpath(p["to"], j["host"]["site_packages"])
        pk.add(rel.split("/")[0] if rel != "." else "*")
    return pk


def check_host_cases(W, hosts, snaps, source):
    for pkg in ("oldext", "newext", "norpath", "nvrtcext", "plainext"):
        for h in sorted(hosts):
            src = os.path.join(site_of(source), pkg)
            check_host_case("check --host %s %s" % (h, pkg), hosts[h], snaps[h], src,
                            lambda site, src=src, pkg=pkg: shutil.copytree(src, os.path.join(site, pkg), symlinks=True))
    # the whole venv: its site-packages copied over the host's
    for h in sorted(hosts):
        def over(site, src=site_of(source)):
            shutil.copytree(src, site, symlinks=True, dirs_exist_ok=True)
        pred, err = predicted_check(snaps[h], source)
        check_host_case_all("check --host %s <whole venv>" % h, hosts[h], snaps[h], source, over)


def check_host_case_all(name, host, snap, path, copy_into):
    pred, err = predicted_check(snap, path)
    tmp = copy_env(host, os.path.join(WORK, "copy"))
    copy_into(site_of(tmp))
    truth = {}
    for mod, f in extension_modules(tmp).items():
        ok, msg = real_import(tmp, mod)
        truth[mod] = (ok, msg.replace(tmp, host) if msg else None)
    if pred is None:
        report(False, name, err)
        table.append((name, False))
        return
    got = pred[0]
    agree = got == truth
    detail = "\n".join("%s: abiscope %s, real %s" % (m, got.get(m), truth.get(m))
                       for m in sorted(set(got) | set(truth)) if got.get(m) != truth.get(m))
    report(agree, "%s: %d modules, %d fail" % (name, len(truth), sum(1 for v in truth.values() if not v[0])), detail)
    table.append((name, agree))


# ---- a --root host: a system tree built here, the truth from inside it

ROOT_ENV = "/srv/R"	# the venv's path inside the tree


def put(root, path):
    """path of this machine at the same path under root: links as links
    (and what they lead to), folders as folders, files hard-linked (copied
    across file systems).  Never writes to path."""
    path = os.path.normpath(path)
    dst = root + path
    if path == "/" or os.path.lexists(dst):
        return
    put(root, os.path.dirname(path))
    # making the parents may have made dst too: a parent that is a link
    # (/lib -> usr/lib) leads into a folder an earlier path already made
    if os.path.lexists(dst):
        return
    if os.path.islink(path):
        target = os.readlink(path)
        os.symlink(target, dst)
        put(root, os.path.join(os.path.dirname(path), target))
    elif os.path.isdir(path):
        os.mkdir(dst)
    elif os.path.isfile(path):
        try:
            os.link(path, dst)
        except OSError:
            shutil.copy2(path, dst)


def ldd_closure(objects):
    libs = set()
    for o in objects:
        for line in sh(["ldd", o]).stdout.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) > 2 and parts[2].startswith("/"):
                libs.add(parts[2])
            elif parts and parts[0].startswith("/"):
                libs.add(parts[0])
    return libs


def build_root(root, objects):
    """A tree holding this machine's interpreter, its standard library, the
    libraries it and the given objects load, the loader and an ld.so.cache
    of the tree's own (ldconfig -r): a disk image of a small host."""
    base = sys.base_prefix
    exe = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    stdlib = sysconfig.get_paths()["stdlib"]
    dynload = os.path.join(stdlib, "lib-dynload")
    put(root, exe)
    put(root, PY)
    skip = {"test", "site-packages", "dist-packages", "idlelib", "tkinter", "turtledemo", "ensurepip"}
    for dirpath, dirs, files in os.walk(stdlib):
        dirs[:] = [d for d in dirs if not (dirpath == stdlib and d in skip) and d != "__pycache__"]
        for f in files:
            put(root, os.path.join(dirpath, f))
    libdir = sysconfig.get_config_var("LIBDIR") or os.path.join(base, "lib")
    for f in os.listdir(libdir) if os.path.isdir(libdir) else []:
        if f.startswith("libpython"):
            put(root, os.path.join(libdir, f))
    mods = [os.path.join(dynload, f) for f in os.listdir(dynload)] if os.path.isdir(dynload) else []
    for lib in ldd_closure([exe] + mods + list(objects)):
        put(root, lib)
    for conf in ["/etc/ld.so.conf"] + sorted(os.path.join("/etc/ld.so.conf.d", f)
                                             for f in (os.listdir("/etc/ld.so.conf.d")
                                                       if os.path.isdir("/etc/ld.so.conf.d") else [])):
        if os.path.isfile(conf):
            os.makedirs(os.path.dirname(root + conf), exist_ok=True)
            shutil.copy(conf, root + conf)
    p = sh([sbin("ldconfig"), "-r", root])
    if not os.path.exists(root + "/etc/ld.so.cache"):
        raise SystemExit("not ok - ldconfig -r %s\n#   %s" % (root, p.stderr[-500:]))


def sbin(tool):
    """tool from PATH or the sbin folders (not on every user's PATH), or None."""
    return shutil.which(tool) or next((os.path.join(d, tool) for d in ("/usr/sbin", "/sbin")
                                       if os.access(os.path.join(d, tool), os.X_OK)), None)


def chroot_prefix():
    return [sbin("chroot")] if os.geteuid() == 0 else ["unshare", "-r", sbin("chroot")]


def real_import_in(root, env, module):
    """The truth on the tree: its own interpreter, run with the tree as /."""
    p = sh(chroot_prefix() + [root, env + "/bin/python", "-c", ORACLE, module], cwd="/")
    out = p.stdout.strip().splitlines()
    line = out[-1] if out else "FAIL crashed: " + p.stderr[-300:]
    return (True, None) if line == "OK" else (False, line[5:])


def check_root_case(name, root, snap, path, copy_into):
    pred, err = predicted_check(snap, path)
    copy = "/srv/copy"
    copy_env(root + ROOT_ENV, root + copy)
    copy_into(site_of(root + copy))
    truth = {}
    for mod in extension_modules(root + copy):
        ok, msg = real_import_in(root, copy, mod)
        truth[mod] = (ok, msg.replace(copy, ROOT_ENV) if msg else None)
    judge_placed(name, pred, err, truth)


def root_cases(W, source):
    """Host R: a --root tree (torch 2.10 + nvrtc 13 in /srv/R), snapshotted
    with --root; the truth runs R's interpreter chrooted into the tree."""
    missing = [t for t in ("chroot", "ldconfig") if not sbin(t)] + ([] if os.geteuid() == 0 or shutil.which("unshare")
                                                                     else ["unshare"])
    if missing:
        print("ok - check --host on a --root tree # SKIP needs %s" % " ".join(missing))
        return
    root = os.path.join(WORK, "rootR")
    os.makedirs(root)
    objs = [f for f in extension_modules(source).values()]
    build_root(root, objs)
    src = os.path.join(WORK, "src")
    sysfoo = cxx(os.path.join(src, "libsysfoo.so.1"), "extern \"C\" int sysfoo(void) { return 1; }\n",
                 "-Wl,-soname,libsysfoo.so.1")
    os.makedirs(root + "/usr/local/lib", exist_ok=True)
    with open(root + "/usr/local/lib/libsysfoo.so.1", "wb") as f:
        f.write(sysfoo)
    os.makedirs(root + "/etc/ld.so.conf.d", exist_ok=True)
    with open(root + "/etc/ld.so.conf.d/zz-host-oracle.conf", "w") as f:
        f.write("/usr/local/lib\n")
    if not os.path.exists(root + "/etc/ld.so.conf"):
        with open(root + "/etc/ld.so.conf", "w") as f:
            f.write("include /etc/ld.so.conf.d/*.conf\n")
    sh([sbin("ldconfig"), "-r", root])
    tree_pkgs = make_env(os.path.join(WORK, "T"))
    site = site_of(tree_pkgs)
    os.makedirs(os.path.join(site, "sysext"))
    open(os.path.join(site, "sysext", "__init__.py"), "w").close()
    cxx(os.path.join(site, "sysext", "_ext" + SUFFIX), pymodule("_ext", "sysfoo();", "extern \"C\" int sysfoo(void);"),
        "-L" + src, "-l:libsysfoo.so.1")
    if ctypes.util.find_library("jansson"):
        os.makedirs(os.path.join(site, "janext"))
        open(os.path.join(site, "janext", "__init__.py"), "w").close()
        cxx(os.path.join(site, "janext", "_ext" + SUFFIX), pymodule("_ext", ""), "-Wl,--no-as-needed", "-ljansson")
    for pkg in ("sysext", "janext"):	# cxx() leaves its source beside the object
        if os.path.exists(os.path.join(site, pkg, "_ext" + SUFFIX + ".cpp")):
            os.unlink(os.path.join(site, pkg, "_ext" + SUFFIX + ".cpp"))
    make_env(root + ROOT_ENV, W["torch-2.10.0"], W["nvrtc-13"])
    probe = sh(chroot_prefix() + [root, ROOT_ENV + "/bin/python", "-c", "print('alive')"], cwd="/")
    if probe.stdout.strip() != "alive":
        print("ok - check --host on a --root tree # SKIP cannot run the tree's interpreter with it as / "
              "(%s: %s)" % (" ".join(chroot_prefix()), (probe.stderr or probe.stdout).strip()[-200:]))
        return
    snap = os.path.join(WORK, "R.json.gz")
    p = sh([ABISCOPE, "snapshot", "--no-driver", "--root", root, "--label", "host-R", "-o", snap, ROOT_ENV])
    if p.returncode:
        report(False, "snapshot --root of the tree", (p.stdout + p.stderr)[-500:])
        return
    j = json.loads(sh([ABISCOPE, "check", "--json", "--no-driver", "--host", snap]).stdout)
    report(j["host"]["site_packages"] == site_of(ROOT_ENV),
           "snapshot --root: the host's site-packages is the tree's, as seen from inside it",
           j["host"].get("site_packages"))
    for pkg in ("oldext", "newext", "norpath", "nvrtcext", "plainext"):
        src = os.path.join(site_of(source), pkg)
        check_root_case("check --host R(--root) %s" % pkg, root, snap, src,
                        lambda site, src=src, pkg=pkg: shutil.copytree(src, os.path.join(site, pkg), symlinks=True))
    # what only a tree can tell: sysext needs a system library only the
    # tree's /usr/local/lib holds (found through the tree's ld.so.cache);
    # janext needs libjansson.so.4, which this machine has and the tree lacks
    for pkg in ("sysext", "janext"):
        src = os.path.join(site_of(tree_pkgs), pkg)
        if os.path.isdir(src):
            check_root_case("check --host R(--root) %s" % pkg, root, snap, src,
                            lambda site, src=src, pkg=pkg: shutil.copytree(src, os.path.join(site, pkg), symlinks=True))


# ---- wheel

def predicted_wheel(env, whl):
    p = sh([ABISCOPE, "wheel", "--json", "--env", env, whl])
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return p.returncode, None, p.stderr.strip()
    return p.returncode, j, p.stderr.strip()


def wheel_case(name, env, whl, expect):
    rc, j, err = predicted_wheel(env, whl)
    before = {m: real_import(env, m) for m in extension_modules(env)}
    tmp = copy_env(env, os.path.join(WORK, "copy"))
    p = pip_install(tmp, whl)
    if p.returncode:
        # pip refuses it: abiscope must refuse it too (exit 3, the member named)
        agree = j is None and rc == 3
        report(agree, "%s: pip refuses it; abiscope exit %d: %s" % (name, rc, err.splitlines()[-1] if err else ""),
               "pip: %s" % p.stderr[-400:])
        table.append((name, agree))
        return
    after = {}
    fix = lambda v: (v[0], v[1].replace(tmp, env) if v[1] else None)
    new_files = set()
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if n.endswith(SUFFIX):
                new_files.add(n[:-len(SUFFIX)].replace("/", "."))
    for m in extension_modules(tmp):
        after[m] = fix(real_import(tmp, m))
    if j is None:
        report(False, "%s: abiscope gave no verdict (exit %d)" % (name, rc), err)
        table.append((name, False))
        return
    own_real = {m: v for m, v in after.items() if m in new_files}
    breaks_real = {m: v for m, v in after.items() if m not in new_files and not v[0] and before.get(m, (False,))[0]}
    fixes_real = {m: v for m, v in after.items() if m not in new_files and v[0] and m in before and not before[m][0]}
    own = {m["module"]: (m["imports"], m["error"]) for m in j["modules"]}
    breaks = {m["module"]: (m["imports"], m["error"]) for m in j["breaks"]}
    fixes = {m["module"]: (m["imports"], m["error"]) for m in j["fixes"]}
    exit_real = 1 if any(not v[0] for v in own_real.values()) or breaks_real else 0
    agree = own == own_real and breaks == breaks_real and fixes == fixes_real and rc == exit_real
    detail = ("own     abiscope %s\n        real     %s\nbreaks  abiscope %s\n        real     %s\n"
              "fixes   abiscope %s\n        real     %s\nexit    abiscope %d, real %d"
              % (own, own_real, breaks, breaks_real, fixes, fixes_real, rc, exit_real))
    desc = "; ".join(x for x in (
        "its modules: " + (", ".join("%s %s" % (m, "imports" if v[0] else "fails") for m, v in sorted(own_real.items())) or "none"),
        ("breaks " + ", ".join(sorted(breaks_real))) if breaks_real else "",
        ("fixes " + ", ".join(sorted(fixes_real))) if fixes_real else "") if x)
    ok_expect = expect in desc
    report(agree and ok_expect, "%s: %s" % (name, desc), detail if not agree else "expected: " + expect)
    table.append((name, agree))


def wheel_cases(W, hosts):
    A = hosts["A"]
    E1 = make_env(os.path.join(WORK, "E1"), W["torch-2.9.0"], W["oldext-1.0"], W["foolib-1.0"], W["fooext-1.0"])
    E2 = make_env(os.path.join(WORK, "E2"), W["torch-2.9.0"], W["oldext-2.0"])
    wheel_case("wheel new dist newext into A", A, W["newext-1.0"], "newext._ext fails")
    wheel_case("wheel new dist oldext into A", A, W["oldext-1.0"], "oldext._ext imports")
    wheel_case("wheel new dist oldext into B", hosts["B"], W["oldext-1.0"], "oldext._ext fails")
    wheel_case("wheel upgrade oldext 1.0 -> 2.0", E1, W["oldext-2.0"], "oldext._ext fails")
    wheel_case("wheel downgrade oldext 2.0 -> 1.0", E2, W["oldext-1.0"], "oldext._ext imports")
    wheel_case("wheel reinstall oldext 1.0", E1, W["oldext-1.0"], "oldext._ext imports")
    wheel_case("wheel torch 2.9 -> 2.10 under oldext", E1, W["torch-2.10.0"], "breaks oldext._ext")
    wheel_case("wheel foolib 2.0 drops libfoo.so", E1, W["foolib-2.0"], "breaks fooext._ext")
    wheel_case("wheel shadow overwrites oldext's module", E1, W["shadow-1.0"], "oldext._ext fails")
    wheel_case("wheel damaged member (bad CRC)", E1, W["damaged"], "")
    wheel_case("wheel member escaping the folder", E1, W["escape"], "")


def main():
    if not os.path.exists(os.path.join(INCLUDE, "Python.h")):
        print("not ok - Python.h not found in %s (install python3-dev)" % INCLUDE)
        return 1
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    W = build_wheels()
    hosts = {
        "A": make_env(os.path.join(WORK, "A"), W["torch-2.9.0"], W["nvrtc-12"]),
        "B": make_env(os.path.join(WORK, "B"), W["torch-2.10.0"], W["nvrtc-13"]),
        "C": make_env(os.path.join(WORK, "C")),
    }
    source = make_env(os.path.join(WORK, "S"), W["torch-2.9.0"], W["nvrtc-12"], W["oldext-1.0"], W["newext-1.0"],
                      W["norpath-1.0"], W["nvrtcext-1.0"], W["plainext-1.0"])
    snaps = {}
    for h, env in hosts.items():
        snaps[h] = os.path.join(WORK, "%s.json.gz" % h)
        p = sh([ABISCOPE, "snapshot", "--no-driver", "--label", "host-" + h, "-o", snaps[h], env])
        if p.returncode:
            print("not ok - snapshot %s\n#   %s" % (h, (p.stdout + p.stderr)[-500:]))
            return 1
    check_host_cases(W, hosts, snaps, source)
    root_cases(W, source)
    wheel_cases(W, hosts)
    agree = sum(1 for _, a in table if a)
    print("# agreement: %d of %d cases" % (agree, len(table)))
    for name, a in table:
        print("#   %-50s %s" % (name, "agree" if a else "DISAGREE"))
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
