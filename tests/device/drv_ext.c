/* A Python extension module (stable ABI) linking libcuda.so.1 itself, as
 * driver-API wheels do: it imports only where the NVIDIA driver is
 * installed.  driver() returns cuDriverGetVersion's number. */
#define Py_LIMITED_API 0x03080000
#include <Python.h>

int cuDriverGetVersion(int *version);

static PyObject *driver(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	int v = 0;
	int r = cuDriverGetVersion(&v);
	return PyLong_FromLong(r ? -r : v);
}

static PyMethodDef methods[] = { { "driver", driver, METH_NOARGS, "the driver's CUDA version" }, { NULL, NULL, 0, NULL } };
static struct PyModuleDef def = { PyModuleDef_HEAD_INIT, "cu_drv", NULL, -1, methods, NULL, NULL, NULL, NULL };
PyMODINIT_FUNC PyInit_cu_drv(void) { return PyModule_Create(&def); }
