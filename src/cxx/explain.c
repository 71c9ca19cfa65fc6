#include "cxx/explain.h"
#include "cxx/abi.h"
#include "cxx/torch.h"

const char *cxx_package_of(struct arena *a, const char *path)
{
	static const char *const sites[] = { "/site-packages/", "/dist-packages/" };
	for (size_t i = 0; i < ARRAY_SIZE(sites); i++) {
		const char *s = strstr(path, sites[i]);
		if (!s)
			continue;
		s += strlen(sites[i]);
		const char *e = strchr(s, '/');
		if (e && e > s)
			return arena_strndup(a, s, (size_t)(e - s));
	}
	return path_basename(path);
}

static const char *where_name(const struct nm_object *o)
{
	return o->loaded ? path_basename(o->path) : o->path;
}

/* The library the cause is about: the best near miss's, else the expected one. */
static const struct nm_object *subject(const struct nm_result *r)
{
	const struct nm_near *b = nm_best(r);
	if (b && (b->where->loaded || r->cause == NM_CAUSE_OTHER_COPY))
		return b->where;
	return r->expected;
}

static bool torch_root_namespace(const struct nm_result *r)
{
	if (!r->want.parsed || r->want.npart < 2)
		return false;
	const char *root = r->want.part[0].name;
	return str_eq(root, "c10") || str_eq(root, "at") || str_eq(root, "torch") || str_eq(root, "c10d") ||
	       str_eq(root, "caffe2");
}

bool cxx_result_is_torch(const struct nm_result *r, const struct cxx_explain_ctx *c)
{
	/* torch's own library missing a symbol outside torch (cusparseLtInit for
	 * libtorch_cuda.so): a CUDA library is missing or wrong, not another torch */
	if (c->requester && torch_is_torch_library(c->requester) && !torch_root_namespace(r) &&
	    !str_starts(r->symbol, "aoti_torch_") && !str_starts(r->symbol, "torch_") && !str_starts(r->symbol, "THP"))
		return false;
	const struct nm_object *s = subject(r);
	if (s && torch_is_torch_library(s->path))
		return true;
	if (r->expected && torch_is_torch_library(r->expected->path))
		return true;
	/* a LibTorch stable C ABI name (torch_list_push_back, aoti_torch_*): only
	 * libtorch defines them, whatever library exports the nearest ones */
	return c->torch_version && (torch_root_namespace(r) || cxx_torch_stable_name(r->symbol));
}

static void near_json(struct arena *a, struct finding *f, const struct nm_result *r)
{
	struct value *arr = val_arr(a);
	for (size_t i = 0; i < r->nnear; i++) {
		const struct nm_near *n = &r->near[i];
		struct value *o = val_obj(a);
		val_set_str(a, o, "provider", n->where->path);
		val_set_str(a, o, "symbol", n->symbol);
		val_set(a, o, "demangled", val_str(a, n->demangled));
		val_set(a, o, "version", val_str(a, n->version));
		struct value *d = val_arr(a);
		for (size_t k = 0; k < n->diff.nline; k++)
			val_push(a, d, val_str(a, n->diff.line[k]));
		val_set(a, o, "diff", d);
		val_set_str(a, o, "relation", nm_cause_name(n->cause));
		val_set_bool(a, o, "loaded", n->where->loaded);
		val_set_bool(a, o, "in_scope", n->where->in_scope);
		val_push(a, arr, o);
	}
	val_set(a, f->fields, "near", arr);
	/* a cap cut the search short: there may be more, and better, ones */
	val_set_bool(a, f->fields, "near_truncated", r->truncated);
}

/* "wanted:" and each close candidate with its differences. */
static void near_lines(struct findings *L, struct finding *f, const struct nm_result *r, size_t max)
{
	if (r->demangled)
		finding_line(L, f, "  wanted: %s%s%s", r->demangled, r->version ? "@" : "", r->version ? r->version : "");
	size_t shown = 0;
	for (size_t i = 0; i < r->nnear && shown < max; i++) {
		const struct nm_near *n = &r->near[i];
		if (n->cause != r->cause)
			continue;
		finding_line(L, f, "  %s%s has: %s%s%s", where_name(n->where), n->where->loaded ? "" : " (not loaded)",
			     n->demangled ? n->demangled : n->symbol, n->version ? "@" : "",
			     n->version ? n->version : "");
		for (size_t k = 0; k < n->diff.nline; k++)
			finding_line(L, f, "    %s", n->diff.line[k]);
		shown++;
	}
	size_t more = 0;
	for (size_t i = 0; i < r->nnear; i++)
		more += r->near[i].cause == r->cause;
	if (more > shown)
		finding_line(L, f, "  ... and %zu more like it%s", more - shown, r->truncated ? " (search capped)" : "");
}

