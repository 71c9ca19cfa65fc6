/*
 * memo.h: what one relocation pass's lookups found (process.c).
 *
 * Within a pass the scopes do not change, so a lookup's answer depends
 * only on the reference: its name, version (name, file, hash), lookup
 * class and whether the requester binds RTLD_DEEPBIND.  Each distinct
 * reference walks the scopes once per pass.  The memory is the pass's
 * own: malloc()ed, given back by lookup_memo_clear() when the pass ends
 * (an arena would keep every pass's table until the scan ends: 12 MB on a
 * serving stack), and bounded to LOOKUP_MEMO_MAX answers.
 */
#ifndef ABISCOPE_LOADER_MEMO_H
#define ABISCOPE_LOADER_MEMO_H

#include "loader/internal.h"

#define LOOKUP_MEMO_MAX 262144	/* answers: bounds its memory (27 MiB at most, freed with the pass) */

/* What a reference is, for the memo: the strings are the reference's own
 * (they outlive the pass). */
struct memo_key {
	const char *name;
	uint32_t gnu_hash;
	const struct lookup_version *ver;	/* NULL: unversioned */
	uint8_t deepbind, lookup_class;
};

struct memo_answer;
struct memo_slot;

struct lookup_memo {
	struct memo_slot *slot;
	size_t cap;		/* a power of two, or 0 */
	struct memo_answer *answer;
	size_t n, answer_cap;
	bool out_of_memory;	/* it stopped remembering: lookups go on without it */
};

/* The answer remembered for k, or false. */
bool lookup_memo_find(const struct lookup_memo *m, const struct memo_key *k, bool *found,
		      struct lookup_result *res);
/* Remembers an answer (nothing once full). */
void lookup_memo_store(struct lookup_memo *m, const struct memo_key *k, bool found, const struct lookup_result *res);
/* Forgets everything and gives the memory back. */
void lookup_memo_clear(struct lookup_memo *m);

#endif
