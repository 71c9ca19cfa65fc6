#include "cxx/signature.h"
#include "core/bytes.h"

/*
 * The parser walks the text unit by unit: a unit is one character, or a
 * whole operator name ("operator<<", "operator()", "operator new[]",
 * "operator char const*"), so that the punctuation of operator names is
 * never taken for a bracket.  Every split (the parameter list, the "::"
 * between scopes, the commas between arguments) is done on units at
 * bracket depth 0 of the span being split.
 */

struct span {
	size_t lo, hi;	/* [lo, hi) in the text */
};

struct text {
	struct bytes b;
	struct arena *a;
};

static int ch(const struct text *t, size_t i)
{
	uint8_t c;
	return bytes_u8(&t->b, i, &c) ? c : -1;
}

static bool is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '$';
}

static bool starts_at(const struct text *t, size_t i, const char *s)
{
	size_t n = strlen(s);
	const uint8_t *p = bytes_at(&t->b, i, n);
	return p && memcmp(p, s, n) == 0;
}

static const char *const op_punct[] = {
	"()", "[]", "->*", "->", "<<=", ">>=", "<=>", "<<", ">>", "<=", ">=", "==", "!=", "&&",
	"||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-",
	"*", "/", "%", "&", "|", "^", "~", "!", "=", ",", "\"\"",
};

/*
 * If an operator name starts at i ("operator" as a whole word), returns
 * the index just after it; else i.  hi bounds the scan.  A conversion
 * operator ("operator unsigned long") runs to the parameter list.
 */
static size_t operator_end(const struct text *t, size_t i, size_t hi)
{
	if (!starts_at(t, i, "operator") || i + 8 > hi)
		return i;
	if (i > 0 && is_ident(ch(t, i - 1)))
		return i;
	size_t j = i + 8;
	int c = j < hi ? ch(t, j) : -1;
	if (is_ident(c))
		return i;	/* an identifier like operator_x */
	if (c == ' ') {
		static const char *const words[] = { " new[]", " delete[]", " new", " delete", " co_await" };
		for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
			size_t n = strlen(words[k]);
			if (j + n <= hi && starts_at(t, j, words[k]) && !is_ident(ch(t, j + n)))
				return j + n;
		}
		/* A conversion: the type, up to the '(' of the parameter list. */
		int depth = 0;
		size_t k = j + 1;
		for (; k < hi; k++) {
			int d = ch(t, k);
			if (d == '<' || d == '[')
				depth++;
			else if ((d == '>' || d == ']') && depth > 0)
				depth--;
			else if (d == '(' && depth == 0)
				break;
			if (depth > CXX_SIG_MAX_DEPTH)
				return i;
		}
		while (k > j + 1 && ch(t, k - 1) == ' ')
			k--;
		return k > j + 1 ? k : i;
	}
	for (size_t k = 0; k < ARRAY_SIZE(op_punct); k++) {
		size_t n = strlen(op_punct[k]);
		if (j + n <= hi && starts_at(t, j, op_punct[k])) {
			size_t e = j + n;
			if (str_eq(op_punct[k], "\"\"") && ch(t, e) == ' ') {
				/* a literal operator: operator"" _suffix */
				size_t s = e + 1;
				while (s < hi && is_ident(ch(t, s)))
					s++;
				e = s;
			}
			/* "operator<< <char>": the space before template args belongs to the name */
			if (e + 1 < hi && ch(t, e) == ' ' && ch(t, e + 1) == '<')
				e++;
			return e;
		}
	}
	return i;
}

enum unit_kind { U_CHAR, U_OPEN, U_CLOSE, U_OPERATOR };

struct walker {
	const struct text *t;
	size_t i, hi;
	int depth;
	char stack[CXX_SIG_MAX_DEPTH];
	bool bad;
};

static void walk_init(struct walker *w, const struct text *t, struct span s)
{
	memset(w, 0, sizeof *w);
	w->t = t;
	w->i = s.lo;
	w->hi = s.hi;
}

