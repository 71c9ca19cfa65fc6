#include "cxx/nearmiss.h"
#include "cxx/demangle.h"
#include "elf/symtab.h"

const char *nm_cause_name(enum nm_cause c)
{
	switch (c) {
	case NM_CAUSE_SIGNATURE: return "signature-changed";
	case NM_CAUSE_CXX11_ABI: return "cxx11-abi";
	case NM_CAUSE_TEMPLATE: return "template-changed";
	case NM_CAUSE_NAMESPACE: return "namespace-changed";
	case NM_CAUSE_REMOVED: return "removed";
	case NM_CAUSE_NOT_IN_SCOPE: return "not-in-scope";
	case NM_CAUSE_VERSION: return "version-changed";
	case NM_CAUSE_OTHER_COPY: return "other-copy";
	case NM_CAUSE_UNKNOWN: break;
	}
	return "unknown";
}

static enum nm_cause cause_of_relation(enum cxx_relation rel)
{
	switch (rel) {
	case CXX_REL_CXX11_ABI: return NM_CAUSE_CXX11_ABI;
	case CXX_REL_SIGNATURE: return NM_CAUSE_SIGNATURE;
	case CXX_REL_TEMPLATE: return NM_CAUSE_TEMPLATE;
	case CXX_REL_SCOPE: return NM_CAUSE_NAMESPACE;
	case CXX_REL_SAME:
	case CXX_REL_UNRELATED: break;
	}
	return NM_CAUSE_UNKNOWN;
}

/* Rank of a near miss, lower is a better explanation.  What the process
 * has loaded explains more than a copy on disk; the exact symbol in the
 * wrong place beats any look-alike. */
static int rank(const struct nm_near *n)
{
	int base = n->where->loaded ? 0 : 100;
	switch (n->cause) {
	case NM_CAUSE_NOT_IN_SCOPE: return base + 0;
	case NM_CAUSE_VERSION: return base + 1;
	case NM_CAUSE_CXX11_ABI: return base + 2;
	case NM_CAUSE_SIGNATURE: return base + 3;
	case NM_CAUSE_TEMPLATE: return base + 4;
	case NM_CAUSE_NAMESPACE: return base + 5;
	case NM_CAUSE_OTHER_COPY: return 50;	/* the exact symbol, on disk */
	default: return base + 9;
	}
}

static bool better(const struct nm_near *x, const struct nm_near *y)
{
	int rx = rank(x), ry = rank(y);
	if (rx != ry)
		return rx < ry;
	return x->diff.distance < y->diff.distance;
}

struct work {
	struct cxx_index *ix;
	struct arena *a;
	struct nm_result *r;
	struct ptrvec found;		/* struct nm_near * */
	const struct nm_object *where;
	size_t examined;
	const char *must_contain;	/* a candidate's mangled name must spell this token */
	size_t whole_name;		/* > 0: the prefix is the whole qualified name, this long */
	const struct object *requester;	/* never a provider of its own symbol (nearmiss.h) */
	const void *wanted;		/* the symbol's struct wanted, a key of the index's memories */
	uint32_t gnu_hash, sysv_hash;	/* the symbol's, for every object's table */
};

static void add_near(struct work *w, const struct nm_object *where, const char *sym, const char *ver,
		     const char *dem, const struct cxx_diff *d, enum nm_cause cause)
{
	/* the same symbol in the same file once only; so is one function under
	 * two mangled names (the complete and base object constructors C1/C2,
	 * the destructors D1/D2): they demangle to the same text */
	for (size_t i = 0; i < w->found.n; i++) {
		const struct nm_near *n = w->found.item[i];
		if (n->where->obj == where->obj &&
		    (str_eq(n->symbol, sym) || (dem && n->demangled && str_eq(n->demangled, dem))))
			return;
	}
	struct nm_near *n = arena_alloc(w->a, sizeof *n);
	n->where = where;
	n->symbol = sym;
	n->version = ver;
	n->demangled = dem;
	n->diff = *d;
	n->cause = cause;
	ptrvec_push(w->a, &w->found, n);
}

