"""The fix oracle's own logic (tests/field/fixoracle.py), without any env:
the recipes of fixcases.toml, reading a fix line as the command a user
would type, reading the JSON's plan and fix_actions, the real import as
units, and the verdict on an applied fix.  Runs in `make test` (SLOW=0 too);
the fix oracle itself runs on real envs by `make field-fixes`."""
import copy
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fixoracle as F  # noqa: E402
from fieldlib import Tap  # noqa: E402

t = Tap()

# ---- recipes
cases = F.load_cases()
t.ok(len(cases) >= 40, "fixcases.toml: at least 40 broken envs", len(cases))
shapes = {c["shape"] for c in cases}
want = {"stacked", "copied", "unregistered", "false-cuda-major", "stale-metadata", "conflict", "system-python",
        "missing-dependency", "multi-python", "matrix"}
t.ok(want <= shapes, "fixcases.toml: every shape of issue 24 has a case", sorted(want - shapes))
import build_envs  # noqa: E402
manifest = build_envs.manifest()
t.ok(all(c["base"] == "chroot:deb12" or c["base"].partition(":")[2] in manifest for c in cases)
     and all(op["from"] in manifest for c in cases for op in c.get("ops", []) if op["op"] == "copy-in")
     and all(c["matrix"] in manifest for c in cases if c.get("matrix")),
     "fixcases.toml: every base, copy source and matrix env is a manifest.toml env (or the Debian root)")
bad = {"name": "x", "shape": "s", "base": "env:t2.9",
       "ops": [{"op": "remove", "paths": ["../../etc"]}, {"op": "frob"}, {"op": "pip-install"}]}
errs = F.validate(bad)
t.ok(any("leaves the copy" in e for e in errs) and any("unknown op" in e for e in errs)
     and any("without requirements" in e for e in errs), "validate: a path out of the copy, an unknown op, "
     "a pip-install without requirements are refused", errs)
t.ok(F.validate({"name": "y", "shape": "s", "base": "chroot:deb12",
                 "ops": [{"op": "pip-install", "requirements": ["x"]}]}) != [],
     "validate: pip-install is no recipe operation in the Debian root (pip refuses there)")
t.ok(F.validate(cases[0]) == [], "validate: a real recipe passes")
t.ok(any("no exact pin" in e for e in F.validate({"name": "z", "shape": "s", "base": "env:t2.12",
                                                   "ops": [{"op": "dist-info-of", "requirement": "torch>=2.5"}]})),
     "validate: dist-info-of takes one exact release (the stale folder of that release)")
import tempfile  # noqa: E402
with tempfile.TemporaryDirectory() as tmp:
    whl = F.multipython_wheel("mp_t", os.path.join(tmp, "w"))
    F.keep_dist_info(whl, os.path.join(tmp, "keep"))
    kept = sorted(os.path.relpath(os.path.join(d, f), os.path.join(tmp, "keep"))
                  for d, _, fs in os.walk(os.path.join(tmp, "keep")) for f in fs)
    t.ok(kept == ["mp_t-1.0.dist-info/" + f for f in ("INSTALLER", "METADATA", "RECORD", "WHEEL")],
         "dist-info-of: only the wheel's .dist-info folder is kept (with pip's INSTALLER), not its modules", kept)

# ---- a fix line read as a command (the baseline, before the JSON had actions)
P = "/e/bin/python"
a = F.parse_fix_text("pip install nvidia-cuda-nvrtc-cu12==12.8.93 (the version torch 2.9.1 pins for CUDA 12; "
                     "another nvidia-cuda-nvrtc-cu12 release of the same CUDA major works too)", P)
t.ok(len(a) == 1 and a[0]["requirements"] == ["nvidia-cuda-nvrtc-cu12==12.8.93"] and a[0]["python"] == P,
     "text: the pin, not the prose after it", a)
a = F.parse_fix_text("pip install torch==2.11.0, or a deep_gemm built for torch 2.12.1+cu130", P)
t.ok(a and a[0]["requirements"] == ["torch==2.11.0"], "text: an 'or' fix after the comma is not installed", a)
a = F.parse_fix_text("reinstall PyYAML (pip install --force-reinstall --no-deps PyYAML==6.0)", P)
t.ok(a and a[0]["force_reinstall"] and a[0]["no_deps"] and a[0]["requirements"] == ["PyYAML==6.0"],
     "text: --force-reinstall --no-deps kept, the closing parenthesis dropped", a)
