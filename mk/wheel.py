#!/usr/bin/env python3
"""Packages the abiscope binary as a wheel (PEP 427, standard library only).

    python3 mk/wheel.py --arch ARCH --binary BUILD/abiscope --share DIR --out dist
                        [--demangler WHAT] [--license NAME=FILE]...

The binary is abiscope/_bin/abiscope; the console entry point `abiscope`
(abiscope.__main__:main) execs it, so pip, pipx and uvx put `abiscope` on
PATH, and `python -m abiscope` works too.  The man pages and the bash and zsh
completion (DIR as mk/docs.sh writes it) are the wheel's data: pip installs
them under the environment's prefix, share/man/man1 (man finds them from
PREFIX/bin on PATH), share/bash-completion/completions (bash-completion
looks there from PATH too) and share/zsh/site-functions.  The tag is
py3-none-manylinux_2_17_ARCH: no Python ABI, glibc 2.17 or later.  The
license is the repository's LICENSE and, for what the binary links in
statically, THIRD-PARTY-NOTICES and each library's copyright file.  Project
URLs come from the checkout's origin remote when it is public (or
WHEEL_PROJECT_URL); there are none without one.
"""
import argparse
import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile

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


# the licenses of what the wheel holds: abiscope, and what its binary links
# in statically (zlib, jansson, libzip, libstdc++'s demangler)
LICENSE = "Apache-2.0 AND Zlib AND MIT AND BSD-3-Clause AND GPL-3.0-or-later WITH GCC-exception-3.1"

CLASSIFIERS = [
    "Development Status :: 4 - Beta",
    "Environment :: Console",
    "Environment :: GPU :: NVIDIA CUDA",
    "Intended Audience :: Developers",
    "Intended Audience :: Science/Research",
    "Intended Audience :: System Administrators",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: C",
    "Topic :: Scientific/Engineering :: Artificial Intelligence",
    "Topic :: Software Development :: Build Tools",
    "Topic :: Software Development :: Debuggers",
    "Topic :: System :: Software Distribution",
]

# what mk/docs.sh writes -> where the wheel's data puts it under the prefix
SHARE = [("man1", "share/man/man1"), ("bash-completion", "share/bash-completion/completions"),
         ("zsh", "share/zsh/site-functions")]


def project_urls():
    """The public home of the checkout: WHEEL_PROJECT_URL, else the project
    of a GitHub Actions or GitLab CI job, else an https (or git@host:)
    origin remote; none for a local clone."""
    url = os.environ.get("WHEEL_PROJECT_URL", "")
    if not url and os.environ.get("GITHUB_SERVER_URL") and os.environ.get("GITHUB_REPOSITORY"):
        url = os.environ["GITHUB_SERVER_URL"] + "/" + os.environ["GITHUB_REPOSITORY"]
    if not url:
        url = os.environ.get("CI_PROJECT_URL", "")  # GitLab CI
    if not url:
        try:
            url = subprocess.run(["git", "-C", TOP, "remote", "get-url", "origin"], capture_output=True,
                                 text=True, check=False).stdout.strip()
        except OSError:
            url = ""
        m = re.match(r"^git@([^:]+):(.+)$", url)
        if m:
            url = "https://%s/%s" % (m.group(1), m.group(2))
        if not url.startswith("https://"):
            return []
    url = re.sub(r"\.git$", "", url.rstrip("/"))
    urls = [("Homepage", url), ("Source", url)]
    if re.match(r"^https://(github\.com|gitlab\.com)/", url):
        urls.append(("Issues", url + "/issues"))
    return urls


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True, choices=["x86_64", "aarch64"])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--share", required=True, help="man pages and completion, as mk/docs.sh writes them")
    ap.add_argument("--out", required=True)
    ap.add_argument("--demangler", default="", help="the package its cp-demangle.o came from, and version")
    ap.add_argument("--license", action="append", default=[], help="NAME=FILE of a library linked in")
    a = ap.parse_args()
    ver = version()
    tag = "py3-none-manylinux_2_17_" + a.arch
    dist_info = "abiscope-%s.dist-info" % ver
    data = "abiscope-%s.data/data" % ver
    with open(a.binary, "rb") as f:
        binary = f.read()
    files = [
        ("abiscope/__init__.py", ('__version__ = "%s"\n' % ver).encode(), 0o644),
        ("abiscope/__main__.py", MAIN.encode(), 0o644),
        ("abiscope/_bin/abiscope", binary, 0o755),
    ]
    for sub, dest in SHARE:
        names = sorted(os.listdir(os.path.join(a.share, sub)))
        if not names:
            sys.exit("mk/wheel.py: nothing in %s" % os.path.join(a.share, sub))
        for n in names:
            with open(os.path.join(a.share, sub, n), "rb") as f:
                files.append(("%s/%s/%s" % (data, dest, n), f.read(), 0o644))
    licenses = []
    with open(os.path.join(TOP, "LICENSE"), "rb") as f:
        licenses.append(("LICENSE", f.read()))
    with open(os.path.join(TOP, "THIRD-PARTY-NOTICES"), "rb") as f:
        notices = f.read()
    if a.demangler:
        notices += ("\nThis wheel's cp-demangle.o: from %s.\n" % a.demangler).encode()
    licenses.append(("THIRD-PARTY-NOTICES", notices))
    for spec in a.license:
        name, path = spec.split("=", 1)
        with open(path, "rb") as f:
            licenses.append(("third-party/%s.copyright" % name, f.read()))
    files += [("%s/licenses/%s" % (dist_info, n), d, 0o644) for n, d in licenses]
    metadata = "\n".join(
        ["Metadata-Version: 2.4",
         "Name: abiscope",
         "Version: " + ver,
         "Summary: why native code in a Python environment will not load or run, without loading it",
         "License-Expression: " + LICENSE]
        + ["License-File: " + n for n, _ in licenses]
        + ["Project-URL: %s, %s" % u for u in project_urls()]
        + ["Classifier: " + c for c in CLASSIFIERS]
        + ["Requires-Python: >=3.6",
           "Description-Content-Type: text/markdown",
           "", summary()])
    files += [
        (dist_info + "/METADATA", metadata.encode(), 0o644),
        (dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: abiscope mk/wheel.py\n"
                                "Root-Is-Purelib: false\nTag: %s\n" % tag).encode(), 0o644),
        (dist_info + "/entry_points.txt", b"[console_scripts]\nabiscope = abiscope.__main__:main\n", 0o644),
    ]
    record = [record_line(n, d) for n, d, _ in files] + [dist_info + "/RECORD,,"]
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "abiscope-%s-%s.whl" % (ver, tag))
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
