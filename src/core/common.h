/*
 * common.h: the first include of every abiscope source file.
 *
 * Pulls in the standard headers nearly every module needs, a few small
 * helpers that have no better home, and banned.h last so that the bans
 * also apply to macros expanded from the headers above it.
 */
#ifndef ABISCOPE_COMMON_H
#define ABISCOPE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define UNUSED(x) ((void)(x))

/* Overflow-checked size arithmetic: false when the result does not fit. */
static inline bool size_add(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

static inline bool size_mul(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

static inline bool str_eq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* str_eq() where either may be NULL: both NULL, or the same text. */
static inline bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && str_eq(a, b));
}

static inline bool str_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static inline bool str_ends(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

/* snprintf(out, outsz, "%s%s%s", a, b, c) without the format's cost (a
 * path made once per RECORD row or directory entry): truncated to outsz - 1
 * bytes and terminated, outsz > 0. */
static inline void str_join(char *out, size_t outsz, const char *a, const char *b, const char *c)
{
	const char *part[3] = { a, b, c };
	size_t at = 0;
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(part[i]);
		if (n > outsz - 1 - at)
			n = outsz - 1 - at;
		memcpy(out + at, part[i], n);
		at += n;
	}
	out[at] = '\0';
}

#include "core/banned.h"

/* qsort() that accepts an empty or one-element array (whose pointer may be
 * NULL: passing NULL to qsort is undefined even for zero elements). */
static inline void sort_items(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* sort_items' comparison for an array of C strings, in strcmp order. */
static inline int cmp_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#endif
