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
	CHECK(d.nfile == 1 && str_eq(d.file[0].path, "/sp/pkg/b.py"), "the next line still is");
	CHECK(d.problems.n == 1 && strstr(d.problems.item[0], "line 1") != NULL,
	      "the NUL line is reported as malformed, with its number");
	arena_release(&a);
}

int main(void)
{
	record_lines();
	return unit_done();
}
