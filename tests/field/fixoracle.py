#!/usr/bin/env python3
"""fixoracle.py: abiscope's fixes, applied for real (issue 24).

    python3 tests/field/fixoracle.py [--baseline] [--keep] [--save-as TAG] [--markdown FILE] [--notes FILE] [CASE...]
    python3 tests/field/fixoracle.py --table [--save-as TAG] [--markdown FILE] [CASE...]   (kept results only)
    python3 tests/field/fixoracle.py --compare [--save-as TAG] [CASE...]   (baseline against TAG, kept results)
    python3 tests/field/fixoracle.py --chroot                              (make the Debian 12 root)

For each broken environment of tests/field/fixcases.toml (a recipe: a base
and operations, built in a hard-link copy of a field env; the shared envs
are never written):

  1. before: the real import of every module, tests/field/oracle.py in the
     env's own python (the libcuda.so.1 stand-in on LD_LIBRARY_PATH, as in
     matrix.py), inside the case's mount namespace or chroot when it has one;
  2. `abiscope check --json --assume-driver` on it (the verdict a machine
     with the driver gets), and the default text's line count;
  3. each fix: the top-level `plan`'s actions when there is one, and
     separately each cause's `fix_actions` (docs/schema, /work/notes'
     contract); where the JSON has no `fix_actions` (abiscope before issue
     24), the cause's fix text read as a command (--baseline labels it);
  4. the fix applied for real in a fresh copy of the broken env (uv pip with
     the same pins and the shared cache; rm of a folder; a library path
     through the namespace's own ld.so.cache and ldconfig, or
     LD_LIBRARY_PATH; apt-get in the chroot), and the real import again.

Verdicts, per fix (judge()): right (every module or library its cause takes
down, that really failed before, imports after, and nothing that imported
before fails), partial-said (some but not all, and abiscope said so: "then:"
in the fix, or the plan's "remaining"), partial-unsaid, wrong (none, said or
not), harmful
(something that imported before no longer does), no-action (no action to
apply), not-applied (an action this machine cannot carry out: an index it
cannot reach, a system package of the host), not-failing (the cause takes
down nothing that really fails).

Results are kept under $ABISCOPE_FIELD/fixoracle/results (per case, JSON): the
real import before a recipe is measured once (keyed by the recipe), and the
import after a fix once per distinct set of actions, so a later run against
a new abiscope measures only the fixes that changed.
"""
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

FIELD = os.environ.get("ABISCOPE_FIELD", os.path.expanduser("~/.cache/abiscope/field"))
ENVS = os.path.join(FIELD, "envs")
UV_CACHE = os.path.join(FIELD, "uv")
WORK = os.path.join(FIELD, "fixoracle")
RESULTS = os.path.join(WORK, "results")
WHEELS = os.environ.get("ABISCOPE_WHEELS", "/work/cache/wheels")
DEB12 = os.environ.get("ABISCOPE_FIXORACLE_DEB12", "/var/tmp/fixoracle/deb12")
CASES = os.path.join(HERE, "fixcases.toml")
ABISCOPE = os.environ.get("ABISCOPE", os.path.join(TOP, "abiscope"))
PYTHON = os.environ.get("ABISCOPE_PYTHON", "/root/.pyenv/versions/3.11.7/bin/python3")
STDLIB_TAG = "python3.11"
MIN_FREE = float(os.environ.get("ABISCOPE_FIXORACLE_MIN_FREE_GB", "18")) * 1e9

VERDICTS = ("right", "partial-said", "partial-unsaid", "wrong", "harmful", "no-action", "not-applied",
            "not-failing", "not-run")
OPS = {"pip-install": ("requirements",), "pip-uninstall": ("distributions",), "copy-in": ("from", "paths"),
       "remove": ("paths",), "unregister-toolkit": (), "multipython-wheel": ("name",),
       "dist-info-of": ("requirement",)}
ACTIONS = ("pip-install", "pip-uninstall", "remove-path", "add-library-path", "system-package")
# the CUDA variant PyPI carries for each torch minor (read from torch/version.py
# of the field envs built from PyPI): a pin on the PyTorch index's folder for
# that variant is the same build, so it is installed from PyPI here (this
# machine reaches PyPI only)
NOT_A_MODULE = "does not define module export function"
PYPI_TORCH_CUDA = {"2.9": "cu128", "2.10": "cu128", "2.12": "cu130", "2.15": "cu132"}


# ---------------------------------------------------------------- recipes

def load_cases(path=CASES):
    with open(path, "rb") as f:
        cases = tomllib.load(f)["case"]
    errs = [e for c in cases for e in validate(c)]
    names = [c.get("name") for c in cases]
    errs += [f"{n}: two cases of that name" for n in sorted({n for n in names if names.count(n) > 1})]
    if errs:
        raise ValueError("fixcases.toml: " + "; ".join(errs))
    return cases


def validate(case):
    """What is wrong with one recipe (a list of sentences; [] when nothing)."""
    name = case.get("name") or "?"
    errs = []
    for k in ("name", "shape", "base"):
        if not case.get(k):
            errs.append(f"{name}: no {k}")
    base = case.get("base") or ""
    if base and not re.fullmatch(r"(env|stack):[\w.+-]+|chroot:deb12", base):
        errs.append(f"{name}: base '{base}' is none of env:NAME, stack:NAME, chroot:deb12")
    for op in case.get("ops", []):
        kind = op.get("op")
        if kind not in OPS:
            errs.append(f"{name}: unknown op '{kind}'")
            continue
        for k in OPS[kind]:
            if not op.get(k):
                errs.append(f"{name}: {kind} without {k}")
        for p in op.get("paths", []):
            if p.startswith("/") or ".." in p.split("/"):
                errs.append(f"{name}: {kind} path '{p}' leaves the copy")
        if kind == "dist-info-of" and not re.fullmatch(r"[A-Za-z0-9_.-]+==[\w.+]+", op.get("requirement") or ""):
            errs.append(f"{name}: dist-info-of '{op.get('requirement')}' is no exact pin NAME==VERSION")
        if base.startswith("chroot:") and kind in ("pip-install", "copy-in", "multipython-wheel", "dist-info-of"):
            errs.append(f"{name}: {kind} in a chroot case")
    return errs


