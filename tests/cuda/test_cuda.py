#!/usr/bin/env python3
"""`abiscope cuda`, `abiscope gpu` and the CUDA verdicts, on fixtures compiled
with nvcc at test time (tests/cuda/fixtures.py).  Without nvcc every case that
needs a fixture says SKIP; the driver and GPU probe cases run everywhere.
"""
import json
import os
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

t = fx.Tap()


def cuda_json(*args, env=None):
    rc, out, err = fx.run(["cuda", "--json", "--no-driver"] + list(args), env=env)
    try:
        return rc, json.loads(out)
    except ValueError:
        return rc, {"error": out + err}


def findings(j, fid=None):
    fs = j.get("findings", [])
    return [f for f in fs if fid is None or f["id"] == fid]


def obj(j, name):
    for o in j.get("objects", []):
        if o["path"].endswith(name):
            return o
    return None


def targets(o, key):
    return [x["target"] for x in o[key]] if o else None


def probe_cases():
    """abiscope gpu: no driver here, a fake /proc under --root."""
    rc, out, err = fx.run(["gpu", "--no-driver"])
    has_driver = os.path.exists("/proc/driver/nvidia/version")
    t.ok(rc == 0, "gpu: exit 0", err)
    if not has_driver:
        t.ok("no NVIDIA driver found" in out, "gpu: says there is no driver", out)
    rc, out, err = fx.run(["gpu", "--json"])
    j = json.loads(out) if rc == 0 else {}
    t.ok(rc == 0 and "driver_found" in j and isinstance(j["gpus"], list), "gpu --json: shape", out + err)
    if not has_driver and not j.get("libcuda", {}).get("loaded"):
        t.ok(j["driver_found"] is False and j["no_gpu_reason"] == "no NVIDIA driver found",
             "gpu --json: no driver, no GPU, said so", out)
    root = os.path.join(fx.WORK, "fakeroot")
    os.makedirs(os.path.join(root, "proc/driver/nvidia"), exist_ok=True)
    with open(os.path.join(root, "proc/driver/nvidia/version"), "w") as f:
        f.write("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.51.03  Release Build  "
                "(dvs-builder@U16)  Tue Apr 29 2025\nGCC version:  gcc version 12.2.0\n")
    rc, out, err = fx.run(["gpu", "--json", "--root", root])
    j = json.loads(out) if rc == 0 else {}
    t.ok(j.get("kernel_module", {}).get("version") == "575.51.03" and j.get("driver_cuda") == "12.9",
         "gpu --root: kernel module version read under the root, CUDA 12.9", out + err)
    t.ok(j.get("libcuda", {}).get("tried") is False, "gpu --root: libcuda.so.1 is not loaded for another root", out)
    rc, out, err = fx.run(["gpu", "--root", root])
    t.ok(rc == 0 and "575.51.03" in out and "not loaded" in out, "gpu --root: text", out + err)


