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
	const char *version;	/* the version read from a real wheel ("12.8.93"), or NULL */
	const char *pinned_by;	/* who pins that version ("torch 2.9.1"), or NULL */
};

/* The table entry for soname, or NULL. */
const struct provider *provider_lookup(struct arena *a, const char *soname);
/* The same, preferring the row for CUDA major cuda_major (0: the first row):
 * libcurand.so.10 comes from nvidia-curand-cu12 or nvidia-curand (13). */
const struct provider *provider_lookup_cuda(struct arena *a, const char *soname, int cuda_major);
/* "pip install nvidia-cuda-nvrtc-cu12==12.8.93" (without == when the
 * version is unknown); NULL when pv is not a pip distribution. */
const char *provider_pip_line(struct arena *a, const struct provider *pv);

/* The CUDA major every row of soname names (libcudart.so.12: 12), or 0
 * when both majors ship a library of that name (libcurand.so.10,
 * libcusparse.so.12, libcufile.so.0, libnvToolsExt.so.1 ...) or it is no
 * CUDA library: a soname alone never decides then. */
int provider_soname_major(struct arena *a, const char *soname);

/*
 * The CUDA major of a library file from evidence it or its distribution
 * carries, 0 when none decides: the distribution that installed it
 * (owner: -cu12 / -cu13 in its name; an unsuffixed nvidia-* 13.x
 * toolkit wheel, or any unsuffixed nvidia-* file in nvidia/cu13/), the
 * folder (nvidia/cuNN/), a soname of one major (its own, or one it
 * needs: a CUDA 13 libcusparse.so.12 needs libnvJitLink.so.13).  *basis
 * (optional) says which.
 */
struct dist;
struct object;
int provider_file_major(struct arena *a, const char *path, const struct dist *owner, const struct object *o,
			const char **basis);

/* The raw table text (for tests). */
const char *providers_table_text(void);

#endif
