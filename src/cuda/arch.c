#include "cuda/arch.h"

#include <ctype.h>

/* ---- tables (data/cuda/ (one .def file per table), with their sources) ---- */

struct gpu_row {
	const char *name;
	unsigned cc;
};

static const struct gpu_row gpu_table[] = {
#define GPU(name, cc) { name, cc },
#include "../../data/cuda/gpus.def"
#undef GPU
};

struct arch_row {
	unsigned sm, first, first_a, first_f, last;
};

static const struct arch_row arch_table[] = {
#define ARCH(sm, first, first_a, first_f, last) { sm, first, first_a, first_f, last },
#include "../../data/cuda/archs.def"
#undef ARCH
};

struct ptx_row {
	unsigned major, minor, cuda;
};

static const struct ptx_row ptx_table[] = {
#define PTX_ISA(major, minor, cuda) { major, minor, cuda },
#include "../../data/cuda/ptx_isa.def"
#undef PTX_ISA
};

struct driver_row {
	unsigned cuda;
	struct driver_version v;
};

static const struct driver_row driver_table[] = {
#define CUDA_DRIVER(cuda, a, b, c) { cuda, { a, b, c } },
#define CUDA_MAJOR_DRIVER(major, a, b, c)
#include "../../data/cuda/drivers.def"
#undef CUDA_DRIVER
#undef CUDA_MAJOR_DRIVER
};

static const struct driver_row major_driver_table[] = {
#define CUDA_DRIVER(cuda, a, b, c)
#define CUDA_MAJOR_DRIVER(major, a, b, c) { major, { a, b, c } },
#include "../../data/cuda/drivers.def"
#undef CUDA_DRIVER
#undef CUDA_MAJOR_DRIVER
};

static const char *const runtime_sonames[] = {
#define RUNTIME_SONAME(prefix) prefix,
#include "../../data/cuda/runtime_sonames.def"
#undef RUNTIME_SONAME
};

/* ---- compatibility rules ---- */

bool cuda_cubin_runs_on(unsigned sm, char variant, unsigned cc)
{
	if (variant == 'a')
		return sm == cc;
	/* Plain and family cubins: same major, equal or higher minor. */
	return sm / 10 == cc / 10 && sm % 10 <= cc % 10;
}

bool cuda_ptx_jits_for(unsigned sm, char variant, unsigned cc)
{
	if (variant == 'a')
		return sm == cc;
	if (variant == 'f')
		return sm / 10 == cc / 10 && sm % 10 <= cc % 10;
	return sm <= cc;
}

unsigned cuda_ptx_isa_release(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < ARRAY_SIZE(ptx_table); i++)
		if (ptx_table[i].major == major && ptx_table[i].minor == minor)
			return ptx_table[i].cuda;
	return 0;
}

unsigned cuda_ptx_isa_beyond(unsigned major, unsigned minor)
{
	const struct ptx_row *newest = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(ptx_table); i++)
		if (!newest || ptx_table[i].major * 100u + ptx_table[i].minor > newest->major * 100u + newest->minor)
			newest = &ptx_table[i];
	if (!newest || major * 100u + minor <= newest->major * 100u + newest->minor)
		return 0;
	return newest->cuda;
}

/* ---- drivers ---- */

bool cuda_parse_driver_version(const char *s, struct driver_version *out)
{
	unsigned part[3] = { 0, 0, 0 };
	int n = 0;
	const char *p = s;
	while (n < 3) {
		if (!isdigit((unsigned char)*p))
			return false;
		unsigned v = 0;
		int digits = 0;
		while (isdigit((unsigned char)*p) && digits < 9) {
			v = v * 10 + (unsigned)(*p - '0');
			p++;
			digits++;
		}
		if (isdigit((unsigned char)*p))
			return false;
		part[n++] = v;
		if (*p != '.')
			break;
		p++;
	}
	if (n < 2 || *p != '\0')
		return false;
	out->major = part[0];
	out->minor = part[1];
	out->patch = part[2];
	return true;
}

int cuda_driver_cmp(const struct driver_version *a, const struct driver_version *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return 0;
}

unsigned cuda_release_for_driver(const struct driver_version *v)
{
	unsigned best = 0;
	for (size_t i = 0; i < ARRAY_SIZE(driver_table); i++)
		if (cuda_driver_cmp(&driver_table[i].v, v) <= 0 && driver_table[i].cuda > best)
			best = driver_table[i].cuda;
	return best;
}

bool cuda_driver_for_release(unsigned cuda, struct driver_version *out)
{
	/* The release itself, else the next one listed (12.7 shipped no GA driver
	 * row of its own: the 12.8 driver is the first that certainly has it). */
	const struct driver_row *best = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(driver_table); i++)
		if (driver_table[i].cuda >= cuda && (!best || driver_table[i].cuda < best->cuda))
			best = &driver_table[i];
	if (!best)
		return false;
	*out = best->v;
	return true;
}

