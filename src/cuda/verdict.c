#include "cuda/verdict.h"

/* ---- device code of one object ---- */

void cuda_ctx_init(struct cuda_ctx *c, struct scan *s, enum fatbin_scan_mode mode)
{
	memset(c, 0, sizeof *c);
	c->s = s;
	c->mode = mode;
	cuda_host_init(&c->host);
}

static int kind_rank(uint16_t kind)
{
	return kind == FATBIN_CUBIN ? 0 : kind == FATBIN_PTX ? 1 : kind == FATBIN_LTOIR ? 2 : 3;
}

static int cmp_target(const void *x, const void *y)
{
	const struct cuda_target_count *a = x, *b = y;
	if (kind_rank(a->kind) != kind_rank(b->kind))
		return kind_rank(a->kind) - kind_rank(b->kind);
	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (a->sm != b->sm)
		return a->sm - b->sm;
	return a->variant - b->variant;
}

/* Distinct targets with entry and fatbin counts: one pass over the entries. */
static void summarize(struct arena *a, struct cuda_code *k)
{
	size_t cap = 16, n = 0;
	struct cuda_target_count *t = arena_calloc(a, cap, sizeof *t);
	uint32_t *last_fb = arena_calloc(a, cap, sizeof *last_fb);
	for (size_t i = 0; i < k->set.nentry; i++) {
		const struct fatbin_entry *e = &k->set.entry[i];
		if (e->flags & (FATBIN_F_LZ4 | FATBIN_F_ZSTD))
			k->ncompressed++;
		size_t j = 0;
		while (j < n && !(t[j].kind == e->kind && t[j].sm == e->sm && t[j].variant == e->variant))
			j++;
		if (j == n) {
			if (n == cap) {
				t = arena_grow(a, t, n, cap * 2, sizeof *t);
				last_fb = arena_grow(a, last_fb, n, cap * 2, sizeof *last_fb);
				cap *= 2;
			}
			t[n].kind = e->kind;
			t[n].sm = e->sm;
			t[n].variant = e->variant;
			last_fb[n] = UINT32_MAX;
			n++;
		}
		t[j].entries++;
		if (last_fb[j] != e->fatbin) {
			t[j].fatbins++;
			last_fb[j] = e->fatbin;
		}
		if (e->kind == FATBIN_PTX &&
		    (e->ver_major > t[j].isa_major ||
		     (e->ver_major == t[j].isa_major && e->ver_minor > t[j].isa_minor))) {
			t[j].isa_major = e->ver_major;
			t[j].isa_minor = e->ver_minor;
		}
	}
	sort_items(t, n, sizeof *t, cmp_target);
	k->target = t;
	k->ntarget = n;
	for (size_t i = 0; i < k->set.nfatbin; i++) {
		if (k->set.fatbin[i].listed)
			k->nlisted_fatbins++;
		if (k->set.fatbin[i].where == FATBIN_ELSEWHERE)
			k->nother_fatbins++;
	}
}

/* The CUDA major from the object's own SONAME and its NEEDED names. */
static void runtime_major(struct cuda_code *k)
{
	const struct elf_file *ef = &k->obj->elf;
	if (ef->soname && (k->runtime_major = cuda_soname_major(ef->soname)) != 0)
		k->runtime_evidence = ef->soname;
	for (size_t i = 0; i < ef->nneeded; i++) {
		unsigned m = cuda_soname_major(ef->needed[i]);
		if (!m)
			continue;
		if (!k->runtime_major) {
			k->runtime_major = m;
			k->runtime_evidence = ef->needed[i];
		} else if (m != k->runtime_major) {
			k->runtime_conflict = true;
		}
	}
}

/* A cubin file is judged like a fatbin with one entry. */
static void cubin_as_set(struct arena *a, struct cuda_code *k, uint16_t sm, char variant)
{
	struct fatbin_set *set = &k->set;
	set->fatbin = arena_calloc(a, 1, sizeof *set->fatbin);
	set->entry = arena_calloc(a, 1, sizeof *set->entry);
	set->nfatbin = set->fatbin_cap = 1;
	set->nentry = set->entry_cap = 1;
	set->fatbin[0].size = k->obj->map.len;
	set->fatbin[0].section = "";
	set->fatbin[0].where = FATBIN_RAW_FILE;
	set->fatbin[0].n = 1;
	set->fatbin[0].listed = true;
	set->entry[0].kind = FATBIN_CUBIN;
	set->entry[0].sm = sm;
	set->entry[0].variant = variant;
	set->entry[0].payload_size = k->obj->map.len;
	set->entry[0].ver_major = 1;
}

/* What a fatbin scan keeps is its entry list: the sections' pages can go. */
static void forget_sections(const struct object *o)
{
	const struct elf_file *ef = &o->elf;
	for (size_t i = 0; i < ef->nsec; i++) {
		const struct elf_section *s = &ef->sec[i];
		struct bytes w;
		if (s->type != SHT_NOBITS_ && bytes_sub(&ef->raw, s->offset, s->size, &w))
			object_forget(o, w);
	}
}

const struct cuda_code *cuda_code_of(struct cuda_ctx *c, struct object *o)
{
	struct cuda_code *k = idmap_get(&c->code, o->dev, o->ino);
	if (k)
		return k->obj ? k : NULL;
	struct arena *a = &c->s->arena;
	k = arena_alloc(a, sizeof *k);
	idmap_put(a, &c->code, o->dev, o->ino, k);
	fatbin_set_init(&k->set);
	if (o->kind == OBJ_ELF && o->elf_ok) {
		k->obj = o;
		uint16_t sm;
		char variant;
		if (cubin_identify(&o->elf, &sm, &variant)) {
			k->is_cubin_file = true;
			cubin_as_set(a, k, sm, variant);
		} else {
			fatbin_scan_elf(a, &o->elf, c->mode, &k->set);
			forget_sections(o);
			k->scanned_all = c->mode == FATBIN_SCAN_ALL;
			runtime_major(k);
		}
	} else if (o->kind == OBJ_OTHER && fatbin_has_magic(o->map.data, o->map.len)) {
		k->obj = o;
		k->is_fatbin_file = true;
		fatbin_scan_raw(a, bytes_make(o->map.data, o->map.len, false), &k->set);
	} else {
		return NULL;	/* the empty record remembers "nothing here" */
	}
	summarize(a, k);
	return k;
}

