/* Unit tests: what termsafe_escape() writes to a terminal, byte by byte the
 * same whether the bytes come in one piece or in many (it writes each run of
 * bytes shown as they are at once, and must not lose or reorder any). */
#include "unit.h"
#include "cli/termsafe.c"

/* The escape of in[0, n) fed in pieces of at most step bytes, as a stream
 * gets them: what one call leaves (a split UTF-8 sequence) leads the next. */
static char *escape_in_steps(const char *in, size_t n, size_t step)
{
	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	if (!f)
		return NULL;
	unsigned char work[64];
	size_t held = 0, at = 0;
	while (at < n || held) {
		size_t take = MIN(step, n - at);
		memcpy(work + held, in + at, take);
		at += take;
		size_t have = held + take;
		size_t used = termsafe_escape(f, work, have, at == n);
		held = have - used;
		memmove(work, work + used, held);
		if (at == n && held && used == 0)
			break;	/* nothing more will come */
	}
	fclose(f);
	return out;
}

static void escapes(void)
{
	static const struct {
		const char *in, *out, *what;
	} cases[] = {
		{ "plain text, 100%", "plain text, 100%", "printable ASCII as it is" },
		{ "a\tb\nc", "a\tb\nc", "tab and newline as they are" },
		{ "x\x1b]0;owned\x07y", "x\\u001b]0;owned\\u0007y", "ESC and BEL escaped, the text around kept" },
		{ "\x7f", "\\u007f", "DEL escaped" },
		{ "caf\xc3\xa9 \xe2\x80\xae!", "caf\xc3\xa9 \\u202e!", "UTF-8 kept, a bidi override escaped" },
		{ "a\xff" "b\xc3", "a\\xffb\\xc3", "bytes that are no UTF-8 escaped as bytes" },
		{ "\xc2\x9b" "2J", "\\u009b2J", "a C1 control (CSI) escaped" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = strlen(cases[i].in);
		for (size_t step = 1; step <= n; step++) {
			char *got = escape_in_steps(cases[i].in, n, step);
			bool ok = got && str_eq(got, cases[i].out);
			if (!ok || step == n)
				CHECK(ok, cases[i].what);
			free(got);
			if (!ok)
				break;
		}
	}
}

int main(void)
{
	escapes();
	return unit_done();
}
