/*
 * sha256.h: SHA-256 (FIPS 180-4) and base64 (RFC 4648), the two things
 * abiscope needed libcrypto for: RECORD hashes of wheels and installed
 * distributions, and the bytes a snapshot stores as base64.  Small and
 * dependency-free so the static wheel build needs no OpenSSL.
 */
#ifndef ABISCOPE_CORE_SHA256_H
#define ABISCOPE_CORE_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
void sha256_final(struct sha256 *c, uint8_t out[32]);
/* The digest of n bytes at data in one call. */
void sha256(const void *data, size_t n, uint8_t out[32]);

/* The compression function over nblocks 64-byte blocks, two ways (the
 * unit test holds one to the other; sha256_update picks the fast one):
 * portable C, and the CPU's SHA instructions where it has them (x86-64's
 * SHA extensions, ARMv8's SHA2; false, nothing done, elsewhere).  Which
 * one runs here: sha256_implementation(). */
void sha256_blocks_portable(uint32_t h[8], const void *data, size_t nblocks);
bool sha256_blocks_accelerated(uint32_t h[8], const void *data, size_t nblocks);
const char *sha256_implementation(void);

/* Characters base64 needs for n bytes (padded), not counting a NUL. */
size_t base64_len(size_t n);
/* Writes base64_len(n) characters and a NUL to out.  url: the URL-safe
 * alphabet (-_) without padding, as wheel RECORDs write digests. */
void base64_encode(const uint8_t *p, size_t n, char *out, bool url);
/* Decodes padded standard base64 of len characters (a multiple of 4) into
 * out (room for len / 4 * 3 bytes); false on any other character or
 * misplaced padding. */
bool base64_decode(const char *text, size_t len, uint8_t *out, size_t *out_len);

#endif
