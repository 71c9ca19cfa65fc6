#!/usr/bin/env python3
"""The progress line (src/cli/progress.h), on a real pseudo-terminal.

`abiscope check --verify-hashes` over a venv-shaped folder whose one
distribution holds a few large sparse files, made large enough that the scan
runs past the line's one-second delay (measured first, by CPU time, without
a terminal, on a second run: the page cache warm as it is for the runs that
follow).  Under a pty (python's pty module, as a user's terminal) the
line appears on standard error, says what it reads and how far ("hashing
big/part3.bin (5 of 9)"), and is erased before the report; it does not
appear when standard error is not a terminal, with -q, or with --json when
standard output is not a terminal.
"""
import os
import pty
import resource
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ABISCOPE = os.environ.get("ABISCOPE", os.path.join(TOP, "abiscope"))
ERASE = b"\x1b[2K\x1b[G"
results = []


def ok(cond, name):
    results.append(cond)
    print(("ok - " if cond else "not ok - ") + name)


def make_env(root, part_bytes, parts=4):
    sp = os.path.join(root, "lib", "python3.11", "site-packages")
    os.makedirs(os.path.join(sp, "big"), exist_ok=True)
    di = os.path.join(sp, "big-1.0.dist-info")
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(root, "pyvenv.cfg"), "w") as f:
        f.write("home = /usr/bin\nversion = 3.11.2\n")
    with open(os.path.join(di, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: big\nVersion: 1.0\n")
    lines = []
    for k in range(parts):
        p = os.path.join(sp, "big", f"part{k}.bin")
        with open(p, "wb") as f:
            f.truncate(part_bytes)	# sparse: no disk used
        lines.append(f"big/part{k}.bin,sha256=AAAA,{part_bytes}")
        with open(os.path.join(sp, "big", f"small{k}.py"), "w") as f:
            f.write("x = 1\n")
        lines.append(f"big/small{k}.py,,")
    lines += ["big-1.0.dist-info/METADATA,,", "big-1.0.dist-info/RECORD,,"]
    with open(os.path.join(di, "RECORD"), "w") as f:
        f.write("\n".join(lines) + "\n")


def cpu_of(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def under_pty(argv, stdout_file=None):
    """Runs argv with standard error (and standard output, unless a file
    is given) on a pseudo-terminal; returns what the terminal received."""
    m, s = pty.openpty()
    out = open(stdout_file, "wb") if stdout_file else s
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=s)
    os.close(s)
    data = b""
    while True:
        try:
            b = os.read(m, 65536)
        except OSError:
            break
        if not b:
            break
        data += b
    p.wait()
    os.close(m)
    return data


def main():
    if not os.access(ABISCOPE, os.X_OK):
        print(f"ok - progress line # SKIP {ABISCOPE} is not built")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        env = os.path.join(tmp, "venv")
        size = 1 << 28
        # large enough that hashing takes well over the one-second delay,
        # measured warm: the first read of a sparse file's holes fills the
        # page cache (kernel time a second run does not pay), and with the
        # CPU's SHA instructions hashing is fast enough that a cold first
        # run could pass the bar and the run under the terminal not reach
        # the delay
        check = [ABISCOPE, "check", "-q", "--verify-hashes", env]
        while True:
            make_env(env, size)
            cpu_of(check)
            # 3x the delay: a busy machine's noise in this one measurement
            # must not size a run that ends before the line is drawn
            if cpu_of(check) > 3.0 or size >= 1 << 36:
                break
            size = size * 3 // 2
        argv = [ABISCOPE, "check", "--verify-hashes", env]
        tty = under_pty(argv)
        ok(b"abiscope: hashing " in tty and b" of 10)" in tty, "on a terminal: 'abiscope: hashing FILE (N of M)'")
        last = tty.rfind(b"abiscope: hashing ")
        ok(last >= 0 and ERASE in tty[last:], "the line is erased when the scan ends")
        ok(last >= 0 and b"big" in tty[tty.find(ERASE, last):], "the report follows the erased line")
        ok(b"\n" not in tty[tty.find(b"abiscope: hashing"):last] if last >= 0 else False,
           "one updating line: redrawn in place, no newlines between draws")
        r = subprocess.run(argv, capture_output=True)
        ok(b"abiscope: hashing" not in r.stderr and ERASE not in r.stderr,
           "standard error not a terminal: no progress line")
        quiet = under_pty([ABISCOPE, "check", "-q", "--verify-hashes", env])
        ok(b"abiscope: hashing" not in quiet and ERASE not in quiet, "-q: no progress line")
        js = under_pty([ABISCOPE, "check", "--json", "--verify-hashes", env], os.path.join(tmp, "out.json"))
        ok(b"abiscope: hashing" not in js and ERASE not in js, "--json to a file: no progress line")
        ok(open(os.path.join(tmp, "out.json"), "rb").read().lstrip().startswith(b"{"),
           "--json to a file: the report is JSON only")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
