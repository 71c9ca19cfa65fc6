/*
 * record.c: building a snapshot from what a scan looked at.
 *
 * The recorder notes every path the analysis asked the file-system view
 * about and how (fs.h fs_recorder).  snapshot_build() then describes each
 * of them as the analysis used it: a mapped ELF object by its loader facts
 * (snapshot.h), a file read as text by its contents, a probed file by its
 * first bytes, a listed directory by its entries, and every symbolic link
 * met on the way to any of them as a link, so that the same questions asked
 * of the mounted snapshot get the same answers.  The libraries ld.so.cache
 * lists are added for binaries the analysis never loaded: described in full
 * with --full, else by name, needs and versions only (their exports are then
 * unknown, and a binding against them is labelled a guess).
 */
#include "host/snapshot.h"
#include "elf/symtab.h"
#include "pyenv/dist.h"
#include "cuda/verdict.h"

#include <limits.h>
#include <sys/utsname.h>
#include <time.h>

/* The first bytes kept of a file only probed: as many as an ELF header, so
 * that the loader's open_verify gives the same answer on the snapshot ("file
 * too short" below 64 bytes, "invalid ELF header" at or above). */
#define HEAD_KEEP 64
#define TEXT_MAX (16u << 20)
#define LINK_DEPTH 40

static void note_access(void *ctx, enum fs_access what, const char *path)
{
	struct snap_recorder *r = ctx;
	uintptr_t bits = (uintptr_t)strmap_get(&r->use, path);
	if (!bits) {
		const char *copy = arena_strdup(r->arena, path);
		ptrvec_push(r->arena, &r->order, (void *)copy);
		strmap_put(r->arena, &r->use, copy, (void *)(uintptr_t)(1u << 8 | 1u << what));
		return;
	}
	strmap_put(r->arena, &r->use, path, (void *)(bits | 1u << what));
}

void snapshot_record_begin(struct scan *s, struct snap_recorder *r)
{
	memset(r, 0, sizeof *r);
	r->arena = &s->arena;
	r->hook.note = note_access;
	r->hook.ctx = r;
	s->fs.recorder = &r->hook;
}

void snapshot_record_end(struct scan *s)
{
	s->fs.recorder = NULL;
}

/* ---- the builder ---- */

enum want { WANT_HEAD = 1, WANT_TEXT = 2, WANT_ELF = 4, WANT_PARTIAL = 8, WANT_LIST = 16 };

struct builder {
	struct scan *s;
	struct arena *a;
	struct snapshot *snap;
	const struct ldso_facts *f;
	bool names;
	bool from_cache;		/* describing what only ld.so.cache names */
	struct cuda_ctx cuda;		/* device code of described objects */
	struct ptrvec files;		/* struct snap_file * */
	struct idmap inodes;		/* (dev, ino) -> the first regular file described */
	struct strmap plain;		/* prefixes known not to be links */
	struct ptrvec site;		/* the env's site directories (named, canonical) */
	struct ptrvec tree;		/* those and the env's root */
};

static struct snap_file *file_at(struct builder *b, const char *path, enum snap_file_type type)
{
	struct snap_file *sf = strmap_get(&b->snap->by_path, path);
	if (sf)
		return sf;
	sf = arena_calloc(b->a, 1, sizeof *sf);
	sf->path = arena_strdup(b->a, path);
	sf->type = type;
	strmap_put(b->a, &b->snap->by_path, sf->path, sf);
	ptrvec_push(b->a, &b->files, sf);
	return sf;
}

/*
 * Follows path the way the kernel would, recording each symbolic link met,
 * and returns the path with no link left in it (into out), or false.
 */
