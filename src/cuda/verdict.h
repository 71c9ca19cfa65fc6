/*
 * verdict.h: what CUDA needs from a GPU and a driver, object by object,
 * as findings.  The API `why`, `cuda` and `check` share.
 *
 * A struct cuda_ctx lives for one scan: the scan, the target (GPUs and
 * driver, see gpu.h) and a cache of each object's device code, so a file
 * is read once however many graphs it is in.
 *
 *   cuda_code_of()          an object's fatbins and their summary (cached);
 *   cuda_judge_object()     appends gpu-arch-missing, ptx-jit-only and
 *                           driver-too-old for one object;
 *   cuda_check_majors()     appends cuda-major-mismatch for a set of
 *                           objects that load together (one load graph);
 *   cuda_check_toolkits()   appends toolkit-too-old-for-gpu for the JIT
 *                           toolchains the environment points at;
 *   cuda_judge_graph()      all of the above for a load graph (`why`);
 *   cuda_variant_pick()     which variant folder a package with sm90/ and
 *                           sm100/ (sgl_kernel) loads on a GPU.
 *
 * Findings (ids in docs/findings.md) go to the scan's list, with typed
 * fields for JSON; explanations name what the object has and what the
 * GPU needs.  When no GPU is known the architecture verdicts are not
 * guessed: cuda_judge_graph() adds one `gpu-not-checked` note instead.
 *
 * Everything lives in the scan's arena.
 */
#ifndef ABISCOPE_CUDA_VERDICT_H
#define ABISCOPE_CUDA_VERDICT_H

#include "scan.h"
#include "cuda/fatbin.h"
#include "cuda/gpu.h"

/* One distinct target an object carries: "sm_90a" cubins, "compute_120" PTX. */
struct cuda_target_count {
	uint16_t kind;			/* enum fatbin_kind */
	uint16_t sm;
	char variant;			/* 0, 'a', 'f' */
	uint16_t isa_major, isa_minor;	/* PTX: the newest ISA among these entries */
	uint32_t entries;		/* how many entries */
	uint32_t fatbins;		/* in how many fatbins */
};

struct cuda_code {
	struct object *obj;
	bool is_cubin_file;		/* an ELF for the GPU itself */
	bool is_fatbin_file;		/* nvcc -fatbin output */
	bool scanned_all;		/* fatbins outside the registered sections looked for too */
	struct fatbin_set set;
	/* distinct targets, cubins then PTX then LTO-IR, each by SM */
	struct cuda_target_count *target;
	size_t ntarget;
	size_t nlisted_fatbins;		/* in what cuobjdump lists */
	size_t nother_fatbins;		/* outside .nv_fatbin / __nv_relfatbin */
	size_t ncompressed;		/* entries stored compressed */
	unsigned runtime_major;		/* CUDA major it belongs to, 0 unknown */
	const char *runtime_evidence;	/* "libcudart.so.13" (NEEDED or SONAME) */
	bool runtime_conflict;		/* its NEEDED name two CUDA majors */
};

/* A JIT toolchain: nvcc, ptxas, or a libnvrtc a process would use. */
struct cuda_toolchain {
	const char *path;
	const char *what;		/* "nvcc on PATH", "$CUDA_HOME/bin/nvcc", "bundled libnvrtc" */
	unsigned release;		/* 12080; 0 when unknown */
};

struct cuda_ctx {
	struct scan *s;
	struct cuda_host host;
	enum fatbin_scan_mode mode;
	struct idmap code;		/* (dev, ino) -> struct cuda_code */
	bool not_checked_said;		/* the gpu-not-checked note was added */
};

void cuda_ctx_init(struct cuda_ctx *c, struct scan *s, enum fatbin_scan_mode mode);

/* The device code of o (scanned once); never NULL for an ELF or fatbin
 * file; NULL for anything else. */
const struct cuda_code *cuda_code_of(struct cuda_ctx *c, struct object *o);
/* True when the object carries cubins or PTX. */
bool cuda_code_has_device_code(const struct cuda_code *k);