/* The next unit: its start, kind and the depth before it.  False at the end. */
static bool walk_next(struct walker *w, size_t *at, enum unit_kind *kind, int *depth_before)
{
	if (w->bad || w->i >= w->hi)
		return false;
	size_t i = w->i;
	*at = i;
	*depth_before = w->depth;
	size_t e = operator_end(w->t, i, w->hi);
	if (e > i) {
		*kind = U_OPERATOR;
		w->i = e;
		return true;
	}
	int c = ch(w->t, i);
	w->i = i + 1;
	*kind = U_CHAR;
	/* "(anonymous namespace)" is a name, but parentheses balance in it anyway. */
	char close = c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : 0;
	if (close) {
		if (w->depth >= CXX_SIG_MAX_DEPTH) {
			w->bad = true;
			return false;
		}
		w->stack[w->depth++] = close;
		*kind = U_OPEN;
	} else if (c == '>' || c == ')' || c == ']' || c == '}') {
		/* A '>' with nothing open is a comparison in a template argument
		 * expression ("(a)>(b)"): keep it as a character. */
		if (w->depth > 0 && w->stack[w->depth - 1] == c) {
			w->depth--;
			*kind = U_CLOSE;
		} else if (c != '>') {
			w->bad = true;
			return false;
		}
	}
	return true;
}

static const char *copy_trim(const struct text *t, struct span s)
{
	while (s.lo < s.hi && ch(t, s.lo) == ' ')
		s.lo++;
	while (s.hi > s.lo && ch(t, s.hi - 1) == ' ')
		s.hi--;
	const uint8_t *p = bytes_at(&t->b, s.lo, s.hi - s.lo);
	return arena_strndup(t->a, p ? (const char *)p : "", p ? s.hi - s.lo : 0);
}

/* Splits s at depth-0 commas into trimmed strings.  False when over the limit. */
static bool split_commas(const struct text *t, struct span s, const char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	const char *item[CXX_SIG_MAX_LIST];
	size_t cnt = 0;
	struct walker w;
	walk_init(&w, t, s);
	size_t at, start = s.lo;
	enum unit_kind k;
	int d;
	bool any = false;
	while (walk_next(&w, &at, &k, &d)) {
		if (ch(t, at) != ' ')
			any = true;
		if (k == U_CHAR && d == 0 && ch(t, at) == ',') {
			if (cnt == CXX_SIG_MAX_LIST)
				return false;
			item[cnt++] = copy_trim(t, (struct span){ start, at });
			start = at + 1;
		}
	}
	if (w.bad || w.depth != 0)
		return false;
	if (any) {
		if (cnt == CXX_SIG_MAX_LIST)
			return false;
		item[cnt++] = copy_trim(t, (struct span){ start, s.hi });
	}
	if (cnt) {
		const char **arr = arena_calloc(t->a, cnt, sizeof *arr);
		memcpy(arr, item, cnt * sizeof *arr);
		*out = arr;
	}
	*n = cnt;
	return true;
}

static const char *const specials[] = {
	"vtable for ", "VTT for ", "typeinfo for ", "typeinfo name for ", "typeinfo fn for ",
	"construction vtable for ", "guard variable for ", "non-virtual thunk to ",
	"virtual thunk to ", "covariant return thunk to ", "TLS init function for ",
	"TLS wrapper function for ", "transaction clone for ", "non-transaction clone for ",
	"hidden alias for ", "template parameter object for ",
};

/* Qualifiers after a parameter list: only these words may follow. */
static bool qualifier_tail(const struct text *t, struct span s, const char **quals)
{
	char buf[64];
	size_t n = 0;
	size_t i = s.lo;
	while (i < s.hi) {
		while (i < s.hi && ch(t, i) == ' ')
			i++;
		if (i >= s.hi)
			break;
		if (ch(t, i) == '[') {
			/* " [clone .cold.12]" after the parameters of a GCC clone */
			if (!starts_at(t, i, "[clone "))
				return false;
			while (i < s.hi && ch(t, i) != ']')
				i++;
			i++;
			continue;
		}
		size_t j = i;
		while (j < s.hi && ch(t, j) != ' ')
			j++;
		static const char *const words[] = { "const", "volatile", "&", "&&", "noexcept",
						      "transaction_safe", "throw()" };
		bool ok = false;
		for (size_t k = 0; k < ARRAY_SIZE(words) && !ok; k++)
			ok = strlen(words[k]) == j - i && starts_at(t, i, words[k]);
		if (!ok)
			return false;
		if (n + (j - i) + 2 >= sizeof buf)
			return false;
		if (n)
			buf[n++] = ' ';
		const uint8_t *p = bytes_at(&t->b, i, j - i);
		if (!p)
			return false;
		memcpy(buf + n, p, j - i);
		n += j - i;
		i = j;
	}
	buf[n] = '\0';
	*quals = arena_strdup(t->a, buf);
	return true;
}

