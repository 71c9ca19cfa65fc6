#include "core/sha256.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHA256_X86_SHA 1
#include <cpuid.h>
#include <immintrin.h>
#endif
/* gcc lets one function use the crypto extension; clang's arm_neon.h
 * declares the SHA intrinsics only when the whole build targets it */
#if defined(__aarch64__) && (defined(__ARM_FEATURE_SHA2) || (defined(__GNUC__) && !defined(__clang__)))
#define SHA256_ARM_SHA2 1
#include <arm_neon.h>
#include <sys/auxv.h>
#ifndef HWCAP_SHA2
#define HWCAP_SHA2 (1 << 6)
#endif
#endif

static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static void block_portable(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64];
	for (unsigned i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (unsigned i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3;
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10;
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (unsigned i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void sha256_blocks_portable(uint32_t h[8], const void *data, size_t nblocks)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < nblocks; i++)
		block_portable(h, p + 64 * i);
}

#ifdef SHA256_X86_SHA
/* The SHA extensions (Intel SHA-NI, on every AMD Zen and Intel core since
 * Ice Lake): two rounds an instruction, the message schedule in two more.
 * State lanes as the instructions want them: ABEF and CDGH. */
__attribute__((target("sha,ssse3,sse4.1"))) static void blocks_x86_sha(uint32_t h[8], const uint8_t *p,
								       size_t nblocks)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&h[0]), 0xB1); /* CDAB */
	__m128i state1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&h[4]), 0x1B); /* EFGH */
	__m128i state0 = _mm_alignr_epi8(tmp, state1, 8);	/* ABEF */
	state1 = _mm_blend_epi16(state1, tmp, 0xF0);		/* CDGH */
	for (size_t b = 0; b < nblocks; b++, p += 64) {
		const __m128i abef = state0, cdgh = state1;
		__m128i w[4];
		for (unsigned i = 0; i < 16; i++) {
			__m128i m;
			if (i < 4) {
				m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)), bswap);
			} else {
				/* W[t..t+3] from W[t-16..t-1]: sigma0 terms, the W[t-7] words, sigma1 terms */
				m = _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]);
				m = _mm_add_epi32(m, _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
				m = _mm_sha256msg2_epu32(m, w[(i + 3) & 3]);
			}
			w[i & 3] = m;
			__m128i kw = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)(const void *)&k[4 * i]));
			state1 = _mm_sha256rnds2_epu32(state1, state0, kw);
			state0 = _mm_sha256rnds2_epu32(state0, state1, _mm_shuffle_epi32(kw, 0x0E));
		}
		state0 = _mm_add_epi32(state0, abef);
		state1 = _mm_add_epi32(state1, cdgh);
	}
	tmp = _mm_shuffle_epi32(state0, 0x1B);		/* FEBA */
	state1 = _mm_shuffle_epi32(state1, 0xB1);	/* DCHG */
	_mm_storeu_si128((__m128i *)(void *)&h[0], _mm_blend_epi16(tmp, state1, 0xF0));	/* DCBA */
	_mm_storeu_si128((__m128i *)(void *)&h[4], _mm_alignr_epi8(state1, tmp, 8));	/* HGFE */
}

static bool cpu_has_x86_sha(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));	/* CPUID.7.0:EBX.SHA */
}
#endif

#ifdef SHA256_ARM_SHA2
/* ARMv8's SHA2 instructions (every Neoverse core, NVIDIA Grace among them):
 * four rounds an instruction pair, the schedule in two more. */
#ifdef __ARM_FEATURE_SHA2
#define ARM_SHA2_TARGET
#else
#define ARM_SHA2_TARGET __attribute__((target("+crypto")))
#endif
ARM_SHA2_TARGET static void blocks_arm_sha2(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
	uint32x4_t abcd = vld1q_u32(&h[0]), efgh = vld1q_u32(&h[4]);
	for (size_t b = 0; b < nblocks; b++, p += 64) {
		const uint32x4_t abcd0 = abcd, efgh0 = efgh;
		uint32x4_t w[4];
		for (unsigned i = 0; i < 16; i++) {
			if (i < 4)
				w[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p + 16 * i)));
			else	/* W[t..t+3] from W[t-16..t-13], W[t-12..t-9], W[t-8..t-5], W[t-4..t-1] */
				w[i & 3] = vsha256su1q_u32(vsha256su0q_u32(w[i & 3], w[(i + 1) & 3]), w[(i + 2) & 3],
							   w[(i + 3) & 3]);
			const uint32x4_t kw = vaddq_u32(w[i & 3], vld1q_u32(&k[4 * i]));
			const uint32x4_t prev = abcd;
			abcd = vsha256hq_u32(abcd, efgh, kw);
			efgh = vsha256h2q_u32(efgh, prev, kw);
		}
		abcd = vaddq_u32(abcd, abcd0);
		efgh = vaddq_u32(efgh, efgh0);
	}
	vst1q_u32(&h[0], abcd);
	vst1q_u32(&h[4], efgh);
}
#endif

