/*
 * shrink_after_map.so: an LD_PRELOAD shim for the tests, never part of
 * abiscope (issue 26 item 1: the release binary has no test hooks).
 *
 *   SHRINK_AFTER_MAP=SUFFIX LD_PRELOAD=.../shrink_after_map.so abiscope ...
 *
 * halves each file whose path ends in SUFFIX just after the process maps
 * it, so "the file shrank while it was read" happens at a known moment
 * (tests/e2e/hostile.sh).  The write comes from this shim, a test build:
 * abiscope itself imports no call that truncates anything.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static void shrink_if_named(int fd)
{
	const char *suffix = getenv("SHRINK_AFTER_MAP");
	if (!suffix || !*suffix || fd < 0)
		return;
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	size_t k = strlen(suffix);
	struct stat st;
	if ((size_t)n < k || strcmp(path + n - k, suffix) != 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	if (truncate(path, st.st_size / 2) != 0)
		perror("shrink_after_map");
}

static void *mapped(const char *name, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	mmap_fn real = (mmap_fn)dlsym(RTLD_NEXT, name);
	void *p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && !(flags & MAP_ANONYMOUS))
		shrink_if_named(fd);
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mapped("mmap", addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mapped("mmap64", addr, len, prot, flags, fd, off);
}
