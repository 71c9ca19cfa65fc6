#include "core/bytes.h"

bool bytes_sub(const struct bytes *b, uint64_t off, uint64_t size, struct bytes *out)
{
	if (!bytes_has(b, off, size))
		return false;
	out->data = b->data + off;
	out->len = (size_t)size;
	out->big_endian = b->big_endian;
	return true;
}

bool bytes_u8(const struct bytes *b, uint64_t off, uint8_t *out)
{
	if (!bytes_has(b, off, 1))
		return false;
	*out = b->data[off];
	return true;
}

bool bytes_u16(const struct bytes *b, uint64_t off, uint16_t *out)
{
	if (!bytes_has(b, off, 2))
		return false;
	const uint8_t *p = b->data + off;
	*out = b->big_endian ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
	return true;
}

bool bytes_u32(const struct bytes *b, uint64_t off, uint32_t *out)
{
	if (!bytes_has(b, off, 4))
		return false;
	const uint8_t *p = b->data + off;
	if (b->big_endian)
		*out = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	else
		*out = (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
	return true;
}

bool bytes_u64(const struct bytes *b, uint64_t off, uint64_t *out)
{
	uint32_t lo, hi;
	if (!bytes_has(b, off, 8))
		return false;
	if (b->big_endian) {
		bytes_u32(b, off, &hi);
		bytes_u32(b, off + 4, &lo);
	} else {
		bytes_u32(b, off, &lo);
		bytes_u32(b, off + 4, &hi);
	}
	*out = (uint64_t)hi << 32 | lo;
	return true;
}

bool bytes_word(const struct bytes *b, uint64_t off, bool is64, uint64_t *out)
{
	if (is64)
		return bytes_u64(b, off, out);
	uint32_t v;
	if (!bytes_u32(b, off, &v))
		return false;
	*out = v;
	return true;
}

bool bytes_cstr(const struct bytes *b, uint64_t off, const char **out, size_t *len)
{
	if (off >= b->len)
		return false;
	const uint8_t *start = b->data + off;
	if (!len && b->data[b->len - 1] == 0) {
		/* a string table that ends in a NUL (every linker's) terminates
		 * every string in it: no scan for the caller that reads it anyway */
		*out = (const char *)start;
		return true;
	}
	const uint8_t *nul = memchr(start, 0, b->len - (size_t)off);
	if (!nul)
		return false;
	*out = (const char *)start;
	if (len)
		*len = (size_t)(nul - start);
	return true;
}

int64_t bytes_find(const struct bytes *b, uint64_t from, const void *needle, size_t nlen)
{
	if (nlen == 0 || from > b->len || b->len - from < nlen)
		return -1;
	const uint8_t *hay = b->data + from;
	size_t hlen = b->len - (size_t)from;
	const uint8_t *hit = memmem(hay, hlen, needle, nlen);
	return hit ? (int64_t)(hit - b->data) : -1;
}
