/*
 * progress.h: one updating line on standard error while a long scan runs,
 * as uv and pip draw one: "abiscope: checking torch/lib/libtorch_cuda.so
 * (12 of 385)".  It appears once the scan has run for about a second, is
 * redrawn at most ten times a second and is erased when the scan ends.
 * Only on a terminal: never when standard error is not one, with -q, with
 * TERM=dumb, or with --json when standard output is not a terminal.  The
 * library reports (struct scan_progress in scan.h); this draws.
 */
#ifndef ABISCOPE_CLI_PROGRESS_H
#define ABISCOPE_CLI_PROGRESS_H

#include "cli/cli.h"
#include "scan.h"

#include <time.h>

struct progress_line {
	struct timespec start, last;
	bool drawn;
	unsigned width;		/* the terminal's columns */
};

/* Listens to s's progress when the options and the terminal allow it. */
void progress_attach(struct progress_line *pl, struct scan *s, const struct common_opts *c);
/* Erases the line (before the report is printed); the scan stops reporting. */
void progress_end(struct progress_line *pl, struct scan *s);

#endif
