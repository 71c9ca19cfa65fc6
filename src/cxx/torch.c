#include "cxx/torch.h"
#include "cxx/abi.h"

/* ---- torch/version.py ---- */

static int at(const struct bytes *b, uint64_t i)
{
	uint8_t c;
	return bytes_u8(b, i, &c) ? c : -1;
}

static bool ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ident_char(int c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

static uint64_t skip_blanks(const struct bytes *b, uint64_t i, uint64_t end)
{
	while (i < end && (at(b, i) == ' ' || at(b, i) == '\t'))
		i++;
	return i;
}

static bool word_is(const struct bytes *b, uint64_t i, uint64_t end, const char *w)
{
	size_t n = strlen(w);
	const uint8_t *p = i + n <= end ? bytes_at(b, i, n) : NULL;
	return p && memcmp(p, w, n) == 0 && !ident_char(at(b, i + n));
}

enum literal { LIT_NONE, LIT_STRING, LIT_NULL, LIT_TRUE, LIT_FALSE };

/*
 * One line "name[: annotation] = literal [# comment]" in [ls, le).
 * Returns false when the line is not such an assignment.
 */
static bool assignment(struct arena *a, const struct bytes *b, uint64_t ls, uint64_t le, const char **name,
		       enum literal *kind, const char **value)
{
	uint64_t i = ls;
	if (!ident_start(at(b, i)))
		return false;	/* indented, a comment, or not an assignment */
	uint64_t ns = i;
	while (i < le && ident_char(at(b, i)))
		i++;
	const uint8_t *np = bytes_at(b, ns, i - ns);
	if (!np || i - ns > 64)
		return false;
	*name = arena_strndup(a, (const char *)np, i - ns);
	i = skip_blanks(b, i, le);
	if (at(b, i) == ':') {
		/* a type annotation: up to the '=' */
		while (i < le && at(b, i) != '=')
			i++;
	}
	if (i >= le || at(b, i) != '=' || at(b, i + 1) == '=')
		return false;
	i = skip_blanks(b, i + 1, le);
	int q = at(b, i);
	*value = NULL;
	if (q == '\'' || q == '"') {
		uint64_t vs = ++i;
		while (i < le && at(b, i) != q && at(b, i) != '\\')
			i++;
		if (i >= le || at(b, i) != q || i - vs > TORCH_VALUE_MAX)
			return false;	/* unterminated, escaped or too long: not a plain literal */
		const uint8_t *vp = bytes_at(b, vs, i - vs);
		if (!vp)
			return false;
		for (uint64_t k = 0; k < i - vs; k++)
			if (vp[k] < 0x20 || vp[k] > 0x7e)
				return false;
		*value = arena_strndup(a, (const char *)vp, i - vs);
		*kind = LIT_STRING;
		i++;
	} else if (word_is(b, i, le, "None")) {
		*kind = LIT_NULL;
		i += 4;
	} else if (word_is(b, i, le, "True")) {
		*kind = LIT_TRUE;
		i += 4;
	} else if (word_is(b, i, le, "False")) {
		*kind = LIT_FALSE;
		i += 5;
	} else {
		return false;
	}
	i = skip_blanks(b, i, le);
	return i >= le || at(b, i) == '#' || at(b, i) == '\r';
}

enum status torch_version_py_parse(struct arena *a, struct bytes text, const char *path,
				   struct torch_version_py *out, struct diag *d)
{
	memset(out, 0, sizeof *out);
	if (text.len > TORCH_VERSION_PY_MAX)
		return diag_set(d, ST_LIMIT, path, TORCH_VERSION_PY_MAX, "version.py is larger than %d bytes",
				TORCH_VERSION_PY_MAX);
	uint64_t pos = 0;
	uint64_t version_line = DIAG_NO_OFFSET;
	while (pos < text.len) {
		uint64_t ls = pos, le = pos;
		while (le < text.len && at(&text, le) != '\n')
			le++;
		pos = le + 1;
		const char *name, *value;
		enum literal kind;
		if (word_is(&text, ls, le, "__version__"))
			version_line = ls;
		if (!assignment(a, &text, ls, le, &name, &kind, &value))
			continue;
		const char *s = kind == LIT_STRING ? value : NULL;
		if (str_eq(name, "__version__") && s) {
			out->version = s;
			out->has_version = true;
		} else if (str_eq(name, "cuda")) {
			out->cuda = s;
		} else if (str_eq(name, "git_version")) {
			out->git_version = s;
		} else if (str_eq(name, "hip")) {
			out->hip = s;
		} else if (str_eq(name, "rocm")) {
			out->rocm = s;
		} else if (str_eq(name, "xpu")) {
			out->xpu = s;
		} else if (str_eq(name, "debug")) {
			out->debug = kind == LIT_TRUE;
		}
	}
	if (!out->has_version) {
		if (version_line != DIAG_NO_OFFSET)
			return diag_set(d, ST_MALFORMED, path, version_line,
					"__version__ is not assigned a plain string literal");
		return diag_set(d, ST_MALFORMED, path, DIAG_NO_OFFSET, "no __version__ assignment");
	}
	return ST_OK;
}

const char *torch_local_tag(struct arena *a, const char *version)
{
	const char *plus = version ? strchr(version, '+') : NULL;
	if (!plus || !plus[1])
		return NULL;
	return arena_strdup(a, plus + 1);
}

/* ---- the installed torch ---- */

/* The leading decimal number of s ("13" of "13.0"), or -1. */
static int leading_number(const char *s)
{
	int v = 0;
	size_t k = 0;
	while (s[k] >= '0' && s[k] <= '9' && k < 6)
		v = v * 10 + (s[k++] - '0');
	return k ? v : -1;
}

static const struct object *elf_at(struct objcache *oc, const char *path)
{
	struct diag d;
	diag_clear(&d);
	const struct object *o = objcache_get(oc, path, &d);
	return o && o->kind == OBJ_ELF && o->elf_ok ? o : NULL;
}

enum status torch_identify(struct arena *a, struct objcache *oc, const char *dir,
			   struct torch_identity *id, struct diag *d)
{
	memset(id, 0, sizeof *id);
	id->dir = dir;
	id->cxx11_abi = -1;
	id->cudart_major = -1;
	diag_clear(&id->problem);
	const char *vp = arena_printf(a, "%s/version.py", dir);
	char *text = NULL;
	size_t len = 0;
	struct diag rd;
	diag_clear(&rd);
	if (fs_read_small(oc->fs, vp, TORCH_VERSION_PY_MAX, &text, &len, &rd) != ST_OK) {
		*d = rd;
		return rd.status == ST_OK ? ST_NOT_FOUND : rd.status;
	}
	enum status st = torch_version_py_parse(a, bytes_make(text, len, false), vp, &id->v, &id->problem);
	free(text);
	if (st != ST_OK)
		*d = id->problem;
	id->local_tag = torch_local_tag(a, id->v.version);

	const char *c10 = arena_printf(a, "%s/lib/libc10.so", dir);
	const struct object *o = elf_at(oc, c10);
	if (o) {
		id->libc10 = c10;
		id->cxx11_abi = cxx_abi_of(a, o, false, NULL, NULL, &id->abi_example);
	} else {
		diag_set(&id->problem, ST_NOT_FOUND, c10, DIAG_NO_OFFSET, "libc10.so is missing or not ELF");
	}
	static const char *const cuda_libs[] = { "libtorch_cuda.so", "libc10_cuda.so" };
	for (size_t i = 0; i < ARRAY_SIZE(cuda_libs) && !id->cudart; i++) {
		o = elf_at(oc, arena_printf(a, "%s/lib/%s", dir, cuda_libs[i]));
		if (!o)
			continue;
		id->cuda_build = true;
		for (size_t k = 0; k < o->elf.nneeded; k++)
			if (str_starts(o->elf.needed[k], "libcudart.so.")) {
				id->cudart = o->elf.needed[k];
				id->cudart_major = leading_number(o->elf.needed[k] + strlen("libcudart.so."));
			}
	}
	return st;
}

const char *torch_dir_of(struct arena *a, const char *path)
{
	static const char *const marks[] = { "/torch/lib/", "/torch/_C" };
	for (size_t i = 0; i < ARRAY_SIZE(marks); i++) {
		const char *m = strstr(path, marks[i]);
		if (m)
			return arena_strndup(a, path, (size_t)(m - path) + strlen("/torch"));
	}
	return NULL;
}

const char *torch_dir_near(struct arena *a, const struct fsview *fs, const char *path, int max_up)
{
	char dir[4096];
	path_dirname(path, dir, sizeof dir);
	for (int i = 0; i < max_up; i++) {
		const char *cand = arena_printf(a, "%s/torch/version.py", dir);
		struct fs_stat st;
		fs_stat(fs, cand, &st);
		if (st.kind == FS_REGULAR)
			return arena_printf(a, "%s/torch", str_eq(dir, "/") ? "" : dir);
		char up[4096];
		path_dirname(dir, up, sizeof up);
		if (str_eq(up, dir))
			break;
		memcpy(dir, up, sizeof dir);
	}
	return NULL;
}

/* b is stem's library: stem then '.' or '_' (libtorch.so, libtorch_cuda.so;
 * not libtorchaudio.so, torchaudio's own, nor libtorchcodec_core.so) */
static bool is_stem(const char *b, const char *stem)
{
	size_t n = strlen(stem);
	return strncmp(b, stem, n) == 0 && (b[n] == '.' || b[n] == '_');
}

bool torch_is_torch_library(const char *path)
{
	const char *b = path_basename(path);
	return strstr(path, "/torch/lib/") || is_stem(b, "libc10") || is_stem(b, "libtorch") || is_stem(b, "libshm");
}
