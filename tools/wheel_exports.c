/*
 * wheel_exports.c: the dynamic exports of the libraries in a wheel, read
 * with abiscope's own wheel and ELF readers (no extraction), for the torch
 * ABI index builder (tools/torch_index.py).
 *
 *   wheel_exports WHEEL
 *
 * For each member under torch/lib/ that torch ships itself (libc10*,
 * libtorch*, libshm*, libcaffe2*; not the copies of libgomp or libcudart
 * some wheels bundle) it prints one line
 *
 *   L <TAB> member <TAB> soname <TAB> needed,needed,... <TAB> cxx11 (0, 1, -1, 2) <TAB> e_machine
 *
 * then one line per exported symbol (defined, global/weak/unique, default
 * or protected visibility: what the loader can bind to)
 *
 *   S <TAB> name <TAB> version (or "-")
 *
 * and at the end "M <TAB> peak-rss-kib".  Each member is inflated into
 * memory on its own (libtorch_cuda.so is about 1 GB) and freed before the
 * next.  Exit status 0, or 1 with the error on stderr.
 *
 * It links libabiscope.a and prints, which the library itself never does.
 */
#include "cxx/abi.h"
#include "cxx/exports.h"
#include "pyenv/wheel.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static bool is_torch_member(const char *name)
{
	if (strncmp(name, "torch/lib/", 10) != 0)
		return false;
	const char *b = name + 10;
	if (strchr(b, '/') || !strstr(b, ".so"))
		return false;
	return str_starts(b, "libc10") || str_starts(b, "libtorch") || str_starts(b, "libshm") ||
	       str_starts(b, "libcaffe2");
}

static const char *version_of(const struct elf_file *ef, const struct elf_sym *s)
{
	uint16_t ndx = s->versym & 0x7fff;
	if (ndx <= 1)
		return NULL;
	const struct elf_verdef *vd = elf_verdef_by_index(ef, ndx);
	if (!vd || (vd->flags & VER_FLG_BASE_))
		return NULL;
	return vd->name;
}

static int dump_member(struct wheel *w, size_t i)
{
	struct arena a;
	arena_init(&a);
	struct diag d = { 0 };
	const uint8_t *data = NULL;
	size_t len = 0;
	int rc = 1;
	if (wheel_read(&a, w, i, &data, &len, &d) != ST_OK) {
		fprintf(stderr, "wheel_exports: %s: %s\n", d.path[0] ? d.path : w->m[i].name, d.msg);
		goto out;
	}
	struct object o;
	memset(&o, 0, sizeof o);
	o.path = w->m[i].name;
	o.kind = OBJ_ELF;
	if (elf_parse(&a, bytes_make(data, len, false), o.path, &o.elf, &d) != ST_OK) {
		fprintf(stderr, "wheel_exports: %s: not ELF: %s\n", o.path, d.msg);
		rc = 0;	/* a linker script or text file named like a library */
		goto out;
	}
	o.elf_ok = true;
	const struct elf_file *ef = &o.elf;
	size_t old_n = 0, new_n = 0;
	const char *example = NULL;
	int abi = cxx_abi_of(&a, &o, false, &old_n, &new_n, &example);
	printf("L\t%s\t%s\t", o.path, ef->soname ? ef->soname : "-");
	for (size_t k = 0; k < ef->nneeded; k++)
		printf("%s%s", k ? "," : "", ef->needed[k]);
	printf("\t%d\t%u\n", abi, (unsigned)ef->machine);
	for (uint32_t k = 1; k < ef->nsyms; k++) {
		struct elf_sym s;
		if (!elf_sym(ef, k, &s) || !cxx_sym_exported(&s))
			continue;
		const char *v = version_of(ef, &s);
		printf("S\t%s\t%s\n", s.name, v ? v : "-");
	}
	rc = 0;
out:
	arena_release(&a);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: wheel_exports WHEEL\n");
		return 2;
	}
	struct arena a;
	arena_init(&a);
	struct wheel w;
	struct diag d = { 0 };
	int rc = 1;
	if (wheel_open(&a, argv[1], &w, &d) != ST_OK) {
		fprintf(stderr, "wheel_exports: %s: %s\n", d.path[0] ? d.path : argv[1], d.msg);
		arena_release(&a);
		return 1;
	}
	rc = 0;
	for (size_t i = 0; i < w.nm && rc == 0; i++)
		if (!w.m[i].is_dir && is_torch_member(w.m[i].name))
			rc = dump_member(&w, i);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("M\t%ld\n", ru.ru_maxrss);
	wheel_close(&w);
	arena_release(&a);
	return rc;
}
