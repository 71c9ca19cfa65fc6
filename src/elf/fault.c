/*
 * fault.c: a loader fault (struct elf_fault) as one line of text, for the
 * ELF images made from a snapshot (host/synth.c writes it behind
 * DT_ABISCOPE_FAULT, elf.c reads it back).  Fields are separated by tabs,
 * which no field holds: the texts are abiscope's own and glibc's.
 */
#include "elf/elf.h"

#include <stdlib.h>

#define FAULT_FIELDS 11
#define FAULT_MAGIC "fault1"

static const char *field(const char *s)
{
	return s ? s : "";
}

const char *elf_fault_encode(struct arena *a, const struct elf_fault *f)
{
	return arena_printf(a, FAULT_MAGIC "\t%d\t%d\t%d\t%llu\t%s\t%s\t%s\t%s\t%s\t%s\t%d", (int)f->phase,
			    f->signal, f->guess ? 1 : 0, (unsigned long long)f->at, field(f->table),
			    field(f->what), field(f->dlerror), field(f->assert_file), field(f->assert_fn),
			    field(f->assert_expr), f->assert_line);
}

static const char *opt(const char *s)
{
	return s[0] ? s : NULL;
}

bool elf_fault_decode(struct arena *a, const char *text, struct elf_fault *f)
{
	memset(f, 0, sizeof *f);
	char *copy = arena_strdup(a, text);
	char *part[FAULT_FIELDS + 1];
	size_t n = 0;
	for (char *p = copy; n <= FAULT_FIELDS;) {
		part[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	if (n != FAULT_FIELDS + 1 || !str_eq(part[0], FAULT_MAGIC))
		return false;
	char *end;
	long phase = strtol(part[1], &end, 10);
	if (*end || phase < FAULT_MAP || phase > FAULT_LOOKUP)
		return false;
	long sig = strtol(part[2], &end, 10);
	if (*end || sig < 0 || sig > 64)
		return false;
	f->phase = (enum elf_fault_phase)phase;
	f->signal = (int)sig;
	f->guess = str_eq(part[3], "1");
	f->at = strtoull(part[4], NULL, 10);
	f->table = opt(part[5]);
	f->what = opt(part[6]);
	f->dlerror = opt(part[7]);
	f->assert_file = opt(part[8]);
	f->assert_fn = opt(part[9]);
	f->assert_expr = opt(part[10]);
	f->assert_line = (int)strtol(part[11], NULL, 10);
	/* one of the three outcomes, and a table to name */
	if (!f->table || (!f->signal && !f->dlerror && !f->assert_expr))
		return false;
	return true;
}