/* One component of a qualified name: name, template arguments, ABI tag. */
static bool parse_part(const struct text *t, struct span s, struct cxx_name_part *p)
{
	p->text = copy_trim(t, s);
	while (s.lo < s.hi && ch(t, s.lo) == ' ')
		s.lo++;
	while (s.hi > s.lo && ch(t, s.hi - 1) == ' ')
		s.hi--;
	/* Find the depth-0 '<' that opens the template arguments and any "[abi:" tags. */
	struct walker w;
	walk_init(&w, t, s);
	size_t at, name_end = s.hi, targ_lo = 0, targ_hi = 0;
	enum unit_kind k;
	int d;
	bool have_targs = false;
	size_t tag_lo = 0, tag_hi = 0;
	while (walk_next(&w, &at, &k, &d)) {
		int c = ch(t, at);
		if (k == U_OPEN && d == 0 && c == '<' && !have_targs) {
			if (at < name_end)
				name_end = at;
			targ_lo = at;
			have_targs = true;
		} else if (k == U_CLOSE && d == 1 && c == '>' && have_targs && !targ_hi) {
			targ_hi = at + 1;
		} else if (k == U_OPEN && d == 0 && c == '[' && starts_at(t, at, "[abi:")) {
			if (at < name_end)
				name_end = at;
			tag_lo = at;
		} else if (k == U_CLOSE && d == 1 && c == ']' && tag_lo && !tag_hi) {
			tag_hi = at + 1;
		}
	}
	if (w.bad || w.depth != 0)
		return false;
	p->name = copy_trim(t, (struct span){ s.lo, name_end });
	p->abi_tag = tag_hi ? copy_trim(t, (struct span){ tag_lo, tag_hi }) : NULL;
	p->targs = NULL;
	p->targ = NULL;
	p->ntarg = 0;
	if (have_targs && targ_hi) {
		p->targs = copy_trim(t, (struct span){ targ_lo, targ_hi });
		if (!split_commas(t, (struct span){ targ_lo + 1, targ_hi - 1 }, &p->targ, &p->ntarg))
			return false;
	}
	return p->name[0] != '\0';
}

/* Splits a qualified name at depth-0 "::". */
static bool parse_qualified(const struct text *t, struct span s, struct cxx_sig *sig)
{
	struct span piece[CXX_SIG_MAX_PARTS];
	size_t n = 0;
	struct walker w;
	walk_init(&w, t, s);
	size_t at, start = s.lo;
	enum unit_kind k;
	int d;
	bool colon = false;
	while (walk_next(&w, &at, &k, &d)) {
		bool is_colon = k == U_CHAR && d == 0 && ch(t, at) == ':';
		if (is_colon && colon) {
			if (n == CXX_SIG_MAX_PARTS)
				return false;
			piece[n++] = (struct span){ start, at - 1 };
			start = at + 1;
			colon = false;
			continue;
		}
		colon = is_colon;
	}
	if (w.bad || w.depth != 0 || n == CXX_SIG_MAX_PARTS)
		return false;
	piece[n++] = (struct span){ start, s.hi };
	sig->part = arena_calloc(t->a, n, sizeof *sig->part);
	for (size_t i = 0; i < n; i++)
		if (!parse_part(t, piece[i], &sig->part[i]))
			return false;
	sig->npart = n;
	return true;
}

/* The start of the qualified name in "[return type ]name": after the last
 * depth-0 space that is not part of an operator name. */
static size_t name_start(const struct text *t, struct span s)
{
	struct walker w;
	walk_init(&w, t, s);
	size_t at, start = s.lo;
	enum unit_kind k;
	int d;
	while (walk_next(&w, &at, &k, &d))
		if (k == U_CHAR && d == 0 && ch(t, at) == ' ')
			start = at + 1;
	return start;
}

