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

struct dist_file {
	const char *path;	/* absolute, normalised */
	const char *hash;	/* "sha256=<urlsafe b64>" or NULL */
	int64_t size;		/* -1 when RECORD gives none */
};

struct dist {
	enum dist_kind kind;
	const char *name;	/* as written in METADATA */
	const char *norm;	/* PEP 503 normalised: lowercase, runs of -_. as - */
	const char *version;
	const char *installer;	/* "pip", "uv", "conda"... or NULL */
	const char *meta;	/* the .dist-info folder, or the conda json file */
	const char *site;	/* the site directory (conda: the prefix) */
	struct dist_file *file;
	size_t nfile;
	bool has_record, has_metadata;
	const char *record_error;	/* why a RECORD that is there could not be read, or NULL */
	struct ptrvec requires;	/* const char *: Requires-Dist lines */
	struct ptrvec problems;	/* const char *: malformed lines, with line numbers */
};

struct distset {
	struct ptrvec all;	/* struct dist *, discovery order */
	struct strmap owner;	/* absolute file path -> struct dist * */
	struct strmap by_norm;	/* normalised name -> struct dist * (the first seen) */
};

/* Reads the metadata of every distribution in e's site directories. */
void dists_load(struct scan *s, const struct pyenv *e, struct distset *ds);

/* The distribution that recorded path (absolute), or NULL. */
struct dist *dists_owner(const struct distset *ds, const char *path);

/* PEP 503 name normalisation into the arena. */
const char *dist_normalize(struct arena *a, const char *name);

/*
 * Parsers over buffers (also the fuzz entry points).
 * record_parse: RECORD CSV; base is the directory paths are relative to.
 * metadata_parse: RFC 822-style headers until the first blank line.
 */
void record_parse(struct arena *a, const char *base, const char *text, size_t len, struct dist *d);
void metadata_parse(struct arena *a, const char *text, size_t len, struct dist *d);

/* sha256 of a file in RECORD form ("sha256=" + urlsafe base64, no padding). */
enum status file_sha256_record(struct scan *s, const char *path, char *out, size_t outsz,
			       struct diag *d);

#endif
