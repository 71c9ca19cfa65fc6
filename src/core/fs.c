#include "core/fs.h"
#include "core/dircache.h"
#include "core/pathwalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_SYMLINKS 40
/* The most names remembered over all listings (fs_remember_listings): a
 * torch + vllm environment lists 66,000. */
#define MAX_REMEMBERED_NAMES 1000000

void fs_init(struct fsview *fs, const char *root)
{
	fs_init_cwd(fs, root, NULL);
}

/* This process's directory as a path inside root ("/" when outside it). */
static void cwd_in_root(struct fsview *fs)
{
	char here[4096], top[4096];
	snprintf(fs->cwd, sizeof fs->cwd, "/");
	char root[4096];
	snprintf(root, sizeof root, "%.*s", (int)fs->root_len, fs->root);
	if (!getcwd(here, sizeof here) || !realpath(root, top))
		return;
	size_t n = strlen(top);
	if (n == 1)
		n = 0;	/* the root is / */
	if (strncmp(here, top, n) != 0 || (here[n] != '/' && here[n] != '\0'))
		return;
	snprintf(fs->cwd, sizeof fs->cwd, "%s", here[n] ? here + n : "/");
}

void fs_init_cwd(struct fsview *fs, const char *root, const char *cwd)
{
	memset(fs, 0, sizeof *fs);
	if (root && *root && !str_eq(root, "/")) {
		fs->root = root;
		fs->root_len = strlen(root);
		while (fs->root_len > 1 && root[fs->root_len - 1] == '/')
			fs->root_len--;
		cwd_in_root(fs);
	} else if (!getcwd(fs->cwd, sizeof fs->cwd)) {
		snprintf(fs->cwd, sizeof fs->cwd, "/");
	}
	if (cwd && *cwd) {
		char joined[4096];
		fs_absolute(fs, cwd, joined, sizeof joined);
		path_normalize(joined, fs->cwd, sizeof fs->cwd);
	}
}

void fs_remember_listings(struct fsview *fs, struct arena *a)
{
	fs->listings = dircache_new(a, MAX_REMEMBERED_NAMES);
}

bool fs_is_rooted(const struct fsview *fs)
{
	return fs->root != NULL;
}

/* ---- pure path helpers ---- */

void path_dirname(const char *path, char *out, size_t outsz)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		snprintf(out, outsz, ".");
		return;
	}
	size_t n = (size_t)(slash - path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	if (n == 0) {
		snprintf(out, outsz, "/");
		return;
	}
	snprintf(out, outsz, "%.*s", (int)n, path);
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

void path_join(const char *a, const char *b, char *out, size_t outsz)
{
	size_t la = strlen(a);
	if (la == 0) {
		snprintf(out, outsz, "%s", b);
		return;
	}
	if (a[la - 1] == '/')
		snprintf(out, outsz, "%s%s", a, b[0] == '/' ? b + 1 : b);
	else
		snprintf(out, outsz, "%s/%s", a, b[0] == '/' ? b + 1 : b);
}

void path_normalize(const char *path, char *out, size_t outsz)
{
	/* Components are copied into out one at a time; ".." pops the last. */
	bool absolute = path[0] == '/';
	size_t o = 0;
	if (outsz == 0)
		return;
	if (absolute && o + 1 < outsz)
		out[o++] = '/';
	const char *p = path;
	size_t base = o;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 1 && p[0] == '.') {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (o > base) {
				while (o > base && out[o - 1] != '/')
					o--;
				if (o > base)
					o--;
			} else if (!absolute) {
				if (o + 3 < outsz) {
					memcpy(out + o, "../", 3);
					o += 3;
					base = o;
				}
			}
		} else {
			if (o > base || (o > 0 && out[o - 1] != '/'))
				if (o + 1 < outsz)
					out[o++] = '/';
			size_t c = MIN(n, outsz - 1 - o);
			memcpy(out + o, p, c);
			o += c;
		}
		p += n;
	}
	if (o == 0)
		out[o++] = '.';
	if (o > 1 && out[o - 1] == '/' && !(o == 1 && absolute))
		o--;
	out[o] = '\0';
}

void fs_absolute(const struct fsview *fs, const char *path, char *out, size_t outsz)
{
	if (path[0] == '/')
		snprintf(out, outsz, "%s", path);
	else
		path_join(fs->cwd, path, out, outsz);
}

/* ---- resolution inside the root ---- */

/*
 * Turns a logical path into the host path to operate on.  Without a root
 * this is the path itself and the kernel follows links.  Under a root,
 * every symlink is resolved here so that absolute targets stay inside.
 * follow_last=false leaves a final symlink unresolved (for lstat).
 */
/*
 * Under an overlay, a folder that exists only in the vfs (a package a wheel
 * would install) cannot be walked through by the kernel: "new/../torch" must
 * be taken as "torch" when "new" is the overlay's, as the kernel would once
 * it is installed.  Other ".." stay for the kernel (a link may sit there).
 */
