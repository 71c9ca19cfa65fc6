/*
 * mount.c: a snapshot as the file system and the loader of a scan.
 *
 * Every described path becomes a vfs node: links stay links, folders list
 * the entries recorded, text files hold their bytes, probed files their
 * first bytes (the loader only ever reads those), and ELF objects are
 * synthesised (synth.c) the first time anything maps or probes them.  The
 * loader facts recorded replace those abiscope would read from this
 * machine's loader and CPU.
 */
#include "host/snapshot.h"

#include <errno.h>

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

struct lazy_elf {
	const struct snap_elf *e;
	struct arena *a;
};

static enum status load_elf(void *ctx, struct vfs_node *n, struct diag *d)
{
	struct lazy_elf *l = ctx;
	const uint8_t *data;
	size_t len;
	enum status st = snapshot_synth_elf(l->a, l->e, n->path, &data, &len, d);
	if (st != ST_OK)
		return st;
	n->data = data;
	n->len = len;
	return ST_OK;
}

void snapshot_mount(struct scan *s, struct snapshot *snap)
{
	struct arena *a = &s->arena;
	struct vfs *v = arena_calloc(a, 1, sizeof *v);
	vfs_init(v, a, true);
	for (size_t i = 0; i < snap->nfiles; i++) {
		const struct snap_file *f = &snap->files[i];
		if (str_eq(f->path, "/"))
			continue;
		switch (f->type) {
		case SNAP_SAME:
			break;	/* below, once their targets exist */
		case SNAP_LINK:
			vfs_add_link(v, f->path, f->target);
			break;
		case SNAP_DIR:
			vfs_add_dir(v, f->path);
			break;
		case SNAP_TEXT:
		case SNAP_HEAD: {
			struct vfs_node *n = vfs_add_file(v, f->path, f->bytes ? f->bytes : (const uint8_t *)"",
							  f->nbytes);
			n->size = f->size;
			break;
		}
		case SNAP_ELF: {
			if (!f->elf)
				break;
			struct lazy_elf *l = arena_alloc(a, sizeof *l);
			l->e = f->elf;
			l->a = a;
			/* the size is known only once built: 0 until then */
			struct vfs_node *n = vfs_add_lazy(v, f->path, 0, load_elf, l);
			n->size = f->size;
			n->head = f->elf->head;
			n->head_len = f->elf->nhead;
			break;
		}
		}
	}
	for (size_t i = 0; i < snap->nfiles; i++)
		if (snap->files[i].type == SNAP_SAME)
			vfs_add_same(v, snap->files[i].path, snap->files[i].target);
	/* listed folders: entries never looked at become empty files/folders,
	 * so that listings are complete; described ones are already there */
	for (size_t i = 0; i < snap->nfiles; i++) {
		const struct snap_file *f = &snap->files[i];
		if (f->type != SNAP_DIR || !f->listed)
			continue;
		for (size_t k = 0; k < f->nchildren; k++) {
			char child[PATH_MAX * 2];
			const char *name = f->children[k];
			size_t n = strlen(name);
			bool dir = n > 1 && name[n - 1] == '/';
			snprintf(child, sizeof child, "%s/%.*s", str_eq(f->path, "/") ? "" : f->path,
				 (int)(dir ? n - 1 : n), name);
			if (strmap_get(&v->nodes, child))
				continue;
			if (dir)
				vfs_add_dir(v, child);
			else
				vfs_add_file(v, child, (const uint8_t *)"", 0);
		}
	}
	s->fs.vfs = v;
	snprintf(s->fs.cwd, sizeof s->fs.cwd, "/");
	struct ldso_facts *f = arena_calloc(a, 1, sizeof *f);
	snapshot_facts(a, snap, f);
	s->objs.preset_facts = f;
	/* the described machine's kernel, not this one's: objects are parsed
	 * with its page size (an old snapshot: assumed, and noted) */
	s->objs.given.machine = snap->machine;
	if (snap->page_size)	/* else --page-size, if given, stands */
		s->objs.given.page_size = snap->page_size;
	if (snap->hwcap_known) {
		s->objs.given.hwcap_set = true;
		s->objs.given.hwcap = snap->hwcap;
		s->objs.given.hwcap2 = snap->hwcap2;
	}
}

static uint32_t hwcaps_priority(void *ctx, const char *name)
{
	const struct ldso_facts *f = ctx;
	for (size_t i = 0; i < f->nhwcaps_active; i++)
		if (str_eq(f->hwcaps_active[i], name))
			return (uint32_t)(i + 1);
	return 0;
}