bool cuda_code_has_device_code(const struct cuda_code *k)
{
	for (size_t i = 0; k && i < k->ntarget; i++)
		if (k->target[i].kind == FATBIN_CUBIN || k->target[i].kind == FATBIN_PTX)
			return true;
	return false;
}

static void target_name(const struct cuda_target_count *t, char *out, size_t outsz)
{
	struct fatbin_entry e;
	memset(&e, 0, sizeof e);
	e.kind = t->kind;
	e.sm = t->sm;
	e.variant = t->variant;
	fatbin_target_name(&e, out, outsz);
}

const char *cuda_targets_string(struct arena *a, const struct cuda_code *k, int kind)
{
	char buf[4096];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; k && i < k->ntarget && n + 32 < sizeof buf; i++) {
		if (kind && k->target[i].kind != kind)
			continue;
		char name[32];
		target_name(&k->target[i], name, sizeof name);
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? " " : "", name);
	}
	return arena_strdup(a, buf);
}

static struct value *targets_value(struct arena *a, const struct cuda_code *k, int kind)
{
	struct value *arr = val_arr(a);
	for (size_t i = 0; k && i < k->ntarget; i++) {
		if (k->target[i].kind != kind)
			continue;
		char name[32];
		target_name(&k->target[i], name, sizeof name);
		val_push(a, arr, val_str(a, name));
	}
	return arr;
}

/* ---- judging one object against one GPU ---- */

struct coverage {
	size_t judged;		/* fatbins with a cubin or PTX */
	size_t cubin_ok;	/* ... with a cubin that runs */
	size_t ptx_only;	/* ... with no such cubin but PTX that JITs */
	size_t none;		/* ... with neither */
	/* among PTX entries that JIT for the GPU: the lowest and highest ISA */
	unsigned isa_lo_major, isa_lo_minor, isa_hi_major, isa_hi_minor;
	bool any_ptx_fits;
};

static void isa_note(struct coverage *cv, const struct fatbin_entry *e)
{
	unsigned v = e->ver_major * 100u + e->ver_minor;
	if (!cv->any_ptx_fits || v < cv->isa_lo_major * 100u + cv->isa_lo_minor) {
		cv->isa_lo_major = e->ver_major;
		cv->isa_lo_minor = e->ver_minor;
	}
	if (!cv->any_ptx_fits || v > cv->isa_hi_major * 100u + cv->isa_hi_minor) {
		cv->isa_hi_major = e->ver_major;
		cv->isa_hi_minor = e->ver_minor;
	}
	cv->any_ptx_fits = true;
}

/*
 * Whether a fatbin carries kernels at all: 1 yes, 0 no, -1 cannot tell.
 * Asked only of fatbins with no image for the GPU: a module without a
 * kernel (libcufftw's lone sm_75 cubin, device-link stubs) can never fail
 * a launch.  Stored cubins are read as ELF for a .text.<kernel> section;
 * a compressed one is not decompressed, so the answer is "cannot tell".
 */
static int fatbin_has_kernels(struct arena *a, const struct cuda_code *k, const struct fatbin *fb)
{
	struct bytes file = bytes_make(k->obj->map.data, k->obj->map.len, false);
	for (uint32_t i = 0; i < fb->n; i++) {
		const struct fatbin_entry *e = &k->set.entry[fb->first + i];
		if (e->kind == FATBIN_PTX)
			return -1;
		if (e->kind != FATBIN_CUBIN)
			continue;
		if (e->flags & (FATBIN_F_LZ4 | FATBIN_F_ZSTD) || k->is_cubin_file)
			return -1;
		struct bytes payload;
		struct elf_file ef;
		struct diag d;
		diag_clear(&d);
		if (!bytes_sub(&file, e->offset + e->header_size, e->payload_size, &payload) ||
		    elf_parse(a, payload, k->obj->path, &ef, &d) != ST_OK)
			return -1;
		for (size_t j = 0; j < ef.nsec; j++)
			if (str_starts(ef.sec[j].name, ".text."))
				return 1;
	}
	return 0;
}

static void cover(struct arena *a, const struct cuda_code *k, unsigned cc, struct coverage *cv)
{
	memset(cv, 0, sizeof *cv);
	for (size_t f = 0; f < k->set.nfatbin; f++) {
		const struct fatbin *fb = &k->set.fatbin[f];
		bool any = false, cub = false, ptx = false;
		for (uint32_t i = 0; i < fb->n; i++) {
			const struct fatbin_entry *e = &k->set.entry[fb->first + i];
			if (e->kind == FATBIN_CUBIN) {
				any = true;
				cub |= cuda_cubin_runs_on(e->sm, e->variant, cc);
			} else if (e->kind == FATBIN_PTX) {
				any = true;
				if (cuda_ptx_jits_for(e->sm, e->variant, cc)) {
					ptx = true;
					isa_note(cv, e);
				}
			}
		}
		if (!any || (!cub && !ptx && fatbin_has_kernels(a, k, fb) == 0))
			continue;
		cv->judged++;
		if (cub)
			cv->cubin_ok++;
		else if (ptx)
			cv->ptx_only++;
		else
			cv->none++;
	}
}

static const char *gpu_label(struct arena *a, const struct gpu_target *g)
{
	char cc[16];
	cuda_cc_string(g->cc, cc, sizeof cc);
	if (g->name)
		return arena_printf(a, "%s (sm_%u, compute capability %s)", g->name, g->cc, cc);
	const char *ex = cuda_gpu_example(g->cc);
	return arena_printf(a, "sm_%u (compute capability %s%s%s)", g->cc, cc, ex ? ", e.g. " : "",
			    ex ? ex : "");
}

