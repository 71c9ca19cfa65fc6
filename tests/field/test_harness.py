"""The field matrix's oracle and comparison, kept honest on small
environments built from source (cheap: runs in `make test`, SLOW=0 too).

Each env is a venv of python3 on PATH holding a torch-shaped package whose
__init__.py runs the real shapes of torch's _load_global_deps (2.9: the
slim-wheel preloads after libtorch_global_deps; 2.1: the OSError fallback),
libraries built here with cc, and packages around it: one that needs
libnvrtc (loads only because `import torch` preloads it), one that does not
import torch (fails), one that loads a library of its own first (torchaudio's
way), one that imports its own extension before torch (nvfuser's), and an
env that reaches another's site-packages through a .pth file.  The real
import (tests/field/oracle.py in the env's python) and `abiscope check` must
agree on every module, with the exact dlerror(), and on what `import torch`
loads; a few verdicts are also checked by value so a harness that agreed on
nothing could not pass.  torch._C is loaded with ctypes.CDLL by the fixture
(no Python headers needed), which is what abiscope models for it.
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import matrix  # noqa: E402
from fieldlib import Tap  # noqa: E402

CC = os.environ.get("FIXTURE_CC", "cc")

# torch/__init__.py and the rest of torch's Python side, shared with the
# other fixtures: the 2.9 shape (see its header)
TORCH_PY = os.path.join(HERE, "..", "fixtures", "torch_py.sh")


def cc(out, src, *flags):
    """out built from src; an extension module (a name with EXT_SUFFIX) also
    gets its PyInit_ (returning NULL: the import fails in Python, the load
    does not), so the oracle and abiscope both count it as a module."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    if out.endswith(ext):
        src += f"void *PyInit_{os.path.basename(out)[:-len(ext)]}(void) {{ return 0; }}\n"
    c = out + ".c"
    with open(c, "w") as f:
        f.write(src)
    subprocess.run([CC, "-shared", "-fPIC", "-o", out, c, *flags], check=True)
    os.unlink(c)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def venv(d):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", d], check=True)
    v = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return os.path.join(d, "lib", v, "site-packages")


