#!/usr/bin/env python3
"""Field harness: xformers' way of loading its own library, against the real import.

xformers 0.0.35's `_cpp_lib.py` (read from its PyPI wheel) loads `_C.so`,
which exports no PyInit_, from a function the module calls at import time:

    ext_specs = extfinder.find_spec("_C")     (a FileFinder on the package folder)
    ...
    try:
        torch.ops.load_library(ext_specs.origin)
    except OSError as exc:
        raise xFormersInvalidLibException(build_metadata) from exc

and the module-level `try: _register_extensions() except ...` keeps `import
xformers` working when it fails.  Before abiscope followed `spec.origin` to
the `find_spec("...")` a few lines above, it judged nothing of xformers: a
`_C.so` built for another torch or CUDA major was "OK" (field env t2.15:
xformers 0.0.35's `_C.so` needs libcudart.so.12 beside a CUDA 13 torch).

Here: a torch-shaped env built from source, the package in that shape with
its library built against a newer torch-shaped libc10 than the env's; the
truth is tests/field/oracle.py in the env's own python (`import PKG`, the
ctypes loads it asked for, and dlopen of the library after it).  Verdict and
exact dlerror must match, and the load must be one the real import asked for.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matrix  # noqa: E402
import test_harness as H  # noqa: E402

SPEC_LIB = """import importlib.machinery
import os

import torch

from ._ops import ops


class InvalidLib(Exception):
    pass


def _register_extensions():
    lib_dir = os.path.dirname(__file__)
    loader_details = (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)
    extfinder = importlib.machinery.FileFinder(lib_dir, loader_details)
    if getattr(getattr(torch, "version", None), "hip", None):
        ext_specs = extfinder.find_spec("_C_hip")
    else:
        ext_specs = extfinder.find_spec("_C_stable")
    if ext_specs is None:
        raise InvalidLib("not built")
    build = {"torch": "newer"}
    try:
        ops.load_library(ext_specs.origin)
    except OSError as exc:
        raise InvalidLib(str(exc)) from exc
    return build


_load_error = None
try:
    _register_extensions()
except InvalidLib as e:
    _load_error = e


def _has_ops():
    return _load_error is None
"""


def main():
    t = H.Tap()
    top = tempfile.mkdtemp(prefix="abiscope-spec-")
    try:
        d = os.path.join(top, "env")
        sp = H.build_torch_env(d, runpath=True)
        files = H.stable_files(d, "xfspec", H.STABLE_TRY, new_api=True)
        files["xfspec/extension.py"] = SPEC_LIB
        for arc, data in files.items():
            os.makedirs(os.path.dirname(os.path.join(sp, arc)), exist_ok=True)
            with open(os.path.join(sp, arc), "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
        o = H.oracle(d)
        a = H.abiscope(d)
        lib = os.path.join(sp, "xfspec", "_C_stable.so")
        real = {os.path.realpath(p): v for p, v in (o.get("libraries") or {}).items()}.get(os.path.realpath(lib), {})
        t.ok(real.get("tried_by_import") and real.get("package_error") is None and
             (real.get("dlopen") or "").endswith("undefined symbol: c10_new_api"),
             "the real import asks ctypes for _C_stable.so, the load fails, `import xfspec` still works",
             json.dumps(real, indent=1))
        mine = [m for dist in matrix.abiscope_env(a)["distributions"] for m in dist["modules"]
                if os.path.realpath(m["path"]) == os.path.realpath(lib)]
        m = mine[0] if mine else {}
        by = m.get("loaded_by") or {}
        t.ok(m.get("status") == "fails" and m.get("error") == real.get("dlopen"),
             "abiscope judges the library xfspec loads through find_spec(...).origin: fails, the real dlerror",
             json.dumps({"abiscope": m, "real": real}, indent=1))
        t.ok(by.get("file") == "xfspec/extension.py" and by.get("call") == "ops.load_library" and by.get("caught"),
             "loaded at the module-level call, through ops.load_library, its OSError caught",
             json.dumps(by, indent=1))
        r = matrix.compare("spec", "no driver", o, a)
        t.ok(r["libraries"] >= 1 and r["libraries"] == r["libraries_agree"] and not r["diffs"],
             "compare: every self-loaded library agrees with the real import",
             json.dumps({"diffs": r["diffs"], "libraries": r["libraries"]}, indent=1))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
