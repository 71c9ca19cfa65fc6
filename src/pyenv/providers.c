#include "pyenv/providers.h"

/* The table is embedded as-is; the Makefile makes this object depend on it. */
__asm__(".section .rodata\n"
	".global abiscope_providers_tsv\n"
	".type abiscope_providers_tsv, @object\n"
	"abiscope_providers_tsv:\n"
	".incbin \"data/pyenv/providers.tsv\"\n"
	".byte 0\n"
	".previous\n");
extern const char abiscope_providers_tsv[];

const char *providers_table_text(void)
{
	return abiscope_providers_tsv;
}

static const char *field(struct arena *a, const char **p, const char *eol)
{
	const char *s = *p;
	const char *t = s;
	while (t < eol && *t != '\t')
		t++;
	*p = t < eol ? t + 1 : eol;
	return arena_strndup(a, s, (size_t)(t - s));
}

const struct provider *provider_lookup(struct arena *a, const char *soname)
{
	const char *text = abiscope_providers_tsv;
	size_t n = strlen(soname);
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		if (line[0] != '#' && (size_t)(eol - line) > n && strncmp(line, soname, n) == 0 &&
		    line[n] == '\t') {
			struct provider *pv = arena_alloc(a, sizeof *pv);
			const char *p = line;
			pv->soname = field(a, &p, eol);
			const char *maj = field(a, &p, eol);
			pv->cuda_major = (maj[0] >= '0' && maj[0] <= '9') ? (int)strtol(maj, NULL, 10) : 0;
			pv->dist = field(a, &p, eol);
			pv->folder = field(a, &p, eol);
			pv->note = p < eol ? field(a, &p, eol) : NULL;
			return pv;
		}
		line = *eol ? eol + 1 : eol;
	}
	return NULL;
}
