# seeds for fuzz_selfload: the shapes of a package's own loads
mkdir -p "$corp/fuzz_selfload"
printf 'import ctypes, os\n\nif os.name == "nt":\n    pass\nelif _X:\n    ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libpkg.so"))\nelse:\n    _load_lib("libpkg")\n' >"$corp/fuzz_selfload/branches"
printf '_A = is_module_available("pkg._ext")\nif _A and not (sys.platform == "win32" or os.environ.get("X")):\n    from . import sub\n    torch.ops.load_library(str(Path(__file__).parent / "lib" / "libpkg.so"))\n' >"$corp/fuzz_selfload/flags"
printf 'def _load_lib(name):\n    """doc\nif x:\n"""\n    ctypes.CDLL(f"{name}.so")\n\nlib = _get("libpkg")\ntry:\n    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)\nexcept OSError:\n    ctypes.CDLL(os.path.join(os.path.dirname(os.path.dirname(__file__)), "pkg", "lib", "libpkg.so"))\nfrom . import (\n    _ext,\n    sub,\n)\n' >"$corp/fuzz_selfload/mixed"
# torchvision 0.29's shape: a call into a function of the package (here and
# imported from sub.py) whose body loads inside a try that catches OSError
printf 'import torch\nfrom .sub import _load_library\n\n\ndef _load_library(lib_name):\n    try:\n        lib_path = _get_extension_path(lib_name)\n        torch.ops.load_library(lib_path)\n        return True\n    except (ImportError, OSError) as e:\n        return False\n\n\nif _load_library("libpkg"):\n    pass\ntry:\n    _load_library("_ext")\nexcept Exception:\n    pass\n' >"$corp/fuzz_selfload/follow"
# faiss-gpu-cu12's loader.py: a function that loads, RTLD_GLOBAL, the file of
# another distribution's RECORD its preload list names; and such a list
printf 'import ctypes\nfrom importlib.metadata import distribution\n\n\ndef _load_shared_library(t):\n    for file in distribution(t["package"]).files:\n        if t["library"] == file.name:\n            path = str(file.locate())\n            break\n    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)\n\n\n_CONFIG_PATH = Path(__file__).parent / "_preload_library.json"\nfor target in json.loads(_CONFIG_PATH.read_text())["preload-library"]:\n    _load_shared_library(target)\n' >"$corp/fuzz_selfload/preload_loader"
printf '{"preload-library": [{"group": "cuda", "package": "dep", "library": "libdep.so.1"}, {"package": "Dep", "library": "libnone.so"}, {"package": "nothere", "library": "x"}]}\n' >"$corp/fuzz_selfload/preload_list"
