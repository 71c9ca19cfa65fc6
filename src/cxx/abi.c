#include "cxx/abi.h"
#include "cxx/demangle.h"
#include "cxx/exports.h"
#include "cxx/signature.h"

const char *torch_api_name(enum torch_api t)
{
	switch (t) {
	case TORCH_API_STABLE: return "stable";
	case TORCH_API_UNSTABLE: return "unstable";
	case TORCH_API_MIXED: return "mixed";
	case TORCH_API_NONE: break;
	}
	return "none";
}

static bool usable(const struct object *o)
{
	return o && o->kind == OBJ_ELF && o->elf_ok;
}

/* Mangled names that may carry a std::string or std::list of either flavour. */
static bool abi_candidate(const char *name)
{
	return strstr(name, "St7__cxx11") || strstr(name, "B5cxx11") || strstr(name, "Ss") ||
	       strstr(name, "Sb") || strstr(name, "St4list");
}

struct abi_count {
	size_t old_n, new_n, demangled;
	const char *example_old, *example_new;
};

/* Is the mangled name an entity of the standard library itself (std::,
 * __gnu_cxx::, or a transaction clone of one)?  An old-ABI library built
 * with devtoolset links parts of libstdc++ statically and exports them:
 * torch 2.0-2.6's libc10.so exports std::logic_error(std::__cxx11::string
 * const&) beside its own c10::Error(std::string ...).  Such names say how
 * that libstdc++ was built, not which std::string the object's own
 * interface passes. */
static bool std_entity(const char *name)
{
	uint32_t p = 2;
	/* special names: transaction clones (GTt, GTn), guard variables (GV),
	 * vtables, typeinfo and thunks (T?); then a local entity's enclosing
	 * function (Z), then a nested name (N) with its qualifiers */
	if (name[p] == 'G' && name[p + 1] == 'T' && name[p + 2] && strchr("tn", name[p + 2]))
		p += 3;
	else if ((name[p] == 'G' && name[p + 1] == 'V') || (name[p] == 'T' && name[p + 1] && strchr("VITSHW", name[p + 1])))
		p += 2;
	if (name[p] == 'Z')
		p++;
	if (name[p] == 'N')
		for (p++; name[p] && strchr("rVKRO", name[p]);)
			p++;
	if (name[p] == 'S' && name[p + 1] && strchr("tabsiod", name[p + 1]))
		return true;
	return strncmp(name + p, "9__gnu_cxx", 10) == 0;
}

/* Counts kept apart: the object's own names and the standard library's. */
struct abi_counts {
	struct abi_count own, std;
};

static void abi_count_name(struct arena *a, const char *name, struct abi_counts *cs)
{
	if (!cxx_is_mangled(name) || !abi_candidate(name))
		return;
	struct abi_count *c = std_entity(name) ? &cs->std : &cs->own;
	if (c->demangled >= CXX_ABI_MAX_DEMANGLE)
		return;
	c->demangled++;
	const char *d = cxx_demangle(a, name);
	enum cxx_abi_flavour f = cxx_abi_flavour_of(d);
	if (f & CXX_ABI_OLD) {
		c->old_n++;
		if (!c->example_old)
			c->example_old = d;
	}
	if (f & CXX_ABI_NEW) {
		c->new_n++;
		if (!c->example_new)
			c->example_new = d;
	}
}

/* The object's own names decide; the standard library's only when its own
 * say nothing (an extension whose only string-carrying imports are std::). */
static const struct abi_count *abi_deciding(const struct abi_counts *cs)
{
	return cs->own.old_n || cs->own.new_n ? &cs->own : &cs->std;
}

static int abi_verdict(const struct abi_count *c, const char **example)
{
	if (c->old_n && c->new_n) {
		*example = c->example_new;
		return 2;
	}
	if (c->new_n) {
		*example = c->example_new;
		return 1;
	}
	if (c->old_n) {
		*example = c->example_old;
		return 0;
	}
	*example = NULL;
	return -1;
}

int cxx_abi_of(struct arena *a, const struct object *o, bool imports, size_t *old_n, size_t *new_n,
	       const char **example)
{
	struct abi_counts cs = { 0 };
	for (uint32_t i = 1; usable(o) && i < o->elf.nsyms && cs.own.demangled < CXX_ABI_MAX_DEMANGLE; i++) {
		struct elf_sym s;
		if (!elf_sym(&o->elf, i, &s))
			continue;
		bool undef = s.shndx == SHN_UNDEF_;
		if (imports ? !undef : !cxx_sym_exported(&s))
			continue;
		abi_count_name(a, s.name, &cs);
	}
	const struct abi_count c = *abi_deciding(&cs);
	if (old_n)
		*old_n = c.old_n;
	if (new_n)
		*new_n = c.new_n;
	const char *ex;
	int v = abi_verdict(&c, &ex);
	if (example)
		*example = ex;
	return v;
}

