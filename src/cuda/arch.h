/*
 * arch.h: CUDA compatibility rules and the tables behind them.
 *
 * Compute capabilities and SM numbers are written major * 10 + minor
 * (H100 = 90, RTX 5090 = 120, GB10 = 121); CUDA versions as
 * major * 1000 + minor * 10, what cuDriverGetVersion returns (13000).
 *
 * The rules (NVIDIA CUDA Programming Guide "Compute Capabilities",
 * "Binary Compatibility", the Blackwell family-specific features blog;
 * handbook ml-abi.md 6.1):
 *   - an sm_XY cubin runs on X.Z with Z >= Y, never across majors
 *     (sm_100 does not run on 12.0);
 *   - an sm_XYa cubin runs only on exactly X.Y;
 *   - an sm_XYf cubin runs within its family: X.Z with Z >= Y;
 *   - compute_XY PTX is JIT-compiled for any CC >= X.Y, newer majors too;
 *     compute_XYa only for exactly X.Y, compute_XYf within the family;
 *   - the driver JIT accepts PTX only up to the ISA of its CUDA version.
 *
 * The tables are compiled in from data/cuda/ (one .def file per table), each with its sources.
 * Nothing here allocates or touches files.
 */
#ifndef ABISCOPE_CUDA_ARCH_H
#define ABISCOPE_CUDA_ARCH_H

#include "core/common.h"

bool cuda_cubin_runs_on(unsigned sm, char variant, unsigned cc);
bool cuda_ptx_jits_for(unsigned sm, char variant, unsigned cc);

/* The CUDA release that introduced PTX ISA major.minor; 0 when unknown. */
unsigned cuda_ptx_isa_release(unsigned major, unsigned minor);
/* For an ISA newer than every row of the table (a toolkit newer than this
 * build of abiscope): the newest release the table knows, which is then too
 * old for it; 0 for an ISA in or below the table. */
unsigned cuda_ptx_isa_beyond(unsigned major, unsigned minor);

/* A driver version as the kernel module prints it: 580.65.06. */
struct driver_version {
	unsigned major, minor, patch;
};

/* "580.65.06", "550.90", "34.1.1"; false when it is not a version. */
bool cuda_parse_driver_version(const char *s, struct driver_version *out);
/* -1, 0, 1 as a < b, a == b, a > b. */
int cuda_driver_cmp(const struct driver_version *a, const struct driver_version *b);
/* The newest CUDA release whose driver is <= v (13000); 0 when older than all. */
unsigned cuda_release_for_driver(const struct driver_version *v);
/* The oldest driver for a CUDA release (exact row), false when not in the table. */
bool cuda_driver_for_release(unsigned cuda, struct driver_version *out);
/* The oldest driver that runs any runtime of CUDA major (minor-version
 * compatibility); false when the major is not in the table. */
bool cuda_driver_for_major(unsigned major, struct driver_version *out);

/*
 * The first and last toolkit releases that compile for sm (with variant
 * 0, 'a' or 'f').  first = 0: no toolkit in the table targets it;
 * last = 0: current toolkits still do.  False when sm is unknown.
 */
bool cuda_arch_toolkits(unsigned sm, char variant, unsigned *first, unsigned *last);

/*
 * A GPU named on the command line: "sm_120", "sm_90a", "compute_90",
 * "12.0", "120", "H100", "RTX 5090" (no case, spaces or dashes needed).
 * *cc receives the compute capability, *name the product name when one
 * was given (static storage) or NULL.  False when nothing fits.
 */
bool cuda_parse_gpu_spec(const char *spec, unsigned *cc, const char **name);
/* A product with this compute capability, for messages ("H100"), or NULL. */
const char *cuda_gpu_example(unsigned cc);
/* The distinct compute capabilities of data/cuda/gpus.def, ascending;
 * returns how many were written (at most max). */
#define CUDA_KNOWN_CC_MAX 64
size_t cuda_known_ccs(unsigned *out, size_t max);

/* The CUDA major a soname stands for (libcudart.so.13 -> 13), or 0. */
unsigned cuda_soname_major(const char *soname);

/* "12.0" for cc 120; "13.0" for CUDA 13000; into out. */
void cuda_cc_string(unsigned cc, char *out, size_t outsz);
void cuda_release_string(unsigned cuda, char *out, size_t outsz);

#endif
