/*
 * cmd_cuda.c: `abiscope cuda` - the CUDA device code of files, folders and
 * environments, and whether it runs on a GPU with this driver.
 */
#include "cli/cli.h"
#include "cli/termsafe.h"
#include "cuda/verdict.h"
#include "pyenv/inventory.h"

struct cuda_cli {
	const char *paths[256];
	size_t npaths;
	const char *root;
	const char *driver;
	const char *gpus[GPU_MAX_DEVICES];
	size_t ngpus;
	bool json, verbose, no_driver, registered_only, list_elf, list_ptx;
	enum color_mode color;
};

static int parse(int argc, char **argv, struct cuda_cli *o)
{
	struct args a;
	enum arg_kind k;
	bool err = false;
	const char *v;
	args_init(&a, argc, argv, "cuda");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND) {
			if (o->npaths == ARRAY_SIZE(o->paths))
				return usage_error("cuda", "too many paths");
			o->paths[o->npaths++] = a.value;
		} else if (arg_is(&a, "--no-driver")) {
			o->no_driver = true;
		} else if (arg_is(&a, "--registered-only")) {
			o->registered_only = true;
		} else if (arg_is(&a, "--list-elf")) {
			o->list_elf = true;
		} else if (arg_is(&a, "--list-ptx")) {
			o->list_ptx = true;
		} else if (arg_value(&a, "--driver", &v, &err)) {
			o->driver = v;
		} else if (arg_value(&a, "--gpu", &v, &err)) {
			if (o->ngpus == ARRAY_SIZE(o->gpus))
				return usage_error("cuda", "too many --gpu");
			o->gpus[o->ngpus++] = v;
		}
	}
	if (k != ARG_END)
		return args_status(k);
	o->json = a.common.json;
	o->verbose = a.common.verbose;
	o->root = a.common.root;
	o->color = a.common.color;
	if (!o->npaths)
		return usage_error("cuda", "missing PATH");
	if (o->list_elf && o->list_ptx)
		return usage_error("cuda", "--list-elf and --list-ptx are separate listings: give one");
	return 0;
}

/* ---- collecting objects ---- */

struct item {
	struct object *obj;
	const struct cuda_code *code;
	const struct dist *dist;
};

struct collect {
	struct scan *s;
	struct cuda_ctx *c;
	struct ptrvec items;		/* struct item * */
	struct ptrvec toolchains;	/* const char *: nvcc, ptxas, libnvrtc found */
	struct ptrvec unreadable;	/* const char *: "path: reason" */
	struct ptrvec packages;		/* const char *: folders with sm90/ or sm100/ */
	size_t objects_read;
};

static void add_object(struct collect *col, struct object *o, const struct dist *dist)
{
	for (size_t i = 0; i < col->items.n; i++)
		if (((struct item *)col->items.item[i])->obj == o)
			return;
	col->objects_read++;
	struct item *it = arena_alloc(&col->s->arena, sizeof *it);
	it->obj = o;
	it->dist = dist;
	it->code = cuda_code_of(col->c, o);
	ptrvec_push(&col->s->arena, &col->items, it);
	const char *base = path_basename(o->path);
	if (o->kind == OBJ_ELF && o->elf_ok && o->elf.soname && str_starts(o->elf.soname, "libnvrtc.so"))
		ptrvec_push(&col->s->arena, &col->toolchains, (void *)o->path);
	else if (str_eq(base, "nvcc") || str_eq(base, "ptxas"))
		ptrvec_push(&col->s->arena, &col->toolchains, (void *)o->path);
	const char *variant;
	const char *pkg = cuda_variant_package(&col->s->arena, o->path, &variant);
	if (pkg && cuda_variant_pick(col->s, pkg, 0)) {
		bool seen = false;
		for (size_t i = 0; i < col->packages.n; i++)
			seen |= str_eq(col->packages.item[i], pkg);
		if (!seen)
			ptrvec_push(&col->s->arena, &col->packages, (void *)pkg);
	}
}

static void add_path(struct collect *col, const char *path, const struct dist *dist)
{
	struct diag d;
	diag_clear(&d);
	struct object *o = objcache_get(&col->s->objs, path, &d);
	if (!o) {
		ptrvec_push(&col->s->arena, &col->unreadable, arena_printf(&col->s->arena, "%s: %s", path, d.msg));
		return;
	}
	if (o->kind == OBJ_UNREADABLE) {
		ptrvec_push(&col->s->arena, &col->unreadable,
			    arena_printf(&col->s->arena, "%s: %s", path, o->diag.msg));
		return;
	}
	add_object(col, o, dist);
}

