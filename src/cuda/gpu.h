/*
 * gpu.h: the GPUs and the NVIDIA driver of the machine, and the target a
 * CUDA verdict is judged against.
 *
 * gpu_probe_run() reads the kernel module's version from
 * /proc/driver/nvidia/version (else /sys/module/nvidia/version), through
 * the scan's file-system view, so under --root it reads the root's files.
 * On the running system (not under --root) and unless told not to, it
 * then dlopen()s the system's libcuda.so.1: the one library abiscope ever
 * loads, the driver itself, never a file it inspects.  Which file is
 * decided by the loader model for a process without LD_LIBRARY_PATH
 * (ld.so.cache, the default directories), and it and its dependencies
 * are opened by absolute path: LD_LIBRARY_PATH cannot redirect it.  It asks only
 * cuDriverGetVersion, cuInit, cuDeviceGetCount, cuDeviceGet,
 * cuDeviceGetAttribute (compute capability) and cuDeviceGetName: no
 * context is created, nothing is allocated on a GPU.  No driver is a
 * result, not an error: the probe says what it did not find.
 *
 * struct cuda_host is what the verdicts need: the target GPUs (from
 * --gpu, else from the probe) and the driver (from --driver, else the
 * probe).  A verdict that needs a GPU and has none says so instead of
 * guessing.
 *
 * Everything lives in the arena given; the library never prints.
 */
#ifndef ABISCOPE_CUDA_GPU_H
#define ABISCOPE_CUDA_GPU_H

#include "core/arena.h"
#include "core/fs.h"
#include "cuda/arch.h"

#define GPU_MAX_DEVICES 16

struct gpu_device {
	int index;
	unsigned cc;
	const char *name;
};

struct gpu_probe {
	/* the kernel module */
	const char *module_path;	/* the file read, or NULL when none exists */
	const char *module_line;	/* its first line */
	bool module_ok;			/* a version was found in it */
	struct driver_version module;
	/* the user-space driver */
	bool tried_libcuda;		/* false under --root or when told not to */
	bool libcuda_loaded;
	const char *libcuda_path;	/* what the loader picked, resolved */
	const char *libcuda_error;	/* dlerror() or the missing entry point */
	unsigned driver_cuda;		/* cuDriverGetVersion: 13000; 0 unknown */
	int init_status;		/* cuInit's CUresult (0 = success) */
	const char *init_error;		/* its name (CUDA_ERROR_NO_DEVICE ...) */
	struct gpu_device dev[GPU_MAX_DEVICES];
	size_t ndev;
};

/*
 * The driver version in a /proc/driver/nvidia/version text.  Three forms
 * are known: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07 ...",
 * "... UNIX Open Kernel Module for x86_64  580.95.05  Release Build ...",
 * "... UNIX Kernel Module for aarch64  34.1.1  Release Build ..." (Jetson).
 * *line (optional) receives the first line, copied into the arena.
 */
bool gpu_parse_module_version(struct arena *a, const char *text, size_t len,
			      struct driver_version *out, const char **line);

/* use_libcuda: false keeps the probe to files (tests, --no-driver). */
void gpu_probe_run(struct arena *a, const struct fsview *fs, bool use_libcuda, struct gpu_probe *p);

struct gpu_target {
	unsigned cc;
	const char *name;	/* product or device name, or NULL */
	const char *source;	/* "--gpu", "libcuda.so.1" */
};

struct cuda_host {
	struct gpu_target gpu[GPU_MAX_DEVICES];	/* distinct compute capabilities */
	size_t ngpu;
	const char *no_gpu_reason;	/* when ngpu == 0: why, for reports */
	bool driver_known;
	struct driver_version driver;	/* valid when driver_version_known */
	bool driver_version_known;
	unsigned driver_cuda;		/* newest CUDA the driver runs: 13000 */
	const char *driver_source;	/* "--driver", "/proc/driver/nvidia/version", "libcuda.so.1" */
};

void cuda_host_init(struct cuda_host *h);
/* Adds a target GPU unless one with the same compute capability is there. */
void cuda_host_add_gpu(struct cuda_host *h, unsigned cc, const char *name, const char *source);
/* Fills what --gpu / --driver did not give from a probe. */
void cuda_host_from_probe(struct arena *a, struct cuda_host *h, const struct gpu_probe *p);
/*
 * Completes h from the machine: the probe runs (into *p) for whatever
 * --gpu and --driver left open; libcuda.so.1 is loaded only when the GPUs
 * are unknown, or the driver is unknown and no version file names it, and
 * use_libcuda allows.
 */
void cuda_host_complete(struct arena *a, const struct fsview *fs, bool use_libcuda,
			struct cuda_host *h, struct gpu_probe *p);
/* --gpu SPEC: false when the spec names no GPU. */
bool cuda_host_add_spec(struct cuda_host *h, const char *spec);
/* --driver 580.65.06; false when it is not a version. */
bool cuda_host_set_driver(struct cuda_host *h, const char *version);

#endif