static const char *through_overlay(const struct fsview *fs, const char *logical, char *buf, size_t bufsz)
{
	if (!fs->vfs || fs->vfs->exclusive || !strstr(logical, "/.."))
		return logical;
	char abs[PATH_MAX];
	fs_absolute(fs, logical, abs, sizeof abs);
	size_t o = 0;
	buf[0] = '\0';
	const char *p = abs;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.' && o) {
			const struct vfs_node *vn = strmap_get(&fs->vfs->nodes, buf);
			if (vn && vn->type == VFS_DIR) {
				char *slash = strrchr(buf, '/');
				o = slash ? (size_t)(slash - buf) : 0;
				buf[o] = '\0';
				p += n;
				continue;
			}
		}
		if (o + n + 2 >= bufsz)
			return logical;
		buf[o++] = '/';
		memcpy(buf + o, p, n);
		o += n;
		buf[o] = '\0';
		p += n;
	}
	if (!o)
		snprintf(buf, bufsz, "/");
	return buf;
}

static bool host_path(const struct fsview *fs, const char *logical, bool follow_last,
		      char *out, size_t outsz, int *err)
{
	char rewritten[PATH_MAX];
	logical = through_overlay(fs, logical, rewritten, sizeof rewritten);
	if (!fs->root) {
		str_join(out, outsz, logical, "", "");
		return true;
	}
	char abs[PATH_MAX];
	fs_absolute(fs, logical, abs, sizeof abs);
	struct path_walk w;
	path_walk_init(&w, abs);
	int more;
	while ((more = path_walk_next(&w)) > 0) {
		if (str_eq(w.comp, "..")) {
			char up[PATH_MAX];
			path_dirname(w.done, up, sizeof up);
			snprintf(w.done, sizeof w.done, "%s", up);
			continue;
		}
		char cand[PATH_MAX];
		path_join(w.done, w.comp, cand, sizeof cand);
		char hp[PATH_MAX * 2];
		snprintf(hp, sizeof hp, "%.*s%s", (int)fs->root_len, fs->root, cand);
		struct stat st;
		if (lstat(hp, &st) != 0) {
			if (errno == ENOENT && w.last) {
				snprintf(w.done, sizeof w.done, "%s", cand);
				break;
			}
			*err = errno;
			return false;
		}
		if (S_ISLNK(st.st_mode) && (!w.last || follow_last)) {
			if (++w.links > MAX_SYMLINKS) {
				*err = ELOOP;
				return false;
			}
			char target[PATH_MAX];
			ssize_t tl = readlink(hp, target, sizeof target - 1);
			if (tl < 0) {
				*err = errno;
				return false;
			}
			target[tl] = '\0';
			path_walk_link(&w, target);
			continue;
		}
		if (!w.last && !S_ISDIR(st.st_mode)) {
			*err = ENOTDIR;
			return false;
		}
		snprintf(w.done, sizeof w.done, "%s", cand);
	}
	if (more < 0) {
		*err = ENAMETOOLONG;
		return false;
	}
	snprintf(out, outsz, "%.*s%s", (int)fs->root_len, fs->root, w.done);
	return true;
}

static void record(const struct fsview *fs, enum fs_access what, const char *path)
{
	if (!fs->recorder)
		return;
	char abs[PATH_MAX], norm[PATH_MAX];
	fs_absolute(fs, path, abs, sizeof abs);
	path_normalize(abs, norm, sizeof norm);
	fs->recorder->note(fs->recorder->ctx, what, norm);
}

/* The vfs node for a logical path, when the vfs answers for it. */
static struct vfs_node *vnode(const struct fsview *fs, const char *path, bool follow, int *err,
			      bool *handled)
{
	*handled = false;
	if (!fs->vfs)
		return NULL;
	char abs[PATH_MAX], norm[PATH_MAX];
	fs_absolute(fs, path, abs, sizeof abs);
	path_normalize(abs, norm, sizeof norm);
	struct vfs_node *n = vfs_resolve(fs->vfs, norm, follow, err, handled, NULL, 0);
	if (n && n->type == VFS_FILE && !n->loaded && !n->sized) {
		/* its size is known once its bytes are (a synthesised image) */
		struct diag d;
		diag_clear(&d);
		if (vfs_data(n, &d) != ST_OK) {
			*err = EIO;
			return NULL;
		}
	}
	return n;
}

static enum fs_kind vkind(const struct vfs_node *n)
{
	return n->type == VFS_DIR ? FS_DIR : n->type == VFS_FILE ? FS_REGULAR : FS_OTHER;
}

static enum fs_kind kind_of(mode_t m)
{
	if (S_ISREG(m))
		return FS_REGULAR;
	if (S_ISDIR(m))
		return FS_DIR;
	if (S_ISFIFO(m))
		return FS_FIFO;
	if (S_ISCHR(m) || S_ISBLK(m))
		return FS_DEVICE;
	if (S_ISSOCK(m))
		return FS_SOCKET;
	return FS_OTHER;
}

