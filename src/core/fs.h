/*
 * fs.h: every file-system access abiscope makes, read-only, under a root.
 *
 * Paths handed to this module are logical: absolute paths as the inspected
 * system sees them.  With no root (or "/") they are the host's paths.  With
 * --root DIR they are resolved inside DIR: symbolic links are followed by
 * this module, component by component, and absolute link targets are
 * re-rooted, so nothing can escape DIR.  Relative paths are taken against
 * the logical current directory (the process's, or "/" under a root).
 *
 * Nothing here writes, executes or loads: files are opened O_RDONLY with
 * O_NONBLOCK (a FIFO never blocks us), only regular files are mapped, and
 * mappings are PROT_READ.  A struct mapped_file owns its mapping until
 * fs_unmap().
 */
#ifndef ABISCOPE_FS_H
#define ABISCOPE_FS_H

#include "core/diag.h"
#include "core/vfs.h"
#include <sys/types.h>

/*
 * An observer of every access (the snapshot builder records what an
 * analysis reads, so that the snapshot holds exactly that).  Paths are
 * absolute and normalised, as the caller named them.
 */
enum fs_access { FS_ACC_STAT, FS_ACC_PROBE, FS_ACC_MAP, FS_ACC_READ, FS_ACC_LIST };
struct fs_recorder {
	void (*note)(void *ctx, enum fs_access what, const char *path);
	void *ctx;
};

struct dircache;

struct fsview {
	const char *root;	/* NULL or "" for the host file system */
	size_t root_len;
	char cwd[4096];		/* logical current directory */
	struct vfs *vfs;	/* described files over (or instead of) the disk, or NULL */
	struct fs_recorder *recorder;	/* NULL: nobody listens */
	struct dircache *listings;	/* fs_remember_listings(), or NULL */
};

void fs_init(struct fsview *fs, const char *root);
/*
 * The same with the working directory of the inspected processes: cwd
 * (a path in the root; relative: to the default), else, under a root,
 * this process's directory when it lies inside the root (as a chroot
 * there would keep it), else "/"; without a root, this process's.
 */
void fs_init_cwd(struct fsview *fs, const char *root, const char *cwd);
bool fs_is_rooted(const struct fsview *fs);
/*
 * From now on each folder of the disk listed in full is remembered (in a,
 * for as long as a lives): a second listing of it replays the names, and
 * fs_kind_of() of a path in it answers from them (absent: FS_MISSING; a
 * file or folder: its kind; a link or an unknown type: stat() decides).
 * A scan sees the disk as it was when it listed a folder.  Only while no
 * vfs is set (a vfs can change under a scan) and only listings finished
 * without an error; a listing answers for stat() only of a folder this
 * process may search (else stat() of a name could fail where the listing
 * has it: asked when it first answers).  Names match
 * exactly (as Python's import does, not as a case-insensitive folder's
 * open() would).
 */
void fs_remember_listings(struct fsview *fs, struct arena *a);

enum fs_kind { FS_MISSING, FS_REGULAR, FS_DIR, FS_FIFO, FS_DEVICE, FS_SOCKET, FS_OTHER };

struct fs_stat {
	enum fs_kind kind;
	int err;		/* errno when kind == FS_MISSING (ENOENT, ELOOP, ENOTDIR, EACCES...) */
	uint64_t dev, ino;
	uint64_t size;
	uint32_t mode;
	int64_t mtime;
};

/* stat() following links, inside the root. */
void fs_stat(const struct fsview *fs, const char *path, struct fs_stat *st);
/* fs_stat()'s kind alone: "is it a file, a folder, there at all"; from a
 * remembered listing of its folder when there is one. */
enum fs_kind fs_kind_of(const struct fsview *fs, const char *path);
/* lstat(): does not follow a final symlink; kind FS_OTHER for a link. */
bool fs_is_symlink(const struct fsview *fs, const char *path);
/* readlink() of a final component; false if not a link. */
bool fs_readlink(const struct fsview *fs, const char *path, char *out, size_t outsz);

/*
 * The logical canonical path (all links resolved, no . or ..), like
 * realpath(3) inside the root.  False with errno-like err on failure.
 */
bool fs_realpath(const struct fsview *fs, const char *path, char *out, size_t outsz, int *err);

/*
 * What the dynamic loader's open(O_RDONLY) + read(832 bytes) would see:
 * err is the errno of the failed open (0 on success); for a directory the
 * open succeeds and the read fails with EISDIR; head receives up to
 * headsz bytes of a regular file.  FIFOs and devices are never read: kind
 * tells the caller (the real loader would block on a FIFO).
 */