def fingerprint(obj):
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def base_marker(case):
    """What the base is made of: the field env's .abiscope-field, or the root's
    debootstrap log; part of the recipe's fingerprint."""
    kind, _, name = case["base"].partition(":")
    if kind == "chroot":
        p = os.path.join(DEB12, "var/lib/dpkg/status")
    else:
        p = os.path.join(ENVS, name, ".abiscope-field")
    try:
        with open(p, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return None


# ---------------------------------------------------------------- the fix, read

PIP_INSTALL = re.compile(r"\bpip3? install ((?:--[\w-]+(?:=\S+| https?://\S+)? )*)(.*)")
REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(?:\[[\w,-]+\])?(?:(?:==|>=|<=|~=|!=|<|>)[\w.*+!-]+)?")


def parse_fix_text(text, python):
    """The actions a user would take from a fix line of abiscope before its
    JSON had fix_actions (the baseline): a `pip install ...` or `pip
    uninstall ...` command, "uninstall NAME", "put DIR on LD_LIBRARY_PATH",
    "apt-get install --reinstall ...", "rm -r PATH".  [] when the line is
    advice no one can apply as written (rebuild, ask the vendor)."""
    text = text or ""
    acts = []
    m = PIP_INSTALL.search(text)
    if m:
        flags = m.group(1).split()
        # the command ends where the prose begins: "(the version ...", ", or ..."
        cmd = re.split(r",|;| \(| or | then", m.group(2))[0]
        reqs = []
        toks = cmd.split()
        while toks:
            tok = toks.pop(0).rstrip(").")
            if tok.startswith("--"):
                flags.append(tok)
                if tok == "--index-url" and toks:
                    flags.append(toks.pop(0))
            elif REQUIREMENT.fullmatch(tok):
                reqs.append(tok)
            else:
                break
        if not reqs:
            return acts
        index = None
        for i, f in enumerate(flags):
            if f.startswith("--index-url"):
                index = f.split("=", 1)[1] if "=" in f else (flags[i + 1] if i + 1 < len(flags) else None)
        acts.append({"action": "pip-install", "python": python, "requirements": reqs, "index_url": index,
                     "no_deps": "--no-deps" in flags, "force_reinstall": "--force-reinstall" in flags,
                     "command": " ".join(["pip install", *flags, *reqs])})
        return acts
    m = re.search(r"\b(?:pip3? )?uninstall ((?:[A-Za-z0-9_.-]+(?:, | and | )?)+)", text)
    if m:
        dists = [d for d in re.split(r",? and |, | ", m.group(1).strip()) if d and d not in ("which", "the")]
        dists = [d.rstrip(",") for d in dists[:1]] if not text.lstrip().startswith("pip") else dists
        acts.append({"action": "pip-uninstall", "python": python, "distributions": dists,
                     "command": "pip uninstall " + " ".join(dists)})
        return acts
    m = re.search(r"apt(?:-get)? install --reinstall ((?:[a-z0-9.+-]+ ?)+)", text)
    if m:
        acts.append({"action": "system-package", "manager": "dpkg", "packages": m.group(1).split(),
                     "command": m.group(0)})
        return acts
    m = re.search(r"put (/\S+) on LD_LIBRARY_PATH", text)
    if m:
        acts.append({"action": "add-library-path", "path": m.group(1), "how": "LD_LIBRARY_PATH",
                     "command": f"export LD_LIBRARY_PATH={m.group(1)}"})
        return acts
    m = re.search(r"\brm -r[f]? '?(/[^'\s]+)'?", text)
    if m:
        acts.append({"action": "remove-path", "path": m.group(1), "command": m.group(0)})
    return acts


def said_partial(text):
    return bool(re.search(r"\bthen:", text or ""))


def fixes_of(report, baseline_text=False):
    """What to apply: [{label, source, actions, causes, partial_said}].
    The plan first (its actions fix the causes it lists; those in its
    "remaining" are said to stay), then each cause's own fix.  A cause
    without `fix_actions` in the JSON is read from its text (abiscope before
    issue 24's JSON actions): source "text"."""
    out = []
    plan = report.get("plan")
    if isinstance(plan, dict):
        out.append({"label": "plan", "source": "plan", "actions": plan.get("actions") or [],
                    "causes": list(plan.get("fixes") or []), "remaining": list(plan.get("remaining") or []),
                    "partial_said": bool(plan.get("remaining")), "command": plan.get("command"),
                    "checked": plan.get("checked")})
    py = None
    for c in report.get("causes", []):
        if c.get("severity") not in ("error", "warning") or c.get("driver"):
            continue
        if "fix_actions" in c and not baseline_text:
            acts, src = c.get("fix_actions") or [], "json"
        else:
            py = py or report_python(report)
            acts, src = parse_fix_text(c.get("fix"), py), "text"
        out.append({"label": f"cause {c['index'] + 1}", "source": src, "actions": acts, "causes": [c["index"]],
                    "remaining": [], "partial_said": said_partial(c.get("fix")), "command": c.get("fix")})
    return out


def report_python(report):
    e = (report.get("environments") or [{}])[0]
    return e.get("python")


def cause_targets(report, index):
    """Paths of the modules and libraries the cause takes down: the entries
    abiscope marks failing (or cannot tell) whose findings are the cause's."""
    c = next(c for c in report["causes"] if c["index"] == index)
    mine = set(c.get("findings") or []) | set(c.get("roots") or [])
    out = set()
    for e in report.get("environments", []):
        for d in e.get("distributions", []):
            for m in d.get("modules", []):
                if m.get("status") in ("fails", "cannot-tell") and mine & set(m.get("findings") or []):
                    out.add(m["path"])
    return out


# ---------------------------------------------------------------- the verdict

def units(oracle, prefix):
    """The real import as units: "import torch", "mod:NAME" (import NAME),
    "lib:PATH" (dlopen after `import PKG`, PATH relative to prefix) and
    "pkg:TOP" (import TOP), each True (works), False (fails) or "crash"
    (the oracle's child died: never counted as working).  A timeout is left
    out (not measured)."""
    out, where = {}, {}

    def verdict(err):
        if err is None:
            return True
        if err.startswith("crashed: timeout"):
            return None
        return "crash" if err.startswith("crashed") else False
    t = oracle.get("torch")
    if t is not None:
        out["import torch"] = bool(t.get("ok"))
    for path, m in (oracle.get("modules") or {}).items():
        err = m.get("import") or ""
        if NOT_A_MODULE in err or err == f"ModuleNotFoundError: No module named '{m['module']}'":
            continue  # a library with a module suffix, or a module its package's shadow hides: no module
        v = verdict(m.get("import"))
        if v is not None:
            out["mod:" + m["module"]] = v
            where[os.path.realpath(path)] = "mod:" + m["module"]
        top = m["module"].split(".")[0]
        pv = verdict(m.get("package_error"))
        if pv is not None and m.get("package") == top:
            out["pkg:" + top] = pv if out.get("pkg:" + top, True) is True else out["pkg:" + top]
    for path, lib in (oracle.get("libraries") or {}).items():
        if not (lib.get("tried_by_import") or lib.get("mapped_by_import")):
            continue  # a library the import neither loads nor tries (nvshmem's transports): not an import's part
        v = verdict(lib.get("dlopen"))
        rel = relpath(path, prefix)
        if v is not None:
            out["lib:" + rel] = v
            where[os.path.realpath(path)] = "lib:" + rel
        pv = verdict(lib.get("package_error"))
        if pv is not None and lib.get("package"):
            k = "pkg:" + lib["package"]
            out[k] = pv if out.get(k, True) is True else out[k]
    return out, where


def relpath(path, prefix):
    path = os.path.realpath(path)
    prefix = os.path.realpath(prefix) if prefix else ""
    if prefix and (path == prefix or path.startswith(prefix + os.sep)):
        return os.path.relpath(path, prefix)
    return path


def after_status(unit, after):
    """A unit's state after the fix; a module or library that is gone (the fix
    moved its distribution to a release that lays its files out otherwise)
    is judged by its top-level package's import, and is False when that is
    gone too."""
    if unit in after:
        return after[unit]
    if unit.startswith("mod:"):
        top = unit[4:].split(".")[0]
    elif unit.startswith("lib:"):
        parts = unit[4:].split(os.sep)
        top = parts[parts.index("site-packages") + 1] if "site-packages" in parts else parts[0]
    else:
        return False
    return after.get("pkg:" + top, False)


def judge(before, after, targets, partial_said, applied=True, has_actions=True):
    """The verdict on one applied fix (see the module's docstring), and its
    evidence: fixed, still (failing), broken (worked before, not after)."""
    res = {"targets": sorted(targets), "fixed": [], "still": [], "broken": []}
    if not has_actions:
        res["verdict"] = "no-action"
        return res
    if not applied:
        res["verdict"] = "not-applied"
        return res
    res["broken"] = sorted(u for u, v in before.items() if v is True and after_status(u, after) is not True)
    failing = [u for u in targets if before.get(u) is False]
    res["fixed"] = [u for u in failing if after_status(u, after) is True]
    # a target whose import the oracle's child died in after the fix (sgl_kernel's
    # sm90 variant aborts registering the operators the sm100 one registered:
    # the matrix's "crash", no loader verdict) is not measured, counted neither way
    res["crashed"] = [u for u in failing if after_status(u, after) == "crash"]
    res["still"] = [u for u in failing if after_status(u, after) not in (True, "crash")]
    if res["broken"]:
        res["verdict"] = "harmful"
    elif not failing or len(res["crashed"]) == len(failing):
        res["verdict"] = "not-failing"
    elif not res["still"]:
        res["verdict"] = "right"
    elif not res["fixed"]:
        # nothing it was to fix imports: wrong, whatever it said would remain
        # (a plan of library paths under an import of torch that still fails)
        res["verdict"] = "wrong"
    elif partial_said:
        res["verdict"] = "partial-said"
    else:
        res["verdict"] = "partial-unsaid"
    return res


def rewrite(obj, old, new):
    """Every string of obj with the prefix old (a path abiscope printed for the
    broken env) moved to new (the copy the fix is applied in)."""
    if isinstance(obj, str):
        return obj.replace(old, new)
    if isinstance(obj, list):
        return [rewrite(x, old, new) for x in obj]
    if isinstance(obj, dict):
        return {k: rewrite(v, old, new) for k, v in obj.items()}
    return obj


def pypi_requirements(reqs, index_url):
    """The requirements to install from PyPI for a pip-install with an index,
    or None when PyPI does not carry the same build (this machine reaches
    PyPI only).  A pin on the PyTorch index's cuXYZ folder is PyPI's build
    when PyPI's torch of that minor is the cuXYZ variant; torchvision 0.N
    goes with torch 2.(N-15), torchaudio 2.N with torch 2.N."""
    if not index_url:
        return list(reqs)
    m = re.search(r"/whl/(cu\d+|cpu)/?$", index_url)
    if not m:
        return None
    out = []
    for r in reqs:
        rm = re.fullmatch(r"(torch|torchvision|torchaudio)==(\d+)\.(\d+)\.(\d+)(?:\+(\w+))?", r)
        if not rm:
            return None
        name, a, b, c, local = rm.groups()
        minor = {"torch": f"{a}.{b}", "torchaudio": f"{a}.{b}", "torchvision": f"2.{int(b) - 15}"}[name]
        if PYPI_TORCH_CUDA.get(minor) != m.group(1) or (local and local != m.group(1)):
            return None
        out.append(f"{name}=={a}.{b}.{c}")
    return out


# ---------------------------------------------------------------- doing it

def sh(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run(cmd, **kw)


class State:
    """A built env: a venv (env), a venv stacked on a copy of another (env +
    base), or a Debian root (root); ns: a folder holding the overlays of a
    mount namespace every run goes through; ldpath: LD_LIBRARY_PATH a fix
    added."""

    def __init__(self, d, meta):
        self.dir = d
        self.kind = meta["kind"]
        self.ns = meta.get("ns", False)
        self.ldpath = list(meta.get("ldpath", []))

    @property
    def env(self):
        return os.path.join(self.dir, "root" if self.kind == "chroot" else "env")

    @property
    def python(self):
        return "/usr/bin/python3" if self.kind == "chroot" else os.path.join(self.env, "bin", "python")

    def site_packages(self):
        if self.kind == "chroot":
            return os.path.join(self.env, "usr/lib/python3/dist-packages")
        return os.path.join(self.env, "lib", STDLIB_TAG, "site-packages")

    def save(self):
        with open(os.path.join(self.dir, "state.json"), "w") as f:
            json.dump({"kind": self.kind, "ns": self.ns, "ldpath": self.ldpath}, f)

    @classmethod
    def load(cls, d):
        with open(os.path.join(d, "state.json")) as f:
            return cls(d, json.load(f))

    def wrap(self, argv):
        """argv run in the case's mount namespace (its own /etc, ld.so.cache
        and /usr/local/lib) when it has one."""
        if not self.ns:
            return argv
        ns = os.path.join(self.dir, "ns")
        script = ("set -e; for m in etc:/etc ul:/usr/local/lib; do n=${m%%:*}; t=${m#*:}; "
                  "mkdir -p \"$0/$n-work\"; mount -t overlay overlay "
                  "-o lowerdir=$t,upperdir=\"$0/$n-up\",workdir=\"$0/$n-work\" $t; done; exec \"$@\"")
        return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, ns] + argv

    def chroot(self, argv):
        script = ("set -e; mount -t proc proc \"$0/proc\"; mount --rbind /dev \"$0/dev\"; "
                  "exec chroot \"$0\" \"$@\"")
        return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, self.env] + argv


