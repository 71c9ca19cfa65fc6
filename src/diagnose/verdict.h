/*
 * diagnose/verdict.h: `abiscope why` as a library call, above the loader
 * model (it reads the loader's raw failures and explains them with cxx/
 * and the torch identity); pyenv/check.c and the CLI call it.
 *
 * why_run() builds the process (its executable, interpreter and their
 * dependencies), replays the preloads in order, then dlopen()s the target
 * and keeps every result.  why_findings() turns the loader's raw failures
 * into findings: the failure dlopen would report is marked first_error,
 * consequences point at their root cause, every finding carries the
 * fields of its id for JSON and an explanation and fix for people.
 *
 * Everything lives in the scan's arena.
 */
#ifndef ABISCOPE_VERDICT_H
#define ABISCOPE_VERDICT_H

#include "scan.h"
#include "loader/process.h"

struct why_preload {
	const char *path;
	bool global;
};

struct cxx_index;
struct torch_identity;

struct why_request {
	const char *target;
	const char *exe;		/* the process executable; NULL: a bare process */
	const struct why_preload *preload;
	size_t npreload;
	struct proc_options opt;
	const char *from;		/* the object dlopen is called from; NULL: the executable */
	bool noload, deepbind;		/* RTLD_NOLOAD, RTLD_DEEPBIND for the target */
	/* Optional, for callers that judge many targets in one scan: */
	struct cxx_index *cxx;		/* export index to share; NULL: one per why_findings call */
	const struct torch_identity *torch;	/* the installed torch; NULL: looked for near the target */
	const char *const *extra_providers;	/* more copies of libraries to compare with */
	size_t nextra_providers;
};

struct why_preload_result {
	const char *path;
	bool global;
	struct dlopen_result r;
};

struct why_result {
	struct process proc;
	struct why_preload_result *pre;
	size_t npre;
	struct dlopen_result target;
	bool loads;
	const char *dlerror;
	bool target_unreadable;		/* exit status 3 */
	const char *unreadable_reason;
	bool target_skipped;		/* the target's dlopen was not modelled */
	bool process_cannot_start;	/* the executable fails its own start-up */
	struct why_preload_result from;	/* the --from object, when it was loaded for the call */
	bool from_loaded;		/* from.r is the dlopen that loaded it */
	/* const char *: what the verdict assumes about this load (constructors
	 * that may dlopen or call what does not resolve) */
	struct ptrvec assumptions;
};

/* ST_OK unless the process itself could not be modelled (d says why). */
enum status why_run(struct scan *s, const struct why_request *q, struct why_result *r,
		    struct diag *d);
/* Appends the findings for r to s->findings, root causes first. */
void why_findings(struct scan *s, const struct why_request *q, struct why_result *r);

/*
 * Who built what, from the files: the target's compiler (.comment), C++
 * string ABI, LibTorch API (stable C ABI or C++), CUDA runtime and
 * pybind11 internals id, and the installed torch it would run against
 * (version.py, libc10.so's ABI, libtorch_cuda.so's CUDA runtime).  json is
 * the "built_with" object; line[] the text block (label, text), empty when
 * there is nothing C++-, torch- or CUDA-specific to say.
 */
struct why_identity_line {
	const char *label, *text;
};
struct why_identity {
	struct value *json;
	struct why_identity_line line[4];
	size_t nline;
};
void why_identity(struct scan *s, const struct why_request *q, const struct why_result *r,
		  struct why_identity *out);

/* Demangled name when the symbol is C++, else NULL (for fields). */
const char *why_demangled(struct scan *s, const char *sym);

#endif
