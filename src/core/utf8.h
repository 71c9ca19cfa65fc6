/*
 * utf8.h: the one UTF-8 decoder of abiscope.  Names come from the files
 * inspected (a METADATA Name, a DT_NEEDED, a file name) and are arbitrary
 * bytes; every renderer that must emit well-formed text (JSON strings,
 * JUnit XML, the terminal filter) asks this function what a byte starts.
 *
 * utf8_seq(p, n, &cp): the length (1-4) of the valid UTF-8 sequence at p,
 * reading at most n bytes, and its code point in *cp; 0 when the bytes at
 * p are none (a stray continuation byte, an overlong form, a surrogate, a
 * code point past U+10FFFF, a sequence cut short by n).  n must be >= 1.
 */
#ifndef ABISCOPE_UTF8_H
#define ABISCOPE_UTF8_H

#include <stddef.h>
#include <stdint.h>

static inline size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char c = p[0];
	size_t len;
	uint32_t v;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		len = 2;
		v = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		v = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000) || v > 0x10ffff ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

#endif