def build_torch_env(d, runpath, nvfuser=False):
    """A torch-shaped env; runpath: libtorch_global_deps finds libcudart
    itself (2.9's wheels) or not (the OSError fallback then preloads it);
    nvfuser: torch 2.0/2.1's libtorch_cpu.so, whose static initialiser
    dlopen()s libnvfuser_codegen.so by bare name (it maps libnvrtc)."""
    sp = venv(d)
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    cc(f"{sp}/nvidia/cuda_runtime/lib/libcudart.so.12", "int cudaRuntimeGetVersion(int *v){*v=12080;return 0;}\n",
       "-Wl,-soname,libcudart.so.12")
    cc(f"{sp}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "int nvrtcVersion(int *a,int *b){*a=12;*b=8;return 0;}\n",
       "-Wl,-soname,libnvrtc.so.12")
    rp = ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../nvidia/cuda_runtime/lib"] if runpath else []
    cc(f"{sp}/torch/lib/libtorch_global_deps.so",
       "int cudaRuntimeGetVersion(int *);\nint torch_global_deps(void){int v;return cudaRuntimeGetVersion(&v);}\n",
       "-Wl,-soname,libtorch_global_deps.so", f"-L{sp}/nvidia/cuda_runtime/lib", "-l:libcudart.so.12", *rp)
    cc(f"{sp}/torch/lib/libc10.so", "int c10_marker(void){return 10;}\n", "-Wl,-soname,libc10.so")
    cpu = []
    if nvfuser:
        rpath = "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../../nvidia/cuda_nvrtc/lib:$ORIGIN"
        cc(f"{sp}/torch/lib/libnvfuser_codegen.so",
           "int nvrtcVersion(int *, int *);\nint nvfuser_fn(void){int a,b;return nvrtcVersion(&a,&b);}\n",
           "-Wl,-soname,libnvfuser_codegen.so", f"-L{sp}/nvidia/cuda_nvrtc/lib", "-l:libnvrtc.so.12", rpath)
        cc(f"{sp}/torch/lib/libtorch_cpu.so",
           "#include <dlfcn.h>\n__attribute__((constructor)) static void loading_nvfuser(void)\n"
           "{ dlopen(\"libnvfuser_codegen.so\", RTLD_NOW | RTLD_LOCAL); }\nint torch_cpu_fn(void){return 1;}\n",
           "-Wl,-soname,libtorch_cpu.so", rpath)
        cpu = ["-ltorch_cpu"]
    cc(f"{sp}/torch/_C{ext}", "int c10_marker(void);\nint torch_C(void){return c10_marker();}\n",
       f"-L{sp}/torch/lib", "-Wl,--no-as-needed", "-lc10", *cpu, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib")
    subprocess.run(["sh", TORCH_PY, sp, "2.9", "2.9.1+cu128", "12.8", "", ext], check=True)
    nvrtc = "int nvrtcVersion(int *, int *);\nint ext_fn(void){int a,b;return nvrtcVersion(&a,&b);}\n"
    lnv = [f"-L{sp}/nvidia/cuda_nvrtc/lib", "-l:libnvrtc.so.12"]
    cc(f"{sp}/needs_nvrtc/_ext{ext}", nvrtc, *lnv)
    write(f"{sp}/needs_nvrtc/__init__.py", "import torch\n")
    cc(f"{sp}/plain_nvrtc/_ext{ext}", nvrtc, *lnv)
    write(f"{sp}/plain_nvrtc/__init__.py", "")
    # torchaudio's way: a helper given the library's name loads it first
    cc(f"{sp}/selfpkg/lib/libselfhelper.so", "int self_helper(void){return 1;}\n", "-Wl,-soname,libselfhelper.so")
    cc(f"{sp}/selfpkg/_ext{ext}", "int self_helper(void);\nint ext_fn(void){return self_helper();}\n",
       f"-L{sp}/selfpkg/lib", "-lselfhelper")
    write(f"{sp}/selfpkg/__init__.py",
          "import ctypes, os\nimport torch\n\ndef _load_lib(name):\n"
          "    ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'lib', name + '.so'))\n\n"
          "_load_lib(\"libselfhelper\")\n")
    # nvfuser's way: its own extension before torch
    cc(f"{sp}/ownfirst/_C{ext}", "int c10_marker(void);\nint f(void){return c10_marker();}\n",
       f"-L{sp}/torch/lib", "-lc10")
    write(f"{sp}/ownfirst/__init__.py", "from . import _C\nimport torch\n")
    return sp


def own_lib(sp, pkg, lib, sub="lib"):
    """A library of the package pkg (SONAME = its file name) and an extension
    module pkg._ext that needs it and has no RUNPATH: it loads only when the
    package loads lib itself first."""
    where = f"{sp}/{pkg}/{sub}" if sub else f"{sp}/{pkg}"
    sym = f"{pkg}_{lib.replace('.', '_')}"
    cc(f"{where}/{lib}.so", f"int {sym}(void){{return 7;}}\n", f"-Wl,-soname,{lib}.so")
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    cc(f"{sp}/{pkg}/_ext{ext}", f"int {sym}(void);\nint ext_fn(void){{return {sym}();}}\n", f"-L{where}",
       f"-l:{lib}.so")


SELFLOAD_PKGS = {
    # ctypes.CDLL of a path computed from __file__ (named: abiscope joins it)
    "cdll_join": ("libcj", "lib", "import ctypes, os\n\n"
                  "ctypes.CDLL(os.path.join(os.path.dirname(__file__), \"lib\", \"libcj.so\"))\n"),
    # pathlib: Path(__file__).parent / "lib" / NAME
    "path_join": ("libpj", "lib", "import ctypes\nfrom pathlib import Path\n\n"
                  "_lib = Path(__file__).parent / \"lib\" / \"libpj.so\"\nctypes.CDLL(str(_lib))\n"),
    # torchaudio's shape: a helper builds the path, under a flag the files decide
    "avail_pkg": ("libav", "lib", "import ctypes, importlib.util, os\n\n"
                  "def is_module_available(name):\n    return importlib.util.find_spec(name) is not None\n\n"
                  "def _load_lib(name):\n"
                  "    ctypes.CDLL(os.path.join(os.path.dirname(__file__), \"lib\", name + \".so\"))\n\n"
                  "_EXT_AVAILABLE = is_module_available(\"avail_pkg._ext\")\n"
                  "if os.name == \"nt\":\n    pass\nelif _EXT_AVAILABLE:\n    _load_lib(\"libav\")\n"),
    # torch.ops.load_library-like: an object's load_library(path)
    "ops_pkg": ("libops", "", "import os\nfrom ._ops import ops\n\n"
                "ops.load_library(os.path.join(os.path.dirname(__file__), \"libops.so\"))\n"),
    # a Windows-only load: not made here, so the module fails (a false load if modelled)
    "win_only": ("libwin", "lib", "import ctypes, os\n\nif os.name == \"nt\":\n"
                 "    ctypes.CDLL(os.path.join(os.path.dirname(__file__), \"lib\", \"libwin.so\"))\n"),
    # cannot tell: the load runs only when an environment variable says so
    "cond_env": ("libce", "lib", "import ctypes, os\n\n"
                 "if os.environ.get(\"COND_ENV_LOAD\", \"1\") == \"1\":\n"
                 "    ctypes.CDLL(os.path.join(os.path.dirname(__file__), \"lib\", \"libce.so\"))\n"),
    # cannot tell: the library's name is computed (an f-string)
    "computed": ("libcm", "lib", "import ctypes, os\n\n_NAME = \"cm\"\n"
                 "ctypes.CDLL(os.path.join(os.path.dirname(__file__), \"lib\", f\"lib{_NAME}.so\"))\n"),
}


def build_selfload_env(d):
    """Packages that load a library of their own before their extension
    module, each way abiscope models, and one more whose computed load
    cannot cure its failure (a library nothing installed provides)."""
    sp = venv(d)
    for pkg, (lib, sub, init) in SELFLOAD_PKGS.items():
        own_lib(sp, pkg, lib, sub)
        write(f"{sp}/{pkg}/__init__.py", init)
    write(f"{sp}/ops_pkg/_ops.py", "import ctypes\n\nclass _Ops:\n    def load_library(self, path):\n"
          "        ctypes.CDLL(path)\n\nops = _Ops()\n")
    # computed load of a library it has, but the module needs one nowhere installed
    cc(f"{d}/elsewhere/libnowhere.so", "int nowhere(void){return 1;}\n", "-Wl,-soname,libnowhere.so")
    cc(f"{sp}/computed_missing/lib/libcx.so", "int cx(void){return 2;}\n", "-Wl,-soname,libcx.so")
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    cc(f"{sp}/computed_missing/_ext{ext}", "int nowhere(void);\nint ext_fn(void){return nowhere();}\n",
       f"-L{d}/elsewhere", "-l:libnowhere.so")
    write(f"{sp}/computed_missing/__init__.py", "import ctypes, os\n\n_NAME = \"cx\"\n"
          "ctypes.CDLL(os.path.join(os.path.dirname(__file__), \"lib\", f\"lib{_NAME}.so\"))\n")
    # torch imported only for a type checker, or optionally: no torch here, and it imports
    cc(f"{sp}/torch_optional/_ext{ext}", "int ext_fn(void){return 3;}\n")
    write(f"{sp}/torch_optional/__init__.py", "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
          "    import torch\n\ntry:\n    import torch\nexcept ImportError:\n    torch = None\n\n\n"
          "def one_hot(\n    x,\n    n,\n):\n    if x:\n        import torch\n    return n\n")
    return sp


def selfload_checks(t, top):
    """The real import against abiscope on build_selfload_env, with the
    conditional load made and not made."""
    d = os.path.join(top, "selfload")
    build_selfload_env(d)
    a = abiscope(d)
    ab = {m["module"]: m for dist in matrix.abiscope_env(a)["distributions"] for m in dist["modules"]}
    for cond, env in (("the condition holds", None), ("the condition fails", {"COND_ENV_LOAD": "0"})):
        o = oracle(d, env)
        r = matrix.compare("selfload", "no driver", o, a)
        real = {m["module"]: m for m in o["modules"].values()}
        t.ok(r["modules"] == len(SELFLOAD_PKGS) + 2, f"self-loads ({cond}): the oracle measured every module "
             f"({r['modules']})", json.dumps(o["modules"], indent=1)[:3000])
        t.ok(not r["diffs"], f"self-loads ({cond}): abiscope and the real import agree, or abiscope cannot tell "
             "and the real failure is the one it names", json.dumps(r["diffs"], indent=1))
        t.ok(r["cannot_tell"] == 2 and r["cannot_tell_unexplained"] == 0,
             f"self-loads ({cond}): the two modules abiscope cannot tell about are counted apart ({r['cannot_tell']})")
        t.ok(r["agree"] == r["modules"] - r["cannot_tell"], f"self-loads ({cond}): every other module agrees")
        want = "libce.so: cannot open shared object file: No such file or directory"
        t.ok((real["cond_env._ext"]["dlopen"] is None) == (env is None) and
             (env is None or real["cond_env._ext"]["dlopen"] == want),
             f"self-loads ({cond}): the oracle really loads cond_env._ext only when its condition holds",
             json.dumps(real.get("cond_env._ext")))
    for pkg in ("cdll_join", "path_join", "avail_pkg", "ops_pkg"):
        m = ab[f"{pkg}._ext"]
        t.ok(m["status"] == "ok" and f"{pkg}/__init__.py:" in (m["context"] or ""),
             f"{pkg}: loads, with the assumption and the file:line it comes from", json.dumps(m))
    m = ab["win_only._ext"]
    t.ok(m["status"] == "fails" and m["error"].startswith("libwin.so: cannot open"),
         "a load under `if os.name == \"nt\"` is not made on Linux: the module fails", json.dumps(m))
    m = ab["torch_optional._ext"]
    t.ok(m["status"] == "ok", "an `import torch` under `if TYPE_CHECKING:`, in a try block or in a function whose "
         "signature spans lines does not make a package fail where torch is not installed", json.dumps(m))
    m = ab["computed_missing._ext"]
    t.ok(m["status"] == "fails" and m["error"].startswith("libnowhere.so"),
         "a computed load that cannot provide the missing library: still a failure", json.dumps(m))
    m = ab["cond_env._ext"]
    dep = m.get("depends_on") or {}
    t.ok(m["status"] == "cannot-tell" and dep.get("file") == "cond_env/__init__.py" and dep.get("line") == 4
         and dep.get("condition", "").startswith("if os.environ.get(") and dep.get("library", "").endswith(
             "cond_env/lib/libce.so") and m["error"] == want,
         "cond_env: cannot tell, with the call's file:line, its condition and the error without it", json.dumps(m))
    m = ab["computed._ext"]
    dep = m.get("depends_on") or {}
    t.ok(m["status"] == "cannot-tell" and dep.get("library") is None and dep.get("line") == 4,
         "computed: cannot tell, the call whose library abiscope cannot name", json.dumps(m))
    s = a["summary"]
    t.ok(s["cannot_tell"] == 2 and s["failing"] == 2, "the summary counts cannot-tell apart from failing",
         json.dumps(s))
    f = [x for x in a["findings"] if x["id"] == "depends-on-self-load"]
    own = [a["findings"][i] for i in ab["cond_env._ext"]["findings"]]
    t.ok(len(f) == 2 and all(x["severity"] == "warning" for x in f) and
         not any(x["severity"] == "error" for x in own),
         "each cannot-tell module has one depends-on-self-load warning, and no error of its own",
         json.dumps(own, indent=1)[:3000])
    # an environment where nothing is known to fail: exit status 0, and not "OK"
    u = os.path.join(top, "unsure")
    sp = venv(u)
    for pkg in ("cond_env", "computed"):
        lib, sub, init = SELFLOAD_PKGS[pkg]
        own_lib(sp, pkg, lib, sub)
        write(f"{sp}/{pkg}/__init__.py", init)
    e = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    r = subprocess.run([matrix.ABISCOPE, "check", "--no-driver", "--ld-library-path", "", u],
                       capture_output=True, text=True, env=e)
    t.ok(r.returncode == 0 and "CANNOT TELL: 0 of 2 extension modules would fail to import, 2 cannot tell"
         in r.stdout and "cond_env/__init__.py:4" in r.stdout and "OK:" not in r.stdout,
         "check: nothing known to fail exits 0, says CANNOT TELL and names the call first", r.stdout + r.stderr)
    j = os.path.join(top, "unsure.xml")
    subprocess.run([matrix.ABISCOPE, "check", "--no-driver", "--ld-library-path", "", "--junit", j, u],
                   capture_output=True, env=e)
    x = open(j).read() if os.path.exists(j) else ""
    t.ok('skipped="2"' in x and x.count("<skipped message=\"cannot tell whether") == 2 and "<failure" not in x,
         "JUnit: a cannot-tell module is skipped with the reason", x)
    return d


# torchvision 0.29's shape: a library with no PyInit_ (_C_stable.so) that
# extension.py loads through a local helper, `if _load_library("_C_stable"):`,
# whose body calls an ops.load_library (torch.ops.load_library's way:
# ctypes.CDLL) inside try/except (ImportError, OSError); built against a newer
# torch-shaped libc10 (c10_new_api) than the env's.  tvraise: the same
# without the try, so `import tvraise` raises the OSError.
STABLE_EXTENSION = """import os

import torch

from ._utils import _get_extension_path
from ._ops import ops


def _load_library(lib_name):
    \"\"\"Loads a library of the package; False when it does not load.\"\"\"
{body}


def _has_ops():
    return False


if _load_library("_C_stable"):

    def _has_ops():  # noqa: F811
        return True
"""
STABLE_TRY = ("    try:\n        lib_path = _get_extension_path(lib_name)\n        ops.load_library(lib_path)\n"
              "        return True\n    except (ImportError, OSError):\n        return False")
STABLE_RAISE = "    lib_path = _get_extension_path(lib_name)\n    ops.load_library(lib_path)\n    return True"
STABLE_PKGS = {"tvstable": STABLE_TRY, "tvraise": STABLE_RAISE}


def stable_files(d, pkg, body, new_api):
    """{arcname: bytes} of the package: __init__.py, extension.py, the
    helpers, and _C_stable.so built against libc10 (the newer one exports
    c10_new_api, which new_api makes it need)."""
    newtorch = os.path.join(d, "newtorch")
    if not os.path.exists(os.path.join(newtorch, "libc10.so")):
        cc(os.path.join(newtorch, "libc10.so"), "int c10_marker(void){return 10;}\nint c10_new_api(void){return 11;}\n",
           "-Wl,-soname,libc10.so")
    out = os.path.join(d, "build", pkg, "new" if new_api else "old", "_C_stable.so")
    call = "c10_new_api" if new_api else "c10_marker"
    cc(out, f"int {call}(void);\nint stable_op(void){{return {call}();}}\n", f"-L{newtorch}", "-lc10")
    return {f"{pkg}/__init__.py": "import torch\n\nfrom .extension import _has_ops\n",
            f"{pkg}/extension.py": STABLE_EXTENSION.format(body=body),
            f"{pkg}/_utils.py": "import os\n\n\ndef _get_extension_path(lib_name):\n"
                                "    return os.path.join(os.path.dirname(__file__), lib_name + \".so\")\n",
            f"{pkg}/_ops.py": "import ctypes\n\n\nclass _Ops:\n    def load_library(self, path):\n"
                              "        ctypes.CDLL(path)\n\n\nops = _Ops()\n",
            f"{pkg}/_C_stable.so": open(out, "rb").read()}


def stable_wheel(d, pkg, version, files):
    """A real py3-none wheel of files, with METADATA, WHEEL and RECORD."""
    import base64
    import hashlib
    import zipfile
    di = f"{pkg}-{version}.dist-info"
    files = dict(files)
    files[f"{di}/METADATA"] = f"Metadata-Version: 2.1\nName: {pkg}\nVersion: {version}\n"
    files[f"{di}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: test_harness\nRoot-Is-Purelib: false\n" \
                           "Tag: py3-none-manylinux_2_28_x86_64\n"
    path = os.path.join(d, "wheels", f"{pkg}-{version}-py3-none-manylinux_2_28_x86_64.whl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in sorted(files.items()):
            b = data.encode() if isinstance(data, str) else data
            z.writestr(arc, b)
            h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
            record.append(f"{arc},sha256={h},{len(b)}")
        record.append(f"{di}/RECORD,,")
        z.writestr(f"{di}/RECORD", "\n".join(record) + "\n")
    return path


def pip_install(env, whl):
    return subprocess.run([sys.executable, "-m", "pip", "--python", os.path.join(env, "bin", "python"), "install",
                           "--no-deps", "--no-index", "--no-compile", "--disable-pip-version-check", "-q", whl],
                          capture_output=True, text=True)


def lib_verdicts(a):
    """abiscope's verdicts on the libraries the packages' imports load themselves, by file name."""
    return {os.path.basename(m["path"]) + "@" + m["path"].split("/")[-2]: m
            for dist in matrix.abiscope_env(a)["distributions"] for m in dist["modules"] if m.get("loaded_by")}


def stable_checks(t, top):
    """torchvision-0.29-shaped packages in a torch-shaped env: abiscope's
    verdict on _C_stable.so, its dlerror and what its failure costs, against
    the real import (the oracle's "libraries"); then `abiscope wheel` of the
    new version over an installed old one, against a real pip install."""
    d = os.path.join(top, "stable")
    sp = build_torch_env(d, runpath=True)
    for pkg, body in STABLE_PKGS.items():
        for arc, data in stable_files(d, pkg, body, new_api=True).items():
            os.makedirs(os.path.dirname(os.path.join(sp, arc)), exist_ok=True)
            with open(os.path.join(sp, arc), "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
    o = oracle(d)
    a = abiscope(d)
    r = matrix.compare("stable", "no driver", o, a)
    t.ok(r["libraries"] == 3 and r["libraries_agree"] == 3 and not r["diffs"],
         "torchvision 0.29 shape: abiscope and the real import agree on both _C_stable.so and selfpkg's helper "
         "(verdict, exact dlerror)",
         json.dumps({"diffs": r["diffs"], "libraries": o.get("libraries")}, indent=1)[:3000])
    lv = lib_verdicts(a)
    real = {os.path.basename(p) + "@" + p.split("/")[-2]: v for p, v in o.get("libraries", {}).items()}
    want = "undefined symbol: c10_new_api"
    for pkg, body in STABLE_PKGS.items():
        m, re_ = lv.get(f"_C_stable.so@{pkg}", {}), real.get(f"_C_stable.so@{pkg}", {})
        by = m.get("loaded_by") or {}
        lines = STABLE_EXTENSION.format(body=body).splitlines()
        at = lines.index('if _load_library("_C_stable"):') + 1
        call_at = next(i for i, ln in enumerate(lines) if "ops.load_library(lib_path)" in ln) + 1
        t.ok(m.get("status") == "fails" and (m.get("error") or "").endswith(want) and m.get("error") == re_.get("dlopen")
             and by.get("file") == f"{pkg}/extension.py" and by.get("line") == at and by.get("call") == "ops.load_library"
             and by.get("call_file") == f"{pkg}/extension.py" and by.get("call_line") == call_at,
             f"{pkg}: _C_stable.so fails with the real dlerror, loaded at extension.py:{at} through ops.load_library "
             f"at line {call_at}",
             json.dumps({"abiscope": m, "real": re_}, indent=1))
    m, re_ = lv.get("_C_stable.so@tvstable", {}), real.get("_C_stable.so@tvstable", {})
    t.ok(m.get("loaded_by", {}).get("caught") and re_.get("package_error") is None and
         (m.get("consequence") or "").startswith("the failure is caught (`except (ImportError, OSError):`") and
         "`import tvstable` goes on without _C_stable.so" in m.get("consequence", "") and
         "except (ImportError, OSError):" in m.get("consequence", ""),
         "tvstable: the failure is caught, `import tvstable` works (really), and the consequence says so",
         json.dumps({"abiscope": m, "real": re_}, indent=1))
    m, re_ = lv.get("_C_stable.so@tvraise", {}), real.get("_C_stable.so@tvraise", {})
    t.ok(m.get("loaded_by", {}).get("caught") is False and
         re_.get("package_error") == "OSError: " + (m.get("error") or "?") and
         (m.get("consequence") or "").startswith("`import tvraise` raises OSError: " + (m.get("error") or "?")),
         "tvraise: not caught, `import tvraise` raises OSError with the dlerror (really), and the consequence says so",
         json.dumps({"abiscope": m, "real": re_}, indent=1))
    s = a["summary"]
    t.ok(s.get("self_loaded_libraries") == 3 and s.get("failing_self_loaded_libraries") == 2 and s["failing"] == 2,
         "check: the summary counts the self-loaded libraries apart from the modules", json.dumps(s))
    e = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    rt = subprocess.run([matrix.ABISCOPE, "check", "--no-driver", "--ld-library-path", "", d],
                        capture_output=True, text=True, env=e)
    t.ok(rt.returncode == 1 and "2 of 3 libraries its packages load themselves would fail to load" in rt.stdout,
         "check: failing self-loaded libraries fail the check, said apart from modules", rt.stdout[-2000:])
    # the upgrade: 0.1 (built against the installed torch) installed, 0.2 (the newer one) judged, then really installed
    w = os.path.join(top, "stable-wheel")
    sp = build_torch_env(w, runpath=True)
    old = stable_wheel(w, "tvstable", "0.1", stable_files(w, "tvstable", STABLE_TRY, new_api=False))
    new = stable_wheel(w, "tvstable", "0.2", stable_files(w, "tvstable", STABLE_TRY, new_api=True))
    pi = pip_install(w, old)
    if pi.returncode:
        t.skip("wheel upgrade against a real pip install", "pip cannot install here: " + pi.stderr[-300:])
        return
    j = subprocess.run([matrix.ABISCOPE, "wheel", "--json", "--env", w, new], capture_output=True, text=True, env=e)
    wj = json.loads(j.stdout or "{}")
    libs = wj.get("libraries") or []
    copy = os.path.join(top, "stable-wheel-installed")
    shutil.copytree(w, copy, symlinks=True)
    pi = pip_install(copy, new)
    t.ok(pi.returncode == 0, "the real pip install of the upgrade", pi.stderr[-1500:])
    o = oracle(copy, {"ORACLE_PACKAGES": "tvstable"})
    real = {os.path.basename(p): v for p, v in o.get("libraries", {}).items() if "/tvstable/" in p}
    lib = libs[0] if libs else {}
    t.ok(wj.get("replaces") == "0.1" and len(libs) == 1 and lib.get("loads") is False and
         lib.get("error", "").replace(w, copy) == real.get("_C_stable.so", {}).get("dlopen") and
         (lib.get("loaded_by") or {}).get("caught") is True and j.returncode == 1 and wj.get("failing_libraries") == 1,
         "wheel: the upgrade's _C_stable.so fails with the dlerror the real install gives, and fails the verdict",
         json.dumps({"wheel": wj.get("libraries"), "real": real, "rc": j.returncode}, indent=1)[:3000])
    tx = subprocess.run([matrix.ABISCOPE, "wheel", "--env", w, new], capture_output=True, text=True, env=e).stdout
    t.ok("libraries its import loads itself (1)" in tx and "loaded at tvstable/extension.py:23 (ops.load_library"
         in tx and "`import tvstable` goes on without _C_stable.so" in tx and "FAIL:" in tx,
         "wheel: the text lists the library, where it is loaded, and what its failure costs", tx[-2500:])
    x = os.path.join(top, "stable.xml")
    subprocess.run([matrix.ABISCOPE, "wheel", "--junit", x, "--env", w, new], capture_output=True, env=e)
    xml = open(x).read() if os.path.exists(x) else ""
    t.ok("libraries its import loads itself" in xml and xml.count("<failure") == 1 and "c10_new_api" in xml,
         "wheel --junit: the failing library is a failed case", xml[-2000:])
    # the old version, before the upgrade: loads, and the real import mapped it
    o = oracle(w, {"ORACLE_PACKAGES": "tvstable"})
    r = matrix.compare("stable-old", "no driver", o, abiscope(w))
    ldiffs = [x for x in r["diffs"] if "loaded_at" in x]  # ORACLE_PACKAGES: the other modules are not measured
    t.ok(r["libraries"] == 1 and r["libraries_agree"] == 1 and not ldiffs and
         all(v["mapped_by_import"] for p, v in o["libraries"].items() if "/tvstable/" in p),
         "the installed old version: _C_stable.so loads, mapped by the real import, and abiscope agrees",
         json.dumps(ldiffs, indent=1))
    # the same upgrade of the package whose load no try catches: the real `import tvraise` raises
    old = stable_wheel(w, "tvraise", "0.1", stable_files(w, "tvraise", STABLE_RAISE, new_api=False))
    new = stable_wheel(w, "tvraise", "0.2", stable_files(w, "tvraise", STABLE_RAISE, new_api=True))
    pi = pip_install(w, old)
    t.ok(pi.returncode == 0, "the real pip install of tvraise 0.1", pi.stderr[-1500:])
    j = subprocess.run([matrix.ABISCOPE, "wheel", "--json", "--env", w, new], capture_output=True, text=True, env=e)
    wj = json.loads(j.stdout or "{}")
    libs = wj.get("libraries") or []
    copy = os.path.join(top, "raise-wheel-installed")
    shutil.copytree(w, copy, symlinks=True)
    pi = pip_install(copy, new)
    o = oracle(copy, {"ORACLE_PACKAGES": "tvraise"})
    real = {os.path.basename(p): v for p, v in o.get("libraries", {}).items() if "/tvraise/" in p}
    lib, re_ = libs[0] if libs else {}, real.get("_C_stable.so", {})
    err = (lib.get("error") or "?").replace(w, copy)
    t.ok(pi.returncode == 0 and wj.get("replaces") == "0.1" and len(libs) == 1 and lib.get("loads") is False and
         err == re_.get("dlopen") and re_.get("package_error") == "OSError: " + err and
         (lib.get("loaded_by") or {}).get("caught") is False and j.returncode == 1 and
         (lib.get("consequence") or "").startswith("`import tvraise` raises OSError: " + lib.get("error", "?")),
         "wheel: the upgrade whose load no try catches: the dlerror of the real install, and `import tvraise` "
         "really raises that OSError, as the consequence says",
         json.dumps({"wheel": libs, "real": real, "rc": j.returncode}, indent=1)[:3000])


def compare_library_checks(t):
    """matrix.compare on the libraries, on made-up answers: a load abiscope
    says the import makes, that the real import did not map, is a
    disagreement; kept oracle answers without "libraries" are not measured."""
    lib = "/e/site-packages/pkg/lib/libx.so"
    ab = {"environments": [{"distributions": [{"name": "pkg", "modules": [
        {"module": None, "path": lib, "extension": False, "status": "ok", "error": None,
         "loaded_by": {"file": "pkg/__init__.py", "line": 3, "condition": None, "caught": False}}]}]}]}
    real = {"package": "pkg", "package_error": None, "mapped_before_import": False, "mapped_by_import": False,
            "dlopen": None}
    r = matrix.compare("made-up", "no driver", {"modules": {}, "libraries": {lib: real}}, ab)
    t.ok([d["kind"] for d in r["diffs"]] == ["LOAD NOT MADE"] and r["library_false_loads"] == 1,
         "compare: a load abiscope says the import makes unconditionally, not mapped by the real import, "
         "is a disagreement", json.dumps(r, indent=1))
    r = matrix.compare("made-up", "no driver", {"modules": {}, "libraries": {lib: dict(real, mapped_by_import=True)}}, ab)
    t.ok(not r["diffs"] and r["libraries_agree"] == 1, "compare: mapped by the real import and loads: agrees",
         json.dumps(r, indent=1))
    r = matrix.compare("made-up", "no driver", {"modules": {}, "libraries": {
        lib: dict(real, dlopen="libx.so: undefined symbol: y")}}, ab)
    t.ok([d["kind"] for d in r["diffs"]] == ["LIBRARY FALSE LOAD"] and r["library_false_loads"] == 1,
         "compare: abiscope says it loads, the real dlopen fails: a false load", json.dumps(r, indent=1))
    r = matrix.compare("made-up", "no driver", {"modules": {}}, ab)
    t.ok(not r["diffs"] and r["libraries_not_measured"] == 1 and r["libraries"] == 0,
         "compare: an oracle answer kept from before it measured libraries: not measured, no disagreement",
         json.dumps(r, indent=1))


def oracle(d, env_extra=None):
    out = os.path.join(d, "oracle.json")
    e = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "TORCH_USE_RTLD_GLOBAL")}
    e.update(env_extra or {})
    subprocess.run([os.path.join(d, "bin", "python"), os.path.join(HERE, "oracle.py"), out], env=e, check=True,
                   cwd="/", timeout=600)
    return json.load(open(out))


def abiscope(d, env_extra=None):
    e = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "TORCH_USE_RTLD_GLOBAL")}
    e.update(env_extra or {})
    r = subprocess.run([matrix.ABISCOPE, "check", "--json", "--no-driver", "--ld-library-path", "", d],
                       capture_output=True, text=True, env=e)
    return json.loads(r.stdout)