/* Files the environment walk does not look at: cubins, fatbins, object
 * files, and the JIT tools (nvcc, ptxas). */
struct extra_walk {
	struct collect *col;
	char dir[4096];
	int depth;
};

static bool wanted_extra(const char *name)
{
	return str_ends(name, ".cubin") || str_ends(name, ".fatbin") || str_ends(name, ".o") ||
	       str_eq(name, "nvcc") || str_eq(name, "ptxas");
}

static bool extra_entry(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct extra_walk *w = ctx;
	char p[4096];
	path_join(w->dir, name, p, sizeof p);
	if (kind == FS_DIR && !is_link && w->depth < 24) {
		struct extra_walk sub = *w;
		snprintf(sub.dir, sizeof sub.dir, "%s", p);
		sub.depth++;
		fs_list_dir(&w->col->s->fs, sub.dir, extra_entry, &sub);
		return true;
	}
	if (kind == FS_OTHER && !is_link) {
		struct fs_stat st;
		fs_stat(&w->col->s->fs, p, &st);
		if (st.kind == FS_DIR && w->depth < 24) {
			struct extra_walk sub = *w;
			snprintf(sub.dir, sizeof sub.dir, "%s", p);
			sub.depth++;
			fs_list_dir(&w->col->s->fs, sub.dir, extra_entry, &sub);
			return true;
		}
	}
	if (wanted_extra(name))
		add_path(w->col, arena_strdup(&w->col->s->arena, p), NULL);
	return true;
}

/* Where pip-installed toolchains live in a site directory. */
static void site_toolchains(struct collect *col, const char *site)
{
	static const char *const rel[] = { "triton/backends/nvidia/bin/ptxas", "triton/third_party/cuda/bin/ptxas",
					   "nvidia/cuda_nvcc/bin/nvcc", "nvidia/cu13/bin/nvcc",
					   "nvidia/cuda_nvcc/bin/ptxas", "nvidia/cu13/bin/ptxas" };
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		char p[4096];
		path_join(site, rel[i], p, sizeof p);
		struct fs_stat st;
		fs_stat(&col->s->fs, p, &st);
		if (st.kind == FS_REGULAR)
			ptrvec_push(&col->s->arena, &col->toolchains, arena_strdup(&col->s->arena, p));
	}
}

static int collect_path(struct collect *col, const char *path)
{
	struct scan *s = col->s;
	struct fs_stat st;
	fs_stat(&s->fs, path, &st);
	if (st.kind == FS_MISSING) {
		ptrvec_push(&s->arena, &col->unreadable, arena_printf(&s->arena, "%s: %s", path, strerror(st.err)));
		return EXIT_UNREADABLE;
	}
	if (st.kind != FS_DIR) {
		size_t before = col->unreadable.n;
		add_path(col, path, NULL);
		return col->unreadable.n > before ? EXIT_UNREADABLE : EXIT_OK;
	}
	struct pyenv *e = arena_alloc(&s->arena, sizeof *e);
	struct diag d;
	diag_clear(&d);
	if (pyenv_open(s, path, e, &d) != ST_OK) {
		ptrvec_push(&s->arena, &col->unreadable, arena_printf(&s->arena, "%s: %s", path, d.msg));
		return EXIT_UNREADABLE;
	}
	struct inventory *inv = arena_alloc(&s->arena, sizeof *inv);
	inventory_build(s, e, inv);
	for (size_t i = 0; i < inv->nobj; i++)
		add_object(col, inv->obj[i]->obj, inv->obj[i]->dist);
	for (size_t i = 0; i < inv->unreadable.n; i++)
		ptrvec_push(&s->arena, &col->unreadable, inv->unreadable.item[i]);
	if (e->kind == PYENV_PLAIN) {
		struct extra_walk w;
		memset(&w, 0, sizeof w);
		w.col = col;
		snprintf(w.dir, sizeof w.dir, "%s", e->root);
		fs_list_dir(&s->fs, w.dir, extra_entry, &w);
	} else {
		for (size_t i = 0; i < e->nsite; i++)
			site_toolchains(col, e->site[i]);
	}
	return EXIT_OK;
}

/* ---- the cuobjdump listing ---- */

