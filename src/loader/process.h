/*
 * process.h: a model of one process and of what glibc's loader does in it.
 *
 * A struct process starts like the real one: the executable, its
 * interpreter and the executable's dependencies (breadth-first, searched
 * with the executable's own RPATH/RUNPATH and LD_LIBRARY_PATH) form the
 * global scope and are taken as already relocated.  proc_dlopen() then
 * replays dlopen(): map the root and its dependencies breadth-first with
 * the already-loaded check and the full search order, check every
 * version requirement, and bind every relocation that needs a symbol,
 * in the order glibc does, through the global scope and then the root's
 * own search list.  RTLD_GLOBAL adds the new closure to the global scope;
 * a failed dlopen is rolled back like glibc's.
 *
 * Where the real loader stops at the first error, the model records it as
 * the first failure and carries on, so that a report can list every
 * missing library and symbol and say which failure causes which.
 *
 * Everything lives in the arena of the process; objects come from the
 * object cache and are shared between processes of one scan.
 */
#ifndef ABISCOPE_PROCESS_H
#define ABISCOPE_PROCESS_H

#include "loader/ldso.h"

struct lookup_memo;

enum found_how {
	FOUND_NONE = 0,
	FOUND_PATH,		/* a name with a slash, opened as is */
	FOUND_ALREADY,		/* already loaded: name or SONAME match */
	FOUND_SAME_FILE,	/* found again by search: same device and inode */
	FOUND_RPATH,
	FOUND_LD_LIBRARY_PATH,
	FOUND_RUNPATH,
	FOUND_CACHE,
	FOUND_DEFAULT,
	FOUND_EXECUTABLE,	/* the process executable itself */
	FOUND_INTERP,		/* the dynamic loader (PT_INTERP) */
};

enum probe_outcome {
	PROBE_OK,
	PROBE_MISSING,		/* ENOENT / ENOTDIR: nothing there */
	PROBE_EACCES,		/* skipped: permission denied */
	PROBE_WRONG_CLASS,	/* skipped, remembered for the final message */
	PROBE_WRONG_MACHINE,	/* skipped silently */
	PROBE_STOP_LIST,	/* another errno (ELOOP...): the rest of this list is skipped */
	PROBE_FATAL,		/* not ELF, too short, a directory...: the search stops */
	PROBE_WOULD_BLOCK,	/* a FIFO: the real loader would hang on it */
};

struct probe {
	const char *path;
	enum probe_outcome outcome;
	int err;
	const char *why;	/* message for fatal outcomes */
};

struct search_step {
	enum found_how source;
	const char *owner;	/* the object whose RPATH / RUNPATH this is */
	const char *list;	/* the path list as written (before expansion) */
	const char *skipped;	/* why the step was not tried, or NULL */
	struct probe *probe;
	size_t nprobe;
};

struct search_trace {
	const char *name;
	struct search_step *step;
	size_t nstep;
};

struct lmap {
	struct object *obj;
	const char *name;		/* l_name: the path it was opened by ("" for the executable) */
	const char *path;		/* the path to show: name, or the executable's path */
	struct ptrvec names;		/* names it answers to (requested names, SONAME) */
	const char *origin;		/* $ORIGIN */
	struct lmap *loader;		/* l_loader: the first requester */
	struct lmap **needed;		/* resolved DT_NEEDED, NULL where it failed */
	size_t nneeded;
	enum found_how how;
	const struct lmap *via;		/* owner of the RPATH/RUNPATH used */
	struct search_trace *trace;	/* how it was searched (NULL when not searched) */
	bool is_main, is_interp, global, relocated, versions_done, initial;
	bool deepbind;			/* loaded by an RTLD_DEEPBIND dlopen: local scope first */
	bool tls_static;		/* its TLS block has a place in the static TLS area
					 * (l_tls_offset): at start-up, or taken by a TLS
					 * relocation since */
	int seq;
	int dlopen_serial;		/* which proc_dlopen loaded it (0 = startup) */
	bool opened;			/* a dlopen root (its searchlist is final) */
	struct lmap **searchlist;	/* its own BFS list, when opened */
	size_t nsearchlist;
	struct lmap **scope;		/* local scope: the search list of its dlopen root */
	size_t nscope;
	size_t maps_index;		/* where it sits in process.maps (see find_loaded) */
};

/*
 * Which library family's API a C symbol belongs to, by the prefix NVIDIA's
 * libraries keep (cu* is the driver's libcuda.so.1, nvrtc* libnvrtc.so.N,
 * cuFile* libcufile.so.0): the SONAME stem ("libcuda.so"), or NULL when the
 * name is of no known family.  The longest prefix wins (cuFile before cu).
 */
