/* torch/__init__.py's _load_global_deps, read from the text of each shape
 * the releases on PyPI have had (trimmed copies of the real files: 2.1-2.5
 * fallback only; 2.6-2.8 slim branch for a wheel's libcudart; 2.9 three
 * preloads; 2.10-2.13 the whole list, required; 2.14+ the whole list,
 * best effort), plus _utils_internal.py's switches. */
#include "unit.h"
#include "pyenv/importctx.h"

static const char shape_21[] =
	"def _preload_cuda_deps(lib_folder, lib_name):\n"
	"    lib_path = None\n"
	"    for path in sys.path:\n"
	"        nvidia_path = os.path.join(path, 'nvidia')\n"
	"        candidate_lib_paths = glob.glob(os.path.join(nvidia_path, lib_folder, 'lib', lib_name))\n"
	"    ctypes.CDLL(lib_path)\n"
	"\n"
	"def _load_global_deps() -> None:\n"
	"    lib_path = os.path.join(os.path.dirname(here), 'lib', lib_name)\n"
	"    try:\n"
	"        ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)\n"
	"    except OSError as err:\n"
	"        cuda_libs: Dict[str, str] = {\n"
	"            'cublas': 'libcublas.so.*[0-9]',\n"
	"            'cuda_runtime': 'libcudart.so.*[0-9]',\n"
	"            'nvtx': 'libnvToolsExt.so.*[0-9]',\n"
	"        }\n"
	"        is_cuda_lib_err = [lib for lib in cuda_libs.values() if(lib.split('.')[0] in err.args[0])]\n"
	"        if not is_cuda_lib_err:\n"
	"            raise err\n"
	"        for lib_folder, lib_name in cuda_libs.items():\n"
	"            _preload_cuda_deps(lib_folder, lib_name)\n"
	"        ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)\n"
	"\n"
	"if USE_GLOBAL_DEPS:\n"
	"    _load_global_deps()\n";

static const char shape_26[] =
	"def _preload_cuda_deps(lib_folder: str, lib_name: str) -> None:\n"
	"    candidate_lib_paths = glob.glob(os.path.join(path, lib_folder, \"lib\", lib_name))\n"
	"\n"
	"def _load_global_deps() -> None:\n"
	"    try:\n"
	"        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)\n"
	"        try:\n"
	"            with open(\"/proc/self/maps\") as f:\n"
	"                _maps = f.read()\n"
	"            if \"nvidia/cuda_runtime/lib/libcudart.so\" not in _maps:\n"
	"                return\n"
	"            _preload_cuda_deps(\"cuda_nvrtc\", \"libnvrtc.so.*[0-9]\")\n"
	"            _preload_cuda_deps(\"nvjitlink\", \"libnvJitLink.so.*[0-9]\")\n"
	"        except Exception:\n"
	"            pass\n"
	"    except OSError as err:\n"
	"        cuda_libs: _Dict[str, str] = {\n"
	"            \"cublas\": \"libcublas.so.*[0-9]\",\n"
	"            \"cuda_runtime\": \"libcudart.so.*[0-9]\",\n"
	"        }\n"
	"        is_cuda_lib_err = [lib for lib in cuda_libs.values() if lib.split(\".\")[0] in err.args[0]]\n"
	"        if not is_cuda_lib_err:\n"
	"            raise err\n"
	"        for lib_folder, lib_name in cuda_libs.items():\n"
	"            _preload_cuda_deps(lib_folder, lib_name)\n"
	"        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)\n";