def listing_cases():
    rc, j = cuda_json(fx.path("plain"), fx.path("arch_a"), fx.path("family"), fx.path("ptx_only"),
                      fx.path("raw_fatbin"), fx.path("cubin"), fx.path("rdc"), fx.path("lto"), fx.path("lz4"))
    t.ok(rc == 0, "cuda: exit 0 without a GPU", j)
    o = obj(j, "plain.so")
    t.ok(targets(o, "cubins") == ["sm_80", "sm_90", "sm_100", "sm_120"], "plain: cubin SMs",
         targets(o, "cubins"))
    t.ok(targets(o, "ptx") == ["compute_90"] and o["ptx"][0]["isa"] == "9.0", "plain: compute_90 PTX, ISA 9.0", o)
    o = obj(j, "arch_a.so")
    t.ok(targets(o, "cubins") == ["sm_90a", "sm_100a", "sm_120a"], "arch_a: `a` cubins", targets(o, "cubins"))
    t.ok(targets(o, "ptx") == ["compute_120a"], "arch_a: compute_120a PTX", targets(o, "ptx"))
    o = obj(j, "family.so")
    t.ok(targets(o, "cubins") == ["sm_100f", "sm_120f"], "family: `f` cubins (cuobjdump shows them plain)",
         targets(o, "cubins"))
    t.ok(targets(o, "ptx") == ["compute_100f"], "family: compute_100f PTX", targets(o, "ptx"))
    o = obj(j, "ptx_only.so")
    t.ok(targets(o, "cubins") == [] and targets(o, "ptx") == ["compute_80"], "ptx_only: PTX only", o)
    o = obj(j, "raw.fatbin")
    t.ok(o and o["kind"] == "fatbin" and targets(o, "cubins") == ["sm_121a"] and
         targets(o, "ptx") == ["compute_120f", "compute_121a"] and o["entries_compressed"] == 3,
         "raw fatbin file: entries, zstd-compressed (not decompressed)", o)
    o = obj(j, "one.cubin")
    t.ok(o and o["kind"] == "cubin" and targets(o, "cubins") == ["sm_120a"], "cubin file: SM and `a` from the ELF",
         o)
    o = obj(j, "rdc.o")
    t.ok(targets(o, "cubins") == ["sm_90", "sm_103f"] and targets(o, "ptx") == ["compute_90"],
         "rdc object: __nv_relfatbin read", o)
    o = obj(j, "lto.so")
    t.ok(targets(o, "lto_ir") == ["lto_90"] and targets(o, "cubins") == ["sm_80"], "LTO-IR entries named", o)
    o = obj(j, "lz4.so")
    t.ok(targets(o, "cubins") == ["sm_89"] and o["entries_compressed"] >= 2, "LZ4-compressed entries", o)
    o = obj(j, "hopper")
    rc, out, err = fx.run(["cuda", "--no-driver", fx.path("plain")])
    t.ok(rc == 0 and "cubin   sm_80 sm_90 sm_100 sm_120" in out and "compute_90 (ISA 9.0)" in out,
         "cuda text: per object SMs and PTX with ISA", out + err)
    t.ok("gpu      none" in out, "cuda text: says no GPU is known", out)
    t.ok(findings(j, "gpu-not-checked") and not findings(j, "gpu-arch-missing"),
         "no GPU: gpu-not-checked, no arch verdict guessed", findings(j))