def agree(t, name, o, a):
    r = matrix.compare(name, "no driver", o, a)
    t.ok(r["modules"] >= 5, f"{name}: the oracle measured the env's modules ({r['modules']})",
         json.dumps(o.get("modules"), indent=1)[:2000])
    t.ok(not r["diffs"], f"{name}: abiscope and the real import agree on every module",
         json.dumps(r["diffs"], indent=1))
    t.ok(r.get("torch_replay_exact"), f"{name}: the import torch replay loads what the real import maps",
         json.dumps(r.get("torch_diff"), indent=1))
    return {m["module"]: m for m in o["modules"].values()}


TORCH_IMPORT_PKGS = {
    # (the package's __init__.py, what abiscope must say without torch installed)
    "tc_typecheck": ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import torch\n", "ok"),
    "tc_try": ("try:\n    import torch\nexcept ImportError:\n    torch = None\n", "ok"),
    "tc_def": ("def one_hot(\n    x,\n    n=2,\n):\n    if x:\n        import torch\n"
               "        return torch.nn.functional.one_hot(x, n)\n    return x\n", "ok"),
    "tc_top": ("import torch\n", "fails"),
    "tc_cond": ("import os\n\nif os.environ.get(\"TC_COND\"):\n    import torch\n", "cannot-tell"),
}


