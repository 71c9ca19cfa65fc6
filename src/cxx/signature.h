/*
 * signature.h: a demangled C++ name taken apart, and two of them compared.
 *
 * The input is the TEXT that libstdc++'s __cxa_demangle produced (see
 * demangle.h); nothing here decodes the Itanium mangling.  The parser
 * splits that text into what an engineer compares by eye:
 *
 *   "int const* at::TensorBase::const_data_ptr<int, 0>() const"
 *    return type  scope: at, TensorBase   name + template args  params  qualifiers
 *
 * plus the special forms the demangler prints for non-function symbols
 * ("vtable for X", "typeinfo for X", "guard variable for X", thunks).
 * Brackets (<>, (), [], {}) are matched, operator names ("operator<<",
 * "operator()", "operator new[]", conversions "operator int") are
 * recognised so their punctuation is not taken for brackets.
 *
 * The text is untrusted (it comes from names in files): it is read through
 * the bounds-checked reader, nesting and list lengths are capped, and a
 * text that does not fit the shape comes back with parsed == false (the
 * callers then compare whole strings).  Everything is allocated in the
 * caller's arena.
 *
 * cxx_sig_diff() compares a wanted signature with one a library has and
 * describes the differences element by element, in words:
 * "parameter 4: int -> unsigned int", "template arguments: <int, 0> ->
 * <float, 0>", "qualifier: const -> (none)", "namespace: c10::cuda ->
 * c10::cuda::impl".  The CXX11-ABI helpers tell the two std::string
 * flavours apart (std::string vs std::__cxx11::basic_string<...>).
 */
#ifndef ABISCOPE_SIGNATURE_H
#define ABISCOPE_SIGNATURE_H

#include "core/arena.h"
#include "core/diag.h"

/* Limits on untrusted text: deeper or longer input is not parsed. */
#define CXX_SIG_MAX_DEPTH 64
#define CXX_SIG_MAX_PARTS 32
#define CXX_SIG_MAX_LIST 64
#define CXX_SIG_MAX_TEXT 8192

struct cxx_name_part {
	const char *text;	/* the whole component: "const_data_ptr<int, 0>" */
	const char *name;	/* without template arguments and ABI tags: "const_data_ptr" */
	const char *targs;	/* "<int, 0>" or NULL */
	const char **targ;	/* the arguments, trimmed */
	size_t ntarg;
	const char *abi_tag;	/* "[abi:cxx11]" or NULL */
};

struct cxx_sig {
	const char *text;	/* the demangled text, as given */
	bool parsed;		/* false: the text did not fit; only text is set */
	const char *special;	/* "vtable for", "typeinfo for", "non-virtual thunk to"... or NULL */
	const char *ret;	/* return type (template functions only) or NULL */
	struct cxx_name_part *part;	/* the qualified name, outermost first */
	size_t npart;
	bool is_function;
	const char **param;	/* trimmed parameter types */
	size_t nparam;
	const char *quals;	/* "const", "const &", "&&"... or "" */
};

/* Parses demangled text (len bytes, NUL not required).  ST_OK, or
 * ST_MALFORMED / ST_LIMIT with sig->parsed false. */
enum status cxx_sig_parse(struct arena *a, const char *text, size_t len, struct cxx_sig *sig);

/* "c10::cuda" for c10::cuda::f(...): the enclosing scope, n parts deep
 * (n = npart - 1 for the whole scope), with template arguments. */
const char *cxx_sig_scope(struct arena *a, const struct cxx_sig *s, size_t n);
/* The full qualified name with template arguments ("at::TensorBase::const_data_ptr<int, 0>"). */
const char *cxx_sig_qualified(struct arena *a, const struct cxx_sig *s);
/* The last component's name without template arguments, or NULL. */
const char *cxx_sig_basename(const struct cxx_sig *s);
/* True for a constructor or destructor (A::A, A::~A). */
bool cxx_sig_is_structor(const struct cxx_sig *s);

/* How two parsed signatures relate. */
enum cxx_relation {
	CXX_REL_UNRELATED,	/* different names */
	CXX_REL_SAME,		/* identical text */
	CXX_REL_CXX11_ABI,	/* identical once std::string flavours are unified */
	CXX_REL_SIGNATURE,	/* same qualified name and template args; params or qualifiers differ */
	CXX_REL_TEMPLATE,	/* same qualified name, other template arguments */
	CXX_REL_SCOPE,		/* same name in another namespace or class */
};

struct cxx_diff {
	enum cxx_relation rel;
	const char **line;	/* element-by-element differences, in words */
	size_t nline;
	int distance;		/* rough number of differing elements, for ranking */
};

/* Compares want (what the reference needs) with have (what a library exports). */
void cxx_sig_diff(struct arena *a, const struct cxx_sig *want, const struct cxx_sig *have,
		  struct cxx_diff *out);
const char *cxx_relation_name(enum cxx_relation r);

/*
 * std::string flavour seen in demangled text: CXX_ABI_OLD (std::string,
 * std::list<...> as in _GLIBCXX_USE_CXX11_ABI=0), CXX_ABI_NEW
 * (std::__cxx11::..., [abi:cxx11]), CXX_ABI_BOTH, or CXX_ABI_NONE when the
 * text names no type whose layout the flag changes.
 */
enum cxx_abi_flavour { CXX_ABI_NONE = 0, CXX_ABI_OLD = 1, CXX_ABI_NEW = 2, CXX_ABI_BOTH = 3 };
enum cxx_abi_flavour cxx_abi_flavour_of(const char *text);
/* The _GLIBCXX_USE_CXX11_ABI value for a flavour: 0, 1, or -1 when unknown. */
int cxx_abi_macro_value(enum cxx_abi_flavour f);
/* The text with both flavours written the same way (std::string, std::list). */
const char *cxx_abi_unify(struct arena *a, const char *text);

#endif
