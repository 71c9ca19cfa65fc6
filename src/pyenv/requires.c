#include "pyenv/requires.h"

#include <ctype.h>

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* "torch (==2.9.1)" and "torch==2.9.1", extras, then "; marker" */
bool requirement_parse(struct arena *a, const char *line, struct requirement *out)
{
	memset(out, 0, sizeof *out);
	const char *p = skip_ws(line);
	const char *n = p;
	while (name_char(*p))
		p++;
	if (p == n)
		return false;
	out->name = arena_strndup(a, n, (size_t)(p - n));
	out->norm = dist_normalize(a, out->name);
	p = skip_ws(p);
	if (*p == '[') {
		const char *e = strchr(p, ']');
		if (!e)
			return false;
		char *ex = arena_strndup(a, p + 1, (size_t)(e - p - 1));
		char *w = ex;
		for (char *r = ex; *r; r++)	/* drop blanks */
			if (*r != ' ' && *r != '\t')
				*w++ = *r;
		*w = '\0';
		out->extras = ex;
		p = skip_ws(e + 1);
	}
	const char *semi = strchr(p, ';');
	const char *end = semi ? semi : p + strlen(p);
	/* the specifier, with "(...)" around it in the old form */
	char *spec = arena_strndup(a, p, (size_t)(end - p));
	char *w = spec;
	for (char *r = spec; *r; r++)
		if (*r != ' ' && *r != '\t' && *r != '(' && *r != ')')
			*w++ = *r;
	*w = '\0';
	out->spec = spec;
	if (spec[0] == '=' && spec[1] == '=' && spec[2] != '=' && !strchr(spec, ',') && !strchr(spec, '*') && spec[2])
		out->pin = spec + 2;
	if (semi) {
		const char *m = skip_ws(semi + 1);
		out->marker = *m ? arena_strdup(a, m) : NULL;
	}
	return true;
}

/* ---- versions ---- */

/* Compares the release numbers, then the rest as text (a pre-release
 * "rc1" sorts before the release; ".post1" after it). */
int version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		bool da = isdigit((unsigned char)*a), db = isdigit((unsigned char)*b);
		if (da && db) {
			unsigned long long x = strtoull(a, (char **)&a, 10), y = strtoull(b, (char **)&b, 10);
			if (x != y)
				return x < y ? -1 : 1;
			if (*a == '.' && *b == '.') {
				a++;
				b++;
				continue;
			}
		}
		/* one ended: 2.9 == 2.9.0; 2.9 < 2.9.1 */
		if (!*a && *b == '.') {
			b++;
			while (*b == '0' || *b == '.')
				b++;
			return *b && *b != '+' ? -1 : 0;
		}
		if (!*b && *a == '.') {
			a++;
			while (*a == '0' || *a == '.')
				a++;
			return *a && *a != '+' ? 1 : 0;
		}
		if (*a == '+' || *b == '+' || !*a || !*b) {
			/* a local label or the end: the public versions are equal so far */
			bool pa = !*a || *a == '+', pb = !*b || *b == '+';
			if (pa && pb)
				return strcmp(a, b) < 0 ? -1 : strcmp(a, b) > 0;
			/* "rc", "a", "b", "dev" before the release; "post" after */
			const char *rest = pa ? b : a;
			int sign = pa ? 1 : -1;
			while (*rest == '.' || *rest == '-' || *rest == '_')
				rest++;
			bool after = strncmp(rest, "post", 4) == 0;
			return after ? -sign : sign;
		}
		int c = strcmp(a, b);
		return c < 0 ? -1 : c > 0;
	}
	return 0;
}

const char *version_public(struct arena *a, const char *version)
{
	const char *plus = strchr(version, '+');
	return plus ? arena_strndup(a, version, (size_t)(plus - version)) : version;
}

/* "2.9.*" prefix match, or "~=2.9.1": >= 2.9.1 and == 2.9.* */
static bool prefix_match(const char *v, const char *prefix, size_t n)
{
	if (strncmp(v, prefix, n) != 0)
		return false;
	return v[n] == '\0' || v[n] == '.' || v[n] == '+';
}

