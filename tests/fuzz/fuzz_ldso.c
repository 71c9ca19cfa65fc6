/* libFuzzer target: the facts read from the dynamic loader binary's bytes
 * (release banner, SYSTEM_DIRS), as --root hands them over. */
#include "loader/ldso.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct ldso_facts f;
	memset(&f, 0, sizeof f);
	if (ldso_read_binary(&a, bytes_make(data, size, false), &f))
		for (size_t i = 0; i < f.nsystem_dirs; i++)
			(void)strlen(f.system_dirs[i]);
	if (f.glibc_banner)
		(void)strlen(f.glibc_banner);
	arena_release(&a);
	return 0;
}
