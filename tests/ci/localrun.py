#!/usr/bin/env python3
"""Runs a GitHub Actions workflow or a GitLab CI pipeline here, as written.

    unshare --mount python3 tests/ci/localrun.py github|gitlab FILE.yml \\
        --image debian:bookworm=ROOT --out DIR

Neither runner can run here (act needs a docker daemon and Docker Hub;
gitlab-runner is not in Debian), so this executes the YAML's own steps the
way those runners do, in the job's container image made another way: each
job runs in a chroot of an overlay over ROOT (a debootstrap'd Debian root,
left untouched), with /proc and /dev, the host's network and resolv.conf,
the repository's files (git ls-files: tracked and untracked-not-ignored) in
the runner's workspace path, and the runner's environment variables (with
--ca, this machine's CA bundle too, for a network that intercepts TLS):

  GitHub: jobs in `needs` order; a `run:` step is `bash --noprofile --norc
    -eo pipefail FILE` in the workspace /__w/abiscope/abiscope; `if:` may be
    absent or always(); after a failing step only always() steps run.  The
    actions it knows: actions/checkout (the files), actions/upload-artifact
    and actions/download-artifact (a folder per artifact name, the least
    common ancestor of the files as its root), mikepenz/action-junit-report
    (reads the report; like the action, it fails nothing by default).
  GitLab: jobs by stage, then file order; `script:` lines as one `bash
    -eo pipefail` script in /builds/abiscope/abiscope; artifacts of the jobs
    in `needs` (else of every earlier stage) unpacked there first;
    `artifacts: paths` (on success, or `when: always`) and `reports: junit`
    (read back) kept.

Anything else in the YAML (another image, another action, an expression) is
an error, not ignored.  Must run as root in a mount namespace of its own
(unshare --mount): the mounts go away with it.  Prints a line per step and
writes DIR/result.json: for each job its status, each step's exit status,
the artifacts and the JUnit reports (tests, failures, errors, skipped).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# where --ca puts the CA bundle of this machine's network in a job (PIP_CERT)
CA = "/etc/localrun-ca.crt"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Unsupported(Exception):
    pass


def sh(*args, **kw):
    subprocess.run(args, check=True, **kw)


class Job:
    """One job's container: an overlay over the image's root, mounted."""

    def __init__(self, out, name, image_root, workspace, ca=None):
        self.dir = os.path.join(out, "jobs", name)
        self.root = os.path.join(self.dir, "root")
        self.ws = workspace
        for d in ("upper", "work", "root"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        sh("mount", "-t", "overlay", "overlay", "-o", "lowerdir=%s,upperdir=%s,workdir=%s" % (
            image_root, os.path.join(self.dir, "upper"), os.path.join(self.dir, "work")), self.root)
        sh("mount", "-t", "proc", "proc", os.path.join(self.root, "proc"))
        sh("mount", "--rbind", "/dev", os.path.join(self.root, "dev"))
        shutil.copy("/etc/resolv.conf", os.path.join(self.root, "etc/resolv.conf"))
        os.makedirs(self.host(self.ws), exist_ok=True)
        if ca:
            shutil.copy(ca, self.host(CA))
        self.log = open(os.path.join(self.dir, "log.txt"), "w")

    def host(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def checkout(self):
        files = subprocess.run(["git", "-C", TOP, "ls-files", "-z", "-co", "--exclude-standard"],
                               check=True, capture_output=True).stdout.decode().split("\0")
        for f in filter(None, files):
            src = os.path.join(TOP, f)
            if not os.path.lexists(src):
                continue  # deleted in the working tree
            dst = os.path.join(self.host(self.ws), f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)

    def run(self, script, env, shell):
        path = "/tmp/localrun-step.sh"
        with open(self.host(path), "w") as f:
            f.write(script if script.endswith("\n") else script + "\n")
        envl = ["%s=%s" % kv for kv in sorted(env.items())]
        cmd = ["chroot", self.root, "/usr/bin/env", "-i"] + envl + [
            "/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", self.ws] + shell + [path]
        self.log.write("$ %s\n%s\n" % (" ".join(shell), script))
        self.log.flush()
        p = subprocess.run(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        return p.returncode

    def close(self):
        self.log.close()
        subprocess.run(["umount", "-R", self.root], check=False)


def junit_counts(path):
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    c = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        for case in s.findall("testcase"):
            c["tests"] += 1
            c["failures"] += len(case.findall("failure"))
            c["errors"] += len(case.findall("error"))
            c["skipped"] += len(case.findall("skipped"))
    return c


def copy_matches(base, patterns, dest):
    """Copies what the glob patterns match under base into dest, relative to
    their least common ancestor (upload-artifact's layout); the paths."""
    matches = []
    for p in patterns:
        matches += sorted(glob.glob(os.path.join(base, p)))
    if not matches:
        return []
    lca = os.path.commonpath([os.path.dirname(m) if os.path.isfile(m) else m for m in matches])
    for m in matches:
        rel = os.path.relpath(m, lca)
        target = os.path.join(dest, rel)
        if os.path.isdir(m):
            shutil.copytree(m, target, dirs_exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(m, target)
    return [os.path.relpath(m, base) for m in matches]


def say(*a):
    print(*a, flush=True)


def base_env(ca):
    env = {"PATH": PATH, "CI": "true"}
    if ca:
        env["PIP_CERT"] = CA
    return env


def github(doc, images, out, ca):
    artifacts = os.path.join(out, "artifacts")
    ws = "/__w/abiscope/abiscope"
    jobs, done, order = doc["jobs"], set(), []
    while len(order) < len(jobs):
        ready = [n for n, j in jobs.items() if n not in done and set(j.get("needs", []) if isinstance(
            j.get("needs", []), list) else [j["needs"]]) <= done]
        if not ready:
            raise Unsupported("a cycle in needs")
        order.append(ready[0])
        done.add(ready[0])
    result = {}
    for name in order:
        j = jobs[name]
        image = j.get("container")
        if isinstance(image, dict):
            image = image.get("image")
        if image not in images:
            raise Unsupported("job %s: container %r is not one of --image" % (name, image))
        needs = j.get("needs", [])
        needs = needs if isinstance(needs, list) else [needs]
        if any(result[n]["status"] != "success" for n in needs):
            result[name] = {"status": "skipped", "steps": []}
            say("job %s: skipped (a job it needs failed)" % name)
            continue
        job = Job(out, name, images[image], ws, ca)
        env = dict(base_env(ca), GITHUB_ACTIONS="true", GITHUB_WORKSPACE=ws, HOME="/github/home",
                   RUNNER_TEMP="/__w/_temp", GITHUB_JOB=name)
        os.makedirs(job.host("/github/home"), exist_ok=True)
        os.makedirs(job.host("/__w/_temp"), exist_ok=True)
        failed, steps, junit = False, [], []
        for i, st in enumerate(j["steps"]):
            cond = st.get("if")
            if cond not in (None, "always()", "${{ always() }}"):
                raise Unsupported("job %s step %d: if: %s" % (name, i + 1, cond))
            label = st.get("name") or st.get("uses") or st["run"].splitlines()[0]
            if failed and cond is None:
                steps.append({"step": label, "status": "skipped"})
                say("  %s: %s: skipped" % (name, label))
                continue
            rc, note = 0, ""
            uses, w = st.get("uses"), st.get("with", {}) or {}
            if "run" in st:
                e = dict(env, **{k: str(v) for k, v in (st.get("env") or {}).items()})
                rc = job.run(st["run"], e, ["bash", "--noprofile", "--norc", "-eo", "pipefail"])
            elif uses.startswith("actions/checkout@"):
                job.checkout()
            elif uses.startswith("actions/upload-artifact@"):
                dest = os.path.join(artifacts, w["name"])
                got = copy_matches(job.host(ws), str(w["path"]).split(), dest)
                note = "%d file(s): %s" % (len(got), " ".join(got)) if got else "no files (a warning)"
            elif uses.startswith("actions/download-artifact@"):
                src = os.path.join(artifacts, w["name"])
                if not os.path.isdir(src):
                    rc, note = 1, "no artifact %s" % w["name"]
                else:
                    shutil.copytree(src, os.path.join(job.host(ws), w.get("path", ".")), dirs_exist_ok=True)
            elif uses.startswith("mikepenz/action-junit-report@"):
                reports = []
                for p in str(w["report_paths"]).split(","):
                    reports += glob.glob(os.path.join(job.host(ws), p.strip()))
                counts = [dict(junit_counts(r), file=os.path.relpath(r, job.host(ws))) for r in reports]
                junit.extend(counts)
                note = json.dumps(counts)
            else:
                raise Unsupported("job %s: uses %s" % (name, uses))
            steps.append({"step": label, "exit": rc, "note": note})
            say("  %s: %s: exit %d %s" % (name, label, rc, note))
            failed = failed or rc != 0
        job.close()
        result[name] = {"status": "failure" if failed else "success", "steps": steps, "junit": junit}
        say("job %s: %s" % (name, result[name]["status"]))
    return result


GITLAB_KEYS = {"stages", "variables", "default", "workflow", "include", "image", "services",
               "before_script", "after_script", "cache"}


def gitlab(doc, images, out, ca):
    ws = "/builds/abiscope/abiscope"
    stages = doc.get("stages", ["build", "test", "deploy"])
    jobs = [(n, j) for n, j in doc.items() if n not in GITLAB_KEYS and not n.startswith(".")]
    jobs.sort(key=lambda nj: stages.index(nj[1].get("stage", "test")))
    kept, result = {}, {}
    for name, j in jobs:
        unknown = set(j) - {"stage", "image", "script", "needs", "artifacts", "variables"}
        if unknown:
            raise Unsupported("job %s: %s" % (name, sorted(unknown)))
        image = j.get("image", doc.get("image"))
        if image not in images:
            raise Unsupported("job %s: image %r is not one of --image" % (name, image))
        stage = stages.index(j.get("stage", "test"))
        earlier = [n for n, jj in jobs if stages.index(jj.get("stage", "test")) < stage]
        needs = j.get("needs", earlier)
        if any(result.get(n, {}).get("status") != "success" for n in needs):
            result[name] = {"status": "skipped"}
            say("job %s: skipped (a job before it failed)" % name)
            continue
        job = Job(out, name, images[image], ws, ca)
        job.checkout()
        for n in needs:
            if n in kept:
                shutil.copytree(kept[n], job.host(ws), dirs_exist_ok=True)
        env = dict(base_env(ca), GITLAB_CI="true", CI_PROJECT_DIR=ws, CI_JOB_NAME=name, HOME="/root")
        env.update({k: str(v) for k, v in (doc.get("variables") or {}).items()})
        env.update({k: str(v) for k, v in (j.get("variables") or {}).items()})
        script = "\n".join(j["script"])
        rc = job.run(script, env, ["bash", "--noprofile", "--norc", "-eo", "pipefail"])
        say("  %s: script: exit %d" % (name, rc))
        status = "success" if rc == 0 else "failure"
        art = j.get("artifacts") or {}
        r = {"status": status, "exit": rc}
        if art and (status == "success" or art.get("when") == "always"):
            dest = os.path.join(out, "artifacts", name)
            for p in art.get("paths", []):
                for m in glob.glob(os.path.join(job.host(ws), p)):
                    rel = os.path.relpath(m, job.host(ws))
                    if os.path.isdir(m):
                        shutil.copytree(m, os.path.join(dest, rel), dirs_exist_ok=True)
                    else:
                        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
                        shutil.copy2(m, os.path.join(dest, rel))
            kept[name] = dest
            r["artifacts"] = sorted(os.path.relpath(os.path.join(d, f), dest)
                                    for d, _, fs in os.walk(dest) for f in fs)
            junit = (art.get("reports") or {}).get("junit")
            if junit:
                for p in [junit] if isinstance(junit, str) else junit:
                    for m in glob.glob(os.path.join(job.host(ws), p)):
                        r.setdefault("junit", []).append(dict(junit_counts(m), file=os.path.relpath(m, job.host(ws))))
            say("  %s: artifacts %s; junit %s" % (name, r["artifacts"], r.get("junit")))
        job.close()
        result[name] = r
        say("job %s: %s" % (name, status))
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["github", "gitlab"])
    ap.add_argument("file")
    ap.add_argument("--image", action="append", default=[], help="NAME=ROOT: the image's file system")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ca", help="a CA bundle this machine's network needs (a TLS-intercepting proxy): "
                    "copied into each job as %s, PIP_CERT names it" % CA)
    a = ap.parse_args()
    images = dict(i.split("=", 1) for i in a.image)
    with open(a.file) as f:
        doc = yaml.safe_load(f)
    os.makedirs(a.out, exist_ok=True)
    try:
        result = (github if a.kind == "github" else gitlab)(doc, images, a.out, a.ca)
    except Unsupported as e:
        print("localrun: not something this runner does: %s" % e, file=sys.stderr)
        return 2
    with open(os.path.join(a.out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