void snapshot_facts(struct arena *a, const struct snapshot *snap, struct ldso_facts *f)
{
	memset(f, 0, sizeof *f);
	f->interp = snap->interp;
	f->interp_read = true;
	f->machine = snap->machine;
	f->is64 = true;
	f->glibc_major = snap->glibc_major;
	f->glibc_minor = snap->glibc_minor;
	f->glibc_banner = arena_printf(a, "glibc %d.%d (from a snapshot)", snap->glibc_major, snap->glibc_minor);
	f->system_dirs = snap->system_dirs;
	f->nsystem_dirs = snap->nsystem_dirs;
	f->dst_lib = snap->dst_lib ? snap->dst_lib : "lib";
	f->platform = snap->platform ? snap->platform : "x86_64";
	f->capstr = snap->capstr;
	f->ncapstr = snap->ncapstr;
	f->hwcaps_active = snap->hwcaps_active;
	f->nhwcaps_active = snap->nhwcaps_active;
	f->isa_1 = snap->isa_1;
	f->hwcap = snap->hwcap;
	f->hwcap2 = snap->hwcap2;
	f->page_size = snap->page_size;	/* 0: ldso_facts_load assumes 4096 */
	f->cache_path = snap->cache_path ? snap->cache_path : "/etc/ld.so.cache";
	f->has_cache = snap->has_cache;
	diag_clear(&f->cache_diag);
	if (snap->has_cache) {
		struct ldcache *c = &f->cache;
		c->new_format = true;
		c->entry = arena_calloc(a, snap->ncache ? snap->ncache : 1, sizeof *c->entry);
		for (size_t i = 0; i < snap->ncache; i++) {
			c->entry[i].flags = snap->cache[i].flags;
			c->entry[i].key = snap->cache[i].key;
			c->entry[i].value = snap->cache[i].value;
			c->entry[i].hwcap = snap->cache[i].hwcap;
		}
		c->nentry = snap->ncache;
		c->generator = snap->cache_generator;
		c->hwcaps_names = snap->cache_hwcaps;
		c->nhwcaps = snap->ncache_hwcaps;
	}
	f->cache_query = snap->cache_query;
	f->cache_query.hwcaps_priority = hwcaps_priority;
	f->cache_query.ctx = f;
	for (size_t i = 0; i < snap->nnotes; i++)
		ptrvec_push(a, &f->notes, (void *)snap->notes[i]);
}

/* ---- files of this machine placed into the described host ---- */

#define OVERLAY_MAX_FILES 100000

struct real_file {
	const char *path;
};

static enum status load_real(void *ctx, struct vfs_node *n, struct diag *d)
{
	const struct real_file *rf = ctx;
	struct fsview host;
	fs_init(&host, NULL);
	struct mapped_file mf;
	enum status st = fs_map(&host, rf->path, &mf, d);
	if (st != ST_OK)
		return st;
	n->data = mf.data ? mf.data : (const uint8_t *)"";
	n->len = mf.len;
	return ST_OK;	/* the mapping lives as long as the process */
}

static enum status overlay_one(struct scan *s, const char *real_path, const char *logical, size_t *count,
			       struct diag *d)
{
	struct stat st;
	if (stat(real_path, &st) != 0)
		return diag_errno(d, real_path, errno, "cannot open");
	if (++*count > OVERLAY_MAX_FILES)
		return diag_set(d, ST_LIMIT, real_path, DIAG_NO_OFFSET, "more than %d files to place", OVERLAY_MAX_FILES);
	if (S_ISREG(st.st_mode)) {
		struct real_file *rf = arena_alloc(&s->arena, sizeof *rf);
		rf->path = arena_strdup(&s->arena, real_path);
		struct vfs_node *n = vfs_add_lazy(s->fs.vfs, logical, 0, load_real, rf);
		n->size = (uint64_t)st.st_size;
		return ST_OK;
	}
	if (!S_ISDIR(st.st_mode))
		return ST_OK;
	vfs_add_dir(s->fs.vfs, logical);
	DIR *dir = opendir(real_path);
	if (!dir)
		return diag_errno(d, real_path, errno, "cannot list");
	enum status rc = ST_OK;
	struct dirent *de;
	while (rc == ST_OK && (de = readdir(dir)) != NULL) {
		if (str_eq(de->d_name, ".") || str_eq(de->d_name, ".."))
			continue;
		char rp[PATH_MAX], lp[PATH_MAX];
		snprintf(rp, sizeof rp, "%s/%s", real_path, de->d_name);
		snprintf(lp, sizeof lp, "%s/%s", logical, de->d_name);
		rc = overlay_one(s, rp, lp, count, d);
	}
	closedir(dir);
	return rc;
}

enum status snapshot_overlay(struct scan *s, const char *real_path, const char *logical_path, struct diag *d)
{
	if (!s->fs.vfs)
		return diag_set(d, ST_UNSUPPORTED, real_path, DIAG_NO_OFFSET, "no snapshot mounted");
	size_t count = 0;
	return overlay_one(s, real_path, logical_path, &count, d);
}