static bool resolve_recording(struct builder *b, const char *path, char *out, size_t outsz, int depth)
{
	if (depth > LINK_DEPTH)
		return false;
	char norm[PATH_MAX];
	path_normalize(path, norm, sizeof norm);
	char cur[PATH_MAX] = "";
	size_t curlen = 0;
	const char *p = norm;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (curlen + n + 2 >= sizeof cur)
			return false;
		cur[curlen++] = '/';
		memcpy(cur + curlen, p, n);
		curlen += n;
		cur[curlen] = '\0';
		p += n;
		if (strmap_get(&b->plain, cur))
			continue;
		if (str_eq(cur, "/proc") || str_eq(cur, "/sys"))
			return false;	/* the kernel's, not the host's files */
		char target[PATH_MAX];
		if (!fs_readlink(&b->s->fs, cur, target, sizeof target)) {
			strmap_put(b->a, &b->plain, arena_strdup(b->a, cur), MAP_YES);
			continue;
		}
		struct snap_file *lf = file_at(b, cur, SNAP_LINK);
		lf->type = SNAP_LINK;
		lf->target = arena_strdup(b->a, target);
		char next[PATH_MAX * 2 + 2], dir[PATH_MAX];
		if (target[0] == '/') {
			snprintf(next, sizeof next, "%s%s", target, p);
		} else {
			path_dirname(cur, dir, sizeof dir);
			snprintf(next, sizeof next, "%s/%s%s", str_eq(dir, "/") ? "" : dir, target, p);
		}
		return resolve_recording(b, next, out, outsz, depth + 1);
	}
	snprintf(out, outsz, "%s", curlen ? cur : "/");
	return true;
}

static void describe_head(struct builder *b, struct snap_file *sf, const char *path)
{
	uint8_t head[HEAD_KEEP];
	struct fs_probe pr;
	fs_probe(&b->s->fs, path, head, sizeof head, &pr);
	sf->size = pr.size;
	size_t keep = pr.head_len < HEAD_KEEP ? pr.head_len : HEAD_KEEP;
	uint8_t *copy = arena_alloc(b->a, keep ? keep : 1);
	memcpy(copy, head, keep);
	sf->bytes = copy;
	sf->nbytes = keep;
}

static bool describe_text(struct builder *b, struct snap_file *sf, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(&b->s->fs, path, TEXT_MAX, &text, &len, &d) != ST_OK)
		return false;
	uint8_t *copy = arena_alloc(b->a, len + 1);
	memcpy(copy, text, len);
	copy[len] = 0;
	free(text);
	sf->type = SNAP_TEXT;
	sf->bytes = copy;
	sf->nbytes = len;
	sf->size = len;
	return true;
}

static void describe_exports(struct builder *b, const struct elf_file *ef, struct snap_elf *e, bool names)
{
	e->nexports = 0;
	e->exports = arena_calloc(b->a, ef->nsyms ? ef->nsyms : 1, sizeof *e->exports);
	if (names)
		e->export_names = arena_calloc(b->a, ef->nsyms ? ef->nsyms : 1, sizeof *e->export_names);
	struct ptrvec named;
	memset(&named, 0, sizeof named);
	for (uint32_t i = 1; i < ef->nsyms; i++) {
		struct elf_sym sym;
		if (!elf_sym(ef, i, &sym) || sym.bind == STB_LOCAL_)
			continue;
		/* what check_match can never return is left out, and what the
		 * object's own hash table does not lead to (a corrupt one) */
		if (sym.value == 0 && sym.shndx != SHN_ABS_ && sym.type != STT_TLS_)
			continue;
		if (!elf_hash_finds(ef, i))
			continue;
		if (e->export_names)
			e->export_names[e->nexports] = arena_strdup(b->a, sym.name);
		struct snap_export *x = &e->exports[e->nexports++];
		x->hash = elf_name_hash64(sym.name);
		x->versym = sym.versym;
		x->info = (uint8_t)(sym.bind << 4 | (sym.type & 15));
		x->flags = (uint8_t)((sym.value ? SNAP_HAS_VALUE : 0) | (sym.shndx == SHN_ABS_ ? SNAP_ABS : 0) |
				     (sym.shndx == SHN_UNDEF_ ? SNAP_UNDEF : 0) |
				     (sym.visibility & 3) << SNAP_VIS_SHIFT);
		if (sym.shndx != SHN_UNDEF_ && str_starts(sym.name, "PyInit_"))
			ptrvec_push(b->a, &named, arena_strdup(b->a, sym.name));
	}
	e->named = (const char **)named.item;
	e->nnamed = named.n;
}

