/*
 * bind.c: symbol lookup as glibc's elf/dl-lookup.c does it.
 *
 * Scopes are searched in order, objects in scope order; within an object
 * its own hash table yields the candidates and check_match decides: no
 * value, a PLT reference to an undefined entry, a type that defines
 * nothing, a version that does not fit (the rules changed in glibc 2.42,
 * both are modelled); then hidden definitions are skipped and local ones
 * ignored.  An unversioned reference accepts a lone non-default version
 * ("num_versions == 1").
 */
#include "loader/internal.h"

#define ALLOWED_STT                                                                  \
	((1u << STT_NOTYPE_) | (1u << STT_OBJECT_) | (1u << STT_FUNC_) |              \
	 (1u << STT_COMMON_) | (1u << STT_TLS_) | (1u << STT_GNU_IFUNC_))

bool name_matches_map(const struct lmap *m, const char *name)
{
	if (str_eq(m->name, name))
		return true;
	for (size_t i = 0; i < m->names.n; i++)
		if (str_eq(m->names.item[i], name))
			return true;
	const struct object *o = m->obj;
	return o->kind == OBJ_ELF && o->elf_ok && o->elf.soname && str_eq(o->elf.soname, name);
}

enum match { NO_MATCH, MATCH, MATCH_FALLBACK, MATCH_FAULT };

/* glibc check_match; returns MATCH, or NO_MATCH possibly recording a
 * fallback candidate through num_versions/versioned; MATCH_FAULT when
 * the name it compares lies outside the object's memory. */
static enum match check_match(const struct process *p, const struct lmap *m,
			      const struct elf_sym *sym, uint32_t idx, const char *name,
			      const struct lookup_version *ver, uint8_t lclass,
			      const struct elf_vslot *vs, size_t nvs, int *num_versions,
			      uint32_t *versioned, bool *assert_crash)
{
	if ((sym->value == 0 && sym->shndx != SHN_ABS_ && sym->type != STT_TLS_) ||
	    ((lclass & RELOC_CLASS_PLT) && sym->shndx == SHN_UNDEF_))
		return NO_MATCH;
	if (sym->type >= 16 || !((1u << sym->type) & ALLOWED_STT))
		return NO_MATCH;
	if (sym->name_fault)
		return MATCH_FAULT;
	if (!str_eq(sym->name, name))
		return NO_MATCH;
	bool verstab = nvs > 0;
	if (ver) {
		if (!verstab) {
			/* glibc <= 2.40 asserts when this is the object named in
			 * the version requirement (commit bdaf500353). */
			if (ver->filename && name_matches_map(m, ver->filename) &&
			    !ldso_glibc_at_least(&p->facts, 2, 41))
				*assert_crash = true;
			return MATCH;
		}
		uint16_t raw = sym->versym;
		uint16_t ndx = raw & VERSYM_INDEX_;
		static const struct elf_vslot none = { 0, NULL, NULL, false };
		const struct elf_vslot *slot = ndx < nvs ? &vs[ndx] : &none;
		bool exact = slot->hash == ver->hash && slot->name && str_eq(slot->name, ver->name);
		if (exact)
			return MATCH;
		if (!ldso_glibc_at_least(&p->facts, 2, 42)) {
			if (ver->hidden || slot->hash || (raw & VERSYM_HIDDEN_))
				return NO_MATCH;
			return MATCH;
		}
		if (!ver->hidden && (!slot->name || !slot->name[0]) && !(raw & VERSYM_HIDDEN_) &&
		    (*num_versions)++ == 0)
			*versioned = idx;
		return NO_MATCH;
	}
	if (verstab && (sym->versym & VERSYM_INDEX_) >= 3) {
		if (!(sym->versym & VERSYM_HIDDEN_) && (*num_versions)++ == 0)
			*versioned = idx;
		return NO_MATCH;
	}
	return MATCH;
}

static bool lookup_fault(struct lookup_result *res, struct lmap *m, int sig, const char *what, uint64_t at)
{
	res->fault = true;
	res->map = m;
	res->fault_signal = sig;
	res->fault_what = what;
	res->fault_at = at;
	return false;
}

