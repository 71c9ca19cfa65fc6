/* Unit tests: which libraries are torch's own (cxx/torch.h).  A package's
 * library whose name starts like torch's (torchaudio's libtorchaudio.so) is
 * that package's: taken for torch's, a torchaudio built for another torch
 * had no plan at all (the fix oracle's t2.10+torchaudio-2.9.1). */
#include "unit.h"
#include "cxx/torch.h"

int main(void)
{
	static const char *const torch[] = { "libtorch.so", "libtorch_cuda.so", "libtorch_cpu.so", "libtorch_python.so",
					     "libtorch_global_deps.so", "libc10.so", "libc10_cuda.so", "libshm.so",
					     "/env/site-packages/torch/lib/libgomp-a34b3233.so.1" };
	static const char *const other[] = { "libtorchaudio.so", "/env/site-packages/torchaudio/lib/libtorchaudio.so",
					     "libtorchcodec_core4.so", "libc10d_custom.so", "libshmem.so", "libtorchvision.so" };
	for (size_t i = 0; i < sizeof torch / sizeof *torch; i++)
		CHECK(torch_is_torch_library(torch[i]), torch[i]);
	for (size_t i = 0; i < sizeof other / sizeof *other; i++)
		CHECK(!torch_is_torch_library(other[i]), other[i]);
	return unit_done();
}