void fs_stat(const struct fsview *fs, const char *path, struct fs_stat *out)
{
	record(fs, FS_ACC_STAT, path);
	memset(out, 0, sizeof *out);
	bool handled;
	int verr;
	struct vfs_node *vn = vnode(fs, path, true, &verr, &handled);
	if (handled) {
		if (!vn) {
			out->kind = FS_MISSING;
			out->err = verr;
			return;
		}
		out->kind = vkind(vn);
		out->dev = VFS_DEVICE;
		out->ino = vn->ino;
		out->size = vfs_size(vn);
		out->mode = vn->mode | (vn->type == VFS_DIR ? 0040000u : 0100000u);
		return;
	}
	char hp[PATH_MAX * 2];
	int err = 0;
	struct stat st;
	if (!host_path(fs, path, true, hp, sizeof hp, &err)) {
		out->kind = FS_MISSING;
		out->err = err;
		return;
	}
	if (stat(hp, &st) != 0) {
		out->kind = FS_MISSING;
		out->err = errno;
		return;
	}
	out->kind = kind_of(st.st_mode);
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	out->size = (uint64_t)st.st_size;
	out->mode = st.st_mode;
	out->mtime = st.st_mtime;
}

/* Whether this process may search the listed folder dir: its listing
 * answers for stat() only then (an ACL can refuse what the mode bits
 * allow, so the kernel is asked, once per folder, when first needed). */
static bool searchable(const struct fsview *fs, const struct dir_listing *l, const char *dir)
{
	enum dircache_search known = dircache_searchable(l);
	if (known != DIRCACHE_SEARCH_UNKNOWN)
		return known == DIRCACHE_SEARCH_YES;
	char hp[PATH_MAX * 2];
	int err;
	bool yes = host_path(fs, dir, true, hp, sizeof hp, &err) && faccessat(AT_FDCWD, hp, X_OK, AT_EACCESS) == 0;
	dircache_set_searchable(l, yes);
	return yes;
}

/* The remembered listing of the folder of path[0, len) (a path's own
 * folder, or an ancestor's), and the name in it; NULL when there is none
 * or it may not answer for stat(). */
static const struct dir_listing *listing_of(const struct fsview *fs, const char *path, size_t len, char *name,
					    size_t namesz)
{
	const char *slash = memrchr(path, '/', len);
	if (!slash || slash + 1 == path + len || (size_t)(path + len - slash) > namesz)
		return NULL;
	size_t nlen = (size_t)(path + len - slash - 1);
	memcpy(name, slash + 1, nlen);
	name[nlen] = '\0';
	if (str_eq(name, ".") || str_eq(name, ".."))
		return NULL;
	char dir[PATH_MAX];
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= sizeof dir)
		return NULL;
	memcpy(dir, path, n);
	dir[n] = '\0';
	const struct dir_listing *l = dircache_get(fs->listings, dir);
	return l && searchable(fs, l, dir) ? l : NULL;
}

/* Ancestors looked at for a listing (a module's name asked for as a
 * package folder: pkg/mod/__init__.py, pkg/mod/sub/__init__.py). */
#define LISTED_ANCESTORS 4

/* What the remembered listings say of path: true with *kind when they
 * decide it.  A path whose folder was not listed is still missing when an
 * ancestor's listing lacks the next folder down, or has a file there (a
 * module foo.py asked for as the package foo/). */
static bool listed_kind(const struct fsview *fs, const char *path, enum fs_kind *kind)
{
	if (!fs->listings || fs->vfs)
		return false;
	char name[NAME_MAX + 1];
	size_t len = strlen(path);
	if (len + fs->root_len >= PATH_MAX)
		return false;	/* stat() says ENAMETOOLONG of a name its folder lists */
	uint8_t k;
	bool is_link;
	const struct dir_listing *l = listing_of(fs, path, len, name, sizeof name);
	if (l) {
		if (!dircache_find(l, name, &k, &is_link)) {
			*kind = FS_MISSING;
			return true;
		}
		*kind = (enum fs_kind)k;
		return !is_link && (k == FS_REGULAR || k == FS_DIR);
	}
	for (int up = 0; up < LISTED_ANCESTORS; up++) {
		const char *slash = memrchr(path, '/', len);
		if (!slash || slash == path)
			return false;
		len = (size_t)(slash - path);
		l = listing_of(fs, path, len, name, sizeof name);
		if (!l)
			continue;
		if (dircache_find(l, name, &k, &is_link) && (is_link || k != FS_REGULAR))
			return false;	/* a folder there, not listed; a link; a type to ask for */
		*kind = FS_MISSING;	/* ENOENT, or ENOTDIR under a file */
		return true;
	}
	return false;
}

enum fs_kind fs_kind_of(const struct fsview *fs, const char *path)
{
	enum fs_kind kind;
	if (listed_kind(fs, path, &kind)) {
		record(fs, FS_ACC_STAT, path);
		return kind;
	}
	struct fs_stat st;
	fs_stat(fs, path, &st);
	return st.kind;
}

