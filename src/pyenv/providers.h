/*
 * providers.h: which pip distribution ships a library, from the table in
 * data/pyenv/providers.tsv (compiled into the binary; its sources are in
 * its header).  The table is parsed on first use into the caller's arena.
 */
#ifndef ABISCOPE_PYENV_PROVIDERS_H
#define ABISCOPE_PYENV_PROVIDERS_H

#include "core/arena.h"

struct provider {
	const char *soname;
	int cuda_major;		/* 0 when not a CUDA library */
	const char *dist;	/* pip distribution(s), as the user would install them */
	const char *folder;	/* install folder under site-packages, or "-" */
	const char *note;	/* or NULL */
};

/* The table entry for soname, or NULL. */
const struct provider *provider_lookup(struct arena *a, const char *soname);

/* The raw table text (for tests). */
const char *providers_table_text(void);

#endif