def verdict_cases():
    hb = fx.path("hopper_blackwell")
    rc, j = cuda_json("--gpu", "RTX 5090", hb)
    f = findings(j, "gpu-arch-missing")
    t.ok(rc == 1 and len(f) == 1 and f[0]["severity"] == "error", "gpu-arch-missing: sm_90+sm_100 on 12.0, exit 1", j)
    if f:
        t.ok(f[0]["cubins"] == ["sm_90", "sm_100"] and f[0]["ptx"] == [] and f[0]["gpu"] == "sm_120",
             "gpu-arch-missing: names what the object has and the GPU", f[0])
        t.ok(any("sm_100 cubin never runs on 12.0" in line for line in f[0]["explanation"]),
             "gpu-arch-missing: says why the cubins do not run", f[0]["explanation"])
    rc, j = cuda_json("--gpu", "H100", hb)
    t.ok(rc == 0 and not findings(j, "gpu-arch-missing"), "sm_90 cubin runs on H100", findings(j))
    rc, j = cuda_json("--gpu", "sm_103", hb)
    t.ok(rc == 0 and not findings(j, "gpu-arch-missing"), "sm_100 cubin runs on 10.3 (same major)", findings(j))
    a = fx.path("arch_a")
    for gpu, ok in (("B300", False), ("GB10", True), ("sm_100", True), ("sm_90", True), ("sm_89", False)):
        rc, j = cuda_json("--gpu", gpu, a)
        missing = bool(findings(j, "gpu-arch-missing"))
        ptx = bool(findings(j, "ptx-jit-only"))
        if gpu == "GB10":
            # sm_120a does not run on 12.1, and compute_120a does not JIT for it either
            t.ok(missing, "`a` rules: sm_120a/compute_120a do not serve GB10 (12.1)", findings(j))
            continue
        t.ok(missing != ok, "`a` rules: arch_a on %s %s" % (gpu, "runs" if ok else "has no image"), findings(j))
    fam = fx.path("family")
    for gpu in ("B300", "GB10", "B200", "RTX 5090"):
        rc, j = cuda_json("--gpu", gpu, fam)
        t.ok(rc == 0 and not findings(j, "gpu-arch-missing"), "`f` rules: family cubins serve %s" % gpu, findings(j))
    rc, j = cuda_json("--gpu", "Thor", fam)
    t.ok(findings(j, "gpu-arch-missing"), "`f` rules: sm_100f does not reach 11.0", findings(j))

    p = fx.path("ptx_only")
    rc, j = cuda_json("--gpu", "sm_120", "--driver", "580.65.06", p)
    f = findings(j, "ptx-jit-only")
    t.ok(rc == 0 and f and f[0]["severity"] == "warning" and f[0]["ptx_isa"] == "9.0",
         "ptx-jit-only: a warning naming the PTX ISA", j)
    t.ok(not findings(j, "driver-too-old"), "ptx-jit-only: a 580 driver JITs PTX 9.0", findings(j))
    rc, j = cuda_json("--gpu", "sm_120", "--driver", "570.124.06", p)
    f = findings(j, "driver-too-old")
    t.ok(rc == 1 and f and f[0]["reason"] == "ptx-isa" and f[0]["needs_cuda"] == "13.0" and
         f[0]["min_driver"] == "580.65.06",
         "driver-too-old: PTX ISA 9.0 needs CUDA 13.0, driver 570 has 12.8", j)
    rc, j = cuda_json("--gpu", "sm_75", p)
    t.ok(findings(j, "gpu-arch-missing"), "compute_80 PTX does not JIT for 7.5", findings(j))

    rc, j = cuda_json("--gpu", "H100", "--driver", "575.51.03", hb)
    f = findings(j, "driver-too-old")
    t.ok(rc == 1 and f and f[0]["reason"] == "runtime" and f[0]["runtime"] == "libcudart.so.13" and
         f[0]["min_driver"] == "580", "driver-too-old: libcudart.so.13 on a 575 (CUDA 12.9) driver", j)
    rc, j = cuda_json("--driver", "580.65.06", hb)
    t.ok(not findings(j, "driver-too-old"), "a 580 driver runs libcudart.so.13", findings(j))


