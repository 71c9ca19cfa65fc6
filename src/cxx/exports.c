#include "cxx/exports.h"

void cxx_index_init(struct cxx_index *ix, struct arena *a)
{
	memset(ix, 0, sizeof *ix);
	ix->a = a;
}

void cxx_index_new_round(struct cxx_index *ix)
{
	ix->round++;
}

size_t cxx_exports_substring_queries(const struct cxx_index *ix, const struct cxx_exports *x)
{
	return x->queries_round == ix->round ? x->substring_queries : 0;
}

uint32_t cxx_mangled_body(const char *name)
{
	if (name[0] != '_' || name[1] != 'Z')
		return 0;
	uint32_t p = 2;
	if ((name[p] == 'T' && name[p + 1] && strchr("VITSHW", name[p + 1])) ||
	    (name[p] == 'G' && name[p + 1] == 'V'))
		p += 2;
	if (name[p] == 'N') {
		p++;
		while (name[p] && strchr("rVKRO", name[p]))
			p++;
	}
	return p;
}

/* What the loader could bind to: a defined, global or weak, visible symbol. */
/* Length of the name token at s: "St", or a <length><identifier> source
 * name whose characters are all there; 0 otherwise.  s holds limit bytes
 * before any NUL (callers pass its strlen or less), so a length that fits
 * the limit needs no scan for a NUL. */
static size_t token_len(const char *s, size_t limit)
{
	if (limit >= 2 && s[0] == 'S' && s[1] == 't')
		return 2;
	if (limit == 0 || s[0] < '1' || s[0] > '9')
		return 0;
	size_t i = 0, n = 0;
	while (i < limit && s[i] >= '0' && s[i] <= '9') {
		n = n * 10 + (size_t)(s[i] - '0');
		if (n > 4096)
			return 0;
		i++;
	}
	if (n > limit - i)
		return 0;
	return i + n;
}

/* The bytes the bucket key covers: the first two tokens, or 0 when the
 * body does not start with two of them. */
static size_t key_len(const char *body, size_t limit)
{
	size_t t1 = token_len(body, limit);
	if (!t1)
		return 0;
	size_t t2 = token_len(body + t1, limit - t1);
	return t2 ? t1 + t2 : 0;
}

static void build_buckets(struct cxx_index *ix, struct cxx_exports *x)
{
	uint32_t nb = 1;
	while (nb < x->nmangled / 4 + 1 && nb < (1u << 24))
		nb <<= 1;
	uint32_t *key = arena_calloc(ix->a, x->n ? x->n : 1, sizeof *key);
	x->bucket_start = arena_calloc(ix->a, (size_t)nb + 1, sizeof *x->bucket_start);
	x->bucket_item = arena_calloc(ix->a, x->nmangled ? x->nmangled : 1, sizeof *x->bucket_item);
	x->nbucket = nb;
	/* counting sort into buckets: count, prefix sums, fill */
	for (size_t i = 0; i < x->n; i++) {
		if (!x->e[i].mangled)
			continue;
		const char *body = x->e[i].name + x->e[i].body;
		size_t k = key_len(body, strlen(body));
		key[i] = (k ? hash_bytes(body, k) : 0) & (nb - 1);
		x->bucket_start[key[i] + 1]++;
	}
	for (uint32_t b = 0; b < nb; b++)
		x->bucket_start[b + 1] += x->bucket_start[b];
	uint32_t *fill = arena_calloc(ix->a, nb, sizeof *fill);
	for (size_t i = 0; i < x->n; i++)
		if (x->e[i].mangled)
			x->bucket_item[x->bucket_start[key[i]] + fill[key[i]]++] = (uint32_t)i;
}

bool cxx_sym_exported(const struct elf_sym *s)
{
	if (s->shndx == SHN_UNDEF_ || !s->name[0])
		return false;
	if (s->bind != STB_GLOBAL_ && s->bind != STB_WEAK_ && s->bind != STB_GNU_UNIQUE_)
		return false;
	if (s->visibility != STV_DEFAULT_ && s->visibility != STV_PROTECTED_)
		return false;
	return s->type != STT_SECTION_ && s->type != STT_FILE_;
}

struct cxx_exports *cxx_exports_of(struct cxx_index *ix, const struct object *o)
{
	/* an object outside the cache (dev and ino 0) is known by its address */
	uint64_t id_a = o->dev || o->ino ? o->dev : UINT64_MAX, id_b = o->dev || o->ino ? o->ino : (uintptr_t)o;
	struct cxx_exports *x = idmap_get(&ix->by_id, id_a, id_b);
	if (x && x->obj == o)
		return x;
	x = arena_alloc(ix->a, sizeof *x);
	x->obj = o;
	if (o->kind == OBJ_ELF && o->elf_ok && o->elf.nsyms > 1) {
		const struct elf_file *ef = &o->elf;
		x->e = arena_calloc(ix->a, ef->nsyms, sizeof *x->e);
		for (uint32_t i = 1; i < ef->nsyms; i++) {
			struct elf_sym s;
			if (!elf_sym(ef, i, &s) || !cxx_sym_exported(&s))
				continue;
			struct cxx_export *e = &x->e[x->n++];
			e->name = s.name;
			e->symidx = i;
			e->versym = s.versym;
			e->body = cxx_mangled_body(s.name);
			e->mangled = e->body != 0;
			x->nmangled += e->mangled;
		}
	}
	if (x->nmangled)
		build_buckets(ix, x);
	idmap_put(ix->a, &ix->by_id, id_a, id_b, x);
	ix->objects++;
	ix->symbols += x->n;
	return x;
}