/* ---- the exact symbol ---- */

static void exact_in(struct work *w, const struct nm_object *o)
{
	const struct object *ob = o->obj;
	if (ob->kind != OBJ_ELF || !ob->elf_ok)
		return;
	const struct nm_result *r = w->r;
	const struct cxx_exports *x = NULL;
	struct elf_hash_iter it;
	uint32_t idx;
	bool hashed = elf_hash_iter_init(&it, &ob->elf, r->symbol, w->gnu_hash, w->sysv_hash);
	size_t k = 0;
	for (;;) {
		struct elf_sym s;
		uint16_t versym;
		if (hashed) {
			if (!elf_hash_iter_next(&it, &idx))
				break;
			if (!elf_sym(&ob->elf, idx, &s) || !cxx_sym_exported(&s) || !str_eq(s.name, r->symbol))
				continue;
			versym = s.versym;
		} else {
			/* no hash table: the export list */
			if (!x)
				x = cxx_exports_of(w->ix, ob);
			if (k >= x->n)
				break;
			const struct cxx_export *e = &x->e[k++];
			if (!str_eq(e->name, r->symbol))
				continue;
			versym = e->versym;
		}
		const struct elf_verdef *vd = (versym & VERSYM_INDEX_) > 1 ? elf_verdef_by_index(&ob->elf, versym) : NULL;
		const char *ver = vd ? vd->name : NULL;
		bool hidden = versym & VERSYM_HIDDEN_;
		bool fits = r->version ? (ver && str_eq(ver, r->version)) || (!ver && !ob->elf.nverdef)
				       : !hidden;
		struct cxx_diff same = { CXX_REL_SAME, NULL, 0, 0 };
		enum nm_cause cause;
		if (!fits) {
			const char *want = r->version ? r->version : "(the default version)";
			same.line = arena_calloc(w->a, 1, sizeof *same.line);
			same.line[0] = arena_printf(w->a, "symbol version: %s -> %s%s", want, ver ? ver : "(none)",
						    hidden ? " (not the default version)" : "");
			same.nline = 1;
			cause = NM_CAUSE_VERSION;
		} else if (!o->loaded) {
			cause = NM_CAUSE_OTHER_COPY;
		} else if (!o->in_scope) {
			cause = NM_CAUSE_NOT_IN_SCOPE;
		} else {
			continue;	/* it binds; the loader had another reason */
		}
		add_near(w, o, r->symbol, ver, r->demangled, &same, cause);
	}
}

/* ---- look-alikes ---- */

/* The same identifier in an unrelated namespace is a coincidence, not a
 * move: a moved function keeps its top-level namespace (c10::cuda ->
 * c10::cuda::impl) or its exact parameters (at:: -> c10::). */
static bool plausible_move(const struct cxx_sig *want, const struct cxx_sig *have)
{
	if (!want->parsed || !have->parsed || !want->npart || !have->npart)
		return false;
	/* std:: holds everything: a shared root proves nothing there */
	if (want->npart > 1 && have->npart > 1 && str_eq(want->part[0].name, have->part[0].name) &&
	    !str_eq(want->part[0].name, "std"))
		return true;
	if (want->is_function != have->is_function || want->nparam != have->nparam ||
	    !str_eq(want->quals, have->quals))
		return false;
	for (size_t i = 0; i < want->nparam; i++)
		if (!str_eq(want->param[i], have->param[i]))
			return false;
	return true;
}

/* Whether a candidate that matched a whole qualified name's prefix
 * ("2ns1g") names that function.  In a nested name (_ZN...E) the name must
 * end there ('E'), or go on with template arguments ('I') or an ABI tag
 * ('B'); anything else is inside a class of the same name ("_ZN2ns1g2m0Ev":
 * ns::g::m0), never an overload, and would spend the candidates' budget:
 * 300 members of a struct ns::g hid the ns::g(long) the search was for.
 * A name that is not nested ("_ZSt3fooi": std::foo) has its parameters
 * next. */
