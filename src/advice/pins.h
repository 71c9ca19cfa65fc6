/*
 * pins.h: what released torch and its companions require, from
 * data/torch/pins.tsv (tools/companion_pins.py reads PyPI's METADATA;
 * compiled into the binary, parsed on first use into the caller's arena).
 *
 * A plan that moves torch to another release needs what that release
 * installs (its Requires-Dist on the NVIDIA wheels, directly or through
 * cuda-toolkit[...]), and a plan that keeps torch needs the companion
 * release built for it (torchvision 0.24.1 requires torch==2.9.1).  The
 * installed environment's own METADATA always comes first (advice.c); this
 * table answers for releases that are not installed.
 */
#ifndef ABISCOPE_ADVICE_PINS_H
#define ABISCOPE_ADVICE_PINS_H

#include "core/arena.h"

struct pin_row {
	const char *dist;	/* normalised */
	const char *version;
	const char *requirement;	/* the Requires-Dist line, "" when none was kept */
};

struct pins {
	struct pin_row *row;
	size_t nrow;
};

/* The table, parsed once into a (*cache keeps it). */
const struct pins *pins_table(struct arena *a, struct pins **cache);

/* The rows of dist (normalised) at version: [*first, *first + return). */
size_t pins_of(const struct pins *t, const char *dist, const char *version, size_t *first);

/* The newest release of dist whose requirement on torch pins exactly
 * torch_version (its public part: "2.9.1" for "2.9.1+cu128"), or NULL. */
const char *pins_built_for(struct arena *a, const struct pins *t, const char *dist, const char *torch_version);

/* The raw table (tests). */
const char *pins_table_text(void);

#endif
