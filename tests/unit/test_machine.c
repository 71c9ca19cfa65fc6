/* Unit tests: what a process of a machine is told by its kernel
 * (objcache_machine: AT_PAGESZ, AT_HWCAP), given, this host's or assumed,
 * and the page size an object's memory image is made of. */
#include "unit.h"
#include "elf/object.h"

int main(void)
{
	struct arena a;
	arena_init(&a);
	struct fsview fs;
	fs_init(&fs, NULL);
	struct objcache oc;
	objcache_init(&oc, &a, &fs);
	struct machine_view v;

	CHECK(oc.host.machine != 0 && oc.host.page_size >= 4096, "this host's machine and page size are known");
	objcache_machine(&oc, EM_X86_64_, &v);
	CHECK(v.page_size == 4096 && !v.page_size_assumed, "x86-64 pages are 4096 bytes, a fact");

	uint16_t other = oc.host.machine == EM_AARCH64_ ? EM_RISCV_ : EM_AARCH64_;
	objcache_machine(&oc, other, &v);
	CHECK(v.page_size == 4096 && v.page_size_assumed && v.hwcap_assumed,
	      "another machine's page size and hwcaps are assumed, and said to be");
	if (other == EM_AARCH64_)
		CHECK(v.hwcap == AARCH64_HWCAP_ATOMICS, "an aarch64 host is assumed to have LSE atomics");

	objcache_machine(&oc, oc.host.machine, &v);
	CHECK(!v.page_size_assumed && !v.hwcap_assumed &&
		      (oc.host.machine == EM_X86_64_ || v.page_size == oc.host.page_size),
	      "a process of this host's machine sees this host's values");

	oc.given.page_size = 65536;
	oc.given.hwcap_set = true;
	oc.given.hwcap = 0x1ff;
	objcache_machine(&oc, EM_AARCH64_, &v);
	CHECK(v.page_size == 65536 && !v.page_size_assumed, "a given page size wins");
	CHECK(v.hwcap == 0x1ff && !v.hwcap_assumed, "given hwcaps win");
	objcache_machine(&oc, EM_X86_64_, &v);
	CHECK_INT(v.page_size, 4096, "... but not over x86-64's own");

	/* the memory image is made of the process's pages */
	static uint8_t hdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	hdr[16] = 3;		/* ET_DYN */
	hdr[18] = 183;		/* EM_AARCH64 */
	hdr[20] = 1;		/* EV_CURRENT */
	hdr[52] = 64;		/* e_ehsize */
	struct elf_file ef;
	struct diag d;
	diag_clear(&d);
	SETUP(elf_parse_paged(&a, bytes_make(hdr, sizeof hdr, false), "h", 65536, &ef, &d) == ST_OK,
	      "a bare ELF header parses");
	CHECK_INT(ef.page_size, 65536, "elf_parse_paged keeps the page size");
	elf_parse_paged(&a, bytes_make(hdr, sizeof hdr, false), "h", 12345, &ef, &d);
	CHECK_INT(ef.page_size, 4096, "a page size that is no power of two is taken as 4096");
	elf_parse(&a, bytes_make(hdr, sizeof hdr, false), "h", &ef, &d);
	CHECK_INT(ef.page_size, 4096, "elf_parse maps with 4096-byte pages");

	objcache_release(&oc);
	arena_release(&a);
	return unit_done();
}