static void describe_refs(struct builder *b, struct object *o, struct snap_elf *e)
{
	const struct elf_file *ef = &o->elf;
	const struct elf_refs *refs = object_refs(&b->s->objs, o);
	e->refs = arena_calloc(b->a, refs->n ? refs->n : 1, sizeof *e->refs);
	for (size_t i = 0; i < refs->n; i++) {
		const struct elf_symref *r = &refs->ref[i];
		struct elf_sym sym;
		if (!elf_sym(ef, r->symidx, &sym))
			continue;
		struct snap_ref *sr = &e->refs[e->nrefs++];
		sr->name = arena_strdup(b->a, sym.name);
		sr->versym = sym.versym;
		sr->lookup_class = r->lookup_class;
		sr->flags = (uint8_t)((r->deferrable ? SNAP_REF_DEFERRABLE : SNAP_REF_EAGER) |
				      (sym.bind == STB_WEAK_ ? SNAP_REF_WEAK : 0) |
				      (sym.type == STT_TLS_ ? SNAP_REF_TLS : 0));
	}
}

/* The first corrupt table of the object the loader meets on its own (map
 * time, then relocation, then constructors), as a fault record; NULL when
 * none.  Not carried: a load refusal of the program headers, corrupt
 * version tables, and faults that depend on the names other objects look
 * up in this one. */
static const char *loader_fault_of(struct builder *b, struct object *o)
{
	object_check_tables(&b->s->objs, o);
	const struct elf_file *ef = &o->elf;
	struct elf_fault f;
	memset(&f, 0, sizeof f);
	if (ef->dyn_assert) {
		f.phase = FAULT_MAP;
		f.table = "dynamic section";
		f.what = "fails elf_get_dynamic_info's check";
		f.assert_file = "get-dynamic-info.h";
		f.assert_fn = "elf_get_dynamic_info";
		f.assert_expr = ef->dyn_assert;
		f.assert_line = ef->dyn_assert_line;
	} else if (ef->map_fault.phase) {
		f = ef->map_fault;
	} else if (ef->reloc_fault_table) {
		f.phase = FAULT_RELOC;
		f.table = ef->reloc_fault_table;
		f.what = arena_printf(b->a, "reads its relocations at %#llx, outside its memory",
				      (unsigned long long)ef->reloc_fault_at);
		f.signal = 11;
		f.guess = true;
	} else if (ef->relative_assert) {
		f.phase = FAULT_RELOC;
		f.table = "DT_RELA";
		f.what = "finds a relocation that is not R_X86_64_RELATIVE among the first DT_RELACOUNT";
		f.assert_file = "../sysdeps/x86_64/dl-machine.h";
		f.assert_fn = "elf_machine_rela_relative";
		f.assert_expr = "ELFW(R_TYPE) (reloc->r_info) == R_X86_64_RELATIVE";
		f.assert_line = 487;
	} else if (object_refs(&b->s->objs, o)->stop_now.set) {
		f = object_refs(&b->s->objs, o)->stop_now.fault;
	} else if (object_refs(&b->s->objs, o)->self_lookup_fault.phase) {
		f = object_refs(&b->s->objs, o)->self_lookup_fault;
	} else if (ef->init_fault) {
		f.phase = FAULT_RELOC;
		f.table = ef->init_fault;
		f.what = arena_printf(b->a, "calls or reads a constructor at %#llx, outside its code",
				      (unsigned long long)ef->init_fault_at);
		f.signal = 11;
		f.guess = true;
	} else {
		return NULL;
	}
	return elf_fault_encode(b->a, &f);
}

