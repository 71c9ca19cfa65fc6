#!/usr/bin/env python3
"""Field test: sgl-kernel built for torch 2.9 beside torch 2.14 (PyPI wheels).

Environments from bench/prepare_envs.sh:
  sgl-kernel-break  torch 2.14.1 (cu130) + sgl-kernel 0.3.21 (built for torch
                    2.9, CUDA 12) + the CUDA 12 runtime/nvrtc/cuBLAS wheels.
  torch-cu130       torch 2.14.1 (cu130) + sglang-kernel 0.4.10 (built for it).

In each, the real loader (the env's python: import torch, then dlopen of
sgl_kernel/sm100/common_ops.abi3.so with RTLD_NOW) and `abiscope why` (with
import torch as preloads) must agree on whether it loads and on the exact
dlerror().  With the CUDA 12 wheels' directories on LD_LIBRARY_PATH and a
driver stub built from source, the break is the famous one: undefined
symbol c10::cuda::c10_cuda_check_implementation(int, ..., int, bool),
which torch >= 2.10 exports with an unsigned line number.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldlib as F  # noqa: E402

SYMBOL = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"


def case(t, envname, expect_loads):
    name = f"{envname}: sgl_kernel sm100 common_ops"
    why_not = F.unavailable(envname)
    if why_not:
        t.skip(name, why_not)
        return
    venv = F.env(envname)
    sp = F.site_packages(venv)
    target = os.path.join(sp, "sgl_kernel", "sm100", "common_ops.abi3.so")
    with F.tempdir() as tmp:
        stub = F.stub_driver(tmp, [target])
        llp = ":".join([os.path.join(sp, "nvidia", d, "lib")
                        for d in ("cuda_runtime", "cuda_nvrtc", "cublas")
                        if os.path.isdir(os.path.join(sp, "nvidia", d, "lib"))] + [stub])
        loads, err = F.real_import_then_dlopen(venv, target, llp)
        g, c = F.torch_import_preloads(sp)
        pred = F.why(venv, target, preload_global=g, preload=c, ld_library_path=llp)
    t.ok(loads == expect_loads, f"{name}: the real loader {'loads' if loads else 'refuses'} it "
         "as expected", err)
    t.ok(pred["loads"] == loads, f"{name}: abiscope agrees on whether it loads",
         f"real: {err}\nabiscope: {pred.get('error')}")
    t.ok(pred.get("error") == err, f"{name}: abiscope predicts the exact dlerror()",
         f"real:     {err}\nabiscope: {pred.get('error')}")
    if not expect_loads:
        t.ok(err is not None and SYMBOL in err, f"{name}: the break is the c10 int->unsigned "
             "symbol", err)
        first = pred["findings"][0] if pred.get("findings") else {}
        t.ok(first.get("id") == "undefined-symbol" and SYMBOL in first.get("symbol", ""),
             f"{name}: abiscope's first finding names the symbol", first)


def main():
    t = F.Tap()
    case(t, "sgl-kernel-break", False)
    case(t, "torch-cu130", True)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
