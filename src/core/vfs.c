#include "core/vfs.h"
#include "core/pathwalk.h"

#include <errno.h>
#include <limits.h>

#define VFS_MAX_LINKS 40

void vfs_init(struct vfs *v, struct arena *a, bool exclusive)
{
	memset(v, 0, sizeof *v);
	v->arena = a;
	v->exclusive = exclusive;
	v->next_ino = 1;
	struct vfs_node *root = arena_alloc(a, sizeof *root);
	root->path = "/";
	root->type = VFS_DIR;
	root->ino = v->next_ino++;
	root->mode = 0755;
	strmap_put(a, &v->nodes, root->path, root);
}

static void parent_of(const char *path, char *out, size_t outsz)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		snprintf(out, outsz, "/");
	else
		snprintf(out, outsz, "%.*s", (int)(slash - path), path);
}

static struct vfs_node *ensure_dir(struct vfs *v, const char *path);

static struct vfs_node *add_node(struct vfs *v, const char *path, enum vfs_type type)
{
	struct vfs_node *n = strmap_get(&v->nodes, path);
	if (n && n->type != VFS_HIDDEN) {
		n->type = type;
		return n;
	}
	char parent[PATH_MAX];
	parent_of(path, parent, sizeof parent);
	struct vfs_node *p = ensure_dir(v, parent);
	if (n) {
		/* a file removed and placed again (an upgrade over the same path):
		 * a node of its own again, listed in its folder */
		n->type = type;
		n->ino = v->next_ino++;
		n->mode = type == VFS_DIR ? 0755 : 0644;
		bool listed = false;
		const char *name = strrchr(n->path, '/') + 1;
		for (size_t i = 0; p && i < p->children.n && !listed; i++)
			listed = str_eq(p->children.item[i], name);
		if (p && !listed)
			ptrvec_push(v->arena, &p->children, (void *)name);
		return n;
	}
	n = arena_alloc(v->arena, sizeof *n);
	n->path = arena_strdup(v->arena, path);
	n->type = type;
	n->ino = v->next_ino++;
	n->mode = type == VFS_DIR ? 0755 : 0644;
	strmap_put(v->arena, &v->nodes, n->path, n);
	if (p)
		ptrvec_push(v->arena, &p->children, (void *)(strrchr(n->path, '/') + 1));
	return n;
}

static struct vfs_node *ensure_dir(struct vfs *v, const char *path)
{
	struct vfs_node *n = strmap_get(&v->nodes, path);
	if (n && n->type == VFS_HIDDEN) {
		/* a folder removed and made again (a reinstall): what is added
		 * now is there, the old contents stay hidden one by one */
		n->type = VFS_DIR;
		n->ino = v->next_ino++;
		n->mode = 0755;
	}
	if (n)
		return n;
	return add_node(v, path, VFS_DIR);
}

/* A file placed over another (a copy of this machine's build placed where
 * the snapshot described the host's): nothing of the old file stays, its
 * recorded first bytes least of all (the probe reads those). */
static void forget_contents(struct vfs_node *n)
{
	n->data = NULL;
	n->len = 0;
	n->size = 0;
	n->head = NULL;
	n->head_len = 0;
	n->sized = false;
	n->same = NULL;
	n->load = NULL;
	n->ctx = NULL;
}

struct vfs_node *vfs_add_file(struct vfs *v, const char *path, const uint8_t *data, size_t len)
{
	struct vfs_node *n = add_node(v, path, VFS_FILE);
	forget_contents(n);
	n->data = data;
	n->len = len;
	n->loaded = true;
	return n;
}

struct vfs_node *vfs_add_lazy(struct vfs *v, const char *path, size_t len, vfs_load_fn load, void *ctx)
{
	struct vfs_node *n = add_node(v, path, VFS_FILE);
	forget_contents(n);
	n->len = len;
	n->load = load;
	n->ctx = ctx;
	n->loaded = false;
	return n;
}

struct vfs_node *vfs_add_link(struct vfs *v, const char *path, const char *target)
{
	struct vfs_node *n = add_node(v, path, VFS_LINK);
	n->target = arena_strdup(v->arena, target);
	return n;
}

struct vfs_node *vfs_add_dir(struct vfs *v, const char *path)
{
	return ensure_dir(v, path);
}

struct vfs_node *vfs_add_same(struct vfs *v, const char *path, const char *target)
{
	struct vfs_node *t = strmap_get(&v->nodes, target);
	if (!t || t->type != VFS_FILE || t->same)
		return NULL;
	struct vfs_node *n = add_node(v, path, VFS_FILE);
	n->same = t;
	return n;
}

