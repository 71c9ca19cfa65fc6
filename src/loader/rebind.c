/*
 * rebind.c: bindings that need no lookup (rebind.h).
 */
#include "loader/rebind.h"

struct bind_memory {
	uint8_t lookup_clean;		/* 0 unknown, 1 clean, 2 not (map_clean) */
	uint8_t rules;			/* the lookup rules ref_provider was made under */
	uint64_t scope_gen;		/* the relocation whose scopes scope_pos is in */
	size_t scope_pos;
	uint64_t mark;			/* dedupe stamp (bind_summary) */
	struct object **ref_provider;	/* per reference: what it last bound to normally, or NULL */
	bool summary_valid, all_bound;	/* every reference has a provider, */
	bool any_versioned;		/* (one of them versioned) */
	uint8_t *versioned;		/* per reference: 1 when it names a version */
	struct object **providers;	/* these (distinct) */
	size_t nproviders;
};

static struct bind_memory *bind_of(struct process *p, struct object *o)
{
	if (!o->bind)
		o->bind = arena_calloc(p->oc->arena, 1, sizeof *o->bind);
	return o->bind;
}

/* Whether no lookup in m can fault (then *asserts: whether a versioned
 * one can still assert, check_match's glibc <= 2.40 case of an object
 * without version records). */
static bool map_clean(struct process *p, struct lmap *m, bool *asserts)
{
	struct object *o = m->obj;
	*asserts = false;
	if (o->kind != OBJ_ELF || !o->elf_ok || !elf_has_hash_table(&o->elf))
		return true;	/* lookup_symbol skips it */
	struct bind_memory *b = bind_of(p, o);
	if (!b->lookup_clean)
		b->lookup_clean = elf_lookup_never_faults(&o->elf) ? 1 : 2;
	if (b->lookup_clean != 1)
		return false;
	const struct elf_vslot *vs;
	*asserts = !object_vslots(p->oc, o, &vs) && !ldso_glibc_at_least(&p->facts, 2, 41);
	return true;
}

/* Stamps each object of the scopes with its first position (this
 * relocation's generation); clean[0]: how many leading maps are clean for
 * an unversioned reference, clean[1] for a versioned one. */
static void index_scopes(struct process *p, struct lmap **const *scopes, const size_t *scope_n, uint64_t gen,
			 size_t clean[2])
{
	size_t k = 0;
	clean[0] = clean[1] = SIZE_MAX;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < scope_n[s]; i++, k++) {
			struct bind_memory *b = bind_of(p, scopes[s][i]->obj);
			if (b->scope_gen != gen) {
				b->scope_gen = gen;
				b->scope_pos = k;
			}
			if (clean[0] != SIZE_MAX)
				continue;
			bool asserts;
			if (!map_clean(p, scopes[s][i], &asserts))
				clean[0] = clean[1] = MIN(clean[1], k);
			else if (asserts && clean[1] == SIZE_MAX)
				clean[1] = k;
		}
}

/* The rules check_match follows (bind.c): the glibc releases that change them. */
static uint8_t lookup_rules(const struct process *p)
{
	return (uint8_t)(1 + ldso_glibc_at_least(&p->facts, 2, 41) + 2 * ldso_glibc_at_least(&p->facts, 2, 42));
}

static bool searched_clean(const struct object *prov, uint64_t gen, size_t clean_end)
{
	return prov && prov->bind && prov->bind->scope_gen == gen && prov->bind->scope_pos < clean_end;
}

/* Whether every reference last bound normally, and to which objects: one
 * pass over the references, made again only after a lookup changed them. */
static void bind_summary(struct process *p, struct bind_memory *b, const struct elf_refs *refs)
{
	if (b->summary_valid)
		return;
	b->summary_valid = true;
	b->all_bound = true;
	b->any_versioned = false;
	b->nproviders = 0;
	uint64_t mark = ++p->oc->scope_gen;
	struct ptrvec v = { 0 };
	for (size_t i = 0; i < refs->n && b->all_bound; i++) {
		struct object *prov = b->ref_provider[i];
		b->all_bound = prov && !(refs->ref[i].lookup_class & RELOC_CLASS_COPY);
		if (!b->all_bound)
			break;
		b->any_versioned |= b->versioned[i];
		struct bind_memory *pb = bind_of(p, prov);
		if (pb->mark != mark) {
			pb->mark = mark;
			ptrvec_push(p->oc->arena, &v, prov);
		}
	}
	b->providers = (struct object **)v.item;
	b->nproviders = v.n;
}

/* Whether nothing of the object's relocation needs doing again: every
 * reference bound normally last time, to objects searched clean here. */
static bool binds_as_before(struct process *p, struct bind_memory *b, const struct elf_refs *refs, uint64_t gen,
			    const size_t clean[2])
{
	bind_summary(p, b, refs);
	if (!b->all_bound)
		return false;
	for (size_t k = 0; k < b->nproviders; k++)
		if (!searched_clean(b->providers[k], gen, clean[b->any_versioned]))
			return false;
	return true;
}

void rebind_index(struct process *p, struct lmap **const *scopes, const size_t *scope_n, struct rebind_scopes *rs)
{
	rs->gen = ++p->oc->scope_gen;
	index_scopes(p, scopes, scope_n, rs->gen, rs->clean);
}

struct bind_memory *rebind_memory(struct process *p, struct object *o, const struct elf_refs *refs)
{
	struct bind_memory *bm = bind_of(p, o);
	if (!bm->ref_provider && refs->n) {
		bm->ref_provider = arena_calloc(p->oc->arena, refs->n, sizeof *bm->ref_provider);
		bm->versioned = arena_calloc(p->oc->arena, refs->n, 1);
	}
	if (bm->rules != lookup_rules(p)) {
		if (refs->n)
			memset(bm->ref_provider, 0, refs->n * sizeof *bm->ref_provider);
		bm->rules = lookup_rules(p);
		bm->summary_valid = false;
	}
	return bm;
}

bool rebind_all(struct process *p, struct bind_memory *b, const struct elf_refs *refs, const struct rebind_scopes *rs)
{
	return refs->n && binds_as_before(p, b, refs, rs->gen, rs->clean);
}

bool rebind_one(const struct bind_memory *b, size_t i, const struct elf_symref *r, const struct rebind_scopes *rs)
{
	return b->ref_provider && searched_clean(b->ref_provider[i], rs->gen, rs->clean[b->versioned[i]]) &&
	       !(r->lookup_class & RELOC_CLASS_COPY);
}

void rebind_record(struct bind_memory *b, size_t i, bool versioned, struct object *provider)
{
	b->ref_provider[i] = provider;
	b->versioned[i] = versioned;
	b->summary_valid = false;
}
