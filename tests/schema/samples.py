"""Real --json outputs of every command, from the demo environment (built
from source by demo/build.sh) and snapshots and a wheel made from it.

samples(abiscope, workdir) -> [(command, description, exit_status, document)]
"""
import gzip
import importlib
import json
import os
import subprocess
import sys
import sysconfig
import zipfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def debian_module(name, skip):
    """The module name, which Debian packages for its own python: a pyenv or
    venv python first on PATH lacks it, so the test runs itself again, once,
    under /usr/bin/python3; where that lacks it too, prints skip (a TAP SKIP
    line) and exits 0."""
    try:
        return importlib.import_module(name)
    except ImportError:
        flag = "ABISCOPE_REEXEC_" + name.upper()
        if os.path.exists("/usr/bin/python3") and \
                os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and not os.environ.get(flag):
            os.environ[flag] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        print(skip)
        sys.exit(0)


class Tap:
    """report(ok, what, detail): a TAP line, the detail under a failure;
    .failed counts the failures."""

    def __init__(self):
        self.failed = 0

    def __call__(self, ok, what, detail=""):
        print(("ok - " if ok else "not ok - ") + what)
        if not ok:
            self.failed += 1
            for line in str(detail).splitlines()[:12]:
                print("#   " + line)


def run(abiscope, args, stdin=None):
    p = subprocess.run([abiscope] + args, input=stdin, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def unsure_env(work):
    """A venv (built here) whose one module abiscope cannot tell about: its
    package loads the library it needs itself, under an environment variable."""
    d = os.path.join(work, "unsure")
    sp = os.path.join(d, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    if os.path.isdir(sp):
        return d
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", d], check=True, timeout=120)
    pkg = os.path.join(sp, "cond_env")
    os.makedirs(os.path.join(pkg, "lib"))
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    for out, src, flags in (("lib/libce.so", "int ce(void){return 1;}\n", ["-Wl,-soname,libce.so"]),
                            ("_ext" + ext, "int ce(void);\nint f(void){return ce();}\nvoid *PyInit__ext(void){return 0;}\n",
                             ["-L" + os.path.join(pkg, "lib"), "-l:libce.so"])):
        c = os.path.join(pkg, "src.c")
        with open(c, "w") as f:
            f.write(src)
        subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(pkg, out), c] + flags, check=True)
        os.unlink(c)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write("import ctypes, os\n\nif os.environ.get('COND_ENV_LOAD'):\n"
                "    ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'lib', 'libce.so'))\n")
    return d


def samples(abiscope, work):
    demo = os.path.join(work, "demo")
    if not os.path.isdir(os.path.join(demo, "venv")):
        subprocess.run(["sh", os.path.join(TOP, "demo", "build.sh"), demo], check=True,
                       capture_output=True, timeout=600)
    venv = os.path.join(demo, "venv")
    conda = os.path.join(demo, "conda")
    sp = os.path.join(venv, "lib", "python3.11", "site-packages")
    gds = os.path.join(sp, "gds_io", "_C.abi3.so")
    good = os.path.join(sp, "good_ops", "_ops.cpython-311-x86_64-linux-gnu.so")
    snap_a = os.path.join(work, "a.json.gz")
    snap_b = os.path.join(work, "b.json")
    whl = os.path.join(work, "goodops_copy-1.0-py3-none-manylinux2014_x86_64.whl")
    with zipfile.ZipFile(whl, "w") as z:
        z.write(good, "goodops_copy/_ops.cpython-311-x86_64-linux-gnu.so")
        z.writestr("goodops_copy-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: goodops-copy\nVersion: 1.0\n")
        z.writestr("goodops_copy-1.0.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux2014_x86_64\n")
        z.writestr("goodops_copy-1.0.dist-info/RECORD", "")
    cases = [
        ("why", "an extension that fails (a missing library)", ["why", "--json", gds]),
        ("why", "an extension that loads", ["why", "--json", good]),
        ("why", "with a preload and a GPU", ["why", "--json", "--gpu", "sm_90", "--driver", "580.65.06",
                                             "--preload-global", os.path.join(sp, "torch", "lib", "libc10.so"), gds]),
        ("why", "an import name", ["why", "--json", "--process", os.path.join(venv, "bin", "python3"), "sgl_kernel"]),
        ("why", "conda's old libstdc++", ["why", "--json", "--process", os.path.join(conda, "bin", "python3"),
                                          os.path.join(conda, "lib", "python3.11", "site-packages", "fastops",
                                                       "_fastops.cpython-311-x86_64-linux-gnu.so")]),
        ("why", "an unreadable target", ["why", "--json", os.path.join(work, "no-such.so")]),
        ("check", "the demo venv", ["check", "--json", venv]),
        ("check", "the demo venv for an H100", ["check", "--json", "--gpu", "H100", "--driver", "580.65.06",
                                                "--assume-driver", venv]),
        ("check", "the conda env", ["check", "--json", conda]),
        ("check", "a module abiscope cannot tell about", ["check", "--json", "--no-driver", unsure_env(work)]),
        ("cuda", "the demo venv", ["cuda", "--json", "--no-driver", venv]),
        ("cuda", "for sm_120", ["cuda", "--json", "--gpu", "sm_120", "--driver", "570.10", venv]),
        ("gpu", "without a driver", ["gpu", "--json", "--no-driver"]),
        ("explain", "a pasted ImportError", ["explain", "--json", "ImportError: libcufile.so.0: cannot open shared "
                                             "object file: No such file or directory", "(" + gds + ")"]),
        ("wheel", "a wheel into the demo venv", ["wheel", "--json", "--env", venv, whl]),
        ("snapshot", "the summary", ["snapshot", "--json", "--no-driver", "--label", "a", "-o", snap_a, venv]),
        ("snapshot", "the summary, another label", ["snapshot", "--json", "--no-driver", "--label", "b", "-o", snap_b,
                                                    venv]),
        ("diff", "a snapshot and an environment", ["diff", "--json", snap_a, conda]),
        ("diff", "two snapshots", ["diff", "--json", snap_a, snap_b]),
        ("fleet", "two snapshots", ["fleet", "--json", snap_a, snap_b]),
    ]
    out = []
    for cmd, what, args in cases:
        st, so, se = run(abiscope, args)
        try:
            doc = json.loads(so)
        except ValueError:
            doc = None
        out.append((cmd, what, st, doc, se))
    # the snapshot file itself has its own format (docs/snapshot.md)
    with gzip.open(snap_a, "rt") as f:
        out.append(("snapshot-file", "a snapshot file", 0, json.load(f), ""))
    return out
