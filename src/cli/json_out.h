/*
 * json_out.h: a streaming JSON writer for the renderers.
 *
 * Strings are validated as UTF-8; invalid bytes (file names and ELF strings
 * are arbitrary bytes) are written as U+FFFD so the document is always
 * valid JSON.  Output is indented with two spaces.
 */
#ifndef ABISCOPE_JSON_OUT_H
#define ABISCOPE_JSON_OUT_H

#include "report/value.h"

#define JW_MAX_DEPTH 63	/* deeper values are written at this indentation */

struct jw {
	FILE *out;
	int depth;
	bool first[JW_MAX_DEPTH + 1];
	bool after_key;
};

void jw_init(struct jw *w, FILE *out);
void jw_obj_begin(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w);
void jw_arr_end(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s);	/* NULL writes null */
void jw_int(struct jw *w, int64_t v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
void jw_value(struct jw *w, const struct value *v);
/* Convenience: key + value. */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_kint(struct jw *w, const char *key, int64_t v);
void jw_kbool(struct jw *w, const char *key, bool v);
/* key: [the strings of v] (a ptrvec of const char *) */
void jw_kstrs(struct jw *w, const char *key, const struct ptrvec *v);
void jw_end(struct jw *w);	/* final newline */
/* The escaper every string and key above goes through, exposed for the
 * fuzz target (tests/fuzz/fuzz_escape.c): s as one JSON string. */
void jw_write_string(FILE *out, const char *s);

#endif