def torch_import_checks(t, top):
    """Packages that import torch, in an env without it: the real import
    fails only where the `import torch` always runs outside a try block."""
    d = os.path.join(top, "notorch")
    sp = venv(d)
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    for pkg, (init, _) in TORCH_IMPORT_PKGS.items():
        write(f"{sp}/{pkg}/__init__.py", init)
        cc(f"{sp}/{pkg}/_ext{ext}", "int ext_fn(void){return 1;}\n")
    o = {m["module"]: m for m in oracle(d)["modules"].values()}
    a = {m["module"]: m for dist in matrix.abiscope_env(abiscope(d))["distributions"] for m in dist["modules"]}
    for pkg, (_, want) in TORCH_IMPORT_PKGS.items():
        real = o.get(f"{pkg}._ext", {})
        mine = a.get(f"{pkg}._ext", {})
        real_torchless = (real.get("import") or "").startswith("ModuleNotFoundError: No module named 'torch'")
        t.ok(real_torchless == (want == "fails") and mine.get("status") == want and
             (want != "fails" or mine.get("error") == "No module named 'torch'"),
             f"{pkg}: without torch the real import {'stops at import torch' if real_torchless else 'goes on'}; "
             f"abiscope says {want}", json.dumps({"real": real, "abiscope": mine}, indent=1))