static const char **copy_strings(struct arena *a, const char *const *in, size_t n)
{
	const char **out = arena_calloc(a, n ? n : 1, sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i] = arena_strdup(a, in[i]);
	return out;
}

static const char *dup_or_null(struct arena *a, const char *s)
{
	return s ? arena_strdup(a, s) : NULL;
}

/* An object of the loader's class and machine, by its facts; else false. */
static bool describe_elf(struct builder *b, struct snap_file *sf, const char *path, bool partial)
{
	struct diag d;
	diag_clear(&d);
	struct object *o = objcache_get(&b->s->objs, path, &d);
	if (!o || o->kind != OBJ_ELF || !o->elf_ok)
		return false;
	const struct elf_file *ef = &o->elf;
	if (!ef->is64 || ef->machine != b->f->machine || !ef->has_dynamic)
		return false;
	struct snap_elf *e = arena_calloc(b->a, 1, sizeof *e);
	e->big_endian = ef->big_endian;
	e->machine = ef->machine;
	e->type = ef->type;
	e->osabi = ef->osabi;
	e->abiversion = ef->abiversion;
	e->e_flags = ef->flags;
	e->dt_flags = ef->dt_flags;
	e->dt_flags_1 = ef->dt_flags_1;
	e->bind_now = ef->dt_bind_now;
	e->has_gnu_stack = ef->has_gnu_stack;
	e->stack_flags = ef->gnu_stack_flags;
	if (ef->has_tls) {
		e->tls_memsz = ef->tls_memsz;
		e->tls_align = ef->tls_align;
	}
	e->soname = dup_or_null(b->a, ef->soname);
	e->rpath = dup_or_null(b->a, ef->rpath);
	e->runpath = dup_or_null(b->a, ef->runpath);
	e->interp = dup_or_null(b->a, ef->interp);
	e->needed = copy_strings(b->a, ef->needed, ef->nneeded);
	e->nneeded = ef->nneeded;
	e->filter = copy_strings(b->a, ef->filter, ef->nfilter);
	e->nfilter = ef->nfilter;
	e->auxiliary = copy_strings(b->a, ef->auxiliary, ef->nauxiliary);
	e->nauxiliary = ef->nauxiliary;
	e->verdef = arena_calloc(b->a, ef->nverdef ? ef->nverdef : 1, sizeof *e->verdef);
	for (size_t i = 0; i < ef->nverdef; i++) {
		e->verdef[i].ndx = ef->verdef[i].ndx;
		e->verdef[i].flags = ef->verdef[i].flags;
		e->verdef[i].name = dup_or_null(b->a, ef->verdef[i].name);
	}
	e->nverdef = ef->nverdef;
	e->verneed = arena_calloc(b->a, ef->nverneed ? ef->nverneed : 1, sizeof *e->verneed);
	for (size_t i = 0; i < ef->nverneed; i++) {
		const struct elf_verneed *vn = &ef->verneed[i];
		struct snap_verneed *sv = &e->verneed[i];
		sv->file = dup_or_null(b->a, vn->file);
		sv->aux = arena_calloc(b->a, vn->naux ? vn->naux : 1, sizeof *sv->aux);
		for (size_t j = 0; j < vn->naux; j++) {
			sv->aux[j].name = dup_or_null(b->a, vn->aux[j].name);
			sv->aux[j].flags = vn->aux[j].flags;
			sv->aux[j].other = vn->aux[j].other;
		}
		sv->naux = vn->naux;
	}
	e->nverneed = ef->nverneed;
	e->partial = partial;
	e->cache_only = partial || b->from_cache;
	size_t nhead = MIN(o->map.len, (size_t)64);
	uint8_t *head = arena_alloc(b->a, nhead ? nhead : 1);
	memcpy(head, o->map.data, nhead);
	e->head = head;
	e->nhead = nhead;
	e->loader_fault = loader_fault_of(b, o);
	if (!partial) {
		describe_exports(b, ef, e, b->names);
		describe_refs(b, o, e);
		const struct cuda_code *k = cuda_code_of(&b->cuda, o);
		if (k && cuda_code_has_device_code(k))
			e->cuda = cuda_targets_string(b->a, k, 0);
		if (k && k->runtime_major)
			e->cuda_runtime = (int)k->runtime_major;
	}
	sf->type = SNAP_ELF;
	sf->elf = e;
	sf->size = o->map.len;
	sf->bytes = NULL;
	sf->nbytes = 0;
	return true;
}

