#!/bin/sh
# The lint (tests/lint.py) and the library's compile-time bans must catch a
# planted violation of each rule: a copy of the tree gets one violation at a
# time and the lint must fail naming that rule (and pass on the clean copy).
. "$(dirname "$0")/lib.sh"
fixture_dir lint
copy=$FX/tree
mkdir -p "$copy"
(cd "$TOP" && tar cf - src data docs tests/lint.py tests/lint-exceptions.txt tests/unit tests/fuzz \
	tests/tools bench/*.c 2>/dev/null) | (cd "$copy" && tar xf -)

lint() { python3 "$copy/tests/lint.py" "$copy" >"$FX/out.txt" 2>&1; }

lint
ok_status=$?
expect_eq "$ok_status" 0 "the clean tree passes the lint"

# plant FILE TEXT RULE NAME: appends TEXT to FILE, expects RULE, restores FILE
plant() {
	f=$copy/$1
	cp "$f" "$f.orig"
	printf '%s\n' "$2" >>"$f"
	lint
	st=$?
	if [ "$st" -ne 0 ] && grep -q ": $3: " "$FX/out.txt"; then
		pass "lint rejects $4"
	else
		fail "lint rejects $4" "exit $st" "$(cat "$FX/out.txt")"
	fi
	mv "$f.orig" "$f"
}

plant src/elf/symtab.c 'static void planted(void) { fprintf(stderr, "x"); }' library-prints \
	"printing from the library"
plant src/pyenv/env.c 'static const char *planted(void) { return getenv("HOME"); }' library-prints \
	"reading the environment in the library"
plant src/pyenv/dist.c 'static void *planted(const char *p) { return fopen(p, "r"); }' disk-access \
	"fopen outside core/fs.c"
plant src/cli/cmd_gpu.c 'static int planted(const char *p) { struct stat st; return stat(p, &st); }' \
	disk-access "stat outside core/fs.c, in the CLI too"
plant src/elf/object.c 'static void planted(void *p) { (void)madvise(p, 4096, 0); }' disk-access \
	"madvise of a mapping outside core/fs.c (its page size is fs.c's to know)"
plant src/cuda/arch.c 'static int planted(const struct bytes *b) { return b->data + 1 != 0; }' raw-bytes \
	"pointer arithmetic on mapped data outside core/bytes.c"
plant src/loader/cpu.c '#include "pyenv/env.h"' layering "an include that points up (loader -> pyenv)"
plant src/core/vfs.c '#include "elf/elf.h"' layering "an include that points up (core -> elf)"
plant src/cxx/abi.c '#include "cuda/arch.h"' layering "an include across one layer (cxx -> cuda)"
plant src/pyenv/dist.c 'static void planted(struct findings *fl) { finding_add(fl, "no-such-finding", SEV_ERROR, NULL); }' \
	finding-id "a finding id missing from data/findings.def"
plant data/findings.def 'FINDING("undocumented-finding", SEV_NOTE, "nowhere")' finding-id \
	"a registered id that docs/findings.md does not document"
plant src/cli/main.c 'static const char *planted(void) { return getenv("ABISCOPE_TEST_SHRINK_AFTER_MAP"); }' \
	test-hook "a getenv(\"ABISCOPE_TEST...\") test hook in the release binary"
plant src/core/fs.c 'void (*fs_test_after_map)(const char *host_path);' test-hook \
	"a test hook as a function pointer in the library"
plant src/cli/main.c 'static int planted(const char *p) { return truncate(p, 0); }' writes \
	"truncate() of a file in the CLI"
plant src/core/fs.c 'static int planted(const char *a, const char *b) { return rename(a, b); }' writes \
	"rename() even in core/fs.c"
plant tests/unit/test_bytes.c 'static void planted(char *d, const char *s) { strcpy(d, s); }' banned \
	"a banned function in test code"

# file and function length: a generated file of 1,600 lines, a function of 200
big=$copy/src/core/planted_big.c
i=0
{ echo '/* planted */'; while [ $i -lt 1600 ]; do echo "int planted_v$i;"; i=$((i + 1)); done; } >"$big"
lint
if grep -q 'planted_big.c:.*: file-length: ' "$FX/out.txt"; then pass "lint rejects a file over 1,500 lines"
else fail "lint rejects a file over 1,500 lines" "$(tail -5 "$FX/out.txt")"; fi
rm -f "$big"
long=$copy/src/core/planted_long.c
{ echo 'int planted_long(int x);'; echo 'int planted_long(int x)'; echo '{'
  i=0; while [ $i -lt 200 ]; do echo "	x += $i;"; i=$((i + 1)); done
  echo '	return x;'; echo '}'; } >"$long"
lint
if grep -q 'planted_long.c:.*: function-length: planted_long()' "$FX/out.txt"; then
	pass "lint rejects a function over 150 lines"
else fail "lint rejects a function over 150 lines" "$(tail -5 "$FX/out.txt")"; fi
rm -f "$long"

# An exception silences exactly its rule and file, and must give a reason.
printf '%s\n' 'disk-access src/pyenv/dist.c' >>"$copy/tests/lint-exceptions.txt"
lint
if grep -q ': exceptions: ' "$FX/out.txt"; then pass "an exception without a reason is itself a violation"
else fail "an exception without a reason is itself a violation" "$(cat "$FX/out.txt")"; fi

# The compiler enforces the library's bans too: printf in a library unit
# does not compile under ABISCOPE_LIBRARY, and does in the CLI.
cat >"$FX/planted.c" <<'EOF'
#include "core/common.h"
void planted(void);
void planted(void) { printf("x\n"); }
EOF
if $CC -std=c11 -D_GNU_SOURCE -DABISCOPE_LIBRARY -I"$TOP/src" -c -o "$FX/planted.o" "$FX/planted.c" \
	>"$FX/cc.txt" 2>&1; then
	fail "printf does not compile in the library" "it compiled"
else
	expect_contains "$(cat "$FX/cc.txt")" "printf_in_the_library" "printf does not compile in the library"
fi
$CC -std=c11 -D_GNU_SOURCE -I"$TOP/src" -c -o "$FX/planted.o" "$FX/planted.c" >"$FX/cc.txt" 2>&1
ok_cli=$?
expect_eq "$ok_cli" 0 "printf compiles outside the library (the CLI)"
if grep -q 'LIB_OBJ): CFLAGS += -DABISCOPE_LIBRARY' "$TOP/Makefile"; then
	pass "the Makefile builds the library with ABISCOPE_LIBRARY"
else
	fail "the Makefile builds the library with ABISCOPE_LIBRARY"
fi
finish