const char *failure_api_owner(const char *symbol);
/* The known API of a library name ("libnvrtc.so.12" -> "nvrtc*"), or NULL. */
const char *failure_api_of_library(const char *library);

enum failure_kind {
	FAIL_NOT_FOUND,		/* cannot open shared object file */
	FAIL_WRONG_CLASS,	/* only a file of the other ELF class exists */
	FAIL_INVALID,		/* a candidate that stops the search (not ELF, ...) */
	FAIL_CANNOT_LOAD,	/* found, but cannot be loaded (PIE, NOOPEN, no dynamic...) */
	FAIL_WOULD_BLOCK,	/* the loader would block on a FIFO */
	FAIL_VERSION,		/* version `V' not found */
	FAIL_UNDEFINED,		/* undefined symbol */
	FAIL_STATIC_TLS,	/* cannot allocate memory in static TLS block */
	FAIL_EXECSTACK,		/* glibc >= 2.41 refuses executable stacks under dlopen */
	FAIL_LAZY_UNDEFINED,	/* not a load failure: a lazy PLT reference left unresolved */
	FAIL_WEAK_VERSION,	/* not a failure: a weak version requirement is unmet */
	FAIL_NO_VERSION_INFO,	/* provider has no version definitions (glibc <= 2.40 asserts) */
	FAIL_CORRUPT,		/* a version table the loader walks is corrupt: it refuses
				 * the object, asserts, or reads outside it (dies) */
};

struct failure {
	enum failure_kind kind;
	struct lmap *requester;		/* who needed it (object with the NEEDED / reloc) */
	const char *requester_path;
	const char *name;		/* library name, or symbol name */
	const char *version;		/* version string for FAIL_VERSION / versioned symbols */
	const char *version_file;	/* verneed file of a versioned symbol */
	struct lmap *provider;		/* for FAIL_VERSION: the object lacking the version */
	const char *path;		/* offending file for FAIL_INVALID / FAIL_CANNOT_LOAD */
	const char *dlerror;		/* exact message the loader would give */
	struct search_trace *trace;
	int err;			/* the errno in the message, 0 if none */
	bool weak_symbol;
	bool is_data;			/* the reference is a data (non-PLT) relocation */
	uint32_t symidx;
	int cause;			/* index of the failure that explains this one, or -1 */
	bool cause_guess;		/* the link is likely, not certain */
	const char *cause_basis;	/* why the link is drawn: "the symbol's version names it",
					 * "cu* is the API of libcuda.so.1", ... (NULL: no cause) */
	bool loads_anyway;		/* a warning-level failure */
	/* FAIL_CORRUPT: the process dies (an ld.so assertion, or a read
	 * outside the object's memory, SIGSEGV: then dlerror is NULL) */
	bool dies;
	bool ctor_call;			/* FAIL_UNDEFINED: a lazy slot a constructor calls (dies) */
	bool startup_fatal;		/* FAIL_CORRUPT raised as an error, not a version
					 * problem: start-up stops ("error while loading") */
	const char *detail;		/* FAIL_CORRUPT: what is corrupt, where;
					 * FAIL_STATIC_TLS: what needs how much, what is left */
};

struct glibc_tunables;

struct proc_options {
	bool lazy;			/* RTLD_LAZY for proc_dlopen (else RTLD_NOW) */
	const char *ld_library_path;	/* NULL: unset */
	bool ld_bind_now;		/* LD_BIND_NOW set in the environment */
	const char *argv0;		/* the executable's argv[0], which start-up errors
					 * begin with; NULL: its path */
	const struct glibc_tunables *tunables;	/* GLIBC_TUNABLES; NULL: unset */
};

