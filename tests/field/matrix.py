#!/usr/bin/env python3
"""matrix.py: abiscope against the real import in every field environment.

    python3 tests/field/matrix.py [--build] [--delete-after] [--markdown FILE] [NAME...]

For each env of tests/field/manifest.toml that exists (--build makes the
missing ones first, tests/field/build_envs.py), twice: as the machine is (no
NVIDIA driver) and with a libcuda.so.1 stand-in (the CUDA toolkit's stub,
else one built from source) on LD_LIBRARY_PATH, for the oracle and abiscope
alike:

  * the oracle (tests/field/oracle.py) in the env's own python;
  * `abiscope check --json ENV --ld-library-path ...`;
  * per extension module: the same verdict and the exact dlerror(), and
    `import torch`: the same set of objects loaded.

A "false load" is abiscope saying a module loads where the real dlopen
fails: the worst defect, listed first.  A module abiscope "cannot tell"
about (its verdict depends on a library its package loads itself under a
condition abiscope cannot decide, or through a call whose library it cannot
name) agrees neither way: it is counted in its own column, never as agreeing;
where the real dlopen fails, abiscope must have given that exact error as
what happens without the library ("cannot tell, unexplained" otherwise, a
defect listed with the false loads).  The libraries a package's import
loads itself (abiscope's entries with "loaded_by") are compared with the
oracle's "libraries" the same way, and a load abiscope says the import makes
unconditionally that the real import did not map is a disagreement ("load
not made", with the false loads); kept oracle answers from before the
oracle measured libraries count those verdicts "not measured".  Prints the table (env, modules,
agree, each disagreement) and writes the results under
$ABISCOPE_FIELD/results (JSON per env, so a table can be printed again
without the envs: --from-results).  --delete-after removes each env once
measured (the disk bound; its figures stay in results).
"""
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import build_envs  # noqa: E402

ABISCOPE = os.environ.get("ABISCOPE", os.path.join(TOP, "abiscope"))
RESULTS = os.path.join(build_envs.FIELD, "results")
NOT_A_MODULE = "does not define module export function"


def driver_dir():
    """A folder whose libcuda.so.1 stands for the NVIDIA driver."""
    d = os.path.join(build_envs.FIELD, "libcuda-standin")
    lib = os.path.join(d, "libcuda.so.1")
    if os.path.exists(lib):
        return d
    os.makedirs(d, exist_ok=True)
    for stub in (os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64/stubs/libcuda.so"),
                 "/usr/local/cuda/lib64/stubs/libcuda.so"):
        if os.path.exists(stub):
            os.symlink(os.path.realpath(stub), lib)
            return d
    src = os.path.join(d, "libcuda.c")
    with open(src, "w") as f:
        f.write("int cuInit(unsigned f) { (void)f; return 100; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", lib, src], check=True)
    return d


def run_oracle(venv, ldpath, out):
    if os.path.exists(os.path.join(venv, ".abiscope-skeleton")):
        raise RuntimeError(f"{venv} is a skeleton (tests/field/skeleton.py): rebuild it to run the oracle")
    e = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH",
                                                           "TORCH_USE_RTLD_GLOBAL")}
    if ldpath:
        e["LD_LIBRARY_PATH"] = ldpath
    e["CUDA_VISIBLE_DEVICES"] = e.get("CUDA_VISIBLE_DEVICES", "")
    subprocess.run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "oracle.py"), out],
                   env=e, check=True, cwd="/", timeout=3600)
    with open(out) as f:
        return json.load(f)


def run_abiscope(venv, ldpath, out):
    e = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "TORCH_USE_RTLD_GLOBAL")}
    r = subprocess.run([ABISCOPE, "check", "--json", "--no-driver", "--ld-library-path", ldpath or "",
                        venv], capture_output=True, text=True, env=e, timeout=3600)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        raise RuntimeError(f"abiscope check {venv} gave no JSON (status {r.returncode}): {r.stderr[-2000:]}")
    with open(out, "w") as f:
        json.dump(j, f)
    return j


def abiscope_env(j):
    return (j.get("environments") or [{}])[0]


def abiscope_modules(j):
    out = {}
    for d in abiscope_env(j).get("distributions", []):
        for m in d.get("modules", []):
            m = dict(m, stdlib=d.get("name") == "(the standard library)")
            out[os.path.realpath(m["path"])] = m
    return out


