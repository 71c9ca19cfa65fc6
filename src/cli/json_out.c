#include "cli/json_out.h"
#include "core/utf8.h"

#include <inttypes.h>

void jw_init(struct jw *w, FILE *out)
{
	memset(w, 0, sizeof *w);
	w->out = out;
	w->first[0] = true;
}

/* A new line and two spaces a level, in one write: --libraries' report
 * has hundreds of thousands of lines, most of them six levels deep. */
static void indent(struct jw *w)
{
	static const char line[] = "\n                                                                "
					     "                                                                ";
	_Static_assert(sizeof line > 1 + 2 * JW_MAX_DEPTH, "room for the deepest level");
	fwrite_unlocked(line, 1, 1 + 2 * (size_t)w->depth, w->out);
}

/* Separator and indentation before a value or key at the current level. */
static void before(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth])
			putc_unlocked(',', w->out);
		w->first[w->depth] = false;
		indent(w);
	}
}

static void open_(struct jw *w, char c)
{
	before(w);
	putc_unlocked(c, w->out);
	if (w->depth < JW_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jw *w, char c)
{
	bool empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (!empty)
		indent(w);
	putc_unlocked(c, w->out);
}

void jw_obj_begin(struct jw *w) { open_(w, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr_begin(struct jw *w) { open_(w, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

/* The one JSON string escaper: " \\ and the C0 controls escaped, a byte
 * that starts no valid UTF-8 sequence written as U+FFFD (json_out.h). */
void jw_write_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, run = 0;	/* p[run, i): written as they are, at once */
	putc_unlocked('"', out);
	while (i < n) {
		unsigned char c = p[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		uint32_t cp;
		size_t l = c >= 0x80 ? utf8_seq(p + i, n - i, &cp) : 0;
		if (l) {
			i += l;	/* a whole UTF-8 character */
			continue;
		}
		if (i > run)
			fwrite_unlocked(p + run, 1, i - run, out);
		if (c == '"' || c == '\\') {
			putc_unlocked('\\', out);
			putc_unlocked(c, out);
		} else if (c >= 0x80) {
			fputs_unlocked("\xef\xbf\xbd", out);	/* not UTF-8: U+FFFD */
		} else {
			switch (c) {
			case '\n': fputs_unlocked("\\n", out); break;
			case '\t': fputs_unlocked("\\t", out); break;
			case '\r': fputs_unlocked("\\r", out); break;
			default: fprintf(out, "\\u%04x", c); break;
			}
		}
		run = ++i;
	}
	if (i > run)
		fwrite_unlocked(p + run, 1, i - run, out);
	putc_unlocked('"', out);
}

void jw_key(struct jw *w, const char *key)
{
	before(w);
	jw_write_string(w->out, key);
	fputs_unlocked(": ", w->out);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	before(w);
	jw_write_string(w->out, s);
}

void jw_int(struct jw *w, int64_t v)
{
	before(w);
	fprintf(w->out, "%" PRId64, v);
}

void jw_bool(struct jw *w, bool v)
{
	before(w);
	fputs_unlocked(v ? "true" : "false", w->out);
}

void jw_null(struct jw *w)
{
	before(w);
	fputs_unlocked("null", w->out);
}

void jw_value(struct jw *w, const struct value *v)
{
	if (!v) {
		jw_null(w);
		return;
	}
	switch (v->kind) {
	case VAL_NULL: jw_null(w); break;
	case VAL_BOOL: jw_bool(w, v->u.b); break;
	case VAL_INT: jw_int(w, v->u.i); break;
	case VAL_STR: jw_str(w, v->u.s); break;
	case VAL_ARR:
		jw_arr_begin(w);
		for (size_t i = 0; i < v->u.list.n; i++)
			jw_value(w, v->u.list.item[i]);
		jw_arr_end(w);
		break;
	case VAL_OBJ:
		jw_obj_begin(w);
		for (size_t i = 0; i < v->u.list.n; i++) {
			jw_key(w, v->u.list.key[i]);
			jw_value(w, v->u.list.item[i]);
		}
		jw_obj_end(w);
		break;
	}
}

void jw_kstr(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_str(w, s);
}

void jw_kint(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	jw_int(w, v);
}

void jw_kbool(struct jw *w, const char *key, bool v)
{
	jw_key(w, key);
	jw_bool(w, v);
}

void jw_end(struct jw *w)
{
	putc_unlocked('\n', w->out);
}

void jw_kstrs(struct jw *w, const char *key, const struct ptrvec *v)
{
	jw_key(w, key);
	jw_arr_begin(w);
	for (size_t i = 0; i < v->n; i++)
		jw_str(w, v->item[i]);
	jw_arr_end(w);
}
