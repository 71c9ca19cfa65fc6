/* Unit tests: version nodes as releases (src/cxx/versions.h) and torch/version.py
 * read as text (src/cxx/torch.h). */
#include "unit.h"
#include "cxx/versions.h"
#include "cxx/torch.h"

static void ordering(void)
{
	CHECK(ver_compare("GLIBCXX_3.4.9", "GLIBCXX_3.4.10") < 0, "numeric, not string, order");
	CHECK(ver_compare("GLIBCXX_3.4.32", "GLIBCXX_3.4.32") == 0, "equal");
	CHECK(ver_compare("GLIBCXX_3.4", "GLIBCXX_3.4.1") < 0, "a missing part is 0");
	CHECK(ver_same_family("GLIBCXX_3.4.1", "GLIBCXX_3.4.30"), "same family");
	CHECK(!ver_same_family("GLIBCXX_3.4.1", "CXXABI_1.3.1"), "other family");
	struct ver_name v;
	CHECK(ver_parse("GLIBC_2.2.5", &v) && v.nnum == 3 && v.num[2] == 5 && str_eq(v.family, "GLIBC"),
	      "GLIBC_2.2.5 parses");
	CHECK(!ver_parse("libnvJitLink.so.12", &v), "a file-name version node is not numeric");
	CHECK(!ver_parse("GLIBCXX_3.4.x", &v), "junk after the numbers");
	CHECK(!ver_parse("_1.2", &v), "no family");
	CHECK(!ver_parse("A_1.2.3.4.5", &v), "too many parts");
	CHECK(!ver_parse("A_99999999999", &v), "a number too large");
}

static void releases(void)
{
	struct ver_release r;
	CHECK(ver_release_of("GLIBCXX_3.4.32", &r) && str_eq(r.release, "GCC 13.2") && r.certain,
	      "GLIBCXX_3.4.32 is GCC 13.2");
	CHECK(ver_release_of("GLIBCXX_3.4.29", &r) && str_eq(r.release, "GCC 11.1"), "GLIBCXX_3.4.29 is GCC 11.1");
	CHECK(ver_release_of("GLIBCXX_3.4.30", &r) && str_eq(r.release, "GCC 12.1"), "GLIBCXX_3.4.30 is GCC 12.1");
	CHECK(ver_release_of("GLIBCXX_3.4.33", &r) && str_eq(r.release, "GCC 14.1"), "GLIBCXX_3.4.33 is GCC 14.1");
	CHECK(ver_release_of("GLIBCXX_3.4.34", &r) && !r.certain, "GCC 15.1's row is marked unconfirmed");
	CHECK(ver_release_of("GLIBCXX_3.4", &r) && str_eq(r.release, "GCC 3.4"), "GLIBCXX_3.4 is GCC 3.4");
	CHECK(ver_release_of("CXXABI_1.3.15", &r) && str_eq(r.release, "GCC 14.1"), "CXXABI_1.3.15 is GCC 14.1");
	CHECK(ver_release_of("CXXABI_1.3.13", &r) && str_eq(r.release, "GCC 11.1"), "CXXABI_1.3.13 is GCC 11.1");
	CHECK(ver_release_of("GLIBC_2.28", &r) && str_eq(r.release, "glibc 2.28") && r.shipped_by &&
		      strstr(r.shipped_by, "manylinux_2_28"),
	      "GLIBC_2.28 is glibc 2.28, manylinux_2_28");
	CHECK(ver_release_of("GLIBC_2.2.5", &r) && str_eq(r.release, "glibc 2.2.5"), "GLIBC_2.2.5");
	CHECK(ver_release_of("GCC_7.0.0", &r) && str_eq(r.release, "GCC 7.0"), "libgcc_s GCC_7.0.0");
	CHECK(!ver_release_of("GLIBCXX_3.4.99", &r), "an unknown GLIBCXX node");
	CHECK(!ver_release_of("LLVM_14", &r), "an unknown family");
}

