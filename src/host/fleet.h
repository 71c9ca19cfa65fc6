/*
 * fleet.h: many hosts at once, from their snapshots' summaries.
 *
 * Hosts whose summaries are equal in everything a load depends on (glibc,
 * driver, GPUs, Python, torch, hwcaps level, distribution versions, a digest
 * of every ELF object of the environment, the imports that fail) form one
 * class.  The largest class is the baseline; every other class is an
 * outlier, explained by what differs from the baseline, most consequential
 * first (imports that fail, then the platform, then binaries, then
 * distributions).  Only summaries are read, so hundreds of snapshots take
 * well under a second per hundred.
 */
#ifndef ABISCOPE_HOST_FLEET_H
#define ABISCOPE_HOST_FLEET_H

#include "host/snapshot.h"

struct fleet_host {
	const char *path;
	struct snap_summary sum;
	uint64_t fingerprint;
};

struct fleet_class {
	uint64_t fingerprint;
	size_t *member;		/* indices into the hosts */
	size_t n;
	struct ptrvec diffs;	/* const char *: how it differs from the baseline */
};

struct fleet {
	struct fleet_host *host;
	size_t nhost;
	struct fleet_class *cls;	/* cls[0] is the baseline; by size, then first seen */
	size_t ncls;
};

/* Groups the hosts (their summaries filled in) and explains each class. */
void fleet_group(struct arena *a, struct fleet *f);

uint64_t fleet_fingerprint(const struct snap_summary *s);

#endif