static bool same_function(const struct work *w, const struct cxx_export *e)
{
	if (!w->whole_name || e->body < 3 || !memchr(e->name + 2, 'N', e->body - 2))
		return true;
	char next = e->name[e->body + w->whole_name];
	return next == 'E' || next == 'I' || next == 'B';
}

/* A candidate export against the wanted symbol: its cause (UNKNOWN: not
 * a near miss), demangled text and difference.  Counts it against the
 * object's NM_MAX_EXAMINE: false when the budget is spent (the search is
 * then cut short). */
static bool weigh(struct work *w, const struct cxx_export *e, enum nm_cause *cause, const char **dem,
		  struct cxx_diff *d)
{
	*cause = NM_CAUSE_UNKNOWN;
	if (++w->examined > NM_MAX_EXAMINE)
		return false;
	if (str_eq(e->name, w->r->symbol))
		return true;	/* the exact symbol is exact_in's business */
	if ((w->must_contain && !strstr(e->name, w->must_contain)) || !same_function(w, e)) {
		w->examined--;	/* filtered without demangling: not worth a slot */
		return true;
	}
	*dem = cxx_demangle(w->a, e->name);
	if (*dem == e->name)
		return true;
	struct cxx_sig s;
	cxx_sig_parse(w->a, *dem, strlen(*dem), &s);
	cxx_sig_diff(w->a, &w->r->want, &s, d);
	*cause = cause_of_relation(d->rel);
	if (*cause == NM_CAUSE_NAMESPACE && !plausible_move(&w->r->want, &s))
		*cause = NM_CAUSE_UNKNOWN;
	return true;
}

static bool consider(void *ctx, const struct cxx_export *e)
{
	struct work *w = ctx;
	enum nm_cause cause;
	const char *dem;
	struct cxx_diff d;
	if (!weigh(w, e, &cause, &dem, &d)) {
		w->r->truncated = true;
		return false;
	}
	if (cause != NM_CAUSE_UNKNOWN)
		add_near(w, w->where, e->name, cxx_export_version(w->where->obj, e), dem, &d, cause);
	return true;
}

/* What same_name found in one object for one symbol, kept in the index:
 * the near misses in the order found, before add_near's merging (which
 * depends on what the search found before), and whether the budget cut
 * the look short. */
struct same_name_hit {
	const char *symbol, *version, *demangled;
	struct cxx_diff diff;
	enum nm_cause cause;
};

struct same_name_hits {
	struct same_name_hit *hit;
	size_t n, cap;
	bool truncated;
};

struct collect {
	struct work *w;
	struct same_name_hits *h;
};

static bool collect_hit(void *ctx, const struct cxx_export *e)
{
	struct collect *c = ctx;
	enum nm_cause cause;
	const char *dem;
	struct cxx_diff d;
	struct same_name_hits *h = c->h;
	if (!weigh(c->w, e, &cause, &dem, &d)) {
		h->truncated = true;
		return false;
	}
	if (cause == NM_CAUSE_UNKNOWN)
		return true;
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;
		h->hit = arena_grow(c->w->a, h->hit, h->cap, cap, sizeof *h->hit);
		h->cap = cap;
	}
	struct same_name_hit *x = &h->hit[h->n++];
	x->symbol = e->name;
	x->version = cxx_export_version(c->w->where->obj, e);
	x->demangled = dem;
	x->diff = d;
	x->cause = cause;
	return true;
}

/* same_name's look into one object: from the index when this symbol was
 * looked for there before, else looked for and kept. */
