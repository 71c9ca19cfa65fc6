/*
 * libFuzzer target: the torch ABI index reader (cxx/torchabi.h) on arbitrary
 * bytes, then a lookup and the set texts when it parses.
 */
#include "cxx/torchabi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct diag d;
	diag_clear(&d);
	struct torchabi ix;
	if (torchabi_parse(&a, bytes_make(data, size, false), "fuzz", &ix, &d) == ST_OK && ix.nrel) {
		const struct torchset *s = torchabi_lookup(&ix, "_ZN3c104cuda9SetDeviceEi");
		struct torchset all;
		torchset_all(&all, ix.nrel);
		(void)torchset_text(&a, &ix, s ? s : &all);
		(void)torchset_cuda_text(&a, &ix, s ? s : &all);
		(void)torchabi_find(&ix, ix.rel[0].version, ix.rel[0].machine);
		struct torchset m;
		if (torchabi_machine_set(&ix, ix.rel[ix.nrel - 1].machine, &m))
			(void)torchset_text(&a, &ix, &m);
	}
	arena_release(&a);
	return 0;
}
