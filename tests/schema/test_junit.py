"""check --junit and wheel --junit, read back with junitparser (Debian's
python3-junitparser, or PyPI's): one test case per extension module, a
failure for each module --json says would not import, with the root cause
the JSON names; XML special characters in paths survive."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import samples  # noqa: E402

junitparser = samples.debian_module("junitparser",
                                    "ok - JUnit reports # SKIP no junitparser module (apt: python3-junitparser)")

TOP = samples.TOP
ABISCOPE = os.environ.get("ABISCOPE", os.path.join(TOP, "abiscope"))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
report = samples.Tap()


def run(args):
    p = subprocess.run([ABISCOPE] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def cases(path):
    xml = junitparser.JUnitXml.fromfile(path)
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    return suites, [c for s in suites for c in s]


def failure_of(case):
    return next((r for r in case.result if isinstance(r, junitparser.Failure)), None)


def check_env(work, venv):
    xmlp = os.path.join(work, "check.xml")
    st, out, err = run(["check", "--json", "--junit", xmlp, venv])
    doc = json.loads(out)
    report(st == 1, "check --junit: the exit status is check's (1: something fails)", err)
    suites, cs = cases(xmlp)
    mods = [m for e in doc["environments"] for d in e["distributions"] for m in d["modules"]
            if m["extension"] and "/lib-dynload/" not in m["path"]]
    report(len(suites) == 1 and suites[0].name == venv, "check --junit: one test suite per environment, named by it",
           [s.name for s in suites])
    report(sorted(c.name for c in cs) == sorted(m["module"] for m in mods),
           "check --junit: one test case per extension module (%d)" % len(mods),
           "%s\n%s" % (sorted(c.name for c in cs), sorted(m["module"] for m in mods)))
    report(suites[0].tests == len(cs) and suites[0].failures == sum(1 for c in cs if failure_of(c)),
           "check --junit: the suite's counts are its cases'", (suites[0].tests, suites[0].failures))
    byname = {m["module"]: m for m in mods}
    findings = doc["findings"]
    for c in cs:
        m = byname.get(c.name)
        if m is None:
            continue
        f = failure_of(c)
        fails = m["status"] != "ok" or m["gpu_fails"]
        report((f is not None) == fails, "check --junit: %s %s" % (c.name, "fails" if fails else "passes"))
        if f is None or not fails:
            continue
        own = [findings[i] for i in m["findings"]]
        roots = [x for x in own if x["severity"] == "error" and x["caused_by"] is None] or \
                [x for x in own if x["severity"] == "error"]
        report(bool(roots) and f.type == roots[0]["id"] and f.message == roots[0]["title"],
               "check --junit: %s: the failure is its root cause (%s)" % (c.name, roots[0]["id"] if roots else "?"),
               "got %s: %s" % (f.type, f.message))
        report(m["error"] is None or m["error"] in (f.text or ""),
               "check --junit: %s: the failure's text has the loader's error" % c.name)
    return doc


def odd_path(work, venv):
    """A folder named with XML's special characters, holding a failing module."""
    odd = os.path.join(work, "odd & <dir> \"'")
    shutil.rmtree(odd, ignore_errors=True)
    os.makedirs(odd)
    src = os.path.join(venv, "lib", "python3.11", "site-packages", "fast_ctc", "_C.cpython-311-x86_64-linux-gnu.so")
    shutil.copy(src, os.path.join(odd, "_C.cpython-311-x86_64-linux-gnu.so"))
    xmlp = os.path.join(work, "odd.xml")
    run(["check", "--junit", xmlp, odd])
    try:
        suites, cs = cases(xmlp)
        files = [c._elem.attrib.get("file", "") for c in cs]
        ok = len(cs) == 1 and files[0].startswith(odd + "/") and suites[0].name == odd
        report(ok, "check --junit: a path with & < > \" ' comes back as it was", [(c.name, f) for c, f in zip(cs, files)])
    except Exception as e:  # a parse error is the failure this looks for
        report(False, "check --junit: a path with & < > \" ' comes back as it was", e)


def wheel(work, venv):
    sp = os.path.join(venv, "lib", "python3.11", "site-packages")
    import zipfile
    whl = os.path.join(work, "cufile_user-1.0-py3-none-manylinux2014_x86_64.whl")
    with zipfile.ZipFile(whl, "w") as z:
        z.write(os.path.join(sp, "gds_io", "_C.abi3.so"), "cufile_user/_C.abi3.so")
        z.writestr("cufile_user-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: cufile-user\nVersion: 1.0\n")
        z.writestr("cufile_user-1.0.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux2014_x86_64\n")
        z.writestr("cufile_user-1.0.dist-info/RECORD", "")
    xmlp = os.path.join(work, "wheel.xml")
    st, out, err = run(["wheel", "--json", "--env", venv, "--junit", xmlp, whl])
    doc = json.loads(out)
    suites, cs = cases(xmlp)
    names = [c.name for c in cs]
    report(names[:2] == ["pip's tag check", "glibc floor within its manylinux tag"] and
           names[2:] == [m["module"] for m in doc["modules"]] + [m["module"] for m in doc["breaks"]],
           "wheel --junit: the tag check, the glibc floor, then one case per module", names)
    own = [c for c in cs if c.classname == "cufile-user"]
    report(len(own) == 1 and failure_of(own[0]) is not None and not doc["modules"][0]["imports"],
           "wheel --junit: its module that would not import is a failure")
    report(st == 1 and suites[0].failures == sum(1 for c in cs if failure_of(c)),
           "wheel --junit: exit 1, and the suite counts its failures", (st, suites[0].failures))


def main():
    work = os.path.join(BUILD, "junit")
    os.makedirs(work, exist_ok=True)
    demo = os.path.join(BUILD, "schema", "demo")
    if not os.path.isdir(os.path.join(demo, "venv")):
        subprocess.run(["sh", os.path.join(TOP, "demo", "build.sh"), demo], check=True, capture_output=True)
    venv = os.path.join(demo, "venv")
    check_env(work, venv)
    odd_path(work, venv)
    wheel(work, venv)
    st, out, err = run(["check", "--junit", "/nonexistent-dir/x.xml", venv])
    report(st == 3 and "--junit /nonexistent-dir/x.xml" in err, "check --junit to a place it cannot write: exit 3, "
           "and it says where", err)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
