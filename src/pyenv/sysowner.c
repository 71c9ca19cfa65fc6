#include "pyenv/sysowner.h"

#include <limits.h>

#define DPKG_INFO "/var/lib/dpkg/info"
#define MAX_LIST ((size_t)64 << 20)

const char *pyenv_externally_managed(struct scan *s, const struct pyenv *e)
{
	if (e->kind == PYENV_VENV || e->kind == PYENV_CONDA || e->kind == PYENV_PLAIN || !e->py_major)
		return NULL;
	char dir[PATH_MAX];
	const char *stdlib;
	if (e->dynload) {
		path_dirname(e->dynload, dir, sizeof dir);
		stdlib = dir;
	} else if (e->root) {
		stdlib = arena_printf(&s->arena, "%s/lib/python%d.%d", e->root, e->py_major, e->py_minor);
	} else {
		return NULL;
	}
	const char *marker = arena_printf(&s->arena, "%s/EXTERNALLY-MANAGED", stdlib);
	struct fs_stat st;
	fs_stat(&s->fs, marker, &st);
	return st.kind == FS_REGULAR ? marker : NULL;
}

static bool is_library_name(const char *base)
{
	return str_ends(base, ".so") || strstr(base, ".so.") != NULL;
}

struct list_scan {
	struct scan *s;
	struct sysowner *so;
	const struct pyenv *e;
};

static bool read_list(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct list_scan *ls = ctx;
	struct arena *a = &ls->s->arena;
	(void)is_link;
	size_t n = strlen(name);
	if (kind != FS_REGULAR || n < 6 || strcmp(name + n - 5, ".list") != 0)
		return true;
	char *text;
	size_t len;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(&ls->s->fs, arena_printf(a, "%s/%s", DPKG_INFO, name), MAX_LIST, &text, &len, &d) != ST_OK)
		return true;
	const char *colon = strchr(name, ':');	/* "python3-yaml:amd64.list" */
	const char *pkg = NULL;
	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		char *le = nl ? nl : text + len;
		*le = '\0';
		bool site = false;
		for (size_t i = 0; i < ls->e->nsite && !site; i++)
			site = str_starts(p, ls->e->site[i]);
		const char *base = path_basename(p);
		bool lib = *p == '/' && is_library_name(base);
		if (site || lib) {
			if (!pkg)
				pkg = arena_strndup(a, name, colon ? (size_t)(colon - name) : n - 5);
			const char *path = arena_strdup(a, p);
			if (site)
				strmap_put(a, &ls->so->by_path, path, (void *)pkg);
			if (lib && !strmap_get(&ls->so->by_lib, path_basename(path)))
				strmap_put(a, &ls->so->by_lib, path_basename(path),
					   (void *)arena_printf(a, "%s\t%s", pkg, path));
		}
		p = le + 1;
	}
	free(text);
	return true;
}

static void read_lists(struct scan *s, struct sysowner *so, const struct pyenv *e)
{
	if (so->read)
		return;
	so->read = true;
	struct list_scan ls = { s, so, e };
	if (fs_list_dir(&s->fs, DPKG_INFO, read_list, &ls))
		so->manager = "dpkg";
}

const char *sysowner_of(struct scan *s, struct sysowner *so, const struct pyenv *e, const char *path)
{
	if (!path)
		return NULL;
	read_lists(s, so, e);
	return strmap_get(&so->by_path, path);
}

const char *sysowner_library(struct scan *s, struct sysowner *so, const struct pyenv *e, const char *name,
			     const char **path)
{
	read_lists(s, so, e);
	const char *v = strmap_get(&so->by_lib, name);
	if (!v)
		return NULL;
	const char *tab = strchr(v, '\t');
	*path = tab + 1;
	return arena_strndup(&s->arena, v, (size_t)(tab - v));
}
