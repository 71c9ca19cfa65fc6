/*
 * vfs.h: files that are described rather than on this disk.
 *
 * A struct vfs overlays logical paths with nodes: regular files (their bytes
 * in memory, or loaded on first use, e.g. from a zip member), directories,
 * symbolic links, and "hidden" paths that must look absent.  fs.h consults
 * it before the real file system, so everything above (the object cache,
 * the loader model, the environment readers) works unchanged on
 *  - a host described by a snapshot (exclusive: only the vfs exists, except
 *    for passthrough prefixes, e.g. the binaries being checked), and
 *  - a wheel "installed" into an environment without writing anything
 *    (not exclusive: the wheel's files over the real ones, the replaced
 *    distribution's files hidden).
 *
 * Paths are absolute and normalised.  Nodes and their data live in the
 * arena given to vfs_init; data handed in by callers must outlive the vfs.
 */
#ifndef ABISCOPE_VFS_H
#define ABISCOPE_VFS_H

#include "core/arena.h"
#include "core/diag.h"
#include "core/hashmap.h"

enum vfs_type { VFS_FILE, VFS_DIR, VFS_LINK, VFS_HIDDEN };

struct vfs_node;
typedef enum status (*vfs_load_fn)(void *ctx, struct vfs_node *n, struct diag *d);

struct vfs_node {
	const char *path;
	enum vfs_type type;
	const char *target;		/* VFS_LINK */
	const uint8_t *data;		/* VFS_FILE, once loaded */
	size_t len;			/* VFS_FILE: the bytes' length (known once loaded) */
	uint64_t size;			/* the size stat() reports when not len (a file
					 * described by its first bytes or its facts), or 0 */
	bool loaded;
	vfs_load_fn load;
	void *ctx;
	uint64_t ino;
	uint32_t mode;
	struct ptrvec children;		/* VFS_DIR: const char * names */
	struct vfs_node *same;		/* a second name of that file (a hard link), or NULL */
	const uint8_t *head;		/* what a read of the first bytes gives, when the
					 * bytes are a stand-in (a synthesised image) */
	size_t head_len;
	bool sized;			/* size and head are the file's own (a zip member):
					 * stat() and a probe of the head load nothing */
};

struct vfs {
	struct arena *arena;
	struct strmap nodes;
	bool exclusive;
	struct ptrvec passthrough;	/* const char *: prefixes read from the real disk */
	uint64_t next_ino;
};

#define VFS_DEVICE 0xabc15c0fe0ull	/* st_dev of every vfs node */

void vfs_init(struct vfs *v, struct arena *a, bool exclusive);
struct vfs_node *vfs_add_file(struct vfs *v, const char *path, const uint8_t *data, size_t len);
struct vfs_node *vfs_add_lazy(struct vfs *v, const char *path, size_t len, vfs_load_fn load, void *ctx);
struct vfs_node *vfs_add_link(struct vfs *v, const char *path, const char *target);
struct vfs_node *vfs_add_dir(struct vfs *v, const char *path);
void vfs_hide(struct vfs *v, const char *path);
/* path names the same file as the node of target (a hard link: one inode). */
struct vfs_node *vfs_add_same(struct vfs *v, const char *path, const char *target);
void vfs_passthrough(struct vfs *v, const char *prefix);

/*
 * Resolves path (absolute, logical).  *handled is false when the path is
 * not the vfs's business (the real file system answers).  When handled,
 * the node is returned, or NULL with *err set (ENOENT, ELOOP, ENOTDIR).
 * follow_last=false stops at a final symbolic link.
 */
struct vfs_node *vfs_resolve(const struct vfs *v, const char *path, bool follow_last, int *err,
			     bool *handled, char *resolved, size_t rsz);

/* The size stat() reports for a node. */
static inline uint64_t vfs_size(const struct vfs_node *n)
{
	return n->size ? n->size : n->len;
}

/* The data of a file node, loading it on first use. */
enum status vfs_data(struct vfs_node *n, struct diag *d);

#endif
