/*
 * causes.c: which failure of a load explains which (an undefined symbol
 * by the library that would have defined it), and the NVIDIA API families
 * that tell.
 */
#include "loader/internal.h"

/* C API families of the NVIDIA libraries: a prefix, what follows it (an
 * upper-case letter, or anything), the SONAME stem and how to say it. */
static const struct api_family {
	const char *prefix;
	bool upper_next;
	const char *stem;
	const char *api;
} api_families[] = {
	{ "cuFile", false, "libcufile.so", "cuFile*" },
	{ "cu", true, "libcuda.so", "cu* (the driver API)" },
	{ "__cuda", false, "libcudart.so", "cuda* (the runtime API)" },
	{ "cuda", true, "libcudart.so", "cuda* (the runtime API)" },
	{ "nvrtc", false, "libnvrtc.so", "nvrtc*" },
	{ "nvJitLink", false, "libnvJitLink.so", "nvJitLink*" },
	{ "cublasLt", false, "libcublasLt.so", "cublasLt*" },
	{ "cublas", false, "libcublas.so", "cublas*" },
	{ "cufft", false, "libcufft.so", "cufft*" },
	{ "curand", false, "libcurand.so", "curand*" },
	{ "cusparseLt", false, "libcusparseLt.so", "cusparseLt*" },
	{ "cusparse", false, "libcusparse.so", "cusparse*" },
	{ "cusolver", false, "libcusolver.so", "cusolver*" },
	{ "cudnn", false, "libcudnn.so", "cudnn*" },
	{ "cupti", false, "libcupti.so", "cupti*" },
	{ "nccl", false, "libnccl.so", "nccl*" },
	{ "nvml", false, "libnvidia-ml.so", "nvml*" },
};

static const struct api_family *api_of_symbol(const char *sym)
{
	const struct api_family *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < ARRAY_SIZE(api_families); i++) {
		const struct api_family *f = &api_families[i];
		size_t n = strlen(f->prefix);
		if (strncmp(sym, f->prefix, n) != 0 || n <= best_len)
			continue;
		if (f->upper_next && !(sym[n] >= 'A' && sym[n] <= 'Z'))
			continue;
		best = f;
		best_len = n;
	}
	return best;
}

static const struct api_family *api_of_library(const char *lib)
{
	const char *base = path_basename(lib);
	for (size_t i = 0; i < ARRAY_SIZE(api_families); i++) {
		size_t n = strlen(api_families[i].stem);
		/* "libcuda.so" matches libcuda.so and libcuda.so.1, not libcudart.so */
		if (strncmp(base, api_families[i].stem, n) == 0 && (base[n] == 0 || base[n] == '.'))
			return &api_families[i];
	}
	return NULL;
}

const char *failure_api_owner(const char *symbol)
{
	const struct api_family *f = api_of_symbol(symbol);
	return f ? f->stem : NULL;
}

const char *failure_api_of_library(const char *library)
{
	const struct api_family *f = api_of_library(library);
	return f ? f->api : NULL;
}

static bool missing_kind(enum failure_kind k)
{
	return k == FAIL_NOT_FOUND || k == FAIL_WRONG_CLASS || k == FAIL_INVALID || k == FAIL_CANNOT_LOAD;
}

/*
 * A library that could not be loaded explains an undefined symbol only
 * when it could have defined it: the symbol's version names the file
 * (certain), the symbol is of the library's known API (cu* for
 * libcuda.so.1), or, for a library of no known API and a symbol of no
 * known family, the requester needed it directly or it is the only one
 * missing (guesses; the finding layer drops these when a loaded library
 * has a near miss, which is then the symbol's own root cause).
 */
void link_causes(struct process *p, struct failure *item, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct failure *f = &item[i];
		if (f->kind != FAIL_UNDEFINED && f->kind != FAIL_LAZY_UNDEFINED)
			continue;
		f->cause = -1;
		f->cause_guess = false;
		f->cause_basis = NULL;
		for (size_t k = 0; k < n && f->version; k++) {
			/* the version node itself is missing: certain */
			const struct failure *c = &item[k];
			if (c->kind == FAIL_VERSION && c->version && str_eq(c->version, f->version) &&
			    c->requester == f->requester) {
				f->cause = (int)k;
				f->cause_basis = "the symbol's version is one the library lacks";
				break;
			}
		}
		if (f->cause >= 0)
			continue;
		const struct api_family *sym_api = api_of_symbol(f->name);
		int byfile = -1, byapi = -1, direct = -1, any = -1, nunknown = 0;
		for (size_t k = 0; k < n; k++) {
			const struct failure *c = &item[k];
			if (!missing_kind(c->kind) || !c->name)
				continue;
			if (f->version_file && str_eq(c->name, f->version_file) && byfile < 0)
				byfile = (int)k;
			const struct api_family *lib_api = api_of_library(c->name);
			if (sym_api && lib_api) {
				if (str_eq(sym_api->stem, lib_api->stem) && byapi < 0)
					byapi = (int)k;
				continue;
			}
			if (sym_api || lib_api)
				continue;	/* one side has a known API the other is not of */
			nunknown++;
			if (any < 0)
				any = (int)k;
			if (c->requester == f->requester && direct < 0)
				direct = (int)k;
		}
		if (byfile >= 0) {
			f->cause = byfile;
			f->cause_basis = "the symbol's version names this library";
		} else if (byapi >= 0) {
			f->cause = byapi;
			f->cause_guess = true;
			f->cause_basis = arena_printf(p->arena, "%s is the API of %s", sym_api->api,
						      item[byapi].name);
		} else if (direct >= 0) {
			f->cause = direct;
			f->cause_guess = true;
			f->cause_basis = arena_printf(p->arena, "%s needs %s directly and it is missing",
						      path_basename(f->requester_path), item[direct].name);
		} else if (nunknown == 1) {
			f->cause = any;
			f->cause_guess = true;
			f->cause_basis = "the only library of the load that is missing";
		}
	}
}