enum status cxx_sig_parse(struct arena *a, const char *text, size_t len, struct cxx_sig *sig)
{
	memset(sig, 0, sizeof *sig);
	sig->quals = "";
	if (len > CXX_SIG_MAX_TEXT) {
		sig->text = arena_strndup(a, text, CXX_SIG_MAX_TEXT);
		return ST_LIMIT;
	}
	struct text t = { bytes_make(text, len, false), a };
	sig->text = arena_strndup(a, text, len);
	struct span s = { 0, len };
	for (size_t i = 0; i < ARRAY_SIZE(specials); i++)
		if (starts_at(&t, 0, specials[i])) {
			size_t n = strlen(specials[i]);
			sig->special = arena_strndup(a, specials[i], n - 1);
			s.lo = n;
			break;
		}
	if (s.lo >= s.hi)
		return ST_MALFORMED;

	/* The parameter list: the last depth-0 "( ... )" followed only by
	 * qualifiers.  "foo()::x" (a local entity) has none. */
	struct walker w;
	walk_init(&w, &t, s);
	size_t at, open = 0, best_open = 0, best_close = 0;
	enum unit_kind k;
	int d;
	bool found = false;
	const char *quals = "";
	while (walk_next(&w, &at, &k, &d)) {
		int c = ch(&t, at);
		if (k == U_OPEN && d == 0 && c == '(')
			open = at;
		if (k == U_CLOSE && d == 1 && c == ')') {
			const char *q;
			if (open > s.lo && qualifier_tail(&t, (struct span){ at + 1, s.hi }, &q)) {
				best_open = open;
				best_close = at;
				quals = q;
				found = true;
			}
		}
	}
	if (w.bad || w.depth != 0)
		return ST_MALFORMED;
	struct span head = s;
	if (found) {
		head.hi = best_open;
		sig->is_function = true;
		sig->quals = quals;
		if (!split_commas(&t, (struct span){ best_open + 1, best_close }, &sig->param, &sig->nparam))
			return ST_LIMIT;
	}
	while (head.hi > head.lo && ch(&t, head.hi - 1) == ' ')
		head.hi--;
	size_t ns = sig->special ? head.lo : name_start(&t, head);
	if (ns >= head.hi)
		return ST_MALFORMED;
	if (ns > head.lo)
		sig->ret = copy_trim(&t, (struct span){ head.lo, ns });
	if (!parse_qualified(&t, (struct span){ ns, head.hi }, sig)) {
		sig->npart = 0;
		sig->part = NULL;
		return ST_MALFORMED;
	}
	sig->parsed = true;
	return ST_OK;
}

/* ---- accessors ---- */

const char *cxx_sig_scope(struct arena *a, const struct cxx_sig *s, size_t n)
{
	if (!s->parsed || n == 0)
		return "";
	if (n > s->npart)
		n = s->npart;
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(s->part[i].text) + 2;
	char *out = arena_alloc(a, len + 1);
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(s->part[i].text);
		if (i) {
			memcpy(out + o, "::", 2);
			o += 2;
		}
		memcpy(out + o, s->part[i].text, l);
		o += l;
	}
	out[o] = '\0';
	return out;
}

const char *cxx_sig_qualified(struct arena *a, const struct cxx_sig *s)
{
	return s->parsed ? cxx_sig_scope(a, s, s->npart) : s->text;
}

const char *cxx_sig_basename(const struct cxx_sig *s)
{
	return s->parsed && s->npart ? s->part[s->npart - 1].name : NULL;
}

bool cxx_sig_is_structor(const struct cxx_sig *s)
{
	if (!s->parsed || s->npart < 2)
		return false;
	const char *last = s->part[s->npart - 1].name;
	const char *cls = s->part[s->npart - 2].name;
	return str_eq(last, cls) || (last[0] == '~' && str_eq(last + 1, cls));
}

/* ---- the CXX11 ABI flavours ---- */

static bool word_at(const char *text, const char *hit, size_t n)
{
	bool left = hit == text || !(is_ident((unsigned char)hit[-1]) || hit[-1] == ':');
	bool right = !is_ident((unsigned char)hit[n]);
	return left && right;
}

static bool has_word(const char *text, const char *w, bool open_bracket)
{
	size_t n = strlen(w);
	for (const char *p = strstr(text, w); p; p = strstr(p + 1, w))
		if (open_bracket ? (p == text || !(is_ident((unsigned char)p[-1]) || p[-1] == ':'))
				 : word_at(text, p, n))
			return true;
	return false;
}

