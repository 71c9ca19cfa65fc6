/* Unit tests: RECORD lines that are malformed are reported, not used. */
#include "unit.h"
#include "core/arena.h"
#include "pyenv/dist.h"

static void record_lines(void)
{
	struct arena a;
	arena_init(&a);
	struct dist d;
	memset(&d, 0, sizeof d);
	/* a path with an embedded NUL byte: C strings would cut it to "pkg/a" */
	static const char text[] = "pkg/a\0.so,sha256=x,3\npkg/b.py,,\n";
	record_parse(&a, "/sp", text, sizeof text - 1, &d);
	CHECK_INT(d.nfile, 1, "a RECORD line with a NUL byte is not used");
	CHECK(d.nfile == 1 && str_eq(d.file[0].rel, "/sp/pkg/b.py"), "the next line still is");
	CHECK(d.problems.n == 1 && strstr(d.problems.item[0], "line 1") != NULL,
	      "the NUL line is reported as malformed, with its number");
	arena_release(&a);
}

/* Rows are kept relative to the distribution's site where they lie under
 * it (the text itself where nothing was rewritten), absolute elsewhere,
 * and dist_file_path() gives back the absolute path either way. */
static void record_relative(void)
{
	struct arena a;
	arena_init(&a);
	struct dist d;
	memset(&d, 0, sizeof d);
	d.site = "/env/site";
	static const char text[] = "pkg/a.so,sha256=h,3\r\n\"pkg/q,\"\"x\"\"\",,\n./pkg//b.py,,\n"
				   "../../bin/tool,,\n/abs/elsewhere.so,,\n/env/site/pkg/c.py,,\npkg/../..,,\n";
	record_parse(&a, "/env/site", text, sizeof text - 1, &d);
	char buf[DIST_PATH_MAX];
	static const char *const rel[] = { "pkg/a.so", "pkg/q,\"x\"", "pkg/b.py", "/bin/tool", "/abs/elsewhere.so",
					   "pkg/c.py", "/env" };
	static const char *const abs[] = { "/env/site/pkg/a.so", "/env/site/pkg/q,\"x\"", "/env/site/pkg/b.py",
					   "/bin/tool", "/abs/elsewhere.so", "/env/site/pkg/c.py", "/env" };
	CHECK_INT(d.nfile, 7, "every row is kept");
	for (size_t i = 0; i < d.nfile && i < 7; i++) {
		CHECK(str_eq(d.file[i].rel, rel[i]), "row kept relative to the site where it lies under it");
		CHECK(str_eq(dist_file_path(&d, &d.file[i], buf, sizeof buf), abs[i]), "and its absolute path");
	}
	CHECK(d.nfile >= 1 && str_eq(d.file[0].hash, "sha256=h") && d.file[0].size == 3, "hash and size of a CRLF row");
	CHECK(d.problems.n == 0, "no row is malformed");
	arena_release(&a);
}

/* A RECORD parsed in its own (adopted) buffer gives the rows a copy gives,
 * including the names add_row's shortcut takes as they are: a dot that
 * begins a name is not "." or "..". */
static void record_in_place(void)
{
	static const char text[] = "pkg/.hidden/a.so,,\npkg/..x,,\npkg/x/./y.py,,\npkg/,,\npkg/x/..,,\n";
	static const char *const rel[] = { "pkg/.hidden/a.so", "pkg/..x", "pkg/x/y.py", "pkg", "pkg" };
	struct arena a;
	arena_init(&a);
	struct dist copied, in_place;
	memset(&copied, 0, sizeof copied);
	memset(&in_place, 0, sizeof in_place);
	copied.site = in_place.site = "/env/site";
	record_parse(&a, "/env/site", text, sizeof text - 1, &copied);
	char *own = malloc(sizeof text);
	memcpy(own, text, sizeof text);
	arena_adopt(&a, own);	/* freed by arena_release: ASan says if not */
	record_parse_in_place(&a, "/env/site", own, sizeof text - 1, &in_place);
	CHECK_INT(copied.nfile, 5, "every row is kept");
	CHECK_INT(in_place.nfile, copied.nfile, "in place: the same rows");
	for (size_t i = 0; i < copied.nfile && i < in_place.nfile && i < 5; i++) {
		CHECK(str_eq(copied.file[i].rel, rel[i]), "each row normalised");
		CHECK(str_eq(in_place.file[i].rel, rel[i]), "the same in place");
	}
	/* a site that is not plain takes the long way, with the same rows */
	struct dist slash;
	memset(&slash, 0, sizeof slash);
	slash.site = "/env/site/";
	record_parse(&a, slash.site, text, sizeof text - 1, &slash);
	CHECK_INT(slash.nfile, 5, "under a site with a trailing slash too");
	arena_release(&a);
}

int main(void)
{
	record_lines();
	record_relative();
	record_in_place();
	return unit_done();
}
