# Seeds for the C++ targets (sourced by tests/fuzz/run.sh): demangled and
# mangled names of the real ABI breaks, torch/version.py texts, and C++
# libraries of this machine (their dynsym, .comment and .rodata).
cx_seeds="$corp/.cxx-src"
mkdir -p "$cx_seeds"
i=0
for t in \
	'c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, unsigned int, bool)' \
	'int const* at::TensorBase::const_data_ptr<int, 0>() constfloat const* at::TensorBase::const_data_ptr<float, 0>() const' \
	'c10::Error::Error(c10::SourceLocation, std::string)c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)' \
	'std::basic_ostream<char, std::char_traits<char> >& std::operator<< <char, std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)vtable for c10::Error' \
	'foo::operator int() constfoo()::x' \
	'_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbPNS0_19CUDAErrorLogCaptureE' \
	'_ZNK2at10TensorBase14const_data_ptrIiLi0EEEPKT_v' \
	'_ZN3c105ErrorC2ENS_14SourceLocationESs'; do
	i=$((i + 1))
	printf '%s' "$t" >"$cx_seeds/sig$i"
done
seed fuzz_signature "$cx_seeds"/sig*
printf "from typing import Optional\n__version__ = '2.10.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\ngit_version = 'abc'\nhip: Optional[str] = None\nGLIBCXX_3.4.32\nCXXABI_1.3.15\nGLIBC_2.28\n" \
	>"$cx_seeds/version.py"
seed fuzz_versionpy "$cx_seeds/version.py"
seed fuzz_cxxident /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib/x86_64-linux-gnu/libz3.so.4 \
	/usr/local/cuda/lib64/libcudnn_graph.so.9 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1