static void same_name_in(struct work *w, const struct nm_object *o, const char *prefix, size_t len)
{
	struct cxx_exports *x = cxx_exports_of(w->ix, o->obj);
	struct same_name_hits *h = idmap_get(&w->ix->same_name_hits, (uintptr_t)w->wanted, (uintptr_t)x);
	if (!h) {
		h = arena_calloc(w->a, 1, sizeof *h);
		struct collect c = { w, h };
		w->examined = 0;
		cxx_exports_prefix(w->ix, x, prefix, len, collect_hit, &c);
		idmap_put(w->a, &w->ix->same_name_hits, (uintptr_t)w->wanted, (uintptr_t)x, h);
	}
	for (size_t i = 0; i < h->n; i++) {
		const struct same_name_hit *k = &h->hit[i];
		add_near(w, o, k->symbol, k->version, k->demangled, &k->diff, k->cause);
	}
	if (h->truncated)
		w->r->truncated = true;
}

static bool have_close(const struct work *w)
{
	for (size_t i = 0; i < w->found.n; i++) {
		const struct nm_near *n = w->found.item[i];
		if (n->cause == NM_CAUSE_CXX11_ABI || n->cause == NM_CAUSE_SIGNATURE ||
		    n->cause == NM_CAUSE_TEMPLATE)
			return true;
	}
	return false;
}

/* Exports with the same qualified name: the prefix of every part that can
 * be mangled (a constructor's or operator's own name cannot: stop at its
 * class), filtered by comparing demangled names. */
static void same_name(struct work *w, const struct nm_object *objs, size_t nobjs)
{
	const struct nm_result *r = w->r;
	if (!r->demangled || !r->want.parsed || r->want.npart == 0)
		return;
	char prefix[1024];
	bool exact;
	bool structor = cxx_sig_is_structor(&r->want);
	size_t parts = structor ? r->want.npart - 1 : r->want.npart;
	size_t len = cxx_mangled_prefix(&r->want, parts, prefix, sizeof prefix, &exact);
	/* A prefix that stopped early (template arguments in the scope) matches
	 * the whole class template: keep only names that spell the function's
	 * own identifier before demangling them. */
	char token[512];
	w->must_contain = NULL;
	/* the whole qualified name of a function in a namespace or class */
	w->whole_name = exact && !structor && r->want.npart >= 2 ? len : 0;
	if (!exact && !structor) {
		struct cxx_sig one = { 0 };
		struct cxx_name_part part = { 0 };
		part.name = r->want.part[r->want.npart - 1].name;
		one.parsed = true;
		one.part = &part;
		one.npart = 1;
		bool ex;
		if (cxx_mangled_prefix(&one, 1, token, sizeof token, &ex) && ex)
			w->must_contain = token;
	}
	for (size_t i = 0; i < nobjs && len; i++) {
		if (objs[i].obj == w->requester)
			continue;
		w->where = &objs[i];
		same_name_in(w, &objs[i], prefix, len);
	}
	w->must_contain = NULL;
	w->whole_name = 0;
}

/* The same identifier in another namespace or class: every export that
 * spells it, in the given objects only (the expected provider and its
 * copies: where a moved function would be). */
static void same_identifier(struct work *w, const struct nm_object *const *objs, size_t nobjs)
{
	const struct nm_result *r = w->r;
	if (!r->demangled || !r->want.parsed || r->want.npart == 0 || have_close(w))
		return;
	const char *id = cxx_sig_is_structor(&r->want) ? r->want.part[r->want.npart - 2].name
						       : r->want.part[r->want.npart - 1].name;
	struct cxx_sig one = { 0 };
	struct cxx_name_part part = { 0 };
	part.name = id;
	one.parsed = true;
	one.part = &part;
	one.npart = 1;
	char token[512];
	bool exact;
	size_t len = cxx_mangled_prefix(&one, 1, token, sizeof token, &exact);
	if (!len || !exact || str_eq(id, "std"))
		return;
	for (size_t i = 0; i < nobjs; i++) {
		struct cxx_exports *x = cxx_exports_of(w->ix, objs[i]->obj);
		if (cxx_exports_substring_queries(w->ix, x) >= NM_MAX_SUBSTRING) {
			w->r->truncated = true;
			continue;
		}
		w->where = objs[i];
		w->examined = 0;
		cxx_exports_containing(w->ix, x, token, len, consider, w);
	}
}

