"""make test leaves the machine as it found it.

    python3 tests/machine_state.py snapshot FILE    (tests/run.sh, first)
    python3 tests/machine_state.py check FILE       (tests/run.sh, last)

tests/run.sh tags every process of the run with ABISCOPE_TEST_RUN (in its
environment, which daemons keep).  The check, after every suite:

  - no process of the run is left (a daemon a suite started and did not
    stop: sshd, munged, slurmctld, slurmd); it is named, then stopped;
  - no TCP socket listens that did not before, owned by a process of the
    run (others on a shared machine are listed, not counted);
  - no service of a package mk/deps.txt lists is enabled that was not (the
    links in /etc/systemd/system, what `systemctl list-unit-files
    --state=enabled` reads, and the rc?.d start links); what else was
    enabled meanwhile (on a shared machine, by someone else) is listed;
  - the packages mk/deps.sh installed for the tests (DEPS_RECORD, listed by
    the Makefile's dependency check) have no service enabled and no daemon
    running outside the suites.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

TAG = "ABISCOPE_TEST_RUN"


def enabled():
    links = []
    for dirpath, dirs, files in os.walk("/etc/systemd/system"):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            if os.path.islink(p):
                links.append(p)
    links += glob.glob("/etc/rc[2-5S].d/S*")
    return sorted(links)


def listeners():
    """{'addr:port': [pid, ...]} of the listening TCP sockets (ss -ltnp)."""
    out = {}
    try:
        text = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in text.splitlines():
        f = line.split()
        if len(f) < 4:
            continue
        pids = [int(x.split("=")[1].rstrip(",)")) for x in line.split() for x in x.split(",") if x.startswith("pid=")]
        out.setdefault(f[3], []).extend(pids)
    return out


def environ(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:120]
    except OSError:
        return "?"


def ancestors(pid):
    seen = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return seen


def tagged(tag):
    """The processes of this run, but the checker and those that wait for it."""
    mine = ancestors(os.getpid())
    want = ("%s=%s" % (TAG, tag)).encode()
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in mine and want in environ(int(d)):
            pids.append(int(d))
    return pids


TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def deps_packages():
    """Every package mk/deps.txt lists."""
    r = subprocess.run(["sh", os.path.join(TOP, "mk", "deps.sh"), "list", "build", "test", "fuzz", "wheel", "aarch64", "ci"],
                       capture_output=True, text=True)
    return r.stdout.split()


def unit_name(link):
    """The service a link enables: the unit's name, or the init script's."""
    n = os.path.basename(link)
    if "/rc" in link and n.startswith("S"):
        return n[3:]
    return n


def services_of(pkgs):
    """The unit files and daemons the installed packages of pkgs ship."""
    units, daemons = [], []
    for p in sorted(set(pkgs)):
        try:
            files = subprocess.run(["dpkg-query", "-L", p], capture_output=True, text=True).stdout.split()
        except OSError:
            return [], []
        units += [os.path.basename(f) for f in files if f.endswith((".service", ".socket", ".timer"))
                  and "/systemd/system/" in f]
        units += [os.path.basename(f) for f in files if f.startswith("/etc/init.d/")]
        daemons += [f for f in files if f.startswith(("/usr/sbin/", "/sbin/")) and os.access(f, os.X_OK)]
    return sorted(set(units)), sorted(set(daemons))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("snapshot", "check"):
        print(__doc__)
        return 2
    state = sys.argv[2]
    if sys.argv[1] == "snapshot":
        with open(state, "w") as f:
            json.dump({"enabled": enabled(), "listen": listeners(), "time": time.time()}, f)
        return 0
    tag = os.environ.get(TAG)
    before = json.load(open(state))
    failed = 0

    def report(ok, what, detail=()):
        nonlocal failed
        print(("ok - " if ok else "not ok - ") + what)
        failed += not ok
        for d in list(detail)[:20]:
            print("#   " + d)

    left = tagged(tag) if tag else []
    report(bool(tag), "tests/run.sh tags its processes (%s)" % TAG)
    report(not left, "no process of the run is left running",
           ["%d %s" % (p, cmdline(p)) for p in left])
    for p in left:
        try:
            os.kill(p, signal.SIGTERM)
        except OSError:
            pass
    now = listeners()
    if now is None or before["listen"] is None:
        print("ok - no new listening socket # SKIP no ss (iproute2)")
    else:
        new = {a: p for a, p in now.items() if a not in before["listen"]}
        ours = {a: p for a, p in new.items() if any(tag and ("%s=%s" % (TAG, tag)).encode() in environ(x) for x in p)}
        report(not ours, "no socket of the run listens afterwards (ss -ltn)",
               ["%s %s" % (a, ", ".join(cmdline(x) for x in p)) for a, p in ours.items()])
        for a, p in new.items():
            if a not in ours:
                print("# listening since the run began, not by it: %s %s" % (a, ", ".join(cmdline(x) for x in p)))
    watched, _ = services_of(deps_packages())
    new = sorted(set(enabled()) - set(before["enabled"]))
    ours = [l for l in new if unit_name(l) in watched or
            os.path.basename(os.path.realpath(l)) in watched]
    report(not ours, "no service of a package mk/deps.txt lists was enabled during the run "
           "(/etc/systemd/system, rc?.d; %d such services)" % len(watched), ours)
    for l in new:
        if l not in ours:
            print("# enabled since the run began, not a service of mk/deps.txt's packages: %s" % l)
    record = os.environ.get("DEPS_RECORD", "")
    try:
        installed = open(record).read().split() if record else []
    except OSError:
        installed = []
    units, daemons = services_of(installed) if installed else ([], [])
    if not units and not daemons:
        print("ok - the services of the packages make test installed # SKIP mk/deps.sh installed none here")
    else:
        on = [l for l in enabled() if unit_name(l) in units or
              os.path.basename(os.path.realpath(l)) in units]
        report(not on, "the %d services of the packages mk/deps.sh installed are not enabled" % len(units), on)
        running = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                exe = os.readlink("/proc/%s/exe" % d)
            except OSError:
                continue
            if exe in daemons:
                running.append("%s %s" % (d, cmdline(int(d))))
        report(not running, "none of their daemons runs (%s)" % ", ".join(os.path.basename(d) for d in daemons[:8]),
               running)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