/* Which block function this CPU runs, asked of it once (cpuid traps to the
 * hypervisor in a virtual machine: not once per file). */
enum { IMPL_UNKNOWN, IMPL_PORTABLE, IMPL_X86_SHA, IMPL_ARM_SHA2 };
static _Atomic int impl = IMPL_UNKNOWN;

static int implementation(void)
{
	int i = impl;
	if (i == IMPL_UNKNOWN) {
		i = IMPL_PORTABLE;
#ifdef SHA256_X86_SHA
		if (cpu_has_x86_sha())
			i = IMPL_X86_SHA;
#endif
#ifdef SHA256_ARM_SHA2
		if (getauxval(AT_HWCAP) & HWCAP_SHA2)
			i = IMPL_ARM_SHA2;
#endif
		impl = i;
	}
	return i;
}

bool sha256_blocks_accelerated(uint32_t h[8], const void *data, size_t nblocks)
{
	switch (implementation()) {
#ifdef SHA256_X86_SHA
	case IMPL_X86_SHA:
		blocks_x86_sha(h, data, nblocks);
		return true;
#endif
#ifdef SHA256_ARM_SHA2
	case IMPL_ARM_SHA2:
		blocks_arm_sha2(h, data, nblocks);
		return true;
#endif
	default:
		(void)h, (void)data, (void)nblocks;
		return false;
	}
}

const char *sha256_implementation(void)
{
	switch (implementation()) {
	case IMPL_X86_SHA: return "x86 SHA extensions";
	case IMPL_ARM_SHA2: return "ARMv8 SHA2 instructions";
	default: return "portable C";
	}
}

static void blocks(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
	if (!sha256_blocks_accelerated(h, p, nblocks))
		sha256_blocks_portable(h, p, nblocks);
}

void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(c->h, iv, sizeof iv);
	c->len = 0;
	c->nbuf = 0;
}

void sha256_update(struct sha256 *c, const void *data, size_t n)
{
	const uint8_t *p = data;
	c->len += n;
	if (c->nbuf) {
		size_t take = 64 - c->nbuf < n ? 64 - c->nbuf : n;
		memcpy(c->buf + c->nbuf, p, take);
		c->nbuf += take;
		p += take;
		n -= take;
		if (c->nbuf < 64)
			return;
		blocks(c->h, c->buf, 1);
		c->nbuf = 0;
	}
	size_t whole = n / 64;
	if (whole)
		blocks(c->h, p, whole);
	p += whole * 64;
	n -= whole * 64;
	memcpy(c->buf, p, n);
	c->nbuf = n;
}

void sha256_final(struct sha256 *c, uint8_t out[32])
{
	uint64_t bits = c->len * 8;
	uint8_t pad[72] = { 0x80 };
	size_t npad = (c->nbuf < 56 ? 56 : 120) - c->nbuf;
	for (unsigned i = 0; i < 8; i++)
		pad[npad + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, pad, npad + 8);
	for (unsigned i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
}

void sha256(const void *data, size_t n, uint8_t out[32])
{
	struct sha256 c;
	sha256_init(&c);
	sha256_update(&c, data, n);
	sha256_final(&c, out);
}

/* ---- base64 ---- */

static const char std_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

void base64_encode(const uint8_t *p, size_t n, char *out, bool url)
{
	const char *al = url ? url_alphabet : std_alphabet;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		out[o++] = al[v >> 18 & 63];
		out[o++] = al[v >> 12 & 63];
		if (i + 1 < n)
			out[o++] = al[v >> 6 & 63];
		else if (!url)
			out[o++] = '=';
		if (i + 2 < n)
			out[o++] = al[v & 63];
		else if (!url)
			out[o++] = '=';
	}
	out[o] = '\0';
}

static int b64_value(char ch)
{
	const char *at = ch ? strchr(std_alphabet, ch) : NULL;
	return at ? (int)(at - std_alphabet) : -1;
}

bool base64_decode(const char *text, size_t len, uint8_t *out, size_t *out_len)
{
	size_t o = 0;
	if (len % 4)
		return false;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		int v[4];
		for (unsigned j = 0; j < 4; j++)
			v[j] = b64_value(text[i + j]);
		if (v[0] < 0 || v[1] < 0)
			return false;
		bool pad2 = last && text[i + 2] == '=' && text[i + 3] == '=';
		bool pad1 = last && !pad2 && text[i + 3] == '=';
		if ((!pad2 && v[2] < 0) || (!pad2 && !pad1 && v[3] < 0))
			return false;
		uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)(pad2 ? 0 : v[2]) << 6 |
			     (uint32_t)(pad1 || pad2 ? 0 : v[3]);
		out[o++] = (uint8_t)(x >> 16);
		if (!pad2)
			out[o++] = (uint8_t)(x >> 8);
		if (!pad1 && !pad2)
			out[o++] = (uint8_t)x;
	}
	*out_len = o;
	return true;
}