def future_ptx_fatbin():
    """A fatbin whose PTX says ISA 9.9, newer than any CUDA release: nvcc's
    compute_90 PTX with its .version raised, wrapped by the toolkit's
    fatbinary.  None (and why) when the toolkit cannot make it."""
    fatbinary = os.path.join(os.path.dirname(fx.NVCC), "fatbinary")
    ptx = os.path.join(fx.WORK, "future.ptx")
    out = os.path.join(fx.WORK, "future.fatbin")
    p = subprocess.run([fx.NVCC, "-ptx", "-arch=compute_90", "-o", ptx, os.path.join(fx.WORK, "k.cu")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr[-300:]
    text = open(ptx).read()
    if ".version 9.0" not in text:
        return None, "nvcc's PTX is not ISA 9.0"
    with open(ptx, "w") as f:
        f.write(text.replace(".version 9.0", ".version 9.9", 1))
    p = subprocess.run([fatbinary, "--create=" + out, "--image3=kind=ptx,sm=90,file=" + ptx],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr[-300:]
    return out, None


def future_ptx_cases():
    fut, why = future_ptx_fatbin()
    if not fut:
        t.skip("driver-too-old: PTX ISA newer than every release", why)
        return
    rc, j = cuda_json("--gpu", "H100", "--driver", "580.65.06", fut)
    f = findings(j, "driver-too-old")
    t.ok(rc == 1 and f and f[0]["reason"] == "ptx-isa" and f[0]["ptx_isa"] == "9.9" and
         f[0]["needs_cuda"].startswith("newer than ") and f[0]["min_driver"] is None,
         "driver-too-old: PTX ISA 9.9 (newer than every release known) on a 580 driver", j)
    rc, j = cuda_json("--gpu", "H100", fut)
    t.ok(not findings(j, "driver-too-old"), "PTX ISA 9.9 with no driver known: no driver verdict", findings(j))


def variant_cases():
    site = os.path.join(fx.WORK, "site")
    want = {"sm_90": ("sm90", True), "sm_100": ("sm100", True), "sm_103": ("sm100", False),
            "sm_120": ("sm100", True), "sm_121": ("sm100", False)}
    for gpu, (variant, runs) in want.items():
        rc, j = cuda_json("--gpu", gpu, site)
        loads = [x for p in j.get("variant_packages", []) for x in p["loads"]]
        t.ok(loads and loads[0]["variant"] == variant, "sgl_kernel on %s loads %s/" % (gpu, variant), j)
        missing = [f["object"] for f in findings(j, "gpu-arch-missing")]
        t.ok((not missing) == runs and all("/%s/" % variant in m for m in missing),
             "sgl_kernel on %s: %s, judged on %s/ only" % (gpu, "runs" if runs else "no kernel image", variant),
             missing)
    rc, j = cuda_json("--gpu", "sm_120", site)
    t.ok(not [f for f in findings(j) if "/sm90/" in (f["object"] or "")],
         "sm90/ (sm_80 + sm_90a only) is not judged for 12.0: the package never loads it there", findings(j))


def why_cases():
    drv = os.path.join(fx.BUILD, "tools", "dlopen_driver")
    if not os.access(drv, os.X_OK):
        t.skip("why --gpu", "no %s (make tools)" % drv)
        return
    work = os.path.join(fx.WORK, "why")
    os.makedirs(work, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    # a CUDA 12 cuBLAS stand-in next to the CUDA 13 runtime
    src = os.path.join(work, "blas.c")
    with open(src, "w") as f:
        f.write("int cublas12_marker(void){return 12;}\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", os.path.join(work, "libcublas.so.12"),
                    "-Wl,-soname,libcublas.so.12", src], check=True)
    ext = os.path.join(work, "mixed.so")
    subprocess.run([fx.NVCC, "-shared", "-Xcompiler", "-fPIC", "--cudart=shared", "-o", ext,
                    os.path.join(fx.WORK, "k.cu")] + fx.gencode(("90", "sm")) +
                   ["-L" + work, "-l:libcublas.so.12", "-Xlinker", "--no-as-needed"], check=True,
                   capture_output=True)
    llp = work + ":/usr/local/cuda/lib64"
    rc, out, err = fx.run(["why", "--json", "--process", drv, "--ld-library-path", llp, "--gpu", "sm_120",
                           "--driver", "580.65.06", ext])
    j = json.loads(out) if out.startswith("{") else {}
    ids = [f["id"] for f in j.get("findings", [])]
    t.ok(j.get("loads") is True, "why: the mixed extension loads", out + err)
    t.ok("cuda-major-mismatch" in ids, "why: cuda-major-mismatch, CUDA 12 cuBLAS beside the CUDA 13 runtime", ids)
    mm = [f for f in j.get("findings", []) if f["id"] == "cuda-major-mismatch"]
    if mm:
        majors = sorted(g["cuda_major"] for g in mm[0]["majors"])
        t.ok(majors == [12, 13], "cuda-major-mismatch: both majors with their objects", mm[0])
    t.ok("gpu-arch-missing" in ids, "why --gpu: the target's kernels are judged (sm_90 on 12.0)", ids)
    t.ok(rc == 0, "why: CUDA findings do not change the load verdict's exit status", rc)
    rc, out, err = fx.run(["why", "--process", drv, "--ld-library-path", llp, "--no-such", ext])
    rc, out, err = fx.run(["why", "--process", drv, "--ld-library-path", llp, ext],
                          env={"PATH": "/usr/bin:/bin"})
    if not os.path.exists("/proc/driver/nvidia/version"):
        t.ok("gpu      none known" in out and "not checked" in out,
             "why without --gpu and without a driver: says the GPU was not checked", out + err)
    rc, out, err = fx.run(["why", "--gpu", "sm_999x", ext])
    t.ok(rc == 2, "why --gpu with a name abiscope does not know is a usage error", out + err)
    sm100 = os.path.join(fx.WORK, "site/sgl_kernel/sm100/common_ops.abi3.so")
    rc, out, err = fx.run(["why", "--json", "--process", drv, "--gpu", "H100", sm100])
    j = json.loads(out) if out.startswith("{") else {}
    t.ok("gpu-variant-not-loaded" in [f["id"] for f in j.get("findings", [])],
         "why on sm100/ for an H100: says the package loads sm90/ there", out + err)


def check_cases():
    """check: modules that import are judged on the GPU, variant folders honoured."""
    site = os.path.join(fx.WORK, "site")
    rc, out, err = fx.run(["check", "--json", "--libraries", "--no-driver", "--gpu", "sm_103", site])
    j = json.loads(out) if out.startswith("{") else {}
    mods = [m for d in j.get("environments", [{}])[0].get("distributions", []) for m in d["modules"]]
    bad = [m["path"] for m in mods if m.get("gpu_fails")]
    t.ok(rc == 1 and len(bad) == 1 and "/sm100/" in bad[0] and j["summary"]["failing_on_gpu"] == 1,
         "check --gpu sm_103: sm100/ imports but has no kernel image; sm90/ is not judged", out + err)
    rc, out, err = fx.run(["check", "--libraries", "--no-driver", "--gpu", "sm_103", "--color", "never", site])
    t.ok("1 would fail on the GPU" in out and "no kernel image for sm_103" in out,
         "check text: the module imports and fails on the GPU, and why", out + err)
    for gpu in ("sm_90", "sm_120"):
        rc, out, err = fx.run(["check", "--json", "--libraries", "--no-driver", "--gpu", gpu, site])
        j = json.loads(out) if out.startswith("{") else {}
        t.ok(rc == 0 and j.get("summary", {}).get("failing_on_gpu") == 0,
             "check --gpu %s: the variant the package loads there has kernels for it" % gpu, out + err)


def fake_nvcc(release, build, archs):
    """A CUDA_HOME (fx.WORK/cuda-RELEASE) whose bin/nvcc, compiled here from C,
    holds the strings abiscope reads from a real one: the release line and
    the compute_XX names it can target."""
    home = os.path.join(fx.WORK, "cuda-" + release)
    os.makedirs(os.path.join(home, "bin"), exist_ok=True)
    src = os.path.join(home, "nvcc.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\nconst char *v = "Cuda compilation tools, release %s, %s";\n'
                'const char *arch[] = {%s, 0};\n'
                'int main(void){ puts(v); return arch[0] == 0; }\n' % (release, build,
                                                                      ", ".join('"%s"' % a for a in archs)))
    subprocess.run([os.environ.get("CC", "cc"), "-O0", "-o", os.path.join(home, "bin", "nvcc"), src], check=True)
    return home


def toolkit_cases():
    hb = fx.path("hopper_blackwell")
    # the real toolkit: CUDA 13 dropped Volta
    rc, j = cuda_json("--gpu", "V100", hb, env={"CUDA_HOME": "/usr/local/cuda", "PATH": "/usr/bin:/bin"})
    f = [x for x in findings(j, "toolkit-too-old-for-gpu") if x["object"].startswith("/usr/local/cuda")]
    t.ok(f and f[0]["reason"] == "cannot-target" and f[0]["release"] == "13.0" and f[0]["last_release"] == "12.9",
         "toolkit-too-old-for-gpu: nvcc 13.0 cannot compile for sm_70 (dropped after 12.9)", findings(j))
    rc, j = cuda_json("--gpu", "sm_120", hb, env={"CUDA_HOME": "/usr/local/cuda", "PATH": "/usr/bin:/bin"})
    t.ok(not findings(j, "toolkit-too-old-for-gpu"), "nvcc 13.0 names compute_120: no toolkit finding",
         findings(j, "toolkit-too-old-for-gpu"))
    # an older nvcc, compiled here: its release string, and no compute_120
    home = fake_nvcc("12.6", "V12.6.85", ("compute_75", "compute_80", "compute_90"))
    rc, j = cuda_json("--gpu", "RTX 5090", hb, env={"CUDA_HOME": home, "PATH": "/usr/bin:/bin"})
    f = [x for x in findings(j, "toolkit-too-old-for-gpu") if x["object"].startswith(home)]
    t.ok(f and f[0]["release"] == "12.6" and f[0]["first_release"] == "12.8" and f[0]["toolchain"] ==
         "$CUDA_HOME/bin/nvcc", "toolkit-too-old-for-gpu: $CUDA_HOME nvcc 12.6 cannot target sm_120", findings(j))
    rc, j = cuda_json("--gpu", "H100", hb, env={"CUDA_HOME": home, "PATH": "/usr/bin:/bin"})
    t.ok(not [x for x in findings(j, "toolkit-too-old-for-gpu") if x["object"].startswith(home)],
         "the same nvcc names compute_90: fine for H100", findings(j))
    # 12.8 can target sm_120, but flashinfer refuses SM 12.x below 12.9 (a guess: flashinfer may not be used)
    home = fake_nvcc("12.8", "V12.8.93", ("compute_90", "compute_100", "compute_120"))
    rc, j = cuda_json("--gpu", "sm_120", hb, env={"CUDA_HOME": home, "PATH": "/usr/bin:/bin"})
    f = [x for x in findings(j, "toolkit-too-old-for-gpu") if x["object"].startswith(home)]
    t.ok(f and f[0]["reason"] == "flashinfer-requires-12.9" and f[0]["guess"] is True,
         "nvcc 12.8 on SM 12.x: flashinfer's 12.9 rule, flagged as a guess", findings(j))


def hostile_cases():
    work = os.path.join(fx.WORK, "hostile")
    os.makedirs(work, exist_ok=True)
    data = open(fx.path("raw_fatbin"), "rb").read()
    trunc = os.path.join(work, "trunc.fatbin")
    with open(trunc, "wb") as f:
        f.write(data[:len(data) // 2])
    fifo = os.path.join(work, "fifo.so")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    rc, j = cuda_json(trunc, fifo, fx.path("plain"))
    o = obj(j, "trunc.fatbin")
    t.ok(o and o["problem"] and o["problem"]["offset"] == 0 and "past the end" in o["problem"]["message"],
         "a truncated fatbin: the problem with its offset", o)
    t.ok(obj(j, "plain.so") is not None, "the scan goes on after a bad file", j)
    t.ok(rc == 3 and any("fifo.so" in u for u in j.get("unreadable", [])), "a FIFO is not read, exit 3", j)
    rc, out, err = fx.run(["cuda", "--gpu", "nonsense-gpu", fx.path("plain")])
    t.ok(rc == 2 and "names no GPU" in err, "cuda --gpu with an unknown name is a usage error", out + err)


def main():
    probe_cases()
    errors = fx.build_all()
    if errors:
        why = "nvcc not found" if errors == ["nvcc not found"] else "nvcc failed: " + errors[0]
        for name in ("listing", "verdicts", "variants", "why", "check", "toolkits", "hostile input"):
            t.skip("cuda fixtures: " + name, why)
    else:
        listing_cases()
        verdict_cases()
        future_ptx_cases()
        variant_cases()
        why_cases()
        check_cases()
        toolkit_cases()
        hostile_cases()
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
