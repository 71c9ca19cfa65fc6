// The one kernel every device case is built from: each of 32 threads adds 1.
// extern "C" keeps its name "k" for cuModuleGetFunction / cudaLibraryGetKernel.
extern "C" __global__ void k(float *x) { x[threadIdx.x] += 1.0f; }
