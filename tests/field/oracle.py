"""oracle.py: what really happens in an environment, run by its own python.

    ENV/bin/python oracle.py OUT.json

Standard library only (it runs in every env of the field matrix and in
the small ones CI builds from source).  It writes one JSON object:

  torch     {"ok", "error", "loads": [files `import torch` maps beyond the
            bare interpreter, from /proc/self/maps]} or null without torch
  modules   {path: {"module", "package", "package_error", "dlopen", "import"}}
            for every extension module on sys.path outside the standard
            library: its top-level package is imported first (its own
            initialisation may load libraries; a failure there is recorded in
            package_error, not counted), then, each in a fresh fork of that
            state, dlopen(RTLD_NOW | RTLD_LOCAL) of the file (dlopen: null or
            the exact dlerror()) and `import NAME` (import: null or
            "Type: message").
  libraries {path: {"package", "package_error", "mapped_before_import",
            "mapped_by_import", "tried_by_import", "tried_error", "dlopen"}}
            for every shared object inside a
            measured package's folder that is no extension module (no
            PyInit_<stem>: torchvision's _C_stable.so, torchaudio's
            lib/libtorchaudio.so): whether /proc/self/maps holds it after
            `import PKG` (and before it: `import torch` or another package
            mapped it), whether the import asked ctypes.CDLL for it
            (torch.ops.load_library does; tried_error: its OSError, a failed
            load leaving nothing mapped), and, in a fresh fork of that state,
            dlopen(RTLD_NOW | RTLD_LOCAL) of it (null or the exact dlerror()).
            Results written before this key existed lack it: not measured.

Each package runs in its own forked process, so a crash in one (a segfault
of a mismatched binary) is recorded as such ("crashed: signal N") and the
others go on; a package whose import crashes is measured again without it.
Whatever LD_LIBRARY_PATH the caller set is the process's.
ORACLE_PACKAGES=a,b measures only those top-level packages (a wheel's, in
a copy of an env it was installed into); `import torch` is measured as ever.
ORACLE_IMPORT_ONLY=1 measures a module's import alone (its "dlopen" is
"not measured") and only the libraries the package's import loads or tries,
and does not set apart what `import torch` imports at the Python level:
what tests/field/fixoracle.py asks.
"""
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import sysconfig

TIMEOUT = int(os.environ.get("ORACLE_TIMEOUT", "120"))
# ORACLE_IMPORT_ONLY=1: a module's `import` alone, its dlopen "not measured"
# (the fix oracle asks only whether modules import; half the forks)
IMPORT_ONLY = os.environ.get("ORACLE_IMPORT_ONLY") == "1"


def maps_files():
    out = []
    seen = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/"):
                p = parts[5].strip()
                if p.endswith(" (deleted)"):
                    p = p[:-10]
                if p not in seen:
                    seen.add(p)
                    out.append(p)
    return out


def in_child(fn, timeout=TIMEOUT):
    """fn() in a forked child; its JSON-able result, or {"crashed": why}."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = fn()
        except BaseException as e:  # a Python-level failure is a result too
            res = {"exception": f"{type(e).__name__}: {e}"}
        data = json.dumps(res).encode()
        while data:
            n = os.write(w, data)
            data = data[n:]
        os.close(w)
        os._exit(0)
    os.close(w)
    chunks = []
    import select
    deadline = timeout
    while True:
        ready, _, _ = select.select([r], [], [], deadline)
        if not ready:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(r)
            return {"crashed": f"timeout after {timeout}s"}
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"crashed": f"signal {os.WTERMSIG(status)}"}
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return {"crashed": f"exit status {os.WEXITSTATUS(status)}"}


def stdlib_dirs():
    """The standard library's folders (the base interpreter's, not the venv's)."""
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix,
            "installed_base": sys.base_prefix, "installed_platbase": sys.base_exec_prefix}
    d = set()
    for k in ("stdlib", "platstdlib"):
        p = sysconfig.get_paths(vars=base).get(k)
        if p:
            d.add(os.path.realpath(p))
    return d


def extension_modules():
    """(name, path) of every extension module on sys.path past the stdlib,
    the first of a name winning as the import system would."""
    suffixes = sorted(importlib.machinery.EXTENSION_SUFFIXES, key=len, reverse=True)
    std = stdlib_dirs()
    seen, out = set(), []
    packages = set()  # regular top-level packages: an earlier entry's shadows the rest
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real in std or any(real.startswith(s + os.sep) and "site-packages" not in real
                              for s in std):
            continue
        for dirpath, dirnames, filenames in os.walk(entry):
            rel = os.path.relpath(dirpath, entry)
            parts = [] if rel == "." else rel.split(os.sep)
            if not all(p.isidentifier() for p in parts):
                dirnames[:] = []
                continue
            if len(parts) == 1 and os.path.exists(os.path.join(dirpath, "__init__.py")):
                if parts[0] in packages:
                    dirnames[:] = []
                    continue  # `import X.sub` only searches the first X's __path__
                packages.add(parts[0])
            dirnames.sort()
            for fn in sorted(filenames):
                suf = next((s for s in suffixes if fn.endswith(s)), None)
                if not suf:
                    continue
                stem = fn[: -len(suf)]
                # a name that is no identifier still imports through
                # importlib (mypyc's shared "<hash>__mypyc" modules do)
                if not stem or "." in stem:
                    continue
                name = ".".join(parts + [stem])
                if name in seen:
                    continue
                seen.add(name)
                out.append((name, os.path.join(dirpath, fn)))
    return out


