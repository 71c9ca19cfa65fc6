#!/usr/bin/env python3
"""build_envs.py: make the field matrix's environments (tests/field/manifest.toml).

    python3 tests/field/build_envs.py [--delete] [--lock-only] [NAME...]

Each env is a venv under $ABISCOPE_FIELD/envs (default
~/.cache/abiscope/field/envs), outside the repository.  Its packages come from
tests/field/locks/<name>.txt, made once by `uv pip compile` from the
manifest's `requires` and committed, so a later build installs the same
binaries.  torch wheels are taken from /work/cache/wheels when there (the
folder the torch ABI index fills; the download goes there, under its lock,
when missing).  uv's cache ($ABISCOPE_FIELD/uv) is hard-linked into the
envs; `--delete` removes the named envs (the cache stays; `du` tells).

Needs the network only to resolve and install; never run by CI.
"""
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
FIELD = os.environ.get("ABISCOPE_FIELD", os.path.expanduser("~/.cache/abiscope/field"))
ENVS = os.path.join(FIELD, "envs")
UV_CACHE = os.path.join(FIELD, "uv")
WHEELS = os.environ.get("ABISCOPE_TORCH_WHEELS", "/work/cache/wheels")
PYTHON = os.environ.get("ABISCOPE_PYTHON", "/root/.pyenv/versions/3.11.7/bin/python3")
PLATFORM = ["--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]


def manifest():
    with open(os.path.join(HERE, "manifest.toml"), "rb") as f:
        envs = tomllib.load(f)["env"]
    return {e["name"]: e for e in envs}


def uv(*args, **kw):
    env = dict(os.environ, UV_CACHE_DIR=UV_CACHE, UV_LINK_MODE="hardlink")
    return subprocess.run(["uv", *args], env=env, check=True, **kw)


def lock_path(name):
    return os.path.join(HERE, "locks", name + ".txt")


def pins(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line and not line.startswith("-"):
                out.append(line)
    return out


def pin_name(pin):
    return re.split(r"[=<>!~\[ ;]", pin, maxsplit=1)[0].lower().replace("_", "-")


def make_lock(e):
    """Resolve the env's requires once into its lock file."""
    path = lock_path(e["name"])
    if os.path.exists(path) or not e.get("requires"):
        return
    tmp = path + ".in"
    with open(tmp, "w") as f:
        f.write("\n".join(e["requires"]) + "\n")
    try:
        uv("pip", "compile", "-q", *PLATFORM, "--no-header", "--no-annotate", tmp, "-o", path)
    finally:
        os.unlink(tmp)
    excl = e.get("exclude", [])
    if excl:
        kept = [p for p in pins(path) if not any(fnmatch.fnmatch(pin_name(p), x) for x in excl)]
        with open(path, "w") as f:
            f.write("\n".join(kept) + "\n")


def site_packages(venv):
    return os.path.join(venv, "lib", "python3.11", "site-packages")


def torch_wheel(version):
    """The torch wheel in the shared folder, downloading it there if missing."""
    def find():
        for f in sorted(os.listdir(WHEELS)) if os.path.isdir(WHEELS) else []:
            if f.startswith(f"torch-{version}-") and f.endswith(".whl") and "cp311" in f:
                return os.path.join(WHEELS, f)
        return None
    os.makedirs(WHEELS, exist_ok=True)
    lock = os.path.join(WHEELS, ".lock")
    # under the folder's lock: a wheel being downloaded is not yet complete
    subprocess.run(["flock", lock, "sh", "-c",
                    f"ls {WHEELS}/torch-{version}-*cp311*.whl >/dev/null 2>&1 || "
                    f"pip download -q --no-deps -d {WHEELS} torch=={version}"], check=True)
    return find()


def copy_env(src, dst):
    """A hard-link copy of the venv src at dst (cp -al: no file data is
    copied).  The files shared with src are never opened for writing: the
    few that name src's path (bin/ scripts, activate) are replaced by new
    files, and our own markers are unlinked before they are rewritten."""
    subprocess.run(["cp", "-al", src, dst], check=True)
    for f in (".abiscope-field", ".abiscope-requirements.txt"):
        if os.path.lexists(os.path.join(dst, f)):
            os.unlink(os.path.join(dst, f))
    bindir = os.path.join(dst, "bin")
    for f in os.listdir(bindir):
        p = os.path.join(bindir, f)
        if os.path.islink(p) or not os.path.isfile(p):
            continue
        data = open(p, "rb").read()
        if src.encode() not in data:
            continue
        tmp = p + ".abiscope-new"
        with open(tmp, "wb") as out:
            out.write(data.replace(src.encode(), dst.encode()))
        shutil.copymode(p, tmp)
        os.replace(tmp, p)


def fingerprint(e):
    lk = lock_path(e["name"])
    text = json.dumps(e, sort_keys=True) + (open(lk).read() if os.path.exists(lk) else "")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build(e, all_envs):
    name = e["name"]
    d = os.path.join(ENVS, name)
    marker = os.path.join(d, ".abiscope-field")
    make_lock(e)
    fp = fingerprint(e)
    if os.path.exists(marker) and open(marker).read().strip() == fp:
        print(f"reuse {d}")
        return d
    if e.get("base"):
        build(all_envs[e["base"]], all_envs)
    if e.get("copy_of"):
        build(all_envs[e["copy_of"]], all_envs)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(ENVS, exist_ok=True)
    sysp = ["--system-site-packages"] if e.get("system_site") else []
    if e.get("copy_of"):
        copy_env(os.path.join(ENVS, e["copy_of"]), d)
    elif e.get("creator") == "venv":
        subprocess.run([PYTHON, "-m", "venv", "--without-pip", *sysp, d], check=True)
    else:
        uv("venv", "-q", "--python", PYTHON, *sysp, d)
    py = os.path.join(d, "bin", "python")
    if os.path.exists(lock_path(name)):
        req = pins(lock_path(name))
        local = []
        for p in list(req):
            m = re.fullmatch(r"torch==([0-9.]+)", p)
            if m:
                w = torch_wheel(m.group(1))
                if w:
                    req.remove(p)
                    local.append(w)
        lst = os.path.join(d, ".abiscope-requirements.txt")
        if os.path.lexists(lst):
            os.unlink(lst)
        with open(lst, "w") as f:
            f.write("\n".join(req) + "\n")
        uv("pip", "install", "-q", "--python", py, "--no-deps", *local, "-r", lst)
    if e.get("nodeps"):
        uv("pip", "install", "-q", "--python", py, "--no-deps", *e["nodeps"])
    if e.get("uninstall"):
        uv("pip", "uninstall", "-q", "--python", py, *e["uninstall"])
    if e.get("base"):
        with open(os.path.join(site_packages(d), "abiscope-field-base.pth"), "w") as f:
            f.write(site_packages(os.path.join(ENVS, e["base"])) + "\n")
    with open(marker, "w") as f:
        f.write(fp + "\n")
    print(f"ready {d}")
    return d


def main(argv):
    delete = "--delete" in argv
    lock_only = "--lock-only" in argv
    names = [a for a in argv if not a.startswith("--")]
    envs = manifest()
    for n in names:
        if n not in envs:
            sys.exit(f"build_envs.py: no env '{n}' in manifest.toml")
    for n in names or list(envs):
        if delete:
            shutil.rmtree(os.path.join(ENVS, n), ignore_errors=True)
            print(f"deleted {n}")
        elif lock_only:
            make_lock(envs[n])
        else:
            build(envs[n], envs)


if __name__ == "__main__":
    main(sys.argv[1:])
