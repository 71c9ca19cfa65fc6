#!/usr/bin/env python3
"""Field test: check --host on real environment pairs, against a real copy.

For each pair (package P of environment X, host environment Y) of the field
matrix (real PyPI wheels, built by tests/field/build_envs.py under
$ABISCOPE_CACHE/field/envs): `abiscope snapshot Y`, then `abiscope check
--json --host SNAPSHOT X/site-packages/P`.  The truth: a copy of Y (its
pyvenv.cfg and interpreter, every site-packages entry linked to Y's, P
copied in for real), whose own python runs `import torch` and then dlopen()s
each shared object of P with RTLD_NOW (`check --libraries`: torchvision and
xformers load their _C.so with torch.ops.load_library, not as a module).  Verdict
and dlerror text must be identical.  Packages that need libcuda.so.1 are not
used: there is no driver here, and every one would fail on it alike.

    ABISCOPE_FIELD_PAIRS="torchvision:t2.9:t2.14 ..."  overrides the pairs
    ABISCOPE_FIELD_ENVS=DIR  takes the envs from DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldlib as F  # noqa: E402

# ABISCOPE_FIELD_ENVS: another folder of envs by the same names (runnable
# copies of skeleton envs made by tests/field/revive.py, say)
ENVS = os.environ.get("ABISCOPE_FIELD_ENVS", os.path.join(F.CACHE, "field", "envs"))
PAIRS = os.environ.get("ABISCOPE_FIELD_PAIRS",
                       "torchvision:t2.8:t2.14 torchvision:t2.14:t2.8 torchvision:t2.15:t2.14 "
                       "torchvision:t2.14:t2.15 torchvision:t2.8:t2.15 torchvision:t2.15:t2.8 "
                       "torchaudio:t2.8:t2.14 torchaudio:t2.8:t2.15 "
                       "xformers:t2.15:t2.14 xformers:t2.15:t2.8").split()


def light_copy(host, into):
    """A venv that is host, but whose site-packages is a folder of its own."""
    os.makedirs(os.path.join(into, "bin"))
    shutil.copy(os.path.join(host, "pyvenv.cfg"), into)
    os.symlink(os.path.realpath(os.path.join(host, "bin", "python")), os.path.join(into, "bin", "python"))
    sp = F.site_packages(host)
    rel = os.path.relpath(sp, host)
    mine = os.path.join(into, rel)
    os.makedirs(mine)
    for e in os.listdir(sp):
        os.symlink(os.path.join(sp, e), os.path.join(mine, e))
    return mine


def modules_of(folder):
    out = []
    for root, _d, files in os.walk(folder):
        for f in files:
            if f.endswith(".so") and ".dist-info" not in root:
                out.append(os.path.relpath(os.path.join(root, f), folder))
    return sorted(out)


def main():
    t = F.Tap()
    off = F.field_off()
    if off:
        t.skip("check --host on field pairs", off)
        return 0
    rows = []
    snaps = {}
    with tempfile.TemporaryDirectory(prefix="abiscope-pairs-") as tmp:
        for spec in PAIRS:
            pkg, x, y = spec.split(":")
            X, Y = os.path.join(ENVS, x), os.path.join(ENVS, y)
            name = f"{pkg} of {x} on host {y}"
            src = os.path.join(F.site_packages(X), pkg) if os.path.isdir(X) else None
            skeleton = any(os.path.exists(os.path.join(e, ".abiscope-skeleton")) for e in (X, Y))
            if not src or not os.path.isdir(src) or not os.path.isdir(Y) or skeleton:
                t.skip(name, f"needs {x} with {pkg} and {y} in {ENVS} (tests/field/build_envs.py)")
                continue
            if y not in snaps:
                snaps[y] = os.path.join(tmp, y + ".json.gz")
                t0 = time.time()
                subprocess.run([F.ABISCOPE, "snapshot", "--no-driver", "--label", y, "-o", snaps[y], Y],
                               capture_output=True, check=True)
                print(f"# snapshot {y}: {time.time() - t0:.1f} s, {os.path.getsize(snaps[y]) / 1e6:.1f} MB")
            t0 = time.time()
            p = subprocess.run([F.ABISCOPE, "check", "--json", "--libraries", "--no-driver", "--host", snaps[y], src],
                               capture_output=True, text=True)
            took = time.time() - t0
            j = json.loads(p.stdout)
            got = {}
            guessed = set()
            for e in j["environments"]:
                for d in e["distributions"]:
                    for m in d["modules"]:
                        got[m["path"]] = (m["status"] == "ok", m["error"])
                        if m.get("guess"):
                            guessed.add(m["path"])
            copy = os.path.join(tmp, "copy-" + y)
            shutil.rmtree(copy, ignore_errors=True)
            mine = light_copy(Y, copy)
            if os.path.lexists(os.path.join(mine, pkg)):
                os.unlink(os.path.join(mine, pkg))
            shutil.copytree(src, os.path.join(mine, pkg), symlinks=True)
            ysp = F.site_packages(Y)
            for rel in modules_of(os.path.join(mine, pkg)):
                target = os.path.join(mine, pkg, rel)
                there = os.path.join(ysp, pkg, rel)
                loads, err = F.real_import_then_dlopen(copy, target)
                truth = (loads, err.replace(mine, ysp) if err else None)
                pred = got.get(there)
                if pred is None:
                    # --libraries judges every ELF object placed: one not judged is a miss
                    t.ok(False, f"{name}: abiscope judged {rel}", f"real: {truth}")
                    continue
                agree = pred == truth
                # a verdict that rests on a library the snapshot describes by
                # name only says so ("guess"): not a false "loads", not agreement
                guess = there in guessed and not agree
                rows.append((name, rel, truth[0], "yes" if agree else "guess (labelled)" if guess else "NO"))
                t.ok(agree or guess, f"{name}: {rel} {'loads' if loads else 'fails'}"
                     f"{' (abiscope: a labelled guess)' if guess else ''} ({took:.1f} s)",
                     f"abiscope: {pred}\nreal:     {truth}")
    if rows:
        print("# pair | module | real | agree")
        for r in rows:
            print(f"# {r[0]} | {r[1]} | {'loads' if r[2] else 'fails'} | {r[3]}")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