void vfs_hide(struct vfs *v, const char *path)
{
	struct vfs_node *n = strmap_get(&v->nodes, path);
	if (!n) {
		n = arena_alloc(v->arena, sizeof *n);
		n->path = arena_strdup(v->arena, path);
		strmap_put(v->arena, &v->nodes, n->path, n);
	}
	n->type = VFS_HIDDEN;
}

void vfs_passthrough(struct vfs *v, const char *prefix)
{
	ptrvec_push(v->arena, &v->passthrough, arena_strdup(v->arena, prefix));
}

static bool passthrough(const struct vfs *v, const char *path)
{
	for (size_t i = 0; i < v->passthrough.n; i++) {
		const char *p = v->passthrough.item[i];
		size_t n = strlen(p);
		if (strncmp(path, p, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n && p[n - 1] == '/')))
			return true;
	}
	return false;
}

/* True when a folder above path was hidden (an uninstalled package's). */
static bool hidden_ancestor(const struct vfs *v, const char *path)
{
	char cur[PATH_MAX];
	snprintf(cur, sizeof cur, "%s", path);
	for (;;) {
		char *slash = strrchr(cur, '/');
		if (!slash || slash == cur)
			return false;
		*slash = '\0';
		const struct vfs_node *n = strmap_get(&v->nodes, cur);
		if (n)
			return n->type == VFS_HIDDEN;	/* the nearest node decides */
	}
}

struct vfs_node *vfs_resolve(const struct vfs *v, const char *path, bool follow_last, int *err,
			     bool *handled, char *resolved, size_t rsz)
{
	*handled = false;
	*err = 0;
	if (path[0] != '/')
		return NULL;
	if (!v->exclusive) {
		/* an overlay: only paths it has (after its own links) are its business */
		struct vfs_node *n = strmap_get(&v->nodes, path);
		if (n && n->type == VFS_HIDDEN) {
			*handled = true;
			*err = ENOENT;
			return NULL;
		}
		if (!n && hidden_ancestor(v, path)) {
			*handled = true;
			*err = ENOENT;
			return NULL;
		}
		if (!n || (n->type == VFS_DIR && !n->children.n))
			return NULL;
		if (n->type == VFS_LINK && follow_last) {
			char next[PATH_MAX * 2 + 2];
			if (n->target[0] == '/') {
				snprintf(next, sizeof next, "%s", n->target);
			} else {
				char parent[PATH_MAX];
				parent_of(path, parent, sizeof parent);
				snprintf(next, sizeof next, "%s/%s", str_eq(parent, "/") ? "" : parent, n->target);
			}
			return vfs_resolve(v, next, true, err, handled, resolved, rsz);
		}
		*handled = true;
		if (resolved)
			snprintf(resolved, rsz, "%s", path);
		return n->same ? n->same : n;
	}
	if (passthrough(v, path))
		return NULL;
	*handled = true;
	/* exclusive: walk component by component, following links */
	struct path_walk w;
	path_walk_init(&w, path);
	struct vfs_node *cur = strmap_get(&v->nodes, "/");
	int more;
	while ((more = path_walk_next(&w)) > 0) {
		if (str_eq(w.comp, "..")) {
			char up[PATH_MAX];
			parent_of(w.done, up, sizeof up);
			snprintf(w.done, sizeof w.done, "%s", up);
			cur = strmap_get(&v->nodes, w.done);
			continue;
		}
		char cand[PATH_MAX + NAME_MAX + 2];
		snprintf(cand, sizeof cand, "%s/%s", str_eq(w.done, "/") ? "" : w.done, w.comp);
		struct vfs_node *nd = strmap_get(&v->nodes, cand);
		if (!nd || nd->type == VFS_HIDDEN) {
			*err = ENOENT;
			return NULL;
		}
		if (nd->type == VFS_LINK && (!w.last || follow_last)) {
			if (++w.links > VFS_MAX_LINKS) {
				*err = ELOOP;
				return NULL;
			}
			path_walk_link(&w, nd->target);
			continue;
		}
		if (!w.last && nd->type != VFS_DIR) {
			*err = ENOTDIR;
			return NULL;
		}
		if (strlen(cand) >= sizeof w.done) {
			*err = ENAMETOOLONG;
			return NULL;
		}
		memcpy(w.done, cand, strlen(cand) + 1);
		cur = nd;
	}
	if (more < 0) {
		*err = ENAMETOOLONG;
		return NULL;
	}
	if (resolved)
		snprintf(resolved, rsz, "%s", w.done);
	return cur && cur->same ? cur->same : cur;
}

enum status vfs_data(struct vfs_node *n, struct diag *d)
{
	if (n->loaded)
		return ST_OK;
	if (!n->load)
		return diag_set(d, ST_IO, n->path, DIAG_NO_OFFSET, "no data");
	enum status st = n->load(n->ctx, n, d);
	if (st == ST_OK)
		n->loaded = true;
	return st;
}
