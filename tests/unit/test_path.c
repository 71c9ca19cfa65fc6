/* Unit tests: path helpers and the read-only file-system view under a root. */
#include "unit.h"
#include "core/fs.h"
#include <unistd.h>
#include <sys/stat.h>

static const char *norm(const char *p)
{
	static char buf[512];
	path_normalize(p, buf, sizeof buf);
	return buf;
}

static void paths(void)
{
	char b[256];
	CHECK_STR(norm("/a/./b//c/../d/"), "/a/b/d", "normalize . .. and //");
	CHECK_STR(norm("/../x"), "/x", "normalize .. above the root");
	CHECK_STR(norm("a/../../b"), "../b", "normalize relative ..");
	CHECK_STR(norm("/"), "/", "normalize the root");
	path_dirname("/usr/lib/libc.so.6", b, sizeof b);
	CHECK_STR(b, "/usr/lib", "dirname");
	path_dirname("libc.so.6", b, sizeof b);
	CHECK_STR(b, ".", "dirname without a slash");
	path_dirname("/libc.so.6", b, sizeof b);
	CHECK_STR(b, "/", "dirname at the root");
	CHECK_STR(path_basename("/a/b/c.so"), "c.so", "basename");
	path_join("/a/", "/b", b, sizeof b);
	CHECK_STR(b, "/a/b", "join collapses a doubled slash");
}

static void mk(const char *root, const char *rel, const char *content)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

/* root/rel, a link to target: setup, so a failure stops the program */
static void link_at(const char *root, const char *rel, const char *target, const char *what)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	SETUP(symlink(target, p) == 0, what);
}

static void rooted(void)
{
	char tmpl[] = "/tmp/abiscope-unit-XXXXXX";
	char *root = mkdtemp(tmpl);
	char p[512], q[512];
	snprintf(p, sizeof p, "%s/usr", root);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/usr/lib", root);
	mkdir(p, 0755);
	mk(root, "usr/lib/libx.so", "x");
	link_at(root, "lib", "usr/lib", "make a relative link");
	link_at(root, "abs", "/usr/lib", "make an absolute link");
	link_at(root, "escape", "../../../../../../etc", "make an escaping link");
	link_at(root, "loop", "loop", "make a link loop");
	struct fsview fs;
	fs_init(&fs, root);
	struct fs_stat st;
	fs_stat(&fs, "/lib/libx.so", &st);
	CHECK(st.kind == FS_REGULAR, "a relative link resolves inside the root");
	fs_stat(&fs, "/abs/libx.so", &st);
	CHECK(st.kind == FS_REGULAR, "an absolute link is re-rooted");
	fs_stat(&fs, "/escape/passwd", &st);
	CHECK(st.kind == FS_MISSING, "a link cannot escape the root");
	fs_stat(&fs, "/loop/x", &st);
	CHECK(st.kind == FS_MISSING && st.err != 0, "a link loop is an error, not a hang");
	int err = 0;
	CHECK(fs_realpath(&fs, "/abs/../lib/libx.so", q, sizeof q, &err), "realpath inside a root");
	CHECK_STR(q, "/usr/lib/libx.so", "realpath is logical");
	struct fs_probe pr;
	uint8_t head[8];
	fs_probe(&fs, "/usr/lib", head, sizeof head, &pr);
	CHECK(pr.kind == FS_DIR && pr.read_err != 0, "probing a directory reports EISDIR");
	snprintf(p, sizeof p, "%s/fifo", root);
	mkfifo(p, 0644);
	fs_probe(&fs, "/fifo", head, sizeof head, &pr);
	CHECK(pr.kind == FS_FIFO && pr.head_len == 0, "a FIFO is opened without blocking and never read");
	struct mapped_file mf;
	struct diag d;
	diag_clear(&d);
	CHECK(fs_map(&fs, "/fifo", &mf, &d) == ST_NOT_FILE && strstr(d.msg, "FIFO"), "mapping a FIFO is refused");
	diag_clear(&d);
	CHECK(fs_map(&fs, "/lib/libx.so", &mf, &d) == ST_OK && mf.len == 1, "map a file through a link");
	fs_unmap(&mf);
	snprintf(q, sizeof q, "rm -rf '%s'", root);
	unlink(p);
	snprintf(p, sizeof p, "%s/loop", root); unlink(p);
	snprintf(p, sizeof p, "%s/escape", root); unlink(p);
	snprintf(p, sizeof p, "%s/abs", root); unlink(p);
	snprintf(p, sizeof p, "%s/lib", root); unlink(p);
	snprintf(p, sizeof p, "%s/usr/lib/libx.so", root); unlink(p);
	snprintf(p, sizeof p, "%s/usr/lib", root); rmdir(p);
	snprintf(p, sizeof p, "%s/usr", root); rmdir(p);
	rmdir(root);
}