static const char *flavour_word(int v)
{
	return v == 0 ? "0" : v == 1 ? "1" : "?";
}

void cxx_explain_undefined(struct findings *L, struct finding *f, const struct nm_result *r,
			   const struct cxx_explain_ctx *c)
{
	struct arena *a = L->arena;
	const char *req = c->requester ? path_basename(c->requester) : "the object";
	const char *pkg = c->requester ? cxx_package_of(a, c->requester) : req;
	const struct nm_object *subj = subject(r);
	const char *lib = subj ? where_name(subj) : NULL;
	bool torch = cxx_result_is_torch(r, c);
	const char *qual = r->want.parsed ? cxx_sig_qualified(a, &r->want) : r->symbol;

	/* a stable C ABI symbol no library of the installed torch defines: it
	 * came with another (newer) torch, as a removed C++ one left with an older */
	bool stable_absent = torch && c->torch_version && r->cause == NM_CAUSE_UNKNOWN &&
			     cxx_torch_stable_name(r->symbol);
	val_set(a, f->fields, "cause", stable_absent ? val_str(a, "added")
				       : r->cause == NM_CAUSE_UNKNOWN ? val_null(a) : val_str(a, nm_cause_name(r->cause)));
	near_json(a, f, r);
	val_set(a, f->fields, "expected_provider", val_str(a, r->expected ? r->expected->path : NULL));
	val_set(a, f->fields, "expected_scope", val_str(a, r->expected_scope));
	val_set_bool(a, f->fields, "expected_guess", r->expected ? r->expected_guess : false);
	bool other_torch = torch && c->torch_version &&
			   (r->cause == NM_CAUSE_SIGNATURE || r->cause == NM_CAUSE_CXX11_ABI ||
			    r->cause == NM_CAUSE_TEMPLATE || r->cause == NM_CAUSE_NAMESPACE ||
			    r->cause == NM_CAUSE_REMOVED || stable_absent);
	if (torch && c->torch_version) {
		struct value *t = val_obj(a);
		val_set_str(a, t, "installed", c->torch_version);
		val_set_bool(a, t, "built_against_other", other_torch);
		if (c->torch_compat)
			val_set(a, t, "compatible", c->torch_compat);
		val_set(a, f->fields, "torch", t);
	}
	if (r->cause == NM_CAUSE_UNKNOWN && !other_torch)
		return;

	const char *fix = NULL;
	switch (r->cause) {
	case NM_CAUSE_SIGNATURE:
		finding_line(L, f, "cause: signature-changed: %s exports %s with another signature", lib, qual);
		near_lines(L, f, r, 3);
		break;
	case NM_CAUSE_CXX11_ABI:
		finding_line(L, f, "cause: cxx11-abi: %s was built with _GLIBCXX_USE_CXX11_ABI=%s, the installed %s uses %s",
			     req, flavour_word(r->want_abi), lib, flavour_word(r->have_abi));
		near_lines(L, f, r, 2);
		break;
	case NM_CAUSE_TEMPLATE:
		finding_line(L, f, "cause: template-changed: %s no longer exports this instantiation of %s; it has others",
			     lib, r->want.parsed && r->want.npart ? cxx_sig_scope(a, &r->want, r->want.npart - 1) : qual);
		near_lines(L, f, r, 3);
		break;
	case NM_CAUSE_NAMESPACE:
		finding_line(L, f, "cause: namespace-changed: %s exports %s from another namespace or class", lib,
			     cxx_sig_basename(&r->want) ? cxx_sig_basename(&r->want) : qual);
		near_lines(L, f, r, 3);
		break;
	case NM_CAUSE_REMOVED:
		if (r->expected_scope && r->expected_guess)
			finding_line(L, f, "cause: removed: %s, which exports %zu other symbols of %s, has nothing by this "
					   "name; it was removed or renamed%s",
				     lib, r->expected_count, r->expected_scope,
				     r->truncated ? " (the search for it elsewhere was capped)" : "");
		else
			finding_line(L, f, "cause: removed: %s, which %s was built against, does not export it",
				     lib, req);
		if (r->expected_guess)
			finding_line(L, f, "  (the expected provider is a guess: the library with the most symbols of %s)",
				     r->expected_scope ? r->expected_scope : "the same prefix");
		break;
	case NM_CAUSE_NOT_IN_SCOPE:
		finding_line(L, f, "cause: not-in-scope: %s defines it, but %s cannot see it: %s does not list it in "
				   "DT_NEEDED and it was not loaded with RTLD_GLOBAL",
			     lib, req, req);
		fix = arena_printf(a, "link %s against %s (so that it is in DT_NEEDED), or load %s with RTLD_GLOBAL "
				      "before %s",
				   req, path_basename(subj->path), path_basename(subj->path), req);
		break;
	case NM_CAUSE_VERSION: {
		const struct nm_near *b = nm_best(r);
		finding_line(L, f, "cause: version-changed: %s exports it, but not at the version the reference needs", lib);
		for (size_t k = 0; b && k < b->diff.nline; k++)
			finding_line(L, f, "  %s", b->diff.line[k]);
		fix = arena_printf(a, "install the %s that %s was built against, or rebuild %s against the installed one",
				   r->expected ? path_basename(r->expected->path) : lib, pkg, pkg);
		break;
	}
	case NM_CAUSE_OTHER_COPY:
		finding_line(L, f, "cause: other-copy: the loader uses %s, which lacks it; the copy at %s exports it",
			     r->expected ? r->expected->path : "another copy", subj ? subj->path : "?");
		break;
	case NM_CAUSE_UNKNOWN:	/* other_torch: a stable C ABI symbol of another torch */
		finding_line(L, f, "cause: added: no library of the installed torch defines this LibTorch stable C ABI "
				   "symbol; %s was built against a newer torch", req);
		break;
	}
	if (other_torch) {
		if (r->cause == NM_CAUSE_CXX11_ABI)
			finding_line(L, f, "%s was built against a torch with _GLIBCXX_USE_CXX11_ABI=%s; the installed %s uses %s",
				     req, flavour_word(r->want_abi), c->torch_version,
				     flavour_word(c->torch_cxx11_abi >= 0 ? c->torch_cxx11_abi : r->have_abi));
		else if (r->cause != NM_CAUSE_UNKNOWN)	/* whose cause line says "built against a newer torch" */
			finding_line(L, f, "%s was built against a different torch than the installed %s", req,
				     c->torch_version);
	}
	if (torch && c->torch_releases)
		finding_line(L, f, "%s", c->torch_releases);
	if (torch && c->torch_fix && r->cause != NM_CAUSE_OTHER_COPY && r->cause != NM_CAUSE_NOT_IN_SCOPE)
		fix = r->cause == NM_CAUSE_CXX11_ABI
			? arena_printf(a, "%s (_GLIBCXX_USE_CXX11_ABI=%s)", c->torch_fix, flavour_word(r->have_abi))
			: c->torch_fix;
	if (!fix) {
		if (torch && r->cause == NM_CAUSE_CXX11_ABI)
			fix = arena_printf(a, "install a build of %s made for the installed torch%s%s (_GLIBCXX_USE_CXX11_ABI=%s), "
					      "or rebuild it from source against the installed torch",
					   pkg, c->torch_version ? " " : "", c->torch_version ? c->torch_version : "",
					   flavour_word(r->have_abi));
		else if (torch && r->cause != NM_CAUSE_OTHER_COPY)
			fix = arena_printf(a, "reinstall %s built for the installed torch%s%s, or install the torch it was "
					      "built for; or rebuild it from source against the installed torch",
					   pkg, c->torch_version ? " " : "", c->torch_version ? c->torch_version : "");
		else if (r->cause == NM_CAUSE_CXX11_ABI)
			fix = arena_printf(a, "rebuild %s with _GLIBCXX_USE_CXX11_ABI=%s (what %s uses), or install a build "
					      "of it made that way",
					   pkg, flavour_word(r->have_abi), lib);
		else if (r->cause != NM_CAUSE_OTHER_COPY && lib)
			fix = arena_printf(a, "rebuild %s against the installed %s, or install the %s it was built against",
					   pkg, lib, lib);
	}
	if (c->fix_override)
		fix = c->fix_override;
	if (fix)
		finding_fix(L, f, "%s", fix);
}