static int list_like_cuobjdump(struct scan *s, struct cuda_ctx *c, const struct cuda_cli *o)
{
	int code = EXIT_OK;
	for (size_t p = 0; p < o->npaths; p++) {
		struct diag d;
		diag_clear(&d);
		struct object *obj = objcache_get(&s->objs, o->paths[p], &d);
		if (!obj || obj->kind == OBJ_UNREADABLE) {
			fprintf(stderr, "abiscope cuda: %s: %s\n", one_line(o->paths[p]), one_line(obj ? obj->diag.msg : d.msg));
			code = EXIT_UNREADABLE;
			continue;
		}
		const struct cuda_code *k = cuda_code_of(c, obj);
		if (!k)
			continue;
		const char **lines;
		size_t n = fatbin_cuobjdump_list(&s->arena, obj->path, &k->set, k->is_cubin_file,
						 o->list_elf ? FATBIN_CUBIN : FATBIN_PTX, &lines);
		for (size_t i = 0; i < n; i++)
			printf("%s\n", lines[i]);
	}
	return code;
}

/* ---- text ---- */

static const char *dist_label(struct arena *a, const struct dist *d)
{
	if (!d)
		return NULL;
	return d->version ? arena_printf(a, "%s %s", d->name, d->version) : d->name;
}

static void print_host(const struct term *t, struct arena *a, const struct cuda_host *h)
{
	if (!h->ngpu)
		fprintf(t->out, "%sgpu%s      none: %s\n", c_bold(t), c_reset(t),
			h->no_gpu_reason ? h->no_gpu_reason : "no GPU given");
	for (size_t i = 0; i < h->ngpu; i++) {
		char cc[16];
		cuda_cc_string(h->gpu[i].cc, cc, sizeof cc);
		fprintf(t->out, "%sgpu%s      %s%ssm_%u (compute capability %s), from %s\n", c_bold(t), c_reset(t),
			h->gpu[i].name ? h->gpu[i].name : "", h->gpu[i].name ? ", " : "", h->gpu[i].cc, cc,
			h->gpu[i].source);
	}
	if (h->driver_known) {
		char rel[16] = "?";
		if (h->driver_cuda)
			cuda_release_string(h->driver_cuda, rel, sizeof rel);
		if (h->driver_version_known)
			fprintf(t->out, "%sdriver%s   %s (CUDA %s), from %s\n", c_bold(t), c_reset(t),
				h->driver.patch ? arena_printf(a, "%u.%u.%02u", h->driver.major, h->driver.minor,
							       h->driver.patch)
						: arena_printf(a, "%u.%u", h->driver.major, h->driver.minor),
				rel, h->driver_source);
		else
			fprintf(t->out, "%sdriver%s   CUDA %s, from %s\n", c_bold(t), c_reset(t), rel, h->driver_source);
	} else {
		fprintf(t->out, "%sdriver%s   none found\n", c_bold(t), c_reset(t));
	}
}

static void print_targets(const struct term *t, const struct cuda_code *k, uint16_t kind, const char *label)
{
	bool any = false;
	for (size_t i = 0; i < k->ntarget; i++) {
		const struct cuda_target_count *tc = &k->target[i];
		if (tc->kind != kind)
			continue;
		if (!any)
			fprintf(t->out, "  %-7s", label);
		any = true;
		struct fatbin_entry e;
		memset(&e, 0, sizeof e);
		e.kind = tc->kind;
		e.sm = tc->sm;
		e.variant = tc->variant;
		char name[32];
		fatbin_target_name(&e, name, sizeof name);
		if (kind == FATBIN_PTX)
			fprintf(t->out, " %s (ISA %u.%u)", name, tc->isa_major, tc->isa_minor);
		else
			fprintf(t->out, " %s", name);
	}
	if (any)
		fputc('\n', t->out);
}

