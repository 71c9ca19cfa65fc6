// rt_runner: the same as drv_runner through the CUDA runtime (static
// libcudart of the toolkit that built it): cudaLibraryLoadData, the kernel
// k, one launch; prints one JSON line with cudaGetErrorName/String.
//   rt_runner IMAGE
// A driver older than this runtime fails every case with "CUDA driver
// version is insufficient for CUDA runtime version".
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report(const char *stage, cudaError_t e)
{
	int drv = 0;
	cudaDriverGetVersion(&drv);
	printf("{\"stage\": \"%s\", \"code\": %d, \"name\": \"%s\", \"error\": \"%s\", \"driver_cuda\": %d, "
	       "\"runtime_cuda\": %d}\n",
	       stage, (int)e, cudaGetErrorName(e), e == cudaSuccess ? "" : cudaGetErrorString(e), drv, CUDART_VERSION);
	return e == cudaSuccess && strcmp(stage, "done") == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rt_runner IMAGE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *image = (char *)calloc((size_t)n + 1, 1);
	if (!image || fread(image, 1, (size_t)n, f) != (size_t)n)
		return 2;
	fclose(f);
	cudaLibrary_t lib;
	cudaError_t e = cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
	if (e)
		return report("load", e);
	cudaKernel_t kern;
	if ((e = cudaLibraryGetKernel(&kern, lib, "k")))
		return report("function", e);
	float host[32], *d;
	for (int i = 0; i < 32; i++)
		host[i] = (float)i;
	if ((e = cudaMalloc(&d, sizeof host)) || (e = cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice)))
		return report("copy", e);
	void *args[] = { &d };
	if ((e = cudaLaunchKernel((const void *)kern, dim3(1), dim3(32), args, 0, 0)))
		return report("launch", e);
	if ((e = cudaDeviceSynchronize()))
		return report("sync", e);
	if ((e = cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost)))
		return report("copy", e);
	for (int i = 0; i < 32; i++)
		if (host[i] != (float)i + 1.0f)
			return report("result", cudaErrorUnknown);
	return report("done", cudaSuccess);
}