static const char shape_29[] =
	"def _get_cuda_dep_paths(path: str, lib_folder: str, lib_name: str) -> list[str]:\n"
	"    nvidia_lib_paths = glob.glob(os.path.join(path, \"nvidia\", lib_folder, \"lib\", lib_name))\n"
	"    if cuda_version is not None:\n"
	"        nvidia_lib_paths += glob.glob(os.path.join(path, \"nvidia\", f\"cu{maj_cuda_version}\", \"lib\", lib_name))\n"
	"    lib_paths = glob.glob(os.path.join(path, lib_folder, \"lib\", lib_name))\n"
	"    return nvidia_lib_paths + lib_paths\n"
	"\n"
	"def _preload_cuda_deps(lib_folder: str, lib_name: str, required: bool = True) -> None:  # type: ignore[valid-type]\n"
	"    if lib_path:\n"
	"        ctypes.CDLL(lib_path)\n"
	"\n"
	"def _load_global_deps() -> None:\n"
	"    try:\n"
	"        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)\n"
	"        try:\n"
	"            with open(\"/proc/self/maps\") as f:\n"
	"                _maps = f.read()\n"
	"            if \"libcudart.so\" not in _maps:\n"
	"                return\n"
	"            _preload_cuda_deps(\"cuda_nvrtc\", \"libnvrtc.so.*[0-9]\")\n"
	"            _preload_cuda_deps(\"cuda_nvrtc\", \"libnvrtc-builtins.so.*[0-9]\")\n"
	"            _preload_cuda_deps(\"nvjitlink\", \"libnvJitLink.so.*[0-9]\")\n"
	"        except Exception:\n"
	"            pass\n"
	"    except OSError as err:\n"
	"        cuda_libs: dict[str, str] = {\n"
	"            \"cublas\": \"libcublas.so.*[0-9]\",\n"
	"            \"cufile\": \"libcufile.so.*[0-9]\",\n"
	"        }\n"
	"        is_cuda_lib_err = [lib for lib in cuda_libs.values() if lib.split(\".\")[0] in err.args[0]]\n"
	"        if not is_cuda_lib_err:\n"
	"            raise err\n"
	"        for lib_folder, lib_name in cuda_libs.items():\n"
	"            _preload_cuda_deps(lib_folder, lib_name)\n"
	"        _preload_cuda_deps(\"nvtx\", \"libnvToolsExt.so.*[0-9]\", required=False)\n"
	"        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)\n";

/* 2.10-2.13 call the list function without arguments (every library
 * required); 2.14+ pass required=False */
#define SHAPE_LIST(CALL, SIG)                                                                   \
	"def _preload_cuda_lib(lib_folder: str, lib_name: str, required: bool = True) -> None:\n" \
	"    if lib_path:\n"                                                                      \
	"        ctypes.CDLL(lib_path)\n"                                                         \
	"\n"                                                                                      \
	"def _preload_cuda_deps(" SIG ") -> None:\n"                                              \
	"    cuda_libs: list[tuple[str, str]] = [\n"                                               \
	"        (\"cublas\", \"libcublasLt.so.*[0-9]\"),\n"                                       \
	"        (\"cuda_nvrtc\", \"libnvrtc.so.*[0-9]\"),\n"                                      \
	"        (\"nvjitlink\", \"libnvJitLink.so.*[0-9]\"),\n"                                   \
	"    ]\n"                                                                                  \
	"    if err is not None and not [\n"                                                       \
	"        lib for _, lib in cuda_libs if lib.split(\".\", 1)[0] in err.args[0]\n"           \
	"    ]:\n"                                                                                 \
	"        raise err\n"                                                                      \
	"    for lib_folder, lib_name in cuda_libs:\n"                                             \
	"        _preload_cuda_lib(lib_folder, lib_name, required=required)\n"                     \
	"    _preload_cuda_lib(\"nvtx\", \"libnvToolsExt.so.*[0-9]\", required=False)\n"           \
	"\n"                                                                                      \
	"def _load_global_deps() -> None:\n"                                                      \
	"    try:\n"                                                                              \
	"        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)\n"                    \
	"        try:\n"                                                                          \
	"            with open(\"/proc/self/maps\") as f:\n"                                      \
	"                _maps = f.read()\n"                                                      \
	"            if \"libcudart.so\" not in _maps:\n"                                         \
	"                return\n"                                                                \
	"            " CALL "\n"                                                                  \
	"        except Exception:\n"                                                             \
	"            pass\n"                                                                      \
	"    except OSError as err:\n"                                                            \
	"        _preload_cuda_deps(err)\n"                                                       \
	"        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)\n"

static const char shape_214[] = SHAPE_LIST("_preload_cuda_deps(required=False)",
					   "err: OSError | None = None, required: bool = True");
static const char shape_210[] = SHAPE_LIST("_preload_cuda_deps()", "err: OSError | None = None");

static void test_21(void)
{
	struct arena a;
	arena_init(&a);
	struct torch_layout t;
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, shape_21, "__version__ = '2.1.2+cu121'\ncuda = '12.1'\n",
			   "USE_GLOBAL_DEPS = True\nUSE_RTLD_GLOBAL_WITH_LIBTORCH = False\n", &t);
	CHECK(t.has_load_global_deps, "2.1: _load_global_deps found");
	CHECK_INT(t.global_deps_line, 11, "2.1: the line of its ctypes.CDLL");
	CHECK_INT(t.nafter_deps, 0, "2.1: nothing is preloaded after a successful load");
	CHECK_INT(t.npreload, 3, "2.1: the OSError fallback lists the dict's three libraries");
	CHECK_STR(t.preload[2].folder, "nvtx", "2.1: nvtx is in the dict");
	CHECK(t.preload[2].required, "2.1: and required (_preload_cuda_deps always raises)");
	CHECK(t.preload[0].in_filter && t.fallback_filters, "2.1: the fallback re-raises other errors");
	CHECK(!t.look_in_cu_dir && !t.look_in_plain_dir, "2.1: only nvidia/<folder>/lib");
	CHECK_STR(t.cuda, "12.1", "2.1: version.py's cuda");
	arena_release(&a);
}

