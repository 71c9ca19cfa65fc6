#include "pyenv/inventory.h"

#include <errno.h>
#include "elf/symtab.h"

#include <limits.h>

#define MAX_WALK_DEPTH 40
/* A folder a .pth file adds to sys.path is listed only as far as Python
 * could import from it, and at most this many folders of it: a .pth naming
 * / or a home folder is rarely meant, and never a reason to read a disk. */
#define MAX_PTH_WALK_DIRS 4096

bool object_is_extension(const struct object *o, const char *stem)
{
	if (!stem || o->kind != OBJ_ELF || !o->elf_ok)
		return false;
	char name[512];
	snprintf(name, sizeof name, "PyInit_%s", stem);
	struct elf_hash_iter it;
	uint32_t idx;
	elf_hash_iter_init(&it, &o->elf, name, elf_gnu_hash(name), elf_sysv_hash(name));
	while (elf_hash_iter_next(&it, &idx)) {
		struct elf_sym sym;
		if (elf_sym(&o->elf, idx, &sym) && sym.shndx != SHN_UNDEF_ && str_eq(sym.name, name))
			return true;
	}
	return false;
}

bool inventory_module_file(const struct pyenv *e, const char *name)
{
	return (e->ext_suffix && str_ends(name, e->ext_suffix)) || str_ends(name, ".abi3.so") ||
	       (e->kind == PYENV_PLAIN && str_ends(name, ".so"));
}