bool fs_is_symlink(const struct fsview *fs, const char *path)
{
	record(fs, FS_ACC_STAT, path);
	bool handled;
	int verr;
	struct vfs_node *vn = vnode(fs, path, false, &verr, &handled);
	if (handled)
		return vn && vn->type == VFS_LINK;
	char hp[PATH_MAX * 2];
	int err;
	struct stat st;
	if (!host_path(fs, path, false, hp, sizeof hp, &err))
		return false;
	return lstat(hp, &st) == 0 && S_ISLNK(st.st_mode);
}

bool fs_readlink(const struct fsview *fs, const char *path, char *out, size_t outsz)
{
	record(fs, FS_ACC_STAT, path);
	bool handled;
	int verr;
	struct vfs_node *vn = vnode(fs, path, false, &verr, &handled);
	if (handled) {
		if (!vn || vn->type != VFS_LINK)
			return false;
		snprintf(out, outsz, "%s", vn->target);
		return true;
	}
	char hp[PATH_MAX * 2];
	int err;
	if (!host_path(fs, path, false, hp, sizeof hp, &err) || outsz == 0)
		return false;
	ssize_t n = readlink(hp, out, outsz - 1);
	if (n < 0)
		return false;
	out[n] = '\0';
	return true;
}

bool fs_realpath(const struct fsview *fs, const char *path, char *out, size_t outsz, int *err)
{
	record(fs, FS_ACC_STAT, path);
	if (fs->vfs) {
		char abs[PATH_MAX], norm[PATH_MAX];
		fs_absolute(fs, path, abs, sizeof abs);
		path_normalize(abs, norm, sizeof norm);
		bool handled;
		struct vfs_node *vn = vfs_resolve(fs->vfs, norm, true, err, &handled, out, outsz);
		if (handled)
			return vn != NULL;
	}
	if (!fs->root) {
		char buf[PATH_MAX];
		if (!realpath(path, buf)) {
			*err = errno;
			return false;
		}
		snprintf(out, outsz, "%s", buf);
		return true;
	}
	char hp[PATH_MAX * 2];
	if (!host_path(fs, path, true, hp, sizeof hp, err))
		return false;
	struct stat st;
	if (stat(hp, &st) != 0) {
		*err = errno;
		return false;
	}
	const char *logical = hp + fs->root_len;
	snprintf(out, outsz, "%s", *logical ? logical : "/");
	return true;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool under_pseudo_dir(const char *canon)
{
	return under(canon, "/proc") || under(canon, "/sys") || under(canon, "/dev");
}

static bool pseudo_magic(const struct fsview *fs, const char *path);

bool fs_on_pseudo_fs(const struct fsview *fs, const char *path)
{
	char canon[PATH_MAX];
	int err = 0;
	if (fs->vfs) {
		char abs[PATH_MAX], norm[PATH_MAX];
		fs_absolute(fs, path, abs, sizeof abs);
		path_normalize(abs, norm, sizeof norm);
		bool handled;
		vfs_resolve(fs->vfs, norm, true, &err, &handled, canon, sizeof canon);
		if (handled)
			return false;	/* described bytes, not the kernel's */
	}
	if (fs_realpath(fs, path, canon, sizeof canon, &err) && under_pseudo_dir(canon))
		return true;
	return pseudo_magic(fs, path);
}

bool fs_on_pseudo_fs_below(const struct fsview *fs, const char *dir, const char *dir_canon, const char *path)
{
	size_t n = strlen(dir);
	/* a described tree or a root: the paths are not the host's */
	if (fs->vfs || (fs->root && *fs->root) || !dir_canon || strncmp(path, dir, n) != 0 || path[n] != '/')
		return fs_on_pseudo_fs(fs, path);
	char canon[PATH_MAX];
	if (strlen(dir_canon) + 1 + strlen(path + n + 1) >= sizeof canon)
		return fs_on_pseudo_fs(fs, path);
	str_join(canon, sizeof canon, dir_canon, "/", path + n + 1);
	if (strstr(canon, "/./") ||
	    strstr(canon, "/../") || str_ends(canon, "/.") || str_ends(canon, "/..") || strstr(canon, "//"))
		return fs_on_pseudo_fs(fs, path);
	char prefix[PATH_MAX];
	if (strlen(path) >= sizeof prefix)
		return fs_on_pseudo_fs(fs, path);
	record(fs, FS_ACC_STAT, path);
	str_join(prefix, sizeof prefix, path, "", "");
	/* each component below dir in turn: the copy cut at its end */
	for (char *cut = prefix + n + 1;; cut++) {
		cut = strchr(cut, '/');
		if (cut)
			*cut = '\0';
		struct stat st;
		if (lstat(prefix, &st) != 0)
			return false;	/* nothing there: realpath() fails too, and so does statfs() */
		if (S_ISLNK(st.st_mode))
			return fs_on_pseudo_fs(fs, path);
		if (!cut)
			break;
		*cut = '/';
	}
	return under_pseudo_dir(canon) || pseudo_magic(fs, path);
}

/* Is path on a file system the kernel makes up, by its magic number? */
static bool pseudo_magic(const struct fsview *fs, const char *path)
{
	int err = 0;
	char hp[PATH_MAX * 2];
	if (!host_path(fs, path, true, hp, sizeof hp, &err))
		return false;
	struct statfs sf;
	if (statfs(hp, &sf) != 0)
		return false;
	/* procfs, sysfs, debugfs, securityfs, cgroup v1/v2, devpts, configfs */
	static const unsigned long magic[] = { 0x9fa0, 0x62656572, 0x64626720, 0x73636673,
					       0x27e0eb, 0x63677270, 0x1cd1, 0x62656570 };
	for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
		if ((unsigned long)sf.f_type == magic[i])
			return true;
	return false;
}

static int open_ro(const struct fsview *fs, const char *hp)
{
	int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
	if (fs->root)
		flags |= O_NOFOLLOW;	/* links were resolved inside the root */
	return open(hp, flags);
}

void fs_probe(const struct fsview *fs, const char *path, uint8_t *head, size_t headsz,
	      struct fs_probe *out)
{
	record(fs, FS_ACC_PROBE, path);
	memset(out, 0, sizeof *out);
	bool handled;
	int verr;
	struct vfs_node *vn = vnode(fs, path, true, &verr, &handled);
	if (handled) {
		if (!vn) {
			out->open_err = verr;
			out->kind = FS_MISSING;
			return;
		}
		out->kind = vkind(vn);
		out->dev = VFS_DEVICE;
		out->ino = vn->ino;
		out->size = vfs_size(vn);
		if (vn->type == VFS_DIR) {
			out->read_err = EISDIR;
		} else if (vn->type == VFS_FILE && head && headsz) {
			struct diag d;
			diag_clear(&d);
			if (!(vn->sized && vn->head) && vfs_data(vn, &d) != ST_OK) {
				out->read_err = EIO;
				return;
			}
			const uint8_t *src = vn->head ? vn->head : vn->data;
			size_t have = vn->head ? vn->head_len : vn->len;
			out->head_len = MIN(headsz, have);
			memcpy(head, src, out->head_len);
		}
		return;
	}
	char hp[PATH_MAX * 2];
	int err = 0;
	if (!host_path(fs, path, true, hp, sizeof hp, &err)) {
		out->open_err = err;
		out->kind = FS_MISSING;
		return;
	}
	int fd = open_ro(fs, hp);
	if (fd < 0) {
		out->open_err = errno;
		out->kind = FS_MISSING;
		return;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		out->open_err = errno;
		out->kind = FS_MISSING;
		close(fd);
		return;
	}
	out->kind = kind_of(st.st_mode);
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	out->size = (uint64_t)st.st_size;
	if (out->kind == FS_DIR) {
		out->read_err = EISDIR;
	} else if (out->kind == FS_REGULAR && head && headsz) {
		size_t got = 0;
		while (got < headsz) {
			ssize_t r = pread(fd, head + got, headsz - got, (off_t)got);
			if (r < 0) {
				out->read_err = errno;
				break;
			}
			if (r == 0)
				break;
			got += (size_t)r;
		}
		out->head_len = got;
	}
	close(fd);
}

/* ---- files that shrink while mapped ----
 *
 * Reading a page of a mapping past the file's new end raises SIGBUS.  The
 * live mappings are kept in a fixed table the handler can search without
 * locks or allocation; a fault inside one is repaired by mapping a page
 * of zeros over it (reads go on, bounded as before) and remembered, so
 * the command reports an I/O error naming the file instead of dying.
 */
#define MAX_LIVE_MAPS 4096
struct live_map {
	const uint8_t *volatile addr;
	volatile size_t len;
	char path[256];
};
static struct live_map live[MAX_LIVE_MAPS];
static volatile sig_atomic_t faulted;
static char fault_path[256];
static volatile long page_size;	/* sysconf() is not async-signal-safe: read it before */

static uintptr_t machine_page(void)
{
	if (!page_size)
		page_size = sysconf(_SC_PAGESIZE);
	return (uintptr_t)page_size;
}

static void live_add(const uint8_t *addr, size_t len, const char *path)
{
	(void)machine_page();	/* for fs_repair_fault, in a signal handler */
	for (size_t i = 0; i < MAX_LIVE_MAPS; i++)
		if (!live[i].addr) {
			snprintf(live[i].path, sizeof live[i].path, "%s", path);
			live[i].len = len;
			live[i].addr = addr;
			return;
		}
}

static void live_remove(const uint8_t *addr)
{
	for (size_t i = 0; i < MAX_LIVE_MAPS; i++)
		if (live[i].addr == addr) {
			live[i].addr = NULL;
			return;
		}
}

bool fs_repair_fault(const void *addr)
{
	const uint8_t *p = addr;
	for (size_t i = 0; i < MAX_LIVE_MAPS; i++) {
		const uint8_t *a = live[i].addr;
		if (!a || p < a || p >= a + live[i].len)
			continue;
		long page = page_size;
		uintptr_t at = (uintptr_t)p & ~(uintptr_t)(page - 1);
		if (mmap((void *)at, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			return false;
		if (!faulted) {
			memcpy(fault_path, live[i].path, sizeof fault_path);
			faulted = 1;
		}
		return true;
	}
	return false;
}

const char *fs_fault(void)
{
	return faulted ? fault_path : NULL;
}

enum status fs_map(const struct fsview *fs, const char *path, struct mapped_file *mf,
		   struct diag *d)
{
	record(fs, FS_ACC_MAP, path);
	memset(mf, 0, sizeof *mf);
	bool handled;
	int verr;
	struct vfs_node *vn = vnode(fs, path, true, &verr, &handled);
	if (handled) {
		if (!vn)
			return diag_errno(d, path, verr, "cannot open");
		if (vn->type != VFS_FILE)
			return diag_set(d, ST_NOT_FILE, path, DIAG_NO_OFFSET, "not a regular file: %s",
					vn->type == VFS_DIR ? "a directory" : "a link");
		enum status st = vfs_data(vn, d);
		if (st != ST_OK)
			return st;
		mf->data = vn->data;
		mf->len = vn->len;
		mf->dev = VFS_DEVICE;
		mf->ino = vn->ino;
		mf->borrowed = true;
		return ST_OK;
	}
	char hp[PATH_MAX * 2];
	int err = 0;
	if (!host_path(fs, path, true, hp, sizeof hp, &err))
		return diag_errno(d, path, err, "cannot open");
	int fd = open_ro(fs, hp);
	if (fd < 0)
		return diag_errno(d, path, errno, "cannot open");
	enum status st = ST_OK;
	struct stat sb;
	if (fstat(fd, &sb) != 0) {
		st = diag_errno(d, path, errno, "cannot stat");
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		const char *what = S_ISDIR(sb.st_mode) ? "a directory"
				   : S_ISFIFO(sb.st_mode) ? "a FIFO"
				   : S_ISSOCK(sb.st_mode) ? "a socket" : "a device";
		st = diag_set(d, ST_NOT_FILE, path, DIAG_NO_OFFSET, "not a regular file: %s", what);
		goto out;
	}
	mf->dev = sb.st_dev;
	mf->ino = sb.st_ino;
	mf->mtime = sb.st_mtime;
	if (sb.st_size == 0)
		goto out;
	if ((uint64_t)sb.st_size > SIZE_MAX) {
		st = diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "file too large to map");
		goto out;
	}
	void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		st = diag_errno(d, path, errno, "cannot map");
		goto out;
	}
	mf->data = p;
	mf->len = (size_t)sb.st_size;
	live_add(p, mf->len, path);
out:
	close(fd);
	return st;
}

void fs_unmap(struct mapped_file *mf)
{
	if (mf->data && mf->len && !mf->borrowed) {
		live_remove(mf->data);
		munmap((void *)mf->data, mf->len);
	}
	mf->data = NULL;
	mf->len = 0;
}

bool fs_page_window(uintptr_t base, size_t map_len, size_t off, size_t len, uintptr_t page,
		    bool outward, uintptr_t *start, uintptr_t *end)
{
	if (off >= map_len || !page || (page & (page - 1)))
		return false;
	len = MIN(len, map_len - off);
	uintptr_t first = base + off, last = base + off + len;
	if (outward) {
		*start = first & ~(page - 1);
		*end = last;	/* madvise() rounds the length up to a page */
	} else {
		*start = (first + page - 1) & ~(page - 1);
		*end = off + len == map_len ? last : last & ~(page - 1);
	}
	return *end > *start;
}

/* madvise(advice) over the pages fs_page_window gives for a file mapping
 * (a vfs node's bytes are anonymous memory: never advised). */
static void advise_pages(const struct mapped_file *mf, size_t off, size_t len, bool outward, int advice)
{
	uintptr_t start, end;
	if (!mf->data || mf->borrowed ||
	    !fs_page_window((uintptr_t)mf->data, mf->len, off, len, machine_page(), outward, &start, &end))
		return;
	(void)madvise((void *)start, end - start, advice);
}

void fs_forget(const struct mapped_file *mf, size_t off, size_t len)
{
	/* a read-only private file mapping: its pages are the page cache's */
	advise_pages(mf, off, len, false, MADV_DONTNEED);
}

void fs_advise(const struct mapped_file *mf, size_t off, size_t len)
{
	advise_pages(mf, off, len, true, MADV_WILLNEED);
}

enum status fs_read_small(const struct fsview *fs, const char *path, size_t max, char **out,
			  size_t *len, struct diag *d)
{
	record(fs, FS_ACC_READ, path);
	*out = NULL;
	*len = 0;
	bool handled;
	int verr;
	struct vfs_node *vn = vnode(fs, path, true, &verr, &handled);
	if (handled) {
		if (!vn)
			return diag_errno(d, path, verr, "cannot open");
		if (vn->type != VFS_FILE)
			return diag_set(d, ST_NOT_FILE, path, DIAG_NO_OFFSET, "not a regular file");
		if ((vn->sized ? vfs_size(vn) : vn->len) > max)
			return diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "file larger than %zu bytes", max);
		enum status vst = vfs_data(vn, d);
		if (vst != ST_OK)
			return vst;
		char *copy = malloc(vn->len + 1);
		if (!copy)
			return diag_errno(d, path, ENOMEM, "cannot read");
		memcpy(copy, vn->data, vn->len);
		copy[vn->len] = '\0';
		*out = copy;
		*len = vn->len;
		return ST_OK;
	}
	char hp[PATH_MAX * 2];
	int err = 0;
	if (!host_path(fs, path, true, hp, sizeof hp, &err))
		return diag_errno(d, path, err, "cannot open");
	int fd = open_ro(fs, hp);
	if (fd < 0)
		return diag_errno(d, path, errno, "cannot open");
	enum status st = ST_OK;
	struct stat sb;
	char *buf = NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		st = diag_set(d, ST_NOT_FILE, path, DIAG_NO_OFFSET, "not a regular file");
		goto out;
	}
	if ((uint64_t)sb.st_size > max) {
		st = diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET,
			      "file larger than %zu bytes", max);
		goto out;
	}
	/* procfs and sysfs files report size 0: read those up to max. */
	size_t want = sb.st_size ? (size_t)sb.st_size : max;
	buf = malloc(want + 1);
	if (!buf) {
		st = diag_errno(d, path, ENOMEM, "cannot read");
		goto out;
	}
	size_t got = 0;
	while (got < want) {
		ssize_t r = read(fd, buf + got, want - got);
		if (r < 0) {
			st = diag_errno(d, path, errno, "cannot read");
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return st;
}

static bool vfs_child_hidden_or_listed(const struct fsview *fs, const char *dir, const char *name)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof p, "%s/%s", str_eq(dir, "/") ? "" : dir, name);
	bool handled;
	int verr;
	struct vfs_node *vn = vfs_resolve(fs->vfs, p, false, &verr, &handled, NULL, 0);
	return handled && (!vn || vn->type != VFS_DIR || vn->children.n);
}

