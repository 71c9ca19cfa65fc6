#!/usr/bin/env python3
"""Field test: the torch ABI index against the field matrix's real envs.

The envs are tests/field/manifest.toml's (and any other the matrix made),
built by build_envs.py under $ABISCOPE_FIELD/envs (default
~/.cache/abiscope/field/envs); the real
loader's answers are the oracle's, kept by matrix.py in
$ABISCOPE_FIELD/results/<env>/oracle-{standin,nodriver}.json.  Nothing here
runs the envs' python: most envs are skeletons (tests/field/skeleton.py:
code bytes zeroed, dynamic symbol tables intact), which binutils' nm and
abiscope read exactly as the real env.  Nothing under $ABISCOPE_FIELD is
written.

(a) For each torch release installed in some env, the exports of its
    torch/lib libraries read by `nm -D --defined-only` (binutils, not
    abiscope), hashed the way the index hashes them, equal the index entry
    for that release (tools/torch_index.py's decoder), and the C reader
    (torch-compat --json) counts as many.
(b) For each extension module `abiscope torch-compat --json ENV` gives
    releases for, the installed torch is among them exactly when the real
    loader loaded the module (the oracle's dlopen).  A module the loader
    refused for something other than a torch symbol the installed release
    lacks (a library not found, a symbol torch never exported, a symbol the
    installed torch does export but that is not in the module's scope, a
    crash) says nothing about the release: it is
    listed as excluded, with the reason.

Prints one "# case" line per module: the env, the package, the torch its
metadata pins (Requires-Dist), what torch-compat says, what the loader did.
Envs not built print SKIP; with no env at all, one SKIP line.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import fieldlib as F  # noqa: E402
import torch_index  # noqa: E402

FIELD = os.environ.get("ABISCOPE_FIELD", os.path.expanduser("~/.cache/abiscope/field"))
ENVS = os.path.join(FIELD, "envs")
RESULTS = os.path.join(FIELD, "results")
MANIFEST = os.path.join(HERE, "manifest.toml")
TORCH_LIB = re.compile(r"^(libc10|libtorch|libshm|libcaffe2).*\.so")  # wheel_exports.c's members
UNDEFINED = re.compile(r"undefined symbol: (\S+?)(?:, version (\S+))?$")


def manifest():
    """[(name, base or None)] in manifest order (tomllib is 3.11+; the file is simple)."""
    out, cur = [], None
    for line in open(MANIFEST):
        line = line.split("#", 1)[0].strip()
        if line == "[[env]]":
            cur = {"name": None, "base": None}
            out.append(cur)
        m = re.match(r'^(name|base)\s*=\s*"([^"]+)"', line)
        if m and cur is not None:
            cur[m.group(1)] = m.group(2)
    return [(e["name"], e["base"]) for e in out if e["name"]]


def built(name):
    d = os.path.join(ENVS, name)
    return d if os.path.isdir(os.path.join(d, "lib")) else None


def pth_dirs(sp):
    """The existing folders the .pth files of site-packages sp add to sys.path."""
    out = []
    for f in sorted(os.listdir(sp)):
        if f.endswith(".pth"):
            for line in open(os.path.join(sp, f), errors="replace"):
                line = line.strip()
                if line and not line.startswith(("#", "import")) and os.path.isdir(line):
                    out.append(line)
    return out


def torch_dir(name, bases):
    """torch/ of env name: its own, or its base's (manifest base, or a .pth
    that reaches another site-packages: the way the matrix stacks envs)."""
    while name:
        d = built(name)
        if d:
            sp = F.site_packages(d)
            for cand in [sp] + pth_dirs(sp):
                t = os.path.join(cand, "torch")
                if os.path.isfile(os.path.join(t, "version.py")):
                    return t
        name = bases.get(name)
    return None


def torch_version(tdir):
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"+]+)", open(os.path.join(tdir, "version.py")).read(), re.M)
    return m.group(1) if m else None


def nm_exports(lib):
    r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
    names = set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        kind, name = f[1], f[2]
        if kind.islower() and kind not in "uvwi":
            continue          # local
        names.add(name.replace("@@", "@"))
    return names


def torch_exports(tdir):
    libdir = os.path.join(tdir, "lib")
    names = set()
    for f in sorted(os.listdir(libdir)):
        if TORCH_LIB.match(f) and not os.path.islink(os.path.join(libdir, f)):
            names |= nm_exports(os.path.join(libdir, f))
    return names


def torch_compat(venv):
    r = subprocess.run([F.ABISCOPE, "torch-compat", "--json", venv], capture_output=True, text=True, timeout=900)
    return json.loads(r.stdout)


def oracle_of(name):
    for mode in ("standin", "nodriver"):
        p = os.path.join(RESULTS, name, "oracle-%s.json" % mode)
        if os.path.exists(p):
            with open(p) as f:
                return mode, json.load(f)
    return None, None


def pinned_torch(obj_path, sp_dirs):
    """The torch requirement in the METADATA of the distribution whose
    RECORD lists obj_path ('torch==2.9.1'), or '-'."""
    for sp in sp_dirs:
        rel = os.path.relpath(obj_path, sp)
        if rel.startswith(".."):
            continue
        for d in os.listdir(sp):
            if not d.endswith(".dist-info"):
                continue
            try:
                record = open(os.path.join(sp, d, "RECORD")).read()
            except OSError:
                continue
            if rel + "," not in record:
                continue
            pins = []
            for line in open(os.path.join(sp, d, "METADATA"), errors="replace"):
                m = re.match(r"Requires-Dist:\s*torch\b\s*([^;]*)", line)
                if m:
                    pins.append("torch" + re.sub(r"[\s()]", "", m.group(1)))
            return ",".join(pins) or "(none)"
    return "-"


def refused_for(err, torch_hashes, installed, bits):
    """'torch' when the loader's refusal names a symbol some torch release
    exports but the installed one does not, else a short reason the case is
    excluded: a symbol the installed torch does export was refused because
    torch was not in the module's scope (cuda-core's _tensor_bridge needs
    aoti_torch_* from a torch it does not link, and its package does not
    import torch), which says nothing about the release."""
    m = UNDEFINED.search(err.strip())
    if not m:
        return err.strip().splitlines()[0][:90]
    hs = {torch_index.name_hash(m.group(1) + ("@" + m.group(2) if m.group(2) else ""), bits),
          torch_index.name_hash(m.group(1), bits)}
    if hs & installed:
        return "not in scope: the installed torch exports " + m.group(1)[:60]
    if hs & torch_hashes:
        return "torch"
    return "undefined symbol no torch release exports: " + m.group(1)[:60]


def machine_of(tdir):
    """e_machine of torch/lib/libc10.so: the index holds one release per machine."""
    with open(os.path.join(tdir, "lib", "libc10.so"), "rb") as f:
        return int.from_bytes(f.read(20)[18:20], "little")


def check_exports(t, rel, tdir, envs_using, index, j):
    bits, rels = index
    mach = machine_of(tdir)
    entry = next((r.hashes for r in rels if r.version == rel and r.machine == mach), None)
    name = "torch %s (%s): index entry" % (rel, ", ".join(envs_using))
    if not t.ok(entry is not None, "%s: torch %s is in the index" % (name, rel)):
        return
    names = torch_exports(tdir)
    hashes = {torch_index.name_hash(n, bits) for n in names}
    t.ok(hashes == entry, "%s: the exports nm -D reads from the installed torch/lib equal it (%d)" % (name, len(hashes)),
         "%d exported here, %d in the index, %d only here, %d only in the index"
         % (len(hashes), len(entry), len(hashes - entry), len(entry - hashes)))
    count = [x["symbols"] for x in j["index"]["releases"]
             if x["version"] == rel and x["machine"] == torch_index.MACHINE_NAMES.get(mach)]
    t.ok(count == [len(names)], "%s: the C reader counts the same %d symbols" % (name, len(names)), count)


def check_env(t, env, venv, tdir, rel, index, j, cases):
    mode, oracle = oracle_of(env)
    if oracle is None:
        t.skip("%s: torch-compat against the real loader" % env, "no oracle answers in %s" % RESULTS)
        return
    bits, rels = index
    torch_hashes = set().union(*(r.hashes for r in rels))
    installed = next((r.hashes for r in rels if r.version == rel and r.machine == machine_of(tdir)), set())
    modules = {os.path.realpath(p): v for p, v in oracle["modules"].items()}
    sps = [F.site_packages(venv), os.path.dirname(tdir)]
    for p in j["packages"]:
        for o in p["objects"]:
            real = modules.get(os.path.realpath(o["path"]))
            short = o["path"].split("site-packages/")[-1]
            says = "%s in %s" % ("includes" if rel in o["releases"] else "excludes",
                                 torch_index_span(o["releases"]))
            pin = pinned_torch(o["path"], sps)
            if real is None:
                cases.append((env, p["name"] + " " + p["version"], short, pin, says, "not measured", "excluded"))
                continue
            loads = real["dlopen"] is None
            why = "torch" if loads else refused_for(real["dlopen"], torch_hashes, installed, bits)
            did = "loads" if loads else ("refused: " + (real["dlopen"].split("undefined symbol: ")[-1][:70]
                                                        if why == "torch" else why))
            if why != "torch":
                cases.append((env, p["name"] + " " + p["version"], short, pin, says, did, "excluded"))
                continue
            agree = (rel in o["releases"]) == loads
            cases.append((env, p["name"] + " " + p["version"], short, pin, says, did, "agree" if agree else "DISAGREE"))
            t.ok(agree, "%s: %s %s: torch-compat %s the installed torch %s exactly when the real loader loads it (%s, %s)"
                 % (env, p["name"], short, "includes" if rel in o["releases"] else "excludes", rel, did, mode),
                 o["releases"])


def torch_index_span(rs):
    if not rs:
        return "no release"
    return rs[0] if len(rs) == 1 else "%s..%s (%d)" % (rs[0], rs[-1], len(rs))


def main():
    t = F.Tap()
    off = F.field_off()
    envs = manifest()
    # the manifest's envs in its order, then any other env the matrix made
    known = {n for n, _ in envs}
    extra = [(n, None) for n in sorted(os.listdir(ENVS)) if n not in known] if os.path.isdir(ENVS) else []
    present = [(n, b) for n, b in envs + extra if built(n)]
    if off or not present:
        t.skip("torch ABI index against the field envs", off or "no field env built under %s (make field)" % ENVS)
        return 0
    with open(torch_index.INDEX, "rb") as f:
        index = torch_index.decode(f.read())
    bases = dict(envs)
    by_release, cases = {}, []
    for env, _ in present:
        venv = built(env)
        tdir = torch_dir(env, bases)
        if not tdir:
            t.skip("%s: torch-compat against the real loader" % env, "no torch installed there")
            continue
        rel = torch_version(tdir)
        j = torch_compat(venv)
        by_release.setdefault((rel, os.path.realpath(tdir)), (tdir, [], j))[1].append(env)
        check_env(t, env, venv, tdir, rel, index, j, cases)
    seen = set()
    for (rel, real), (tdir, users, j) in sorted(by_release.items(), key=lambda kv: torch_index.version_key(kv[0][0])):
        if rel in seen:
            continue
        seen.add(rel)
        check_exports(t, rel, tdir, users, index, j)
    print("# case\tenv\tpackage\tmodule\tpinned\ttorch-compat\treal loader\tverdict")
    for c in cases:
        print("# case\t" + "\t".join(c))
    n = {k: sum(1 for c in cases if c[-1] == k) for k in ("agree", "DISAGREE", "excluded")}
    print("# %d torch releases checked; %d modules: %d agree, %d disagree, %d excluded"
          % (len(seen), len(cases), n["agree"], n["DISAGREE"], n["excluded"]))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