static bool shared_object_name(const char *name)
{
	if (str_ends(name, ".so"))
		return true;
	const char *so = strstr(name, ".so.");
	if (!so)
		return false;
	for (const char *p = so + 4; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.'))
			return false;
	return true;
}

static void index_name(struct scan *s, struct inventory *inv, const char *name, struct inv_obj *io)
{
	struct ptrvec *v = strmap_get(&inv->by_name, name);
	if (!v) {
		v = arena_alloc(&s->arena, sizeof *v);
		strmap_put(&s->arena, &inv->by_name, arena_strdup(&s->arena, name), v);
	}
	if (!ptrvec_contains(v, io))
		ptrvec_push(&s->arena, v, io);
}

struct walker {
	struct scan *s;
	struct inventory *inv;
	const struct pyenv *e;
	const char *site;	/* site directory being walked, or NULL */
	bool stdlib;
	bool importable_only;	/* a .pth's folder: only what Python could import from it */
	size_t dirs_left;	/* ... and at most this many more folders of it */
	bool stopped;
	struct ptrvec objs;	/* inv_obj * */
	struct strmap seen;	/* object pointer (as text) -> inv_obj */
};

static void note_broken(struct walker *w, const char *path, const char *why)
{
	struct inv_broken *b = arena_alloc(&w->s->arena, sizeof *b);
	b->path = path;
	b->why = why;
	ptrvec_push(&w->s->arena, &w->inv->broken, b);
}

static void consider_file(struct walker *w, const char *path, const char *name)
{
	struct scan *s = w->s;
	w->inv->files_seen++;
	if (!shared_object_name(name))
		return;
	struct diag d;
	diag_clear(&d);
	struct object *o = objcache_get(&s->objs, path, &d);
	if (!o) {
		ptrvec_push(&s->arena, &w->inv->unreadable, arena_printf(&s->arena, "%s: %s", path, d.msg));
		note_broken(w, path, arena_strdup(&s->arena, d.msg));
		return;
	}
	if (o->kind == OBJ_UNREADABLE) {
		ptrvec_push(&s->arena, &w->inv->unreadable,
			    arena_printf(&s->arena, "%s: %s", path, o->diag.msg));
		note_broken(w, path, arena_strdup(&s->arena, o->diag.msg));
		return;
	}
	if (o->kind != OBJ_ELF && !inventory_module_file(w->e, name))
		return;
	const char *stem = pyenv_module_stem(&s->arena, name);
	/* a module Python can import: under a site directory only by a dotted
	 * name of identifiers (not from .cache/ or not-a-pkg/) */
	const char *module = w->site ? pyenv_module_name(s, w->e, path, NULL) : stem;
	if (w->importable_only && !module)
		return;
	char key[32];
	snprintf(key, sizeof key, "%p", (void *)o);
	struct inv_obj *io = strmap_get(&w->seen, key);
	if (io) {
		/* the same file again (a symlink): only its name is new */
		index_name(s, w->inv, name, io);
		return;
	}
	io = arena_alloc(&s->arena, sizeof *io);
	io->path = arena_strdup(&s->arena, path);
	io->obj = o;
	io->site = w->site;
	io->in_stdlib = w->stdlib;
	if (w->site) {
		const char *rel = path + strlen(w->site) + 1;
		const char *slash = strchr(rel, '/');
		io->package = slash ? arena_strndup(&s->arena, rel, (size_t)(slash - rel)) : NULL;
	}
	if (module && (object_is_extension(o, stem) || o->kind != OBJ_ELF)) {
		io->is_extension = true;
		io->module = module;
	}
	strmap_put(&s->arena, &w->seen, arena_strdup(&s->arena, key), io);
	ptrvec_push(&s->arena, &w->objs, io);
	index_name(s, w->inv, name, io);
	if (o->elf_ok && o->elf.soname)
		index_name(s, w->inv, o->elf.soname, io);
	object_forget_all(o);	/* a site's objects, all mapped at once, would stay resident */
}

struct dir_ctx {
	struct walker *w;
	const char *dir;
	int depth;
	struct ptrvec subdirs;
	struct ptrvec files;
};

/* Why a file named like an extension module is none Python can import. */
static const char *broken_reason(enum fs_kind kind, int err, bool is_link)
{
	switch (kind) {
	case FS_FIFO: return "a FIFO, not a file (the loader would block opening it)";
	case FS_SOCKET: return "a socket, not a file";
	case FS_DEVICE: return "a device, not a file";
	case FS_DIR: return "a directory, not a file";
	case FS_MISSING:
		return err == ELOOP ? "a loop of symbolic links"
		       : err == ENAMETOOLONG ? "its path is longer than PATH_MAX"
		       : err == EACCES ? "cannot be opened: permission denied"
		       : is_link ? "a dangling symbolic link" : strerror(err);
	default: return "not a regular file";
	}
}

static bool list_entry(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct dir_ctx *c = ctx;
	struct scan *s = c->w->s;
	if (kind == FS_REGULAR && !is_link && !shared_object_name(name)) {
		c->w->inv->files_seen++;	/* counted, not kept: most of a site's files */
		return true;
	}
	const char *path = arena_join(&s->arena, c->dir, "/", name);
	int err = 0;
	if (kind == FS_OTHER || is_link || (kind == FS_DIR && shared_object_name(name))) {
		struct fs_stat st;
		fs_stat(&s->fs, path, &st);
		kind = st.kind;
		err = st.err;
		if (kind != FS_REGULAR && shared_object_name(name))
			note_broken(c->w, path, broken_reason(kind, err, is_link));
		if (is_link && kind == FS_DIR)
			return true;	/* never follow links to directories: no cycles */
	}
	if (kind == FS_DIR) {
		if (str_eq(name, "__pycache__") || str_ends(name, ".dist-info") || str_ends(name, ".egg-info"))
			return true;
		if (c->w->importable_only && !pyenv_identifier(name))
			return true;	/* Python imports nothing from here */
		ptrvec_push(&s->arena, &c->subdirs, (void *)path);
	} else if (kind == FS_REGULAR) {
		ptrvec_push(&s->arena, &c->files, (void *)path);
	}
	return true;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is dir walked on its own: a site directory, or the environment (a .pth
 * naming an ancestor must not walk them again), or not files at all. */
static bool walked_apart(struct walker *w, const char *dir)
{
	if (fs_on_pseudo_fs(&w->s->fs, dir))
		return true;
	if (w->e->root && str_eq(dir, w->e->root))
		return true;
	for (size_t i = 0; i < w->e->nsite; i++)
		if (w->e->site[i] != w->site && str_eq(dir, w->e->site[i]))
			return true;
	return false;
}

static void walk(struct walker *w, const char *dir, int depth)
{
	if (depth > MAX_WALK_DEPTH)
		return;
	if (w->importable_only) {
		if (depth > 0 && walked_apart(w, dir))
			return;
		if (!w->dirs_left) {
			if (!w->stopped)
				ptrvec_push(&w->s->arena, &w->inv->notes,
					    arena_printf(&w->s->arena, "%s (a .pth file adds it to sys.path): abiscope "
									"stopped listing it after %d folders; its modules "
									"past them are not judged", w->site,
						         MAX_PTH_WALK_DIRS));
			w->stopped = true;
			return;
		}
		w->dirs_left--;
	}
	struct dir_ctx c = { w, dir, depth, { 0 }, { 0 } };
	if (!fs_list_dir(&w->s->fs, dir, list_entry, &c))
		return;
	w->inv->dirs_seen++;
	/* sorted, so reports and "first copy" are the same on every run */
	if (c.files.n > 1)
		sort_items(c.files.item, c.files.n, sizeof(void *), cmp_path);
	if (c.subdirs.n > 1)
		sort_items(c.subdirs.item, c.subdirs.n, sizeof(void *), cmp_path);
	for (size_t i = 0; i < c.files.n; i++)
		consider_file(w, c.files.item[i], path_basename(c.files.item[i]));
	for (size_t i = 0; i < c.subdirs.n; i++)
		walk(w, c.subdirs.item[i], depth + 1);
}

void inventory_build(struct scan *s, const struct pyenv *e, struct inventory *inv)
{
	memset(inv, 0, sizeof *inv);
	inv->env = e;
	struct walker w;
	memset(&w, 0, sizeof w);
	w.s = s;
	w.inv = inv;
	w.e = e;
	if (e->kind == PYENV_PLAIN) {
		struct fs_stat st;
		fs_stat(&s->fs, e->root, &st);
		if (st.kind == FS_DIR)
			walk(&w, e->root, 0);
		else
			consider_file(&w, e->root, path_basename(e->root));
	} else {
		dists_load(s, e, &inv->dists);
		for (size_t i = 0; i < e->nsite; i++) {
			w.site = e->site[i];
			w.importable_only = ptrvec_contains(&e->pth_sites, e->site[i]);
			w.dirs_left = MAX_PTH_WALK_DIRS;
			w.stopped = false;
			walk(&w, e->site[i], 0);
		}
		w.importable_only = false;
		w.site = NULL;
		if (e->libdir) {
			w.site = NULL;
			walk(&w, e->libdir, 0);
		}
		if (e->dynload) {
			w.stdlib = true;
			walk(&w, e->dynload, 0);
			w.stdlib = false;
		}
	}
	inv->obj = (struct inv_obj **)w.objs.item;
	inv->nobj = w.objs.n;
	for (size_t i = 0; i < inv->nobj; i++) {
		char real[PATH_MAX];
		int err;
		struct inv_obj *io = inv->obj[i];
		io->dist = dists_owner(&inv->dists, io->path);
		if (!io->dist && fs_realpath(&s->fs, io->path, real, sizeof real, &err))
			io->dist = dists_owner(&inv->dists, real);
	}
}

const struct ptrvec *inventory_find(const struct inventory *inv, const char *name)
{
	return strmap_get(&inv->by_name, name);
}

struct inv_obj *inventory_entry(const struct inventory *inv, const struct object *o)
{
	for (size_t i = 0; i < inv->nobj; i++)
		if (inv->obj[i]->obj == o)
			return inv->obj[i];
	return NULL;
}