struct lister {
	struct builder *b;
	const char *dir;
	struct ptrvec names;
};

static bool list_one(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct lister *l = ctx;
	struct builder *b = l->b;
	char child[PATH_MAX * 2];
	snprintf(child, sizeof child, "%s/%s", str_eq(l->dir, "/") ? "" : l->dir, name);
	if (kind == FS_OTHER && !is_link) {
		/* a FIFO, socket or device: the snapshot has no such files, and
		 * the mount would make an empty regular file of the name (which
		 * the loader calls "file too short" where here it would block) */
		struct fs_stat st;
		fs_stat(&b->s->fs, child, &st);
		if (st.kind != FS_REGULAR && st.kind != FS_DIR)
			return true;
		kind = st.kind;
	}
	if (is_link) {
		char target[PATH_MAX];
		if (fs_readlink(&b->s->fs, child, target, sizeof target)) {
			struct snap_file *lf = file_at(b, child, SNAP_LINK);
			lf->type = SNAP_LINK;
			lf->target = arena_strdup(b->a, target);
		}
	}
	ptrvec_push(b->a, &l->names, arena_printf(b->a, "%s%s", name, kind == FS_DIR && !is_link ? "/" : ""));
	return true;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void add_dir(struct builder *b, struct ptrvec *v, const char *dir)
{
	if (!dir)
		return;
	ptrvec_push(b->a, v, (void *)dir);
	char canon[PATH_MAX];
	int err;
	if (fs_realpath(&b->s->fs, dir, canon, sizeof canon, &err))
		ptrvec_push(b->a, v, arena_strdup(b->a, canon));
}

/* The environment's site directories and root, as named and canonical. */
static void set_tree(struct builder *b, const struct pyenv *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nsite; i++)
		add_dir(b, &b->site, e->site[i]);
	add_dir(b, &b->tree, e->root);
	for (size_t i = 0; i < b->site.n; i++)
		ptrvec_push(b->a, &b->tree, b->site.item[i]);
	/* the interpreter's wrapper and version file: what the env runs */
	for (size_t i = 0; i < e->npython_files; i++)
		add_dir(b, &b->tree, e->python_files[i]);
}

static bool under_any(const struct ptrvec *dirs, const char *path)
{
	for (size_t i = 0; i < dirs->n; i++)
		if (path_under(path, dirs->item[i]))
			return true;
	return false;
}