static void print_object(const struct term *t, struct arena *a, const struct item *it, bool verbose)
{
	const struct cuda_code *k = it->code;
	const char *dl = dist_label(a, it->dist);
	fprintf(t->out, "%s%s%s%s%s%s\n", c_bold(t), one_line(it->obj->path), c_reset(t), dl ? "  [" : "", dl ? dl : "",
		dl ? "]" : "");
	if (!k) {
		fprintf(t->out, "  not an ELF object or fatbin\n");
		return;
	}
	if (cuda_code_has_device_code(k) || k->set.nentry) {
		print_targets(t, k, FATBIN_CUBIN, "cubin");
		print_targets(t, k, FATBIN_PTX, "ptx");
		print_targets(t, k, FATBIN_LTOIR, "lto-ir");
		fprintf(t->out, "  %-7s %zu entries in %zu fatbins%s", "fatbins", k->set.nentry, k->set.nfatbin,
			k->ncompressed ? "" : "\n");
		if (k->ncompressed)
			fprintf(t->out, ", %zu compressed\n", k->ncompressed);
	} else {
		fprintf(t->out, "  no device code\n");
	}
	if (k->runtime_major)
		fprintf(t->out, "  %-7s CUDA %u (%s %s)\n", "cuda", k->runtime_major,
			it->obj->elf.soname && str_eq(it->obj->elf.soname, k->runtime_evidence) ? "is" : "links",
			k->runtime_evidence);
	if (k->nother_fatbins) {
		/* Per section, in order of first appearance. */
		const char *sections[16];
		size_t counts[16], ns = 0;
		for (size_t i = 0; i < k->set.nfatbin; i++) {
			const struct fatbin *fb = &k->set.fatbin[i];
			if (fb->where != FATBIN_ELSEWHERE)
				continue;
			size_t j = 0;
			while (j < ns && !str_eq(sections[j], fb->section))
				j++;
			if (j == ns && ns < ARRAY_SIZE(sections)) {
				sections[ns] = fb->section;
				counts[ns++] = 0;
			}
			if (j < ns)
				counts[j]++;
		}
		for (size_t j = 0; j < ns; j++)
			fprintf(t->out, "  %-7s %zu fatbins in %s, loaded by the library itself (cuobjdump does not list them)\n",
				"also", counts[j], sections[j][0] ? sections[j] : "a segment");
	}
	if (k->set.nwrappers_unmatched)
		fprintf(t->out, "  %-7s %zu of %zu .nvFatBinSegment wrappers point at no fatbin\n", "problem",
			k->set.nwrappers_unmatched, k->set.nwrappers);
	if (k->set.problem)
		fprintf(t->out, "  %s%-7s%s %s: %s at offset 0x%llx%s\n", c_yellow(t), "problem", c_reset(t),
			it->obj->path, k->set.problem, (unsigned long long)k->set.problem_offset,
			k->set.nproblems > 1 ? arena_printf(a, " (and %zu more)", k->set.nproblems - 1) : "");
	if (verbose)
		for (size_t i = 0; i < k->set.nfatbin; i++) {
			const struct fatbin *fb = &k->set.fatbin[i];
			fprintf(t->out, "    fatbin at 0x%llx in %s: %u entries%s%s\n", (unsigned long long)fb->offset,
				fb->section[0] ? fb->section : fatbin_where_name(fb->where), fb->n,
				fb->registered ? ", registered" : "", fb->listed ? ", listed by cuobjdump" : "");
		}
}

/* Per distribution: the union of its objects' targets. */
struct dist_sum {
	const struct dist *dist;
	size_t objects;
	struct cuda_code merged;	/* only target/ntarget used */
};

static void merge_targets(struct arena *a, struct cuda_code *into, const struct cuda_code *k)
{
	for (size_t i = 0; i < k->ntarget; i++) {
		const struct cuda_target_count *t = &k->target[i];
		size_t j = 0;
		while (j < into->ntarget && !(into->target[j].kind == t->kind && into->target[j].sm == t->sm &&
					      into->target[j].variant == t->variant))
			j++;
		if (j == into->ntarget) {
			into->target = arena_grow(a, into->target, into->ntarget, into->ntarget + 1, sizeof *into->target);
			into->target[into->ntarget++] = *t;
		} else {
			into->target[j].entries += t->entries;
			into->target[j].fatbins += t->fatbins;
		}
	}
}

static int cmp_target_sum(const void *x, const void *y)
{
	const struct cuda_target_count *a = x, *b = y;
	int ra = a->kind == FATBIN_CUBIN ? 0 : a->kind == FATBIN_PTX ? 1 : 2;
	int rb = b->kind == FATBIN_CUBIN ? 0 : b->kind == FATBIN_PTX ? 1 : 2;
	if (ra != rb)
		return ra - rb;
	if (a->sm != b->sm)
		return a->sm - b->sm;
	return a->variant - b->variant;
}

