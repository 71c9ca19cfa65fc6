/* Unit tests: CUDA compatibility rules, GPU names, driver versions, the
 * /proc version parser and the fatbin reader on hand-built bytes. */
#include "cuda/arch.h"
#include "cuda/fatbin.h"
#include "cuda/gpu.h"
#include "unit.h"

static void test_rules(void)
{
	/* cubins: same major, minor at most the GPU's */
	CHECK(cuda_cubin_runs_on(80, 0, 86), "sm_80 cubin runs on 8.6");
	CHECK(cuda_cubin_runs_on(120, 0, 121), "sm_120 cubin runs on 12.1");
	CHECK(!cuda_cubin_runs_on(86, 0, 80), "sm_86 cubin does not run on 8.0");
	CHECK(!cuda_cubin_runs_on(100, 0, 120), "sm_100 cubin never runs on 12.0");
	CHECK(!cuda_cubin_runs_on(90, 0, 100), "sm_90 cubin does not run on 10.0");
	/* arch-specific: exactly */
	CHECK(cuda_cubin_runs_on(90, 'a', 90), "sm_90a runs on 9.0");
	CHECK(!cuda_cubin_runs_on(100, 'a', 103), "sm_100a does not run on 10.3");
	CHECK(!cuda_cubin_runs_on(120, 'a', 121), "sm_120a does not run on 12.1");
	/* family */
	CHECK(cuda_cubin_runs_on(100, 'f', 103), "sm_100f runs on 10.3");
	CHECK(cuda_cubin_runs_on(120, 'f', 121), "sm_120f runs on 12.1");
	CHECK(!cuda_cubin_runs_on(103, 'f', 100), "sm_103f does not run on 10.0");
	CHECK(!cuda_cubin_runs_on(100, 'f', 110), "sm_100f does not run on 11.0");
	/* PTX */
	CHECK(cuda_ptx_jits_for(80, 0, 120), "compute_80 JITs for 12.0 (across majors)");
	CHECK(!cuda_ptx_jits_for(120, 0, 100), "compute_120 does not JIT for 10.0");
	CHECK(cuda_ptx_jits_for(90, 'a', 90), "compute_90a JITs for 9.0");
	CHECK(!cuda_ptx_jits_for(90, 'a', 100), "compute_90a does not JIT for 10.0");
	CHECK(cuda_ptx_jits_for(100, 'f', 103), "compute_100f JITs for 10.3");
	CHECK(!cuda_ptx_jits_for(100, 'f', 120), "compute_100f does not JIT for 12.0");
}

static void test_tables(void)
{
	CHECK_INT(cuda_ptx_isa_release(9, 0), 13000, "PTX ISA 9.0 is CUDA 13.0");
	CHECK_INT(cuda_ptx_isa_release(8, 8), 12090, "PTX ISA 8.8 is CUDA 12.9");
	CHECK_INT(cuda_ptx_isa_release(8, 6), 12070, "PTX ISA 8.6 is CUDA 12.7");
	CHECK_INT(cuda_ptx_isa_release(42, 0), 0, "an unknown ISA is 0");
	struct driver_version v;
	CHECK(cuda_parse_driver_version("580.65.06", &v) && v.major == 580 && v.minor == 65 && v.patch == 6,
	      "580.65.06 parses");
	CHECK(cuda_parse_driver_version("550.90", &v) && v.major == 550 && v.patch == 0, "550.90 parses");
	CHECK(!cuda_parse_driver_version("580", &v), "a bare major is not a driver version");
	CHECK(!cuda_parse_driver_version("580.65.06x", &v), "trailing junk is refused");
	CHECK(!cuda_parse_driver_version("", &v), "empty is refused");
	cuda_parse_driver_version("580.65.06", &v);
	CHECK_INT(cuda_release_for_driver(&v), 13000, "driver 580.65.06 runs CUDA 13.0");
	cuda_parse_driver_version("575.51.03", &v);
	CHECK_INT(cuda_release_for_driver(&v), 12090, "driver 575.51.03 runs CUDA 12.9");
	cuda_parse_driver_version("570.124.06", &v);
	CHECK_INT(cuda_release_for_driver(&v), 12080, "driver 570.124.06 runs CUDA 12.8");
	cuda_parse_driver_version("418.0", &v);
	CHECK_INT(cuda_release_for_driver(&v), 0, "a driver older than the table runs nothing known");
	CHECK(cuda_driver_for_major(13, &v) && v.major == 580, "CUDA 13.x needs driver 580");
	CHECK(cuda_driver_for_major(12, &v) && v.major == 525 && v.minor == 60, "CUDA 12.x needs driver 525.60.13");
	CHECK(cuda_driver_for_release(12070, &v) && v.major == 570, "CUDA 12.7 falls to the 12.8 driver row");
	unsigned first, last;
	CHECK(cuda_arch_toolkits(120, 0, &first, &last) && first == 12080 && last == 0, "sm_120 from CUDA 12.8");
	CHECK(cuda_arch_toolkits(120, 'f', &first, &last) && first == 12090, "sm_120f from CUDA 12.9");
	CHECK(cuda_arch_toolkits(70, 0, &first, &last) && last == 12090, "sm_70 dropped after CUDA 12.9");
	CHECK(!cuda_arch_toolkits(99, 0, &first, &last), "sm_99 is unknown");
	CHECK_INT(cuda_soname_major("libcudart.so.13"), 13, "libcudart.so.13 is CUDA 13");
	CHECK_INT(cuda_soname_major("libnvrtc.so.11.2"), 11, "libnvrtc.so.11.2 is CUDA 11");
	CHECK_INT(cuda_soname_major("libcublasLt.so.12"), 12, "libcublasLt.so.12 is CUDA 12");
	CHECK_INT(cuda_soname_major("libcufft.so.12"), 0, "libcufft's number is not the CUDA major");
	CHECK_INT(cuda_soname_major("libcudart.so"), 0, "an unversioned name says nothing");
}

