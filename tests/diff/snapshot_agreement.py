#!/usr/bin/env python3
"""A snapshot must give the verdicts the machine gives.

For each folder: `abiscope snapshot` of it, then `abiscope check --libraries`
on the folder and `abiscope check --libraries --host SNAPSHOT`: every object
must get the same status and the same dlerror text.  The fast suite runs it
over the differential fixtures (every loader rule has one: wrong classes,
FIFOs, ld scripts, hwcaps, RPATH/RUNPATH, versions...) and the CUDA toolkit's
libraries; SLOW=1 adds /usr/lib/x86_64-linux-gnu (920 objects).

    snapshot_agreement.py DIR...
"""
import json
import os
import subprocess
import sys
import tempfile

ABISCOPE = os.environ.get("ABISCOPE", "./abiscope")
failed = 0


def verdicts(args):
    p = subprocess.run([ABISCOPE, "check", "--json", "--libraries", "--no-driver"] + args,
                       capture_output=True, text=True)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return None, p.stdout[-500:] + p.stderr[-500:]
    out = {}
    for e in j["environments"]:
        for d in e["distributions"]:
            for m in d["modules"]:
                out[m["path"]] = (m["status"], m["error"])
    return out, None


def one(folder, tmp):
    global failed
    snap = os.path.join(tmp, "s.json.gz")
    p = subprocess.run([ABISCOPE, "snapshot", "--no-driver", "-o", snap, folder], capture_output=True, text=True)
    if p.returncode != 0:
        failed += 1
        print("not ok - snapshot of %s\n#   %s" % (folder, (p.stdout + p.stderr)[-400:].replace("\n", "\n#   ")))
        return
    here, err = verdicts([folder])
    there, err2 = verdicts(["--host", snap])
    if here is None or there is None:
        failed += 1
        print("not ok - %s: check output\n#   %s" % (folder, err or err2))
        return
    diff = sorted(k for k in set(here) | set(there) if here.get(k) != there.get(k))
    nfail = sum(1 for v in here.values() if v[0] != "ok")
    name = "%s: %d objects (%d failing) get the same verdict and error on the snapshot" % (folder, len(here), nfail)
    if diff or not here:
        failed += 1
        print("not ok - " + name)
        for k in diff[:10]:
            print("#   %s\n#     here:  %s\n#     there: %s" % (k, here.get(k), there.get(k)))
    else:
        print("ok - " + name)


def main():
    dirs = [d for d in sys.argv[1:] if os.path.isdir(d)]
    with tempfile.TemporaryDirectory() as tmp:
        for d in dirs:
            one(d, tmp)
    for d in sys.argv[1:]:
        if not os.path.isdir(d):
            print("ok - %s # SKIP not on this machine" % d)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