static void version_py(void)
{
	struct arena a;
	arena_init(&a);
	struct diag d;
	diag_clear(&d);
	struct torch_version_py v;
	const char *real = "from typing import Optional\n\n"
			   "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
			   "__version__ = '2.11.0.dev20251230+cu130'\n"
			   "debug = False\n"
			   "cuda: Optional[str] = '13.0'\n"
			   "git_version = '9e197ae2e31506c371e8bf13580b7f93aa1a0378'\n"
			   "hip: Optional[str] = None\n"
			   "xpu: Optional[str] = None\n";
	CHECK_INT(torch_version_py_parse(&a, bytes_make(real, strlen(real), false), "version.py", &v, &d), ST_OK,
		  "a real version.py parses");
	CHECK_STR(v.version, "2.11.0.dev20251230+cu130", "__version__");
	CHECK_STR(v.cuda, "13.0", "annotated cuda");
	CHECK_STR(v.git_version, "9e197ae2e31506c371e8bf13580b7f93aa1a0378", "git_version");
	CHECK(v.hip == NULL && !v.debug, "None and False");
	CHECK_STR(torch_local_tag(&a, v.version), "cu130", "the +cu tag");
	CHECK(torch_local_tag(&a, "2.8.0a0+5228986c39.nv25.06") != NULL, "an NGC local version");
	CHECK(torch_local_tag(&a, "2.5.1") == NULL, "no local tag");

	const char *cpu = "__version__ = \"2.5.1+cpu\"\ncuda = None  # a CPU build\n";
	diag_clear(&d);
	CHECK(torch_version_py_parse(&a, bytes_make(cpu, strlen(cpu), false), "v.py", &v, &d) == ST_OK &&
		      v.cuda == NULL && str_eq(v.version, "2.5.1+cpu"),
	      "double quotes, None with a comment");

	const char *tricky = "    __version__ = 'indented'\n__version__ == 'compare'\n"
			     "__version__ = '1.0' + suffix\n__version__ = 'unterminated\n"
			     "__version__ = 'esc\\'aped'\n";
	diag_clear(&d);
	CHECK(torch_version_py_parse(&a, bytes_make(tricky, strlen(tricky), false), "v.py", &v, &d) ==
		      ST_MALFORMED && !v.has_version,
	      "no plain top-level assignment: malformed");
	CHECK(d.offset != DIAG_NO_OFFSET && strstr(d.msg, "__version__"), "the error names __version__ and an offset");

	const char *nonul = "__version__ = '2.9.1'";	/* no newline at the end */
	diag_clear(&d);
	CHECK(torch_version_py_parse(&a, bytes_make(nonul, strlen(nonul), false), "v.py", &v, &d) == ST_OK &&
		      str_eq(v.version, "2.9.1"),
	      "no final newline");
	const char *crlf = "__version__ = '2.9.1'\r\ncuda = '12.8'\r\n";
	diag_clear(&d);
	CHECK(torch_version_py_parse(&a, bytes_make(crlf, strlen(crlf), false), "v.py", &v, &d) == ST_OK &&
		      str_eq(v.cuda, "12.8"),
	      "CRLF line ends");
	diag_clear(&d);
	CHECK(torch_version_py_parse(&a, bytes_make("", 0, false), "v.py", &v, &d) == ST_MALFORMED, "empty file");
	arena_release(&a);
}

static void torch_paths(void)
{
	struct arena a;
	arena_init(&a);
	CHECK_STR(torch_dir_of(&a, "/e/site-packages/torch/lib/libc10.so"), "/e/site-packages/torch",
		  "torch dir of a torch library");
	CHECK(torch_dir_of(&a, "/e/site-packages/sgl_kernel/common_ops.so") == NULL, "not in torch");
	CHECK(torch_is_torch_library("/x/libtorch_cuda.so"), "libtorch_cuda is torch's");
	CHECK(!torch_is_torch_library("/usr/lib/libstdc++.so.6"), "libstdc++ is not torch's");
	arena_release(&a);
}

int main(void)
{
	ordering();
	releases();
	version_py();
	torch_paths();
	return unit_done();
}
