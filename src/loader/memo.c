/*
 * memo.c: what one relocation pass's lookups found (memo.h).
 */
#include "loader/memo.h"

#include "core/hashmap.h"

struct memo_answer {
	const char *name, *ver_name, *ver_file;
	uint32_t ver_hash;
	uint8_t tag[3];
	bool found;
	struct lookup_result res;
};

/* The key is a hash made of what the reference already has (its name's
 * GNU hash, its version's); the answer holds the names it is checked
 * against. */
struct memo_slot {
	uint64_t hash;
	uint32_t answer;	/* index + 1; 0: empty */
};

static void tag_of(const struct memo_key *k, uint8_t tag[3])
{
	tag[0] = k->deepbind;
	tag[1] = k->lookup_class;
	tag[2] = k->ver ? 1 + k->ver->hidden : 0;
}

static uint64_t key_hash(const struct memo_key *k, const uint8_t tag[3])
{
	const struct lookup_version *v = k->ver;
	uint64_t parts[2] = { (uint64_t)k->gnu_hash << 32 | (v ? v->hash : 0),
			      (uint64_t)tag[0] | (uint64_t)tag[1] << 8 | (uint64_t)tag[2] << 16 |
				      (uint64_t)(v && v->filename ? hash_str(v->filename) : 0) << 24 };
	return hash_mem64(0, parts, sizeof parts);
}

static bool answer_matches(const struct memo_answer *a, const struct memo_key *k, const uint8_t tag[3])
{
	const struct lookup_version *v = k->ver;
	return !memcmp(a->tag, tag, sizeof a->tag) && str_eq(a->name, k->name) &&
	       (!v || (a->ver_hash == v->hash && str_same(a->ver_name, v->name) &&
		       str_same(a->ver_file, v->filename)));
}

bool lookup_memo_find(const struct lookup_memo *m, const struct memo_key *k, bool *found,
		      struct lookup_result *res)
{
	if (!m->cap)
		return false;
	uint8_t tag[3];
	tag_of(k, tag);
	uint64_t h = key_hash(k, tag);
	for (size_t j = h & (m->cap - 1); m->slot[j].answer; j = (j + 1) & (m->cap - 1)) {
		const struct memo_answer *a = &m->answer[m->slot[j].answer - 1];
		if (m->slot[j].hash == h && answer_matches(a, k, tag)) {
			*found = a->found;
			*res = a->res;
			return true;
		}
	}
	return false;
}

static bool grow_slots(struct lookup_memo *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct memo_slot *slot = calloc(cap, sizeof *slot);
	if (!slot)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slot[i].answer)
			continue;
		size_t j = m->slot[i].hash & (cap - 1);
		while (slot[j].answer)
			j = (j + 1) & (cap - 1);
		slot[j] = m->slot[i];
	}
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
	return true;
}

static bool grow_answers(struct lookup_memo *m)
{
	size_t cap = m->answer_cap ? m->answer_cap * 2 : 512;
	struct memo_answer *answer = realloc(m->answer, cap * sizeof *answer);
	if (!answer)
		return false;
	m->answer = answer;
	m->answer_cap = cap;
	return true;
}

void lookup_memo_store(struct lookup_memo *m, const struct memo_key *k, bool found, const struct lookup_result *res)
{
	if (m->out_of_memory || m->n >= LOOKUP_MEMO_MAX)
		return;
	if (((m->n + 1) * 2 > m->cap && !grow_slots(m)) || (m->n == m->answer_cap && !grow_answers(m))) {
		m->out_of_memory = true;
		return;
	}
	struct memo_answer *a = &m->answer[m->n++];
	tag_of(k, a->tag);
	uint64_t h = key_hash(k, a->tag);
	size_t j = h & (m->cap - 1);
	while (m->slot[j].answer)
		j = (j + 1) & (m->cap - 1);
	a->name = k->name;
	a->ver_name = k->ver ? k->ver->name : NULL;
	a->ver_file = k->ver ? k->ver->filename : NULL;
	a->ver_hash = k->ver ? k->ver->hash : 0;
	a->found = found;
	a->res = *res;
	m->slot[j].hash = h;
	m->slot[j].answer = (uint32_t)m->n;
}

void lookup_memo_clear(struct lookup_memo *m)
{
	free(m->slot);
	free(m->answer);
	memset(m, 0, sizeof *m);
}
