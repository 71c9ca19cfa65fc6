#!/usr/bin/env python3
"""Packages the abiscope binary as a wheel (PEP 427, standard library only).

    python3 mk/wheel.py --binary BUILD/abiscope --out dist [--license NAME=FILE]...

The binary is abiscope/_bin/abiscope; the console entry point `abiscope`
(abiscope.__main__:main) execs it, so pip, pipx and uvx put `abiscope` on
PATH, and `python -m abiscope` works too.  The tag is
py3-none-manylinux_2_17_x86_64: no Python ABI, glibc 2.17 or later.
"""
import argparse
import base64
import hashlib
import os
import re
import sys
import zipfile

TAG = "py3-none-manylinux_2_17_x86_64"
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MAIN = '''"""Runs the abiscope binary that ships in this package."""
import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "abiscope")
    os.execv(exe, ["abiscope"] + sys.argv[1:])


if __name__ == "__main__":
    main()
'''


def version():
    with open(os.path.join(TOP, "src", "cli", "cli.h")) as f:
        m = re.search(r'#define ABISCOPE_VERSION "([^"]+)"', f.read())
    return m.group(1)


def summary():
    with open(os.path.join(TOP, "README.md")) as f:
        return f.read()


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--license", action="append", default=[], help="NAME=FILE of a library linked in")
    a = ap.parse_args()
    ver = version()
    dist_info = "abiscope-%s.dist-info" % ver
    with open(a.binary, "rb") as f:
        binary = f.read()
    metadata = "\n".join([
        "Metadata-Version: 2.1",
        "Name: abiscope",
        "Version: " + ver,
        "Summary: why native code in a Python environment will not load or run, without loading it",
        "Requires-Python: >=3.6",
        "Description-Content-Type: text/markdown",
        "", summary()])
    files = [
        ("abiscope/__init__.py", ('__version__ = "%s"\n' % ver).encode(), 0o644),
        ("abiscope/__main__.py", MAIN.encode(), 0o644),
        ("abiscope/_bin/abiscope", binary, 0o755),
    ]
    for spec in a.license:
        name, path = spec.split("=", 1)
        with open(path, "rb") as f:
            files.append(("%s/licenses/%s.copyright" % (dist_info, name), f.read(), 0o644))
    files += [
        (dist_info + "/METADATA", metadata.encode(), 0o644),
        (dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: abiscope mk/wheel.py\n"
                                "Root-Is-Purelib: false\nTag: %s\n" % TAG).encode(), 0o644),
        (dist_info + "/entry_points.txt", b"[console_scripts]\nabiscope = abiscope.__main__:main\n", 0o644),
    ]
    record = [record_line(n, d) for n, d, _ in files] + [dist_info + "/RECORD,,"]
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "abiscope-%s-%s.whl" % (ver, TAG))
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, out)
    print("  WHEEL %s (%d bytes; the binary %d bytes)" % (os.path.relpath(out), os.path.getsize(out), len(binary)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
