/*
 * bytes.h: the one bounds-checked reader every parser goes through.
 *
 * A struct bytes is a read-only window (pointer, length) onto memory the
 * caller owns: usually a read-only mapping of a file, or a sub-window of
 * one (a section, a fatbin entry, a zip member).  Nothing here allocates.
 *
 * Contract:
 *  - every read takes an offset and checks it against the window with
 *    integer arithmetic only (size <= len && off <= len - size); it returns
 *    false instead of reading outside;
 *  - multi-byte integers are read byte by byte in the byte order of the
 *    window, so no alignment is ever assumed and there is no global state;
 *  - a string is handed out only once its NUL terminator is proven to lie
 *    inside the window it comes from (bytes_cstr).
 */
#ifndef ABISCOPE_BYTES_H
#define ABISCOPE_BYTES_H

#include "core/common.h"

struct bytes {
	const uint8_t *data;
	size_t len;
	bool big_endian;
};

static inline struct bytes bytes_make(const void *data, size_t len, bool big_endian)
{
	struct bytes b = { (const uint8_t *)data, len, big_endian };
	return b;
}

/* True when [off, off + size) lies inside the window. */
static inline bool bytes_has(const struct bytes *b, uint64_t off, uint64_t size)
{
	return size <= b->len && off <= b->len - size;
}

/* A sub-window; false when it does not fit.  Inherits the byte order. */
bool bytes_sub(const struct bytes *b, uint64_t off, uint64_t size, struct bytes *out);

bool bytes_u8(const struct bytes *b, uint64_t off, uint8_t *out);
bool bytes_u16(const struct bytes *b, uint64_t off, uint16_t *out);
bool bytes_u32(const struct bytes *b, uint64_t off, uint32_t *out);
bool bytes_u64(const struct bytes *b, uint64_t off, uint64_t *out);
/* A 32- or 64-bit word depending on is64 (ELF addresses and sizes). */
bool bytes_word(const struct bytes *b, uint64_t off, bool is64, uint64_t *out);

/*
 * The NUL-terminated string starting at off, proven terminated inside the
 * window (a window whose last byte is NUL proves it without a scan, when
 * len is NULL).  *len (optional) receives strlen.  False when off is
 * outside or no NUL follows before the end of the window.
 */
bool bytes_cstr(const struct bytes *b, uint64_t off, const char **out, size_t *len);

/* Pointer to size bytes at off, or NULL when they do not fit.  Inline:
 * the tables of a whole environment are read through it, tens of millions
 * of times a scan. */
static inline const uint8_t *bytes_at(const struct bytes *b, uint64_t off, uint64_t size)
{
	return bytes_has(b, off, size) ? b->data + off : NULL;
}

/* Offset of the first occurrence of needle at or after from, or -1. */
int64_t bytes_find(const struct bytes *b, uint64_t from, const void *needle, size_t nlen);

#endif
