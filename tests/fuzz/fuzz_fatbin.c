/* libFuzzer target: the fatbin reader, over a raw fatbin and over an ELF
 * file's sections and wrappers, plus the cubin identification and the
 * /proc/driver/nvidia/version parser. */
#include "cuda/fatbin.h"
#include "cuda/gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(struct arena *a, const struct fatbin_set *set)
{
	char name[32];
	for (size_t i = 0; i < set->nentry; i++)
		fatbin_target_name(&set->entry[i], name, sizeof name);
	const char **lines;
	(void)fatbin_cuobjdump_list(a, "fuzz.so", set, false, FATBIN_CUBIN, &lines);
	(void)fatbin_cuobjdump_list(a, "fuzz", set, false, FATBIN_PTX, &lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct bytes raw = bytes_make(data, size, false);
	struct fatbin_set set;
	fatbin_set_init(&set);
	fatbin_scan_raw(&a, raw, &set);
	touch(&a, &set);
	struct elf_file ef;
	struct diag d;
	diag_clear(&d);
	if (elf_parse(&a, raw, "fuzz", &ef, &d) == ST_OK) {
		fatbin_set_init(&set);
		fatbin_scan_elf(&a, &ef, FATBIN_SCAN_ALL, &set);
		touch(&a, &set);
		uint16_t sm;
		char variant;
		(void)cubin_identify(&ef, &sm, &variant);
	}
	struct driver_version v;
	(void)gpu_parse_module_version(&a, (const char *)data, size, &v, NULL);
	arena_release(&a);
	return 0;
}