def is_module_file(path):
    """Does the file define PyInit_<stem> (its dynamic string table holds
    the name): an extension module rather than a library?"""
    import mmap
    stem = os.path.basename(path).split(".")[0]
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(b"PyInit_" + stem.encode() + b"\0") >= 0
    except (OSError, ValueError):
        return False


def package_libraries(pkg):
    """The shared objects in the first folder of top-level package pkg on
    sys.path that are no extension module, sorted."""
    for entry in sys.path:
        d = os.path.join(entry or ".", pkg)
        if not os.path.isfile(os.path.join(d, "__init__.py")):
            continue
        out = []
        for dirpath, dirnames, filenames in os.walk(d):
            dirnames.sort()
            for fn in sorted(filenames):
                p = os.path.join(dirpath, fn)
                if (fn.endswith(".so") or ".so." in fn) and os.path.isfile(p) and not is_module_file(p):
                    out.append(p)
        return out
    return []


def python_imports_of_torch():
    """The extension modules outside torch that `import torch` imports at
    the Python level (numpy's, the standard library's), in order."""
    def run():
        before = set(sys.modules)
        import torch  # noqa: F401
        names = []
        for n, m in list(sys.modules.items()):
            f = getattr(m, "__file__", None) or ""
            top = n.split(".")[0]
            if n not in before and f.endswith(".so") and top not in ("torch", "functorch"):
                names.append(n)
        return {"names": names}
    return in_child(run, timeout=10 * TIMEOUT).get("names", [])


def torch_import():
    """What `import torch` maps beyond the interpreter and the extension
    modules it imports at the Python level (imported first, their objects
    listed apart in "python_level")."""
    # (what torch imports at the Python level is kept apart for the matrix's
    # comparison of loads; the fix oracle asks only whether modules import)
    pre = [] if IMPORT_ONLY else python_imports_of_torch()
    start = set(maps_files())
    for n in pre:
        try:
            importlib.import_module(n)
        except BaseException:
            pass
    before = set(maps_files())
    try:
        import torch  # noqa: F401
        err = None
    except BaseException as e:
        err = f"{type(e).__name__}: {e}"
    return {"ok": err is None, "error": err, "loads": [p for p in maps_files() if p not in before],
            "python_level_modules": pre, "python_level": sorted(before - start)}


class _ImportsTorch(BaseException):
    pass