static bool clause_allows(const char *c, const char *v)
{
	char op[3] = { 0 };
	size_t k = 0;
	while (k < 2 && (c[k] == '=' || c[k] == '!' || c[k] == '<' || c[k] == '>' || c[k] == '~')) {
		op[k] = c[k];
		k++;
	}
	if (c[k] == '=')
		return strcmp(v, c + k + 1) == 0;	/* === arbitrary equality */
	const char *want = c + k;
	if (!*want)
		return true;
	size_t wl = strlen(want);
	bool star = wl >= 2 && want[wl - 1] == '*' && want[wl - 2] == '.';
	int cmp = version_cmp(v, want);
	if (!strcmp(op, "=="))
		return star ? prefix_match(v, want, wl - 2) : (strchr(want, '+') ? strcmp(v, want) == 0 : cmp == 0 ||
									      version_cmp(v, want) == 0);
	if (!strcmp(op, "!="))
		return star ? !prefix_match(v, want, wl - 2) : cmp != 0;
	if (!strcmp(op, ">="))
		return cmp >= 0;
	if (!strcmp(op, "<="))
		return cmp <= 0;
	if (!strcmp(op, ">"))
		return cmp > 0;
	if (!strcmp(op, "<"))
		return cmp < 0;
	if (!strcmp(op, "~=")) {
		const char *last = strrchr(want, '.');
		return cmp >= 0 && last && prefix_match(v, want, (size_t)(last - want));
	}
	return false;
}

bool spec_allows(const char *spec, const char *version)
{
	if (!spec || !*spec)
		return true;
	char buf[256];
	const char *plus = strchr(version, '+');
	/* a local label is ignored unless the clause names one */
	char pub[128];
	snprintf(pub, sizeof pub, "%.*s", plus ? (int)(plus - version) : (int)strlen(version), version);
	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");
		snprintf(buf, sizeof buf, "%.*s", (int)n, p);
		if (!clause_allows(buf, strchr(buf, '+') ? version : pub))
			return false;
		p += n;
		if (*p == ',')
			p++;
	}
	return true;
}

/* ---- markers ---- */

static const char *marker_var(const struct marker_env *e, const char *name, char *buf, size_t n)
{
	if (!strcmp(name, "platform_system"))
		return "Linux";
	if (!strcmp(name, "sys_platform"))
		return "linux";
	if (!strcmp(name, "os_name"))
		return "posix";
	if (!strcmp(name, "platform_machine"))
		return e->machine ? e->machine : "x86_64";
	if (!strcmp(name, "implementation_name") || !strcmp(name, "platform_python_implementation"))
		return !strcmp(name, "implementation_name") ? "cpython" : "CPython";
	if (!strcmp(name, "python_version") || !strcmp(name, "python_full_version")) {
		snprintf(buf, n, "%d.%d", e->py_major ? e->py_major : 3, e->py_major ? e->py_minor : 11);
		return buf;
	}
	if (!strcmp(name, "extra"))
		return e->extra ? e->extra : "";
	return NULL;
}

