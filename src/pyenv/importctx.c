#include "pyenv/importctx.h"

#include "core/hashmap.h"

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

/* ---- torch/__init__.py's _load_global_deps, as text ---- */

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int line_of(const char *text, const char *pos)
{
	int n = 1;
	for (const char *p = text; p < pos; p++)
		n += *p == '\n';
	return n;
}

/* [*from, *to) of an occurrence of needle in [from, to), or NULL. */
static const char *find_in(const char *from, const char *to, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = from; p && p + n <= to; p++)
		if (memcmp(p, needle, n) == 0)
			return p;
	return NULL;
}

/* The matching ')' or ']' or '}' of the bracket at open, skipping string
 * literals, or NULL. */
static const char *matching(const char *open, const char *end)
{
	int depth = 0;
	for (const char *p = open; p < end; p++) {
		if (*p == '"' || *p == '\'') {
			char q = *p++;
			while (p < end && *p != q && *p != '\n')
				p += *p == '\\' ? 2 : 1;
			continue;
		}
		if (*p == '(' || *p == '[' || *p == '{')
			depth++;
		else if ((*p == ')' || *p == ']' || *p == '}') && --depth == 0)
			return p;
	}
	return NULL;
}

/*
 * Reading _load_global_deps stays linear in torch/__init__.py however many
 * preload calls it holds: each function is found once (defs), each callee
 * and each collection is expanded once and what it added is reused, the
 * loop around a call is looked for a bounded way up, and the lines of the
 * preloads kept are counted at the end in one pass.
 */
struct def_span {
	const char *b0, *b1, *sig;	/* the body, and the '(' of the signature */
	bool found;
	bool required_default;
};

struct preload_vec {
	struct torch_preload *item;
	const char **at;		/* where each one is in the text (its line, at the end) */
	size_t n;
};

struct preload_reader {
	struct arena *a;
	const char *text, *end;
	struct strmap defs;		/* name -> struct def_span */
	struct strmap expanded;		/* a callee or a collection expanded -> struct preload_vec */
	struct strmap coll_at;		/* "coll\nfrom" -> its first mention at or after from, or MAP_NO */
};

/* At most this many preloads are kept: torch lists about twenty. */
#define MAX_PRELOADS 256
/* How far up a call its enclosing `for` is looked for (torch: the line above). */
#define LOOP_LOOKUP_LINES 64

/* The default of the callee's "required" parameter (true when it has none:
 * torch 2.1's _preload_cuda_deps always raises). */
static bool required_default(const char *sig, const char *sig_end)
{
	const char *r = find_in(sig, sig_end, "required");
	if (!r)
		return true;
	const char *eq = memchr(r, '=', (size_t)(sig_end - r));
	if (!eq)
		return true;
	eq++;
	while (*eq == ' ')
		eq++;
	return strncmp(eq, "False", 5) != 0;
}

/* The body of the top-level "def name(": from past its signature to the
 * next top-level statement; found is false when the file has none.  The
 * first definition counts; each name is looked up once. */
static const struct def_span *func_body(struct preload_reader *pr, const char *name)
{
	struct def_span *d = strmap_get(&pr->defs, name);
	if (d)
		return d;
	d = arena_calloc(pr->a, 1, sizeof *d);
	strmap_put(pr->a, &pr->defs, arena_strdup(pr->a, name), d);
	size_t nl = strlen(name);
	const char *text = pr->text, *end = pr->end;
	for (const char *p = strstr(text, "def "); p; p = strstr(p + 1, "def ")) {
		if (p != text && p[-1] != '\n')
			continue;
		const char *q = p + 4;
		if (strncmp(q, name, nl) != 0 || q[nl] != '(')
			continue;
		const char *close = matching(q + nl, end);
		if (!close)
			return d;
		const char *body = strchr(close, '\n');
		if (!body)
			return d;
		const char *e = body + 1;
		while (*e) {
			const char *eol = strchr(e, '\n');
			if (*e != ' ' && *e != '\t' && *e != '\n' && *e != '#' && *e != ')' && *e != '\r')
				break;
			e = eol ? eol + 1 : end;
		}
		d->sig = q + nl;
		d->b0 = body;
		d->b1 = e;
		d->found = true;
		d->required_default = required_default(d->sig, d->b0);
		return d;
	}
	return d;
}