a = F.parse_fix_text("pip install torch==2.9.1 torchaudio==2.9.1 --index-url https://download.pytorch.org/whl/cu128", P)
t.ok(a and a[0]["index_url"].endswith("/cu128") and a[0]["requirements"] == ["torch==2.9.1", "torchaudio==2.9.1"],
     "text: two pins and an index after them", a)
a = F.parse_fix_text("uninstall nvidia-curand, which leaves the CUDA 13 copy in the way", P)
t.ok(a and a[0]["action"] == "pip-uninstall" and a[0]["distributions"] == ["nvidia-curand"],
     "text: 'uninstall NAME, which ...' is a pip uninstall of NAME alone", a)
a = F.parse_fix_text("rebuild (or patch) the extension with RUNPATH $ORIGIN/../../torchaudio/lib, or put "
                     "/e/lib/python3.11/site-packages/torchaudio/lib on LD_LIBRARY_PATH before importing it", P)
t.ok(a and a[0]["action"] == "add-library-path" and a[0]["how"] == "LD_LIBRARY_PATH"
     and a[0]["path"].endswith("torchaudio/lib"), "text: 'put DIR on LD_LIBRARY_PATH'", a)
t.ok(F.parse_fix_text("install the package that provides libX.so", P) == []
     and F.parse_fix_text("rebuild the extension against this torch", P) == [],
     "text: advice without a command is no action")
t.ok(F.said_partial("pip install torch==2.9.1; then: pip install sgl-kernel==0.3.21")
     and not F.said_partial("pip install torch==2.9.1"), "text: 'then:' says the fix is partial")

# ---- the JSON: the plan and fix_actions come before any text
report = {"environments": [{"python": P, "distributions": [
    {"name": "sgl-kernel", "modules": [
        {"path": "/e/sp/sgl_kernel/a.so", "status": "fails", "findings": [3, 4]},
        {"path": "/e/sp/sgl_kernel/b.so", "status": "ok", "findings": []},
        {"path": "/e/sp/sgl_kernel/c.so", "status": "fails", "findings": [7]}]},
    {"name": "xformers", "modules": [{"path": "/e/sp/xformers/_C.so", "status": "fails", "findings": [9]}]}]}],
    "causes": [
        {"index": 0, "severity": "error", "id": "symbol-not-found", "findings": [3, 4, 7], "roots": [3],
         "fix": "pip install torch==2.9.1",
         "fix_actions": [{"action": "pip-install", "python": P, "requirements": ["torch==2.9.1"]}]},
        {"index": 1, "severity": "error", "id": "library-not-installed", "findings": [9], "roots": [9],
         "fix": "pip install nvidia-cuda-runtime-cu12==12.8.90"},
        {"index": 2, "severity": "note", "id": "gpu-not-checked", "findings": [0], "fix": "pass --gpu"},
        {"index": 3, "severity": "error", "id": "library-not-installed", "driver": True, "findings": [1]}],
    "plan": {"actions": [{"action": "pip-install", "python": P, "requirements": ["torch==2.9.1", "xformers==0.0.33"]}],
             "fixes": [0], "remaining": [1], "checked": "model", "command": "pip install ..."}}
fx = F.fixes_of(report)
t.ok([f["label"] for f in fx] == ["plan", "cause 1", "cause 2"], "fixes: the plan, then each error or "
     "warning cause; notes and the driver's own cause are not fixes to apply", [f["label"] for f in fx])
t.ok(fx[0]["partial_said"] and fx[0]["remaining"] == [1], "fixes: a plan with remaining causes said it is partial")
t.ok(fx[1]["source"] == "json" and fx[1]["actions"][0]["requirements"] == ["torch==2.9.1"],
     "fixes: a cause's fix_actions are taken from the JSON")
t.ok(fx[2]["source"] == "text" and fx[2]["actions"][0]["requirements"] == ["nvidia-cuda-runtime-cu12==12.8.90"],
     "fixes: a cause without fix_actions is read from its text")