def norm_loads(paths):
    return sorted({os.path.realpath(p) for p in paths if ".so" in os.path.basename(p)})


_pyinit = {}


def defines_pyinit(path):
    """Does the file export PyInit_<stem> (nm -D, binutils): is it a module?"""
    if path not in _pyinit:
        stem = os.path.basename(path).split(".")[0]
        r = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
        _pyinit[path] = any(l.split()[-1] == "PyInit_" + stem for l in r.stdout.splitlines() if l.split())
    return _pyinit[path]


def compare(env, mode, oracle, ab):
    """Rows of disagreement, and the counts."""
    res = {"env": env, "mode": mode, "modules": 0, "agree": 0, "false_loads": 0, "cannot_tell": 0,
           "cannot_tell_unexplained": 0, "diffs": []}
    am = abiscope_modules(ab)
    for path, o in sorted(oracle["modules"].items()):
        a = am.get(os.path.realpath(path))
        if (a is None or not a.get("extension")) and (
                (o["import"] and NOT_A_MODULE in o["import"]) or not defines_pyinit(path)):
            continue  # a library with a module suffix, and abiscope agrees it is no module
        if o["import"] == f"ModuleNotFoundError: No module named '{o['module']}'" and (
                a is None or a["status"] == "not-checked"):
            continue  # its package is shadowed by an earlier sys.path entry: no such module, both agree
        if (o["dlopen"] or "").startswith("crashed: timeout"):
            # the oracle ran out of time (a loaded machine): no truth to compare with
            res["not_measured"] = res.get("not_measured", 0) + 1
            res["diffs"].append({"module": o["module"], "path": path, "kind": "not measured",
                                 "real": o["dlopen"], "abiscope": (a or {}).get("status")})
            continue
        res["modules"] += 1
        real_ok = o["dlopen"] is None
        if a is not None and a["status"] == "cannot-tell":
            # neither way; but a real failure must be the one abiscope said
            # happens without the library the verdict depends on
            res["cannot_tell"] += 1
            if not real_ok and a.get("error") != o["dlopen"]:
                res["cannot_tell_unexplained"] += 1
                res["diffs"].append({"module": o["module"], "path": path, "kind": "CANNOT TELL, UNEXPLAINED",
                                     "real": o["dlopen"], "abiscope": f"cannot tell; without the library: "
                                     f"{a.get('error')}", "depends_on": a.get("depends_on"),
                                     "package_error": o.get("package_error")})
            continue
        if a is None or a["status"] not in ("ok", "fails"):
            res["diffs"].append({"module": o["module"], "path": path, "kind": "not judged",
                                 "real": o["dlopen"] or "loads",
                                 "abiscope": a["status"] if a else "not listed"})
            continue
        ab_ok = a["status"] == "ok"
        if ab_ok == real_ok and (real_ok or a.get("error") == o["dlopen"]):
            res["agree"] += 1
            continue
        if (not ab_ok and (a.get("error") or "").startswith("No module named ")
                and o["import"] == "ModuleNotFoundError: " + a["error"]):
            # the package's import stops at a module nothing provides, before
            # the file is loaded (deep_gemm without setuptools): the real
            # import says so; a dlopen by path, which runs no __init__.py,
            # cannot
            res["agree"] += 1
            continue
        crashed = (o["dlopen"] or "").startswith("crashed")
        kind = ("crash" if crashed else "FALSE LOAD" if ab_ok else "false failure" if real_ok
                else "other error")
        if crashed:
            # the dlopen itself died (an initialiser aborted): the loader verdict
            # is unknown, listed with the package's state, not counted as a false load
            pass
        elif ab_ok and not real_ok:
            res["false_loads"] += 1
        res["diffs"].append({"module": o["module"], "path": path, "kind": kind,
                             "real": o["dlopen"] or "loads", "abiscope": a.get("error") or "loads",
                             "context": a.get("context"), "package_error": o.get("package_error")})
    # modules abiscope judges that the oracle does not see
    seen = {os.path.realpath(p) for p in oracle["modules"]}
    for p, a in am.items():
        if a.get("extension") and p not in seen and not a.get("stdlib") and a["status"] in ("ok", "fails", "cannot-tell"):
            res["diffs"].append({"module": a.get("module"), "path": p, "kind": "not importable",
                                 "real": "not on sys.path", "abiscope": a["status"]})
    compare_libraries(res, oracle, am)
    t = oracle.get("torch")
    if t is not None:
        real = norm_loads(t["loads"]) if t.get("ok") else None
        # what the Python-level imports of torch loaded (numpy's objects, the
        # standard library's) is no part of torch's loader work: off both sides
        pylevel = set(norm_loads(t.get("python_level", [])))
        res["torch_python_level"] = len(pylevel)
        at = abiscope_env(ab).get("torch") or {}
        mine = norm_loads(at.get("import_loads", [])) if at.get("import_ok") else None
        mine = [p for p in mine if p not in pylevel] if mine is not None else None
        res["torch_real"] = {"ok": t.get("ok"), "error": t.get("error"), "n": len(real or [])}
        res["torch_replay_exact"] = real == mine
        if real != mine:
            res["torch_diff"] = {"real_only": sorted(set(real or []) - set(mine or [])),
                                 "abiscope_only": sorted(set(mine or []) - set(real or [])),
                                 "real_error": t.get("error"), "abiscope_error": at.get("import_error")}
    return res


