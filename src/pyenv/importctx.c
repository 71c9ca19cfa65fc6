#include "pyenv/importctx.h"

#include <fnmatch.h>
#include <limits.h>

#define MAX_SOURCE (8u * 1024 * 1024)

static char *read_text(struct scan *s, const char *path, size_t *len)
{
	char *buf;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(&s->fs, path, MAX_SOURCE, &buf, len, &d) != ST_OK)
		return NULL;
	return buf;
}

/* The string value of a top-level assignment "name = '...'" or
 * "name: Optional[str] = '...'"; "None" gives NULL with *is_none set. */
static const char *assigned_string(struct arena *a, const char *text, const char *name, bool *is_none)
{
	*is_none = false;
	size_t nl = strlen(name);
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		if (len > nl && strncmp(line, name, nl) == 0 && (line[nl] == ' ' || line[nl] == '=' || line[nl] == ':')) {
			const char *eq = memchr(line, '=', len);
			if (eq) {
				const char *v = eq + 1;
				while (v < line + len && *v == ' ')
					v++;
				if (v < line + len && (*v == '\'' || *v == '"')) {
					char q = *v++;
					const char *e = memchr(v, q, (size_t)(line + len - v));
					if (e)
						return arena_strndup(a, v, (size_t)(e - v));
				}
				if ((size_t)(line + len - v) >= 4 && strncmp(v, "None", 4) == 0) {
					*is_none = true;
					return NULL;
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return NULL;
}

static bool assigned_bool(const char *text, const char *name, bool dflt)
{
	const char *p = strstr(text, name);
	while (p) {
		bool at_line_start = p == text || p[-1] == '\n';
		const char *q = p + strlen(name);
		while (*q == ' ')
			q++;
		if (at_line_start && *q == '=') {
			q++;
			while (*q == ' ')
				q++;
			if (strncmp(q, "True", 4) == 0)
				return true;
			if (strncmp(q, "False", 5) == 0)
				return false;
		}
		p = strstr(p + 1, name);
	}
	return dflt;
}

/* The string literals of a region, in order. */
struct literal {
	const char *s;
	const char *end;	/* just past the closing quote in the source */
	const char *start;	/* the opening quote */
};

static size_t literals(struct arena *a, const char *from, const char *to, struct literal *out, size_t max)
{
	size_t n = 0;
	for (const char *p = from; p < to && n < max; p++) {
		if (*p == '#') {
			while (p < to && *p != '\n')
				p++;
			continue;
		}
		if (*p != '"' && *p != '\'')
			continue;
		/* skip f-strings and other prefixed literals: they are messages */
		bool prefixed = p > from && ((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'));
		char q = *p;
		const char *e = p + 1;
		while (e < to && *e != q && *e != '\n')
			e++;
		if (e >= to || *e != q)
			continue;
		if (!prefixed) {
			out[n].s = arena_strndup(a, p + 1, (size_t)(e - p - 1));
			out[n].start = p;
			out[n].end = e + 1;
			n++;
		}
		p = e;
	}
	return n;
}

static bool only_punct(const char *a, const char *b)
{
	for (; a < b; a++)
		if (!(*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r' || *a == ',' || *a == ':'))
			return false;
	return true;
}

static void read_preloads(struct arena *a, const char *init, struct torch_layout *t);

void torch_source_parse(struct arena *a, const char *init, const char *version_py, const char *internal,
			struct torch_layout *t)
{
	bool none;
	if (version_py) {
		t->version = assigned_string(a, version_py, "__version__", &none);
		t->cuda = assigned_string(a, version_py, "cuda", &none);
	}
	t->use_global_deps = true;
	if (internal) {
		t->use_global_deps = assigned_bool(internal, "USE_GLOBAL_DEPS", true);
		t->rtld_global_with_libtorch = assigned_bool(internal, "USE_RTLD_GLOBAL_WITH_LIBTORCH", false);
	}
	if (init) {
		t->preload_always = strstr(init, "/proc/self/maps") != NULL;
		t->look_in_cu_dir = strstr(init, "\"cu{") || strstr(init, "'cu{");
		t->look_in_plain_dir = strstr(init, "join(path, lib_folder, \"lib\"") != NULL ||
				       strstr(init, "join(path, lib_folder, 'lib'") != NULL;
		read_preloads(a, init, t);
		ptrvec_push(a, &t->notes,
			    arena_printf(a, "torch/__init__.py preloads %zu CUDA libraries%s", t->npreload,
					 t->preload_always ? " once libcudart is loaded"
							   : " only when libtorch_global_deps fails"));
	}
}

static void read_preloads(struct arena *a, const char *init, struct torch_layout *t)
{
	const char *start = strstr(init, "def _preload_cuda_deps");
	if (!start)
		return;
	const char *end = strstr(start + 1, "\ndef ");
	const char *end2 = strstr(start + 1, "\nif ");
	if (!end || (end2 && end2 < end))
		end = end2;
	if (!end)
		end = start + strlen(start);
	struct literal lit[256];
	size_t n = literals(a, start, end, lit, ARRAY_SIZE(lit));
	t->preload = arena_calloc(a, n ? n : 1, sizeof *t->preload);
	for (size_t i = 0; i + 1 < n; i++) {
		const char *folder = lit[i].s, *pat = lit[i + 1].s;
		if (!only_punct(lit[i].end, lit[i + 1].start) || !strstr(pat, ".so") ||
		    strstr(folder, ".so") || strchr(folder, '/') || strchr(folder, ' ') || !*folder)
			continue;
		struct torch_preload *pl = &t->preload[t->npreload++];
		pl->folder = folder;
		pl->pattern = pat;
		/* "required=False" right after the pair marks an optional one */
		const char *after = lit[i + 1].end;
		const char *close = strchr(after, ')');
		pl->required = true;
		if (close && close - after < 40) {
			const char *rf = strstr(after, "required=False");
			if (rf && rf < close)
				pl->required = false;
		}
		if (str_eq(folder, "nvtx") && !strstr(after, "required"))
			pl->required = !t->preload_always;
		i++;
	}
}

struct glob_ctx {
	struct scan *s;
	const char *pattern;
	struct ptrvec hits;
};

static bool glob_entry(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct glob_ctx *g = ctx;
	(void)kind;
	(void)is_link;
	if (fnmatch(g->pattern, name, 0) == 0)
		ptrvec_push(&g->s->arena, &g->hits, arena_strdup(&g->s->arena, name));
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *glob_first(struct scan *s, const char *dir, const char *pattern)
{
	struct glob_ctx g = { s, pattern, { 0 } };
	if (!fs_list_dir(&s->fs, dir, glob_entry, &g) || g.hits.n == 0)
		return NULL;
	/* Python's glob returns directory order; sorted is the stable choice. */
	sort_items(g.hits.item, g.hits.n, sizeof(void *), cmp_str);
	return arena_printf(&s->arena, "%s/%s", dir, (const char *)g.hits.item[0]);
}

const char *torch_preload_path(struct scan *s, const struct pyenv *e, const struct torch_layout *t,
			       const struct torch_preload *pl)
{
	for (size_t i = 0; i < e->nsite; i++) {
		const char *site = e->site[i];
		const char *hit = glob_first(s, arena_printf(&s->arena, "%s/nvidia/%s/lib", site, pl->folder),
					     pl->pattern);
		if (!hit && t->look_in_cu_dir && t->cuda) {
			int maj = (int)strtol(t->cuda, NULL, 10);
			hit = glob_first(s, arena_printf(&s->arena, "%s/nvidia/cu%d/lib", site, maj), pl->pattern);
		}
		if (!hit && t->look_in_plain_dir)
			hit = glob_first(s, arena_printf(&s->arena, "%s/%s/lib", site, pl->folder), pl->pattern);
		if (hit)
			return hit;
	}
	return NULL;
}

struct cmod_ctx {
	struct scan *s;
	const char *suffix;
	const char *best;
};

static bool find_c_module(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct cmod_ctx *c = ctx;
	(void)kind;
	(void)is_link;
	if (strncmp(name, "_C.", 3) != 0 || !str_ends(name, ".so"))
		return true;
	if (c->suffix && str_eq(name + 2, c->suffix))
		c->best = arena_strdup(&c->s->arena, name);
	else if (!c->best)
		c->best = arena_strdup(&c->s->arena, name);
	return true;
}

void torch_layout_read(struct scan *s, const struct pyenv *e, struct torch_layout *t)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < e->nsite && !t->found; i++) {
		const char *dir = arena_printf(&s->arena, "%s/torch", e->site[i]);
		struct fs_stat st;
		fs_stat(&s->fs, arena_printf(&s->arena, "%s/__init__.py", dir), &st);
		if (st.kind == FS_REGULAR) {
			t->found = true;
			t->dir = dir;
			t->site = e->site[i];
		}
	}
	if (!t->found)
		return;
	size_t len;
	char *ver = read_text(s, arena_printf(&s->arena, "%s/version.py", t->dir), &len);
	char *internal = read_text(s, arena_printf(&s->arena, "%s/_utils_internal.py", t->dir), &len);
	char *init = read_text(s, arena_printf(&s->arena, "%s/__init__.py", t->dir), &len);
	torch_source_parse(&s->arena, init, ver, internal, t);
	free(ver);
	free(internal);
	free(init);
	const char *gd = arena_printf(&s->arena, "%s/lib/libtorch_global_deps.so", t->dir);
	struct fs_stat st;
	fs_stat(&s->fs, gd, &st);
	t->global_deps = st.kind == FS_REGULAR ? gd : NULL;
	struct cmod_ctx c = { s, e->ext_suffix, NULL };
	fs_list_dir(&s->fs, t->dir, find_c_module, &c);
	t->c_module = c.best ? arena_printf(&s->arena, "%s/%s", t->dir, c.best) : NULL;
}

static struct import_step *add_step(struct scan *s, struct import_run *r, const char *path, bool global,
				    const char *why)
{
	struct import_step *st;
	r->step = arena_grow(&s->arena, r->step, r->nstep, r->nstep + 1, sizeof *r->step);
	st = &r->step[r->nstep++];
	st->path = path;
	st->global = global;
	st->why = why;
	return st;
}

static bool do_step(struct scan *s, struct process *p, struct import_run *r, const char *path,
		    bool global, const char *why, struct dlopen_result *out)
{
	struct import_step *st = add_step(s, r, path, global, why);
	struct dlopen_result tmp;
	struct dlopen_result *dr = out ? out : &tmp;
	bool lazy = p->opt.lazy;
	p->opt.lazy = false;
	proc_dlopen(p, path, global, dr);
	p->opt.lazy = lazy;
	st->ok = dr->ok;
	st->error = dr->dlerror;
	return dr->ok;
}

static bool cudart_loaded(const struct process *p)
{
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct lmap *m = p->maps.item[i];
		if (m->obj->kind == OBJ_ELF && m->obj->elf_ok && m->obj->elf.soname &&
		    str_starts(m->obj->elf.soname, "libcudart.so"))
			return true;
	}
	return false;
}

static bool preload_all(struct scan *s, struct process *p, const struct pyenv *e,
			const struct torch_layout *t, struct import_run *r)
{
	for (size_t i = 0; i < t->npreload; i++) {
		const struct torch_preload *pl = &t->preload[i];
		const char *path = torch_preload_path(s, e, t, pl);
		if (!path) {
			if (pl->required) {
				r->error = arena_printf(&s->arena, "ValueError: %s not found in the system path",
							pl->pattern);
				return false;
			}
			continue;
		}
		const char *why = arena_printf(&s->arena, "torch/__init__.py preloads %s (nvidia/%s)",
					       path_basename(path), pl->folder);
		if (!do_step(s, p, r, path, false, why, NULL)) {
			r->error = arena_printf(&s->arena, "OSError: %s", r->step[r->nstep - 1].error);
			return false;
		}
	}
	return true;
}

void torch_import_replay(struct scan *s, struct process *p, const struct pyenv *e,
			 const struct torch_layout *t, struct import_run *r)
{
	memset(r, 0, sizeof *r);
	if (!t->found || !t->c_module) {
		r->error = t->found ? "torch/_C extension module not found" : "torch is not installed";
		return;
	}
	if (t->use_global_deps && t->global_deps) {
		bool ok = do_step(s, p, r, t->global_deps, true,
				  "torch/__init__.py loads libtorch_global_deps.so with RTLD_GLOBAL", NULL);
		if (!ok) {
			/* _load_global_deps: on OSError, preload the CUDA wheels and retry */
			if (!preload_all(s, p, e, t, r))
				return;
			if (!do_step(s, p, r, t->global_deps, true,
				     "torch retries libtorch_global_deps.so after the preloads", NULL)) {
				r->error = arena_printf(&s->arena, "OSError: %s", r->step[r->nstep - 1].error);
				return;
			}
		} else if (t->preload_always && cudart_loaded(p)) {
			if (!preload_all(s, p, e, t, r))
				return;
		}
	}
	bool global = t->rtld_global_with_libtorch;
	if (!do_step(s, p, r, t->c_module, global,
		     global ? "from torch._C import * (RTLD_GLOBAL | RTLD_LAZY)" : "from torch._C import *",
		     &r->c_module)) {
		r->error = arena_printf(&s->arena, "ImportError: %s", r->c_module.dlerror);
		return;
	}
	r->ok = true;
}