static void gpu_fields(struct arena *a, struct value *fields, const struct gpu_target *g)
{
	char cc[16];
	cuda_cc_string(g->cc, cc, sizeof cc);
	val_set(a, fields, "gpu", val_str(a, arena_printf(a, "sm_%u", g->cc)));
	val_set_str(a, fields, "compute_capability", cc);
	val_set(a, fields, "gpu_name", val_str(a, g->name));
	val_set(a, fields, "gpu_source", val_str(a, g->source));
}

/* What a GPU needs, in words: the cubins and PTX that would serve it. */
static const char *needs_text(struct arena *a, unsigned cc)
{
	return arena_printf(a, "sm_%u needs a cubin of the %u.x family built for %u.%u or lower "
			       "(sm_%u%s, or sm_%ua on exactly this GPU), or PTX compute_XY with XY <= %u "
			       "that the driver JIT-compiles",
			    cc, cc / 10, cc / 10, cc % 10, cc / 10 * 10, cc % 10 ? arena_printf(a, "..sm_%u", cc) : "",
			    cc, cc);
}

static void explain_has(struct findings *fl, struct finding *f, const struct cuda_code *k)
{
	struct arena *a = fl->arena;
	const char *cub = cuda_targets_string(a, k, FATBIN_CUBIN);
	const char *ptx = cuda_targets_string(a, k, FATBIN_PTX);
	finding_line(fl, f, "cubins in it: %s", *cub ? cub : "none");
	finding_line(fl, f, "PTX in it:    %s", *ptx ? ptx : "none (no JIT fallback)");
}

/* Why the images it has do not serve the GPU: the rule that excludes each. */
static void explain_rules(struct findings *fl, struct finding *f, const struct cuda_code *k, unsigned cc)
{
	struct arena *a = fl->arena;
	const char *other = "", *exact = "", *newer = "", *pinned = "";
	for (size_t i = 0; i < k->ntarget; i++) {
		const struct cuda_target_count *t = &k->target[i];
		char name[32];
		target_name(t, name, sizeof name);
		if (t->kind == FATBIN_CUBIN) {
			if (t->sm / 10 != cc / 10)
				other = arena_printf(a, "%s%s%s", other, *other ? " " : "", name);
			else if (t->variant == 'a' && t->sm != cc)
				exact = arena_printf(a, "%s%s%s", exact, *exact ? " " : "", name);
			else if (t->sm > cc)
				newer = arena_printf(a, "%s%s%s", newer, *newer ? " " : "", name);
		} else if (t->kind == FATBIN_PTX && !cuda_ptx_jits_for(t->sm, t->variant, cc)) {
			if (t->variant)
				pinned = arena_printf(a, "%s%s%s", pinned, *pinned ? " " : "", name);
			else
				newer = arena_printf(a, "%s%s%s", newer, *newer ? " " : "", name);
		}
	}
	if (*other)
		finding_line(fl, f, "%s: cubins of another major; a cubin never runs across majors "
				    "(an sm_100 cubin never runs on 12.0)", other);
	if (*exact)
		finding_line(fl, f, "%s: arch-specific (`a`) cubins run only on exactly their GPU", exact);
	if (*newer)
		finding_line(fl, f, "%s: built for a newer GPU than %u.%u", newer, cc / 10, cc % 10);
	if (*pinned)
		finding_line(fl, f, "%s: arch-specific and family PTX is never JIT-compiled for another GPU or family",
			     pinned);
}

static void add_arch_missing(struct cuda_ctx *c, const struct cuda_code *k, const struct gpu_target *g,
			     const struct coverage *cv)
{
	struct findings *fl = &c->s->findings;
	struct arena *a = fl->arena;
	struct finding *f = finding_add(fl, "gpu-arch-missing", SEV_ERROR, k->obj->path);
	gpu_fields(a, f->fields, g);
	val_set(a, f->fields, "cubins", targets_value(a, k, FATBIN_CUBIN));
	val_set(a, f->fields, "ptx", targets_value(a, k, FATBIN_PTX));
	val_set_int(a, f->fields, "fatbins", (int64_t)cv->judged);
	finding_title(fl, f, "no kernel image for sm_%u in %s", g->cc, path_basename(k->obj->path));
	finding_line(fl, f, "GPU: %s, from %s", gpu_label(a, g), g->source);
	explain_has(fl, f, k);
	explain_rules(fl, f, k, g->cc);
	finding_line(fl, f, "%s", needs_text(a, g->cc));
	finding_line(fl, f, "the import succeeds (kernels load lazily); the first kernel launch fails with "
			    "\"CUDA error: no kernel image is available for execution on the device\"");
	finding_fix(fl, f, "install a build compiled for sm_%u (nvcc -gencode arch=compute_%u,code=sm_%u), or one "
			   "that carries PTX (code=compute_XY, XY <= %u) for the driver to JIT-compile",
		    g->cc, g->cc, g->cc, g->cc);
}

static void add_partial(struct cuda_ctx *c, const struct cuda_code *k, const struct gpu_target *g,
			const struct coverage *cv)
{
	struct findings *fl = &c->s->findings;
	struct arena *a = fl->arena;
	struct finding *f = finding_add(fl, "gpu-arch-partial", SEV_NOTE, k->obj->path);
	gpu_fields(a, f->fields, g);
	val_set_int(a, f->fields, "fatbins", (int64_t)cv->judged);
	val_set_int(a, f->fields, "fatbins_without_image", (int64_t)cv->none);
	finding_title(fl, f, "%zu of %zu fatbins in %s have no image for sm_%u", cv->none, cv->judged,
		      path_basename(k->obj->path), g->cc);
	finding_line(fl, f, "GPU: %s, from %s", gpu_label(a, g), g->source);
	finding_line(fl, f, "kernels in those modules fail with \"no kernel image\" if launched on this GPU; "
			    "libraries that pick kernels per GPU never launch them");
}

static const char *release_str(struct arena *a, unsigned cuda)
{
	char b[16];
	cuda_release_string(cuda, b, sizeof b);
	return arena_strdup(a, b);
}

