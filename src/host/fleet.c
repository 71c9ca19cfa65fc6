#include "host/fleet.h"

#define MAX_NAMED 5	/* objects or distributions named per difference; the rest counted */

/* s then a separator byte no string holds, so "ab"+"c" differs from "a"+"bc" */
static uint64_t mix(uint64_t h, const char *s)
{
	if (!s)
		s = "\x01";
	return hash64_bytes(hash64_bytes(h, s, strlen(s)), "\xff", 1);
}

uint64_t fleet_fingerprint(const struct snap_summary *s)
{
	uint64_t h = HASH64_INIT;
	h = mix(h, s->glibc);
	h = mix(h, s->driver);
	h = mix(h, s->gpus);
	h = mix(h, s->python);
	h = mix(h, s->torch);
	h = mix(h, s->hwcaps);
	/* x86_64 with 4 KiB pages adds nothing: fingerprints from before stay */
	if (s->machine && !str_eq(s->machine, "x86_64"))
		h = mix(h, s->machine);
	if (s->page_size && !str_eq(s->page_size, "4096"))
		h = mix(h, s->page_size);
	for (size_t i = 0; i < s->ndists; i++) {
		h = mix(h, s->dist_names[i]);
		h = mix(h, s->dist_versions[i]);
	}
	for (size_t i = 0; i < s->nobjects; i++) {
		char hex[17];
		snprintf(hex, sizeof hex, "%016llx", (unsigned long long)s->object_digests[i]);
		h = mix(h, s->object_keys[i]);
		h = mix(h, hex);
	}
	for (size_t i = 0; i < s->nfailing; i++)
		h = mix(h, s->failing[i]);
	return h;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && str_eq(a, b));
}

static void push_new(struct arena *a, struct ptrvec *out, const char *line)
{
	for (size_t i = 0; i < out->n; i++)
		if (str_eq(out->item[i], line))
			return;
	ptrvec_push(a, out, (void *)line);
}

static void field(struct arena *a, struct ptrvec *out, const char *what, const char *mine, const char *base)
{
	if (!same(mine, base))
		ptrvec_push(a, out, arena_printf(a, "%s %s (baseline: %s)", what, mine ? mine : "none",
						 base ? base : "none"));
}

static bool in_list(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (str_eq(v[i], s))
			return true;
	return false;
}