/* The exports matching a prefix, found once (PREFIX_HITS_KEPT at most are
 * remembered; a query with more scans again). */
struct prefix_hits {
	size_t n;
	bool listed;	/* idx holds them (n <= PREFIX_HITS_KEPT) */
	uint32_t idx[];
};

#define PREFIX_HITS_KEPT 4096

static bool body_starts(const struct cxx_export *e, const char *prefix, size_t len)
{
	return e->mangled && strncmp(e->name + e->body, prefix, len) == 0;
}

/* fn for every export matching prefix, in index order, as the scan finds
 * them; how many it saw. */
static size_t visit_prefix(const struct cxx_exports *x, const char *prefix, size_t len, cxx_export_fn fn,
			   void *ctx)
{
	size_t n = 0;
	size_t k = key_len(prefix, strnlen(prefix, len));
	bool bucketed = k && x->nbucket;
	uint32_t b = bucketed ? hash_bytes(prefix, k) & (x->nbucket - 1) : 0;
	size_t from = bucketed ? x->bucket_start[b] : 0, to = bucketed ? x->bucket_start[b + 1] : x->n;
	for (size_t j = from; j < to; j++) {
		const struct cxx_export *e = &x->e[bucketed ? x->bucket_item[j] : j];
		if (!body_starts(e, prefix, len))
			continue;
		n++;
		if (fn && !fn(ctx, e))
			break;
	}
	return n;
}

/* Every export matching prefix, in index order, into hits (cap of them;
 * returns how many match in all). */
static size_t scan_prefix(const struct cxx_exports *x, const char *prefix, size_t len, uint32_t *hits, size_t cap)
{
	size_t n = 0;
	size_t k = key_len(prefix, strnlen(prefix, len));
	if (k && x->nbucket) {
		uint32_t b = hash_bytes(prefix, k) & (x->nbucket - 1);
		for (uint32_t j = x->bucket_start[b]; j < x->bucket_start[b + 1]; j++)
			if (body_starts(&x->e[x->bucket_item[j]], prefix, len) && n++ < cap)
				hits[n - 1] = x->bucket_item[j];
		return n;
	}
	for (size_t i = 0; i < x->n; i++)
		if (body_starts(&x->e[i], prefix, len) && n++ < cap)
			hits[n - 1] = (uint32_t)i;
	return n;
}

/* "<exports, 16 hex digits>:<prefix>", built by hand: snprintf cost more
 * than the scan it saves.  False when it does not fit (or the prefix holds
 * a NUL before len). */
static bool prefix_key(char *key, size_t size, const struct cxx_exports *x, const char *prefix, size_t len)
{
	if (len + 18 > size || memchr(prefix, '\0', len))
		return false;
	uintptr_t id = (uintptr_t)x;
	for (int i = 15; i >= 0; i--, id >>= 4)
		key[i] = "0123456789abcdef"[id & 15];
	key[16] = ':';
	memcpy(key + 17, prefix, len);
	key[17 + len] = '\0';
	return true;
}

size_t cxx_exports_prefix(struct cxx_index *ix, const struct cxx_exports *x, const char *prefix, size_t len,
			  cxx_export_fn fn, void *ctx)
{
	char key[1200];
	bool keyed = prefix_key(key, sizeof key, x, prefix, len);
	struct prefix_hits *h = keyed ? strmap_get(&ix->prefix_hits, key) : NULL;
	if (!h) {
		uint32_t hits[PREFIX_HITS_KEPT];
		size_t n = scan_prefix(x, prefix, len, hits, PREFIX_HITS_KEPT);
		if (!keyed)
			return fn ? visit_prefix(x, prefix, len, fn, ctx) : n;
		bool listed = n <= PREFIX_HITS_KEPT;	/* else only how many */
		h = arena_alloc(ix->a, sizeof *h + (listed ? n : 0) * sizeof *h->idx);
		h->n = n;
		h->listed = listed;
		if (listed)
			memcpy(h->idx, hits, n * sizeof *h->idx);
		strmap_put(ix->a, &ix->prefix_hits, arena_strdup(ix->a, key), h);
	}
	if (!fn)
		return h->n;
	if (!h->listed)
		return visit_prefix(x, prefix, len, fn, ctx);
	size_t seen = 0;
	for (size_t i = 0; i < h->n; i++) {
		seen++;
		if (!fn(ctx, &x->e[h->idx[i]]))
			break;
	}
	return seen;
}