struct process {
	struct arena *arena;
	struct objcache *oc;
	const struct fsview *fs;
	struct ldso_facts facts;
	struct proc_options opt;
	struct lmap *main, *interp;
	struct ptrvec maps;		/* the namespace list, load order */
	struct ptrvec global;		/* the global scope */
	char **llp;			/* LD_LIBRARY_PATH directories (with '/'), NULL-terminated */
	const char *llp_raw;
	struct strmap unique;		/* STB_GNU_UNIQUE symbols already bound */
	int serial;
	int seq;
	/* The static TLS block (_dl_determine_tlsoffset): its size without
	 * the TCB, the bytes in use, its alignment; what is left is what
	 * dlopen'ed initial-exec TLS may take, and of that what TLS
	 * descriptors may take (GL(dl_tls_static_optional)). */
	size_t static_tls_size, static_tls_used, static_tls_align, static_tls_optional;
	/* The machine's TLS layout (sysdeps/<arch>/nptl/tls.h): blocks after
	 * the thread pointer and a TCB of tls_tcb_size bytes before them
	 * (TLS_DTV_AT_TP, aarch64), or below it (TLS_TCB_AT_TP, x86-64);
	 * TCB_ALIGNMENT.  On aarch64 a TLS relocation decides when an
	 * object's block needs a static place (R_AARCH64_TLS_TPREL64: its
	 * linker sets no DF_STATIC_TLS); elsewhere DF_STATIC_TLS does. */
	bool tls_dtv_at_tp, tls_by_reloc;
	size_t tls_tcb_size, tcb_alignment;
	/* glibc's memory of search directories (r_search_path_elem.status):
	 * MAP_YES existing, MAP_NO nonexisting; absent = unknown.  It and
	 * the simulated errno decide the strerror() of "cannot open". */
	struct strmap dirstatus;
	/* every name a map answers to -> the first live map in maps order
	 * answering to it: find_loaded without a scan of every map */
	struct strmap by_name;
	struct idmap by_file;	/* (st_dev, st_ino) -> the first live map of that file */
	/* while a relocation pass runs: its lookups' results (memo.h),
	 * NULL otherwise */
	struct lookup_memo *lookup_memo;
	int sim_errno;
	struct failure *startup_fail;	/* failures of the executable's own start */
	size_t nstartup_fail;
	/* What the loader prints when the executable cannot start (NULL when
	 * it starts) and the exit status then: 127, or 1 for versions. */
	const char *startup_error;
	int startup_exit;
	/* Symbols taken as defined by a library a snapshot describes only by
	 * name (its exports were not recorded): "symbol (library path)".  A
	 * guess, for reports to label as one. */
	struct ptrvec assumed;
};

struct dlopen_result {
	bool ok;
	const char *dlerror;		/* the first error, as dlerror() prints it */
	struct lmap *root;
	struct lmap **searchlist;	/* the root's BFS list (local scope) */
	size_t nsearchlist;
	struct failure *fail;		/* fail[0] is the first error when !ok */
	size_t nfail;
	size_t first;			/* index of the first error in fail[] */
	bool global;
	bool root_preexisting;		/* the root was loaded before this dlopen */
	bool root_was_opened;		/* ... and had been dlopen()ed itself */
	bool noload_absent;		/* RTLD_NOLOAD and not loaded: NULL without an error */
};

/* The flags of one dlopen() call and where it is called from. */
struct dlopen_mode {
	bool global;			/* RTLD_GLOBAL */
	bool noload;			/* RTLD_NOLOAD: only an object already loaded */
	bool deepbind;			/* RTLD_DEEPBIND: new objects search their own scope first */
	struct lmap *caller;		/* the object calling dlopen (its RPATH/RUNPATH,
					 * $ORIGIN apply); NULL: the executable */
};

/*
 * A saved state of the process, to try several dlopens from one starting
 * point (every extension "after import torch") without replaying the
 * start: proc_rewind() forgets everything loaded since the mark.
 */
struct proc_mark {
	size_t nmaps, nglobal, static_tls, static_tls_optional;
	int sim_errno;
};
void proc_mark_save(const struct process *p, struct proc_mark *m);
void proc_rewind(struct process *p, const struct proc_mark *m, const struct dlopen_result *r);

/*
 * Starts a process for executable exe (logical path; NULL for a bare
 * process made of the loader alone).  Failures of the executable's own
 * start-up (a dependency not found) are kept in startup_fail.
 */
enum status proc_init(struct process *p, struct arena *a, struct objcache *oc,
		      const struct proc_options *opt, const char *exe, struct diag *d);

/* dlopen(path, RTLD_NOW or RTLD_LAZY, with RTLD_GLOBAL if global). */
void proc_dlopen(struct process *p, const char *path, bool global, struct dlopen_result *r);
void proc_dlopen_mode(struct process *p, const char *path, const struct dlopen_mode *mode,
		      struct dlopen_result *r);

/* The loaded object path names (by name, SONAME or same file), or NULL. */
struct lmap *proc_find_loaded(struct process *p, const char *path);

/* Adds an already-loaded name alias, as when a loaded object is found by another name. */
const char *found_how_name(enum found_how h);
const char *probe_outcome_name(enum probe_outcome o);
const char *failure_kind_id(enum failure_kind k);

/* Symbol lookup as glibc does it, for explanations: the map that defines
 * name@version in scope order for a requester, or NULL. */
struct lmap *proc_lookup(struct process *p, struct lmap *requester, const char *name,
			 const char *version, uint32_t *symidx);

#endif
