/* Unit tests: SHA-256 against the FIPS 180-4 / NIST example vectors, and
 * base64 against RFC 4648's test vectors (the oracles are the standards). */
#include "unit.h"
#include "core/sha256.h"

static const char *hex(const uint8_t md[32])
{
	static char buf[65];
	for (unsigned i = 0; i < 32; i++)
		snprintf(buf + 2 * i, 3, "%02x", md[i]);
	return buf;
}

static void digests(void)
{
	uint8_t md[32];
	sha256("", 0, md);
	CHECK_STR(hex(md), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256 of nothing");
	sha256("abc", 3, md);
	CHECK_STR(hex(md), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 of abc");
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256(m448, strlen(m448), md);
	CHECK_STR(hex(md), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "sha256 of 448 bits");
	const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
			   "mnopqrstnopqrstu";
	sha256(m896, strlen(m896), md);
	CHECK_STR(hex(md), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1", "sha256 of 896 bits");
	/* a million 'a', fed in uneven pieces: the buffering across blocks */
	static uint8_t a[1000000];
	memset(a, 'a', sizeof a);
	struct sha256 c;
	sha256_init(&c);
	size_t off = 0, step = 1;
	while (off < sizeof a) {
		size_t n = step < sizeof a - off ? step : sizeof a - off;
		sha256_update(&c, a + off, n);
		off += n;
		step = step * 3 % 1000 + 1;
	}
	sha256_final(&c, md);
	CHECK_STR(hex(md), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
		  "sha256 of a million a, in pieces");
	/* lengths around the padding boundary (55, 56, 63, 64 bytes), against one-shot */
	for (size_t n = 54; n <= 65; n++) {
		uint8_t one[32], two[32];
		sha256(a, n, one);
		sha256_init(&c);
		sha256_update(&c, a, n / 2);
		sha256_update(&c, a + n / 2, n - n / 2);
		sha256_final(&c, two);
		CHECK(!memcmp(one, two, 32), "sha256 in two pieces equals one piece near the padding boundary");
	}
}

/* The CPU's SHA instructions against the portable C, block for block, on
 * data no vector above has: the same state after 1 to 40 blocks of
 * pseudo-random bytes, from pseudo-random states.  Where the CPU has no
 * SHA instructions the accelerated path must say so and do nothing. */
static void accelerated(void)
{
	static uint8_t data[64 * 40];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof data; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		data[i] = (uint8_t)x;
	}
	printf("# sha256 runs: %s\n", sha256_implementation());
	int same = 0, runs = 0;
	bool has = true;
	for (size_t n = 1; n <= 40 && has; n++) {
		uint32_t a[8], b[8];
		for (unsigned i = 0; i < 8; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			a[i] = b[i] = (uint32_t)x;
		}
		sha256_blocks_portable(a, data + 64 * (40 - n), n);
		has = sha256_blocks_accelerated(b, data + 64 * (40 - n), n);
		runs++;
		same += has && !memcmp(a, b, sizeof a);
	}
	if (has)
		CHECK_INT(same, runs, "the SHA instructions reach the portable code's state on 1 to 40 blocks");
	else
		CHECK(strcmp(sha256_implementation(), "portable C") == 0,
		      "no SHA instructions here: the portable code runs, and says so");
}

static void base64(void)
{
	static const char *const rfc[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	char enc[64];
	uint8_t dec[64];
	size_t n;
	for (size_t i = 0; i < ARRAY_SIZE(rfc); i++) {
		base64_encode((const uint8_t *)rfc[i][0], strlen(rfc[i][0]), enc, false);
		CHECK_STR(enc, rfc[i][1], "base64 encodes RFC 4648's vector");
		CHECK_INT(strlen(enc), base64_len(strlen(rfc[i][0])), "base64_len is the encoded length");
		bool ok = base64_decode(rfc[i][1], strlen(rfc[i][1]), dec, &n);
		CHECK(ok && n == strlen(rfc[i][0]) && !memcmp(dec, rfc[i][0], n), "base64 decodes RFC 4648's vector");
	}
	const uint8_t bin[] = { 0xfb, 0xff, 0xfe };
	base64_encode(bin, 3, enc, false);
	CHECK_STR(enc, "+//+", "base64: + and / in the standard alphabet");
	base64_encode(bin, 3, enc, true);
	CHECK_STR(enc, "-__-", "base64: - and _ in the URL-safe alphabet");
	base64_encode(bin, 2, enc, true);
	CHECK_STR(enc, "-_8", "base64 URL-safe: no padding (as RECORD writes it)");
	CHECK(!base64_decode("Zm9", 3, dec, &n), "base64 rejects a length not a multiple of 4");
	CHECK(!base64_decode("Zm*v", 4, dec, &n), "base64 rejects a character outside the alphabet");
	CHECK(!base64_decode("Zg==Zg==", 8, dec, &n), "base64 rejects padding before the end");
	CHECK(!base64_decode("Z===", 4, dec, &n), "base64 rejects three padding characters");
	CHECK(!base64_decode("Zm=v", 4, dec, &n), "base64 rejects padding inside a quantum");
	CHECK(!base64_decode("-_8=", 4, dec, &n), "base64 decode takes the standard alphabet only");
}

int main(void)
{
	digests();
	accelerated();
	base64();
	return unit_done();
}
