/*
 * dist.h: installed distributions, read from their metadata files.
 *
 * For every site directory: each *.dist-info folder (METADATA for name and
 * version, INSTALLER, RECORD for the files it installed with their hash and
 * size) and *.egg-info folder (PKG-INFO, installed-files.txt); for a conda
 * environment also the JSON files of conda-meta (name, version, files).  The set maps
 * every recorded file to its owner, and notices what pip does not: two
 * metadata folders for one project, metadata without RECORD.
 *
 * The text parsers take byte buffers (fuzzed: tests/fuzz/fuzz_record.c) and
 * never trust a line: paths are normalised and checked to stay inside the
 * environment.  Results live in the scan's arena.
 */
#ifndef ABISCOPE_PYENV_DIST_H
#define ABISCOPE_PYENV_DIST_H

#include "pyenv/env.h"

enum dist_kind { DIST_INFO, DIST_EGG_INFO, DIST_CONDA };

/* A recorded file.  rel is normalised and relative to its distribution's
 * site folder when the file lies under it (most do: one copy of the site
 * prefix per distribution, not per row), else absolute (starts with '/');
 * dist_file_path() gives the absolute path.  rel and hash point into the
 * distribution's one arena copy of its RECORD where the row needed no
 * rewriting. */
struct dist_file {
	const char *rel;
	const char *hash;	/* "sha256=<urlsafe b64>" or NULL */
	int64_t size;		/* -1 when RECORD gives none */
};

struct dist {
	enum dist_kind kind;
	size_t index;		/* discovery order in distset.all */
	const char *name;	/* as written in METADATA */
	const char *norm;	/* PEP 503 normalised: lowercase, runs of -_. as - */
	const char *version;
	const char *installer;	/* "pip", "uv", "conda"... or NULL */
	const char *meta;	/* the .dist-info folder, or the conda json file */
	const char *site;	/* the site directory (conda: the prefix); rel's base */
	struct dist_file *file;
	size_t nfile;
	bool has_record, has_metadata;
	const char *record_error;	/* why a RECORD that is there could not be read (or was
					 * not: over the scan's cap), or NULL */
	struct ptrvec requires;	/* const char *: Requires-Dist lines */
	struct ptrvec problems;	/* const char *: malformed lines, with line numbers */
};

/*
 * Which distribution owns a file: one map per site folder, keyed by the
 * path relative to it, and one for files recorded outside their site; the
 * first distribution discovered wins, as before.  Maps are sized once, from
 * the row count, after every RECORD is read.  The RECORD, installed-files
 * and conda-meta text one scan keeps is capped (MAX_RECORD_TOTAL); a
 * distribution past the cap gets record_error and owns nothing, which the
 * unowned-binary finding names instead of "copied in by hand".
 */
struct owner_site {
	const char *site;
	size_t len;
	size_t rows;		/* rows recorded under it: the map's size */
	struct strmap files;	/* rel -> struct dist * */
};

struct distset {
	struct ptrvec all;	/* struct dist *, discovery order */
	struct ptrvec owner_sites;	/* struct owner_site *, first seen first */
	struct strmap owner_abs;	/* absolute paths recorded outside their site */
	struct strmap by_norm;	/* normalised name -> struct dist * (the first seen) */
	size_t record_bytes, record_rows;	/* file-list text and rows kept so far (the caps' counts) */
};

/* About 9x the bytes and 12x the rows of the largest real environment
 * measured (torch 2.15 + vllm + tensorflow's CUDA stack: 7 MB, 84k rows):
 * at most about 250 MB of memory however the lists are crafted. */
#define MAX_RECORD_TOTAL (64u * 1024 * 1024)
#define MAX_RECORD_ROWS (1000u * 1000)

/* Reads the metadata of every distribution in e's site directories. */
void dists_load(struct scan *s, const struct pyenv *e, struct distset *ds);

/* The distribution that recorded path (absolute), or NULL. */
struct dist *dists_owner(const struct distset *ds, const char *path);

/* f's absolute path: f->rel itself, or d->site + "/" + f->rel written into
 * buf (DIST_PATH_MAX bytes hold any). */
#define DIST_PATH_MAX (2 * 4096 + 2)	/* twice PATH_MAX, what add_row normalises into */
const char *dist_file_path(const struct dist *d, const struct dist_file *f, char *buf, size_t bufsz);

/* PEP 503 name normalisation into the arena. */
const char *dist_normalize(struct arena *a, const char *name);

/*
 * Parsers over buffers (also the fuzz entry points).
 * record_parse: RECORD CSV; base is the directory paths are relative to;
 * rows are stored relative to d->site (absolute when it is NULL).
 * metadata_parse: RFC 822-style headers until the first blank line.
 */
void record_parse(struct arena *a, const char *base, const char *text, size_t len, struct dist *d);
/* The same over text itself (text[len] is NUL), cut in place: text must
 * live as long as a (arena_adopt). */
void record_parse_in_place(struct arena *a, const char *base, char *text, size_t len, struct dist *d);
void metadata_parse(struct arena *a, const char *text, size_t len, struct dist *d);

/* sha256 of a file in RECORD form ("sha256=" + urlsafe base64, no padding). */
enum status file_sha256_record(struct scan *s, const char *path, char *out, size_t outsz,
			       struct diag *d);

#endif