def compare_libraries(res, oracle, am):
    """abiscope's verdicts on the libraries a package's import loads itself
    (entries with "loaded_by") against the oracle's "libraries": the same
    verdict and exact dlerror(), and a load abiscope says the import makes
    unconditionally must be one the real import (when it succeeded) mapped.
    Results kept from before the oracle measured libraries have no
    "libraries": every such verdict is "not measured", no disagreement."""
    res.update({"libraries": 0, "libraries_agree": 0, "library_false_loads": 0, "libraries_not_measured": 0})
    mine = sorted((p, a) for p, a in am.items() if a.get("loaded_by"))
    libs = oracle.get("libraries")
    if libs is None:
        res["libraries_not_measured"] = len(mine)
        return
    real = {os.path.realpath(p): o for p, o in libs.items()}
    for p, a in mine:
        o = real.get(p)
        if o is None or (o.get("dlopen") or "").startswith("crashed: timeout"):
            res["libraries_not_measured"] += 1
            continue
        res["libraries"] += 1
        by = a["loaded_by"]
        real_ok = o["dlopen"] is None
        ab_ok = a["status"] == "ok"
        row = {"module": os.path.basename(p), "path": p, "real": o["dlopen"] or "loads",
               "abiscope": a.get("error") or a["status"], "loaded_at": f"{by.get('file')}:{by.get('line')}",
               "package_error": o.get("package_error")}
        if (real_ok and not by.get("condition") and o.get("package_error") is None
                and not o.get("mapped_by_import")):
            res["diffs"].append(dict(row, kind="LOAD NOT MADE", real="the import did not map it",
                                     abiscope="loaded by the import"))
            res["library_false_loads"] += 1
            continue
        if a["status"] not in ("ok", "fails"):
            res["diffs"].append(dict(row, kind="library not judged"))
            continue
        if ab_ok == real_ok and (real_ok or a.get("error") == o["dlopen"]):
            res["libraries_agree"] += 1
            # what the failure costs: `import PKG` works when abiscope says the
            # failure is caught, and raises the OSError abiscope names when not
            perr = o.get("package_error")
            cons = a.get("consequence") or ""
            raises = not by.get("caught") or "`import " + (o.get("package") or "?") + "` fails" in cons
            load_caused = perr and p in perr  # an operator's error has no path: another load's, maybe
            if real_ok or by.get("condition"):
                pass
            elif raises and not perr:
                res["diffs"].append(dict(row, kind="consequence: the import works", real="import works",
                                         abiscope=cons))
            elif not raises and load_caused:
                res["diffs"].append(dict(row, kind="consequence: the import raises", real=perr, abiscope=cons))
            elif raises and perr and perr not in cons:
                res["diffs"].append(dict(row, kind="consequence: another error", real=perr, abiscope=cons))
            continue
        crashed = (o["dlopen"] or "").startswith("crashed")
        kind = ("library crash" if crashed else "LIBRARY FALSE LOAD" if ab_ok else
                "library false failure" if real_ok else "library other error")
        res["library_false_loads"] += ab_ok and not real_ok and not crashed
        res["diffs"].append(dict(row, kind=kind))