enum cxx_abi_flavour cxx_abi_flavour_of(const char *text)
{
	int f = CXX_ABI_NONE;
	if (strstr(text, "std::__cxx11::") || strstr(text, "[abi:cxx11]"))
		f |= CXX_ABI_NEW;
	static const char *const old_words[] = { "std::string", "std::wstring" };
	static const char *const old_templates[] = {
		"std::basic_string<", "std::list<", "std::basic_stringstream<",
		"std::basic_istringstream<", "std::basic_ostringstream<", "std::basic_stringbuf<",
	};
	for (size_t i = 0; i < ARRAY_SIZE(old_words); i++)
		if (has_word(text, old_words[i], false))
			f |= CXX_ABI_OLD;
	for (size_t i = 0; i < ARRAY_SIZE(old_templates); i++)
		if (has_word(text, old_templates[i], true))
			f |= CXX_ABI_OLD;
	return (enum cxx_abi_flavour)f;
}

int cxx_abi_macro_value(enum cxx_abi_flavour f)
{
	return f == CXX_ABI_OLD ? 0 : f == CXX_ABI_NEW ? 1 : -1;
}

const char *cxx_abi_unify(struct arena *a, const char *text)
{
	static const char *const from[] = {
		"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
		"std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >",
		"std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
		"std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >",
		"std::__cxx11::",
		"[abi:cxx11]",
	};
	static const char *const to[] = { "std::string", "std::wstring", "std::string", "std::wstring",
					  "std::", "" };
	size_t len = strlen(text);
	/* Every replacement is shorter than what it replaces. */
	char *out = arena_alloc(a, len + 1);
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		/* every pattern starts with 's' or '[': one test a character, not
		 * six comparisons (this runs for each candidate of a near-miss
		 * search, on demangled names of hundreds of characters) */
		bool done = false;
		bool may_match = text[i] == 's' || text[i] == '[';
		for (size_t k = 0; k < ARRAY_SIZE(from) && may_match && !done; k++) {
			size_t n = strlen(from[k]);
			if (strncmp(text + i, from[k], n) == 0) {
				size_t m = strlen(to[k]);
				memcpy(out + o, to[k], m);
				o += m;
				i += n;
				done = true;
			}
		}
		if (!done)
			out[o++] = text[i++];
	}
	out[o] = '\0';
	return out;
}

/* ---- comparing ---- */

const char *cxx_relation_name(enum cxx_relation r)
{
	switch (r) {
	case CXX_REL_SAME: return "same";
	case CXX_REL_CXX11_ABI: return "cxx11-abi";
	case CXX_REL_SIGNATURE: return "signature-changed";
	case CXX_REL_TEMPLATE: return "template-changed";
	case CXX_REL_SCOPE: return "namespace-changed";
	case CXX_REL_UNRELATED: break;
	}
	return "unrelated";
}

struct type_shape {
	char base[512];
	const char *ref;	/* "", "&", "&&", "*" */
	bool is_const;
};

/* "std::string const&" -> base "std::string", ref "&", const. */
static void type_shape(const char *t, struct type_shape *s)
{
	size_t n = strlen(t);
	s->ref = "";
	if (n >= 2 && t[n - 1] == '&' && t[n - 2] == '&') {
		s->ref = "&&";
		n -= 2;
	} else if (n >= 1 && t[n - 1] == '&') {
		s->ref = "&";
		n -= 1;
	} else if (n >= 1 && t[n - 1] == '*') {
		s->ref = "*";
		n -= 1;
	}
	while (n && t[n - 1] == ' ')
		n--;
	s->is_const = n >= 6 && strncmp(t + n - 6, " const", 6) == 0;
	if (s->is_const)
		n -= 6;
	if (n >= sizeof s->base)
		n = sizeof s->base - 1;
	memcpy(s->base, t, n);
	s->base[n] = '\0';
}

/* "value", "const lvalue reference", "pointer to const"... */
static const char *passing(struct arena *a, const struct type_shape *t)
{
	if (str_eq(t->ref, "*"))
		return t->is_const ? "pointer to const" : "pointer";
	const char *kind = str_eq(t->ref, "&") ? "lvalue reference" : str_eq(t->ref, "&&") ? "rvalue reference"
											       : "value";
	return t->is_const ? arena_printf(a, "const %s", kind) : kind;
}

