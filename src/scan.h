/*
 * scan.h: the context of one abiscope run.
 *
 * One struct scan is created per command.  It owns the arena every result
 * is allocated from, the view of the file system (host or --root), the
 * object cache (each file mapped and parsed once), and the list of
 * findings.  Analyses receive it explicitly; there is no global state.
 * scan_release() frees everything at once.
 */
#ifndef ABISCOPE_SCAN_H
#define ABISCOPE_SCAN_H

#include "core/arena.h"
#include "core/fs.h"
#include "elf/object.h"
#include "report/finding.h"

struct torchabi;

/* Where a long scan is, for a caller that shows it (the CLI draws one
 * updating line on a terminal; the library never prints): what it does
 * ("reading", "checking", "hashing"), on what (a path or name, NULL when
 * none), and how far: done of total (total 0 when not known). */
struct scan_progress {
	const char *what;
	const char *item;
	size_t done, total;
};
typedef void (*scan_progress_fn)(void *ctx, const struct scan_progress *p);

struct scan {
	struct arena arena;
	struct fsview fs;
	struct objcache objs;
	struct findings findings;
	struct torchabi *torchabi;	/* the torch ABI index, decoded on first use (cxx/torchabi.h) */
	scan_progress_fn progress;	/* NULL: nobody listens */
	void *progress_ctx;
	struct scan *objs_of;		/* scan_borrow_objects: whose object cache objs is */
};

/* Tells the listener, if any (see struct scan_progress). */
void scan_report(struct scan *s, const char *what, const char *item, size_t done, size_t total);

/* root: NULL for the running system, else the directory to inspect. */
void scan_init(struct scan *s, const char *root);

/*
 * Where and on what the inspected processes run: the tree (root), their
 * working directory in it (cwd: a relative dlopen() or LD_LIBRARY_PATH
 * entry is resolved against it; see fs_init_cwd for the default), and
 * what their kernel tells them (machine: the page size, AT_HWCAP; zero
 * fields are this host's or assumed, see struct machine_params).
 */
struct scan_where {
	const char *root;
	const char *cwd;
	struct machine_params machine;
};
void scan_init_where(struct scan *s, const struct scan_where *w);
void scan_release(struct scan *s);

/* A second scan of the same files (same root) as `from`, which must not be
 * used until scan_return_objects(s): s works in from's object cache, so
 * every object parsed, its references decoded and its bindings remembered
 * by the first are there for the second, and so is the torch ABI index
 * from decoded (built-in data, the same for every scan).  The results are
 * the same as from a fresh scan; the files are read once. */
void scan_borrow_objects(struct scan *s, struct scan *from);
void scan_return_objects(struct scan *s);

#endif