/* One "VAR OP 'VALUE'" (either side may be the literal). */
static bool atom_holds(const char *s, size_t n, const struct marker_env *e)
{
	char t[256];
	snprintf(t, sizeof t, "%.*s", (int)n, s);
	char *lhs = t;
	while (*lhs == ' ' || *lhs == '(')
		lhs++;
	char *end = lhs + strlen(lhs);
	while (end > lhs && (end[-1] == ' ' || end[-1] == ')'))
		*--end = '\0';
	const char *ops[] = { "===", "==", "!=", ">=", "<=", "~=", ">", "<", " not in ", " in " };
	char *at = NULL;
	const char *op = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(ops) && !at; i++)
		if ((at = strstr(lhs, ops[i])) != NULL)
			op = ops[i];
	if (!at)
		return true;	/* unreadable: not ours to refuse */
	char *rhs = at + strlen(op);
	*at = '\0';
	char lb[32], rb[32];
	char *sides[2] = { lhs, rhs };
	const char *val[2];
	bool is_var[2];
	for (int i = 0; i < 2; i++) {
		char *x = sides[i];
		while (*x == ' ')
			x++;
		char *xe = x + strlen(x);
		while (xe > x && xe[-1] == ' ')
			*--xe = '\0';
		if (*x == '"' || *x == '\'') {
			x++;
			if (xe > x && (xe[-1] == '"' || xe[-1] == '\''))
				xe[-1] = '\0';
			val[i] = x;
			is_var[i] = false;
		} else {
			val[i] = marker_var(e, x, i ? rb : lb, sizeof lb);
			is_var[i] = true;
			if (!val[i])
				return true;
		}
	}
	bool version_like = (is_var[0] && strstr(sides[0], "version")) || (is_var[1] && strstr(sides[1], "version"));
	const char *o = op;
	while (*o == ' ')
		o++;
	if (!strncmp(o, "not in", 6))
		return strstr(val[1], val[0]) == NULL;
	if (!strncmp(o, "in", 2))
		return strstr(val[1], val[0]) != NULL;
	if (version_like && strcmp(o, "===")) {
		char spec[160];
		snprintf(spec, sizeof spec, "%s%s", o, val[1]);
		return spec_allows(spec, val[0]);
	}
	int c = strcmp(val[0], val[1]);
	if (!strcmp(o, "==") || !strcmp(o, "==="))
		return c == 0;
	if (!strcmp(o, "!="))
		return c != 0;
	return true;
}

/* A marker, by recursive descent: or of ands of atoms, an atom a
 * comparison or a parenthesised marker. */
struct mparse {
	const char *p;
	const struct marker_env *env;
};

static bool m_or(struct mparse *m);

static bool m_word(struct mparse *m, const char *w)
{
	size_t n = strlen(w);
	const char *q = skip_ws(m->p);
	if (strncmp(q, w, n) != 0 || (q[n] && q[n] != ' ' && q[n] != '\t' && q[n] != '('))
		return false;
	m->p = q + n;
	return true;
}

static bool m_atom(struct mparse *m)
{
	m->p = skip_ws(m->p);
	if (*m->p == '(') {
		m->p++;
		bool v = m_or(m);
		m->p = skip_ws(m->p);
		if (*m->p == ')')
			m->p++;
		return v;
	}
	/* a comparison runs to the next " and ", " or " or unbalanced ')' outside quotes */
	const char *st = m->p, *q = m->p;
	char quote = 0;
	while (*q) {
		if (quote) {
			if (*q == quote)
				quote = 0;
		} else if (*q == '"' || *q == '\'') {
			quote = *q;
		} else if (*q == ')' || (q > st && (strncmp(q, " and ", 5) == 0 || strncmp(q, " or ", 4) == 0))) {
			break;
		}
		q++;
	}
	m->p = q;
	return atom_holds(st, (size_t)(q - st), m->env);
}

static bool m_and(struct mparse *m)
{
	bool v = m_atom(m);
	while (m_word(m, "and"))
		v = m_atom(m) && v;
	return v;
}

static bool m_or(struct mparse *m)
{
	bool v = m_and(m);
	while (m_word(m, "or"))
		v = m_and(m) || v;
	return v;
}

bool marker_holds(const char *marker, const struct marker_env *env)
{
	if (!marker || !*marker)
		return true;
	struct mparse m = { marker, env };
	return m_or(&m);
}

bool dist_requirement_on(struct arena *a, const struct dist *d, const char *norm, const struct marker_env *env,
			 struct requirement *out)
{
	for (size_t i = 0; i < d->requires.n; i++) {
		struct requirement r;
		if (!requirement_parse(a, d->requires.item[i], &r) || !str_eq(r.norm, norm))
			continue;
		bool on_extra = r.marker && strstr(r.marker, "extra");
		if (on_extra && !env->extra)
			continue;
		if (!marker_holds(r.marker, env))
			continue;
		*out = r;
		return true;
	}
	return false;
}
