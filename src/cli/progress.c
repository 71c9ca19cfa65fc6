/*
 * progress.c: the progress line (progress.h).
 */
#include "cli/progress.h"
#include "cli/termsafe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SHOW_AFTER_MS 1000
#define REDRAW_MS 100

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (long)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* ESC [2K (erase the line) and ESC [G (to its first column), through the
 * terminal filter (termsafe.h): a carriage return would be escaped. */
static void erase(void)
{
	fprintf(stderr, "\033%s[2K\033%s[G", termsafe_mark(), termsafe_mark());
}

static void draw(void *ctx, const struct scan_progress *p)
{
	struct progress_line *pl = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ms_between(&pl->start, &now) < SHOW_AFTER_MS ||
	    (pl->drawn && ms_between(&pl->last, &now) < REDRAW_MS && p->done != p->total))
		return;
	pl->last = now;
	char count[64] = "";
	if (p->total)
		snprintf(count, sizeof count, " (%zu of %zu)", p->done, p->total);
	const char *item = p->item ? one_line(p->item) : "";
	/* the item's tail when the line is too long: the file name matters */
	size_t fixed = strlen("abiscope: ") + strlen(p->what) + 1 + strlen(count);
	size_t room = pl->width > fixed + 4 ? pl->width - 1 - fixed : 0, len = strlen(item);
	const char *ell = "";
	if (len > room) {
		item += len - (room > 3 ? room - 3 : 0);
		ell = room > 3 ? "..." : "";
		while ((*item & 0xc0) == 0x80)
			item++;	/* not inside a UTF-8 sequence */
	}
	erase();
	fprintf(stderr, "abiscope: %s %s%s%s", p->what, ell, item, count);
	fflush(stderr);
	pl->drawn = true;
}

static bool wanted(const struct common_opts *c)
{
	const char *term = getenv("TERM");
	return !c->quiet && isatty(STDERR_FILENO) && !(c->json && !isatty(STDOUT_FILENO)) &&
	       !(term && strcmp(term, "dumb") == 0);
}

void progress_attach(struct progress_line *pl, struct scan *s, const struct common_opts *c)
{
	memset(pl, 0, sizeof *pl);
	if (!wanted(c))
		return;
	struct winsize ws;
	pl->width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20 ? ws.ws_col : 80;
	clock_gettime(CLOCK_MONOTONIC, &pl->start);
	s->progress = draw;
	s->progress_ctx = pl;
}

void progress_end(struct progress_line *pl, struct scan *s)
{
	s->progress = NULL;
	s->progress_ctx = NULL;
	if (pl->drawn) {
		erase();
		fflush(stderr);
		pl->drawn = false;
	}
}
