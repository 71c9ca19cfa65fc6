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

/* What a check reads from the parsed layout: a count, a switch, a string, or
 * a property of after_deps[i] (step 2) or preload[i] (the fallback). */
enum field {
	F_HAS_LOAD_GLOBAL_DEPS,
	F_GLOBAL_DEPS_LINE,
	F_FALLBACK_FILTERS,
	F_CU_DIR,
	F_PLAIN_DIR,
	F_USE_GLOBAL_DEPS,
	F_RTLD_GLOBAL,
	F_NAFTER,
	F_NPRELOAD,
	F_AFTER_REQUIRED,
	F_AFTER_LINE,
	F_PRELOAD_REQUIRED,
	F_PRELOAD_IN_FILTER,
	F_CUDA,			/* the string fields: want_str */
	F_AFTER_NEEDS_MAPPED,
	F_AFTER_PATTERN,
	F_PRELOAD_FOLDER,
	F_PRELOAD_PATTERN,
};

struct expect {
	enum field f;
	size_t i;		/* the entry, for the per-preload fields */
	int64_t want;
	const char *want_str;
	const char *why;
};

struct shape_case {
	const char *label;	/* "2.1": the release whose shape it is */
	const char *init, *version, *internal;
	struct expect expects[12];	/* up to the first with no why */
};

#define INT(F, W, WHY) { .f = (F), .want = (W), .why = (WHY) }
#define AT(F, I, W, WHY) { .f = (F), .i = (I), .want = (W), .why = (WHY) }
#define STR(F, W, WHY) { .f = (F), .want_str = (W), .why = (WHY) }
#define STR_AT(F, I, W, WHY) { .f = (F), .i = (I), .want_str = (W), .why = (WHY) }

static const struct shape_case cases[] = {
	{ "2.1", shape_21, "__version__ = '2.1.2+cu121'\ncuda = '12.1'\n",
	  "USE_GLOBAL_DEPS = True\nUSE_RTLD_GLOBAL_WITH_LIBTORCH = False\n", {
		INT(F_HAS_LOAD_GLOBAL_DEPS, 1, "_load_global_deps found"),
		INT(F_GLOBAL_DEPS_LINE, 11, "the line of its ctypes.CDLL"),
		INT(F_NAFTER, 0, "nothing is preloaded after a successful load"),
		INT(F_NPRELOAD, 3, "the OSError fallback lists the dict's three libraries"),
		STR_AT(F_PRELOAD_FOLDER, 2, "nvtx", "nvtx is in the dict"),
		AT(F_PRELOAD_REQUIRED, 2, 1, "and required (_preload_cuda_deps always raises)"),
		AT(F_PRELOAD_IN_FILTER, 0, 1, "the fallback re-raises other errors (the dict is its filter)"),
		INT(F_FALLBACK_FILTERS, 1, "the fallback re-raises other errors"),
		INT(F_CU_DIR, 0, "only nvidia/<folder>/lib (no nvidia/cuXX/lib)"),
		INT(F_PLAIN_DIR, 0, "only nvidia/<folder>/lib (no <folder>/lib)"),
		STR(F_CUDA, "12.1", "version.py's cuda"),
	} },
	{ "2.6", shape_26, NULL, NULL, {
		INT(F_NAFTER, 2, "nvrtc and nvJitLink after libtorch_global_deps"),
		STR(F_AFTER_NEEDS_MAPPED, "nvidia/cuda_runtime/lib/libcudart.so",
		    "only when the wheel's libcudart is mapped (the text 2.6-2.8 look for)"),
		AT(F_AFTER_REQUIRED, 0, 1, "required (a ValueError ends the list quietly)"),
		INT(F_NPRELOAD, 2, "the fallback dict"),
		INT(F_PLAIN_DIR, 1, "<sys.path>/<folder>/lib too"),
		INT(F_CU_DIR, 0, "no nvidia/cuXX/lib"),
	} },
	{ "2.9", shape_29, NULL, NULL, {
		INT(F_NAFTER, 3, "three preloads in the slim-wheel branch"),
		STR_AT(F_AFTER_PATTERN, 1, "libnvrtc-builtins.so.*[0-9]", "libnvrtc-builtins second"),
		STR(F_AFTER_NEEDS_MAPPED, "libcudart.so", "once any libcudart is mapped"),
		AT(F_AFTER_LINE, 0, 20, "the line of the first preload"),
		INT(F_NPRELOAD, 3, "the fallback dict and the optional nvtx"),
		AT(F_PRELOAD_REQUIRED, 2, 0, "nvtx optional"),
		AT(F_PRELOAD_IN_FILTER, 2, 0, "nvtx not in the filter"),
		AT(F_PRELOAD_REQUIRED, 1, 1, "the dict's entries required"),
		AT(F_PRELOAD_IN_FILTER, 1, 1, "the dict's entries filtered"),
		INT(F_CU_DIR, 1, "nvidia/cuXX/lib"),
		INT(F_PLAIN_DIR, 1, "and <folder>/lib too"),
	} },
	{ "2.10", shape_210, NULL, NULL, {
		INT(F_NAFTER, 4, "the whole list, then nvtx, after libtorch_global_deps"),
		AT(F_AFTER_REQUIRED, 0, 1, "required (the default): the first"),
		AT(F_AFTER_REQUIRED, 2, 1, "required (the default): the last of the list"),
		AT(F_AFTER_REQUIRED, 3, 0, "nvtx optional"),
		INT(F_NPRELOAD, 4, "the same list as the OSError fallback"),
		AT(F_PRELOAD_REQUIRED, 1, 1, "required in the fallback"),
	} },
	{ "2.14", shape_214, NULL, NULL, {
		INT(F_NAFTER, 4, "the whole list after libtorch_global_deps"),
		AT(F_AFTER_REQUIRED, 0, 0, "best effort (required=False): the first"),
		AT(F_AFTER_REQUIRED, 2, 0, "best effort (required=False): the last of the list"),
		AT(F_PRELOAD_REQUIRED, 0, 1, "the fallback still requires them"),
		STR_AT(F_PRELOAD_PATTERN, 0, "libcublasLt.so.*[0-9]", "cublasLt first (order matters)"),
	} },
	{ "_utils_internal.py", NULL, NULL, "USE_GLOBAL_DEPS = False\nUSE_RTLD_GLOBAL_WITH_LIBTORCH = True\n", {
		INT(F_USE_GLOBAL_DEPS, 0, "USE_GLOBAL_DEPS = False"),
		INT(F_RTLD_GLOBAL, 1, "USE_RTLD_GLOBAL_WITH_LIBTORCH = True"),
	} },
	{ "a broken signature", "def _load_global_deps(:\n", NULL, NULL, {
		INT(F_NAFTER, 0, "nothing after, no crash"),
		INT(F_NPRELOAD, 0, "no fallback, no crash"),
	} },
	{ "an unterminated call", "def _load_global_deps():\n    ctypes.CDLL(x)\n    _preload_cuda_deps(\n", NULL,
	  NULL, {
		INT(F_NAFTER, 0, "nothing, no crash"),
	} },
};

