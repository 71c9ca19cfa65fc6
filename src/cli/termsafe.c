#include "cli/termsafe.h"

#include "core/arena.h"
#include "core/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MARK_LEN 12
#define PENDING_MAX 32

static char mark[MARK_LEN + 1];
static bool installed;

struct sink {
	FILE *raw;		/* the original descriptor, buffered */
	unsigned char pending[PENDING_MAX];
	size_t npending;
	bool discard;		/* -qq: what is written goes nowhere */
	int err;		/* the first write error (errno), 0 while none */
};

static struct sink sinks[2];
static FILE *wrapped[2];
static struct arena lines;
static bool lines_ready;

const char *termsafe_mark(void)
{
	return installed ? mark : "";
}

/* Length of the UTF-8 sequence led by c, 0 for a byte that cannot lead. */
static size_t lead_len(unsigned char c)
{
	return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
}

/* Characters a terminal acts on instead of showing. */
static bool is_control(long cp)
{
	return (cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7f && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Bytes shown as they are go out in one write per run, not one per byte. */
static void write_run(FILE *out, const unsigned char *p, size_t from, size_t to)
{
	if (to > from)
		fwrite(p + from, 1, to - from, out);
}

size_t termsafe_escape(FILE *out, const unsigned char *p, size_t n, bool final)
{
	size_t i = 0, run = 0;	/* p[run, i): shown as they are, not yet written */
	while (i < n) {
		unsigned char c = p[i];
		if (c >= 0x20 && c < 0x7f) {
			i++;	/* printable ASCII, the bulk of every report */
			continue;
		}
		if (c == 0x1b && installed) {
			if (n - i < 1 + MARK_LEN && !final && memcmp(p + i + 1, mark, n - i - 1) == 0) {
				write_run(out, p, run, i);
				return i;	/* maybe our mark: wait for the rest */
			}
			if (n - i >= 1 + MARK_LEN && memcmp(p + i + 1, mark, MARK_LEN) == 0) {
				write_run(out, p, run, i);
				fputc(0x1b, out);
				i += 1 + MARK_LEN;
				run = i;
				continue;
			}
		}
		size_t len = lead_len(c);
		if (len > 1 && n - i < len && !final) {
			bool prefix_ok = true;
			for (size_t k = i + 1; k < n; k++)
				prefix_ok &= (p[k] & 0xc0) == 0x80;
			if (prefix_ok) {
				write_run(out, p, run, i);
				return i;	/* the rest comes with the next write */
			}
		}
		uint32_t u;
		long cp = len && n - i >= len && utf8_seq(p + i, len, &u) == len ? (long)u : -1;
		if (cp < 0) {
			write_run(out, p, run, i);
			fprintf(out, "\\x%02x", c);
			run = ++i;
		} else if (is_control(cp)) {
			write_run(out, p, run, i);
			fprintf(out, "\\u%04lx", (unsigned long)cp);
			run = i += len;
		} else {
			i += len;
		}
	}
	write_run(out, p, run, i);
	return i;
}

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
	struct sink *s = cookie;
	size_t done = 0;
	if (s->discard)
		return (ssize_t)size;
	while (done < size) {
		/* the pending tail first, joined with the head of buf */
		unsigned char work[PENDING_MAX + 4096];
		size_t take = MIN(size - done, sizeof work - s->npending);
		memcpy(work, s->pending, s->npending);
		memcpy(work + s->npending, buf + done, take);
		size_t n = s->npending + take;
		size_t used = termsafe_escape(s->raw, work, n, false);
		s->npending = n - used;
		memmove(s->pending, work + used, s->npending);
		done += take;
	}
	/* a full disk or a closed pipe: remembered, and termsafe_finish()
	 * tells main() the report was lost.  The write is taken as done (what
	 * follows is dropped): stdio's large-write path does not survive a
	 * cookie stream's -1 (glibc 2.36 crashed copying a 7 MB fwrite) */
	if (fflush(s->raw) != 0 || ferror(s->raw)) {
		if (!s->err)
			s->err = errno ? errno : EIO;
		s->discard = true;
	}
	return (ssize_t)size;
}

static void sink_final(struct sink *s)
{
	if (s->npending && !s->discard)
		termsafe_escape(s->raw, s->pending, s->npending, true);
	s->npending = 0;
	if ((fflush(s->raw) != 0 || ferror(s->raw)) && !s->err)
		s->err = errno ? errno : EIO;
}

int termsafe_finish(void)
{
	if (!installed)
		return fflush(stdout) != 0 || ferror(stdout) ? (errno ? errno : EIO) : 0;
	if ((fflush(wrapped[0]) != 0 || ferror(wrapped[0])) && !sinks[0].err)
		sinks[0].err = errno ? errno : EIO;
	sink_final(&sinks[0]);
	return sinks[0].err;
}

static void at_exit(void)
{
	for (int i = 0; i < 2; i++) {
		if (!wrapped[i])
			continue;
		fflush(wrapped[i]);
		sink_final(&sinks[i]);
	}
	if (lines_ready)
		arena_release(&lines);
}

/* getrandom(2) by its system call: the wheel's binary runs on glibc 2.17,
 * which has no getrandom() (2.25); a kernel without it says ENOSYS. */
#ifndef GRND_NONBLOCK
#define GRND_NONBLOCK 0x0001
#endif

static void make_mark(void)
{
	unsigned char r[MARK_LEN];
	if (syscall(SYS_getrandom, r, sizeof r, GRND_NONBLOCK) != (long)sizeof r) {
		uint64_t x = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&r;
		for (size_t i = 0; i < sizeof r; i++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			r[i] = (unsigned char)(x >> 56);
		}
	}
	/* letters only: the mark is printable and cannot end the sequence */
	for (size_t i = 0; i < MARK_LEN; i++)
		mark[i] = (char)('a' + r[i] % 26);
	mark[MARK_LEN] = '\0';
}

static FILE *wrap(int which, int fd, int mode)
{
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (copy < 0)
		return NULL;
	FILE *raw = fdopen(copy, "w");
	if (!raw) {
		close(copy);
		return NULL;
	}
	sinks[which].raw = raw;
	cookie_io_functions_t io = { .write = sink_write };
	FILE *f = fopencookie(&sinks[which], "w", io);
	if (!f) {
		fclose(raw);
		return NULL;
	}
	setvbuf(f, NULL, mode, BUFSIZ);
	wrapped[which] = f;
	return f;
}

void termsafe_install(void)
{
	if (installed)
		return;
	make_mark();
	fflush(stdout);
	fflush(stderr);
	FILE *out = wrap(0, STDOUT_FILENO, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
	FILE *err = wrap(1, STDERR_FILENO, _IONBF);
	if (!out || !err)
		return;	/* no descriptors left: print unfiltered rather than not at all */
	stdout = out;
	stderr = err;
	installed = true;
	atexit(at_exit);
}

void termsafe_silence_stdout(void)
{
	fflush(stdout);
	if (installed)
		sinks[0].discard = true;
}

const char *one_line(const char *s)
{
	if (!s || !strpbrk(s, "\n\r"))
		return s;
	if (!lines_ready) {
		arena_init(&lines);
		lines_ready = true;
	}
	size_t n = strlen(s), k = 0;
	char *out = arena_alloc(&lines, 2 * n + 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n' || s[i] == '\r') {
			out[k++] = '\\';
			out[k++] = s[i] == '\n' ? 'n' : 'r';
		} else {
			out[k++] = s[i];
		}
	}
	out[k] = '\0';
	return out;
}
