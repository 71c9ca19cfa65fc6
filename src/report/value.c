#include "report/value.h"

static struct value *mk(struct arena *a, enum value_kind k)
{
	struct value *v = arena_alloc(a, sizeof *v);
	v->kind = k;
	return v;
}

struct value *val_null(struct arena *a) { return mk(a, VAL_NULL); }

struct value *val_bool(struct arena *a, bool b)
{
	struct value *v = mk(a, VAL_BOOL);
	v->u.b = b;
	return v;
}

struct value *val_int(struct arena *a, int64_t i)
{
	struct value *v = mk(a, VAL_INT);
	v->u.i = i;
	return v;
}

struct value *val_str(struct arena *a, const char *s)
{
	if (!s)
		return val_null(a);
	struct value *v = mk(a, VAL_STR);
	v->u.s = arena_strdup(a, s);
	return v;
}

struct value *val_str_ref(struct arena *a, const char *s)
{
	if (!s)
		return val_null(a);
	struct value *v = mk(a, VAL_STR);
	v->u.s = s;
	return v;
}

struct value *val_arr(struct arena *a) { return mk(a, VAL_ARR); }
struct value *val_obj(struct arena *a) { return mk(a, VAL_OBJ); }

static void grow(struct arena *a, struct value *c)
{
	if (c->u.list.n < c->u.list.cap)
		return;
	size_t cap = c->u.list.cap ? c->u.list.cap * 2 : 4;
	c->u.list.item = arena_grow(a, c->u.list.item, c->u.list.n, cap, sizeof(struct value *));
	if (c->kind == VAL_OBJ)
		c->u.list.key = arena_grow(a, c->u.list.key, c->u.list.n, cap, sizeof(char *));
	c->u.list.cap = cap;
}

void val_push(struct arena *a, struct value *arr, struct value *v)
{
	grow(a, arr);
	arr->u.list.item[arr->u.list.n++] = v;
}

void val_set(struct arena *a, struct value *obj, const char *key, struct value *v)
{
	for (size_t i = 0; i < obj->u.list.n; i++)
		if (str_eq(obj->u.list.key[i], key)) {
			obj->u.list.item[i] = v;
			return;
		}
	grow(a, obj);
	obj->u.list.key[obj->u.list.n] = arena_strdup(a, key);
	obj->u.list.item[obj->u.list.n++] = v;
}

void val_set_str(struct arena *a, struct value *obj, const char *key, const char *s)
{
	val_set(a, obj, key, val_str(a, s));
}

void val_set_int(struct arena *a, struct value *obj, const char *key, int64_t i)
{
	val_set(a, obj, key, val_int(a, i));
}

void val_set_bool(struct arena *a, struct value *obj, const char *key, bool b)
{
	val_set(a, obj, key, val_bool(a, b));
}

const struct value *val_get(const struct value *obj, const char *key)
{
	if (!obj || obj->kind != VAL_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->u.list.n; i++)
		if (str_eq(obj->u.list.key[i], key))
			return obj->u.list.item[i];
	return NULL;
}

const char *val_get_str(const struct value *obj, const char *key)
{
	const struct value *v = val_get(obj, key);
	return v && v->kind == VAL_STR ? v->u.s : NULL;
}
