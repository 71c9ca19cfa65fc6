/* libFuzzer target: torch/version.py read as text (src/cxx/torch.h) and
 * version node names as releases (src/cxx/versions.h). */
#include "cxx/versions.h"
#include "cxx/torch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct diag d;
	diag_clear(&d);
	struct torch_version_py v;
	/* the parser is given the exact window, no terminator */
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	torch_version_py_parse(&a, bytes_make(copy, size, false), "fuzz/version.py", &v, &d);
	(void)torch_local_tag(&a, v.version);
	(void)torch_dir_of(&a, arena_strndup(&a, (const char *)data, size));
	/* each line as a version node name */
	char *text = arena_strndup(&a, (const char *)data, size);
	const char *prev = "GLIBCXX_3.4.30";
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		struct ver_name n;
		struct ver_release r;
		(void)ver_parse(line, &n);
		(void)ver_release_of(line, &r);
		(void)ver_compare(line, prev);
		(void)ver_same_family(line, prev);
		prev = line;
	}
	free(copy);
	arena_release(&a);
	return 0;
}
