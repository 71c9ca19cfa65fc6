/*
 * drv_runner: loads one CUDA image (a fatbin, a cubin or PTX text) with the
 * driver API, as a library that ships its own kernels does, launches its
 * kernel k on 32 threads of GPU 0, checks the result and prints one JSON line:
 *   {"stage": "load"|"function"|"launch"|"sync"|"copy"|"result"|"done",
 *    "code": N, "name": "CUDA_ERROR_...", "error": "cuGetErrorString text",
 *    "driver_cuda": 13000, "ms": load time}
 * "stage": "done" with code 0 is a kernel that ran and added 1 everywhere.
 * libcuda.so.1 is opened with dlopen, so this builds with any C compiler
 * and no CUDA headers; it runs on any driver.
 *   drv_runner IMAGE
 * Exit status 0 when the kernel ran correctly, 1 when CUDA said no, 2 for
 * a usage error or no driver.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef unsigned long long CUdeviceptr;

static struct {
	CUresult (*init)(unsigned);
	CUresult (*driver_version)(int *);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*primary_retain)(CUcontext *, CUdevice);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*module_load)(CUmodule *, const void *);
	CUresult (*get_function)(CUfunction *, CUmodule, const char *);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			   void **, void **);
	CUresult (*sync)(void);
	CUresult (*error_string)(CUresult, const char **);
	CUresult (*error_name)(CUresult, const char **);
} cu;

static int driver_cuda;
static double load_ms = -1;

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int report(const char *stage, CUresult r)
{
	const char *name = NULL, *text = NULL;
	if (cu.error_name)
		cu.error_name(r, &name);
	if (cu.error_string)
		cu.error_string(r, &text);
	printf("{\"stage\": ");
	json_str(stage);
	printf(", \"code\": %d, \"name\": ", r);
	json_str(name ? name : "?");
	printf(", \"error\": ");
	json_str(r == 0 ? "" : text ? text : "?");
	printf(", \"driver_cuda\": %d, \"ms\": %.1f}\n", driver_cuda, load_ms);
	return r == 0 && strcmp(stage, "done") == 0 ? 0 : 1;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p)
		fprintf(stderr, "drv_runner: libcuda.so.1 has no %s\n", name);
	return p;
}

static char *read_image(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0; /* PTX is loaded as a NUL-terminated string */
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: drv_runner IMAGE\n");
		return 2;
	}
	char *image = read_image(argv[1]);
	if (!image) {
		perror(argv[1]);
		return 2;
	}
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("{\"stage\": \"dlopen\", \"code\": -1, \"name\": \"\", \"error\": ");
		json_str(dlerror());
		printf(", \"driver_cuda\": 0, \"ms\": -1}\n");
		return 2;
	}
	cu.init = sym(h, "cuInit");
	cu.driver_version = sym(h, "cuDriverGetVersion");
	cu.device_get = sym(h, "cuDeviceGet");
	cu.primary_retain = sym(h, "cuDevicePrimaryCtxRetain");
	cu.ctx_set = sym(h, "cuCtxSetCurrent");
	cu.module_load = sym(h, "cuModuleLoadData");
	cu.get_function = sym(h, "cuModuleGetFunction");
	cu.mem_alloc = sym(h, "cuMemAlloc_v2");
	cu.htod = sym(h, "cuMemcpyHtoD_v2");
	cu.dtoh = sym(h, "cuMemcpyDtoH_v2");
	cu.launch = sym(h, "cuLaunchKernel");
	cu.sync = sym(h, "cuCtxSynchronize");
	cu.error_string = sym(h, "cuGetErrorString");
	cu.error_name = sym(h, "cuGetErrorName");
	if (!cu.init || !cu.driver_version || !cu.device_get || !cu.primary_retain || !cu.ctx_set ||
	    !cu.module_load || !cu.get_function || !cu.mem_alloc || !cu.htod || !cu.dtoh || !cu.launch || !cu.sync)
		return 2;
	CUresult r = cu.init(0);
	if (r)
		return report("init", r);
	cu.driver_version(&driver_cuda);
	CUdevice dev;
	CUcontext ctx;
	if ((r = cu.device_get(&dev, 0)) || (r = cu.primary_retain(&ctx, dev)) || (r = cu.ctx_set(ctx)))
		return report("context", r);
	CUmodule mod;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = cu.module_load(&mod, image);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	load_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (r)
		return report("load", r);
	CUfunction fn;
	if ((r = cu.get_function(&fn, mod, "k")))
		return report("function", r);
	float host[32];
	for (int i = 0; i < 32; i++)
		host[i] = (float)i;
	CUdeviceptr d;
	if ((r = cu.mem_alloc(&d, sizeof host)) || (r = cu.htod(d, host, sizeof host)))
		return report("copy", r);
	void *args[] = { &d };
	if ((r = cu.launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL)))
		return report("launch", r);
	if ((r = cu.sync()))
		return report("sync", r);
	if ((r = cu.dtoh(host, d, sizeof host)))
		return report("copy", r);
	for (int i = 0; i < 32; i++)
		if (host[i] != (float)i + 1.0f)
			return report("result", 999);
	return report("done", 0);
}