static const char *driver_str(struct arena *a, const struct driver_version *v)
{
	if (!v->minor && !v->patch)
		return arena_printf(a, "%u", v->major);
	return v->patch ? arena_printf(a, "%u.%u.%02u", v->major, v->minor, v->patch)
			: arena_printf(a, "%u.%u", v->major, v->minor);
}

static const char *host_driver_str(struct arena *a, const struct cuda_host *h)
{
	if (h->driver_version_known)
		return arena_printf(a, "%s (CUDA %s)", driver_str(a, &h->driver),
				    h->driver_cuda ? release_str(a, h->driver_cuda) : "?");
	return arena_printf(a, "supporting CUDA %s", release_str(a, h->driver_cuda));
}

static int add_ptx_only(struct cuda_ctx *c, const struct cuda_code *k, const struct gpu_target *g,
			const struct coverage *cv, bool whole)
{
	struct findings *fl = &c->s->findings;
	struct arena *a = fl->arena;
	struct finding *f = finding_add(fl, "ptx-jit-only", whole ? SEV_WARNING : SEV_NOTE, k->obj->path);
	gpu_fields(a, f->fields, g);
	val_set(a, f->fields, "ptx", targets_value(a, k, FATBIN_PTX));
	val_set(a, f->fields, "ptx_isa", val_str(a, arena_printf(a, "%u.%u", cv->isa_hi_major, cv->isa_hi_minor)));
	unsigned rel = cuda_ptx_isa_release(cv->isa_lo_major, cv->isa_lo_minor);
	struct driver_version dv;
	bool have_dv = rel && cuda_driver_for_release(rel, &dv);
	val_set(a, f->fields, "min_driver", have_dv ? val_str(a, driver_str(a, &dv)) : val_null(a));
	val_set_int(a, f->fields, "fatbins_jit", (int64_t)cv->ptx_only);
	if (whole)
		finding_title(fl, f, "only PTX fits sm_%u in %s: every kernel is JIT-compiled at first use",
			      g->cc, path_basename(k->obj->path));
	else
		finding_title(fl, f, "%zu of %zu fatbins in %s have only PTX for sm_%u", cv->ptx_only,
			      cv->judged, path_basename(k->obj->path), g->cc);
	finding_line(fl, f, "GPU: %s, from %s", gpu_label(a, g), g->source);
	explain_has(fl, f, k);
	finding_line(fl, f, "the driver compiles the PTX on the first launch (slow start; cached in ~/.nv/ComputeCache)");
	if (rel)
		finding_line(fl, f, "the PTX is ISA %u.%u, from CUDA %s: the driver must support CUDA %s%s%s",
			     cv->isa_lo_major, cv->isa_lo_minor, release_str(a, rel), release_str(a, rel),
			     have_dv ? ", driver >= " : "", have_dv ? driver_str(a, &dv) : "");
	else if (cuda_ptx_isa_beyond(cv->isa_lo_major, cv->isa_lo_minor))
		finding_line(fl, f, "the PTX is ISA %u.%u, newer than CUDA %s (the newest abiscope knows): the driver must "
				    "support a newer CUDA",
			     cv->isa_lo_major, cv->isa_lo_minor,
			     release_str(a, cuda_ptx_isa_beyond(cv->isa_lo_major, cv->isa_lo_minor)));
	finding_fix(fl, f, "install a build with sm_%u cubins to skip the JIT, or keep the driver at least as new "
			   "as the toolkit that built it", g->cc);
	return f->index;
}

static void add_driver_too_old_ptx(struct cuda_ctx *c, const struct cuda_code *k, const struct gpu_target *g,
				   const struct coverage *cv, int cause)
{
	struct findings *fl = &c->s->findings;
	struct arena *a = fl->arena;
	unsigned rel = cuda_ptx_isa_release(cv->isa_lo_major, cv->isa_lo_minor);
	unsigned beyond = rel ? 0 : cuda_ptx_isa_beyond(cv->isa_lo_major, cv->isa_lo_minor);
	const char *needs = beyond ? arena_printf(a, "newer than %s", release_str(a, beyond)) : release_str(a, rel);
	struct finding *f = finding_add(fl, "driver-too-old", SEV_ERROR, k->obj->path);
	gpu_fields(a, f->fields, g);
	val_set_str(a, f->fields, "reason", "ptx-isa");
	val_set(a, f->fields, "ptx_isa", val_str(a, arena_printf(a, "%u.%u", cv->isa_lo_major, cv->isa_lo_minor)));
	val_set_str(a, f->fields, "needs_cuda", needs);
	val_set(a, f->fields, "driver", c->host.driver_version_known ? val_str(a, driver_str(a, &c->host.driver)) : val_null(a));
	val_set_str(a, f->fields, "driver_cuda", release_str(a, c->host.driver_cuda));
	struct driver_version dv;
	bool have_dv = rel && cuda_driver_for_release(rel, &dv);
	val_set(a, f->fields, "min_driver", have_dv ? val_str(a, driver_str(a, &dv)) : val_null(a));
	f->caused_by = cause;
	finding_title(fl, f, "the driver cannot JIT-compile the PTX of %s: PTX ISA %u.%u needs CUDA %s, the driver has %s",
		      path_basename(k->obj->path), cv->isa_lo_major, cv->isa_lo_minor, needs,
		      release_str(a, c->host.driver_cuda));
	finding_line(fl, f, "driver: %s, from %s", host_driver_str(a, &c->host), c->host.driver_source);
	finding_line(fl, f, "the first launch fails with \"the provided PTX was compiled with an unsupported toolchain\" "
			    "(cudaErrorUnsupportedPtxVersion, 222)");
	if (have_dv)
		finding_fix(fl, f, "upgrade the NVIDIA driver to %s or newer, or install a build with sm_%u cubins",
			    driver_str(a, &dv), g->cc);
	else
		finding_fix(fl, f, "upgrade the NVIDIA driver, or install a build with sm_%u cubins", g->cc);
}

