/*
 * dlopen_driver: the oracle of the differential tests.
 *
 *   dlopen_driver [--lazy] [--noload] [--deepbind] [--from OBJ]
 *                 [--preload P | --preload-global P]... --out FILE TARGET
 *
 * Does for real what `abiscope why --process dlopen_driver ...` predicts:
 * dlopen()s the preloads in order (RTLD_LOCAL or RTLD_GLOBAL), then the
 * target with RTLD_NOW (or RTLD_LAZY, plus RTLD_NOLOAD / RTLD_DEEPBIND),
 * and writes one JSON object to FILE:
 *   {"preloads":[{"path":...,"loads":true,"error":null}...],
 *    "from":{"path":...,"loads":true,"error":null},
 *    "loads":false,"error":"<dlerror text>"}
 * --from OBJ dlopen()s OBJ (RTLD_NOW|RTLD_LOCAL) and makes the call from
 * inside it, through the function abiscope_dlopen_from(name, flags) OBJ
 * must define: glibc takes the caller's RPATH/RUNPATH from the return
 * address.
 * FILE holds "started" while the loads run: a FILE left empty means the
 * process never started (the loader refused it), one that still says
 * "started" means it died during a load (a constructor).
 * The result goes to a file, not stdout, because constructors of the
 * loaded libraries may print.  It links nothing but libc, so its global
 * scope is the executable, libc and the loader.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exported (the driver is linked with -rdynamic): lets fixtures test that
 * symbols of the executable are found in the global scope. */
int abiscope_driver_exported(int x);
int abiscope_driver_exported(int x)
{
	return x + 1;
}

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *target = NULL, *from = NULL;
	int lazy = 0, extra = 0;
	const char *pre[64];
	int pre_global[64];
	int npre = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--lazy"))
			lazy = 1;
		else if (!strcmp(argv[i], "--noload"))
			extra |= RTLD_NOLOAD;
		else if (!strcmp(argv[i], "--deepbind"))
			extra |= RTLD_DEEPBIND;
		else if (!strcmp(argv[i], "--from") && i + 1 < argc)
			from = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else if ((!strcmp(argv[i], "--preload") || !strcmp(argv[i], "--preload-global")) &&
			 i + 1 < argc && npre < 64) {
			pre_global[npre] = !strcmp(argv[i], "--preload-global");
			pre[npre++] = argv[++i];
		} else
			target = argv[i];
	}
	if (!out || !target) {
		fprintf(stderr, "usage: dlopen_driver [--lazy] [--noload] [--deepbind] [--from OBJ] "
				"[--preload P]... --out FILE TARGET\n");
		return 2;
	}
	FILE *mark = fopen(out, "w");
	if (!mark)
		return 3;
	fputs("started\n", mark);
	fclose(mark);
	/* Results of preloads are kept until the end: nothing is written while
	 * libraries run their constructors. */
	char *pre_err[64];
	for (int i = 0; i < npre; i++) {
		void *h = dlopen(pre[i], RTLD_NOW | (pre_global[i] ? RTLD_GLOBAL : RTLD_LOCAL));
		const char *e = h ? NULL : dlerror();
		pre_err[i] = e ? strdup(e) : NULL;
	}
	int flags = (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL | extra;
	void *h = NULL;
	char *from_err = NULL;
	int from_ok = 1;
	const char *err = NULL;
	if (from) {
		void *fh = dlopen(from, RTLD_NOW | RTLD_LOCAL);
		void *(*call)(const char *, int) = NULL;
		if (!fh) {
			from_ok = 0;
			from_err = strdup(dlerror());
		} else {
			*(void **)&call = dlsym(fh, "abiscope_dlopen_from");
		}
		if (call) {
			h = call(target, flags);
			err = h ? NULL : dlerror();
		} else if (fh) {
			fprintf(stderr, "dlopen_driver: %s has no abiscope_dlopen_from\n", from);
			return 2;
		}
	} else {
		h = dlopen(target, flags);
		err = h ? NULL : dlerror();
	}
	FILE *f = fopen(out, "w");
	if (!f)
		return 3;
	fputs("{\"preloads\":[", f);
	for (int i = 0; i < npre; i++) {
		fprintf(f, "%s{\"path\":", i ? "," : "");
		json_str(f, pre[i]);
		fprintf(f, ",\"loads\":%s,\"error\":", pre_err[i] ? "false" : "true");
		json_str(f, pre_err[i]);
		fputs("}", f);
	}
	fputs("],\"from\":", f);
	if (from) {
		fputs("{\"path\":", f);
		json_str(f, from);
		fprintf(f, ",\"loads\":%s,\"error\":", from_ok ? "true" : "false");
		json_str(f, from_err);
		fputs("}", f);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\"loads\":%s,\"error\":", h ? "true" : "false");
	json_str(f, err);
	fputs("}\n", f);
	fclose(f);
	/* Skip destructors and atexit handlers of what was loaded. */
	fflush(NULL);
	_Exit(0);
}
