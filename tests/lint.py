#!/usr/bin/env python3
"""The house rules that the build can check (docs/CodingGuidelines.md).

Run by `make lint` (and so by `make test`).  Each rule prints one line per
violation, `file:line: rule: what`, and the run ends with "lint: N
violations"; the exit status is 1 when there is any.  Exceptions are listed,
each with its reason, in tests/lint-exceptions.txt: `rule path[:function]
reason...`.  An exception that no longer matches anything is reported as
stale (a warning, so that fixing a violation never breaks the build).

Rules:
  library-prints   the library (src/ outside src/cli/) writes to stdout or
                   stderr, or reads the environment: it returns status and
                   diagnostics, the CLI renders them and passes settings in
                   (the build also enforces this: banned.h under
                   ABISCOPE_LIBRARY)
  disk-access      a file is opened, listed or stat()ed outside core/fs.c
  raw-bytes        mapped data is read with pointer arithmetic (`->data +`)
                   outside core/bytes.c
  file-length      a source file over 1,500 lines
  function-length  a function body over 150 lines
  layering         an include that points up the layers (core -> report ->
                   elf -> loader -> cxx/cuda -> diagnose -> pyenv -> host
                   -> cli)
  finding-id       a finding id that is not in data/findings.def, or one of
                   data/findings.def that docs/findings.md does not list
  banned           a function of src/core/banned.h used in tests/ or bench/
                   C code (src/ is checked by the compiler)
  test-hook        a test hook in src/ (an ABISCOPE_TEST... name, or a
                   function pointer named *_test_*): the release binary has
                   none; a test acts on abiscope from outside (a second
                   process, an LD_PRELOAD shim under tests/tools/preload/)
  writes           a call that writes, truncates, renames, removes or links
                   a file outside core/fs.c's fs_write_output (abiscope
                   writes only the files -o and --junit name)
"""
import os
import re
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FILE_MAX = 1500
FUNCTION_MAX = 150

# Which folders a folder of src/ may include from.  A folder always may
# include its own headers; src/scan.h (the context of one scan) sits just
# above elf/.
LAYERS = ["core", "report", "elf", "scan", "loader", ("cxx", "cuda"), "diagnose", "pyenv",
          "host", "advice", "cli"]


def layer_rank():
    rank = {}
    for i, entry in enumerate(LAYERS):
        for name in (entry if isinstance(entry, tuple) else (entry,)):
            rank[name] = i
    return rank


RANK = layer_rank()

PRINT_RE = re.compile(r"\b(printf|fprintf|vfprintf|puts|fputs|putchar|perror|stdout|stderr|"
                      r"getenv|secure_getenv|environ)\b")
DISK_RE = re.compile(r"\b(fopen|freopen|gzopen|gzdopen|opendir|fdopendir|stat|lstat|fstatat|"
                     r"zip_open|zip_source_file_create|open|openat|creat|readlink|readlinkat|access|faccessat|realpath|"
                     r"scandir|nftw|ftw|glob|mmap|munmap|mremap|madvise|posix_madvise|posix_fadvise|readahead)\s*\(")
RAW_RE = re.compile(r"->data\s*\+|\.data\s*\+")
ID_CALL_RE = re.compile(r"\b(finding_add|add)\s*\(([^;]*?)\)\s*;", re.S)
ID_LITERAL_RE = re.compile(r'"([a-z0-9]+(?:-[a-z0-9]+)*)"')
HOOK_RE = re.compile(r"ABISCOPE_TEST|\(\s*\*\s*\w*_test_\w*\s*\)\s*\(")
WRITE_RE = re.compile(r"\b(truncate|ftruncate|rename|renameat|renameat2|unlink|unlinkat|remove|rmdir|"
                      r"mkdir|mkdirat|mkfifo|mknod|link|linkat|symlink|symlinkat|chmod|fchmod|fchmodat|"
                      r"chown|fchown|lchown|utime|utimes|utimensat|futimens|mkstemp|mkostemp|tmpfile|"
                      r"fallocate|posix_fallocate)\s*\(")
BANNED_RE = re.compile(r"\b(strcpy|strcat|strncpy|strncat|strtok|sprintf|vsprintf|gets|atoi|mktemp|"
                       r"system|popen)\s*\(")


def strip_comments_and_strings(text, keep_strings=False):
    """C text with comments (and, unless keep_strings, string and character
    literals) blanked out, newlines kept so line numbers stay right."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j] if keep_strings else c + " " * max(0, j - i - 2) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(*folders, exts=(".c", ".h")):
    for folder in folders:
        base = os.path.join(TOP, folder)
        for root, _dirs, files in os.walk(base):
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.relpath(os.path.join(root, f), TOP)


def src_folder(rel):
    parts = rel.split("/")
    if len(parts) == 2:  # src/scan.c, src/scan.h
        return "scan"
    return parts[1]


def documented_ids(docs):
    """The ids in the first column of docs/findings.md's tables headed "| id |"."""
    ids, in_table = set(), False
    for line in docs.split("\n"):
        if line.startswith("| id |"):
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        elif in_table:
            m = re.match(r"\| `([a-z0-9-]+)`", line)
            if m:
                ids.add(m.group(1))
    return ids