bool lookup_symbol(struct process *p, struct lmap *requester, const char *name, uint32_t gnu_hash,
		   const struct lookup_version *ver, uint8_t lclass, struct lmap **const *scopes,
		   const size_t *scope_n, size_t nscopes, struct lookup_result *res)
{
	(void)requester;
	memset(res, 0, sizeof *res);
	uint32_t sysv_hash = 0;
	bool sysv_done = false;
	char hashed[ELF_HASHED_NAME_SIZE] = "";
	struct lmap *partial = NULL;
	/* the first object whose chains a walk gave up on: every answer
	 * after it is a guess (it may define the name further on) */
	struct lmap *unwalked = NULL;
	for (size_t s = 0; s < nscopes; s++) {
		for (size_t i = 0; i < scope_n[s]; i++) {
			struct lmap *m = scopes[s][i];
			if ((lclass & RELOC_CLASS_COPY) && m->is_main)
				continue;
			struct object *o = m->obj;
			if (o->kind != OBJ_ELF || !o->elf_ok || !elf_has_hash_table(&o->elf))
				continue;
			const struct elf_file *ef = &o->elf;
			if (ef->exports_unknown && !partial)
				partial = m;
			if (!ef->hashed_names && elf_bloom_rejects(ef, gnu_hash))
				continue;	/* most objects: the bloom filter says no */
			const char *lname = name;
			uint32_t lgnu = gnu_hash, lsysv;
			if (ef->hashed_names) {
				/* a snapshot's object: exports are named by their hash */
				if (!hashed[0])
					elf_hashed_name(hashed, elf_name_hash64(name));
				lname = hashed;
				lgnu = elf_gnu_hash(lname);
				lsysv = elf_sysv_hash(lname);
			} else {
				if (!ef->has_gnu_hash && !sysv_done) {
					sysv_hash = elf_sysv_hash(name);
					sysv_done = true;
				}
				lsysv = sysv_hash;
			}
			struct elf_hash_iter it;
			elf_hash_iter_init(&it, ef, lname, lgnu, lsysv);
			if (it.fault)
				return lookup_fault(res, m, it.fault_signal, it.fault_what, it.fault_at);
			if (it.done)
				continue;	/* the bloom filter or an empty bucket said no */
			const struct elf_vslot *vs;
			size_t nvs = object_vslots(p->oc, o, &vs);
			int num_versions = 0;
			uint32_t versioned = 0, idx, found = 0;
			bool have = false, assert_crash = false;
			struct elf_sym sym;
			while (elf_hash_iter_next(&it, &idx)) {
				if (!elf_sym(ef, idx, &sym)) {
					if (!elf_sym_in_image(ef, idx))
						return lookup_fault(res, m, 11, "symbol table",
								    ef->symtab_vaddr + (uint64_t)idx * ef->syment);
					continue;
				}
				enum match mt = check_match(p, m, &sym, idx, lname, ver, lclass, vs, nvs,
							    &num_versions, &versioned, &assert_crash);
				if (mt == MATCH_FAULT)
					return lookup_fault(res, m, 11, "string table (a symbol's name)",
							    ef->strtab_vaddr);
				if (mt == MATCH) {
					found = idx;
					have = true;
					break;
				}
			}
			if (it.fault)
				return lookup_fault(res, m, it.fault_signal, it.fault_what, it.fault_at);
			if (!have && it.gave_up) {
				if (!unwalked)
					unwalked = m;
				continue;
			}
			if (!have && num_versions == 1) {
				found = versioned;
				have = elf_sym(ef, found, &sym);
			}
			if (!have)
				continue;
			if (sym.visibility == STV_HIDDEN_ || sym.visibility == STV_INTERNAL_)
				continue;	/* hidden and internal symbols are local */
			if (sym.bind == STB_GLOBAL_ || sym.bind == STB_WEAK_ || sym.bind == STB_GNU_UNIQUE_) {
				res->map = m;
				res->symidx = found;
				res->assert_crash = assert_crash;
				if (unwalked) {
					res->assumed = true;
					res->gave_up_in = unwalked->path;
				}
				return true;
			}
		}
	}
	if (partial || unwalked) {
		res->map = partial ? partial : unwalked;
		res->assumed = true;
		res->gave_up_in = partial ? NULL : unwalked->path;
		return true;
	}
	return false;
}
