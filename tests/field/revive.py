#!/usr/bin/env python3
"""revive.py: a runnable copy of a skeleton field env, from its real wheels.

    python3 tests/field/revive.py SKELETON_ENV COPY [--mapped ORACLE.json] [--again] WHEEL...

skeleton.py leaves measured envs with their code as holes: abiscope reads
them as the real env, but their python cannot run them.  For an oracle that
must really run in such an env (check --host's real copy, wheel's real
install) this makes COPY: a hard-link copy of the env (`cp -al`: no disk),
in which every file that skeleton.py emptied and that one of the WHEELs
(the exact releases the env was built from, tests/field/locks/) holds at
the same path under site-packages, with the same size, is replaced by the
wheel's bytes.  A replaced file is unlinked first and written anew, so the
skeleton env (the other name of the inode) is never written.

--mapped ORACLE.json (results/<env>/oracle-nodriver.json) restores only
the files the recorded `import torch` mapped (and those its Python-level
imports mapped): about 4 GB instead of 6 for a CUDA torch.  Anything else
stays a hole; is_hollow() tells an oracle whether a file it saw mapped is
one (then its answer is not the real one).
"""
import json
import os
import shutil
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldlib as F  # noqa: E402


def is_hollow(path):
    """True when path is a skeleton file: it has holes (skeleton.py punches
    them where code and read-only data were; a file pip or uv wrote has
    none), however small a part of the file they are."""
    st = os.stat(path)
    return st.st_size >= 1 << 20 and st.st_blocks * 512 + 4096 < st.st_size


def site_packages(env):
    try:
        return F.site_packages(env)
    except FileNotFoundError:
        raise SystemExit(f"revive: no lib/pythonX.Y/site-packages in {env}") from None


def revive(skeleton, copy, wheels, mapped=None, again=False):
    if os.path.exists(copy) and not again:
        raise SystemExit(f"revive: {copy} exists (--again restores more into it)")
    if os.path.realpath(copy) == os.path.realpath(skeleton):
        raise SystemExit("revive: the copy is the skeleton itself")
    if not os.path.exists(copy):
        subprocess.run(["cp", "-al", skeleton, copy], check=True)
    if os.path.lexists(os.path.join(copy, ".abiscope-skeleton")):
        os.unlink(os.path.join(copy, ".abiscope-skeleton"))
    sp = site_packages(copy)
    want = None
    if mapped:
        j = json.load(open(mapped))
        src = site_packages(skeleton)
        paths = list(j["torch"]["loads"]) + list(j["torch"].get("python_level") or [])
        want = {os.path.relpath(p, src) for p in paths if p.startswith(src + "/")}
    restored, nbytes = 0, 0
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            for info in z.infolist():
                rel = info.filename
                if want is not None and rel not in want:
                    continue
                dst = os.path.join(sp, rel)
                if info.is_dir() or not os.path.isfile(dst) or os.path.islink(dst):
                    continue
                if os.path.getsize(dst) != info.file_size or not is_hollow(dst):
                    continue
                mode = os.stat(dst).st_mode & 0o7777
                os.unlink(dst)  # the skeleton keeps its inode; this name gets a new file
                with z.open(info) as f, open(dst, "xb") as out:
                    shutil.copyfileobj(f, out, 1 << 20)
                os.chmod(dst, mode)
                restored += 1
                nbytes += info.file_size
    left = [p for p in sorted(want or ()) if os.path.isfile(os.path.join(sp, p))
            and is_hollow(os.path.join(sp, p))]
    print(f"revive: {copy}: {restored} files restored ({nbytes / 1e9:.2f} GB)"
          + (f"; still hollow, of those asked for: {' '.join(left)}" if left else ""))
    return 1 if left else 0


def main(argv):
    mapped = None
    again = "--again" in argv
    if again:
        argv.remove("--again")
    if "--mapped" in argv:
        i = argv.index("--mapped")
        mapped = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return revive(argv[0], argv[1], argv[2:], mapped, again)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