static void preload_add(struct arena *a, struct preload_vec *v, const char *folder, const char *pattern,
			bool required, bool in_filter, const char *at)
{
	if (!strstr(pattern, ".so") || strstr(folder, ".so") || strchr(folder, '/') || strchr(folder, ' ') ||
	    !*folder || v->n >= MAX_PRELOADS)
		return;
	v->item = arena_grow(a, v->item, v->n, v->n + 1, sizeof *v->item);
	v->at = arena_grow(a, v->at, v->n, v->n + 1, sizeof *v->at);
	struct torch_preload *pl = &v->item[v->n];
	memset(pl, 0, sizeof *pl);
	pl->folder = folder;
	pl->pattern = pattern;
	pl->required = required;
	pl->in_filter = in_filter;
	v->at[v->n++] = at;
}

/* Adds again what the expansion named key added the first time; false when
 * there was none yet.  remember() records one: out's entries from 'from'. */
static bool replay(struct preload_reader *pr, const char *key, struct preload_vec *out)
{
	const struct preload_vec *done = strmap_get(&pr->expanded, key);
	if (!done)
		return false;
	for (size_t i = 0; i < done->n; i++)
		preload_add(pr->a, out, done->item[i].folder, done->item[i].pattern, done->item[i].required,
			    done->item[i].in_filter, done->at[i]);
	return true;
}

static void remember(struct preload_reader *pr, const char *key, const struct preload_vec *out, size_t from)
{
	struct preload_vec *done = arena_calloc(pr->a, 1, sizeof *done);
	for (size_t i = from; i < out->n; i++)
		preload_add(pr->a, done, out->item[i].folder, out->item[i].pattern, out->item[i].required,
			    out->item[i].in_filter, out->at[i]);
	strmap_put(pr->a, &pr->expanded, arena_strdup(pr->a, key), done);
}

/* Each preload's line, from where it is: one pass over the text, in the
 * order of the positions (the list keeps the order of the calls). */