def main():
    t = Tap()
    top = tempfile.mkdtemp(prefix="abiscope-harness-")
    try:
        a = os.path.join(top, "slim")
        build_torch_env(a, runpath=True)
        mods = agree(t, "2.9 shape", oracle(a), abiscope(a))
        t.ok(mods.get("needs_nvrtc._ext", {}).get("dlopen") is None,
             "2.9 shape: an extension that needs libnvrtc loads after torch's preload")
        t.ok(mods.get("plain_nvrtc._ext", {}).get("dlopen") ==
             "libnvrtc.so.12: cannot open shared object file: No such file or directory",
             "2.9 shape: without torch it fails with the exact dlerror()")
        t.ok(mods.get("selfpkg._ext", {}).get("dlopen") is None, "a package's own library loaded first")
        t.ok((mods.get("ownfirst._C", {}).get("dlopen") or "").startswith("libc10.so"),
             "its own extension before torch: fails")
        g = {"TORCH_USE_RTLD_GLOBAL": "1"}
        mods = agree(t, "TORCH_USE_RTLD_GLOBAL", oracle(a, g), abiscope(a, g))
        t.ok((mods.get("needs_nvrtc._ext", {}).get("dlopen") or "").startswith("libnvrtc.so.12"),
             "TORCH_USE_RTLD_GLOBAL: no global deps, no preloads")
        b = os.path.join(top, "fallback")
        build_torch_env(b, runpath=False, nvfuser=True)
        o = oracle(b)
        mods = agree(t, "OSError fallback", o, abiscope(b))
        t.ok(any("cuda_runtime/lib/libcudart.so.12" in p for p in o["torch"]["loads"]),
             "OSError fallback: the real import preloads libcudart from nvidia/cuda_runtime/lib")
        t.ok(any(p.endswith("torch/lib/libnvfuser_codegen.so") for p in o["torch"]["loads"]),
             "2.1 shape: libtorch_cpu.so's initialiser maps libnvfuser_codegen.so in the real import")
        t.ok(mods.get("needs_nvrtc._ext", {}).get("dlopen") is None,
             "2.1 shape: an extension that needs libnvrtc loads after torch (nvfuser mapped it)")
        c = os.path.join(top, "stacked")
        sp = venv(c)
        write(os.path.join(sp, "base.pth"), venv_site(a) + "\n")
        agree(t, ".pth", oracle(c), abiscope(c))
        selfload_checks(t, top)
        compare_library_checks(t)
        stable_checks(t, top)
        torch_import_checks(t, top)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 1 if t.failed else 0


def venv_site(d):
    v = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return os.path.join(d, "lib", v, "site-packages")


if __name__ == "__main__":
    sys.exit(main())
