#include "report/causes.h"
#include "core/fs.h"
#include "core/hashmap.h"

/* The root a finding leads to (a cycle, which no analysis makes, stops). */
static const struct finding *root_of(const struct findings *fl, const struct finding *f, bool *guess)
{
	for (size_t hops = 0; f->caused_by >= 0 && hops < fl->list.n; hops++) {
		*guess |= f->guess;
		const struct finding *up = findings_at(fl, (size_t)f->caused_by);
		if (!up)
			break;
		f = up;
	}
	return f;
}

static bool is_driver_library(const char *lib)
{
	return lib && (str_eq(lib, "libcuda.so.1") || str_eq(lib, "libcuda.so"));
}

static const char *key_of(struct arena *a, const struct finding *f)
{
	const struct value *v = f->fields;
	const char *lib = val_get_str(v, "library");
	if (str_eq(f->id, "library-not-found") || str_eq(f->id, "library-off-path") ||
	    str_eq(f->id, "library-not-installed") || str_eq(f->id, "wrong-elf") ||
	    str_eq(f->id, "invalid-elf") || str_eq(f->id, "loader-would-hang") ||
	    (str_eq(f->id, "cuda-major-mismatch") && val_get(v, "needs_cuda_major")))
		if (lib)
			return arena_printf(a, "library:%s", path_basename(lib));
	/* binaries of another machine (an x86_64 build placed on an aarch64
	 * host): one cause, whichever files */
	if (str_eq(f->id, "wrong-elf") && !lib && val_get_str(v, "process_machine"))
		return arena_printf(a, "machine:%s:%s:%s", val_get_str(v, "class"), val_get_str(v, "machine"),
				    val_get_str(v, "process_machine"));
	if (str_eq(f->id, "version-not-found"))
		return arena_printf(a, "version:%s@%s", lib ? path_basename(lib) : "?", val_get_str(v, "version"));
	if (str_eq(f->id, "undefined-symbol") || str_eq(f->id, "lazy-undefined-symbol")) {
		const struct value *t = val_get(v, "torch");
		const struct value *other = t ? val_get(t, "built_against_other") : NULL;
		if (other && other->kind == VAL_BOOL && other->u.b)
			return arena_printf(a, "torch:%s", val_get_str(t, "installed"));
		return arena_printf(a, "symbol:%s", val_get_str(v, "symbol"));
	}
	if (str_eq(f->id, "gpu-arch-missing") || str_eq(f->id, "ptx-jit-only"))
		return arena_printf(a, "%s:%s:%s", f->id, val_get_str(v, "gpu"),
				    val_get(v, "optional_module") ? "optional" : "core");
	if (str_eq(f->id, "import-fails"))
		return "import-fails";
	if (str_eq(f->id, "cuda-major-mismatch") && lib && val_get_str(v, "other"))
		/* two majors of one library in a process: one cause, whatever loads them */
		return arena_printf(a, "majors:%s:%s", path_basename(lib), val_get_str(v, "other"));
	if (str_eq(f->id, "depends-on-self-load")) {
		/* every module that depends on the same call: one cause */
		const struct value *line = val_get(v, "line");
		return arena_printf(a, "self-load:%s:%lld", val_get_str(v, "file"),
				    line && line->kind == VAL_INT ? (long long)line->u.i : -1LL);
	}
	/* one of its own */
	return arena_printf(a, "finding:%d", f->index);
}

/* Adds s to v unless it is there: seen remembers (v, s) pairs, so a cause
 * of thousands of modules costs one lookup per member, not a pass. */
static void push_distinct(struct arena *a, struct strmap *seen, struct ptrvec *v, const char *s)
{
	if (!s)
		return;
	const char *key = arena_printf(a, "%p\n%s", (void *)v, s);
	if (strmap_get(seen, key))
		return;
	strmap_put(a, seen, key, MAP_YES);
	ptrvec_push(a, v, (void *)s);
}

static int sev_rank(enum severity s)
{
	return s == SEV_ERROR ? 0 : s == SEV_WARNING ? 1 : 2;
}

void causes_build(struct arena *a, const struct findings *fl, size_t first, size_t end, struct causes *out)
{
	memset(out, 0, sizeof *out);
	out->nfindings = fl->list.n;
	out->of = arena_calloc(a, fl->list.n ? fl->list.n : 1, sizeof *out->of);
	for (size_t i = 0; i < fl->list.n; i++)
		out->of[i] = -1;
	struct strmap seen = { 0 };
	struct ptrvec found = { 0 };
	for (size_t i = first; i < end && i < fl->list.n; i++) {
		const struct finding *f = findings_at(fl, i);
		bool guess = false;
		const struct finding *r = root_of(fl, f, &guess);
		const char *key = key_of(a, r);
		struct cause *c = strmap_get(&out->by_key, key);
		if (!c) {
			c = arena_calloc(a, 1, sizeof *c);
			c->key = key;
			c->lead = r;
			c->severity = r->severity;
			strmap_put(a, &out->by_key, key, c);
			ptrvec_push(a, &found, c);
		}
		if (r == f || f->caused_by < 0) {
			const char *rkey = arena_printf(a, "%p\n%p", (void *)&c->roots, (const void *)r);
			if (!strmap_get(&seen, rkey)) {
				strmap_put(a, &seen, rkey, MAP_YES);
				ptrvec_push(a, &c->roots, (void *)r);
				if (sev_rank(r->severity) < sev_rank(c->lead->severity)) {
					c->lead = r;
					c->severity = r->severity;
				}
			}
		}
		c->guess |= r->guess;	/* a member's own guessed link stays its own */
		(void)guess;
		ptrvec_push(a, &c->members, (void *)f);
		const char *mod = val_get_str(f->fields, "module");
		push_distinct(a, &seen, &c->modules, mod ? mod : f->object ? path_basename(f->object) : NULL);
		push_distinct(a, &seen, &c->dists, val_get_str(f->fields, "distribution"));
		const char *lib = val_get_str(r->fields, "library");
		c->driver |= is_driver_library(lib ? path_basename(lib) : NULL) &&
			     (str_eq(r->id, "library-not-found") || str_eq(r->id, "library-not-installed"));
	}
	/* most severe first; first appearance keeps the order within a severity */
	for (int rank = 0; rank < 3; rank++)
		for (size_t i = 0; i < found.n; i++) {
			struct cause *c = found.item[i];
			if (sev_rank(c->severity) != rank)
				continue;
			c->index = (int)out->list.n;
			ptrvec_push(a, &out->list, c);
		}
	for (size_t i = 0; i < out->list.n; i++) {
		const struct cause *c = out->list.item[i];
		for (size_t k = 0; k < c->members.n; k++)
			out->of[((const struct finding *)c->members.item[k])->index] = c->index;
	}
}

const struct cause *causes_of(const struct causes *c, const struct finding *f)
{
	if (!f || f->index < 0 || (size_t)f->index >= c->nfindings || c->of[f->index] < 0)
		return NULL;
	return c->list.item[c->of[f->index]];
}

const struct cause *causes_find(const struct causes *c, const char *key)
{
	return key ? strmap_get(&c->by_key, key) : NULL;
}

bool causes_driver_missing(const struct causes *c)
{
	for (size_t i = 0; i < c->list.n; i++)
		if (((const struct cause *)c->list.item[i])->driver)
			return true;
	return false;
}