/* The runtime major against the driver; one finding per runtime soname. */
static void judge_runtime(struct cuda_ctx *c, const struct cuda_code *k)
{
	const struct cuda_host *h = &c->host;
	if (!k->runtime_major || !h->driver_known)
		return;
	struct driver_version need;
	bool have_need = cuda_driver_for_major(k->runtime_major, &need);
	bool too_old;
	if (h->driver_version_known && have_need)
		too_old = cuda_driver_cmp(&h->driver, &need) < 0;
	else
		too_old = h->driver_cuda && h->driver_cuda / 1000 < k->runtime_major;
	if (!too_old)
		return;
	struct findings *fl = &c->s->findings;
	struct arena *a = fl->arena;
	/* The first object of this CUDA major is the root; the others point at it. */
	int cause = -1;
	for (size_t i = 0; i < fl->list.n; i++) {
		const struct finding *g = fl->list.item[i];
		const char *r = val_get_str(g->fields, "reason");
		const struct value *m = val_get(g->fields, "cuda_major");
		if (str_eq(g->id, "driver-too-old") && r && str_eq(r, "runtime") && m && m->kind == VAL_INT &&
		    m->u.i == (int64_t)k->runtime_major) {
			/* the runtime library itself adds nothing once its users are named */
			if ((g->object && str_eq(g->object, k->obj->path)) ||
			    (k->obj->elf.soname && str_eq(k->obj->elf.soname, k->runtime_evidence)))
				return;
			cause = g->caused_by >= 0 ? g->caused_by : g->index;
			break;
		}
	}
	struct finding *f = finding_add(fl, "driver-too-old", SEV_ERROR, k->obj->path);
	val_set_str(a, f->fields, "reason", "runtime");
	val_set_str(a, f->fields, "runtime", k->runtime_evidence);
	val_set_int(a, f->fields, "cuda_major", k->runtime_major);
	val_set(a, f->fields, "driver", h->driver_version_known ? val_str(a, driver_str(a, &h->driver)) : val_null(a));
	val_set(a, f->fields, "driver_cuda", h->driver_cuda ? val_str(a, release_str(a, h->driver_cuda)) : val_null(a));
	val_set(a, f->fields, "min_driver", have_need ? val_str(a, driver_str(a, &need)) : val_null(a));
	f->caused_by = cause;
	finding_title(fl, f, "%s is CUDA %u, the driver supports only CUDA %s", k->runtime_evidence, k->runtime_major,
		      h->driver_cuda ? release_str(a, h->driver_cuda) : "older releases");
	finding_line(fl, f, "%s %s %s", path_basename(k->obj->path),
		     k->obj->elf.soname && str_eq(k->obj->elf.soname, k->runtime_evidence) ? "is" : "links",
		     k->runtime_evidence);
	finding_line(fl, f, "driver: %s, from %s", host_driver_str(a, h), h->driver_source);
	if (have_need)
		finding_line(fl, f, "any CUDA %u.x runtime needs a driver >= %s (minor-version compatibility)",
			     k->runtime_major, driver_str(a, &need));
	finding_line(fl, f, "the first CUDA call fails with \"CUDA driver version is insufficient for CUDA runtime "
			    "version\" (cudaErrorInsufficientDriver, 35); torch says \"The NVIDIA driver on your system "
			    "is too old\"");
	if (have_need)
		finding_fix(fl, f, "upgrade the NVIDIA driver to %s or newer, or install the CUDA %u.x builds of these packages",
			    driver_str(a, &need), h->driver_cuda ? h->driver_cuda / 1000 : k->runtime_major - 1);
	else
		finding_fix(fl, f, "upgrade the NVIDIA driver");
}

/*
 * The registered fatbins are what almost every object has, and reading only
 * them keeps a verdict on libtorch_cuda.so cheap; but some libraries keep
 * kernels elsewhere (libcufft's .ldata), so before saying a GPU is not
 * covered, the whole object is searched.
 */
static void scan_all_before_doubting(struct cuda_ctx *c, const struct cuda_code *kc)
{
	struct cuda_code *k = (struct cuda_code *)kc;
	if (k->scanned_all || k->is_cubin_file || k->is_fatbin_file || !k->obj)
		return;
	struct arena *a = &c->s->arena;
	fatbin_set_init(&k->set);
	fatbin_scan_elf(a, &k->obj->elf, FATBIN_SCAN_ALL, &k->set);
	forget_sections(k->obj);
	k->scanned_all = true;
	summarize(a, k);
}

void cuda_judge_object(struct cuda_ctx *c, struct object *o)
{
	const struct cuda_code *k = cuda_code_of(c, o);
	if (!k)
		return;
	judge_runtime(c, k);
	if (!cuda_code_has_device_code(k) && !k->scanned_all && c->host.ngpu && k->runtime_major)
		scan_all_before_doubting(c, k);	/* a CUDA library with no registered kernels */
	if (!cuda_code_has_device_code(k))
		return;
	for (size_t i = 0; i < c->host.ngpu; i++) {
		const struct gpu_target *g = &c->host.gpu[i];
		struct coverage cv;
		cover(&c->s->arena, k, g->cc, &cv);
		if (!k->scanned_all && (cv.cubin_ok + cv.ptx_only == 0 || cv.none)) {
			scan_all_before_doubting(c, k);
			cover(&c->s->arena, k, g->cc, &cv);
		}
		if (cv.judged == 0)
			continue;
		if (cv.cubin_ok + cv.ptx_only == 0) {
			add_arch_missing(c, k, g, &cv);
			continue;
		}
		if (cv.none)
			add_partial(c, k, g, &cv);
		if (cv.ptx_only) {
			int idx = add_ptx_only(c, k, g, &cv, cv.cubin_ok == 0);
			unsigned rel = cuda_ptx_isa_release(cv.isa_lo_major, cv.isa_lo_minor);
			/* an ISA past the table is newer than every release it names */
			unsigned beyond = rel ? 0 : cuda_ptx_isa_beyond(cv.isa_lo_major, cv.isa_lo_minor);
			bool too_old = rel ? c->host.driver_cuda < rel : beyond && c->host.driver_cuda <= beyond;
			if (c->host.driver_known && c->host.driver_cuda && too_old)
				add_driver_too_old_ptx(c, k, g, &cv, idx);
		}
	}
}