static size_t dist_summaries(struct arena *a, const struct collect *col, struct dist_sum **out)
{
	struct dist_sum *ds = arena_calloc(a, col->items.n + 1, sizeof *ds);
	size_t n = 0;
	for (size_t i = 0; i < col->items.n; i++) {
		const struct item *it = col->items.item[i];
		if (!it->dist || !cuda_code_has_device_code(it->code))
			continue;
		size_t j = 0;
		while (j < n && ds[j].dist != it->dist)
			j++;
		if (j == n)
			ds[n++].dist = it->dist;
		ds[j].objects++;
		merge_targets(a, &ds[j].merged, it->code);
	}
	for (size_t j = 0; j < n; j++)
		if (ds[j].merged.ntarget > 1)
			sort_items(ds[j].merged.target, ds[j].merged.ntarget, sizeof *ds[j].merged.target, cmp_target_sum);
	*out = ds;
	return n;
}

static void print_text(struct scan *s, struct cuda_ctx *c, const struct cuda_cli *o, const struct collect *col)
{
	struct term t;
	term_init(&t, stdout, o->color);
	struct arena *a = &s->arena;
	print_host(&t, a, &c->host);
	fputc('\n', t.out);
	size_t with_code = 0;
	for (size_t i = 0; i < col->items.n; i++) {
		const struct item *it = col->items.item[i];
		bool has = it->code && (cuda_code_has_device_code(it->code) || it->code->set.nentry);
		with_code += has;
		if (!has && !o->verbose && !(it->code && it->code->runtime_major))
			continue;
		print_object(&t, a, it, o->verbose);
		fputc('\n', t.out);
	}
	struct dist_sum *ds;
	size_t nd = dist_summaries(a, col, &ds);
	if (nd) {
		fprintf(t.out, "%sdistributions with device code%s\n", c_bold(&t), c_reset(&t));
		for (size_t j = 0; j < nd; j++) {
			const char *cub = cuda_targets_string(a, &ds[j].merged, FATBIN_CUBIN);
			const char *ptx = cuda_targets_string(a, &ds[j].merged, FATBIN_PTX);
			fprintf(t.out, "  %-32s %zu object%s; cubin %s; ptx %s\n", dist_label(a, ds[j].dist), ds[j].objects,
				ds[j].objects == 1 ? "" : "s", *cub ? cub : "none", *ptx ? ptx : "none");
		}
		fputc('\n', t.out);
	}
	for (size_t p = 0; p < col->packages.n; p++) {
		const char *pkg = col->packages.item[p];
		fprintf(t.out, "%svariants%s %s: sm90/ on compute capability 9.0, sm100/ on every other GPU", c_bold(&t),
			c_reset(&t), pkg);
		for (size_t i = 0; i < c->host.ngpu; i++) {
			const char *pick = cuda_variant_pick(s, pkg, c->host.gpu[i].cc);
			fprintf(t.out, "%s sm_%u loads %s/", i ? ";" : ":", c->host.gpu[i].cc, pick ? pick : "(none)");
		}
		fputc('\n', t.out);
	}
	for (size_t i = 0; i < col->unreadable.n; i++)
		fprintf(t.out, "%scannot read%s %s\n", c_yellow(&t), c_reset(&t), one_line(col->unreadable.item[i]));
	fprintf(t.out, "%zu object%s read, %zu with device code\n\n", col->objects_read,
		col->objects_read == 1 ? "" : "s", with_code);
	if (s->findings.list.n)
		render_findings_text(&t, &s->findings, o->verbose);
	else if (c->host.ngpu)
		fprintf(t.out, "%snothing would fail on %s%s\n", c_green(&t), c->host.ngpu > 1 ? "these GPUs" : "this GPU",
			c_reset(&t));
}

/* ---- JSON ---- */