/*
 * True when path leads (links followed) to a kernel pseudo file system:
 * /proc, /sys, /dev, or anything mounted as procfs, sysfs, debugfs,
 * securityfs, cgroup, devpts or configfs.  Their files describe the
 * running process and machine (/proc/self/environ holds our environment),
 * not an inspected tree: nothing read from them may be recorded or taken
 * for a package's file.  False for files a vfs describes.
 */
bool fs_on_pseudo_fs(const struct fsview *fs, const char *path);
/*
 * The same for a file named below dir, whose resolved path the caller
 * gives (fs_realpath(dir)): only the components past dir are looked at,
 * one lstat() each, and a link among them is resolved whole.  realpath()
 * of a file asks readlink() of every component of its path; a folder's
 * thousand metadata files cost a readlink per component each.
 */
bool fs_on_pseudo_fs_below(const struct fsview *fs, const char *dir, const char *dir_canon, const char *path);

struct fs_probe {
	int open_err;
	int read_err;
	enum fs_kind kind;
	size_t head_len;
	uint64_t dev, ino, size;
};
void fs_probe(const struct fsview *fs, const char *path, uint8_t *head, size_t headsz,
	      struct fs_probe *out);

struct mapped_file {
	const uint8_t *data;
	size_t len;
	uint64_t dev, ino;
	int64_t mtime;
	bool borrowed;		/* the bytes belong to a vfs node: not unmapped */
};

/* Maps a regular file read-only.  Errors name the path. */
enum status fs_map(const struct fsview *fs, const char *path, struct mapped_file *mf,
		   struct diag *d);
void fs_unmap(struct mapped_file *mf);
/* Lets the whole pages of [off, off + len) of a mapping leave the resident
 * set: they stay in the page cache, and a later read maps them again.
 * Nothing for a vfs node's bytes (anonymous memory: they would be lost). */
void fs_forget(const struct mapped_file *mf, size_t off, size_t len);
/* Tells the kernel that [off, off + len) of a mapping will be read soon, so
 * that a cold page cache reads it ahead at once: every page the window
 * touches, at this machine's page size (4 KiB on x86; 4, 16 or 64 KiB on
 * aarch64, where a window rounded to 4 KiB is refused).  A hint: nothing
 * else changes.  Nothing for a vfs node's bytes. */
void fs_advise(const struct mapped_file *mf, size_t off, size_t len);
/* The pages of `page` bytes that fs_advise (outward: every page the window
 * touches) or fs_forget (inward: only whole pages, and the mapping's last
 * page when the window reaches its end) act on, for [off, off + len) of a
 * mapping of map_len bytes at base (on a page).  False when none is left. */
bool fs_page_window(uintptr_t base, size_t map_len, size_t off, size_t len, uintptr_t page,
		    bool outward, uintptr_t *start, uintptr_t *end);

/*
 * A mapped file that shrinks while it is read makes the read fault
 * (SIGBUS).  The CLI's SIGBUS handler calls fs_repair_fault() with the
 * faulting address: inside a live mapping, that page becomes zeros, the
 * file is remembered and true is returned (the read resumes); else false
 * (not ours: die as the signal says).  fs_fault() is then the path of the
 * first file that changed under us (its results are not to be trusted),
 * or NULL.  Async-signal-safe: no locks, no allocation.
 */
bool fs_repair_fault(const void *addr);
const char *fs_fault(void);

/* Reads a whole small regular file (max bytes) into a malloc'd buffer. */
enum status fs_read_small(const struct fsview *fs, const char *path, size_t max, char **out,
			  size_t *len, struct diag *d);

/* Writes a file abiscope produces (a snapshot, a report): never one it
 * inspects.  Creates or truncates path, gzip-compressed when gzip is set;
 * *size (optional) is the size written to disk. */
enum status fs_write_output(const char *path, const void *data, size_t len, bool gzip,
			    long long *size, struct diag *d);

/* Directory listing: calls fn for each entry name other than . and ..;
 * kind is FS_DIR, FS_REGULAR or FS_OTHER (unknown, or anything else);
 * is_link says the entry itself is a symbolic link (kind is then unknown).
 * fn returns false to stop. */
typedef bool (*fs_dir_fn)(void *ctx, const char *name, enum fs_kind kind, bool is_link);
bool fs_list_dir(const struct fsview *fs, const char *path, fs_dir_fn fn, void *ctx);

/* Path helpers (pure string operations, no file-system access). */
/* dirname of path into out ("." if no slash, "/" for the root). */
void path_dirname(const char *path, char *out, size_t outsz);
const char *path_basename(const char *path);
/* a + "/" + b, collapsing a doubled slash. */
void path_join(const char *a, const char *b, char *out, size_t outsz);
/* Lexical normalisation: removes ., empty components and resolves .. */
void path_normalize(const char *path, char *out, size_t outsz);
/* Absolute logical path: path itself if absolute, else cwd + path. */
void fs_absolute(const struct fsview *fs, const char *path, char *out, size_t outsz);

#endif