static void test_specs(void)
{
	unsigned cc;
	const char *name;
	CHECK(cuda_parse_gpu_spec("sm_120", &cc, &name) && cc == 120 && !name, "sm_120");
	CHECK(cuda_parse_gpu_spec("sm_90a", &cc, &name) && cc == 90, "sm_90a names 9.0");
	CHECK(cuda_parse_gpu_spec("12.0", &cc, &name) && cc == 120, "12.0");
	CHECK(cuda_parse_gpu_spec("10.3", &cc, &name) && cc == 103, "10.3");
	CHECK(cuda_parse_gpu_spec("121", &cc, &name) && cc == 121, "121");
	CHECK(cuda_parse_gpu_spec("H100", &cc, &name) && cc == 90 && name, "H100");
	CHECK(cuda_parse_gpu_spec("h200", &cc, &name) && cc == 90, "h200 (any case)");
	CHECK(cuda_parse_gpu_spec("B300", &cc, &name) && cc == 103, "B300 is 10.3");
	CHECK(cuda_parse_gpu_spec("NVIDIA GeForce RTX 5090", &cc, &name) && cc == 120, "NVIDIA GeForce RTX 5090");
	CHECK(cuda_parse_gpu_spec("rtx-pro-6000", &cc, &name) && cc == 120, "rtx-pro-6000");
	CHECK(cuda_parse_gpu_spec("GB10", &cc, &name) && cc == 121, "GB10 is 12.1");
	CHECK(cuda_parse_gpu_spec("NVIDIA H100 80GB HBM3", &cc, &name) && cc == 90 && str_eq(name, "H100"),
	      "a driver's device name with the memory size");
	CHECK(cuda_parse_gpu_spec("NVIDIA A100-SXM4-40GB", &cc, &name) && cc == 80 && str_eq(name, "A100"),
	      "A100-SXM4-40GB is an A100, not an A10");
	CHECK(!cuda_parse_gpu_spec("Voodoo 2", &cc, &name), "an unknown product is refused");
	CHECK(!cuda_parse_gpu_spec("12.x", &cc, &name), "12.x is refused");
	CHECK(!cuda_parse_gpu_spec("", &cc, &name), "empty is refused");
}

static void test_proc_version(void)
{
	struct arena a;
	arena_init(&a);
	struct driver_version v;
	const char *line;
	static const char closed[] = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n"
				     "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
	CHECK(gpu_parse_module_version(&a, closed, sizeof closed - 1, &v, &line) && v.major == 550 && v.minor == 90 &&
		      v.patch == 7,
	      "proprietary module line");
	CHECK(line && !strchr(line, '\n') && str_starts(line, "NVRM"), "the first line only");
	static const char open[] = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Sep 25 2025\n";
	CHECK(gpu_parse_module_version(&a, open, sizeof open - 1, &v, NULL) && v.major == 580 && v.minor == 95,
	      "open module line");
	static const char jetson[] = "NVRM version: NVIDIA UNIX Kernel Module for aarch64  34.1.1  Release Build  (buildbrain@mobile)\n";
	CHECK(gpu_parse_module_version(&a, jetson, sizeof jetson - 1, &v, NULL) && v.major == 34 && v.patch == 1,
	      "Jetson line");
	static const char junk[] = "hello\nKernel Module 580.65.06\n";
	CHECK(!gpu_parse_module_version(&a, junk, sizeof junk - 1, &v, NULL), "the version must be on the first line");
	CHECK(!gpu_parse_module_version(&a, "", 0, &v, NULL), "empty text has no version");
	arena_release(&a);
}

/* ---- hand-built fatbins ---- */

static size_t put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); return 2; }
static size_t put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); return 4; }
static size_t put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); return 8; }

