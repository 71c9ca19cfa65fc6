// A Python extension module (stable ABI, Python >= 3.8) with one kernel,
// linking the CUDA runtime as a wheel's module does: launch() runs it on
// GPU 0 and returns "cudaSuccess" or cudaGetErrorString's text.
// Built as several modules (MODNAME) with different -gencode lists.
#define Py_LIMITED_API 0x03080000
#include <Python.h>
#include <cuda_runtime.h>

extern "C" __global__ void k(float *x) { x[threadIdx.x] += 1.0f; }

static PyObject *launch(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	float *d = NULL;
	cudaError_t e = cudaMalloc(&d, 32 * sizeof(float));
	if (e == cudaSuccess) {
		k<<<1, 32>>>(d);
		e = cudaGetLastError();
		if (e == cudaSuccess)
			e = cudaDeviceSynchronize();
		cudaFree(d);
	}
	return PyUnicode_FromString(e == cudaSuccess ? "cudaSuccess" : cudaGetErrorString(e));
}

static PyMethodDef methods[] = { { "launch", launch, METH_NOARGS, "run the kernel" }, { NULL, NULL, 0, NULL } };

#define STR2(x) #x
#define STR(x) STR2(x)
#define INIT2(n) PyInit_##n
#define INIT(n) INIT2(n)
static struct PyModuleDef def = { PyModuleDef_HEAD_INIT, STR(MODNAME), NULL, -1, methods, NULL, NULL, NULL, NULL };
extern "C" __attribute__((visibility("default"))) PyObject *INIT(MODNAME)(void) { return PyModule_Create(&def); }