/* The entry i of a preload list, or NULL past its end (a wrong count is
 * its own failure, not a read out of bounds). */
static const struct torch_preload *entry(const struct torch_preload *list, size_t n, size_t i)
{
	return i < n ? &list[i] : NULL;
}

static int64_t int_field(const struct torch_layout *t, const struct expect *e)
{
	const struct torch_preload *after = entry(t->after_deps, t->nafter_deps, e->i);
	const struct torch_preload *pre = entry(t->preload, t->npreload, e->i);
	switch (e->f) {
	case F_HAS_LOAD_GLOBAL_DEPS: return t->has_load_global_deps;
	case F_GLOBAL_DEPS_LINE: return t->global_deps_line;
	case F_FALLBACK_FILTERS: return t->fallback_filters;
	case F_CU_DIR: return t->look_in_cu_dir;
	case F_PLAIN_DIR: return t->look_in_plain_dir;
	case F_USE_GLOBAL_DEPS: return t->use_global_deps;
	case F_RTLD_GLOBAL: return t->rtld_global_with_libtorch;
	case F_NAFTER: return (int64_t)t->nafter_deps;
	case F_NPRELOAD: return (int64_t)t->npreload;
	case F_AFTER_REQUIRED: return after ? after->required : -1;
	case F_AFTER_LINE: return after ? after->line : -1;
	case F_PRELOAD_REQUIRED: return pre ? pre->required : -1;
	case F_PRELOAD_IN_FILTER: return pre ? pre->in_filter : -1;
	default: return -1;
	}
}

static const char *str_field(const struct torch_layout *t, const struct expect *e)
{
	const struct torch_preload *after = entry(t->after_deps, t->nafter_deps, e->i);
	const struct torch_preload *pre = entry(t->preload, t->npreload, e->i);
	switch (e->f) {
	case F_CUDA: return t->cuda;
	case F_AFTER_NEEDS_MAPPED: return t->after_needs_mapped;
	case F_AFTER_PATTERN: return after ? after->pattern : NULL;
	case F_PRELOAD_FOLDER: return pre ? pre->folder : NULL;
	case F_PRELOAD_PATTERN: return pre ? pre->pattern : NULL;
	default: return NULL;
	}
}

static void run_case(const struct shape_case *c)
{
	struct arena a;
	arena_init(&a);
	struct torch_layout t;
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, c->init, c->version, c->internal, &t);
	for (const struct expect *e = c->expects; e < c->expects + ARRAY_SIZE(c->expects) && e->why; e++) {
		char what[256];
		snprintf(what, sizeof what, "%s: %s", c->label, e->why);
		if (e->f >= F_CUDA)
			CHECK_STR(str_field(&t, e), e->want_str, what);
		else
			CHECK_INT(int_field(&t, e), e->want, what);
	}
	arena_release(&a);
}

int main(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(&cases[i]);
	return unit_done();
}
