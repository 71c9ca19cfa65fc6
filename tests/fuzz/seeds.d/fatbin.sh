# Seeds for fuzz_fatbin (sourced by tests/fuzz/run.sh): fatbins and cubins
# compiled here with nvcc when it is there, the head of a CUDA library (its
# .nv_fatbin comes early), and /proc/driver/nvidia/version lines.
fb_seeds="$corp/.fatbin-src"
mkdir -p "$fb_seeds"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ -x "$NVCC" ] && [ ! -f "$fb_seeds/done" ]; then
	printf '__global__ void k(float *x){ x[threadIdx.x] += 1.0f; }\n' >"$fb_seeds/k.cu"
	"$NVCC" -fatbin -o "$fb_seeds/multi.fatbin" "$fb_seeds/k.cu" \
		-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=[sm_90a,compute_90a] \
		-gencode arch=compute_120f,code=compute_120f >/dev/null 2>&1
	"$NVCC" -fatbin --compress-mode=size -o "$fb_seeds/zstd.fatbin" "$fb_seeds/k.cu" \
		-gencode arch=compute_100f,code=[sm_100f,compute_100f] >/dev/null 2>&1
	"$NVCC" -fatbin --compress-mode=speed -Xfatbin -compress-all -o "$fb_seeds/lz4.fatbin" "$fb_seeds/k.cu" \
		-gencode arch=compute_120a,code=sm_120a >/dev/null 2>&1
	"$NVCC" -cubin -o "$fb_seeds/one.cubin" "$fb_seeds/k.cu" -arch=sm_120a >/dev/null 2>&1
	"$NVCC" -shared --cudart=none -Xcompiler -fPIC -o "$fb_seeds/ext.so" "$fb_seeds/k.cu" \
		-gencode arch=compute_90,code=[sm_90,compute_90] >/dev/null 2>&1
	"$NVCC" -c -rdc=true -Xcompiler -fPIC -o "$fb_seeds/rdc.o" "$fb_seeds/k.cu" \
		-gencode arch=compute_103f,code=sm_103f >/dev/null 2>&1
	touch "$fb_seeds/done"
fi
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16)\n' \
	>"$fb_seeds/proc-version"
seed fuzz_fatbin "$fb_seeds"/*.fatbin "$fb_seeds"/*.cubin "$fb_seeds"/*.so "$fb_seeds"/*.o \
	"$fb_seeds/proc-version" /usr/local/cuda/lib64/libcufftw.so.12