static void test_26(void)
{
	struct arena a;
	arena_init(&a);
	struct torch_layout t;
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, shape_26, NULL, NULL, &t);
	CHECK_INT(t.nafter_deps, 2, "2.6: nvrtc and nvJitLink after libtorch_global_deps");
	CHECK_STR(t.after_needs_mapped, "nvidia/cuda_runtime/lib/libcudart.so",
		  "2.6: only when the wheel's libcudart is mapped (the text 2.6-2.8 look for)");
	CHECK(t.after_deps[0].required, "2.6: required (a ValueError ends the list quietly)");
	CHECK_INT(t.npreload, 2, "2.6: the fallback dict");
	CHECK(t.look_in_plain_dir && !t.look_in_cu_dir, "2.6: <sys.path>/<folder>/lib too, no cuXX");
	arena_release(&a);
}

static void test_29(void)
{
	struct arena a;
	arena_init(&a);
	struct torch_layout t;
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, shape_29, NULL, NULL, &t);
	CHECK_INT(t.nafter_deps, 3, "2.9: three preloads in the slim-wheel branch");
	CHECK_STR(t.after_deps[1].pattern, "libnvrtc-builtins.so.*[0-9]", "2.9: libnvrtc-builtins second");
	CHECK_STR(t.after_needs_mapped, "libcudart.so", "2.9: once any libcudart is mapped");
	CHECK_INT(t.after_deps[0].line, 20, "2.9: the line of the first preload");
	CHECK_INT(t.npreload, 3, "2.9: the fallback dict and the optional nvtx");
	CHECK(!t.preload[2].required && !t.preload[2].in_filter, "2.9: nvtx optional, not in the filter");
	CHECK(t.preload[1].required && t.preload[1].in_filter, "2.9: the dict's entries required, filtered");
	CHECK(t.look_in_cu_dir && t.look_in_plain_dir, "2.9: nvidia/cuXX/lib and <folder>/lib too");
	arena_release(&a);
}

static void test_list_shapes(void)
{
	struct arena a;
	arena_init(&a);
	struct torch_layout t;
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, shape_210, NULL, NULL, &t);
	CHECK_INT(t.nafter_deps, 4, "2.10: the whole list, then nvtx, after libtorch_global_deps");
	CHECK(t.after_deps[0].required && t.after_deps[2].required, "2.10: required (the default)");
	CHECK(!t.after_deps[3].required, "2.10: nvtx optional");
	CHECK_INT(t.npreload, 4, "2.10: the same list as the OSError fallback");
	CHECK(t.preload[1].required, "2.10: required in the fallback");
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, shape_214, NULL, NULL, &t);
	CHECK_INT(t.nafter_deps, 4, "2.14: the whole list after libtorch_global_deps");
	CHECK(!t.after_deps[0].required && !t.after_deps[2].required, "2.14: best effort (required=False)");
	CHECK(t.preload[0].required, "2.14: the fallback still requires them");
	CHECK_STR(t.preload[0].pattern, "libcublasLt.so.*[0-9]", "2.14: cublasLt first (order matters)");
	arena_release(&a);
}

static void test_switches(void)
{
	struct arena a;
	arena_init(&a);
	struct torch_layout t;
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, NULL, NULL, "USE_GLOBAL_DEPS = False\nUSE_RTLD_GLOBAL_WITH_LIBTORCH = True\n", &t);
	CHECK(!t.use_global_deps && t.rtld_global_with_libtorch, "_utils_internal.py switches");
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, "def _load_global_deps(:\n", NULL, NULL, &t);
	CHECK_INT(t.npreload + t.nafter_deps, 0, "a broken signature: nothing, no crash");
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, "def _load_global_deps():\n    ctypes.CDLL(x)\n    _preload_cuda_deps(\n", NULL, NULL, &t);
	CHECK_INT(t.nafter_deps, 0, "an unterminated call: nothing, no crash");
	arena_release(&a);
}

int main(void)
{
	test_21();
	test_26();
	test_29();
	test_list_shapes();
	test_switches();
	return unit_done();
}