static ssize_t find_sorted(const char *const *keys, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(keys[mid], key);
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* What differs in s from the baseline b, most consequential first. */
static void explain(struct arena *a, const struct snap_summary *s, const struct snap_summary *b,
		    struct ptrvec *out)
{
	/* another machine first: no binary of one runs on the other, and
	 * every binary differing is that, not a list */
	bool other_machine = s->machine && b->machine && !str_eq(s->machine, b->machine);
	if (other_machine)
		ptrvec_push(a, out, arena_printf(a, "machine %s (baseline: %s): binaries built for one do not load on "
						    "the other", s->machine ? s->machine : "?", b->machine ? b->machine : "?"));
	for (size_t i = 0; i < s->nfailing; i++)
		if (!in_list(b->failing, b->nfailing, s->failing[i]))
			ptrvec_push(a, out, arena_printf(a, "fails here only: %s", s->failing[i]));
	for (size_t i = 0; i < b->nfailing; i++)
		if (!in_list(s->failing, s->nfailing, b->failing[i]))
			ptrvec_push(a, out, arena_printf(a, "works here, fails on the baseline: %s", b->failing[i]));
	field(a, out, "page size", s->page_size, b->page_size);
	field(a, out, "driver", s->driver, b->driver);
	field(a, out, "GPUs", s->gpus, b->gpus);
	field(a, out, "glibc", s->glibc, b->glibc);
	field(a, out, "Python", s->python, b->python);
	field(a, out, "torch", s->torch, b->torch);
	field(a, out, "hwcaps level", s->hwcaps, b->hwcaps);
	/* binaries */
	size_t changed = 0, only = 0, missing = 0;
	const char *named = "";
	for (size_t i = 0; i < s->nobjects; i++) {
		ssize_t k = find_sorted(b->object_keys, b->nobjects, s->object_keys[i]);
		if (k < 0) {
			only++;
			continue;
		}
		if (s->object_digests[i] == b->object_digests[k])
			continue;
		if (changed < MAX_NAMED && !other_machine)
			named = arena_printf(a, "%s%s%s", named, changed ? ", " : "", s->object_keys[i]);
		changed++;
	}
	for (size_t i = 0; i < b->nobjects; i++)
		if (find_sorted(s->object_keys, s->nobjects, b->object_keys[i]) < 0)
			missing++;
	if (changed && other_machine)
		ptrvec_push(a, out, arena_printf(a, "%zu %s (%s builds)", changed,
						 changed == 1 ? "binary differs" : "binaries differ", s->machine));
	else if (changed)
		ptrvec_push(a, out, arena_printf(a, "%zu %s: %s%s", changed, changed == 1 ? "binary differs" : "binaries differ",
						 named, changed > MAX_NAMED ? ", ..." : ""));
	if (only)
		ptrvec_push(a, out, arena_printf(a, "%zu binar%s the baseline lacks", only, only == 1 ? "y" : "ies"));
	if (missing)
		ptrvec_push(a, out, arena_printf(a, "%zu binar%s of the baseline missing", missing,
						 missing == 1 ? "y" : "ies"));
	/* distributions */
	for (size_t i = 0; i < s->ndists; i++) {
		ssize_t k = find_sorted(b->dist_names, b->ndists, s->dist_names[i]);
		if (k < 0)
			ptrvec_push(a, out, arena_printf(a, "%s %s installed (not on the baseline)", s->dist_names[i],
							 s->dist_versions[i]));
		else if (!str_eq(s->dist_versions[i], b->dist_versions[k]))
			push_new(a, out, arena_printf(a, "%s %s (baseline: %s)", s->dist_names[i], s->dist_versions[i],
							 b->dist_versions[k]));
	}
	for (size_t i = 0; i < b->ndists; i++)
		if (find_sorted(s->dist_names, s->ndists, b->dist_names[i]) < 0)
			ptrvec_push(a, out, arena_printf(a, "%s %s not installed (it is on the baseline)", b->dist_names[i],
							 b->dist_versions[i]));
}

static int by_size(const void *p, const void *q)
{
	const struct fleet_class *x = p, *y = q;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->member[0] < y->member[0] ? -1 : x->member[0] > y->member[0];
}

void fleet_group(struct arena *a, struct fleet *f)
{
	f->cls = arena_calloc(a, f->nhost ? f->nhost : 1, sizeof *f->cls);
	f->ncls = 0;
	struct idmap index;	/* fingerprint -> class + 1 */
	memset(&index, 0, sizeof index);
	for (size_t i = 0; i < f->nhost; i++) {
		uint64_t fp = f->host[i].fingerprint = fleet_fingerprint(&f->host[i].sum);
		uintptr_t k = (uintptr_t)idmap_get(&index, fp, 0);
		struct fleet_class *c;
		if (!k) {
			c = &f->cls[f->ncls++];
			c->fingerprint = fp;
			c->member = arena_calloc(a, f->nhost, sizeof *c->member);
			idmap_put(a, &index, fp, 0, (void *)(uintptr_t)f->ncls);
		} else {
			c = &f->cls[k - 1];
		}
		c->member[c->n++] = i;
	}
	sort_items(f->cls, f->ncls, sizeof *f->cls, by_size);
	if (!f->ncls)
		return;
	const struct snap_summary *base = &f->host[f->cls[0].member[0]].sum;
	for (size_t i = 1; i < f->ncls; i++)
		explain(a, &f->host[f->cls[i].member[0]].sum, base, &f->cls[i].diffs);
}
