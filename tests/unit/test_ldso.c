/* Unit tests: the facts read from the loader binary's bytes (issue 13
 * item 17: a crafted loader under --root is hostile input). */
#include "unit.h"
#include "loader/ldso.h"

/* The bytes in a malloc'd block of exactly their size, so that ASan sees
 * any read past the end. */
static struct ldso_facts facts_of(struct arena *a, const char *text, size_t len, bool *found)
{
	struct ldso_facts f;
	memset(&f, 0, sizeof f);
	uint8_t *copy = malloc(len);
	memcpy(copy, text, len);
	*found = ldso_read_binary(a, bytes_make(copy, len, false), &f);
	free(copy);
	return f;
}

int main(void)
{
	struct arena a;
	arena_init(&a);
	bool found;
	static const char real[] = "\0GNU C Library (Debian GLIBC 2.36-9) stable release version 2.36.\n"
				   "\0/lib/x86_64-linux-gnu/\0/usr/lib/x86_64-linux-gnu/\0/lib/\0/usr/lib/\0";
	struct ldso_facts f = facts_of(&a, real, sizeof real - 1, &found);
	CHECK_INT(f.glibc_major * 100 + f.glibc_minor, 236, "a real banner gives glibc 2.36");
	CHECK_STR(f.glibc_banner, "GNU C Library (Debian GLIBC 2.36-9) stable release version 2.36.",
		  "the banner line is kept whole");
	CHECK(found && f.nsystem_dirs == 4, "SYSTEM_DIRS gives four directories");
	CHECK_STR(found ? f.system_dirs[1] : "", "/usr/lib/x86_64-linux-gnu/", "in their order");

	static const char huge[] = "release version 99999999999999.36.\n";
	f = facts_of(&a, huge, sizeof huge - 1, &found);
	CHECK_INT(f.glibc_major, 0, "a 14-digit release is no release (no signed overflow)");
	static const char huge_minor[] = "release version 2.99999999999999.\n";
	f = facts_of(&a, huge_minor, sizeof huge_minor - 1, &found);
	CHECK_INT(f.glibc_major, 0, "a 14-digit minor is no release");
	static const char cut[] = "release version 2.";
	f = facts_of(&a, cut, sizeof cut - 1, &found);
	CHECK_INT(f.glibc_major, 0, "a banner cut after the dot is no release");

	static const char tail[] = "xxxx\0/li";
	f = facts_of(&a, tail, sizeof tail - 1, &found);
	CHECK(!found, "a file ending in \"\\0/li\" has no SYSTEM_DIRS (and is not read past its end)");
	static const char unterminated[] = "x\0/lib/\0/usr/lib/";
	f = facts_of(&a, unterminated, sizeof unterminated - 1, &found);
	CHECK(found && f.nsystem_dirs == 1, "a directory string not terminated inside the file is not taken");
	arena_release(&a);
	return unit_done();
}