/* fs_on_pseudo_fs_below() answers as fs_on_pseudo_fs() does, which
 * resolves the whole path: a plain file, a file linked into /proc, a
 * folder linked into /proc, a folder linked elsewhere, a missing file. */
static void pseudo_below(void)
{
	char tmpl[] = "/tmp/abiscope-unit-XXXXXX";
	char *dir = mkdtemp(tmpl);
	SETUP(dir != NULL, "make a folder");
	char p[512], canon[4096];
	snprintf(p, sizeof p, "%s/m.dist-info", dir);
	SETUP(mkdir(p, 0755) == 0, "make a metadata folder");
	mk(dir, "m.dist-info/METADATA", "Name: m\n");
	link_at(dir, "m.dist-info/RECORD", "/proc/self/environ", "link a RECORD into /proc");
	link_at(dir, "p.dist-info", "/proc/self", "link a metadata folder into /proc");
	link_at(dir, "o.dist-info", "m.dist-info", "link a metadata folder to another");
	struct fsview fs;
	fs_init(&fs, NULL);
	int err = 0;
	SETUP(fs_realpath(&fs, dir, canon, sizeof canon, &err), "resolve the folder");
	static const char *const rel[] = { "m.dist-info/METADATA", "m.dist-info/RECORD", "p.dist-info/environ",
					   "p.dist-info/RECORD", "o.dist-info/RECORD", "o.dist-info/METADATA",
					   "m.dist-info/INSTALLER", "m.dist-info/./METADATA" };
	static const bool want[] = { false, true, true, false, true, false, false, false };
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		snprintf(p, sizeof p, "%s/%s", dir, rel[i]);
		char what[256];
		snprintf(what, sizeof what, "pseudo below a folder: %s %s", rel[i], want[i] ? "leads into /proc" : "does not (or is not there)");
		CHECK(fs_on_pseudo_fs_below(&fs, dir, canon, p) == want[i] && fs_on_pseudo_fs(&fs, p) == want[i], what);
	}
	static const char *const made[] = { "o.dist-info", "p.dist-info", "m.dist-info/RECORD", "m.dist-info/METADATA" };
	for (size_t i = 0; i < ARRAY_SIZE(made); i++) {
		snprintf(p, sizeof p, "%s/%s", dir, made[i]);
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/m.dist-info", dir);
	rmdir(p);
	rmdir(dir);
}

/* The pages fs_advise and fs_forget hand to madvise(), which refuses an
 * address off a page: on aarch64 a page is 4, 16 or 64 KiB. */
static void page_windows(void)
{
	const uintptr_t base = (uintptr_t)0x7f0000000000;	/* on a 64 KiB page */
	const uintptr_t k64 = 65536;
	uintptr_t s = 0, e = 0;
	bool ok = fs_page_window(base, 0x100000, 0x11000, 0x100, k64, true, &s, &e);
	CHECK(ok, "advise: a window inside one 64 KiB page is advised");
	CHECK_INT(s - base, 0x10000, "advise: starts on the 64 KiB page, not the 4 KiB one, which madvise refuses");
	CHECK_INT(e - base, 0x11100, "advise: ends where the window does");
	ok = fs_page_window(base, 0x5000, 0x1234, 0x100, 4096, true, &s, &e);
	CHECK(ok && s - base == 0x1000 && e - base == 0x1334, "advise: 4 KiB pages on x86");
	ok = fs_page_window(base, 0x5000, 0x1000, (size_t)-1, k64, true, &s, &e);
	CHECK(ok && s == base && e - base == 0x5000, "advise: a window past the mapping ends with it");
	CHECK(!fs_page_window(base, 0x5000, 0x5000, 1, k64, true, &s, &e), "advise: nothing past the mapping");
	CHECK(!fs_page_window(base, 0x5000, 0, 1, 3000, true, &s, &e), "advise: nothing for a page size not a power of two");
	ok = fs_page_window(base, 0x100000, 0x1000, 0x30000, k64, false, &s, &e);
	CHECK(ok && s - base == 0x10000 && e - base == 0x30000, "forget: only the whole 64 KiB pages inside the window");
	CHECK(!fs_page_window(base, 0x100000, 0x1000, 0x2000, k64, false, &s, &e),
	      "forget: nothing of a window inside one page (its neighbours' bytes share it)");
	ok = fs_page_window(base, 0x25000, 0x10000, 0x15000, k64, false, &s, &e);
	CHECK(ok && s - base == 0x10000 && e - base == 0x25000, "forget: the mapping's last, partial page when the window reaches its end");
	ok = fs_page_window(base, 0x25000, 0, 0x25000, k64, false, &s, &e);
	CHECK(ok && s == base && e - base == 0x25000, "forget: a whole mapping");
}

int main(void)
{
	paths();
	rooted();
	pseudo_below();
	page_windows();
	return unit_done();
}
