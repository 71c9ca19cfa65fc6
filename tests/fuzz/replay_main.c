/*
 * replay_main.c: runs a fuzz target's LLVMFuzzerTestOneInput on files,
 * without libFuzzer, so make test (and make test-asan, with the
 * sanitizers) replays the crash regressions and the seed corpora with the
 * normal compiler.  Usage: fuzz_X FILE...  Prints one TAP line per file;
 * a crash is the failure (the target traps or a sanitizer aborts).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			printf("not ok - %s: cannot open\n", argv[i]);
			return 1;
		}
		size_t cap = 1 << 16, len = 0;
		uint8_t *buf = malloc(cap);
		size_t got;
		while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
			len += got;
			if (len == cap) {
				uint8_t *nb = realloc(buf, cap *= 2);
				if (!nb) {
					free(buf);
					buf = NULL;
				}
				buf = nb;
			}
		}
		fclose(f);
		if (!buf) {
			printf("not ok - %s: out of memory\n", argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		printf("ok - %s (%zu bytes)\n", argv[i], len);
	}
	return 0;
}
