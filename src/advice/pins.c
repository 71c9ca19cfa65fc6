#include "advice/pins.h"
#include "pyenv/requires.h"

__asm__(".section .rodata\n"
	".global abiscope_pins_tsv\n"
	".type abiscope_pins_tsv, @object\n"
	"abiscope_pins_tsv:\n"
	".incbin \"data/torch/pins.tsv\"\n"
	".byte 0\n"
	".previous\n");
extern const char abiscope_pins_tsv[];

const char *pins_table_text(void)
{
	return abiscope_pins_tsv;
}

const struct pins *pins_table(struct arena *a, struct pins **cache)
{
	if (*cache)
		return *cache;
	struct pins *t = arena_calloc(a, 1, sizeof *t);
	size_t cap = 0;
	for (const char *line = abiscope_pins_tsv; *line;) {
		const char *eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		const char *t1 = memchr(line, '\t', (size_t)(eol - line));
		const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(eol - t1 - 1)) : NULL;
		if (line[0] != '#' && t1 && t2) {
			if (t->nrow == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				t->row = arena_grow(a, t->row, cap, ncap, sizeof *t->row);
				cap = ncap;
			}
			struct pin_row *r = &t->row[t->nrow++];
			r->dist = dist_normalize(a, arena_strndup(a, line, (size_t)(t1 - line)));
			r->version = arena_strndup(a, t1 + 1, (size_t)(t2 - t1 - 1));
			r->requirement = arena_strndup(a, t2 + 1, (size_t)(eol - t2 - 1));
		}
		line = *eol ? eol + 1 : eol;
	}
	*cache = t;
	return t;
}

size_t pins_of(const struct pins *t, const char *dist, const char *version, size_t *first)
{
	size_t n = 0;
	*first = 0;
	for (size_t i = 0; i < t->nrow; i++) {
		if (!str_eq(t->row[i].dist, dist) || version_cmp(t->row[i].version, version) != 0)
			continue;
		if (!n)
			*first = i;
		n++;
	}
	return n;
}

const char *pins_built_for(struct arena *a, const struct pins *t, const char *dist, const char *torch_version)
{
	const char *pub = version_public(a, torch_version);
	const char *best = NULL;
	for (size_t i = 0; i < t->nrow; i++) {
		const struct pin_row *r = &t->row[i];
		struct requirement q;
		if (!str_eq(r->dist, dist) || !requirement_parse(a, r->requirement, &q) || !str_eq(q.norm, "torch") ||
		    !q.pin || version_cmp(q.pin, pub) != 0)
			continue;
		if (!best || version_cmp(r->version, best) > 0)
			best = r->version;
	}
	return best;
}
