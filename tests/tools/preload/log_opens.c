/*
 * log_opens.so: an LD_PRELOAD shim for the tests, never part of abiscope.
 *
 *   OPEN_LOG=FILE LD_PRELOAD=.../log_opens.so abiscope ...
 *
 * appends one line per open() (and fortified __open_2/__open64_2), opendir() and stat() the process
 * makes ("open PATH", "dir PATH", "stat PATH") to FILE, so a test can say how often each file was
 * read, each directory listed and each file's size asked (tests/e2e/reads_once.sh).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void note(const char *what, const char *path)
{
	const char *log = getenv("OPEN_LOG");
	if (!log || !*log || !path)
		return;
	int (*real_open)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	int fd = real_open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	char line[8192];
	size_t a = strlen(what), b = strlen(path);
	if (a + b + 2 <= sizeof line) {
		memcpy(line, what, a);
		line[a] = ' ';
		memcpy(line + a + 1, path, b);
		line[a + 1 + b] = '\n';
		if (write(fd, line, a + b + 2) < 0)
			line[0] = 0;
	}
	close(fd);
}

static int opened(const char *name, const char *path, int flags, va_list ap)
{
	mode_t mode = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
	note("open", path);
	return real(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int fd = opened("open", path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int fd = opened("open64", path, flags, ap);
	va_end(ap);
	return fd;
}

/* the fortified open(): a compiler that defines _FORTIFY_SOURCE itself
 * (Ubuntu's gcc, at -O1 and above) turns each open() whose flags are not a
 * constant into __open64_2 (__open_2 without _FILE_OFFSET_BITS=64) */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);

int __open_2(const char *path, int flags)
{
	int (*real)(const char *, int) = (int (*)(const char *, int))dlsym(RTLD_NEXT, "__open_2");
	note("open", path);
	return real(path, flags);
}

int __open64_2(const char *path, int flags)
{
	int (*real)(const char *, int) = (int (*)(const char *, int))dlsym(RTLD_NEXT, "__open64_2");
	note("open", path);
	return real(path, flags);
}

DIR *opendir(const char *path)
{
	DIR *(*real)(const char *) = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	note("dir", path);
	return real(path);
}

/* stat() is a function of its own in glibc since 2.33 (stat64 where off_t
 * is 64 bits wide, as abiscope builds) */
int stat64(const char *path, struct stat64 *st);

int stat(const char *path, struct stat *st)
{
	int (*real)(const char *, struct stat *) = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "stat");
	note("stat", path);
	return real(path, st);
}

int stat64(const char *path, struct stat64 *st)
{
	int (*real)(const char *, struct stat64 *) =
		(int (*)(const char *, struct stat64 *))dlsym(RTLD_NEXT, "stat64");
	note("stat", path);
	return real(path, st);
}