/* ---- the expected provider ---- */

static bool soname_is(const struct object *o, const char *path, const char *name)
{
	if (o->kind == OBJ_ELF && o->elf_ok && o->elf.soname && str_eq(o->elf.soname, name))
		return true;
	return path && str_eq(path_basename(path), name);
}

/* The leading part of a C name that its family shares: "aoti_torch_" of
 * aoti_torch_get_data_ptr, "cuda" of cudaGetDevice. */
static size_t c_family_prefix(const char *name)
{
	size_t i = 0;
	while (name[i] == '_')
		i++;
	size_t start = i, unders = 0;
	for (size_t k = i; name[k]; k++)
		if (name[k] == '_' && k > start && name[k + 1]) {
			i = k + 1;
			if (++unders == 2)
				break;
		}
	if (unders == 0) {
		/* camelCase: the leading lower-case run */
		i = start;
		while (name[i] >= 'a' && name[i] <= 'z')
			i++;
	}
	return i - start >= 2 ? i : 0;
}

static void expected_provider(struct work *w, const struct nm_object *objs, size_t nobjs)
{
	struct nm_result *r = w->r;
	if (r->version_file) {
		for (size_t i = 0; i < nobjs; i++)
			if (objs[i].loaded && soname_is(objs[i].obj, objs[i].path, r->version_file)) {
				r->expected = &objs[i];
				r->expected_guess = false;
				return;
			}
	}
	char prefix[1024];
	bool exact;
	if (r->demangled && r->want.parsed) {
		for (size_t d = r->want.npart - 1; d >= 1; d--) {
			size_t len = cxx_mangled_prefix(&r->want, d, prefix, sizeof prefix, &exact);
			if (!len)
				continue;
			size_t best = 0;
			const struct nm_object *who = NULL;
			for (size_t i = 0; i < nobjs; i++) {
				if (!objs[i].loaded || objs[i].obj == w->requester)
					continue;
				size_t c = cxx_exports_count(w->ix, objs[i].obj, prefix, len);
				if (c > best) {
					best = c;
					who = &objs[i];
				}
			}
			if (who) {
				r->expected = who;
				r->expected_scope = cxx_sig_scope(w->a, &r->want, d);
				r->expected_count = best;
				r->expected_guess = true;
				return;
			}
		}
		return;
	}
	if (r->demangled)
		return;
	size_t len = c_family_prefix(r->symbol);
	if (!len)
		return;
	size_t best = 0;
	const struct nm_object *who = NULL;
	for (size_t i = 0; i < nobjs; i++) {
		if (!objs[i].loaded || objs[i].obj == w->requester)
			continue;
		size_t c = cxx_exports_c_prefix(cxx_exports_of(w->ix, objs[i].obj), r->symbol, len, NULL, NULL);
		if (c > best) {
			best = c;
			who = &objs[i];
		}
	}
	if (who) {
		r->expected = who;
		r->expected_scope = arena_strndup(w->a, r->symbol, len);
		r->expected_count = best;
		r->expected_guess = true;
	}
}

/* ---- putting it together ---- */