/* ---- CUDA majors in one load graph ---- */

void cuda_check_majors(struct cuda_ctx *c, struct object *const *objs, size_t n)
{
	struct arena *a = &c->s->arena;
	unsigned majors[8];
	const struct cuda_code *first[8];
	size_t nm = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cuda_code *k = cuda_code_of(c, objs[i]);
		if (!k || !k->runtime_major)
			continue;
		size_t j = 0;
		while (j < nm && majors[j] != k->runtime_major)
			j++;
		if (j == nm && nm < ARRAY_SIZE(majors)) {
			majors[nm] = k->runtime_major;
			first[nm] = k;
			nm++;
		}
	}
	if (nm < 2)
		return;
	struct findings *fl = &c->s->findings;
	struct finding *f = finding_add(fl, "cuda-major-mismatch", SEV_ERROR, objs[0]->path);
	struct value *groups = val_arr(a);
	const char *list = "";
	for (size_t j = 0; j < nm; j++) {
		struct value *g = val_obj(a);
		val_set_int(a, g, "cuda_major", majors[j]);
		struct value *objects = val_arr(a);
		for (size_t i = 0; i < n; i++) {
			const struct cuda_code *k = cuda_code_of(c, objs[i]);
			if (k && k->runtime_major == majors[j])
				val_push(a, objects, val_str(a, objs[i]->path));
		}
		val_set(a, g, "objects", objects);
		val_push(a, groups, g);
		list = arena_printf(a, "%s%sCUDA %u", list, j ? " and " : "", majors[j]);
	}
	val_set(a, f->fields, "majors", groups);
	finding_title(fl, f, "libraries of %s in one process", list);
	for (size_t j = 0; j < nm; j++)
		finding_line(fl, f, "CUDA %u: %s (%s %s)", majors[j], first[j]->obj->path,
			     first[j]->obj->elf.soname && str_eq(first[j]->obj->elf.soname, first[j]->runtime_evidence)
				     ? "is" : "links",
			     first[j]->runtime_evidence);
	finding_line(fl, f, "two CUDA runtimes in one process do not share state (streams, memory, handles); "
			    "mixed cuBLAS/nvJitLink majors fail with undefined versioned symbols");
	finding_fix(fl, f, "install every CUDA package for one major (all -cu%u or all -cu%u wheels)", majors[0],
		    majors[1]);
}

/* ---- JIT toolchains ---- */

static const char *rodata_window(const struct object *o, struct bytes *out)
{
	*out = bytes_make(o->map.data, o->map.len, false);
	if (o->kind == OBJ_ELF && o->elf_ok) {
		const struct elf_section *s = elf_section_by_name(&o->elf, ".rodata");
		struct bytes b;
		if (s && elf_section_bytes(&o->elf, s, &b)) {
			*out = b;
			return ".rodata";
		}
	}
	return "";
}

/* "Cuda compilation tools, release 12.8, V12.8.93" in the file's strings. */
static unsigned toolchain_release(const struct object *o)
{
	struct bytes b;
	rodata_window(o, &b);
	static const char key[] = "Cuda compilation tools, release ";
	int64_t at = bytes_find(&b, 0, key, sizeof key - 1);
	if (at < 0)
		return 0;
	unsigned major = 0, minor = 0;
	uint64_t p = (uint64_t)at + sizeof key - 1;
	uint8_t ch;
	int digits = 0;
	while (bytes_u8(&b, p, &ch) && ch >= '0' && ch <= '9' && digits++ < 3) {
		major = major * 10 + (ch - '0');
		p++;
	}
	if (!bytes_u8(&b, p, &ch) || ch != '.')
		return 0;
	p++;
	digits = 0;
	while (bytes_u8(&b, p, &ch) && ch >= '0' && ch <= '9' && digits++ < 2) {
		minor = minor * 10 + (ch - '0');
		p++;
	}
	if (major < 1 || major > 99 || minor > 9)
		return 0;
	return major * 1000 + minor * 10;
}

/* Whether the tool names compute_<cc> among its architectures. */
static bool toolchain_knows(const struct object *o, unsigned cc)
{
	struct bytes b;
	rodata_window(o, &b);
	char needle[32];
	int n = snprintf(needle, sizeof needle, "compute_%u", cc);
	uint64_t from = 0;
	for (int guard = 0; guard < 64; guard++) {
		int64_t at = bytes_find(&b, from, needle, (size_t)n);
		if (at < 0)
			return false;
		uint8_t next = 0;
		if (!bytes_u8(&b, (uint64_t)at + (uint64_t)n, &next) || next < '0' || next > '9')
			return true;
		from = (uint64_t)at + 1;
	}
	return false;
}

static void add_toolchain(struct cuda_ctx *c, struct ptrvec *v, const char *path, const char *what)
{
	struct diag d;
	diag_clear(&d);
	struct fs_stat st;
	fs_stat(&c->s->fs, path, &st);
	if (st.kind != FS_REGULAR)
		return;
	struct object *o = objcache_get(&c->s->objs, path, &d);
	if (!o || o->kind == OBJ_UNREADABLE)
		return;
	for (size_t i = 0; i < v->n; i++)
		if (str_eq(((struct cuda_toolchain *)v->item[i])->path, o->path))
			return;
	struct cuda_toolchain *t = arena_alloc(&c->s->arena, sizeof *t);
	t->path = o->path;
	t->what = what;
	t->release = toolchain_release(o);
	ptrvec_push(&c->s->arena, v, t);
}

