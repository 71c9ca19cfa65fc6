/* Unit tests: fs_kind_of() from remembered listings (core/dircache.h)
 * answers what stat() answers, on a tree built here: files, folders,
 * links, a module asked for as a package, folders not listed; a folder this
 * process may not search and a scan with a vfs are never remembered; a second
 * listing replays the first; the cache keeps no more names than allowed. */
#include "unit.h"
#include "core/arena.h"
#include "core/dircache.h"
#include "core/fs.h"
#include "core/vfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static const char *at(const char *rel)
{
	static char p[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(p[k], sizeof p[k], "%s/%s", root, rel);
	return p[k];
}

static void make_file(const char *rel)
{
	FILE *f = fopen(at(rel), "w");
	SETUP(f != NULL, "make a file");
	if (f)
		fclose(f);
}

struct names {
	char name[16][32];
	size_t n;
};

static bool collect(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct names *c = ctx;
	(void)kind;
	(void)is_link;
	if (c->n < 16)
		snprintf(c->name[c->n++], sizeof c->name[0], "%s", name);
	return true;
}

static void build_tree(void)
{
	char tmpl[] = "/tmp/abiscope-dircache-XXXXXX";
	SETUP(mkdtemp(tmpl) != NULL, "make the tree's root");
	snprintf(root, sizeof root, "%s", tmpl);
	SETUP(mkdir(at("site"), 0755) == 0 && mkdir(at("site/pkg"), 0755) == 0 && mkdir(at("site/pkg/sub"), 0755) == 0,
	      "make the folders");
	make_file("site/pkg/__init__.py");
	make_file("site/pkg/mod.py");
	make_file("site/pkg/sub/x.py");
	make_file("site/plain.py");
	SETUP(symlink("pkg", at("site/link_to_pkg")) == 0 && symlink("pkg/mod.py", at("site/file_link.py")) == 0 &&
	      symlink("nowhere", at("site/dangling.py")) == 0, "make the links");
	SETUP(mkdir(at("site/closed"), 0700) == 0, "make a folder only its owner may search");
	SETUP(mkdir(at("site/empty"), 0755) == 0, "make an empty folder");
	make_file("site/closed/inner.py");
}

static void same_as_stat(void)
{
	struct arena a;
	arena_init(&a);
	struct fsview remembered, plain;
	fs_init(&remembered, NULL);
	fs_init(&plain, NULL);
	fs_remember_listings(&remembered, &a);
	/* the empty folder first: nothing recorded yet, its entries NULL */
	static const char *const listed[] = { "site/empty", "site", "site/pkg", "site/pkg/sub", "site/closed" };
	for (size_t i = 0; i < ARRAY_SIZE(listed); i++) {
		struct names c = { .n = 0 };
		fs_list_dir(&remembered, at(listed[i]), collect, &c);
	}
	static const char *const asked[] = {
		"site/pkg", "site/pkg/__init__.py", "site/pkg/mod.py", "site/pkg/absent.py", "site/pkg/mod/__init__.py",
		"site/pkg/mod/x/y/__init__.py", "site/plain/__init__.py", "site/absent/x.py", "site/absent/a/b/c.py",
		"site/link_to_pkg/mod.py", "site/link_to_pkg", "site/file_link.py", "site/dangling.py",
		"site/closed/inner.py", "site/closed/absent.py", "site/pkg/sub/x.py", "site/pkg/sub", "site/pkg/.",
		"site/pkg/..", "site/pkg/sub/", "site/empty", "site/empty/x.py",
	};
	for (size_t i = 0; i < ARRAY_SIZE(asked); i++) {
		enum fs_kind want = fs_kind_of(&plain, at(asked[i]));
		enum fs_kind got = fs_kind_of(&remembered, at(asked[i]));
		char what[160];
		snprintf(what, sizeof what, "%s: the listings say what stat() says (%d)", asked[i], (int)want);
		CHECK_INT(got, want, what);
	}
	/* the answers come from the listings: a file made after them is not
	 * seen (a scan sees the disk as it listed it), except in the folder
	 * not everyone may search, whose listing was not kept */
	make_file("site/pkg/late.py");
	make_file("site/closed/late.py");
	CHECK(fs_kind_of(&plain, at("site/pkg/late.py")) == FS_REGULAR, "stat() sees a file made later");
	CHECK(fs_kind_of(&remembered, at("site/pkg/late.py")) == FS_MISSING, "a remembered listing does not");
	/* only where this process may search the folder (as root, it may:
	 * then the listing is kept like any other) */
	bool searchable = faccessat(AT_FDCWD, at("site/closed"), X_OK, AT_EACCESS) == 0;
	CHECK(fs_kind_of(&remembered, at("site/closed/late.py")) == (searchable ? FS_MISSING : FS_REGULAR),
	      "a folder is remembered only where this process may search it");
	struct names first = { .n = 0 }, again = { .n = 0 };
	fs_list_dir(&plain, at("site/pkg"), collect, &first);
	fs_list_dir(&remembered, at("site/pkg"), collect, &again);
	CHECK_INT(again.n + 1, first.n, "a second listing replays the first (late.py is not in it)");
	/* with a vfs, nothing is answered from memory */
	struct vfs v;
	vfs_init(&v, &a, false);
	remembered.vfs = &v;
	CHECK(fs_kind_of(&remembered, at("site/pkg/late.py")) == FS_REGULAR, "with a vfs the disk is asked");
	arena_release(&a);
}

struct nest {
	const struct fsview *fs;
	bool done;
};

/* Lists site/pkg/sub from inside the listing of site/pkg. */
static bool list_inside(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct nest *n = ctx;
	struct names inner = { .n = 0 };
	(void)name;
	(void)kind;
	(void)is_link;
	if (!n->done)
		fs_list_dir(n->fs, at("site/pkg/sub"), collect, &inner);
	n->done = true;
	return true;
}

/* A folder listed from inside another folder's listing is not kept (the
 * entries being recorded share one buffer); the outer one is, whole. */
static void nested(void)
{
	struct arena a;
	arena_init(&a);
	struct fsview fs;
	fs_init(&fs, NULL);
	fs_remember_listings(&fs, &a);
	struct nest n = { &fs, false };
	fs_list_dir(&fs, at("site/pkg"), list_inside, &n);
	make_file("site/pkg/sub/later.py");
	make_file("site/pkg/later.py");
	CHECK(fs_kind_of(&fs, at("site/pkg/sub/later.py")) == FS_REGULAR, "the inner listing was not kept");
	CHECK(fs_kind_of(&fs, at("site/pkg/later.py")) == FS_MISSING, "the outer one was");
	CHECK(fs_kind_of(&fs, at("site/pkg/mod.py")) == FS_REGULAR && fs_kind_of(&fs, at("site/pkg/sub")) == FS_DIR,
	      "with every name of its own");
	unlink(at("site/pkg/sub/later.py"));
	unlink(at("site/pkg/later.py"));
	arena_release(&a);
}

static void bounded(void)
{
	struct arena a;
	arena_init(&a);
	struct dircache *c = dircache_new(&a, 3);
	struct dir_listing *l = dircache_begin(c);
	bool all = true;
	static const char *const names[] = { "a", "b", "c", "d" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		all &= dircache_add(c, l, names[i], FS_REGULAR, false);
	CHECK(!all, "a fourth name is refused when three may be kept");
	dircache_finish(c, l, "/x");
	CHECK(dircache_get(c, "/x") == NULL, "and the listing is not kept");
	CHECK(dircache_begin(c) == NULL, "nor any later one");
	arena_release(&a);
}

int main(void)
{
	build_tree();
	same_as_stat();
	nested();
	bounded();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "%s", root);
	static const char *const files[] = { "site/pkg/late.py", "site/closed/late.py", "site/closed/inner.py",
					     "site/pkg/sub/x.py", "site/pkg/mod.py", "site/pkg/__init__.py",
					     "site/plain.py", "site/link_to_pkg", "site/file_link.py", "site/dangling.py" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		unlink(at(files[i]));
	static const char *const dirs[] = { "site/empty", "site/closed", "site/pkg/sub", "site/pkg", "site" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		rmdir(at(dirs[i]));
	rmdir(cmd);
	return unit_done();
}