bool cuda_driver_for_major(unsigned major, struct driver_version *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(major_driver_table); i++)
		if (major_driver_table[i].cuda == major) {
			*out = major_driver_table[i].v;
			return true;
		}
	return false;
}

/* ---- architectures and toolkits ---- */

bool cuda_arch_toolkits(unsigned sm, char variant, unsigned *first, unsigned *last)
{
	for (size_t i = 0; i < ARRAY_SIZE(arch_table); i++) {
		const struct arch_row *r = &arch_table[i];
		if (r->sm != sm)
			continue;
		*first = variant == 'a' ? r->first_a : variant == 'f' ? r->first_f : r->first;
		*last = r->last;
		return true;
	}
	return false;
}

/* Lower-case alphanumerics only, without the vendor words. */
static void squash(const char *in, char *out, size_t outsz)
{
	size_t n = 0;
	for (const char *p = in; *p && n + 1 < outsz; p++)
		if (isalnum((unsigned char)*p))
			out[n++] = (char)tolower((unsigned char)*p);
	out[n] = '\0';
	static const char *const noise[] = { "nvidia", "geforce", "tesla" };
	for (size_t k = 0; k < ARRAY_SIZE(noise); k++) {
		size_t l = strlen(noise[k]);
		char *hit;
		while ((hit = strstr(out, noise[k])) != NULL)
			memmove(hit, hit + l, strlen(hit + l) + 1);
	}
}

static bool parse_uint(const char *s, unsigned *out, const char **end)
{
	if (!isdigit((unsigned char)*s))
		return false;
	unsigned v = 0;
	int digits = 0;
	while (isdigit((unsigned char)*s) && digits < 6) {
		v = v * 10 + (unsigned)(*s - '0');
		s++;
		digits++;
	}
	*out = v;
	*end = s;
	return !isdigit((unsigned char)*s);
}

bool cuda_parse_gpu_spec(const char *spec, unsigned *cc, const char **name)
{
	*name = NULL;
	const char *p = spec;
	if (str_starts(p, "sm_"))
		p += 3;
	else if (str_starts(p, "compute_"))
		p += 8;
	unsigned v;
	const char *end;
	if (parse_uint(p, &v, &end)) {
		if (*end == '.') {
			unsigned minor;
			const char *e2;
			if (v < 1 || v > 99 || !parse_uint(end + 1, &minor, &e2) || minor > 9 || *e2)
				return false;
			*cc = v * 10 + minor;
			return true;
		}
		/* sm_90a / sm_100f name the GPU they run on. */
		if ((*end == 'a' || *end == 'f') && end[1] == '\0' && p != spec)
			end++;
		if (*end == '\0' && v >= 10 && v <= 999) {
			*cc = v;
			return true;
		}
	}
	char want[128];
	squash(spec, want, sizeof want);
	if (!want[0])
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(gpu_table); i++) {
		char have[128];
		squash(gpu_table[i].name, have, sizeof have);
		if (str_eq(have, want)) {
			*cc = gpu_table[i].cc;
			*name = gpu_table[i].name;
			return true;
		}
	}
	/* Memory sizes and form factors ("H100 80GB HBM3", "A100-SXM4-40GB"):
	 * the longest product name the spec starts with. */
	const struct gpu_row *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < ARRAY_SIZE(gpu_table); i++) {
		char have[128];
		squash(gpu_table[i].name, have, sizeof have);
		size_t l = strlen(have);
		if (l >= 2 && l > best_len && strncmp(want, have, l) == 0) {
			best = &gpu_table[i];
			best_len = l;
		}
	}
	if (best) {
		*cc = best->cc;
		*name = best->name;
		return true;
	}
	return false;
}

const char *cuda_gpu_example(unsigned cc)
{
	for (size_t i = 0; i < ARRAY_SIZE(gpu_table); i++)
		if (gpu_table[i].cc == cc)
			return gpu_table[i].name;
	return NULL;
}

size_t cuda_known_ccs(unsigned *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(gpu_table); i++) {
		unsigned cc = gpu_table[i].cc;
		size_t k = 0;
		while (k < n && out[k] < cc)
			k++;
		if ((k < n && out[k] == cc) || n == max)
			continue;
		memmove(out + k + 1, out + k, (n - k) * sizeof *out);
		out[k] = cc;
		n++;
	}
	return n;
}

unsigned cuda_soname_major(const char *soname)
{
	for (size_t i = 0; i < ARRAY_SIZE(runtime_sonames); i++) {
		if (!str_starts(soname, runtime_sonames[i]))
			continue;
		unsigned v;
		const char *end;
		if (parse_uint(soname + strlen(runtime_sonames[i]), &v, &end) && (*end == '\0' || *end == '.') &&
		    v >= 7 && v <= 99)
			return v;
	}
	return 0;
}

void cuda_cc_string(unsigned cc, char *out, size_t outsz)
{
	snprintf(out, outsz, "%u.%u", cc / 10, cc % 10);
}

void cuda_release_string(unsigned cuda, char *out, size_t outsz)
{
	snprintf(out, outsz, "%u.%u", cuda / 1000, cuda % 1000 / 10);
}