static void settle(struct work *w)
{
	struct nm_result *r = w->r;
	/* best first, insertion sort (the lists are short) */
	struct nm_near **v = (struct nm_near **)w->found.item;
	for (size_t i = 1; i < w->found.n; i++) {
		struct nm_near *x = v[i];
		size_t j = i;
		while (j > 0 && better(x, v[j - 1])) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	size_t n = MIN(w->found.n, (size_t)NM_MAX_NEAR);
	if (w->found.n > n)
		r->truncated = true;
	r->near = arena_calloc(w->a, n ? n : 1, sizeof *r->near);
	for (size_t i = 0; i < n; i++)
		r->near[i] = *v[i];
	r->nnear = n;
	const struct nm_near *best = nm_best(r);
	if (best && (best->where->loaded || best->cause == NM_CAUSE_OTHER_COPY))
		r->cause = best->cause;
	else if (r->expected)
		r->cause = NM_CAUSE_REMOVED;
	else
		r->cause = NM_CAUSE_UNKNOWN;
	r->have_abi = -1;
	if (best && best->demangled)
		r->have_abi = cxx_abi_macro_value(cxx_abi_flavour_of(best->demangled));
}

const struct nm_near *nm_best(const struct nm_result *r)
{
	return r->nnear ? &r->near[0] : NULL;
}

static void work_init(struct work *w, struct cxx_index *ix, struct nm_result *r)
{
	memset(w, 0, sizeof *w);
	w->ix = ix;
	w->a = ix->a;
	w->r = r;
	w->gnu_hash = elf_gnu_hash(r->symbol);
	w->sysv_hash = elf_sysv_hash(r->symbol);
	/* keep what an earlier pass found */
	for (size_t i = 0; i < r->nnear; i++) {
		struct nm_near *n = arena_alloc(w->a, sizeof *n);
		*n = r->near[i];
		ptrvec_push(w->a, &w->found, n);
	}
}

/* A symbol's demangled text and signature (read only once made), parsed
 * on its first search. */
struct wanted {
	const char *demangled;	/* NULL: not a mangled name */
	struct cxx_sig sig;
	int abi;
};

static const struct wanted *wanted_of(struct cxx_index *ix, const char *symbol)
{
	struct wanted *wt = strmap_get(&ix->wanted, symbol);
	if (wt)
		return wt;
	wt = arena_calloc(ix->a, 1, sizeof *wt);
	const char *dem = cxx_demangle(ix->a, symbol);
	if (dem != symbol) {
		wt->demangled = dem;
		cxx_sig_parse(ix->a, dem, strlen(dem), &wt->sig);
		wt->abi = cxx_abi_macro_value(cxx_abi_flavour_of(dem));
	}
	strmap_put(ix->a, &ix->wanted, arena_strdup(ix->a, symbol), wt);
	return wt;
}

void nm_search(struct cxx_index *ix, const char *symbol, const char *version,
	       const char *version_file, const struct object *requester, const struct nm_object *objs,
	       size_t nobjs, struct nm_result *r)
{
	memset(r, 0, sizeof *r);
	r->symbol = symbol;
	r->version = version;
	r->version_file = version_file;
	r->want_abi = r->have_abi = -1;
	struct work w;
	work_init(&w, ix, r);
	w.requester = requester;
	const struct wanted *wt = wanted_of(ix, symbol);
	w.wanted = wt;
	if (wt->demangled) {
		r->demangled = wt->demangled;
		r->want = wt->sig;
		r->want_abi = wt->abi;
	}
	for (size_t i = 0; i < nobjs; i++)
		exact_in(&w, &objs[i]);
	same_name(&w, objs, nobjs);
	expected_provider(&w, objs, nobjs);
	if (r->expected) {
		const struct nm_object *only = r->expected;
		same_identifier(&w, &only, 1);
	}
	settle(&w);
}

void nm_search_more(struct cxx_index *ix, const struct nm_object *objs, size_t nobjs,
		    struct nm_result *r)
{
	struct work w;
	work_init(&w, ix, r);
	w.wanted = wanted_of(ix, r->symbol);
	const struct nm_object **all = arena_calloc(w.a, nobjs ? nobjs : 1, sizeof *all);
	for (size_t i = 0; i < nobjs; i++) {
		exact_in(&w, &objs[i]);
		all[i] = &objs[i];
	}
	same_name(&w, objs, nobjs);
	same_identifier(&w, all, nobjs);
	settle(&w);
}