def copy_tree(src, dst, hard=True):
    subprocess.run(["cp", "-al" if hard else "-a", src, dst], check=True)


def uv(*args, python):
    env = dict(os.environ, UV_CACHE_DIR=UV_CACHE, UV_LINK_MODE="hardlink")
    env.pop("VIRTUAL_ENV", None)
    return sh(["uv", "pip", *args, "--python", python], env=env, timeout=3600)


def build(case, d):
    """The broken env of the recipe in folder d (made anew)."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    kind, _, name = case["base"].partition(":")
    if kind == "chroot":
        if not os.path.exists(os.path.join(DEB12, "usr/bin/python3")):
            raise RuntimeError(f"no Debian 12 root at {DEB12} (python3 tests/field/fixoracle.py --chroot)")
        copy_tree(DEB12, os.path.join(d, "root"), hard=False)
    else:
        src = os.path.join(ENVS, name)
        if not os.path.exists(os.path.join(src, ".abiscope-field")) or \
                os.path.exists(os.path.join(src, ".abiscope-skeleton")):
            raise RuntimeError(f"field env {name} not built or a skeleton "
                               f"(python3 tests/field/build_envs.py {name})")
        if kind == "env":
            copy_tree(src, os.path.join(d, "env"))
        else:
            copy_tree(src, os.path.join(d, "base"))
            r = sh(["uv", "venv", "-q", "--python", PYTHON, os.path.join(d, "env")],
                   env=dict(os.environ, UV_CACHE_DIR=UV_CACHE))
            if r.returncode:
                raise RuntimeError(r.stderr)
    st = State(d, {"kind": kind})
    if kind == "stack":
        write_stack_pth(st)
    for op in case.get("ops", []):
        do_op(st, op)
    st.save()
    return st


def write_stack_pth(st):
    with open(os.path.join(st.site_packages(), "abiscope-field-base.pth"), "w") as f:
        f.write(os.path.join(st.dir, "base", "lib", STDLIB_TAG, "site-packages") + "\n")


def do_op(st, op):
    kind = op["op"]
    sp = st.site_packages()
    if kind == "pip-install":
        r = uv("install", *(["--no-deps"] if op.get("no_deps") else []), *op["requirements"], python=st.python)
        if r.returncode:
            raise RuntimeError(f"pip-install {op['requirements']}: {r.stderr[-2000:]}")
    elif kind == "pip-uninstall":
        r = uv("uninstall", *op["distributions"], python=st.python)
        if r.returncode:
            raise RuntimeError(f"pip-uninstall {op['distributions']}: {r.stderr[-2000:]}")
    elif kind == "copy-in":
        src_sp = os.path.join(ENVS, op["from"], "lib", STDLIB_TAG, "site-packages")
        for p in op["paths"]:
            dst = os.path.join(sp, p)
            if os.path.isdir(dst) and not os.path.islink(dst):
                shutil.rmtree(dst)
            elif os.path.lexists(dst):
                os.unlink(dst)
            copy_tree(os.path.join(src_sp, p), dst)
    elif kind == "remove":
        base = st.env if st.kind == "chroot" else sp
        for p in op["paths"]:
            t = os.path.join(base, p)
            if not os.path.lexists(t):
                raise RuntimeError(f"remove: {t} does not exist")
            shutil.rmtree(t) if os.path.isdir(t) and not os.path.islink(t) else os.unlink(t)
    elif kind == "dist-info-of":
        src = dist_info_of(op["requirement"])
        dst = os.path.join(sp, os.path.basename(src))
        if os.path.lexists(dst):
            raise RuntimeError(f"dist-info-of: {dst} exists already")
        copy_tree(src, dst)
    elif kind == "unregister-toolkit":
        unregister_toolkit(st)
    elif kind == "multipython-wheel":
        whl = multipython_wheel(op["name"], os.path.join(st.dir, "wheel"))
        r = uv("install", "--no-deps", whl, python=st.python)
        if r.returncode:
            raise RuntimeError(r.stderr)


def dist_info_of(req):
    """The .dist-info folder of the real wheel of req (NAME==VERSION, this
    Python's tag), taken from the wheel PyPI serves (pip download; the wheel
    is deleted once its metadata is kept under WORK/dist-info, a few MB),
    with the INSTALLER file pip adds: the stale folder of a release no field
    env has (issue 24 story 4: torch-2.5.1.dist-info)."""
    keep = os.path.join(WORK, "dist-info", req.replace("==", "-"))
    if os.path.isdir(keep):
        found = [f for f in os.listdir(keep) if f.endswith(".dist-info")]
        if len(found) == 1:
            return os.path.join(keep, found[0])
    tmp = keep + ".download"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        r = sh([PYTHON, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", tmp, req],
               timeout=3600)
        whl = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if r.returncode or len(whl) != 1:
            raise RuntimeError(f"dist-info-of {req}: pip download: exit {r.returncode} {tail(r.stderr, 500)}")
        keep_dist_info(os.path.join(tmp, whl[0]), keep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    found = [f for f in os.listdir(keep) if f.endswith(".dist-info")]
    if len(found) != 1:
        raise RuntimeError(f"dist-info-of {req}: {len(found)} .dist-info folders in the wheel")
    return os.path.join(keep, found[0])


def keep_dist_info(whl, keep):
    """The .dist-info members of the wheel whl, unpacked as folder keep
    (made whole or not at all)."""
    staged = keep + ".new"
    shutil.rmtree(staged, ignore_errors=True)
    with zipfile.ZipFile(whl) as z:
        members = [m for m in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/.+", m)]
        if not members:
            raise RuntimeError(f"{os.path.basename(whl)} has no .dist-info")
        z.extractall(staged, members)
    for di in {m.split("/")[0] for m in members}:
        with open(os.path.join(staged, di, "INSTALLER"), "w") as f:
            f.write("pip\n")
    shutil.rmtree(keep, ignore_errors=True)
    os.rename(staged, keep)


def unregister_toolkit(st):
    st.ns = True
    for n in ("etc", "ul"):
        os.makedirs(os.path.join(st.dir, "ns", n + "-up"), exist_ok=True)
    r = sh(st.wrap(["sh", "-c", "rm -f /etc/ld.so.conf.d/*cuda* /usr/local/lib/libcudart* && ldconfig"]))
    if r.returncode:
        raise RuntimeError(f"unregister-toolkit: {r.stderr}")


def multipython_wheel(name, outdir):
    """A py3-none wheel holding one extension module per CPython tag, as
    some vendors ship (the module for 3.11 is a real one, built against
    this Python's headers; the others are the same object under their tag)."""
    import sysconfig
    os.makedirs(outdir, exist_ok=True)
    inc = sysconfig.get_paths()["include"]
    src = os.path.join(outdir, "fast.c")
    with open(src, "w") as f:
        f.write("#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, \"_fast\", 0, -1, 0};\n"
                "PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&m); }\n")
    so = os.path.join(outdir, "_fast.so")
    subprocess.run(["cc", "-shared", "-fPIC", f"-I{inc}", "-o", so, src], check=True)
    tags = ["39", "310", "311", "312", "313", "313t", "314", "314t", "315", "315t"]
    whl = os.path.join(outdir, f"{name}-1.0-py3-none-linux_x86_64.whl")
    files = {f"{name}/__init__.py": b"from ._fast import __name__ as _n\n"}
    data = open(so, "rb").read()
    for t in tags:
        files[f"{name}/_fast.cpython-{t}-x86_64-linux-gnu.so"] = data
    di = f"{name}-1.0.dist-info"
    files[f"{di}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()
    files[f"{di}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: fixoracle\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n"
    import base64
    rec = []
    for p, b in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
        rec.append(f"{p},sha256={h},{len(b)}")
    rec.append(f"{di}/RECORD,,")
    files[f"{di}/RECORD"] = ("\n".join(rec) + "\n").encode()
    with zipfile.ZipFile(whl, "w") as z:
        for p, b in files.items():
            z.writestr(p, b)
    return whl


def clone(st, d):
    """A fresh copy of a built env to apply a fix in."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for part in ("base", "env"):
        if os.path.exists(os.path.join(st.dir, part)):
            copy_tree(os.path.join(st.dir, part), os.path.join(d, part))
    if st.kind == "chroot":
        copy_tree(st.env, os.path.join(d, "root"), hard=False)
    os.makedirs(os.path.join(d, "ns"), exist_ok=True)
    for n in ("etc", "ul") if st.ns else ():
        if os.path.exists(os.path.join(st.dir, "ns", n + "-up")):
            copy_tree(os.path.join(st.dir, "ns", n + "-up"), os.path.join(d, "ns", n + "-up"), hard=False)
    c = State(d, {"kind": st.kind, "ns": st.ns, "ldpath": [rewrite(p, st.dir, d) for p in st.ldpath]})
    if c.kind == "stack":
        write_stack_pth(c)
    c.save()
    return c


def local_wheel(req):
    """torch==V as the wheel build_envs.py installed the field envs from
    (WHEELS, the same bytes as PyPI's): uv has it unpacked already, where
    PyPI's copy would be unpacked again (gigabytes of the shared disk)."""
    m = re.fullmatch(r"torch==([0-9.]+)", req)
    if m and os.path.isdir(WHEELS):
        for f in sorted(os.listdir(WHEELS)):
            if f.startswith(f"torch-{m.group(1)}-") and "cp311" in f and "x86_64" in f and f.endswith(".whl"):
                return os.path.join(WHEELS, f)
    return req


def apply(st, actions):
    """Carry the actions out in st (a copy); (applied, log).  applied is False
    when an action cannot be carried out on this machine (not abiscope's
    fault: an index it cannot reach, a package of the host's own system)."""
    log = []
    changed = False
    for a in actions:
        kind = a.get("action")
        if kind == "pip-install":
            reqs = pypi_requirements(a.get("requirements") or [], a.get("index_url"))
            if reqs is None:
                log.append(f"not applied: {a.get('index_url')} is not reachable here and PyPI has no same build")
                return False, log, False
            free = shutil.disk_usage(st.dir).free
            if st.kind != "chroot" and free < MIN_FREE:
                # only what uv has already: hard links, no disk
                r = uv("install", "--offline", *(["--no-deps"] if a.get("no_deps") else []),
                       *(["--reinstall"] if a.get("force_reinstall") else []), *map(local_wheel, reqs),
                       python=st.python)
                if r.returncode:
                    log.append(f"not applied: {free / 1e9:.0f} GB free, under the {MIN_FREE / 1e9:.0f} GB the "
                               f"shared machine keeps, and the install needs a download: {tail(r.stderr, 200)}")
                    return False, log, False
                log.append(f"pip install {' '.join(reqs)} (from uv's cache): exit 0 {tail(r.stderr)}")
                changed |= not re.search(r"\bAudited \d+ packages?\b", r.stderr + r.stdout)
                continue
            if st.kind == "chroot":
                r = sh(st.chroot(["python3", "-m", "pip", "install", *(["--no-deps"] if a.get("no_deps") else []),
                                  *(["--force-reinstall"] if a.get("force_reinstall") else []), *reqs]))
            else:
                r = uv("install", *(["--no-deps"] if a.get("no_deps") else []),
                       *(["--reinstall"] if a.get("force_reinstall") else []), *map(local_wheel, reqs),
                       python=st.python)
            log.append(f"pip install {' '.join(reqs)}: exit {r.returncode} {tail(r.stderr)}")
            changed |= r.returncode == 0 and not re.search(r"\bAudited \d+ packages?\b", r.stderr + r.stdout)
        elif kind == "pip-uninstall":
            if st.kind == "chroot":
                r = sh(st.chroot(["python3", "-m", "pip", "uninstall", "-y", *a["distributions"]]))
            else:
                r = uv("uninstall", *a["distributions"], python=st.python)
            log.append(f"pip uninstall {' '.join(a['distributions'])}: exit {r.returncode} {tail(r.stderr)}")
            changed |= r.returncode == 0 and "No packages to uninstall" not in r.stderr + r.stdout
        elif kind == "remove-path":
            p = a["path"] if st.kind != "chroot" else os.path.join(st.env, a["path"].lstrip("/"))
            real = os.path.realpath(p)
            if not real.startswith(os.path.realpath(st.dir) + os.sep):
                log.append(f"refused: {p} is outside the copy")
                return False, log, False
            if os.path.isdir(real) and not os.path.islink(p):
                shutil.rmtree(real)
            elif os.path.lexists(p):
                os.unlink(p)
            else:
                log.append(f"remove {p}: no such file")
                continue
            log.append(f"removed {relpath(p, st.dir)}")
            changed = True
        elif kind == "add-library-path":
            p = a["path"]
            if a.get("how") == "LD_LIBRARY_PATH":
                st.ldpath.insert(0, p)
                log.append(f"LD_LIBRARY_PATH={p}")
                changed = True
            else:
                if not st.ns:
                    st.ns = True
                    for n in ("etc", "ul"):
                        os.makedirs(os.path.join(st.dir, "ns", n + "-up"), exist_ok=True)
                conf = "/etc/ld.so.conf.d/abiscope-fix.conf"
                r = sh(st.wrap(["sh", "-c", f"echo {shlex.quote(p)} >> {conf} && ldconfig"]))
                log.append(f"{p} >> {conf} && ldconfig (the namespace's own): exit {r.returncode} {tail(r.stderr)}")
                changed = True
        elif kind == "system-package":
            if st.kind != "chroot":
                log.append("not applied: a system package of this machine (never changed by the oracle)")
                return False, log, False
            r = sh(st.chroot(["apt-get", "install", "-y", "-q", "--reinstall", *a["packages"]]), timeout=1800)
            log.append(f"apt-get install --reinstall {' '.join(a['packages'])}: exit {r.returncode} "
                       f"{tail(r.stdout + r.stderr)}")
            changed = True
        else:
            log.append(f"not applied: unknown action {kind}")
            return False, log, False
    st.save()
    return True, log, changed


def tail(s, n=300):
    s = " ".join((s or "").split())
    return s[-n:]


def standin_dir():
    import matrix
    return matrix.driver_dir()


def run_oracle(st, out):
    e = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV",
                                                           "TORCH_USE_RTLD_GLOBAL")}
    e["CUDA_VISIBLE_DEVICES"] = ""
    e["ORACLE_IMPORT_ONLY"] = "1"  # whether modules import is the question; half the forks
    if st.kind == "chroot":
        shutil.copy(os.path.join(HERE, "oracle.py"), os.path.join(st.env, "tmp", "oracle.py"))
        if st.ldpath:
            e["LD_LIBRARY_PATH"] = ":".join(st.ldpath)
        r = sh(st.chroot(["/usr/bin/python3", "/tmp/oracle.py", "/tmp/oracle-out.json"]), env=e, timeout=3600)
        res = os.path.join(st.env, "tmp", "oracle-out.json")
    else:
        e["LD_LIBRARY_PATH"] = ":".join(st.ldpath + [standin_dir()])
        r = sh(st.wrap([st.python, os.path.join(HERE, "oracle.py"), out]), env=e, cwd="/", timeout=3600)
        res = out
    if r.returncode or not os.path.exists(res):
        raise RuntimeError(f"oracle: exit {r.returncode}: {tail(r.stderr, 1500)}")
    with open(res) as f:
        j = json.load(f)
    if res != out:
        shutil.copy(res, out)
    return j


def abiscope_args(st, text=False, driver=True):
    args = [ABISCOPE, "check"] + ([] if text else ["--json"]) + (["--assume-driver"] if driver else [])
    if text:
        args += ["--color", "never"]
    if st.ldpath:
        args += ["--ld-library-path", ":".join(st.ldpath)]
    if st.kind == "chroot":
        return args + ["--root", st.env]
    return st.wrap(args + [st.env])


def run_abiscope(st):
    e = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH")}
    r = sh(abiscope_args(st), env=e, timeout=600)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        raise RuntimeError(f"abiscope gave no JSON (exit {r.returncode}): {tail(r.stderr, 1500)}")
    lines = {}
    for key, driver in (("default", False), ("driver", True)):
        t = sh(abiscope_args(st, text=True, driver=driver), env=e, timeout=600).stdout
        lines[key] = len(t.splitlines())
        if key == "default":
            lines["text"] = t
    return j, lines


def oracle_failures(u):
    return sorted(k for k, v in u.items() if v is not True)


def harm_candidate(actions):
    """An action that takes something away: what --first-only still applies
    beyond the first fix, since it is where harm comes from."""
    return any(a["action"] in ("pip-uninstall", "remove-path") or a.get("force_reinstall") for a in actions)


def run_case(case, baseline=False, keep=False, save_as="latest", first_only=False):
    """Build, measure, apply every fix; the case's result (also kept)."""
    name = case["name"]
    slug = re.sub(r"[^\w.+-]", "_", name)
    rdir = os.path.join(RESULTS, slug)
    os.makedirs(rdir, exist_ok=True)
    fp = fingerprint({"case": case, "base": base_marker(case)})
    cache_path = os.path.join(rdir, "cache.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    if cache.get("fingerprint") != fp:
        cache = {"fingerprint": fp, "after": {}}
    wd = os.path.join(WORK, "work", slug)
    result_path = os.path.join(rdir, f"result-{save_as}.json")
    if os.path.exists(result_path):
        old = json.load(open(result_path))
        if old.get("fingerprint") == fp and old.get("binary") == binary_id() and old.get("first_only") == first_only:
            return dict(old, seconds=0)  # measured already with this abiscope
    lock = open(os.path.join(rdir, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise RuntimeError("another run is measuring it now") from None
    t0 = time.time()
    st = build(case, os.path.join(wd, "broken"))
    prefix = st.dir
    if "before" not in cache:
        cache["before"] = run_oracle(st, os.path.join(rdir, "oracle-before.json"))
        json.dump(cache, open(cache_path, "w"))
    before, where = units(cache["before"], prefix)
    report, lines = run_abiscope(st)
    with open(os.path.join(rdir, f"abiscope-{save_as}.json"), "w") as f:
        json.dump(report, f)
    with open(os.path.join(rdir, f"abiscope-{save_as}.txt"), "w") as f:
        f.write(lines.pop("text"))
    causes = {c["index"]: c for c in report.get("causes", [])}
    res = {"case": name, "shape": case["shape"], "base": case["base"], "matrix": case.get("matrix"),
           "abiscope": git_head(), "baseline": baseline, "lines": lines, "fingerprint": fp,
           "binary": binary_id(), "first_only": first_only,
           "failing_before": oracle_failures(before), "summary": report.get("summary"),
           "verdict_ok": report.get("ok"), "plan": report.get("plan"), "causes": [], "fixes": []}
    for c in report.get("causes", []):
        if c.get("severity") in ("error", "warning"):
            tg = sorted({where[os.path.realpath(p)] for p in cause_targets(report, c["index"])
                         if os.path.realpath(p) in where})
            res["causes"].append({"index": c["index"], "id": c["id"], "severity": c["severity"],
                                  "title": c.get("title"), "fix": c.get("fix"),
                                  "fix_actions": c.get("fix_actions"), "targets": tg})
    tmap = {c["index"]: c["targets"] for c in res["causes"]}
    for fx in fixes_of(report, baseline_text=baseline):
        acts = [rewrite(a, prefix, "{ENV}") for a in fx["actions"]]
        said = fx["partial_said"]
        if fx["label"] == "plan":
            listed = fx["causes"] or [i for i, c in causes.items() if c.get("severity") == "error"]
            # what the causes it lists take down; a module that a cause it
            # leaves ("remaining") also takes down stays down: partial, said
            targets = {t for i in listed for t in tmap.get(i, [])}
        else:
            targets = {t for i in fx["causes"] for t in tmap.get(i, [])}
        key = fingerprint(acts)
        row = {"label": fx["label"], "source": fx["source"], "command": fx.get("command"), "actions": acts,
               "severity": causes.get(fx["causes"][0], {}).get("severity") if fx["causes"] else None,
               "id": causes.get(fx["causes"][0], {}).get("id") if fx["label"] != "plan" and fx["causes"] else None}
        if fx["label"] == "plan":
            row.update({"checked": fx.get("checked"), "remaining": fx["remaining"]})
        first_error = fx["label"] != "plan" and row["severity"] == "error" and not any(
            r["label"] == "plan" or r["severity"] == "error" for r in res["fixes"])
        if not acts:
            row.update(judge(before, {}, targets, said, has_actions=False))
        elif first_only and key not in cache["after"] and not (
                fx["label"] == "plan" or first_error or harm_candidate(acts)):
            row.update({"verdict": "not-run", "targets": sorted(targets), "fixed": [], "still": [], "broken": []})
        else:
            if key not in cache["after"]:
                cst = clone(st, os.path.join(wd, "fix"))
                applied, log, changed = apply(cst, [rewrite(a, "{ENV}", cst.dir) for a in acts])
                entry = {"applied": applied, "log": log}
                if applied and not changed:
                    # nothing was installed, removed or set: the env is the broken one
                    entry.update(oracle=cache["before"], unchanged=True, abiscope_after=None)
                elif applied:
                    entry["oracle"] = run_oracle(cst, os.path.join(rdir, f"oracle-after-{key}.json"))
                    rep, _ = run_abiscope(cst)
                    entry["abiscope_after"] = {"ok": rep.get("ok"), "summary": rep.get("summary"),
                                               "causes": [(c["id"], c.get("title")) for c in rep.get("causes", [])
                                                          if c.get("severity") == "error"]}
                if applied or not any("GB free" in line for line in log):
                    cache["after"][key] = entry  # (a lack of disk is measured again next time)
                    json.dump(cache, open(cache_path, "w"))
                shutil.rmtree(cst.dir, ignore_errors=True)
            else:
                entry = cache["after"][key]
            after = units(entry["oracle"], os.path.join(wd, "broken" if entry.get("unchanged") else "fix"))[0] \
                if entry.get("applied") else {}
            row.update(judge(before, after, targets, said, applied=entry["applied"]))
            row["log"] = entry["log"]
            row["failing_after"] = oracle_failures(after) if entry.get("applied") else None
            row["abiscope_after"] = entry.get("abiscope_after")
        res["fixes"].append(row)
    res["seconds"] = round(time.time() - t0)
    with open(result_path, "w") as f:
        json.dump(res, f, indent=1)
    if not keep:
        shutil.rmtree(wd, ignore_errors=True)
    return res


_binary = {}


def binary_id():
    """The abiscope measured: its file's hash (a rebuild is another)."""
    if "id" not in _binary:
        with open(ABISCOPE, "rb") as f:
            _binary["id"] = hashlib.sha256(f.read()).hexdigest()[:16]
    return _binary["id"]


def git_head():
    r = sh(["git", "-C", TOP, "log", "-1", "--format=%h %s"])
    return r.stdout.strip()[:80]


# ---------------------------------------------------------------- the table

def first_fix(res):
    """The fix a user applies first: the plan when there is one, else the
    first error cause's fix."""
    for f in res["fixes"]:
        if f["label"] == "plan":
            return f
    return next((f for f in res["fixes"] if f.get("severity") == "error"), None)


def summarize(results):
    """Counts over the cases: per verdict for first fixes (the plan or cause
    1), for every error cause's own fix, and harmful anywhere."""
    s = {"cases": len(results), "broken": 0, "first": {v: 0 for v in VERDICTS},
         "causes": {v: 0 for v in VERDICTS}, "every": {v: 0 for v in VERDICTS}, "harmful_any": 0,
         "lines_3fail": [], "conflict_plans": [], "plans": {v: 0 for v in VERDICTS}}
    for r in results:
        if r["failing_before"]:
            s["broken"] += 1
        f = first_fix(r)
        if r["failing_before"]:
            s["first"][f["verdict"] if f else "no-action"] += 1
        for f in r["fixes"]:
            if f["label"] != "plan" and f.get("severity") == "error":
                s["causes"][f["verdict"]] += 1
            if f["label"] == "plan":
                s["plans"][f["verdict"]] += 1
            s["every"][f["verdict"]] += 1
            s["harmful_any"] += f["verdict"] == "harmful"
        if r["shape"] == "conflict":
            # a conflict's plan keeps every package that imported: nothing broken
            plan = next((f for f in r["fixes"] if f["label"] == "plan"), None)
            s["conflict_plans"].append((r["case"], None if plan is None or plan["verdict"] in
                                        ("no-action", "not-applied", "not-run") else not plan["broken"]))
        failing_pkgs = {u.split(":", 1)[1].split(".")[0].split("/")[0] for u in r["failing_before"]
                        if u.startswith(("mod:", "pkg:"))}
        if len(failing_pkgs) >= 3:
            s["lines_3fail"].append((r["case"], r["lines"].get("driver")))
    return s


def table(results, out=sys.stdout):
    def p(*a):
        print(*a, file=out)
    p("| case | shape | fails before | abiscope's first cause | first fix | verdict | lines |")
    p("|---|---|---:|---|---|---|---:|")
    for r in results:
        f = first_fix(r)
        cause = next((c for c in r["causes"] if c["severity"] == "error"), None)
        cmd = (f or {}).get("command") or ""
        if f and f["source"] != "text" and f["actions"]:
            cmd = " && ".join(a.get("command") or a["action"] for a in f["actions"])
        v = f["verdict"] if f else ("no-action" if r["failing_before"] else "-")
        p(f"| {r['case']} | {r['shape']} | {len(r['failing_before'])} | "
          f"{cause['id'] + ': ' + md(cause['title'], 70) if cause else '(none)'} | "
          f"{md(cmd, 90)} | {v} | {r['lines'].get('driver')} |")
    s = summarize(results)
    n = s["broken"]
    fr = s["first"]
    p("")
    p(f"{s['cases']} cases, {n} broken (something really fails to import before). First fixes "
      f"(the plan, else the first error cause's): " + ", ".join(f"{k} {fr[k]}" for k in VERDICTS if fr[k]) +
      (f"; right {100.0 * fr['right'] / n:.0f}%" if n else "") + ".")
    cr = s["causes"]
    tot = sum(cr.values())
    p(f"Every error cause's own fix ({tot}): " + ", ".join(f"{k} {cr[k]}" for k in VERDICTS if cr[k]) + ".")
    pl = s["plans"]
    if sum(pl.values()):
        p(f"Plans ({sum(pl.values())}): " + ", ".join(f"{k} {pl[k]}" for k in VERDICTS if pl[k]) + ".")
    ev = s["every"]
    p(f"Every fix printed (plans, error and warning causes; {sum(ev.values())}): "
      + ", ".join(f"{k} {ev[k]}" for k in VERDICTS if ev[k]) + ".")
    p(f"Harmful fixes, any cause or plan: {s['harmful_any']}.")
    if s["conflict_plans"]:
        kept = [c for c, k in s["conflict_plans"] if k]
        p(f"Conflict plans that keep every package that imported: {len(kept)} of {len(s['conflict_plans'])}"
          + "".join(f"; {c}: {'no plan applied' if k is None else 'breaks some'}"
                    for c, k in s["conflict_plans"] if not k) + ".")
    if s["lines_3fail"]:
        p("Default text (--assume-driver) of cases with 3+ failing packages: " +
          ", ".join(f"{c} {n} lines" for c, n in s["lines_3fail"]) + ".")


def first_command(f):
    if not f:
        return ""
    if f["source"] != "text" and f["actions"]:
        return " && ".join(a.get("command") or a["action"] for a in f["actions"])
    return " && ".join(a.get("command") or a["action"] for a in f["actions"]) or "(" + md(f.get("command"), 60) + ")"


def compare_table(before, after, out=sys.stdout):
    """One row per case: the first fix of the baseline run and of the latest,
    each with its verdict, and the default text's lines (--assume-driver)."""
    def p(*a):
        print(*a, file=out)
    b = {r["case"]: r for r in before}
    p("| case | shape | fails before | before: first fix | verdict | after: first fix | verdict | lines before / after |")
    p("|---|---|---:|---|---|---|---|---|")
    for r in after:
        o = b.get(r["case"])
        fa, fo = first_fix(r), first_fix(o) if o else None
        p(f"| {r['case']} | {r['shape']} | {len(r['failing_before'])} | {md(first_command(fo), 60) if o else '-'} | "
          f"{(fo['verdict'] if fo else 'no-action') if o else '-'} | {md(first_command(fa), 70)} | "
          f"{fa['verdict'] if fa else ('no-action' if r['failing_before'] else '-')} | "
          f"{o['lines'].get('driver') if o else '-'} / {r['lines'].get('driver')} |")


def md(s, n):
    s = " ".join((s or "").split()).replace("|", "\\|")
    return s if len(s) <= n else s[: n - 1] + "…"


def notes(results, out):
    """Per case: env, abiscope's causes and fixes, what applying each did."""
    def p(*a):
        print(*a, file=out)
    for r in results:
        p(f"### {r['case']} ({r['shape']}; base {r['base']})")
        p(f"- real import before: {len(r['failing_before'])} failing: {', '.join(r['failing_before'][:12])}"
          + (" ..." if len(r["failing_before"]) > 12 else ""))
        p(f"- abiscope ({r['abiscope']}): ok={r['verdict_ok']}, {len(r['causes'])} causes; text "
          f"{r['lines'].get('default')} lines (no driver), {r['lines'].get('driver')} (--assume-driver)")
        for c in r["causes"][:6]:
            p(f"  - cause {c['index'] + 1} {c['severity']}[{c['id']}] {md(c['title'], 160)}; fix: {md(c['fix'], 200)}"
              + (f"; fix_actions: {json.dumps(c['fix_actions'])[:300]}" if c.get("fix_actions") is not None else ""))
        for f in r["fixes"]:
            acts = "; ".join(a.get("command") or a["action"] for a in f["actions"]) or "(none)"
            p(f"  - **{f['label']}** ({f['source']}): `{md(acts, 200)}` -> **{f['verdict']}**"
              + (f"; log: {md(' | '.join(f.get('log') or []), 300)}" if f.get("log") else ""))
            if f["verdict"] not in ("no-action", "not-applied"):
                p(f"    fixed {f['fixed'][:8]}; still failing {f['still'][:8]}; broken {f['broken'][:8]}")
        p("")


GOOD = ("right", "not-failing", "not-run")


def recipe_line(name):
    c = next((c for c in load_cases() if c["name"] == name), None)
    if not c:
        return "?"
    ops = []
    for op in c.get("ops", []):
        args = op.get("requirements") or op.get("distributions") or op.get("paths") or \
            [op.get("requirement") or op.get("name") or ""]
        ops.append(f"{op['op']}{' --no-deps' if op.get('no_deps') else ''}"
                   + (f" from {op['from']}" if op.get("from") else "") + " " + " ".join(a for a in args if a))
    return f"{c['base']}" + ("; " + "; ".join(o.strip() for o in ops) if ops else "")


def failures(results, out):
    """Every fix that was not right (wrong, partial, harmful, no action, not
    applied), per case: the env, abiscope's cause and fix, what applying it
    did (what it fixed, what still fails, what it broke, what abiscope said
    after).  What the advice's author reads."""
    def p(*a):
        print(*a, file=out)
    for r in results:
        bad = [f for f in r["fixes"] if f["verdict"] not in GOOD]
        first = first_fix(r)
        if not bad and not (r["failing_before"] and not first):
            continue
        p(f"#### {r['case']} ({r['shape']})")
        p(f"- env: {recipe_line(r['case'])}; really failing before ({len(r['failing_before'])}): "
          f"{', '.join(r['failing_before'][:10])}" + (" ..." if len(r["failing_before"]) > 10 else ""))
        if r["failing_before"] and not first:
            p("- abiscope gives no error cause and no plan: **no-action** for the first fix")
        causes = {c["index"]: c for c in r["causes"]}
        for f in bad:
            idx = None if f["label"] == "plan" else int(f["label"].split()[1]) - 1
            c = causes.get(idx) if idx is not None else None
            acts = "; ".join(a.get("command") or a["action"] for a in f["actions"]) or "(no action)"
            what = (f"plan (fixes {[i + 1 for i in (r.get('plan') or {}).get('fixes') or []]}, remaining "
                    f"{[i + 1 for i in f.get('remaining') or []]}, {f.get('checked')})" if c is None else
                    f"{f['label']} {c['severity']}[{c['id']}] {md(c['title'], 150)}")
            p(f"- **{f['verdict']}**, {what}" + ("" if c is None else f"; fix text: {md(c.get('fix'), 220)}"))
            p(f"  - applied: `{md(acts, 260)}`")
            if f["verdict"] in ("no-action", "not-applied"):
                if f.get("log"):
                    p(f"  - {md(' | '.join(f['log']), 300)}")
                continue
            p(f"  - after: fixed {f['fixed'][:6]}; still failing {f['still'][:6]}; broke {f['broken'][:8]}"
              + (f" (+{len(f['broken']) - 8})" if len(f["broken"]) > 8 else ""))
            aa = f.get("abiscope_after")
            if aa:
                p(f"  - abiscope on the fixed copy: ok={aa.get('ok')}; error causes "
                  f"{[md(f'{i}: {t}', 110) for i, t in (aa.get('causes') or [])][:4]}")
        p("")


def rejudge(res, slug):
    """The verdicts again from the kept real imports (judge() may have been
    refined since the run)."""
    try:
        cache = json.load(open(os.path.join(RESULTS, slug, "cache.json")))
    except (OSError, ValueError):
        return res
    wd = os.path.join(WORK, "work", slug)
    before = units(cache["before"], os.path.join(wd, "broken"))[0]
    for row in res["fixes"]:
        entry = cache["after"].get(fingerprint(row["actions"])) if row["actions"] else None
        if not entry or not entry.get("applied") or row["verdict"] in ("no-action", "not-applied", "not-run"):
            continue
        after = units(entry["oracle"], os.path.join(wd, "broken" if entry.get("unchanged") else "fix"))[0]
        said = bool(row.get("remaining")) if row["label"] == "plan" else said_partial(row.get("command"))
        row.update(judge(before, after, set(row["targets"]), said))
    return res


def load_results(names=None, save_as="latest"):
    out = []
    for c in load_cases():
        slug = re.sub(r"[^\w.+-]", "_", c["name"])
        p = os.path.join(RESULTS, slug, f"result-{save_as}.json")
        if (not names or c["name"] in names) and os.path.exists(p):
            out.append(rejudge(json.load(open(p)), slug))
    return out


def make_chroot():
    if os.path.exists(os.path.join(DEB12, "usr/bin/python3")):
        print(f"reuse {DEB12}")
        return
    subprocess.run(["debootstrap", "--variant=minbase", "--include=python3,python3-yaml,python3-numpy,python3-pip",
                    "bookworm", DEB12, "http://deb.debian.org/debian"], check=True)
    shutil.copy("/etc/resolv.conf", os.path.join(DEB12, "etc/resolv.conf"))


def one_case(c, opts):
    try:
        r = run_case(c, **opts)
        f = first_fix(r)
        print(f"# {c['name']}: {len(r['failing_before'])} failing before; first fix "
              f"{f['verdict'] if f else '-'} ({r['seconds']} s)", file=sys.stderr, flush=True)
    except Exception as e:  # one case's failure must not stop the run
        print(f"# {c['name']}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)


KNOWN_FLAGS = {"--baseline", "--keep", "--save-as", "--markdown", "--notes", "--failures", "--table", "--compare",
               "--chroot", "--first-only", "--reverse"}


def main(argv):
    flags = [a for a in argv if a.startswith("--")]
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    unknown = [f for f in flags if f not in KNOWN_FLAGS]
    if unknown:
        sys.exit(f"fixoracle.py: unknown option {unknown[0]} (--help lists them)")
    md_out = argv[argv.index("--markdown") + 1] if "--markdown" in argv else None
    notes_out = argv[argv.index("--notes") + 1] if "--notes" in argv else None
    fail_out = argv[argv.index("--failures") + 1] if "--failures" in argv else None
    save_as = argv[argv.index("--save-as") + 1] if "--save-as" in argv else "latest"
    jarg = argv[argv.index("-j") + 1] if "-j" in argv else None
    names = [a for a in argv if not a.startswith(("--", "-j")) and a not in (md_out, notes_out, fail_out, save_as, jarg)]
    if "--chroot" in flags:
        make_chroot()
        return 0
    cases = load_cases()
    known = {c["name"] for c in cases}
    for n in names:
        if n not in known:
            sys.exit(f"fixoracle.py: no case '{n}' in fixcases.toml")
    jobs = int(argv[argv.index("-j") + 1]) if "-j" in argv else 1
    if "--compare" in flags:
        compare_table(load_results(set(names) if names else None, "baseline"),
                      load_results(set(names) if names else None, save_as))
        return 0
    if "--table" not in flags:
        todo = [c for c in cases if not names or c["name"] in names]
        if "--reverse" in flags:
            todo.reverse()
        opts = {"baseline": "--baseline" in flags, "keep": "--keep" in flags, "save_as": save_as,
                "first_only": "--first-only" in flags}
        if jobs > 1:
            import concurrent.futures
            with concurrent.futures.ProcessPoolExecutor(jobs) as ex:
                list(ex.map(one_case, todo, [opts] * len(todo)))
        else:
            for c in todo:
                one_case(c, opts)
    results = load_results(set(names) if names else None, save_as)
    table(results)
    if md_out:
        with open(md_out, "w") as f:
            table(results, f)
    if fail_out:
        with open(fail_out, "w") as f:
            failures(results, f)
    if notes_out:
        with open(notes_out, "w") as f:
            notes(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