static void describe(struct builder *b, const char *logical, unsigned want)
{
	char path[PATH_MAX];
	if (!resolve_recording(b, logical, path, sizeof path, 0))
		return;
	/* The kernel's files describe this process and machine, never a
	 * package: /proc/self/environ would carry our own secrets. */
	if (fs_on_pseudo_fs(&b->s->fs, path))
		return;
	/* The content of a text file travels only when the file is in the
	 * environment (its root and site directories, as named or resolved):
	 * a METADATA linked to ~/.netrc, a module a crafted relative import
	 * reaches above the environment, any file outside it is kept as its
	 * head (what it is), never as its text.  (Binaries outside, such as the
	 * interpreter a venv links to and the system's libraries, are
	 * described by design: their tables, not their bytes.) */
	if ((want & WANT_TEXT) && !under_any(&b->tree, path))
		want &= ~(unsigned)WANT_TEXT;
	struct fs_stat st;
	fs_stat(&b->s->fs, path, &st);
	if (st.kind == FS_DIR) {
		struct snap_file *sf = file_at(b, path, SNAP_DIR);
		if (sf->type != SNAP_DIR || !(want & WANT_LIST) || sf->listed)
			return;
		struct lister l = { b, sf->path, { 0 } };
		if (fs_list_dir(&b->s->fs, path, list_one, &l)) {
			sf->children = (const char **)l.names.item;
			sf->nchildren = l.names.n;
			sf->listed = true;
		}
		return;
	}
	if (st.kind != FS_REGULAR)
		return;
	struct snap_file *sf = file_at(b, path, SNAP_HEAD);
	struct snap_file *first = idmap_get(&b->inodes, st.dev, st.ino);
	if (!first) {
		idmap_put(b->a, &b->inodes, st.dev, st.ino, sf);
	} else if (first != sf) {
		/* a hard link: one file, so one description, and the loader's
		 * same-file check must see one inode */
		sf->type = SNAP_SAME;
		sf->target = first->path;
		describe(b, first->path, want);
		return;
	}
	if (sf->type == SNAP_ELF && !(sf->elf->partial && (want & WANT_ELF)))
		return;
	if ((want & (WANT_ELF | WANT_PARTIAL)) && describe_elf(b, sf, path, !(want & WANT_ELF)))
		return;
	if (sf->type == SNAP_ELF)
		return;
	if ((want & WANT_TEXT) && sf->type != SNAP_TEXT && describe_text(b, sf, path))
		return;
	if (sf->type == SNAP_HEAD && !sf->nbytes)
		describe_head(b, sf, path);
}

static unsigned want_of(uintptr_t bits)
{
	unsigned w = WANT_HEAD;
	if (bits & (1u << FS_ACC_MAP))
		w |= WANT_ELF;
	if (bits & (1u << FS_ACC_READ))
		w |= WANT_TEXT;
	if (bits & (1u << FS_ACC_LIST))
		w |= WANT_LIST;
	return w;
}

static void copy_facts(struct builder *b, const struct ldso_facts *f)
{
	struct snapshot *snap = b->snap;
	struct arena *a = b->a;
	snap->interp = arena_strdup(a, f->interp);
	snap->glibc_major = f->glibc_major;
	snap->glibc_minor = f->glibc_minor;
	snap->system_dirs = copy_strings(a, f->system_dirs, f->nsystem_dirs);
	snap->nsystem_dirs = f->nsystem_dirs;
	snap->dst_lib = dup_or_null(a, f->dst_lib);
	snap->platform = dup_or_null(a, f->platform);
	snap->capstr = copy_strings(a, f->capstr, f->ncapstr);
	snap->ncapstr = f->ncapstr;
	snap->hwcaps_active = copy_strings(a, f->hwcaps_active, f->nhwcaps_active);
	snap->nhwcaps_active = f->nhwcaps_active;
	snap->isa_1 = f->isa_1;
	snap->machine = f->machine;
	snap->cache_path = dup_or_null(a, f->cache_path);
	snap->has_cache = f->has_cache;
	snap->cache_query = f->cache_query;
	snap->cache_query.hwcaps_priority = NULL;
	snap->cache_query.ctx = NULL;
	if (f->has_cache) {
		const struct ldcache *c = &f->cache;
		snap->cache = arena_calloc(a, c->nentry ? c->nentry : 1, sizeof *snap->cache);
		for (size_t i = 0; i < c->nentry; i++) {
			snap->cache[i].flags = c->entry[i].flags;
			snap->cache[i].key = arena_strdup(a, c->entry[i].key);
			snap->cache[i].value = arena_strdup(a, c->entry[i].value);
			snap->cache[i].hwcap = c->entry[i].hwcap;
		}
		snap->ncache = c->nentry;
		snap->cache_generator = dup_or_null(a, c->generator);
		snap->cache_hwcaps = copy_strings(a, c->hwcaps_names, c->nhwcaps);
		snap->ncache_hwcaps = c->nhwcaps;
	}
	snap->notes = copy_strings(a, (const char *const *)f->notes.item, f->notes.n);
	snap->nnotes = f->notes.n;
}