static void number_lines(struct arena *a, const char *text, struct preload_vec *v)
{
	size_t *order = arena_alloc(a, (v->n + 1) * sizeof *order);
	for (size_t i = 0; i < v->n; i++) {	/* at most MAX_PRELOADS: insertion sort */
		size_t k = i;
		for (; k > 0 && v->at[order[k - 1]] > v->at[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	int line = 1;
	const char *p = text;
	for (size_t i = 0; i < v->n; i++) {
		for (; p < v->at[order[i]]; p++)
			line += *p == '\n';
		v->item[order[i]].line = line;
	}
}

/* The (folder, pattern) pairs of the collection "name = {...}" or
 * "name: T = [...]" in [from, to). */
static void collection_pairs(struct preload_reader *pr, const char *from, const char *to, const char *name,
			     bool required, struct preload_vec *out)
{
	struct arena *a = pr->a;
	size_t nl = strlen(name);
	for (const char *p = find_in(from, to, name); p; p = find_in(p + 1, to, name)) {
		if ((p > from && ident_char(p[-1])) || ident_char(p[nl]))
			continue;
		const char *q = p + nl;
		const char *eol = memchr(q, '\n', (size_t)(to - q));
		const char *eq = eol ? memchr(q, '=', (size_t)(eol - q)) : NULL;
		if (!eq || eq[1] == '=')
			continue;
		const char *open = eq + 1;
		while (open < to && (*open == ' ' || *open == '\t'))
			open++;
		if (*open != '{' && *open != '[')
			continue;
		const char *close = matching(open, to);
		if (!close)
			return;
		struct literal lit[128];
		size_t n = literals(a, open, close, lit, ARRAY_SIZE(lit));
		for (size_t i = 0; i + 1 < n; i++)
			if (only_punct(lit[i].end, lit[i + 1].start) && strstr(lit[i + 1].s, ".so")) {
				preload_add(a, out, lit[i].s, lit[i + 1].s, required, true, lit[i].start);
				i++;
			}
		return;
	}
}

/* The collection a call at pos iterates: "for a, b in NAME[.items()]:" on an
 * enclosing line at most LOOP_LOOKUP_LINES above it in [from, pos), or NULL. */
static const char *loop_collection(struct arena *a, const char *from, const char *pos)
{
	const char *ls = pos;
	while (ls > from && ls[-1] != '\n')
		ls--;
	size_t indent = 0;
	while (ls[indent] == ' ')
		indent++;
	int lines = 0;
	for (const char *l = ls; l > from && lines++ < LOOP_LOOKUP_LINES;) {
		const char *prev = l - 1;
		while (prev > from && prev[-1] != '\n')
			prev--;
		size_t ind = 0;
		while (prev[ind] == ' ')
			ind++;
		if (ind < indent && prev[ind] != '\n' && prev[ind] != '#') {
			if (strncmp(prev + ind, "for ", 4) != 0)
				return NULL;
			const char *in = find_in(prev, l, " in ");
			if (!in)
				return NULL;
			const char *n0 = in + 4, *n1 = n0;
			while (ident_char(*n1))
				n1++;
			return n1 > n0 ? arena_strndup(a, n0, (size_t)(n1 - n0)) : NULL;
		}
		l = prev;
	}
	return NULL;
}

/* Is coll named in [from, p)?  Its first mention at or after from is found
 * once per region. */
static bool mentioned_before(struct preload_reader *pr, const char *coll, const char *from, const char *to,
			     const char *p)
{
	const char *key = arena_printf(pr->a, "%s\n%p", coll, (const void *)from);
	void *at = strmap_get(&pr->coll_at, key);
	if (!at) {
		const char *hit = find_in(from, to, coll);
		at = hit ? (void *)hit : MAP_NO;
		strmap_put(pr->a, &pr->coll_at, key, at);
	}
	return at != MAP_NO && (const char *)at < p;
}

/* The pairs of the collection a call in a loop iterates (positional names:
 * the loop variables), from its definition in this region or in
 * _preload_cuda_deps around it. */
static void loop_preloads(struct preload_reader *pr, const char *from, const char *to, const char *p,
			  bool required, struct preload_vec *out)
{
	const char *coll = loop_collection(pr->a, from, p);
	if (!coll)
		return;
	const char *f0 = from;
	const struct def_span *fb;
	if (!mentioned_before(pr, coll, from, to, p) && (fb = func_body(pr, "_preload_cuda_deps"))->found)
		f0 = fb->b0;
	/* the collection is defined above its loop: the same answer for every call of the loop */
	const char *key = arena_printf(pr->a, "coll\n%s\n%p\n%d", coll, (const void *)f0, required);
	if (replay(pr, key, out))
		return;
	size_t before = out->n;
	collection_pairs(pr, f0, p, coll, required, out);
	remember(pr, key, out, before);
}

/* Every preload the code in [from, to) performs, in order: calls of
 * _preload_cuda* with literal (folder, pattern), calls in a loop over a
 * collection of pairs, and calls of a function that does either. */
static void collect_preloads(struct preload_reader *pr, const char *from, const char *to, int req_given, int depth,
			     struct preload_vec *out)
{
	struct arena *a = pr->a;
	static const char callee_prefix[] = "_preload_cuda";
	for (const char *p = find_in(from, to, callee_prefix); p; p = find_in(p + 1, to, callee_prefix)) {
		if (p > from && (ident_char(p[-1]) || p[-1] == '.'))
			continue;
		if (p - from >= 4 && strncmp(p - 4, "def ", 4) == 0)
			continue;
		const char *n1 = p;
		while (ident_char(*n1))
			n1++;
		if (*n1 != '(')
			continue;
		const char *close = matching(n1, to);
		if (!close)
			return;
		char *name = arena_strndup(a, p, (size_t)(n1 - p));
		const struct def_span *def = func_body(pr, name);
		bool dflt = def->found ? def->required_default : true;
		int req = -1;
		const char *kw = find_in(n1, close, "required=");
		if (kw) {
			const char *v = kw + strlen("required=");
			req = strncmp(v, "False", 5) == 0 ? 0 : strncmp(v, "True", 4) == 0 ? 1 : req_given;
		}
		bool required = req >= 0 ? req != 0 : dflt;
		struct literal lit[4];
		size_t n = literals(a, n1, close, lit, ARRAY_SIZE(lit));
		if (n >= 2 && only_punct(lit[0].end, lit[1].start)) {
			preload_add(a, out, lit[0].s, lit[1].s, required, false, p);
		} else if (find_in(n1, close, ",") && !find_in(n1, find_in(n1, close, ","), "=")) {
			loop_preloads(pr, from, to, p, required, out);
		} else if (def->found && depth < 3) {
			/* a function of preloads: expanded once, its preloads kept at their own lines */
			const char *key = arena_printf(a, "call\n%s\n%d", name, req);
			if (!replay(pr, key, out)) {
				size_t before = out->n;
				collect_preloads(pr, def->b0, def->b1, req >= 0 ? req : -1, depth + 1, out);
				remember(pr, key, out, before);
			}
		}
		p = close;
	}
}

/* The literal of '"..." not in _maps' (or 'in'), in a region that reads
 * /proc/self/maps, or NULL. */
static const char *maps_needle(struct arena *a, const char *from, const char *to)
{
	if (!find_in(from, to, "/proc/self/maps"))
		return NULL;
	for (const char *p = find_in(from, to, " in _maps"); p; p = find_in(p + 1, to, " in _maps")) {
		const char *q = p;
		if (q - from > 4 && strncmp(q - 4, " not", 4) == 0)
			q -= 4;
		q--;
		if (q <= from || (*q != '"' && *q != '\''))
			continue;
		char quote = *q;
		const char *open = q - 1;
		while (open > from && *open != quote && *open != '\n')
			open--;
		if (*open == quote && q - open > 1)
			return arena_strndup(a, open + 1, (size_t)(q - open - 1));
	}
	return "libcudart.so";
}

static void read_load_global_deps(struct arena *a, const char *init, struct torch_layout *t)
{
	struct preload_reader pr = { .a = a, .text = init, .end = init + strlen(init) };
	const struct def_span *lgd = func_body(&pr, "_load_global_deps");
	if (!lgd->found)
		return;
	t->has_load_global_deps = true;
	const char *cdll = find_in(lgd->b0, lgd->b1, "ctypes.CDLL(");
	if (!cdll)
		return;
	t->global_deps_line = line_of(init, cdll);
	const char *exc = find_in(cdll, lgd->b1, "except OSError");
	const char *ok_end = exc ? exc : lgd->b1;
	struct preload_vec after = { 0 }, fallback = { 0 };
	collect_preloads(&pr, cdll, ok_end, -1, 0, &after);
	if (after.n) {
		number_lines(a, init, &after);
		t->after_deps = after.item;
		t->nafter_deps = after.n;
		t->after_line = after.item[0].line;
		t->after_needs_mapped = maps_needle(a, cdll, ok_end);
	}
	if (exc) {
		t->fallback_line = line_of(init, exc);
		collect_preloads(&pr, exc, lgd->b1, -1, 0, &fallback);
		number_lines(a, init, &fallback);
		t->preload = fallback.item;
		t->npreload = fallback.n;
		t->fallback_filters = strstr(init, "raise err") != NULL;
	}
}

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
		t->look_in_cu_dir = strstr(init, "\"cu{") || strstr(init, "'cu{");
		t->look_in_plain_dir = strstr(init, "join(path, lib_folder, \"lib\"") != NULL ||
				       strstr(init, "join(path, lib_folder, 'lib'") != NULL;
		read_load_global_deps(a, init, t);
		if (t->nafter_deps)
			ptrvec_push(a, &t->notes,
				    arena_printf(a, "torch/__init__.py:%d preloads %zu libraries after "
						    "libtorch_global_deps.so%s%s", t->after_line, t->nafter_deps,
						 t->after_needs_mapped ? ", once /proc/self/maps names " : "",
						 t->after_needs_mapped ? t->after_needs_mapped : ""));
		if (t->npreload)
			ptrvec_push(a, &t->notes,
				    arena_printf(a, "torch/__init__.py:%d preloads %zu CUDA libraries when "
						    "libtorch_global_deps.so fails to load", t->fallback_line, t->npreload));
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
		if (fs_kind_of(&s->fs, arena_printf(&s->arena, "%s/__init__.py", dir)) == FS_REGULAR) {
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
		    bool global, bool lazy, const char *why, struct dlopen_result *out)
{
	struct import_step *st = add_step(s, r, path, global, why);
	struct dlopen_result tmp;
	struct dlopen_result *dr = out ? out : &tmp;
	bool was_lazy = p->opt.lazy;
	p->opt.lazy = lazy;
	proc_dlopen(p, path, global, dr);
	p->opt.lazy = was_lazy;
	st->ok = dr->ok;
	st->error = dr->dlerror;
	return dr->ok;
}

/* "libcudart.so" in /proc/self/maps: any mapped file's path names it. */
static bool maps_mention(const struct process *p, const char *needle)
{
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct lmap *m = p->maps.item[i];
		if ((m->path && strstr(m->path, needle)) || (m->obj->path && strstr(m->obj->path, needle)))
			return true;
	}
	return false;
}

enum preload_end { PRELOAD_DONE, PRELOAD_NOT_FOUND, PRELOAD_OSERROR };

/* The preloads of list in order; stops at the first that raises. */
static enum preload_end preload_list(struct scan *s, struct process *p, const struct pyenv *e,
				     const struct torch_layout *t, const struct torch_preload *list, size_t n,
				     struct import_run *r, const char **error)
{
	for (size_t i = 0; i < n; i++) {
		const struct torch_preload *pl = &list[i];
		const char *path = torch_preload_path(s, e, t, pl);
		if (!path) {
			if (pl->required) {
				*error = arena_printf(&s->arena, "ValueError: %s not found in the system path",
						      pl->pattern);
				return PRELOAD_NOT_FOUND;
			}
			continue;
		}
		const char *why = arena_printf(&s->arena, "torch/__init__.py:%d preloads %s (%s)", pl->line,
					       path_basename(path), pl->folder);
		if (!do_step(s, p, r, path, false, false, why, NULL)) {
			*error = arena_printf(&s->arena, "OSError: %s", r->step[r->nstep - 1].error);
			return PRELOAD_OSERROR;
		}
	}
	return PRELOAD_DONE;
}

/* The OSError fallback runs only for an error that names a listed library. */
static bool fallback_applies(const struct torch_layout *t, const char *err)
{
	if (!t->fallback_filters)
		return true;
	for (size_t i = 0; i < t->npreload; i++) {
		const struct torch_preload *pl = &t->preload[i];
		if (!pl->in_filter)
			continue;
		const char *dot = strchr(pl->pattern, '.');
		size_t n = dot ? (size_t)(dot - pl->pattern) : strlen(pl->pattern);
		char stem[128];
		if (n >= sizeof stem)
			continue;
		memcpy(stem, pl->pattern, n);
		stem[n] = 0;
		if (err && strstr(err, stem))
			return true;
	}
	return false;
}

/* _load_global_deps; false when it raises (r->error says what). */
static bool load_global_deps(struct scan *s, struct process *p, const struct pyenv *e,
			     const struct torch_layout *t, struct import_run *r)
{
	const char *why = arena_printf(&s->arena, "torch/__init__.py:%d loads libtorch_global_deps.so with "
					 "RTLD_GLOBAL", t->global_deps_line);
	if (do_step(s, p, r, t->global_deps, true, false, why, NULL)) {
		const char *ignored;
		if (t->nafter_deps && (!t->after_needs_mapped || maps_mention(p, t->after_needs_mapped)))
			/* inside try/except Exception: the first failure ends it quietly */
			preload_list(s, p, e, t, t->after_deps, t->nafter_deps, r, &ignored);
		return true;
	}
	const char *err = r->step[r->nstep - 1].error;
	if (!t->npreload || !fallback_applies(t, err)) {
		r->error = arena_printf(&s->arena, "OSError: %s", err);
		return false;
	}
	if (preload_list(s, p, e, t, t->preload, t->npreload, r, &r->error) != PRELOAD_DONE)
		return false;
	why = arena_printf(&s->arena, "torch/__init__.py:%d retries libtorch_global_deps.so after the preloads",
			   t->fallback_line);
	if (!do_step(s, p, r, t->global_deps, true, false, why, NULL)) {
		r->error = arena_printf(&s->arena, "OSError: %s", r->step[r->nstep - 1].error);
		return false;
	}
	return true;
}

/* torch's CUDA library (libtorch_cuda.so) dlopen()s "libcuda.so.1" while
 * torch._C initialises, and keeps it when the loader finds one (the field
 * matrix sees it mapped after `import torch` in every release that has a
 * stand-in on LD_LIBRARY_PATH); not found, nothing happens. */
/* The object named base that the import mapped since before, or NULL. */
static struct lmap *mapped_since(const struct process *p, size_t before, const char *base)
{
	for (size_t i = before; i < p->maps.n; i++) {
		struct lmap *m = p->maps.item[i];
		if (str_eq(path_basename(m->obj->path ? m->obj->path : m->path), base))
			return m;
	}
	return NULL;
}

/* A dlopen(name, RTLD_NOW | RTLD_LOCAL) from caller (NULL: the executable)
 * made by an initialiser that ignores its failure: kept as a step (shown as
 * path) when it loads, forgotten when it does not. */
static void initialiser_dlopen(struct scan *s, struct process *p, struct import_run *r, struct lmap *caller,
			       const char *name, const char *path, const char *why)
{
	struct proc_mark mark;
	proc_mark_save(p, &mark);
	struct dlopen_mode mode = { .caller = caller };
	struct dlopen_result dr;
	proc_dlopen_mode(p, name, &mode, &dr);
	if (!dr.ok) {
		proc_rewind(p, &mark, &dr);
		return;
	}
	add_step(s, r, path, false, why)->ok = true;
}

static void driver_probe(struct scan *s, struct process *p, struct import_run *r, size_t before)
{
	if (mapped_since(p, before, "libtorch_cuda.so"))
		initialiser_dlopen(s, p, r, NULL, "libcuda.so.1", "libcuda.so.1",
				   "torch's libtorch_cuda.so dlopen()s libcuda.so.1 as torch._C initialises");
}

/* torch 2.0 and 2.1 ship torch/lib/libnvfuser_codegen.so, and a static
 * initialiser of libtorch_cpu.so (LoadingNvfuserLibrary in
 * torch/csrc/jit/codegen/cuda/interface.cpp) dlopen()s it by bare name
 * (RTLD_LOCAL | RTLD_NOW) as torch._C loads; a failure is caught there and
 * the import goes on.  The file being installed is the condition (the
 * release's own files say it, no version table); it maps libnvrtc with it. */
static void nvfuser_probe(struct scan *s, struct process *p, const struct torch_layout *t,
			  struct import_run *r, size_t before)
{
	const char *lib = arena_printf(&s->arena, "%s/lib/libnvfuser_codegen.so", t->dir);
	struct fs_stat st;
	fs_stat(&s->fs, lib, &st);
	struct lmap *caller = st.kind == FS_REGULAR ? mapped_since(p, before, "libtorch_cpu.so") : NULL;
	if (caller)
		initialiser_dlopen(s, p, r, caller, "libnvfuser_codegen.so", lib,
				   "libtorch_cpu.so's static initialiser dlopen()s libnvfuser_codegen.so "
				   "(torch 2.0-2.1, caught on failure)");
}

/* Libraries torch's wheels bundle whose initialisers dlopen() a library
 * by name, as the real import shows (LD_DEBUG=files), by the bundled file's
 * name: auditwheel's -<hash> suffix is the first 8 hex digits of the
 * original's sha256, so the name identifies the very binary. */
static const struct init_dlopen {
	const char *file;	/* basename of the loaded object */
	const char *name;	/* what its initialiser dlopen()s */
	const char *why;
} init_dlopens[] = {
	{ "libcusparseLt-f8b4a9fb.so.0", "libnvrtc.so",
	  "cuSPARSELt 0.5 (torch 2.2's torch/lib/libcusparseLt-f8b4a9fb.so.0) dlopen()s libnvrtc.so as it initialises" },
};

static void bundled_init_dlopens(struct scan *s, struct process *p, struct import_run *r, size_t before)
{
	for (size_t k = 0; k < ARRAY_SIZE(init_dlopens); k++) {
		const struct init_dlopen *d = &init_dlopens[k];
		struct lmap *m = mapped_since(p, before, d->file);
		if (m)
			initialiser_dlopen(s, p, r, m, d->name, d->name, d->why);
	}
}

void torch_import_replay(struct scan *s, struct process *p, const struct pyenv *e,
			 const struct torch_layout *t, struct import_run *r)
{
	memset(r, 0, sizeof *r);
	if (!t->found || !t->c_module) {
		r->error = t->found ? "torch/_C extension module not found" : "torch is not installed";
		return;
	}
	size_t before = p->maps.n;
	bool global = t->rtld_global_with_libtorch;
	/* an __init__.py without _load_global_deps (a build of its own) loads
	 * the file only if it is there, as before; a release's always tries */
	if (!global && t->use_global_deps && (t->has_load_global_deps || t->global_deps)) {
		const char *gd = t->global_deps ? t->global_deps
						: arena_printf(&s->arena, "%s/lib/libtorch_global_deps.so", t->dir);
		struct torch_layout tt = *t;
		tt.global_deps = gd;
		if (!load_global_deps(s, p, e, &tt, r))
			return;
	}
	if (!do_step(s, p, r, t->c_module, global, global,
		     global ? "from torch._C import * (RTLD_GLOBAL | RTLD_LAZY: TORCH_USE_RTLD_GLOBAL)"
			    : "from torch._C import *",
		     &r->c_module)) {
		r->error = arena_printf(&s->arena, "ImportError: %s", r->c_module.dlerror);
		return;
	}
	r->ok = true;
	nvfuser_probe(s, p, t, r, before);
	bundled_init_dlopens(s, p, r, before);
	driver_probe(s, p, r, before);
	r->nloads = p->maps.n > before ? p->maps.n - before : 0;
	r->loads = arena_calloc(&s->arena, r->nloads ? r->nloads : 1, sizeof *r->loads);
	for (size_t i = 0; i < r->nloads; i++) {
		const struct lmap *m = p->maps.item[before + i];
		r->loads[i] = m->obj->path ? m->obj->path : m->path;
	}
}