size_t cxx_exports_count(struct cxx_index *ix, const struct object *o, const char *prefix, size_t len)
{
	return cxx_exports_prefix(ix, cxx_exports_of(ix, o), prefix, len, NULL, NULL);
}

static void build_blob(struct cxx_index *ix, struct cxx_exports *x)
{
	x->blob_done = true;
	size_t total = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->e[i].mangled && !size_add(total, strlen(x->e[i].name + x->e[i].body) + 1, &total))
			return;
	if (total == 0 || total > UINT32_MAX)
		return;
	x->blob = arena_alloc(ix->a, total + 1);
	x->blob_start = arena_calloc(ix->a, x->nmangled ? x->nmangled : 1, sizeof *x->blob_start);
	x->blob_export = arena_calloc(ix->a, x->nmangled ? x->nmangled : 1, sizeof *x->blob_export);
	size_t o = 0, k = 0;
	for (size_t i = 0; i < x->n; i++) {
		if (!x->e[i].mangled)
			continue;
		const char *body = x->e[i].name + x->e[i].body;
		size_t l = strlen(body);
		x->blob_start[k] = (uint32_t)o;
		x->blob_export[k] = (uint32_t)i;
		k++;
		memcpy(x->blob + o, body, l);
		o += l;
		x->blob[o++] = '\n';	/* no mangled name contains a newline */
	}
	x->blob[o] = '\0';
	x->blob_len = o;
}

size_t cxx_exports_containing(struct cxx_index *ix, struct cxx_exports *x, const char *token, size_t len,
			      cxx_export_fn fn, void *ctx)
{
	if (len == 0 || memchr(token, '\n', len))
		return 0;
	if (!x->blob_done)
		build_blob(ix, x);
	x->substring_queries = cxx_exports_substring_queries(ix, x) + 1;
	x->queries_round = ix->round;
	size_t n = 0, pos = 0, k = 0;
	while (x->blob && pos < x->blob_len) {
		const char *hit = memmem(x->blob + pos, x->blob_len - pos, token, len);
		if (!hit)
			break;
		uint32_t off = (uint32_t)(hit - x->blob);
		/* the name holding the hit: the last start <= off (starts ascend) */
		size_t lo = k, hi = x->nmangled;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (x->blob_start[mid] <= off)
				lo = mid;
			else
				hi = mid;
		}
		k = lo;
		n++;
		if (fn && !fn(ctx, &x->e[x->blob_export[k]]))
			break;
		/* next name: each is reported once */
		pos = k + 1 < x->nmangled ? x->blob_start[k + 1] : x->blob_len;
		k++;
	}
	return n;
}

size_t cxx_exports_c_prefix(const struct cxx_exports *x, const char *prefix, size_t len,
			    cxx_export_fn fn, void *ctx)
{
	size_t n = 0;
	for (size_t i = 0; i < x->n; i++) {
		const struct cxx_export *e = &x->e[i];
		if (e->mangled || (len && e->name[0] != prefix[0]) || strncmp(e->name, prefix, len) != 0)
			continue;
		n++;
		if (fn && !fn(ctx, e))
			break;
	}
	return n;
}

static bool plain_identifier(const char *s)
{
	if (!s[0] || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

size_t cxx_mangled_prefix(const struct cxx_sig *s, size_t nparts, char *out, size_t outsz, bool *exact)
{
	*exact = true;
	size_t o = 0;
	if (!s->parsed || outsz == 0)
		return 0;
	out[0] = '\0';
	for (size_t i = 0; i < nparts && i < s->npart; i++) {
		const struct cxx_name_part *p = &s->part[i];
		const char *id = p->name;
		if (i == 0 && str_eq(id, "std")) {
			if (o + 2 >= outsz)
				break;
			memcpy(out + o, "St", 2);
			o += 2;
			continue;
		}
		if (str_eq(id, "(anonymous namespace)"))
			id = "_GLOBAL__N_1";
		if (!plain_identifier(id)) {
			*exact = false;
			break;
		}
		int w = snprintf(out + o, outsz - o, "%zu%s", strlen(id), id);
		if (w < 0 || (size_t)w >= outsz - o) {
			*exact = false;
			break;
		}
		o += (size_t)w;
		if (p->targs || p->abi_tag) {
			/* The arguments follow in their own encoding: stop here. */
			*exact = false;
			break;
		}
	}
	out[o] = '\0';
	return o;
}

const char *cxx_export_version(const struct object *o, const struct cxx_export *e)
{
	if (!(e->versym & VERSYM_INDEX_) || (e->versym & VERSYM_INDEX_) == 1 || o->kind != OBJ_ELF)
		return NULL;
	const struct elf_verdef *v = elf_verdef_by_index(&o->elf, e->versym);
	return v ? v->name : NULL;
}