/* The running system's name is the kernel's (what `hostname` prints):
 * /etc/hostname is only what the image was given, and nodes cloned from
 * one image, or renamed at boot, all carry the same one.  Under --root
 * there is no running system to ask. */
static const char *hostname_of(struct scan *s)
{
	struct utsname u;
	if (!fs_is_rooted(&s->fs) && uname(&u) == 0 && u.nodename[0])
		return arena_strdup(&s->arena, u.nodename);
	char *text = NULL;
	size_t len = 0;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(&s->fs, "/etc/hostname", 256, &text, &len, &d) != ST_OK)
		return NULL;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	const char *h = len ? arena_strndup(&s->arena, text, len) : NULL;
	free(text);
	return h;
}

/* The top-level package of a path under one of the site directories, or "". */
static const char *package_of(struct arena *a, const struct pyenv *e, const char *path)
{
	for (size_t i = 0; e && i < e->nsite; i++) {
		size_t n = strlen(e->site[i]);
		if (strncmp(path, e->site[i], n) == 0 && path[n] == '/') {
			const char *rel = path + n + 1;
			const char *slash = strchr(rel, '/');
			return slash ? arena_strndup(a, rel, (size_t)(slash - rel)) : rel;
		}
	}
	return "";
}

/*
 * Without --names, the names of the exports of the environment's libraries
 * that objects of another package need (torch/lib/libc10.so, needed by an
 * extension): what another host's binaries bind against, and what the C++
 * explanation of a near miss compares with.  Library-internal exports stay
 * hashes (docs/snapshot.md has the sizes).
 */
static void name_bound_exports(struct builder *b, const struct pyenv *env)
{
	struct strmap needers;	/* NEEDED name -> "package" of the first needer, or "*" for several */
	memset(&needers, 0, sizeof needers);
	for (size_t i = 0; i < b->files.n; i++) {
		const struct snap_file *sf = b->files.item[i];
		if (sf->type != SNAP_ELF || !sf->elf)
			continue;
		const char *pkg = package_of(b->a, env, sf->path);
		for (size_t k = 0; k < sf->elf->nneeded; k++) {
			const char *had = strmap_get(&needers, sf->elf->needed[k]);
			if (!had)
				strmap_put(b->a, &needers, sf->elf->needed[k], (void *)pkg);
			else if (!str_eq(had, pkg))
				strmap_put(b->a, &needers, sf->elf->needed[k], (void *)"*");
		}
	}
	for (size_t i = 0; i < b->files.n; i++) {
		struct snap_file *sf = b->files.item[i];
		if (sf->type != SNAP_ELF || !sf->elf || sf->elf->partial || sf->elf->export_names)
			continue;
		const char *pkg = package_of(b->a, env, sf->path);
		if (!pkg[0])
			continue;	/* the system's libraries: bound by hash */
		const char *by = sf->elf->soname ? strmap_get(&needers, sf->elf->soname) : NULL;
		if (!by)
			by = strmap_get(&needers, path_basename(sf->path));
		if (!by || str_eq(by, pkg))
			continue;
		struct diag d;
		diag_clear(&d);
		struct object *o = objcache_get(&b->s->objs, sf->path, &d);
		if (o && o->kind == OBJ_ELF && o->elf_ok)
			describe_exports(b, &o->elf, sf->elf, true);
	}
}

