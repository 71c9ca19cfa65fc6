/*
 * libFuzzer target: the snapshot reader (JSON through jansson, then every
 * member's validation), its summary reader, and what a mounted snapshot
 * gives the loader: each described ELF object synthesised and parsed back,
 * its references collected and a lookup made in it.
 */
#include "host/snapshot.h"
#include "elf/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct diag d;
	diag_clear(&d);
	struct snap_summary sum;
	(void)snapshot_parse_summary(&a, (const char *)data, size, "fuzz", &sum, &d);
	struct snapshot snap;
	diag_clear(&d);
	if (snapshot_parse(&a, (const char *)data, size, "fuzz", &snap, &d) == ST_OK) {
		for (size_t i = 0; i < snap.nfiles && i < 64; i++) {
			const struct snap_file *f = &snap.files[i];
			if (f->type != SNAP_ELF || !f->elf)
				continue;
			const uint8_t *img;
			size_t len;
			diag_clear(&d);
			if (snapshot_synth_elf(&a, f->elf, f->path, &img, &len, &d) != ST_OK)
				continue;
			struct elf_file ef;
			diag_clear(&d);
			if (elf_parse(&a, bytes_make(img, len, false), f->path, &ef, &d) != ST_OK)
				__builtin_trap();	/* what we synthesise must always parse */
			struct elf_refs refs;
			elf_collect_refs(&a, &ef, &refs);
			struct elf_hash_iter it;
			uint32_t idx;
			const char *name = "#0123456789abcdef";
			elf_hash_iter_init(&it, &ef, name, elf_gnu_hash(name), elf_sysv_hash(name));
			while (elf_hash_iter_next(&it, &idx)) {
				struct elf_sym sym;
				(void)elf_sym(&ef, idx, &sym);
			}
		}
		struct scan s;
		scan_init(&s, NULL);
		snapshot_mount(&s, &snap);
		struct fs_stat st;
		fs_stat(&s.fs, "/usr/lib/x86_64-linux-gnu/libc.so.6", &st);
		scan_release(&s);
	}
	arena_release(&a);
	return 0;
}