size_t cuda_find_toolchains(struct cuda_ctx *c, const char *cuda_home, const char *path_env,
			    const char *const *extra, size_t nextra, struct cuda_toolchain **out)
{
	struct arena *a = &c->s->arena;
	struct ptrvec v = { 0 };
	char p[4096];
	if (cuda_home && *cuda_home) {
		path_join(cuda_home, "bin/nvcc", p, sizeof p);
		add_toolchain(c, &v, arena_strdup(a, p), "$CUDA_HOME/bin/nvcc");
	}
	if (path_env) {
		const char *s = path_env;
		while (*s) {
			size_t l = strcspn(s, ":");
			if (l && l < 2048) {
				char dir[2048];
				memcpy(dir, s, l);
				dir[l] = '\0';
				path_join(dir, "nvcc", p, sizeof p);
				add_toolchain(c, &v, arena_strdup(a, p), "nvcc on PATH");
			}
			s += l;
			if (*s == ':')
				s++;
		}
	}
	add_toolchain(c, &v, "/usr/local/cuda/bin/nvcc", "/usr/local/cuda/bin/nvcc");
	for (size_t i = 0; i < nextra; i++) {
		const char *base = path_basename(extra[i]);
		add_toolchain(c, &v, extra[i], str_starts(base, "libnvrtc") ? "bundled libnvrtc"
					       : str_eq(base, "ptxas") ? "ptxas" : "nvcc");
	}
	struct cuda_toolchain *arr = arena_calloc(a, v.n ? v.n : 1, sizeof *arr);
	for (size_t i = 0; i < v.n; i++)
		arr[i] = *(struct cuda_toolchain *)v.item[i];
	*out = arr;
	return v.n;
}

void cuda_check_toolkits(struct cuda_ctx *c, const struct cuda_toolchain *tc, size_t n)
{
	struct findings *fl = &c->s->findings;
	struct arena *a = fl->arena;
	for (size_t t = 0; t < n; t++) {
		struct diag d;
		diag_clear(&d);
		struct object *o = objcache_get(&c->s->objs, tc[t].path, &d);
		if (!o)
			continue;
		for (size_t i = 0; i < c->host.ngpu; i++) {
			const struct gpu_target *g = &c->host.gpu[i];
			unsigned first = 0, last = 0;
			bool in_table = cuda_arch_toolkits(g->cc, 0, &first, &last);
			bool knows = toolchain_knows(o, g->cc);
			bool can;
			if (knows)
				can = true;
			else if (tc[t].release && in_table)
				can = first && tc[t].release >= first && (!last || tc[t].release <= last);
			else
				continue;	/* nothing to go on: no verdict */
			bool flashinfer = can && g->cc / 10 == 12 && tc[t].release && tc[t].release < 12090;
			if (can && !flashinfer)
				continue;
			struct finding *f = finding_add(fl, "toolkit-too-old-for-gpu", SEV_WARNING, tc[t].path);
			gpu_fields(a, f->fields, g);
			val_set_str(a, f->fields, "toolchain", tc[t].what);
			val_set(a, f->fields, "release", tc[t].release ? val_str(a, release_str(a, tc[t].release)) : val_null(a));
			val_set(a, f->fields, "first_release", first ? val_str(a, release_str(a, first)) : val_null(a));
			val_set(a, f->fields, "last_release", last ? val_str(a, release_str(a, last)) : val_null(a));
			val_set_str(a, f->fields, "reason", flashinfer ? "flashinfer-requires-12.9" : "cannot-target");
			const char *rel = tc[t].release ? release_str(a, tc[t].release) : "of unknown release";
			if (flashinfer) {
				f->guess = true;
				finding_title(fl, f, "%s (CUDA %s) is below 12.9, which flashinfer's JIT requires for SM 12.x",
					      tc[t].path, rel);
				finding_line(fl, f, "flashinfer reads the nvcc of $CUDA_HOME or PATH and raises \"SM 12.x requires "
						    "CUDA >= 12.9\"; its JIT then fails with \"FlashInfer requires GPUs with sm75 or higher\"");
				finding_line(fl, f, "this toolkit itself can compile for sm_%u; newer flashinfer no longer refuses", g->cc);
				finding_fix(fl, f, "point CUDA_HOME at a CUDA >= 12.9 toolkit, or set FLASHINFER_CUDA_ARCH_LIST=\"12.0a\"");
				continue;
			}
			finding_title(fl, f, "%s (CUDA %s) cannot compile for sm_%u", tc[t].path, rel, g->cc);
			finding_line(fl, f, "%s: %s, found as %s", tc[t].what, tc[t].path, tc[t].what);
			finding_line(fl, f, "GPU: %s, from %s", gpu_label(a, g), g->source);
			if (last && tc[t].release > last)
				finding_line(fl, f, "sm_%u was dropped after CUDA %s", g->cc, release_str(a, last));
			else if (first)
				finding_line(fl, f, "sm_%u needs CUDA %s or newer; the tool does not name compute_%u", g->cc,
					     release_str(a, first), g->cc);
			finding_line(fl, f, "anything that JIT-compiles CUDA with it (torch cpp_extension, flashinfer, "
					    "DeepSpeed ops, NVRTC kernels) fails on this GPU: \"Unsupported gpu architecture "
					    "'compute_%u'\"", g->cc);
			if (first)
				finding_fix(fl, f, "install CUDA %s or newer and point CUDA_HOME (and PATH) at it",
					    release_str(a, first));
			else
				finding_fix(fl, f, "point CUDA_HOME (and PATH) at a toolkit that supports sm_%u", g->cc);
		}
	}
}

/* ---- variant folders (sgl_kernel) ---- */

const char *cuda_variant_pick(struct scan *s, const char *pkgdir, unsigned cc)
{
	char p90[4096], p100[4096];
	path_join(pkgdir, "sm90", p90, sizeof p90);
	path_join(pkgdir, "sm100", p100, sizeof p100);
	bool has90 = objcache_is_dir(&s->objs, p90), has100 = objcache_is_dir(&s->objs, p100);
	if (!has90 && !has100)
		return NULL;
	if (cc == 90 && has90)
		return "sm90";
	return has100 ? "sm100" : NULL;
}

const char *cuda_variant_package(struct arena *a, const char *path, const char **variant)
{
	char dir[4096], pkg[4096];
	path_dirname(path, dir, sizeof dir);
	const char *base = path_basename(dir);
	if (!str_eq(base, "sm90") && !str_eq(base, "sm100"))
		return NULL;
	if (variant)
		*variant = str_eq(base, "sm90") ? "sm90" : "sm100";
	path_dirname(dir, pkg, sizeof pkg);
	return arena_strdup(a, pkg);
}