bool cxx_torch_cxx_name(const char *name)
{
	uint32_t b = cxx_mangled_body(name);
	if (!b)
		return false;
	static const char *const roots[] = { "3c10", "2at", "5torch", "4c10d", "6caffe2" };
	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		size_t n = strlen(roots[i]);
		if (strncmp(name + b, roots[i], n) == 0) {
			char next = name[b + n];
			/* the next element of the name follows (or the entity ends) */
			if ((next >= '0' && next <= '9') || next == 'E' || next == 'I' || next == 'C' ||
			    next == 'D' || next == '\0' || (next >= 'a' && next <= 'z'))
				return true;
		}
	}
	return false;
}

bool cxx_torch_stable_name(const char *name)
{
	return str_starts(name, "aoti_torch_") || str_starts(name, "torch_");
}

static bool printable(const char *s, size_t n, bool spaces)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c > 0x7e || (!spaces && c == ' '))
			return false;
	}
	return true;
}

const char *cxx_find_pybind11_id(struct arena *a, const struct bytes *b)
{
	static const char needle[] = "__pybind11_internals_v";
	int64_t at = bytes_find(b, 0, needle, sizeof needle - 1);
	for (int tries = 0; at >= 0 && tries < 64; tries++) {
		const char *s;
		size_t len;
		if (bytes_cstr(b, (uint64_t)at, &s, &len) && len <= 128 && printable(s, len, false))
			return arena_strndup(a, s, len);
		at = bytes_find(b, (uint64_t)at + 1, needle, sizeof needle - 1);
	}
	return NULL;
}

size_t cxx_comment_strings(struct arena *a, const struct bytes *b, const char ***out)
{
	const char **v = arena_calloc(a, CXX_MAX_COMPILERS, sizeof *v);
	size_t n = 0;
	uint64_t off = 0;
	for (int steps = 0; off < b->len && n < CXX_MAX_COMPILERS && steps < 4096; steps++) {
		const char *s;
		size_t len;
		if (!bytes_cstr(b, off, &s, &len))
			break;
		off += len + 1;
		if (len == 0 || len > 200 || !printable(s, len, true))
			continue;
		bool dup = false;
		for (size_t i = 0; i < n && !dup; i++)
			dup = strlen(v[i]) == len && memcmp(v[i], s, len) == 0;
		if (!dup)
			v[n++] = arena_strndup(a, s, len);
	}
	*out = v;
	return n;
}

static const struct bytes *section(const struct object *o, const char *name, struct bytes *out)
{
	const struct elf_section *s = elf_section_by_name(&o->elf, name);
	if (!s || !elf_section_bytes(&o->elf, s, out))
		return NULL;
	return out;
}

void cxx_identify(struct arena *a, const struct object *o, struct cxx_identity *out)
{
	memset(out, 0, sizeof *out);
	out->cxx11_abi = -1;
	out->cuda_major = -1;
	if (!usable(o))
		return;
	const struct elf_file *ef = &o->elf;
	struct abi_counts cs = { 0 };
	for (uint32_t i = 1; i < ef->nsyms; i++) {
		struct elf_sym s;
		if (!elf_sym(ef, i, &s) || !s.name[0])
			continue;
		bool undef = s.shndx == SHN_UNDEF_;
		if (!undef && !cxx_sym_exported(&s))
			continue;
		abi_count_name(a, s.name, &cs);
		if (!undef)
			continue;
		if (cxx_torch_stable_name(s.name)) {
			out->torch_stable_imports++;
		} else if (cxx_torch_cxx_name(s.name)) {
			out->torch_cxx_imports++;
			if (!out->torch_cxx_example) {
				/* the qualified name is enough to recognise it */
				const char *d = cxx_demangle(a, s.name);
				struct cxx_sig sig;
				cxx_sig_parse(a, d, strlen(d), &sig);
				out->torch_cxx_example = cxx_sig_qualified(a, &sig);
			}
		}
	}
	const struct abi_count *c = abi_deciding(&cs);
	out->cxx11_abi = abi_verdict(c, &out->abi_example);
	out->abi_old = c->old_n;
	out->abi_new = c->new_n;
	out->torch_api = out->torch_cxx_imports && out->torch_stable_imports ? TORCH_API_MIXED
		: out->torch_cxx_imports ? TORCH_API_UNSTABLE
		: out->torch_stable_imports ? TORCH_API_STABLE : TORCH_API_NONE;
	for (size_t i = 0; i < ef->nneeded; i++)
		if (str_starts(ef->needed[i], "libcudart.so.")) {
			out->cudart = ef->needed[i];
			const char *p = ef->needed[i] + strlen("libcudart.so.");
			int v = 0;
			size_t k = 0;
			while (p[k] >= '0' && p[k] <= '9' && k < 4)
				v = v * 10 + (p[k++] - '0');
			out->cuda_major = k ? v : -1;
		}
	out->device_code = elf_section_by_name(ef, ".nv_fatbin") != NULL;
	struct bytes b;
	if (section(o, ".rodata", &b))
		out->pybind11_id = cxx_find_pybind11_id(a, &b);
	if (section(o, ".comment", &b))
		out->ncompiler = cxx_comment_strings(a, &b, &out->compiler);
}
