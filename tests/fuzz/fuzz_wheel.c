/*
 * libFuzzer target: a wheel from memory (libzip reads the archive; ours are
 * the member-name and size checks, WHEEL and METADATA fields, tag parsing),
 * every member read back with its CRC checked, and the tag check.
 */
#include "pyenv/wheel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct diag d;
	diag_clear(&d);
	struct wheel w;
	/* the first line, when it ends in .whl, names the wheel: tags get fuzzed too */
	const char *name = "pkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl";
	const uint8_t *nl = memchr(data, '\n', size < 256 ? size : 256);
	if (nl && nl - data > 4 && !memcmp(nl - 4, ".whl", 4)) {
		name = arena_strndup(&a, (const char *)data, (size_t)(nl - data));
		size -= (size_t)(nl - data) + 1;
		data = nl + 1;
	}
	if (wheel_open_buffer(&a, name, data, size, &w, &d) == ST_OK) {
		for (size_t i = 0; i < w.nm && i < 32; i++) {
			if (w.m[i].is_dir || w.m[i].size > (1u << 20))
				continue;
			const uint8_t *m;
			size_t len;
			diag_clear(&d);
			(void)wheel_read(&a, &w, i, &m, &len, &d);
		}
		struct wheel_target tg = { 3, 11, 2, 36, "x86_64" };
		for (size_t i = 0; i < w.ntag && i < 64; i++) {
			const char *why;
			(void)wheel_tag_supported(&a, &w.tag[i], &tg, &why);
		}
	}
	wheel_close(&w);
	arena_release(&a);
	return 0;
}