void cuda_judge_installed(struct cuda_ctx *c, struct object *o)
{
	const char *have = NULL;
	const char *pkg = cuda_variant_package(&c->s->arena, o->path, &have);
	if (!pkg || !cuda_variant_pick(c->s, pkg, 0)) {
		cuda_judge_object(c, o);
		return;
	}
	/* Judge against the GPUs that load this folder only, then put the
	 * full target back. */
	struct cuda_host saved = c->host;
	c->host.ngpu = 0;
	for (size_t i = 0; i < saved.ngpu; i++) {
		const char *pick = cuda_variant_pick(c->s, pkg, saved.gpu[i].cc);
		if (pick && str_eq(pick, have))
			c->host.gpu[c->host.ngpu++] = saved.gpu[i];
	}
	cuda_judge_object(c, o);
	c->host = saved;
}

/* ---- a load graph ---- */

static void variant_notes(struct cuda_ctx *c, struct object *target)
{
	struct arena *a = &c->s->arena;
	const char *have = NULL;
	const char *pkg = cuda_variant_package(a, target->path, &have);
	if (!pkg)
		return;
	struct findings *fl = &c->s->findings;
	for (size_t i = 0; i < c->host.ngpu; i++) {
		const struct gpu_target *g = &c->host.gpu[i];
		const char *pick = cuda_variant_pick(c->s, pkg, g->cc);
		if (!pick || str_eq(pick, have))
			continue;
		struct finding *f = finding_add(fl, "gpu-variant-not-loaded", SEV_NOTE, target->path);
		gpu_fields(a, f->fields, g);
		val_set_str(a, f->fields, "variant", have);
		val_set_str(a, f->fields, "loaded_variant", pick);
		finding_title(fl, f, "on sm_%u the package loads %s/, not %s/", g->cc, pick, have);
		finding_line(fl, f, "sgl_kernel's loader picks sm90/ for compute capability 9.0 exactly and sm100/ for "
				    "every other GPU (and when no GPU is detected)");
	}
}

void cuda_judge_graph(struct cuda_ctx *c, struct object *const *objs, size_t n,
		      const char *cuda_home, const char *path_env)
{
	bool device_code = false;
	const char *nvrtc[8];
	size_t nnvrtc = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cuda_code *k = cuda_code_of(c, objs[i]);
		device_code |= cuda_code_has_device_code(k);
		if (k && k->obj->elf.soname && str_starts(k->obj->elf.soname, "libnvrtc.so") &&
		    nnvrtc < ARRAY_SIZE(nvrtc))
			nnvrtc++[nvrtc] = k->obj->path;
	}
	for (size_t i = 0; i < n; i++)
		cuda_judge_object(c, objs[i]);
	cuda_check_majors(c, objs, n);
	if (n)
		variant_notes(c, objs[0]);
	if (c->host.ngpu) {
		struct cuda_toolchain *tc;
		size_t ntc = cuda_find_toolchains(c, cuda_home, path_env, nvrtc, nnvrtc, &tc);
		cuda_check_toolkits(c, tc, ntc);
	} else if (device_code) {
		cuda_note_not_checked(c, n ? objs[0]->path : NULL);
	}
}

void cuda_note_not_checked(struct cuda_ctx *c, const char *object)
{
	if (c->not_checked_said)
		return;
	c->not_checked_said = true;
	struct findings *fl = &c->s->findings;
	const char *why = c->host.no_gpu_reason ? c->host.no_gpu_reason : "no GPU given";
	struct finding *f = finding_add(fl, "gpu-not-checked", SEV_NOTE, object);
	val_set_str(&c->s->arena, f->fields, "reason", why);
	finding_title(fl, f, "GPU architecture not checked: %s", why);
	finding_line(fl, f, "the objects carry CUDA device code; whether it runs depends on the GPU");
	finding_fix(fl, f, "pass --gpu (sm_90, 12.0, H100, \"RTX 5090\" ...) to judge it for a GPU");
}

const char *cuda_host_line(struct arena *a, const struct cuda_host *h)
{
	const char *gpus = "";
	for (size_t i = 0; i < h->ngpu; i++)
		gpus = arena_printf(a, "%s%s%s%ssm_%u, from %s", gpus, i ? "; " : "", h->gpu[i].name ? h->gpu[i].name : "",
				    h->gpu[i].name ? " " : "", h->gpu[i].cc, h->gpu[i].source);
	if (!h->ngpu)
		gpus = arena_printf(a, "none known: %s; CUDA architecture not checked (pass --gpu)",
				    h->no_gpu_reason ? h->no_gpu_reason : "no GPU given");
	if (!h->driver_known)
		return h->ngpu ? arena_printf(a, "%s; no driver found", gpus) : gpus;
	return arena_printf(a, "%s; driver %s, from %s", gpus, host_driver_str(a, h), h->driver_source);
}

const char *cuda_judge_load_graph(struct scan *s, struct object *const *objs, size_t n,
				  const struct cuda_options *opt)
{
	struct cuda_ctx *c = arena_alloc(&s->arena, sizeof *c);
	cuda_ctx_init(c, s, FATBIN_SCAN_REGISTERED);	/* completed where in doubt */
	bool cuda = false;
	for (size_t i = 0; i < n && !cuda; i++) {
		const struct cuda_code *k = cuda_code_of(c, objs[i]);
		cuda = k && (k->runtime_major || cuda_code_has_device_code(k));
	}
	if (!cuda)
		return NULL;
	for (size_t i = 0; i < opt->ngpu; i++)
		cuda_host_add_spec(&c->host, opt->gpu[i]);
	if (opt->driver)
		cuda_host_set_driver(&c->host, opt->driver);
	struct gpu_probe probe;
	cuda_host_complete(&s->arena, &s->fs, !opt->no_driver, &c->host, &probe);
	cuda_judge_graph(c, objs, n, opt->cuda_home, opt->path_env);
	return cuda_host_line(&s->arena, &c->host);
}