enum status snapshot_build(struct scan *s, const struct snap_recorder *r, const struct ldso_facts *f,
			   const struct snapshot_options *o, struct snapshot *snap, struct diag *d)
{
	(void)d;
	memset(snap, 0, sizeof *snap);
	struct builder b;
	memset(&b, 0, sizeof b);
	b.s = s;
	b.a = &s->arena;
	b.snap = snap;
	b.f = f;
	b.names = o->names;
	cuda_ctx_init(&b.cuda, s, FATBIN_SCAN_REGISTERED);
	snap->version = SNAPSHOT_VERSION;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	snap->created = arena_strdup(b.a, when);
	snap->hostname = hostname_of(s);
	snap->label = o->label ? arena_strdup(b.a, o->label) : snap->hostname;
	struct utsname u;
	if (!fs_is_rooted(&s->fs) && uname(&u) == 0) {
		snap->kernel = arena_strdup(b.a, u.release);
		snap->uname_machine = arena_strdup(b.a, u.machine);
	}
	copy_facts(&b, f);

	set_tree(&b, o->env);
	/* the loader and what the analysis touched */
	describe(&b, f->interp, WANT_ELF);
	for (size_t i = 0; i < r->order.n; i++) {
		const char *p = r->order.item[i];
		describe(&b, p, want_of((uintptr_t)strmap_get(&r->use, p)));
	}
	/* what the loader could meet for other binaries */
	b.from_cache = true;
	for (size_t i = 0; i < snap->ncache; i++)
		describe(&b, snap->cache[i].value, o->full ? WANT_ELF : WANT_PARTIAL);
	b.from_cache = false;
	for (size_t i = 0; i < f->nsystem_dirs; i++)
		describe(&b, f->system_dirs[i], 0);

	/* the environment */
	const struct pyenv *e = o->env;
	if (e) {
		snap->env_kind = pyenv_kind_name(e->kind);
		snap->env_root = dup_or_null(b.a, e->root);
		snap->python = dup_or_null(b.a, e->python);
		snap->ext_suffix = dup_or_null(b.a, e->ext_suffix);
		snap->py_major = e->py_major;
		snap->py_minor = e->py_minor;
		snap->site = copy_strings(b.a, e->site, e->nsite);
		snap->nsite = e->nsite;
	}
	snap->torch_version = dup_or_null(b.a, o->torch_version);
	snap->torch_cuda = dup_or_null(b.a, o->torch_cuda);
	if (o->dists) {
		snap->dists = arena_calloc(b.a, o->dists->n ? o->dists->n : 1, sizeof *snap->dists);
		for (size_t i = 0; i < o->dists->n; i++) {
			const struct dist *ds = o->dists->item[i];
			struct snap_dist *sd = &snap->dists[snap->ndists++];
			sd->name = dup_or_null(b.a, ds->name);
			sd->version = dup_or_null(b.a, ds->version);
			sd->installer = dup_or_null(b.a, ds->installer);
			sd->meta = dup_or_null(b.a, ds->meta);
		}
	}
	snap->driver = dup_or_null(b.a, o->driver);
	snap->driver_cuda = o->driver_cuda;
	if (o->ngpus) {
		snap->gpus = arena_calloc(b.a, o->ngpus, sizeof *snap->gpus);
		for (size_t i = 0; i < o->ngpus; i++) {
			snap->gpus[i].cc = o->gpus[i].cc;
			snap->gpus[i].name = dup_or_null(b.a, o->gpus[i].name);
		}
		snap->ngpus = o->ngpus;
	}

	if (!o->names && o->env)
		name_bound_exports(&b, o->env);
	snap->files = arena_calloc(b.a, b.files.n ? b.files.n : 1, sizeof *snap->files);
	for (size_t i = 0; i < b.files.n; i++)
		snap->files[i] = *(struct snap_file *)b.files.item[i];
	snap->nfiles = b.files.n;
	/* by_path must point into files[] */
	memset(&snap->by_path, 0, sizeof snap->by_path);
	for (size_t i = 0; i < snap->nfiles; i++)
		strmap_put(b.a, &snap->by_path, snap->files[i].path, &snap->files[i]);
	return ST_OK;
}
