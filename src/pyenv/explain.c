#include "pyenv/explain.h"

/* A token ends at white space, a quote or a comma; a trailing colon or
 * closing bracket is punctuation, not part of a path. */
static size_t token_len(const char *p, const char *end)
{
	const char *q = p;
	while (q < end && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r' && *q != '\'' &&
	       *q != '"' && *q != ',' && *q != '`')
		q++;
	while (q > p && (q[-1] == ':' || q[-1] == ')' || q[-1] == ']' || q[-1] == '.'))
		q--;
	return (size_t)(q - p);
}

static const char *find(const char *hay, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	if (n == 0 || (size_t)(end - hay) < n)
		return NULL;
	return memmem(hay, (size_t)(end - hay), needle, n);
}

/* Is the token a shared-object path (…/x.so or …/x.so.1.2)? */
static bool is_so_path(const char *t, size_t n)
{
	if (n < 4 || t[0] != '/')
		return false;
	for (size_t i = n; i-- > 2;) {
		if (t[i] == '/')
			return false;
		if (t[i] == 'o' && t[i - 1] == 's' && t[i - 2] == '.') {
			for (size_t k = i + 1; k < n; k++)
				if (!((t[k] >= '0' && t[k] <= '9') || t[k] == '.'))
					return false;
			return true;
		}
	}
	return false;
}

/* The start of the whitespace-delimited word that ends just before p. */
static const char *word_before(const char *text, const char *p)
{
	const char *q = p;
	while (q > text && q[-1] != ' ' && q[-1] != '\n' && q[-1] != '\t' && q[-1] != '\'' && q[-1] != '"')
		q--;
	return q;
}

static const char *line_of(struct arena *a, const char *text, const char *end, const char *p)
{
	const char *s = p;
	while (s > text && s[-1] != '\n')
		s--;
	const char *e = p;
	while (e < end && *e != '\n')
		e++;
	/* drop a leading "ImportError: " / "OSError: " so the loader's text remains */
	static const char *const prefixes[] = { "ImportError: ", "OSError: ", "- ImportError: ", "- OSError: " };
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		const char *q = find(s, e, prefixes[i]);
		if (q) {
			s = q + strlen(prefixes[i]);
			break;
		}
	}
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == '\r' || e[-1] == ' '))
		e--;
	return arena_strndup(a, s, (size_t)(e - s));
}

void explain_parse(struct arena *a, const char *text, size_t len, struct error_facts *f)
{
	memset(f, 0, sizeof *f);
	const char *end = text + len;
	/* every shared-object path, in order */
	for (const char *p = text; p < end; p++) {
		if (*p != '/' || (p > text && p[-1] != ' ' && p[-1] != '\n' && p[-1] != '\'' && p[-1] != '"' &&
				  p[-1] != '(' && p[-1] != '\t' && p[-1] != '['))
			continue;
		size_t n = token_len(p, end);
		if (is_so_path(p, n)) {
			const char *path = arena_strndup(a, p, n);
			if (!f->object)
				f->object = path;
			ptrvec_push(a, &f->objects, (void *)path);
		}
		p += n ? n - 1 : 0;
	}
	const char *us = find(text, end, "undefined symbol: ");
	if (us) {
		const char *s = us + strlen("undefined symbol: ");
		f->symbol = arena_strndup(a, s, token_len(s, end));
		const char *v = find(s, end, ", version ");
		const char *nl = find(s, end, "\n");
		if (v && (!nl || v < nl)) {
			v += strlen(", version ");
			f->version = arena_strndup(a, v, token_len(v, end));
		}
		f->kind = "undefined-symbol";
		f->error_line = line_of(a, text, end, us);
		/* the object is the path just before ": undefined symbol" */
		const char *w = word_before(text, us - text >= 2 ? us - 2 : us);
		size_t n = token_len(w, end);
		if (is_so_path(w, n))
			f->object = arena_strndup(a, w, n);
	}
	const char *co = find(text, end, ": cannot open shared object file");
	if (co) {
		const char *w = word_before(text, co);
		f->missing_library = arena_strndup(a, w, (size_t)(co - w));
		f->kind = "library-not-found";
		if (!f->error_line)
			f->error_line = line_of(a, text, end, co);
	}
	const char *vn = find(text, end, "version `");
	if (vn) {
		const char *v = vn + strlen("version `");
		const char *q = v;
		while (q < end && *q != '\'' && *q != '\n')
			q++;
		const char *nf = find(q, end, "' not found");
		if (q < end && *q == '\'' && nf == q) {
			f->version_missing = arena_strndup(a, v, (size_t)(q - v));
			f->kind = "version-not-found";
			f->error_line = line_of(a, text, end, vn);
			const char *w = word_before(text, vn - text >= 2 ? vn - 2 : vn);
			size_t n = token_len(w, end);
			if (n && w[0] == '/')
				f->version_provider = arena_strndup(a, w, n);
			const char *rb = find(q, end, "(required by ");
			const char *nl = find(q, end, "\n");
			if (rb && (!nl || rb < nl)) {
				rb += strlen("(required by ");
				f->required_by = arena_strndup(a, rb, token_len(rb, end));
				f->object = f->required_by;
			}
		}
	}
	if (!f->kind && find(text, end, "wrong ELF class")) {
		f->kind = "wrong-elf";
		f->error_line = line_of(a, text, end, find(text, end, "wrong ELF class"));
	}
	if (!f->kind && find(text, end, "invalid ELF header")) {
		f->kind = "invalid-elf";
		f->error_line = line_of(a, text, end, find(text, end, "invalid ELF header"));
	}
	const char *nm = find(text, end, "No module named '");
	if (nm) {
		const char *s = nm + strlen("No module named '");
		const char *q = s;
		while (q < end && *q != '\'' && *q != '\n')
			q++;
		f->no_module = arena_strndup(a, s, (size_t)(q - s));
	}
	/* traceback frames: File "/…/site-packages/pkg/mod.py", line N */
	for (const char *p = text; (p = find(p, end, "File \"")) != NULL;) {
		const char *s = p + 6;
		const char *q = s;
		while (q < end && *q != '"' && *q != '\n')
			q++;
		if (q < end && *q == '"' && q - s > 3 && s[0] == '/')
			f->py_file = arena_strndup(a, s, (size_t)(q - s));
		p = q;
	}
	/* site-packages/<package>/ from the object or the traceback */
	const char *probe[3] = { f->object, f->py_file, f->objects.n ? f->objects.item[0] : NULL };
	for (size_t i = 0; i < ARRAY_SIZE(probe) && !f->package; i++) {
		const char *pth = probe[i];
		if (!pth)
			continue;
		const char *sp = strstr(pth, "/site-packages/");
		size_t skip = strlen("/site-packages/");
		if (!sp) {
			sp = strstr(pth, "/dist-packages/");
			skip = strlen("/dist-packages/");
		}
		if (!sp)
			continue;
		const char *pkg = sp + skip;
		const char *slash = strchr(pkg, '/');
		if (slash) {
			f->package = arena_strndup(a, pkg, (size_t)(slash - pkg));
			f->site = arena_strndup(a, pth, (size_t)(sp - pth) + skip - 1);
		}
	}
}