/* " (const added)", " (reference kind: ...)", " (std::string flavour ...)", or "". */
static const char *type_change_note(struct arena *a, const char *from, const char *to)
{
	if (str_eq(cxx_abi_unify(a, from), cxx_abi_unify(a, to))) {
		int f = cxx_abi_macro_value(cxx_abi_flavour_of(from));
		int g = cxx_abi_macro_value(cxx_abi_flavour_of(to));
		if (f >= 0 && g >= 0 && f != g)
			return arena_printf(a, " (_GLIBCXX_USE_CXX11_ABI=%d -> %d)", f, g);
		return "";
	}
	struct type_shape x, y;
	type_shape(from, &x);
	type_shape(to, &y);
	if (!str_eq(x.base, y.base))
		return "";
	if (str_eq(x.ref, y.ref) && x.is_const != y.is_const)
		return y.is_const ? " (const added)" : " (const removed)";
	if (!str_eq(x.ref, y.ref))
		return arena_printf(a, " (by %s -> by %s)", passing(a, &x), passing(a, &y));
	return "";
}

static void add_line(struct arena *a, struct ptrvec *v, const char *line)
{
	ptrvec_push(a, v, (void *)line);
}

/*
 * Parameter lists, aligned on their longest common subsequence so that an
 * added parameter does not read as every later one changing.  Each run of
 * unmatched parameters pairs its removals with its additions as changes;
 * what is left over was added or removed.  Positions are 1-based: the
 * wanted list's for changes and removals, the library's for additions.
 */
static int diff_params(struct arena *a, struct ptrvec *lines, const struct cxx_sig *w,
		       const struct cxx_sig *h)
{
	size_t nw = w->nparam, nh = h->nparam;	/* both <= CXX_SIG_MAX_LIST */
	uint8_t *lcs = arena_calloc(a, (nw + 1) * (nh + 1), 1);
#define L(i, j) lcs[(i) * (nh + 1) + (j)]
	for (size_t i = nw; i-- > 0;)
		for (size_t j = nh; j-- > 0;)
			L(i, j) = str_eq(w->param[i], h->param[j]) ? (uint8_t)(L(i + 1, j + 1) + 1)
								    : MAX(L(i + 1, j), L(i, j + 1));
	int dist = 0;
	size_t i = 0, j = 0;
	while (i < nw || j < nh) {
		if (i < nw && j < nh && str_eq(w->param[i], h->param[j])) {
			i++;
			j++;
			continue;
		}
		/* a run of unmatched parameters */
		size_t di = i, dj = j;
		while ((i < nw || j < nh) && !(i < nw && j < nh && str_eq(w->param[i], h->param[j]))) {
			if (j < nh && (i == nw || L(i, j + 1) >= L(i + 1, j)))
				j++;
			else
				i++;
		}
		size_t nd = i - di, ni = j - dj, k = 0;
		for (; k < nd && k < ni; k++)
			add_line(a, lines, arena_printf(a, "parameter %zu: %s -> %s%s", di + k + 1, w->param[di + k],
							h->param[dj + k],
							type_change_note(a, w->param[di + k], h->param[dj + k])));
		for (size_t r = k; r < nd; r++)
			add_line(a, lines, arena_printf(a, "parameter %zu removed: %s", di + r + 1, w->param[di + r]));
		for (size_t r = k; r < ni; r++)
			add_line(a, lines, arena_printf(a, "parameter %zu added: %s", dj + r + 1, h->param[dj + r]));
		dist += (int)MAX(nd, ni);
	}
#undef L
	return dist;
}

static bool same_str(const char *x, const char *y)
{
	return (!x && !y) || (x && y && str_eq(x, y));
}

