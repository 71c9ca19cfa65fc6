/*
 * tunables.h: what GLIBC_TUNABLES changes in a load.
 *
 * The caller passes the variable's value (the library never reads the
 * environment); tunables_parse() reads it the way glibc 2.36's
 * parse_tunables does (name=value pairs separated by ':', numbers by
 * _dl_strtoul, values outside a tunable's bounds ignored, the last
 * setting winning) and keeps the tunables that change what the loader
 * loads.  tunables_apply() changes a process's loader facts accordingly
 * and lists every tunable it saw, modelled or not, as an assumption.
 *
 * Everything lives in the caller's arena.
 */
#ifndef ABISCOPE_TUNABLES_H
#define ABISCOPE_TUNABLES_H

#include "loader/ldso.h"

struct glibc_tunables {
	const char *raw;		/* the value as given */
	const char *hwcaps;		/* glibc.cpu.hwcaps, NULL: unset */
	bool has_hwcap_mask;
	uint64_t hwcap_mask;		/* glibc.cpu.hwcap_mask */
	bool has_optional_static_tls;
	uint64_t optional_static_tls;	/* glibc.rtld.optional_static_tls */
	bool has_nns;
	uint64_t nns;			/* glibc.rtld.nns */
	struct ptrvec other;		/* "name=value" of every other setting */
};

void tunables_parse(struct arena *a, const char *value, struct glibc_tunables *t);

/* Applies t to facts (CPU features, hwcap mask) and returns the static
 * TLS surplus (glibc's default: 1664 bytes, from glibc.rtld.nns and
 * glibc.rtld.optional_static_tls); notes go to facts->notes. */
size_t tunables_apply(struct arena *a, const struct glibc_tunables *t, struct ldso_facts *facts,
		      bool facts_preset);
/* glibc.rtld.optional_static_tls: what TLS descriptors may take of the
 * surplus (512 bytes by default). */
size_t tunables_optional_static_tls(const struct glibc_tunables *t);

#endif
