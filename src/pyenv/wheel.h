/*
 * wheel.h: a wheel (.whl), read with libzip, never extracted to disk.
 *
 * wheel_open() validates the archive before anything else looks at it:
 * member names must be relative, without "..", backslashes or NUL, and
 * unique; sizes are bounded (WHEEL_MAX_MEMBER, WHEEL_MAX_TOTAL) and the
 * compression ratio of large members too, so a zip bomb is an error naming
 * the member, not an exhausted machine.  Every member is then inflated
 * once, here, its CRC checked as it streams past (pip refuses a wheel with
 * any damaged member), and what a verdict reads of it is kept: its first
 * WHEEL_HEAD bytes; the bytes of an ELF member, whole when small, as a
 * sparse image of its tables and headers when it is WHEELIMG_MIN or more
 * (pyenv/wheelimg.h).  Other members are inflated again only if something
 * reads them.  Past WHEEL_MAX_KEPT bytes kept the wheel is refused (ST_LIMIT,
 * naming it).  The identity comes from the file
 * name (PEP 427: name-version[-build]-python-abi-platform.whl, compressed
 * tag sets expanded) and from .dist-info/WHEEL and METADATA.
 *
 * wheel_install_overlay() "installs" the wheel into an environment the way
 * pip would lay it out (root and .data/purelib|platlib into site-packages,
 * .data/scripts into bin, .data/headers and .data/data under the prefix),
 * but only in the scan's vfs: the members become files read from the
 * archive on first use, and the files of the distribution it replaces are
 * hidden.  The environment on disk is never touched.
 *
 * The struct wheel owns the libzip handle until wheel_close(); other
 * results live in the arena given.
 */
#ifndef ABISCOPE_PYENV_WHEEL_H
#define ABISCOPE_PYENV_WHEEL_H

#include "scan.h"
#include "pyenv/dist.h"

#define WHEEL_MAX_MEMBERS 200000
#define WHEEL_MAX_MEMBER ((uint64_t)8 << 30)
#define WHEEL_MAX_TOTAL ((uint64_t)32 << 30)
#define WHEEL_RATIO_FLOOR ((uint64_t)64 << 20)	/* the ratio is checked above this size,
							 * per member and for all members together */
#define WHEEL_MAX_RATIO 200	/* uncompressed / compressed, for members over 64 MiB: real
				 * libraries and cubins compress 2-10:1 */

struct wheel_tag {
	const char *python, *abi, *platform;	/* "cp311", "abi3", "manylinux_2_28_x86_64" */
};

#define WHEEL_HEAD 64	/* the first bytes of every member, kept (what a probe reads) */
#define WHEEL_MAX_KEPT ((uint64_t)1 << 30)	/* inflated bytes kept for verdicts, all members */

struct wheel_member {
	const char *name;
	uint64_t size, csize;
	uint64_t index;		/* in the archive */
	bool is_dir;
	uint8_t head[WHEEL_HEAD];
	size_t head_len;
	const uint8_t *data;	/* the inflated bytes a verdict reads (ELF members), or NULL */
	size_t len;
};

struct wheel {
	const char *path;
	void *zip;			/* zip_t * */
	const char *name, *version, *build;	/* from the file name */
	const char *meta_name, *meta_version;	/* from METADATA */
	const char *dist_info;		/* "sgl_kernel-0.3.21.dist-info" */
	const char *data_dir;		/* "sgl_kernel-0.3.21.data" */
	bool root_is_purelib;
	struct wheel_tag *tag;
	size_t ntag;
	struct wheel_member *m;
	size_t nm;
	uint64_t total;
	uint64_t kept;			/* inflated bytes held (data of members), at most WHEEL_MAX_KEPT */
};

enum status wheel_open(struct arena *a, const char *path, struct wheel *w, struct diag *d);
/* The same for a wheel in memory (data must outlive w; the fuzz entry point). */
enum status wheel_open_buffer(struct arena *a, const char *name, const uint8_t *data, size_t len,
			      struct wheel *w, struct diag *d);
void wheel_close(struct wheel *w);

/*
 * The bytes of member i: those kept by wheel_open (ELF members), else read
 * and checked (CRC, declared size) into the arena and kept from then on.
 * ST_LIMIT when the bytes kept would pass WHEEL_MAX_KEPT.
 */
enum status wheel_read(struct arena *a, struct wheel *w, size_t i, const uint8_t **data, size_t *len,
		       struct diag *d);

/*
 * The wheel's glibc floor: the newest GLIBC_x.y version its ELF members
 * require (from their version needs, as the loader checks them), found in
 * members named like a shared object (*.so, *.so.N) or an executable (no
 * dot in the name).  major == 0 when none requires a GLIBC_ version.
 */
struct glibc_floor {
	int major, minor;
	const char *version;	/* "GLIBC_2.14" */
	const char *member;	/* the member that needs it */
	size_t nelf;		/* ELF members read */
};
enum status wheel_glibc_floor(struct arena *a, struct wheel *w, struct glibc_floor *out, struct diag *d);
/* The glibc a manylinux tag promises (manylinux_2_17_x86_64, manylinux2014_x86_64): false for others. */
bool wheel_tag_glibc(const char *platform, int *major, int *minor);

/* Parses a wheel file name (also the fuzz entry point). */
enum status wheel_parse_filename(struct arena *a, const char *filename, struct wheel *w, struct diag *d);

/* What pip's tag check compares against. */
struct wheel_target {
	int py_major, py_minor;
	int glibc_major, glibc_minor;
	const char *arch;		/* "x86_64", "aarch64" */
};

/* True when pip would accept tag t on the target; *why says why not. */
bool wheel_tag_supported(struct arena *a, const struct wheel_tag *t, const struct wheel_target *tg,
			 const char **why);

/*
 * Installs w into the site directory site (prefix: the environment root,
 * for scripts, headers and data) in s's vfs, hiding the files of replaced
 * (the installed distribution of the same name, or NULL).  The first file
 * of each extension module placed is listed in placed (const char *).
 */
enum status wheel_install_overlay(struct scan *s, struct wheel *w, const char *site, const char *prefix,
				  const struct dist *replaced, struct ptrvec *placed, struct diag *d);

#endif
