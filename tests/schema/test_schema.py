"""The JSON Schemas in docs/schema/ against real --json outputs.

Every command that takes --json has a schema, each schema is valid JSON
Schema (2020-12), and the documents the commands print for the demo
environment, snapshots of it and a wheel made from it validate.  The
validator is the jsonschema package (Debian's python3-jsonschema, or PyPI's).
"""
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import samples  # noqa: E402

jsonschema = samples.debian_module("jsonschema",
                                   "ok - JSON Schemas # SKIP no jsonschema module (apt: python3-jsonschema)")

TOP = samples.TOP
ABISCOPE = os.environ.get("ABISCOPE", os.path.join(TOP, "abiscope"))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
SCHEMAS = os.path.join(TOP, "docs", "schema")
report = samples.Tap()


def version_of(cmd, doc):
    """A document's format version: "schema" (absent: 1), "version" in a snapshot file."""
    return doc.get("version", 1) if cmd == "snapshot-file" else doc.get("schema", 1)


def schema_for(cmd, version):
    with open(os.path.join(SCHEMAS, "%s.v%d.schema.json" % (cmd, version))) as f:
        return json.load(f)


def errors(schema, doc):
    v = jsonschema.Draft202012Validator(schema)
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message)
            for e in sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))]


def main():
    # every command whose --help offers --json has a schema
    usage = subprocess.run([ABISCOPE, "--help"], capture_output=True, text=True).stdout
    commands = [l.split()[0] for l in usage.split("commands:")[1].split("\n\n")[0].strip().splitlines() if l.startswith("  ")]
    for c in commands:
        h = subprocess.run([ABISCOPE, c, "--help"], capture_output=True, text=True).stdout
        if "  --json" in h:
            have = [n for n in os.listdir(SCHEMAS) if n.startswith(c + ".v")]
            report(bool(have), "%s --json has a schema (docs/schema/%s.vN.schema.json)" % (c, c))
    for name in sorted(os.listdir(SCHEMAS)):
        try:
            jsonschema.Draft202012Validator.check_schema(json.load(open(os.path.join(SCHEMAS, name))))
            report(True, "%s is a valid JSON Schema (2020-12)" % name)
        except jsonschema.SchemaError as e:
            report(False, "%s is a valid JSON Schema (2020-12)" % name, e)

    work = os.path.join(BUILD, "schema")
    os.makedirs(work, exist_ok=True)
    seen = {}
    for cmd, what, status, doc, stderr in samples.samples(ABISCOPE, work):
        if doc is None:
            report(False, "%s (%s): --json prints one JSON document" % (cmd, what), stderr)
            continue
        v = version_of(cmd, doc)
        errs = errors(schema_for(cmd, v), doc)
        report(not errs, "%s (%s, exit %d): the output validates against %s.v%d.schema.json" % (cmd, what, status, cmd, v),
               "\n".join(errs))
        seen.setdefault(cmd, doc)
        if cmd == "check" and "cannot tell" in what:
            seen["check cannot-tell"] = doc

    unsure = seen.pop("check cannot-tell", None)
    # the schemas check something: a document with a field removed or of the wrong type fails
    for cmd, doc in sorted(seen.items()):
        broken = copy.deepcopy(doc)
        key = "command" if "command" in broken else sorted(broken)[0]
        del broken[key]
        report(bool(errors(schema_for(cmd, version_of(cmd, doc)), broken)),
               "%s: a document without '%s' does not validate" % (cmd, key))
    if "check" in seen:
        broken = copy.deepcopy(seen["check"])
        broken["ok"] = "yes"
        report(bool(errors(schema_for("check", version_of("check", broken)), broken)), "check: 'ok' as a string does not validate")
        broken = copy.deepcopy(seen["check"])
        f = broken["findings"][0] if broken.get("findings") else None
        if f is not None:
            f["severity"] = "fatal"
            report(bool(errors(schema_for("check", version_of("check", broken)), broken)), "check: a finding of an unknown severity does not validate")
    report(unsure is not None and unsure["summary"]["cannot_tell"] == 1 and unsure["ok"] and
           any(m["status"] == "cannot-tell" and m["depends_on"]["line"] == 4
               for d in unsure["environments"][0]["distributions"] for m in d["modules"]),
           "check: the cannot-tell sample has one such module, with the call it depends on",
           unsure and unsure["summary"])
    if unsure is not None:
        broken = copy.deepcopy(unsure)
        for d in broken["environments"][0]["distributions"]:
            for m in d["modules"]:
                if m["status"] == "cannot-tell":
                    m["status"] = "maybe"
        report(bool(errors(schema_for("check", 2), broken)), "check: a module status outside the list does not validate")
    print("%d failed" % report.failed if report.failed else "all passed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
