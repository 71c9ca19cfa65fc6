/*
 * value.h: a small tree of typed values (null, bool, integer, string,
 * array, object) for the id-specific fields of findings and for any other
 * structured result a renderer has to print.
 *
 * Analyses build values, renderers only read them.  Everything lives in
 * the scan's arena; strings are copied in unless the caller says they
 * already live long enough (val_str_ref).  Object keys keep insertion
 * order so that JSON output is stable.
 */
#ifndef ABISCOPE_VALUE_H
#define ABISCOPE_VALUE_H

#include "core/arena.h"

enum value_kind { VAL_NULL, VAL_BOOL, VAL_INT, VAL_STR, VAL_ARR, VAL_OBJ };

struct value {
	enum value_kind kind;
	union {
		bool b;
		int64_t i;
		const char *s;
		struct {
			struct value **item;
			const char **key;	/* VAL_OBJ only */
			size_t n, cap;
		} list;
	} u;
};

struct value *val_null(struct arena *a);
struct value *val_bool(struct arena *a, bool b);
struct value *val_int(struct arena *a, int64_t i);
struct value *val_str(struct arena *a, const char *s);	/* copies; NULL gives null */
struct value *val_str_ref(struct arena *a, const char *s);	/* no copy */
struct value *val_arr(struct arena *a);
struct value *val_obj(struct arena *a);

void val_push(struct arena *a, struct value *arr, struct value *v);
/* Sets key (copied) in obj, replacing an existing key. */
void val_set(struct arena *a, struct value *obj, const char *key, struct value *v);
void val_set_str(struct arena *a, struct value *obj, const char *key, const char *s);
void val_set_int(struct arena *a, struct value *obj, const char *key, int64_t i);
void val_set_bool(struct arena *a, struct value *obj, const char *key, bool b);

/* Reading helpers (NULL when absent or of another kind). */
const struct value *val_get(const struct value *obj, const char *key);
const char *val_get_str(const struct value *obj, const char *key);

#endif
