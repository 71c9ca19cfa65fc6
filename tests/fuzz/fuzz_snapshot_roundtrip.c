/*
 * libFuzzer target: the snapshot writer -> reader round trip.  Whatever the
 * reader accepts, the writer must write back as a snapshot the reader
 * accepts again, and writing that one gives the same text: nothing read is
 * lost or changed by a save.
 */
#include "host/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct diag d;
	diag_clear(&d);
	struct snapshot s1, s2;
	if (snapshot_parse(&a, (const char *)data, size, "fuzz", &s1, &d) == ST_OK) {
		size_t n1, n2;
		char *t1 = snapshot_to_json(&s1, &n1);
		if (t1) {
			diag_clear(&d);
			if (snapshot_parse(&a, t1, n1, "written", &s2, &d) != ST_OK)
				__builtin_trap();	/* the writer wrote what the reader refuses */
			char *t2 = snapshot_to_json(&s2, &n2);
			if (t2 && (n1 != n2 || memcmp(t1, t2, n1) != 0))
				__builtin_trap();	/* a save changed the snapshot */
			free(t2);
			free(t1);
		}
	}
	arena_release(&a);
	return 0;
}