static bool replay_listing(const struct dir_listing *l, fs_dir_fn fn, void *ctx)
{
	for (size_t i = 0; i < dircache_count(l); i++) {
		uint8_t kind;
		bool is_link;
		const char *name = dircache_entry(l, i, &kind, &is_link);
		if (!fn(ctx, name, (enum fs_kind)kind, is_link))
			break;
	}
	return true;
}

/*
 * A folder's entries straight from getdents64(): opendir() also fstat()s
 * every folder it opens (to size its buffer), a system call per folder
 * of an environment that tells the scan nothing.
 */
struct dir_reader {
	int fd;
	char *buf;
	size_t len, pos;
	bool error;	/* getdents64 failed: the listing is cut short */
};

#define DIR_READ_BUF ((size_t)32 << 10)

static bool dir_open(struct dir_reader *r, const char *hp)
{
	memset(r, 0, sizeof *r);
	r->fd = open(hp, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (r->fd < 0)
		return false;
	r->buf = malloc(DIR_READ_BUF);
	if (!r->buf) {
		close(r->fd);
		errno = ENOMEM;
		return false;
	}
	return true;
}

/* The next entry, or NULL at the end (r->error when by an error). */
static const struct dirent64 *dir_next(struct dir_reader *r)
{
	if (r->pos >= r->len) {
		ssize_t n = getdents64(r->fd, r->buf, DIR_READ_BUF);
		if (n <= 0) {
			r->error = n < 0;
			return NULL;
		}
		r->len = (size_t)n;
		r->pos = 0;
	}
	const struct dirent64 *de = (const struct dirent64 *)(const void *)(r->buf + r->pos);
	if (r->len - r->pos < offsetof(struct dirent64, d_name) + 1 ||
	    de->d_reclen < offsetof(struct dirent64, d_name) + 1 || de->d_reclen > r->len - r->pos) {
		r->error = true;	/* not what the kernel writes: stop here */
		return NULL;
	}
	r->pos += de->d_reclen;
	return de;
}

static void dir_close(struct dir_reader *r)
{
	free(r->buf);
	close(r->fd);
}

/* A listing of dir to remember, or NULL: not asked to (see
 * fs_remember_listings; whether the folder may be searched is asked when
 * its listing first answers for stat(): searchable). */
static struct dir_listing *listing_to_keep(const struct fsview *fs)
{
	return fs->listings ? dircache_begin(fs->listings) : NULL;
}

bool fs_list_dir(const struct fsview *fs, const char *path, fs_dir_fn fn, void *ctx)
{
	record(fs, FS_ACC_LIST, path);
	char norm[PATH_MAX];
	struct vfs_node *vdir = NULL;
	if (fs->vfs) {
		char abs[PATH_MAX];
		fs_absolute(fs, path, abs, sizeof abs);
		path_normalize(abs, norm, sizeof norm);
		bool handled;
		int verr;
		char resolved[PATH_MAX];
		vdir = vfs_resolve(fs->vfs, norm, true, &verr, &handled, resolved, sizeof resolved);
		if (handled && fs->vfs->exclusive) {
			if (!vdir || vdir->type != VFS_DIR)
				return false;
			for (size_t i = 0; i < vdir->children.n; i++) {
				const char *name = vdir->children.item[i];
				char p[PATH_MAX * 2];
				snprintf(p, sizeof p, "%s/%s", str_eq(resolved, "/") ? "" : resolved, name);
				struct vfs_node *c = strmap_get(&fs->vfs->nodes, p);
				if (!c || c->type == VFS_HIDDEN)
					continue;
				enum fs_kind k = c->type == VFS_DIR ? FS_DIR : c->type == VFS_FILE ? FS_REGULAR : FS_OTHER;
				if (!fn(ctx, name, k, c->type == VFS_LINK))
					break;
			}
			return true;
		}
		if (!handled || (vdir && vdir->type != VFS_DIR))
			vdir = NULL;
		if (!vdir)
			vdir = strmap_get(&fs->vfs->nodes, norm);
	}
	const struct dir_listing *known = fs->listings && !fs->vfs ? dircache_get(fs->listings, path) : NULL;
	if (known)
		return replay_listing(known, fn, ctx);
	enum fs_kind listed;
	if (listed_kind(fs, path, &listed) && listed != FS_DIR)
		return false;	/* its folder's listing has no folder of that name */
	char hp[PATH_MAX * 2];
	int err;
	struct dir_reader rd;
	bool dir = host_path(fs, path, true, hp, sizeof hp, &err) && dir_open(&rd, hp);
	if (!dir && !vdir)
		return false;
	if (vdir && vdir->type == VFS_DIR) {
		/* an overlay directory: its own children first, then the disk's */
		for (size_t i = 0; i < vdir->children.n; i++) {
			const char *name = vdir->children.item[i];
			char p[PATH_MAX * 2];
			snprintf(p, sizeof p, "%s/%s", str_eq(norm, "/") ? "" : norm, name);
			struct vfs_node *c = strmap_get(&fs->vfs->nodes, p);
			if (!c || c->type == VFS_HIDDEN)
				continue;
			enum fs_kind k = c->type == VFS_DIR ? FS_DIR : c->type == VFS_FILE ? FS_REGULAR : FS_OTHER;
			if (!fn(ctx, name, k, c->type == VFS_LINK)) {
				if (dir)
					dir_close(&rd);
				return true;
			}
		}
	}
	if (!dir)
		return true;
	struct dir_listing *keep = fs->vfs ? NULL : listing_to_keep(fs);
	const struct dirent64 *de;
	bool whole = true;
	while ((de = dir_next(&rd)) != NULL) {
		if (str_eq(de->d_name, ".") || str_eq(de->d_name, ".."))
			continue;
		if (fs->vfs && !fs->vfs->exclusive && vfs_child_hidden_or_listed(fs, norm, de->d_name))
			continue;
		enum fs_kind kind = de->d_type == DT_DIR ? FS_DIR : de->d_type == DT_REG ? FS_REGULAR : FS_OTHER;
		if (keep && whole && !dircache_add(fs->listings, keep, de->d_name, (uint8_t)kind, de->d_type == DT_LNK))
			whole = false;
		if (!fn(ctx, de->d_name, kind, de->d_type == DT_LNK)) {
			whole = false;
			break;
		}
	}
	if (rd.error)
		whole = false;	/* a listing cut short by EIO is not the folder */
	if (keep)
		dircache_finish(fs->listings, keep, whole ? path : NULL);
	dir_close(&rd);
	return true;
}

/* ---- output ---- */

static enum status write_gzip(const char *path, const void *data, size_t len, struct diag *d)
{
	gzFile gz = gzopen(path, "wb6");
	if (!gz)
		return diag_errno(d, path, errno, "cannot create");
	enum status st = ST_OK;
	const char *p = data;
	for (size_t off = 0; off < len && st == ST_OK;) {
		unsigned chunk = (unsigned)MIN(len - off, (size_t)1 << 30);
		if (gzwrite(gz, p + off, chunk) != (int)chunk)
			st = diag_set(d, ST_IO, path, DIAG_NO_OFFSET, "cannot write (gzip)");
		off += chunk;
	}
	if (gzclose(gz) != Z_OK && st == ST_OK)
		st = diag_set(d, ST_IO, path, DIAG_NO_OFFSET, "cannot write (gzip)");
	return st;
}

static enum status write_plain(const char *path, const void *data, size_t len, struct diag *d)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return diag_errno(d, path, errno, "cannot create");
	enum status st = ST_OK;
	if (fwrite(data, 1, len, f) != len)
		st = diag_errno(d, path, errno, "cannot write");
	if (fclose(f) != 0 && st == ST_OK)
		st = diag_errno(d, path, errno, "cannot write");
	return st;
}

enum status fs_write_output(const char *path, const void *data, size_t len, bool gzip,
			    long long *size, struct diag *d)
{
	enum status st = gzip ? write_gzip(path, data, len, d) : write_plain(path, data, len, d);
	if (size) {
		struct stat sb;
		*size = st == ST_OK && stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
	}
	return st;
}
