/*
 * loadall.c: abiscope's engine over a whole corpus in one process, for the
 * benchmark (bench/run) while `abiscope check` does not exist yet, and as
 * the profile target for the ELF reader and the loader model.
 *
 *   loadall [--process EXE] [--repeat N] [--quiet] [--no-advise] LIST
 *
 * LIST is a file with one object path per line (bench/run writes it).
 * One scan, one modelled process (EXE, default the python3 that `why`
 * would pick), then dlopen(RTLD_NOW | RTLD_LOCAL) of every object in list
 * order: each object is mapped and parsed once, every version requirement
 * checked and every symbol reference bound once (an object stays loaded
 * after its dlopen succeeded, as in a real process, so later opens reuse
 * it).  Prints one line of key=value figures: objects, symbol references
 * bound, failed dlopens, bytes mapped, and the time of each phase.
 *
 * --no-advise turns off the object cache's madvise(WILLNEED) of the tables
 * it will read (to measure what the hint is worth, cold and warm).
 *
 * It links libabiscope.a and prints, which the library itself never does.
 */
#include "loader/process.h"
#include "pyenv/interpreter.h"
#include "scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char **read_list(const char *file, size_t *n)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return NULL;
	size_t cap = 256;
	char **v = malloc(cap * sizeof *v);
	char line[8192];
	*n = 0;
	while (v && fgets(line, sizeof line, f)) {
		size_t len = strcspn(line, "\r\n");
		line[len] = '\0';
		if (!len)
			continue;
		if (*n == cap) {
			cap *= 2;
			char **nv = realloc(v, cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = strdup(line);
	}
	fclose(f);
	return v;
}

static int run_once(const char *exe_name, char **paths, size_t n, bool quiet, bool no_advise)
{
	double t0 = now_ms();
	struct scan s;
	scan_init(&s, NULL);
	s.objs.advise = !no_advise;
	struct interp_result ir;
	memset(&ir, 0, sizeof ir);
	interp_resolve(&s.arena, &s.fs, exe_name, getenv("PATH"), getenv("PYENV_VERSION"),
		       getenv("PYENV_ROOT"), &ir);
	if (!ir.path) {
		fprintf(stderr, "loadall: %s\n", ir.problem);
		scan_release(&s);
		return 2;
	}
	struct process p;
	struct proc_options opt;
	memset(&opt, 0, sizeof opt);
	struct diag d;
	diag_clear(&d);
	if (proc_init(&p, &s.arena, &s.objs, &opt, ir.path, &d) != ST_OK) {
		fprintf(stderr, "loadall: %s\n", d.msg);
		scan_release(&s);
		return 2;
	}
	double t1 = now_ms();
	size_t failed = 0, nfail = 0;
	for (size_t i = 0; i < n; i++) {
		struct dlopen_result r;
		proc_dlopen(&p, paths[i], false, &r);
		if (!r.ok) {
			failed++;
			if (!quiet)
				fprintf(stderr, "loadall: %s: %s\n", paths[i], r.dlerror ? r.dlerror : "?");
		}
		nfail += r.nfail;
	}
	double t2 = now_ms();
	size_t nobj = 0, nrefs = 0;
	for (size_t i = 0; i < s.objs.all.n; i++) {
		struct object *o = s.objs.all.item[i];
		nobj++;
		if (o->refs_done)
			nrefs += o->refs.n;
	}
	printf("objects=%zu listed=%zu refs=%zu failed_dlopens=%zu failures=%zu mapped_bytes=%llu "
	       "arena_bytes=%zu start_ms=%.3f dlopen_ms=%.3f total_ms=%.3f\n",
	       nobj, n, nrefs, failed, nfail, (unsigned long long)s.objs.bytes_mapped, s.arena.total,
	       t1 - t0, t2 - t1, t2 - t0);
	scan_release(&s);
	return 0;
}

int main(int argc, char **argv)
{
	const char *exe = "python3", *list = NULL;
	int repeat = 1;
	bool quiet = false, no_advise = false;
	for (int i = 1; i < argc; i++) {
		if (str_eq(argv[i], "--process") && i + 1 < argc)
			exe = argv[++i];
		else if (str_eq(argv[i], "--repeat") && i + 1 < argc)
			repeat = (int)strtol(argv[++i], NULL, 10);
		else if (str_eq(argv[i], "--quiet"))
			quiet = true;
		else if (str_eq(argv[i], "--no-advise"))
			no_advise = true;
		else if (!list)
			list = argv[i];
		else {
			fprintf(stderr, "usage: loadall [--process EXE] [--repeat N] [--quiet] [--no-advise] LIST\n");
			return 2;
		}
	}
	if (!list) {
		fprintf(stderr, "usage: loadall [--process EXE] [--repeat N] [--quiet] [--no-advise] LIST\n");
		return 2;
	}
	size_t n = 0;
	char **paths = read_list(list, &n);
	if (!paths) {
		perror(list);
		return 2;
	}
	int rc = 0;
	for (int r = 0; r < (repeat > 0 ? repeat : 1) && rc == 0; r++)
		rc = run_once(exe, paths, n, quiet || r > 0, no_advise);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}