fb = F.fixes_of(report, baseline_text=True)
t.ok(fb[1]["source"] == "text", "fixes: --baseline reads the text even where JSON actions exist")
r2 = copy.deepcopy(report)
r2["causes"][1]["fix_actions"] = []
t.ok(F.fixes_of(r2)[2]["actions"] == [], "fixes: fix_actions [] (advice only) is no action, not the text")
t.ok(F.cause_targets(report, 0) == {"/e/sp/sgl_kernel/a.so", "/e/sp/sgl_kernel/c.so"}
     and F.cause_targets(report, 1) == {"/e/sp/xformers/_C.so"},
     "targets: the failing entries whose findings are the cause's, not the working ones")

# ---- the real import as units
oracle = {"torch": {"ok": True},
          "modules": {
              "/e/sp/torch/_C.so": {"module": "torch._C", "package": "torch", "package_error": None, "import": None},
              "/e/sp/torch/lib/libc10.so": {"module": "torch.lib.libc10", "package": "torch", "package_error": None,
                                            "import": "ImportError: dynamic module does not define module export "
                                                      "function (PyInit_libc10)"},
              "/e/sp/sgl_kernel/a.so": {"module": "sgl_kernel.a", "package": "sgl_kernel",
                                        "package_error": "ImportError: x", "import": "ImportError: undefined symbol"},
              "/e/sp/sgl_kernel/sm90.so": {"module": "sgl_kernel.sm90", "package": "sgl_kernel",
                                           "package_error": "ImportError: x", "import": "crashed: signal 6"},
              "/e/sp/slow/m.so": {"module": "slow.m", "package": "slow", "package_error": None,
                                  "import": "crashed: timeout after 120s"}},
          "libraries": {"/e/sp/xformers/_C.so": {"package": "xformers", "package_error": None, "tried_by_import": True,
                                                 "dlopen": "libcudart.so.12: cannot open shared object file"},
                        "/e/sp/nvidia/nvshmem/lib/nvshmem_transport_ucx.so.3": {
                            "package": "nvidia", "package_error": None, "tried_by_import": False,
                            "mapped_by_import": False, "dlopen": "libucp.so.0: cannot open shared object file"}}}
u, where = F.units(oracle, "/e")
t.ok(u.get("mod:torch._C") is True and "mod:torch.lib.libc10" not in u, "units: a library with a module "
     "suffix is no module", u)
t.ok(u.get("mod:sgl_kernel.a") is False and u.get("mod:sgl_kernel.sm90") == "crash" and "mod:slow.m" not in u,
     "units: a failure, a crash (never working), a timeout (not measured)", u)
t.ok(u.get("pkg:sgl_kernel") is False and u.get("pkg:torch") is True and u.get("import torch") is True,
     "units: the package's import and torch's", u)
t.ok(u.get("lib:sp/xformers/_C.so") is False and where[os.path.realpath("/e/sp/xformers/_C.so")] ==
     "lib:sp/xformers/_C.so", "units: a library its package loads, by its path in the copy", where)
t.ok(not any("nvshmem" in k for k in u), "units: a library the import neither loads nor tries is no unit", u)

# ---- the verdict
before = {"import torch": True, "mod:torch._C": True, "mod:a.x": False, "mod:a.y": False, "pkg:a": False,
          "mod:b.z": True, "pkg:b": True, "mod:c.w": "crash"}
targets = {"mod:a.x", "mod:a.y", "mod:c.w"}
ok_after = dict(before, **{"mod:a.x": True, "mod:a.y": True, "pkg:a": True})
t.ok(F.judge(before, ok_after, targets, False)["verdict"] == "right", "judge: right when every target imports")
r = F.judge(before, dict(ok_after, **{"mod:b.z": False}), targets, False)
t.ok(r["verdict"] == "harmful" and r["broken"] == ["mod:b.z"], "judge: harmful when a module that imported "
     "no longer does, even if the targets are fixed", r)
gone = {k: v for k, v in ok_after.items() if not k.startswith(("mod:b", "pkg:b"))}
t.ok(F.judge(before, gone, targets, False)["verdict"] == "harmful", "judge: a fix that removes a package "
     "that imported is harmful")
moved = {k: v for k, v in ok_after.items() if k != "mod:a.y"}
t.ok(F.judge(before, moved, targets, False)["verdict"] == "right", "judge: a module whose file the new release "
     "does not ship counts by its package's import")