/*
 * Appends findings for o against every target GPU and the driver.
 * Without a GPU only driver-too-old can be judged (that needs a driver).
 */
void cuda_judge_object(struct cuda_ctx *c, struct object *o);

/*
 * cuda_judge_object() for an object as its package uses it: one in a
 * variant folder (sgl_kernel's sm90/, sm100/) is judged only against the
 * GPUs on which the package loads that folder.
 */
void cuda_judge_installed(struct cuda_ctx *c, struct object *o);

/* cuda-major-mismatch across objects that are loaded together. */
void cuda_check_majors(struct cuda_ctx *c, struct object *const *objs, size_t n);

/*
 * The JIT toolchains the environment points at: $CUDA_HOME (or
 * $CUDA_PATH)/bin/nvcc, nvcc on path_env, /usr/local/cuda/bin/nvcc, and
 * the extra paths given (a bundled libnvrtc, triton's ptxas); their
 * release is read from the files, never by running them.  Returns how
 * many were found, *out in the arena.
 */
size_t cuda_find_toolchains(struct cuda_ctx *c, const char *cuda_home, const char *path_env,
			    const char *const *extra, size_t nextra, struct cuda_toolchain **out);
/* toolkit-too-old-for-gpu for each toolchain that cannot target a GPU. */
void cuda_check_toolkits(struct cuda_ctx *c, const struct cuda_toolchain *tc, size_t n);

/*
 * All CUDA verdicts for a load graph (the objects in load order, the
 * target first): each object judged, majors compared, the toolchains
 * checked (libnvrtc in the graph included), and the variant folder rule
 * when the target lies in one.  Adds gpu-not-checked when no GPU is known
 * and some object carries device code.
 */
void cuda_judge_graph(struct cuda_ctx *c, struct object *const *objs, size_t n,
		      const char *cuda_home, const char *path_env);

/* The gpu-not-checked note (once per context): no GPU known, so the
 * architecture of the device code was not judged. */
void cuda_note_not_checked(struct cuda_ctx *c, const char *object);

/*
 * One call for a command that has a load graph (`why`): when any object
 * carries device code or links a CUDA runtime, sets the target from the
 * --gpu specs and --driver given (else probes the machine, loading
 * libcuda.so.1 unless no_driver) and runs cuda_judge_graph().  Returns a
 * line for the report header ("RTX 5090 (sm_120), from --gpu; driver
 * 580.65.06 (CUDA 13.0)" or "none known: no NVIDIA driver found ..."), or
 * NULL when the graph has nothing CUDA.  Specs must have been checked
 * with cuda_parse_gpu_spec(); a bad one is skipped.
 */
struct cuda_options {
	const char *const *gpu;
	size_t ngpu;
	const char *driver;		/* NULL: probe */
	bool no_driver;			/* do not load libcuda.so.1 */
	const char *cuda_home;		/* $CUDA_HOME, NULL under --root */
	const char *path_env;		/* $PATH, NULL under --root */
};
const char *cuda_judge_load_graph(struct scan *s, struct object *const *objs, size_t n,
				  const struct cuda_options *opt);

/*
 * sgl_kernel's rule (handbook ml-abi.md 1.1): in a package folder with
 * sm90/ and sm100/ variant folders, cc 90 loads sm90/, any other GPU and
 * no GPU (cc 0) load sm100/.  Returns the folder name ("sm90", "sm100")
 * or NULL when pkgdir has no such variant folders.
 */
const char *cuda_variant_pick(struct scan *s, const char *pkgdir, unsigned cc);
/* The package folder when path lies in a variant folder ("<pkg>/sm100/x.so"), else NULL. */
const char *cuda_variant_package(struct arena *a, const char *path, const char **variant);

/* The target as reports say it: "H100 sm_90, from --gpu; driver 580.65.06
 * (CUDA 13.0), from /proc/driver/nvidia/version", or why none is known. */
const char *cuda_host_line(struct arena *a, const struct cuda_host *h);

/* "sm_80 sm_90a compute_120" for the targets of one kind (0: all kinds). */
const char *cuda_targets_string(struct arena *a, const struct cuda_code *k, int kind);

#endif
