#include "pyenv/providers.h"
#include "pyenv/dist.h"

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

static const struct provider *parse_row(struct arena *a, const char *line, const char *eol)
{
	struct provider *pv = arena_alloc(a, sizeof *pv);
	const char *p = line;
	pv->soname = field(a, &p, eol);
	const char *maj = field(a, &p, eol);
	pv->cuda_major = (maj[0] >= '0' && maj[0] <= '9') ? (int)strtol(maj, NULL, 10) : 0;
	pv->dist = field(a, &p, eol);
	pv->folder = field(a, &p, eol);
	pv->note = p < eol ? field(a, &p, eol) : NULL;
	pv->version = p < eol ? field(a, &p, eol) : NULL;
	pv->pinned_by = p < eol ? field(a, &p, eol) : NULL;
	if (pv->note && !pv->note[0])
		pv->note = NULL;
	if (pv->version && !pv->version[0])
		pv->version = NULL;
	if (pv->pinned_by && !pv->pinned_by[0])
		pv->pinned_by = NULL;
	return pv;
}

const struct provider *provider_lookup_cuda(struct arena *a, const char *soname, int cuda_major)
{
	const char *text = abiscope_providers_tsv;
	size_t n = strlen(soname);
	const struct provider *first = NULL;
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		if (line[0] != '#' && (size_t)(eol - line) > n && strncmp(line, soname, n) == 0 &&
		    line[n] == '\t') {
			const struct provider *pv = parse_row(a, line, eol);
			if (!cuda_major || pv->cuda_major == cuda_major)
				return pv;
			if (!first)
				first = pv;
		}
		line = *eol ? eol + 1 : eol;
	}
	return first;
}

const struct provider *provider_lookup(struct arena *a, const char *soname)
{
	return provider_lookup_cuda(a, soname, 0);
}

const char *provider_pip_line(struct arena *a, const struct provider *pv)
{
	if (!pv || !pv->dist[0] || pv->dist[0] == '(' || strchr(pv->dist, ' '))
		return NULL;
	return pv->version ? arena_printf(a, "pip install %s==%s", pv->dist, pv->version)
			   : arena_printf(a, "pip install %s", pv->dist);
}

int provider_soname_major(struct arena *a, const char *soname)
{
	int found = 0;
	size_t n = strlen(soname);
	for (const char *line = abiscope_providers_tsv; *line;) {
		const char *eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		if (line[0] != '#' && (size_t)(eol - line) > n && strncmp(line, soname, n) == 0 && line[n] == '\t') {
			const struct provider *pv = parse_row(a, line, eol);
			if (!pv->cuda_major || (found && pv->cuda_major != found))
				return 0;	/* both majors ship it, or a row names none */
			found = pv->cuda_major;
		}
		line = *eol ? eol + 1 : eol;
	}
	return found;
}

/* "nvidia-curand-cu12" -> 12; 0 without a -cuNN suffix. */
static int suffix_major(const char *norm)
{
	const char *cu = strrchr(norm, '-');
	if (!cu || strncmp(cu, "-cu", 3) != 0 || !cu[3])
		return 0;
	char *end;
	long m = strtol(cu + 3, &end, 10);
	return *end == '\0' && m >= 9 && m <= 99 ? (int)m : 0;
}

int provider_file_major(struct arena *a, const char *path, const struct dist *owner, const struct object *o,
			const char **basis)
{
	const char *why = NULL;
	int m = 0;
	const char *cuf = path ? strstr(path, "/nvidia/cu") : NULL;
	int folder = 0;
	if (cuf) {
		char *end;
		long v = strtol(cuf + 10, &end, 10);
		if (end != cuf + 10 && *end == '/' && v >= 9 && v <= 99)
			folder = (int)v;
	}
	if (owner && owner->norm && (m = suffix_major(owner->norm)) != 0) {
		why = arena_printf(a, "installed by %s", owner->name);
	} else if (owner && owner->norm && str_starts(owner->norm, "nvidia-") && folder) {
		m = folder;
		why = arena_printf(a, "installed by %s into nvidia/cu%d", owner->name, folder);
	} else if (folder) {
		m = folder;
		why = arena_printf(a, "in nvidia/cu%d", folder);
	}
	if (!m && o && o->kind == OBJ_ELF && o->elf_ok) {
		if (o->elf.soname && (m = provider_soname_major(a, o->elf.soname)) != 0)
			why = arena_printf(a, "its soname %s is CUDA %d's only", o->elf.soname, m);
		for (size_t i = 0; !m && i < o->elf.nneeded; i++)
			if ((m = provider_soname_major(a, o->elf.needed[i])) != 0)
				why = arena_printf(a, "it needs %s", o->elf.needed[i]);
	}
	if (basis)
		*basis = why;
	return m;
}
