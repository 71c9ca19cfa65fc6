"""Every --json output the whole suite produced, against its schema.

tests/run.sh puts a recording wrapper in front of the binary under test
(ABISCOPE): each run with --json leaves its arguments, its exit status and
its standard output under CORPUS/N/.  After every other suite has run, this
checks each of them: the output is one JSON document, the command's
docs/schema/COMMAND.vN.schema.json (N: the document's "schema", 1 without
one) validates it, and no document is dropped for lack of a schema.  So the
schemas are held to every kind of input the tests have (broken ELF files,
pastes, snapshots, wheels, hosts), not to one sample per command.

    python3 tests/schema/corpus.py CORPUS

A run that is not a report is left out, and counted: --help, a usage error
(exit 2), -qq (nothing on standard output, by design), an input that could
not be read (exit 3 with nothing on standard output: the error is on
standard error), or an output cut short by the test itself (killed by a
signal).  Anything else on standard output must be one JSON document.
Identical documents of the same command are validated once.
"""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import samples  # noqa: E402

jsonschema = samples.debian_module("jsonschema",
                                   "ok - --json corpus # SKIP no jsonschema module (apt: python3-jsonschema)")

SCHEMAS = os.path.join(samples.TOP, "docs", "schema")


def commands():
    return sorted(n.split(".v")[0] for n in os.listdir(SCHEMAS) if n.endswith(".schema.json"))


def load_run(d):
    with open(os.path.join(d, "args"), "rb") as f:
        args = [a.decode("utf-8", "replace") for a in f.read().split(b"\0")[:-1]]
    try:
        with open(os.path.join(d, "status")) as f:
            status = int(f.read().strip() or -1)
    except (OSError, ValueError):
        status = None	# the wrapper was killed before the command ended
    with open(os.path.join(d, "out"), "rb") as f:
        out = f.read()
    return args, status, out


def command_of(args, known):
    """The command: the first argument that names one (options may come before it)."""
    for a in args:
        if a in known:
            return a
        if not a.startswith("-"):
            return None
    return None


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("not ok - --json corpus: no corpus folder given (tests/run.sh records it)")
        return 1
    corpus = sys.argv[1]
    known = set(commands()) | {"help", "completion"}
    validators = {}
    report = samples.Tap()
    left_out = {"help": 0, "usage error": 0, "-qq": 0, "unreadable input": 0, "cut short": 0}
    seen = set()
    per_command = {}
    failures = {}
    for name in sorted(os.listdir(corpus), key=lambda n: (len(n), n)):
        d = os.path.join(corpus, name)
        if not os.path.isfile(os.path.join(d, "args")):
            continue
        args, status, out = load_run(d)
        cmd = command_of(args, known)
        if "--help" in args or "-h" in args or cmd in ("help", "completion"):
            left_out["help"] += 1
            continue
        if status == 2 or cmd is None:
            left_out["usage error"] += 1
            continue
        if status is None or status > 128:
            left_out["cut short"] += 1
            continue
        if sum(len(a) - 1 if a.strip("q") == "-" else 1 if a == "--quiet" else 0 for a in args) >= 2:
            left_out["-qq"] += 1
            continue
        if status == 3 and not out.strip():
            left_out["unreadable input"] += 1
            continue
        what = "%s %s" % (cmd, " ".join(a if len(a) < 60 else a[:57] + "..." for a in args[1:])[:300])
        key = (cmd, hashlib.sha256(out).hexdigest())
        if key in seen:
            continue
        seen.add(key)
        try:
            doc = json.loads(out)
        except ValueError as e:
            failures.setdefault((cmd, "prints one JSON document"), []).append(
                "%s (exit %d): %s; output starts %r" % (what, status, e, out[:80]))
            continue
        if not isinstance(doc, dict):
            failures.setdefault((cmd, "prints one JSON object"), []).append(what)
            continue
        version = doc.get("schema", 1)
        schema = os.path.join(SCHEMAS, "%s.v%d.schema.json" % (cmd, version))
        if not os.path.exists(schema):
            failures.setdefault((cmd, "has a schema for every version it prints"), []).append(
                "%s: no %s" % (what, os.path.basename(schema)))
            continue
        if schema not in validators:
            with open(schema) as f:
                validators[schema] = jsonschema.Draft202012Validator(json.load(f))
        errs = sorted(validators[schema].iter_errors(doc), key=lambda e: list(e.absolute_path))
        per_command[cmd] = per_command.get(cmd, 0) + 1
        if errs:
            e = errs[0]
            failures.setdefault((cmd, "validates against %s" % os.path.basename(schema)), []).append(
                "%s (exit %d): %s: %s%s" % (what, status, "/".join(str(p) for p in e.absolute_path) or "(top)",
                                            e.message[:200], " (+%d more)" % (len(errs) - 1) if len(errs) > 1 else ""))
    total = sum(per_command.values())
    report(total > 0, "the suite's --json outputs were recorded (%d distinct documents)" % total)
    for cmd in sorted(set(per_command) | {c for c, _ in failures}):
        bad = {k[1]: v for k, v in failures.items() if k[0] == cmd}
        n = per_command.get(cmd, 0)
        if not bad:
            report(True, "%s --json: all %d distinct outputs of the suite validate" % (cmd, n))
        for rule, cases in sorted(bad.items()):
            report(False, "%s --json %s: %d of the suite's outputs do not" % (cmd, rule, len(cases)),
                   "\n".join(cases[:10]))
    print("# left out: %s" % ", ".join("%d %s" % (v, k) for k, v in left_out.items()))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
