"""The device check: abiscope's CUDA verdicts against a real GPU and driver.

Run by tests/device/run.sh (which says how); this file does the work:
  python3 check.py --prebuilt DIR --out DIR --abiscope BIN [--dry-run]
Writes OUT/device.json (every fact, prediction and outcome) and
OUT/device.tap (TAP lines, then "N passed, N failed"), and prints the TAP.

Parts (each a group of TAP lines):
  gpu      `abiscope gpu --json` against nvidia-smi and /proc/driver/nvidia/version
  kernels  each image of prebuilt/kernels launched by drv_runner (driver API)
           twice, normally and with CUDA_DISABLE_PTX_JIT=1 (so a kernel that
           only runs by JIT is told apart), and by rt_runner (CUDA runtime);
           compared with what `abiscope cuda --json` predicts for this GPU
  check    an environment made here from prebuilt/site: `abiscope check
           --json` against a real import of each module in its interpreter,
           and each module's launch() against abiscope's GPU verdict
  timings  abiscope gpu, check and cuda, best of three
--dry-run (no GPU needed): the same, with abiscope's verdicts for an H200
(sm_90) and driver 580.65.06 taken from --gpu/--driver and held against the
documented rules; the runners and imports run here and must fail the way a
machine without a GPU makes them fail.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

# what the CUDA documentation says each image does on a 9.0 GPU (H100/H200)
# with a driver that knows PTX ISA 9.0 (CUDA 13.0, driver >= 580)
RULES_SM90 = {
    "sm_80": "no-image", "sm_86": "no-image", "sm_89": "no-image", "sm_90": "runs", "sm_90a": "runs",
    "sm_100": "no-image", "sm_120": "no-image", "compute_80": "jit", "compute_90": "jit",
    "fat_sm80_ptx80": "jit", "fat_sm90_ptx90": "runs", "future": "ptx-unsupported",
}
MESSAGES = {
    "no-image": "no kernel image is available for execution on the device",
    "ptx-unsupported": "the provided PTX was compiled with an unsupported toolchain.",
}
DRY_GPU = ["--gpu", "sm_90", "--driver", "580.65.06", "--no-driver"]


class Tap:
    def __init__(self):
        self.lines = []
        self.passed = self.failed = 0

    def ok(self, cond, name, detail=None):
        first = len(self.lines)
        self.lines.append(("ok - " if cond else "not ok - ") + name)
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            for line in str(detail if detail is not None else "").splitlines()[:20]:
                self.lines.append("#   " + line)
        print("\n".join(self.lines[first:]), flush=True)

    def skip(self, name, why):
        self.lines.append("ok - %s # SKIP %s" % (name, why))
        print(self.lines[-1], flush=True)

    def note(self, text):
        self.lines.append("# " + text)
        print(self.lines[-1], flush=True)


def run(cmd, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except (OSError, subprocess.TimeoutExpired) as x:
        return -1, "", str(x), time.monotonic() - t0


def json_of(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def last_json_line(text):
    for line in reversed(text.splitlines()):
        j = json_of(line)
        if isinstance(j, dict):
            return j
    return None


# ---- gpu ----

def smi_gpus():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None, "nvidia-smi not found"
    rc, out, err, _ = run([smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"])
    if rc != 0:
        return None, "nvidia-smi failed: " + (err or out).strip()[-300:]
    gpus = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            major, _, minor = parts[1].partition(".")
            gpus.append({"name": parts[0], "cc": int(major) * 10 + int(minor or 0), "driver": parts[2]})
    return gpus, None


def proc_driver_version():
    try:
        text = open("/proc/driver/nvidia/version").read()
    except OSError:
        return None
    # NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ...
    for word in text.split():
        if word.count(".") >= 1 and word.replace(".", "").isdigit():
            return word
    return None


def part_gpu(t, res, abiscope, dry):
    rc, out, err, secs = run([abiscope, "gpu", "--json"])
    g = json_of(out)
    res["gpu"] = {"abiscope": g, "abiscope_rc": rc, "seconds": round(secs, 3)}
    t.ok(rc == 0 and g is not None, "gpu: abiscope gpu --json answers", out + err)
    if g is None:
        return None
    smi, why = smi_gpus()
    proc = proc_driver_version()
    res["gpu"].update({"nvidia_smi": smi, "nvidia_smi_problem": why, "proc_driver_version": proc})
    if dry or smi is None:
        # no driver here: abiscope must say so, and agree with /proc
        t.ok(bool(g.get("driver_found")) == (proc is not None),
             "gpu: abiscope's driver_found agrees with /proc/driver/nvidia/version (%s)" % (proc or "absent"), g)
        if proc is None:
            t.ok(not g.get("gpus"), "gpu: no GPUs reported where there is no driver", g)
        if smi is None:
            t.skip("gpu: the GPUs against nvidia-smi", why)
        return None
    mine = [{"name": x.get("name"), "cc": int(x["sm"][3:]) if str(x.get("sm", "")).startswith("sm_") else None}
            for x in g.get("gpus", [])]
    res["gpu"]["compared"] = {"abiscope": mine, "nvidia_smi": smi}
    t.ok(len(mine) == len(smi), "gpu: %d GPUs, as nvidia-smi lists" % len(smi), json.dumps(res["gpu"]["compared"]))
    for i, s in enumerate(smi):
        a = mine[i] if i < len(mine) else {}
        t.ok(a.get("cc") == s["cc"], "gpu %d: compute capability %d.%d" % (i, s["cc"] // 10, s["cc"] % 10),
             json.dumps({"abiscope": a, "nvidia_smi": s}))
        t.ok(a.get("name") == s["name"], "gpu %d: name %s" % (i, s["name"]), json.dumps({"abiscope": a, "nvidia_smi": s}))
    drv = g.get("kernel_module") or {}
    version = drv.get("version") if isinstance(drv, dict) else drv
    t.ok(version == proc == smi[0]["driver"],
         "gpu: driver %s (abiscope, /proc, nvidia-smi agree)" % smi[0]["driver"],
         json.dumps({"abiscope": version, "proc": proc, "nvidia_smi": smi[0]["driver"]}))
    return smi[0]["cc"]


# ---- kernels ----

def predicted(findings):
    ids = {f["id"] for f in findings}
    if "gpu-arch-missing" in ids:
        return "no-image"
    if "driver-too-old" in ids:
        return "ptx-unsupported"
    if "ptx-jit-only" in ids:
        return "jit"
    return "runs"


def outcome(normal, nojit):
    if not normal:
        return "no-result"
    if normal.get("stage") == "done" and normal.get("code") == 0:
        if nojit and nojit.get("stage") == "done" and nojit.get("code") == 0:
            return "runs"
        return "jit"
    name = normal.get("name")
    if name == "CUDA_ERROR_NO_BINARY_FOR_GPU":
        return "no-image"
    if name == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION":
        return "ptx-unsupported"
    return "error: %s %s" % (name, normal.get("error"))


def part_kernels(t, res, abiscope, pre, dry):
    kdir = os.path.join(pre, "kernels")
    names = sorted(n[:-len(".fatbin")] for n in os.listdir(kdir) if n.endswith(".fatbin"))
    t.ok(set(names) == set(RULES_SM90), "kernels: every case was built (%d)" % len(names), names)
    drv = os.path.join(pre, "bin", "drv_runner")
    rt = os.path.join(pre, "bin", "rt_runner")
    cases = res["kernels"] = {}
    jit_env = {"CUDA_CACHE_DISABLE": "1"}
    for n in names:
        img = os.path.join(kdir, n + ".fatbin")
        rc, out, err, _ = run([abiscope, "cuda", "--json"] + (DRY_GPU if dry else []) + [img])
        j = json_of(out) or {}
        fs = j.get("findings", [])
        pred = predicted(fs)
        c = cases[n] = {"abiscope": pred, "abiscope_rc": rc, "findings": [f["id"] for f in fs],
                        "gpus": j.get("gpus"), "driver": j.get("driver")}
        _, o1, e1, _ = run([drv, img], env=jit_env)
        _, o2, e2, _ = run([drv, img], env=dict(jit_env, CUDA_DISABLE_PTX_JIT="1"))
        _, o3, e3, _ = run([rt, img], env=jit_env)
        c["driver_api"] = last_json_line(o1) or {"stderr": e1[-300:]}
        c["driver_api_no_jit"] = last_json_line(o2) or {"stderr": e2[-300:]}
        c["runtime"] = last_json_line(o3) or {"stderr": e3[-300:]}
        if dry:
            t.ok(pred == RULES_SM90[n], "kernels %s: abiscope for sm_90 + driver 580: %s (the documented rule)" %
                 (n, pred), json.dumps(c))
            t.ok(c["driver_api"].get("stage") == "dlopen" or c["driver_api"].get("stage") == "init",
                 "kernels %s: drv_runner runs and says why there is no GPU here" % n, json.dumps(c["driver_api"]))
            continue
        real = outcome(c["driver_api"], c["driver_api_no_jit"])
        c["real"] = real
        t.ok(real == pred, "kernels %s: abiscope says %s, the GPU says %s" % (n, pred, real), json.dumps(c))
        rtj = c["runtime"]
        if rtj.get("name") == "cudaErrorInsufficientDriver":
            t.skip("kernels %s: the CUDA runtime's message" % n, "rt_runner's runtime is newer than the driver")
        elif real in MESSAGES:
            t.ok(rtj.get("error") == MESSAGES[real], "kernels %s: the runtime says \"%s\"" % (n, MESSAGES[real]),
                 json.dumps(rtj))
        else:
            t.ok(rtj.get("stage") == "done", "kernels %s: the runtime runs it too" % n, json.dumps(rtj))
    if dry:
        # the same images for a driver of CUDA 12.8: PTX ISA 9.0 is too new for it
        rc, out, err, _ = run([abiscope, "cuda", "--json", "--gpu", "sm_90", "--driver", "570.86.10", "--no-driver",
                               os.path.join(kdir, "compute_90.fatbin")])
        t.ok(predicted((json_of(out) or {}).get("findings", [])) == "ptx-unsupported",
             "kernels compute_90: abiscope for a 570 driver (CUDA 12.8): ptx-unsupported", out + err)


# ---- check ----

def make_env(pre, work):
    """A venv made by hand (what `python3 -m venv --without-pip` makes) with
    prebuilt/site copied into its site-packages."""
    py = shutil.which("python3")
    if not py:
        return None, None, "python3 not found"
    real = os.path.realpath(py)
    rc, out, err, _ = run([real, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"])
    if rc != 0:
        return None, None, "python3 does not run: " + err[-200:]
    ver = out.strip()
    env = os.path.join(work, "env")
    shutil.rmtree(env, ignore_errors=True)
    site = os.path.join(env, "lib", "python" + ".".join(ver.split(".")[:2]), "site-packages")
    os.makedirs(os.path.join(env, "bin"))
    os.symlink(real, os.path.join(env, "bin", "python3"))
    with open(os.path.join(env, "pyvenv.cfg"), "w") as f:
        f.write("home = %s\ninclude-system-site-packages = false\nversion = %s\n" % (os.path.dirname(real), ver))
    shutil.copytree(os.path.join(pre, "site"), site)
    return env, site, None


def part_check(t, res, abiscope, pre, work, dry):
    env, site, why = make_env(pre, work)
    if not env:
        t.skip("check: an environment with CUDA extension modules", why)
        return
    rc, out, err, secs = run([abiscope, "check", "--json"] + (DRY_GPU if dry else []) + [env])
    j = json_of(out)
    t.ok(j is not None, "check: abiscope check --json answers (exit %d)" % rc, out[-500:] + err[-500:])
    if j is None:
        return
    verdict = {}
    for e in j.get("environments", []):
        for d in e.get("distributions", []):
            for m in d.get("modules", []):
                if m["module"].startswith("cu_"):
                    verdict[m["module"]] = m
    mods = sorted(n.split(".")[0] for n in os.listdir(site) if n.startswith("cu_") and n.endswith(".so"))
    res["check"] = {"env": env, "abiscope_rc": rc, "seconds": round(secs, 3), "modules": {}}
    py = os.path.join(env, "bin", "python3")
    for m in mods:
        v = verdict.get(m)
        call = "driver" if m == "cu_drv" else "launch"
        rc2, o2, e2, _ = run([py, "-c", "import %s as m; print(m.%s())" % (m, call)], env={"CUDA_CACHE_DISABLE": "1"})
        imported = rc2 == 0 or "ImportError" not in e2
        err_line = (e2.strip().splitlines() or [""])[-1]
        r = res["check"]["modules"][m] = {
            "abiscope_status": v and v["status"], "abiscope_error": v and v["error"],
            "abiscope_gpu_fails": v and v["gpu_fails"], "abiscope_findings": v and v["findings"],
            "imported": imported, "import_error": None if imported else err_line,
            "call": o2.strip() if rc2 == 0 else err_line}
        says = v and v["status"] == "ok"
        t.ok(v is not None and says == imported, "check %s: abiscope says it %s, python says it %s" %
             (m, "imports" if says else "fails", "imports" if imported else "fails"), json.dumps(r))
        if not imported or m == "cu_drv":
            continue
        if dry:
            # the documented rule for sm_90: only cu_sm80 has no image for it
            t.ok(bool(v["gpu_fails"]) == (m == "cu_sm80"), "check %s: abiscope for sm_90: its kernel %s" %
                 (m, "fails" if v["gpu_fails"] else "runs"), json.dumps(r))
            continue
        t.ok((r["call"] == "cudaSuccess") != bool(v["gpu_fails"]), "check %s: abiscope says its kernel %s, launch() "
             "says %s" % (m, "fails" if v["gpu_fails"] else "runs", r["call"]), json.dumps(r))


# ---- timings ----

def part_timings(t, res, abiscope, pre, work, dry):
    extra = DRY_GPU if dry else []
    cmds = {
        "abiscope gpu --json": [abiscope, "gpu", "--json"],
        "abiscope check ENV": [abiscope, "check", "--json"] + extra +
                              [os.path.join(work, "env")],
        "abiscope cuda kernels/": [abiscope, "cuda", "--json"] + extra + [os.path.join(pre, "kernels")],
    }
    res["timings"] = {}
    for name, cmd in cmds.items():
        best = None
        for _ in range(3):
            rc, _, _, secs = run(cmd)
            best = secs if best is None else min(best, secs)
        res["timings"][name] = round(best, 4)
        t.note("time %s: %.3f s (best of 3)" % (name, best))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prebuilt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--abiscope", required=True)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--provenance", default="")
    ap.add_argument("--pre-tap", help="TAP lines run.sh printed, counted and kept in device.tap")
    a = ap.parse_args()
    t0 = time.monotonic()
    t = Tap()
    if a.pre_tap and os.path.exists(a.pre_tap):
        for line in open(a.pre_tap).read().splitlines():
            t.lines.append(line)
            if line.startswith("not ok - "):
                t.failed += 1
            elif line.startswith("ok - ") and "# SKIP" not in line:
                t.passed += 1
    res = {"dry_run": a.dry_run, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": os.uname().nodename, "kernel": os.uname().release, "abiscope": a.abiscope,
           "provenance": a.provenance}
    work = os.path.join(a.out, "work")
    os.makedirs(work, exist_ok=True)
    try:
        res["prepared"] = open(os.path.join(a.prebuilt, "prepared.txt")).read()
    except OSError:
        res["prepared"] = None
    part_gpu(t, res, a.abiscope, a.dry_run)
    part_kernels(t, res, a.abiscope, a.prebuilt, a.dry_run)
    part_check(t, res, a.abiscope, a.prebuilt, work, a.dry_run)
    part_timings(t, res, a.abiscope, a.prebuilt, work, a.dry_run)
    res["seconds"] = round(time.monotonic() - t0, 1)
    res["passed"], res["failed"] = t.passed, t.failed
    with open(os.path.join(a.out, "device.json"), "w") as f:
        json.dump(res, f, indent=1)
    summary = "%d passed, %d failed" % (t.passed, t.failed)
    with open(os.path.join(a.out, "device.tap"), "w") as f:
        f.write("1..%d\n" % (t.passed + t.failed + sum(1 for x in t.lines if "# SKIP" in x)))
        f.write("\n".join(t.lines) + "\n" + summary + "\n")
    print("# %.1f s; results in %s/device.json and device.tap" % (res["seconds"], a.out))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