def imports_torch(pkg):
    """Does importing pkg import torch?  Asked without paying for torch: the
    import is stopped where it would start torch's."""
    def run():
        seen = []

        class Stop:
            @staticmethod
            def find_spec(name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    seen.append(name)
                    raise _ImportsTorch()
                return None
        sys.meta_path.insert(0, Stop)
        try:
            importlib.import_module(pkg)
        except BaseException:
            pass
        return {"torch": bool(seen)}
    return in_child(run).get("torch", False)


def dlopen_of(path):
    def run():
        import ctypes
        try:
            ctypes.CDLL(path, mode=os.RTLD_LOCAL)  # ctypes adds RTLD_NOW
            return {"error": None}
        except OSError as e:
            return {"error": str(e)}
    return in_child(run)


def import_of(name):
    def run():
        try:
            importlib.import_module(name)
            return {"error": None}
        except BaseException as e:
            return {"error": f"{type(e).__name__}: {e}"}
    return in_child(run)


def log(msg):
    if os.environ.get("ORACLE_VERBOSE"):
        print(f"oracle: {msg}", file=sys.stderr, flush=True)


def record_loads():
    """Every ctypes.CDLL() the process makes from now on (torch.ops.load_library
    calls it), by real path: None when it loaded, else the OSError's text.
    A load that fails leaves nothing in /proc/self/maps; this sees it."""
    import ctypes
    tried = {}
    init = ctypes.CDLL.__init__

    def wrapped(self, name, *a, **k):
        try:
            init(self, name, *a, **k)
        except OSError as e:
            if isinstance(name, (str, bytes)) and os.sep in os.fsdecode(name):
                tried.setdefault(os.path.realpath(name), str(e))
            raise
        if isinstance(name, (str, bytes)) and os.sep in os.fsdecode(name):
            tried.setdefault(os.path.realpath(name), None)
    ctypes.CDLL.__init__ = wrapped
    return tried


def measure_package(pkg, mods, import_package, libs=()):
    """In a child: import pkg (unless told not to), then each module; the
    package's libraries (package_libraries) under "libraries"."""
    def run():
        perr = None
        before = {os.path.realpath(p) for p in maps_files()}
        tried = record_loads()
        if import_package:
            try:
                importlib.import_module(pkg)
            except BaseException as e:
                perr = f"{type(e).__name__}: {e}"
        after = {os.path.realpath(p) for p in maps_files()}
        res = {}
        log(f"{pkg} imported: {perr}")
        lib_res = {}
        for path in libs:
            real = os.path.realpath(path)
            if IMPORT_ONLY and real not in tried and not (real in after and real not in before):
                continue  # the import neither loads nor tries it: no part of whether it imports
            d = dlopen_of(path)
            lib_res[path] = {"package": pkg, "package_error": perr, "mapped_before_import": real in before,
                             "mapped_by_import": real in after and import_package,
                             "tried_by_import": real in tried,
                             "tried_error": tried.get(real),
                             "dlopen": d.get("error", d.get("crashed") and "crashed: " + d["crashed"])}
        if lib_res:
            res["\0libraries"] = lib_res
        for name, path in mods:
            d = {"error": "not measured"} if IMPORT_ONLY else dlopen_of(path)
            i = import_of(name)
            log(f"{name}: {d} {i}")
            res[path] = {"module": name, "package": pkg, "package_error": perr,
                         "dlopen": d.get("error", d.get("crashed") and "crashed: " + d["crashed"]),
                         "import": i.get("error", i.get("crashed") and "crashed: " + i["crashed"])}
        return res
    # each dlopen and import has its own TIMEOUT in its own fork: the
    # package's child may take that long for every one of them (scipy's
    # hundred modules ran past one TIMEOUT on a loaded machine)
    return in_child(run, timeout=TIMEOUT * (2 * len(mods) + len(libs) + 1))


def measure_groups(groups, libraries):
    """The modules of each (package, modules) group; the package's libraries
    go into libraries."""
    modules = {}
    for pkg, mods in groups:
        libs = package_libraries(pkg)
        r = measure_package(pkg, mods, True, libs)
        lr = r.pop("\0libraries", {}) if isinstance(r, dict) else {}
        if "crashed" in r or "exception" in r:
            why = r.get("crashed") or r.get("exception")
            r = measure_package(pkg, mods, False, libs)
            lr = r.pop("\0libraries", {})
            for v in list(r.values()) + list(lr.values()) if "crashed" not in r and "exception" not in r else []:
                v["package_error"] = f"crashed: {why}"
        if "crashed" in r or "exception" in r:
            why = "crashed: " + (r.get("crashed") or r.get("exception"))
            for name, path in mods:
                modules[path] = {"module": name, "package": pkg, "package_error": None,
                                 "dlopen": why, "import": why}
            continue
        libraries.update(lr)
        modules.update(r)
    return modules


def main():
    out = {"python": sys.version.split()[0], "executable": sys.executable,
           "ld_library_path": os.environ.get("LD_LIBRARY_PATH"), "sys_path": sys.path[1:]}
    has_torch = importlib.util.find_spec("torch") is not None
    only = set(filter(None, os.environ.get("ORACLE_PACKAGES", "").split(",")))
    groups = {}
    for name, path in extension_modules():
        if not only or name.split(".")[0] in only:
            groups.setdefault(name.split(".")[0], []).append((name, path))
    # packages whose import starts torch's are measured from one process that
    # imported torch (forked per package and module): the same state, one
    # torch import instead of one per package
    bare, with_torch = [], []
    for pkg, mods in sorted(groups.items()):
        (with_torch if has_torch and (pkg == "torch" or imports_torch(pkg)) else bare).append((pkg, mods))
    libraries = {}
    modules = measure_groups(bare, libraries)
    out["torch"] = None
    if has_torch:
        def torch_master():
            t = torch_import()
            libs = {}
            return {"torch": t, "modules": measure_groups(with_torch, libs), "libraries": libs}
        r = in_child(torch_master, timeout=20 * TIMEOUT)
        if "crashed" in r or "exception" in r:
            out["torch"] = {"ok": False, "error": r.get("crashed") or r.get("exception"), "loads": []}
            libs = {}
            r = {"modules": measure_groups(with_torch, libs), "libraries": libs}
        else:
            out["torch"] = r["torch"]
        modules.update(r["modules"])
        libraries.update(r["libraries"])
    out["torch_packages"] = [p for p, _ in with_torch]
    out["modules"] = modules
    out["libraries"] = libraries
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.path = [p for p in sys.path if p != os.path.dirname(os.path.abspath(__file__))]
    main()