class Lint:
    def __init__(self):
        self.violations = []
        self.exceptions = []  # [rule, path, function or None, reason, used]
        path = os.path.join(TOP, "tests", "lint-exceptions.txt")
        if os.path.exists(path):
            for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                fields = line.split(None, 2)
                if len(fields) < 3:
                    self.violations.append(("tests/lint-exceptions.txt", lineno, "exceptions",
                                            "an exception needs a rule, a path and a reason"))
                    continue
                rule, where, reason = fields
                fpath, _, func = where.partition(":")
                self.exceptions.append([rule, fpath, func or None, reason, False])

    def excepted(self, rule, path, func=None):
        for e in self.exceptions:
            if e[0] == rule and e[1] == path and (e[2] is None or e[2] == func):
                e[4] = True
                return True
        return False

    def report(self, path, line, rule, what, func=None):
        if not self.excepted(rule, path, func):
            self.violations.append((path, line, rule, what))

    # ---- rules ----

    def library_prints(self):
        for rel in sources("src"):
            if rel.startswith("src/cli/"):
                continue
            text = strip_comments_and_strings(open(os.path.join(TOP, rel), encoding="utf-8").read())
            for lineno, line in enumerate(text.split("\n"), 1):
                if line.lstrip().startswith("#"):
                    continue  # banned.h's own #defines
                line = re.sub(r"format\s*\(\s*printf", "", line)  # the attribute, not a call
                m = PRINT_RE.search(line)
                if m:
                    self.report(rel, lineno, "library-prints",
                                f"the library uses {m.group(1)}: return a diagnostic, let the CLI "
                                "print it or pass the setting in")

    def disk_access(self):
        for rel in sources("src", exts=(".c",)):
            if rel == "src/core/fs.c":
                continue
            text = strip_comments_and_strings(open(os.path.join(TOP, rel), encoding="utf-8").read())
            for lineno, line in enumerate(text.split("\n"), 1):
                m = DISK_RE.search(line)
                if m and not re.search(r"(struct|\.|->)\s*" + m.group(1) + r"\s*\(", line):
                    self.report(rel, lineno, "disk-access",
                                f"{m.group(1)}() outside core/fs.c: go through core/fs.h "
                                "(read-only, non-blocking, regular files only)")

    def raw_bytes(self):
        for rel in sources("src", exts=(".c",)):
            if rel == "src/core/bytes.c":
                continue
            text = strip_comments_and_strings(open(os.path.join(TOP, rel), encoding="utf-8").read())
            for lineno, line in enumerate(text.split("\n"), 1):
                if RAW_RE.search(line):
                    self.report(rel, lineno, "raw-bytes",
                                "pointer arithmetic on mapped data outside core/bytes.c: "
                                "read through core/bytes.h")

    def lengths(self):
        for rel in sources("src", "tests/unit", "tests/fuzz", "tests/tools", "bench"):
            lines = open(os.path.join(TOP, rel), encoding="utf-8").read().split("\n")
            if len(lines) > FILE_MAX + 1:
                self.report(rel, len(lines), "file-length",
                            f"{len(lines) - 1} lines, over {FILE_MAX}: split it where its concepts part")
            if not rel.endswith(".c"):
                continue
            start = None
            name = None
            for i, line in enumerate(lines):
                if line == "{" and i > 0:
                    start = i
                    head = " ".join(lines[max(0, i - 4):i])
                    m = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", head)
                    name = m[0] if m else "?"
                    # the first identifier before "(" after the return type
                    decl = lines[i - 1]
                    k = i - 1
                    while k > 0 and "(" not in decl:
                        k -= 1
                        decl = lines[k]
                    mm = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", decl)
                    if mm:
                        name = mm.group(1)
                elif line == "}" and start is not None:
                    body = i - start - 1
                    if body > FUNCTION_MAX:
                        self.report(rel, start + 1, "function-length",
                                    f"{name}() is {body} lines, over {FUNCTION_MAX}: "
                                    "one function per step", func=name)
                    start = None

    def layering(self):
        inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
        for rel in sources("src"):
            me = src_folder(rel)
            text = open(os.path.join(TOP, rel), encoding="utf-8").read()
            for m in inc_re.finditer(text):
                target = m.group(1)
                lineno = text.count("\n", 0, m.start()) + 1
                if "/" not in target:
                    other = "scan" if target == "scan.h" else me
                else:
                    other = target.split("/")[0]
                    if other in ("..", "data") or target.startswith("../"):
                        continue  # data tables included with a relative path
                if other == me or other not in RANK or me not in RANK:
                    continue
                if RANK[other] > RANK[me] or (RANK[other] == RANK[me] and other != me):
                    self.report(rel, lineno, "layering",
                                f"{me}/ includes {target}: layers point one way "
                                "(core -> report -> elf -> scan -> loader -> cxx/cuda -> diagnose -> "
                                "pyenv -> host -> cli)")

    def finding_ids(self):
        def_path = os.path.join(TOP, "data", "findings.def")
        registered = {}
        for lineno, line in enumerate(open(def_path, encoding="utf-8"), 1):
            m = re.match(r'\s*FINDING\(\s*"([a-z0-9-]+)"\s*,\s*(SEV_[A-Z]+)\s*,', line)
            if m:
                if m.group(1) in registered:
                    self.report("data/findings.def", lineno, "finding-id",
                                f"{m.group(1)} is registered twice")
                registered[m.group(1)] = lineno
        for rel in sources("src", exts=(".c",)):
            text = strip_comments_and_strings(open(os.path.join(TOP, rel), encoding="utf-8").read(),
                                              keep_strings=True)
            for m in ID_CALL_RE.finditer(text):
                args = m.group(2)
                lineno = text.count("\n", 0, m.start()) + 1
                for lit in ID_LITERAL_RE.findall(args.split(",", 2)[1] if "," in args else ""):
                    if lit not in registered:
                        self.report(rel, lineno, "finding-id",
                                    f"finding id {lit} is not registered: add a FINDING line to "
                                    "data/findings.def and a row to docs/findings.md")
        docs = open(os.path.join(TOP, "docs", "findings.md"), encoding="utf-8").read()
        documented = documented_ids(docs)
        for fid, lineno in registered.items():
            if fid not in documented:
                self.report("data/findings.def", lineno, "finding-id",
                            f"{fid} is not documented: add a row to a \"| id |\" table of "
                            "docs/findings.md")
        for fid in sorted(documented - set(registered)):
            self.report("docs/findings.md", 1, "finding-id",
                        f"docs/findings.md lists {fid}, which data/findings.def does not register")

    def banned_in_tests(self):
        for rel in sources("tests", "bench", exts=(".c",)):
            text = strip_comments_and_strings(open(os.path.join(TOP, rel), encoding="utf-8").read())
            for lineno, line in enumerate(text.split("\n"), 1):
                m = BANNED_RE.search(line)
                if m:
                    self.report(rel, lineno, "banned", f"{m.group(1)}() is banned (src/core/banned.h)")

    def test_hooks(self):
        for rel in sources("src"):
            text = strip_comments_and_strings(open(os.path.join(TOP, rel), encoding="utf-8").read(),
                                              keep_strings=True)
            for lineno, line in enumerate(text.split("\n"), 1):
                if HOOK_RE.search(line):
                    self.report(rel, lineno, "test-hook",
                                "a test hook in the release binary: act on abiscope from outside "
                                "(a second process, an LD_PRELOAD shim in tests/tools/preload/)")

    def writes(self):
        for rel in sources("src", exts=(".c",)):
            text = strip_comments_and_strings(open(os.path.join(TOP, rel), encoding="utf-8").read())
            for lineno, line in enumerate(text.split("\n"), 1):
                m = WRITE_RE.search(line)
                if m and not re.search(r"(struct|\.|->)\s*" + m.group(1) + r"\s*\(", line):
                    self.report(rel, lineno, "writes",
                                f"{m.group(1)}() changes a file: abiscope writes only what -o and "
                                "--junit name, through core/fs.h's fs_write_output")

    def run(self):
        self.test_hooks()
        self.writes()
        self.library_prints()
        self.disk_access()
        self.raw_bytes()
        self.lengths()
        self.layering()
        self.finding_ids()
        self.banned_in_tests()
        for path, line, rule, what in self.violations:
            print(f"{path}:{line}: {rule}: {what}")
        if self.violations:
            print("(a violation that must stay goes into tests/lint-exceptions.txt with its reason; "
                  "see docs/CodingGuidelines.md)")
        for rule, path, func, reason, used in self.exceptions:
            if not used:
                where = path + (":" + func if func else "")
                print(f"warning: stale exception, nothing matches: {rule} {where}")
        print(f"lint: {len(self.violations)} violations")
        return 1 if self.violations else 0


if __name__ == "__main__":
    if len(sys.argv) > 1:
        TOP = os.path.abspath(sys.argv[1])
    sys.exit(Lint().run())