half = dict(before, **{"mod:a.x": True})
t.ok(F.judge(before, half, targets, False)["verdict"] == "partial-unsaid"
     and F.judge(before, half, targets, True)["verdict"] == "partial-said", "judge: partial, said or not")
t.ok(F.judge(before, before, targets, False)["verdict"] == "wrong", "judge: wrong when nothing is fixed")
t.ok(F.judge(before, before, targets, True)["verdict"] == "wrong", "judge: wrong when nothing is fixed, even when "
     "abiscope said some would remain (a partial fix fixes some)")
r = F.judge(before, dict(ok_after, **{"mod:a.y": "crash"}), targets, False)
t.ok(r["verdict"] == "right" and r["crashed"] == ["mod:a.y"], "judge: a target the oracle's child dies in after "
     "the fix is not measured, counted neither way", r)
r = F.judge(before, dict(ok_after, **{"mod:b.z": "crash"}), targets, False)
t.ok(r["verdict"] == "harmful", "judge: a module that imported and crashes after the fix is broken", r)
t.ok(F.judge(before, before, {"mod:b.z", "mod:c.w"}, False)["verdict"] == "not-failing",
     "judge: a cause whose targets really import (or crash) concerns nothing failing")
t.ok(F.judge(before, {}, targets, False, has_actions=False)["verdict"] == "no-action"
     and F.judge(before, {}, targets, False, applied=False)["verdict"] == "not-applied",
     "judge: no action; an action this machine cannot carry out")

# ---- applying: paths moved to the copy, indexes this machine cannot reach
acts = [{"action": "remove-path", "path": "/w/broken/env/lib/x.dist-info", "command": "rm -r '/w/broken/env/lib/x'"}]
t.ok(F.rewrite(acts, "/w/broken", "{ENV}")[0]["path"] == "{ENV}/env/lib/x.dist-info"
     and F.rewrite(F.rewrite(acts, "/w/broken", "{ENV}"), "{ENV}", "/w/fix")[0]["command"] == "rm -r '/w/fix/env/lib/x'",
     "rewrite: every path into the copy")
t.ok(F.pypi_requirements(["torch==2.9.1", "torchaudio==2.9.1", "torchvision==0.24.1"],
                         "https://download.pytorch.org/whl/cu128") == ["torch==2.9.1", "torchaudio==2.9.1",
                                                                       "torchvision==0.24.1"],
     "index: PyPI's torch 2.9 is the cu128 build")
t.ok(F.pypi_requirements(["torch==2.9.1"], "https://download.pytorch.org/whl/cu130") is None
     and F.pypi_requirements(["xformers==0.0.33"], "https://download.pytorch.org/whl/cu128") is None
     and F.pypi_requirements(["torch==2.12.1+cu128"], "https://download.pytorch.org/whl/cu128") is None,
     "index: another variant than PyPI's, or a package off the table, is not applied")
t.ok(F.pypi_requirements(["x==1"], None) == ["x==1"], "index: none is PyPI")

# ---- the table's counts
res = [{"case": "a", "shape": "s", "failing_before": ["mod:a.x"], "lines": {"driver": 30}, "causes": [],
        "fixes": [{"label": "cause 1", "severity": "error", "verdict": "wrong", "source": "text", "actions": [1]},
                  {"label": "cause 2", "severity": "warning", "verdict": "harmful", "source": "text", "actions": [1]}]},
       {"case": "b", "shape": "s", "failing_before": ["mod:p.x", "mod:q.y", "pkg:r"], "lines": {"driver": 50},
        "causes": [],
        "fixes": [{"label": "plan", "severity": None, "verdict": "right", "source": "plan", "actions": [1]},
                  {"label": "cause 1", "severity": "error", "verdict": "no-action", "source": "json", "actions": []}]}]
s = F.summarize(res)
t.ok(s["first"]["wrong"] == 1 and s["first"]["right"] == 1 and s["harmful_any"] == 1
     and s["causes"]["no-action"] == 1 and s["lines_3fail"] == [("b", 50)],
     "summary: the plan is the first fix when there is one; harm counted anywhere; 3 failing packages", s)

sys.exit(1 if t.failed else 0)
