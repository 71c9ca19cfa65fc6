/*
 * rebind.h: bindings that need no lookup, for relocate() (process.c).
 *
 * A reference that last bound normally (no
 * assumption, no assertion, no fault) to object P binds normally again in
 * any scopes where P is searched after nothing but "clean" maps: objects
 * where no lookup can fault (elf_lookup_never_faults) or assert (they have
 * version records, or glibc >= 2.41), or that lookups skip.  Whatever those
 * maps define, the reference binds without a failure, and a relocation
 * records nothing else about it.  An object all of whose references bound
 * so is relocated again by checking its few providers, not its references.
 * Without this a library every extension module of a package loads was
 * looked up whole again for each module, in scopes that differ only by the
 * module (issue 25): O(modules x relocations).
 */
#ifndef ABISCOPE_LOADER_REBIND_H
#define ABISCOPE_LOADER_REBIND_H

#include "loader/internal.h"

/* The scopes of one relocation: each object's first position in them
 * (stamped under gen) and how many leading maps are clean, for an
 * unversioned reference (clean[0]) and a versioned one (clean[1]). */
struct rebind_scopes {
	uint64_t gen;
	size_t clean[2];
};
void rebind_index(struct process *p, struct lmap **const *scopes, const size_t *scope_n, struct rebind_scopes *rs);

/* The object's memory of its bindings (kept in the object cache's arena,
 * cleared when the lookup rules differ: another glibc release). */
struct bind_memory *rebind_memory(struct process *p, struct object *o, const struct elf_refs *refs);
/* Whether every reference binds as before in these scopes. */
bool rebind_all(struct process *p, struct bind_memory *b, const struct elf_refs *refs, const struct rebind_scopes *rs);
/* Whether reference i does. */
bool rebind_one(const struct bind_memory *b, size_t i, const struct elf_symref *r, const struct rebind_scopes *rs);
/* Reference i was looked up: what it bound to normally, or NULL. */
void rebind_record(struct bind_memory *b, size_t i, bool versioned, struct object *provider);

#endif