void cxx_sig_diff(struct arena *a, const struct cxx_sig *want, const struct cxx_sig *have,
		  struct cxx_diff *out)
{
	memset(out, 0, sizeof *out);
	struct ptrvec lines = { 0 };
	if (str_eq(want->text, have->text)) {
		out->rel = CXX_REL_SAME;
		return;
	}
	/* the texts with one std::string spelling are compared only once the
	 * cheap tests have not ruled the pair unrelated: most candidates of a
	 * scope have another name */
	if (!want->parsed || !have->parsed || !same_str(want->special, have->special)) {
		if (same_str(want->special, have->special) &&
		    str_eq(cxx_abi_unify(a, want->text), cxx_abi_unify(a, have->text))) {
			out->rel = CXX_REL_CXX11_ABI;
			out->distance = 1;
		}
		return;
	}
	const struct cxx_name_part *wl = &want->part[want->npart - 1];
	const struct cxx_name_part *hl = &have->part[have->npart - 1];
	bool structors = cxx_sig_is_structor(want) && cxx_sig_is_structor(have);
	if (!str_eq(wl->name, hl->name) && !structors)
		return;
	if (structors && !str_eq(want->part[want->npart - 2].name, have->part[have->npart - 2].name))
		return;
	/* a destructor is never what a constructor reference wanted, nor the reverse */
	if (structors && (wl->name[0] == '~') != (hl->name[0] == '~'))
		return;
	bool unified_same = str_eq(cxx_abi_unify(a, want->text), cxx_abi_unify(a, have->text));
	out->rel = unified_same ? CXX_REL_CXX11_ABI : CXX_REL_SIGNATURE;
	if (unified_same) {
		int f = cxx_abi_macro_value(cxx_abi_flavour_of(want->text));
		int g = cxx_abi_macro_value(cxx_abi_flavour_of(have->text));
		if (f >= 0 && g >= 0 && f != g)
			add_line(a, &lines, arena_printf(a, "std::string flavour: _GLIBCXX_USE_CXX11_ABI=%d -> %d", f, g));
	}
	int dist = 0;
	const char *ws = cxx_sig_scope(a, want, want->npart - 1);
	const char *hs = cxx_sig_scope(a, have, have->npart - 1);
	if (!str_eq(ws, hs)) {
		/* the same names with other template arguments: another
		 * instantiation of the enclosing class template */
		bool same_names = want->npart == have->npart;
		for (size_t i = 0; same_names && i + 1 < want->npart; i++)
			same_names = str_eq(want->part[i].name, have->part[i].name);
		if (same_names) {
			for (size_t i = 0; i + 1 < want->npart; i++)
				if (!same_str(want->part[i].targs, have->part[i].targs))
					add_line(a, &lines, arena_printf(a, "template arguments of %s: %s -> %s",
									 want->part[i].name,
									 want->part[i].targs ? want->part[i].targs : "(none)",
									 have->part[i].targs ? have->part[i].targs : "(none)"));
			if (!unified_same)
				out->rel = CXX_REL_TEMPLATE;
			dist += 2;
		} else {
			if (!unified_same)
				out->rel = CXX_REL_SCOPE;
			add_line(a, &lines, arena_printf(a, "scope: %s -> %s", ws[0] ? ws : "(global)",
							 hs[0] ? hs : "(global)"));
			dist += 4;
		}
	}
	if (!same_str(wl->targs, hl->targs)) {
		if (out->rel == CXX_REL_SIGNATURE)
			out->rel = CXX_REL_TEMPLATE;
		add_line(a, &lines, arena_printf(a, "template arguments: %s -> %s", wl->targs ? wl->targs : "(none)",
						 hl->targs ? hl->targs : "(none)"));
		dist += 2;
	}
	if (!same_str(wl->abi_tag, hl->abi_tag))
		add_line(a, &lines, arena_printf(a, "ABI tag: %s -> %s", wl->abi_tag ? wl->abi_tag : "(none)",
						 hl->abi_tag ? hl->abi_tag : "(none)"));
	if (want->ret && have->ret && !str_eq(want->ret, have->ret)) {
		add_line(a, &lines, arena_printf(a, "return type: %s -> %s%s", want->ret, have->ret,
						 type_change_note(a, want->ret, have->ret)));
		dist++;
	}
	if (want->is_function != have->is_function) {
		add_line(a, &lines, arena_printf(a, "kind: %s -> %s", want->is_function ? "function" : "variable",
						 have->is_function ? "function" : "variable"));
		dist += 2;
	} else if (want->is_function) {
		dist += diff_params(a, &lines, want, have);
	}
	if (!str_eq(want->quals, have->quals)) {
		add_line(a, &lines, arena_printf(a, "qualifiers: %s -> %s", want->quals[0] ? want->quals : "(none)",
						 have->quals[0] ? have->quals : "(none)"));
		dist++;
	}
	/* Ranking: an ABI-flavour twin is the closest thing to the same symbol. */
	out->distance = unified_same ? 1 : MAX(dist, 1);
	out->line = (const char **)lines.item;
	out->nline = lines.n;
}