/* One entry of 64 header bytes and psize payload bytes at p. */
static size_t entry(uint8_t *p, uint16_t kind, uint32_t sm, uint64_t flags, uint16_t major, uint16_t minor,
		    uint64_t psize)
{
	memset(p, 0, 64 + psize);
	put16(p, kind);
	put16(p + 2, 0x0101);
	put32(p + 4, 64);
	put64(p + 8, psize);
	put16(p + 0x18, minor);
	put16(p + 0x1a, major);
	put32(p + 0x1c, sm);
	put64(p + 0x28, flags);
	return 64 + psize;
}

static size_t header(uint8_t *p, uint64_t size)
{
	put32(p, FATBIN_MAGIC);
	put16(p + 4, 1);
	put16(p + 6, 16);
	put64(p + 8, size);
	return 16;
}

static void test_fatbin_raw(void)
{
	struct arena a;
	arena_init(&a);
	static uint8_t buf[4096];
	size_t n = 0, start;
	/* fatbin 1: sm_80, sm_90a cubins and compute_120f PTX (zstd) */
	start = n;
	n += 16;
	n += entry(buf + n, FATBIN_CUBIN, 80, 0x11, 1, 8, 32);
	n += entry(buf + n, FATBIN_CUBIN, 90, 0x100011, 1, 8, 16);
	n += entry(buf + n, FATBIN_PTX, 120, 0x208011, 9, 0, 8);
	header(buf + start, n - start - 16);
	/* fatbin 2: sm_100f cubin, LZ4 */
	start = n;
	n += 16;
	n += entry(buf + n, FATBIN_CUBIN, 100, 0x1202011, 1, 8, 8);
	header(buf + start, n - start - 16);
	struct fatbin_set set;
	fatbin_set_init(&set);
	fatbin_scan_raw(&a, bytes_make(buf, n, false), &set);
	CHECK_INT(set.nfatbin, 2, "two fatbins back to back");
	CHECK_INT(set.nentry, 4, "four entries");
	CHECK(!set.problem, "no problem in well-formed fatbins");
	CHECK(set.entry[1].variant == 'a' && set.entry[1].sm == 90, "sm_90a from flag 0x100000");
	CHECK(set.entry[2].variant == 'f' && set.entry[2].ver_major == 9, "compute_120f with PTX ISA 9.0");
	CHECK(set.entry[3].variant == 'f' && set.entry[3].fatbin == 1, "sm_100f in the second fatbin");
	CHECK_STR(fatbin_compression_name(set.entry[2].flags), "zstd", "zstd flag");
	CHECK_STR(fatbin_compression_name(set.entry[3].flags), "lz4", "lz4 flag");
	char name[32];
	fatbin_target_name(&set.entry[2], name, sizeof name);
	CHECK_STR(name, "compute_120f", "PTX target name");
	const char **lines;
	size_t nl = fatbin_cuobjdump_list(&a, "/x/k.fatbin", &set, false, FATBIN_CUBIN, &lines);
	CHECK_INT(nl, 3, "cuobjdump lists three cubins");
	CHECK_STR(lines[0], "ELF file    1: k.1.sm_80.cubin", "cuobjdump line format");
	CHECK_STR(lines[1], "ELF file    2: k.2.sm_90a.cubin", "cuobjdump keeps `a`");
	CHECK_STR(lines[2], "ELF file    3: k.3.sm_100.cubin", "cuobjdump hides `f` on cubins");
	nl = fatbin_cuobjdump_list(&a, "/x/k.fatbin", &set, false, FATBIN_PTX, &lines);
	CHECK(nl == 1 && str_eq(lines[0], "PTX file    1: k.1.sm_120f.ptx"), "cuobjdump keeps `f` on PTX");

	/* Truncation: the second fatbin claims more than the file has. */
	put64(buf + 16 + 64 + 32 + 64 + 16 + 64 + 8 + 8, 1u << 20);
	fatbin_set_init(&set);
	fatbin_scan_raw(&a, bytes_make(buf, n, false), &set);
	CHECK(set.problem != NULL, "a fatbin running past the end is a problem");
	CHECK_INT(set.problem_offset, 16 + 64 + 32 + 64 + 16 + 64 + 8, "the problem names the fatbin's offset");
	CHECK_INT(set.nentry, 4, "the entries that fit are still read");

	/* An entry header size below 64 stops that fatbin, not the scan. */
	fatbin_set_init(&set);
	put32(buf + 16 + 64 + 32 + 4, 8);
	fatbin_scan_raw(&a, bytes_make(buf, n, false), &set);
	CHECK(set.problem != NULL, "a bad entry header is a problem");
	CHECK_INT(set.nentry, 2, "entries before the bad one are kept, and the later fatbin");
	arena_release(&a);
}

int main(void)
{
	test_rules();
	test_tables();
	test_specs();
	test_proc_version();
	test_fatbin_raw();
	return unit_done();
}