static void json_targets(struct jw *w, const struct cuda_code *k, uint16_t kind, const char *key)
{
	jw_key(w, key);
	jw_arr_begin(w);
	for (size_t i = 0; k && i < k->ntarget; i++) {
		const struct cuda_target_count *t = &k->target[i];
		if (t->kind != kind)
			continue;
		struct fatbin_entry e;
		memset(&e, 0, sizeof e);
		e.kind = t->kind;
		e.sm = t->sm;
		e.variant = t->variant;
		char name[32];
		fatbin_target_name(&e, name, sizeof name);
		jw_obj_begin(w);
		jw_kstr(w, "target", name);
		jw_kint(w, "sm", t->sm);
		if (t->variant) {
			char v[2] = { t->variant, 0 };
			jw_kstr(w, "variant", v);
		} else {
			jw_key(w, "variant");
			jw_null(w);
		}
		if (kind == FATBIN_PTX) {
			char isa[16];
			snprintf(isa, sizeof isa, "%u.%u", t->isa_major, t->isa_minor);
			jw_kstr(w, "isa", isa);
		}
		jw_kint(w, "entries", t->entries);
		jw_kint(w, "fatbins", t->fatbins);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void json_host(struct jw *w, struct arena *a, const struct cuda_host *h)
{
	jw_key(w, "gpus");
	jw_arr_begin(w);
	for (size_t i = 0; i < h->ngpu; i++) {
		char cc[16];
		cuda_cc_string(h->gpu[i].cc, cc, sizeof cc);
		jw_obj_begin(w);
		jw_kstr(w, "gpu", arena_printf(a, "sm_%u", h->gpu[i].cc));
		jw_kstr(w, "compute_capability", cc);
		jw_kstr(w, "name", h->gpu[i].name);
		jw_kstr(w, "source", h->gpu[i].source);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_kstr(w, "no_gpu_reason", h->ngpu ? NULL : h->no_gpu_reason);
	jw_key(w, "driver");
	if (!h->driver_known) {
		jw_null(w);
		return;
	}
	jw_obj_begin(w);
	if (h->driver_version_known)
		jw_kstr(w, "version", h->driver.patch ? arena_printf(a, "%u.%u.%02u", h->driver.major, h->driver.minor,
								     h->driver.patch)
						      : arena_printf(a, "%u.%u", h->driver.major, h->driver.minor));
	else
		jw_kstr(w, "version", NULL);
	char rel[16];
	cuda_release_string(h->driver_cuda, rel, sizeof rel);
	jw_kstr(w, "cuda", h->driver_cuda ? rel : NULL);
	jw_kstr(w, "source", h->driver_source);
	jw_obj_end(w);
}

static void print_json(struct scan *s, struct cuda_ctx *c, const struct collect *col)
{
	struct arena *a = &s->arena;
	struct jw w;
	jw_init(&w, stdout);
	jw_obj_begin(&w);
	jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
	jw_kstr(&w, "command", "cuda");
	json_host(&w, a, &c->host);
	jw_key(&w, "objects");
	jw_arr_begin(&w);
	for (size_t i = 0; i < col->items.n; i++) {
		const struct item *it = col->items.item[i];
		const struct cuda_code *k = it->code;
		jw_obj_begin(&w);
		jw_kstr(&w, "path", it->obj->path);
		jw_kstr(&w, "dist", it->dist ? it->dist->name : NULL);
		jw_kstr(&w, "dist_version", it->dist ? it->dist->version : NULL);
		jw_kstr(&w, "kind", !k ? "other" : k->is_cubin_file ? "cubin" : k->is_fatbin_file ? "fatbin" : "elf");
		jw_kint(&w, "fatbins", k ? (int64_t)k->set.nfatbin : 0);
		jw_kint(&w, "fatbins_listed", k ? (int64_t)k->nlisted_fatbins : 0);
		jw_kint(&w, "fatbins_elsewhere", k ? (int64_t)k->nother_fatbins : 0);
		jw_kint(&w, "entries", k ? (int64_t)k->set.nentry : 0);
		jw_kint(&w, "entries_compressed", k ? (int64_t)k->ncompressed : 0);
		jw_kint(&w, "wrappers", k ? (int64_t)k->set.nwrappers : 0);
		json_targets(&w, k, FATBIN_CUBIN, "cubins");
		json_targets(&w, k, FATBIN_PTX, "ptx");
		json_targets(&w, k, FATBIN_LTOIR, "lto_ir");
		jw_key(&w, "cuda_major");
		if (k && k->runtime_major)
			jw_int(&w, k->runtime_major);
		else
			jw_null(&w);
		jw_kstr(&w, "cuda_major_from", k ? k->runtime_evidence : NULL);
		jw_key(&w, "problem");
		if (k && k->set.problem) {
			jw_obj_begin(&w);
			jw_kstr(&w, "message", k->set.problem);
			jw_kint(&w, "offset", (int64_t)k->set.problem_offset);
			jw_kint(&w, "count", (int64_t)k->set.nproblems);
			jw_obj_end(&w);
		} else {
			jw_null(&w);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	struct dist_sum *ds;
	size_t nd = dist_summaries(a, col, &ds);
	jw_key(&w, "distributions");
	jw_arr_begin(&w);
	for (size_t j = 0; j < nd; j++) {
		jw_obj_begin(&w);
		jw_kstr(&w, "name", ds[j].dist->name);
		jw_kstr(&w, "version", ds[j].dist->version);
		jw_kint(&w, "objects", (int64_t)ds[j].objects);
		json_targets(&w, &ds[j].merged, FATBIN_CUBIN, "cubins");
		json_targets(&w, &ds[j].merged, FATBIN_PTX, "ptx");
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "variant_packages");
	jw_arr_begin(&w);
	for (size_t p = 0; p < col->packages.n; p++) {
		const char *pkg = col->packages.item[p];
		jw_obj_begin(&w);
		jw_kstr(&w, "package", pkg);
		jw_kstr(&w, "rule", "sgl_kernel: sm90/ for compute capability 9.0, sm100/ otherwise");
		jw_key(&w, "loads");
		jw_arr_begin(&w);
		for (size_t i = 0; i < c->host.ngpu; i++) {
			jw_obj_begin(&w);
			jw_kstr(&w, "gpu", arena_printf(a, "sm_%u", c->host.gpu[i].cc));
			jw_kstr(&w, "variant", cuda_variant_pick(s, pkg, c->host.gpu[i].cc));
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "unreadable");
	jw_arr_begin(&w);
	for (size_t i = 0; i < col->unreadable.n; i++)
		jw_str(&w, col->unreadable.item[i]);
	jw_arr_end(&w);
	jw_key(&w, "findings");
	render_findings_json(&w, &s->findings);
	jw_obj_end(&w);
	jw_end(&w);
}

int cmd_cuda(int argc, char **argv)
{
	struct cuda_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	struct scan s;
	scan_init(&s, o.root);
	struct cuda_ctx c;
	cuda_ctx_init(&c, &s, o.registered_only ? FATBIN_SCAN_REGISTERED : FATBIN_SCAN_ALL);
	if (o.list_elf || o.list_ptx) {
		int code = list_like_cuobjdump(&s, &c, &o);
		scan_release(&s);
		return code;
	}
	for (size_t i = 0; i < o.ngpus; i++)
		if (!cuda_host_add_spec(&c.host, o.gpus[i])) {
			scan_release(&s);
			return usage_error("cuda", "--gpu %s names no GPU abiscope knows (try sm_90, 12.0 or H100)",
					   o.gpus[i]);
		}
	if (o.driver && !cuda_host_set_driver(&c.host, o.driver)) {
		scan_release(&s);
		return usage_error("cuda", "--driver takes a driver version such as 580.65.06");
	}
	struct gpu_probe probe;
	cuda_host_complete(&s.arena, &s.fs, !o.no_driver, &c.host, &probe);

	struct collect col;
	memset(&col, 0, sizeof col);
	col.s = &s;
	col.c = &c;
	int code = EXIT_OK;
	for (size_t i = 0; i < o.npaths; i++)
		if (collect_path(&col, o.paths[i]) != EXIT_OK)
			code = EXIT_UNREADABLE;
	bool device_code = false;
	for (size_t i = 0; i < col.items.n; i++) {
		const struct item *it = col.items.item[i];
		cuda_judge_installed(&c, it->obj);
		device_code |= cuda_code_has_device_code(it->code);
	}
	if (c.host.ngpu) {
		struct cuda_toolchain *tc;
		const char *home = o.root ? NULL : getenv("CUDA_HOME");
		if (!home && !o.root)
			home = getenv("CUDA_PATH");
		size_t ntc = cuda_find_toolchains(&c, home, o.root ? NULL : getenv("PATH"),
						  (const char *const *)col.toolchains.item, col.toolchains.n, &tc);
		cuda_check_toolkits(&c, tc, ntc);
	} else if (device_code) {
		/* No GPU: say that the architecture was not judged. */
		cuda_note_not_checked(&c, NULL);
	}
	if (o.json)
		print_json(&s, &c, &col);
	else
		print_text(&s, &c, &o, &col);
	if (code == EXIT_OK && findings_count(&s.findings, SEV_ERROR))
		code = EXIT_FAILS;
	scan_release(&s);
	return code;
}