def measure(name, venv):
    d = os.path.join(RESULTS, name)
    os.makedirs(d, exist_ok=True)
    rows = []
    for mode, ldpath in (("no driver", ""), ("libcuda stand-in", driver_dir())):
        tag = "nodriver" if not ldpath else "standin"
        t0 = time.time()
        op = os.path.join(d, f"oracle-{tag}.json")
        fp = open(os.path.join(venv, ".abiscope-field")).read().strip()
        fpp = op + ".fingerprint"
        if (os.path.exists(op) and os.path.exists(fpp) and open(fpp).read().strip() == fp
                and not os.environ.get("FIELD_FRESH_ORACLE")):
            o = json.load(open(op))  # the env has not changed: the oracle's answer stands
        else:
            o = run_oracle(venv, ldpath, op)
            with open(fpp, "w") as f:
                f.write(fp + "\n")
        t1 = time.time()
        a = run_abiscope(venv, ldpath, os.path.join(d, f"abiscope-{tag}.json"))
        t2 = time.time()
        r = compare(name, mode, o, a)
        r["oracle_s"], r["abiscope_s"] = round(t1 - t0, 1), round(t2 - t1, 1)
        rows.append(r)
    with open(os.path.join(d, "compare.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return rows


def versions(venv):
    r = subprocess.run(["uv", "pip", "list", "--python", os.path.join(venv, "bin", "python"),
                        "--format", "json"], capture_output=True, text=True)
    try:
        return {p["name"]: p["version"] for p in json.loads(r.stdout)}
    except ValueError:
        return {}


def table(all_rows, out=sys.stdout):
    tot = {"modules": 0, "agree": 0, "false_loads": 0, "cannot_tell": 0, "cannot_tell_unexplained": 0}
    envs = set()
    torch_ok = torch_n = 0
    print("| environment | mode | modules | agree | cannot tell | false loads | import torch replay |", file=out)
    print("|---|---|---:|---:|---:|---:|---|", file=out)
    for r in all_rows:
        envs.add(r["env"])
        for k in tot:
            tot[k] += r.get(k, 0)  # results of runs before "cannot tell" existed lack it
        tr = "-"
        if "torch_replay_exact" in r:
            torch_n += 1
            torch_ok += r["torch_replay_exact"]
            tr = (f"exact ({r['torch_real']['n']} objects)" if r["torch_replay_exact"] else "DIFFERS")
        print(f"| {r['env']} | {r['mode']} | {r['modules']} | {r['agree']} | {r.get('cannot_tell', 0)} | "
              f"{r['false_loads']} | {tr} |", file=out)
    pct = 100.0 * tot["agree"] / tot["modules"] if tot["modules"] else 0.0
    nm = sum(r.get("not_measured", 0) for r in all_rows)
    print(f"\n{len(envs)} environments, {tot['modules']} module verdicts "
          f"({tot['modules'] // 2 if all_rows else 0} modules x 2 modes), {tot['agree']} agree "
          f"({pct:.2f}%), {tot['cannot_tell']} cannot tell (agreeing neither way; "
          f"{tot['cannot_tell_unexplained']} where the real dlopen fails otherwise than abiscope said), "
          f"{tot['false_loads']} false loads; import torch replay exact in "
          f"{torch_ok}/{torch_n}." + (f" {nm} verdicts not measured (the oracle timed out)." if nm else ""),
          file=out)
    nl = sum(r.get("libraries", 0) for r in all_rows)
    nla = sum(r.get("libraries_agree", 0) for r in all_rows)
    nlf = sum(r.get("library_false_loads", 0) for r in all_rows)
    nlm = sum(r.get("libraries_not_measured", 0) for r in all_rows)
    print(f"Libraries a package's import loads itself: {nl} verdicts, {nla} agree, {nlf} false loads"
          + (f"; {nlm} not measured (oracle answers from before it measured libraries)" if nlm else "") + ".",
          file=out)
    diffs = [(r, d) for r in all_rows for d in r["diffs"]]
    worst = ("FALSE LOAD", "CANNOT TELL, UNEXPLAINED", "LIBRARY FALSE LOAD", "LOAD NOT MADE")
    if diffs:
        print("\nDisagreements:\n", file=out)
        for r, d in sorted(diffs, key=lambda x: x[1]["kind"] not in worst):
            print(f"- {r['env']} ({r['mode']}) `{d['module']}`: {d['kind']}; real: {d['real']}; "
                  f"abiscope: {d['abiscope']}" + (f"; context: {d['context']}" if d.get("context") else ""),
                  file=out)
    for r in all_rows:
        if r.get("torch_diff"):
            td = r["torch_diff"]
            print(f"- {r['env']} ({r['mode']}) import torch: real only {td['real_only'][:6]}, "
                  f"abiscope only {td['abiscope_only'][:6]}; real error {td['real_error']}, "
                  f"abiscope error {td['abiscope_error']}", file=out)


def abiscope_verdicts(venv, ldpath):
    j = run_abiscope(venv, ldpath, os.devnull)
    e = abiscope_env(j)
    return ([(m["path"], m["status"], m["error"], m.get("context")) for d in e.get("distributions", [])
             for m in d["modules"]], (e.get("torch") or {}).get("import_loads"))


def shrink(name):
    """Skeleton the env (skeleton.py), checking abiscope answers the same."""
    venv = os.path.join(build_envs.ENVS, name)
    if not os.path.exists(venv) or os.path.exists(os.path.join(venv, ".abiscope-skeleton")):
        return
    before = [abiscope_verdicts(venv, ld) for ld in ("", driver_dir())]
    subprocess.run([sys.executable, os.path.join(HERE, "skeleton.py"), venv], check=True)
    after = [abiscope_verdicts(venv, ld) for ld in ("", driver_dir())]
    ok = before == after
    with open(os.path.join(RESULTS, name, "skeleton.json"), "w") as f:
        json.dump({"same_answers": ok}, f)
    print(f"# {name}: skeleton, abiscope's answers {'unchanged' if ok else 'CHANGED'}", file=sys.stderr)


def pipeline(envs, names):
    """Bases in manifest order, each followed by the envs stacked on it:
    build, measure, then shrink the group and empty uv's cache."""
    order = [n for n in names if not envs[n].get("base")]
    for base in order:
        group = [base] + [n for n in names if envs[n].get("base") == base]
        rows = []
        for n in group:
            try:
                build_envs.build(envs[n], envs)
                rows += measure(n, os.path.join(build_envs.ENVS, n))
                with open(os.path.join(RESULTS, n, "versions.json"), "w") as f:
                    json.dump(versions(os.path.join(build_envs.ENVS, n)), f, indent=1, sort_keys=True)
            except Exception as e:  # one env's failure must not stop the run
                print(f"# {n}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        for x in rows:
            print(f"# {x['env']} ({x['mode']}): {x['agree']}/{x['modules']} agree, {x['false_loads']} false "
                  f"loads, torch replay {x.get('torch_replay_exact')}", file=sys.stderr, flush=True)
        for n in group:
            try:
                shrink(n)
            except Exception as e:
                print(f"# shrink {n}: {e}", file=sys.stderr, flush=True)
        subprocess.run(["uv", "cache", "clean", "-q"], env=dict(os.environ, UV_CACHE_DIR=build_envs.UV_CACHE))


def main(argv):
    flags = {a for a in argv if a.startswith("--")}
    names = [a for a in argv if not a.startswith("--") and not a.endswith(".md")]
    md = next((a for a in argv if a.endswith(".md")), None)
    envs = build_envs.manifest()
    rows = []
    if "--pipeline" in flags:
        pipeline(envs, names or list(envs))
        return 0
    for n in names or list(envs):
        venv = os.path.join(build_envs.ENVS, n)
        if "--from-results" in flags:
            p = os.path.join(RESULTS, n, "compare.json")
            if os.path.exists(p):
                rows += json.load(open(p))
            continue
        if "--build" in flags:
            build_envs.build(envs[n], envs)
        if not os.path.exists(os.path.join(venv, ".abiscope-field")):
            print(f"# skip {n}: not built (python3 tests/field/build_envs.py {n})", file=sys.stderr)
            continue
        r = measure(n, venv)
        with open(os.path.join(RESULTS, n, "versions.json"), "w") as f:
            json.dump(versions(venv), f, indent=1, sort_keys=True)
        rows += r
        for x in r:
            print(f"# {n} ({x['mode']}): {x['agree']}/{x['modules']} agree, {x['false_loads']} false loads, "
                  f"torch replay {x.get('torch_replay_exact')}", file=sys.stderr, flush=True)
        if "--delete-after" in flags and not any(e.get("base") == n for e in envs.values()):
            shutil.rmtree(venv, ignore_errors=True)
    table(rows)
    if md:
        with open(md, "w") as f:
            table(rows, f)
    return 1 if any(r["false_loads"] or r.get("cannot_tell_unexplained") or r.get("library_false_loads")
                    for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
