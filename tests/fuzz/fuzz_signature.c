/* libFuzzer target: demangled-text signatures (src/cxx/signature.h): parsing,
 * comparing two of them, the CXX11-ABI helpers, and the mangled prefix built
 * from a parse; also the same input as a mangled name through __cxa_demangle. */
#include "cxx/demangle.h"
#include "cxx/exports.h"
#include "cxx/signature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(struct arena *a, const char *text, size_t len, struct cxx_sig *s)
{
	cxx_sig_parse(a, text, len, s);
	(void)cxx_sig_qualified(a, s);
	(void)cxx_sig_basename(s);
	(void)cxx_sig_is_structor(s);
	if (s->parsed && s->npart)
		(void)cxx_sig_scope(a, s, s->npart - 1);
	char prefix[256];
	bool exact;
	(void)cxx_mangled_prefix(s, s->npart, prefix, sizeof prefix, &exact);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4 * CXX_SIG_MAX_TEXT)
		return 0;
	struct arena a;
	arena_init(&a);
	/* the parser reads exactly len bytes: give it an unterminated copy */
	char *raw = malloc(size ? size : 1);
	memcpy(raw, data, size);
	size_t half = size / 2;
	struct cxx_sig x, y;
	one(&a, raw, half, &x);
	one(&a, raw + half, size - half, &y);
	struct cxx_diff d;
	cxx_sig_diff(&a, &x, &y, &d);
	cxx_sig_diff(&a, &y, &x, &d);
	/* NUL-terminated helpers */
	char *text = arena_strndup(&a, (const char *)data, size);
	(void)cxx_abi_flavour_of(text);
	(void)cxx_abi_unify(&a, text);
	(void)cxx_mangled_body(text);
	if (cxx_is_mangled(text)) {
		const char *dem = cxx_demangle(&a, text);
		struct cxx_sig z;
		one(&a, dem, strlen(dem), &z);
		cxx_sig_diff(&a, &z, &x, &d);
	}
	free(raw);
	arena_release(&a);
	return 0;
}
