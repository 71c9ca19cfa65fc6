/*
 * commands.c: the one table of abiscope's commands and options (table.h
 * says what reads it).  The words here are what --help, the man pages, the
 * completion and the README print; keep them plain sentences.
 */
#include "cli/cli.h"
#include "cli/table.h"

/* Shared wording for options several commands take. */
#define GPU_HELP "judge the CUDA kernels for this GPU (sm_120, 12.0, H100 ...; repeatable; " \
	"default: the driver's GPUs)"
#define DRIVER_HELP "judge for this NVIDIA driver (580.65.06; default: the installed one)"
#define LLP_HELP "LD_LIBRARY_PATH of the process (default: the environment's)"
#define ASSUME_DRIVER_HELP "check as if the NVIDIA driver were installed (libcuda.so.1 is modelled " \
	"by the CUDA toolkit's stub, from $CUDA_HOME or /usr/local/cuda)"
#define JUNIT_HELP "also write a JUnit XML report to FILE ('-': standard output): one test case per " \
	"extension module, a failure with its root cause for each that would not import"
#define FAIL_ON_HELP "error (the default): exit 1 when something would fail; warning: also when a warning is " \
	"reported (a CI job that fails on warnings)"
#define END_OPTIONS { NULL, NULL, NULL, 0, NULL, NULL }

static const struct cli_option why_options[] = {
	{ "--process", NULL, "EXE", 0, "command",
	  "the executable the load happens in (default: python3 on PATH; pyenv shims and wrappers are resolved)" },
	{ "--preload", NULL, "PATH", OPT_REPEAT, "file", "dlopen PATH first with RTLD_LOCAL (repeatable, in order)" },
	{ "--preload-global", NULL, "PATH", OPT_REPEAT, "file", "dlopen PATH first with RTLD_GLOBAL (repeatable)" },
	{ "--lazy", NULL, NULL, 0, NULL, "RTLD_LAZY instead of RTLD_NOW (Python uses RTLD_NOW)" },
	{ "--noload", NULL, NULL, 0, NULL, "RTLD_NOLOAD: succeed only if TARGET is already loaded" },
	{ "--deepbind", NULL, NULL, 0, NULL,
	  "RTLD_DEEPBIND: the new objects look in their own dependencies before the global scope" },
	{ "--from", NULL, "OBJECT", 0, "file", "dlopen is called from OBJECT (loaded first with RTLD_LOCAL if it is "
	  "not in the process): its RPATH/RUNPATH and $ORIGIN apply" },
	{ "--ld-library-path", NULL, "LIST", 0, NULL, LLP_HELP },
	{ "--glibc-tunables", NULL, "LIST", 0, NULL, "GLIBC_TUNABLES of the process (default: the environment's); "
	  "glibc.cpu.hwcaps, glibc.cpu.hwcap_mask, glibc.rtld.optional_static_tls and glibc.rtld.nns change "
	  "the load" },
	{ "--gpu", NULL, "SPEC", OPT_REPEAT, NULL, "judge the CUDA code of the load graph for this GPU "
	  "(sm_120, 12.0, H100 ...; default: the driver's GPUs)" },
	{ "--driver", NULL, "VERSION", 0, NULL, DRIVER_HELP },
	END_OPTIONS,
};

static const struct cli_option cuda_options[] = {
	{ "--gpu", NULL, "SPEC", OPT_REPEAT, NULL, "the GPU to judge for (repeatable): sm_120, 12.0, H100, "
	  "\"RTX 5090\"...; default: the GPUs the driver reports" },
	{ "--driver", NULL, "VERSION", 0, NULL, DRIVER_HELP },
	{ "--no-driver", NULL, NULL, 0, NULL, "do not load libcuda.so.1 to ask for GPUs" },
	{ "--registered-only", NULL, NULL, 0, NULL,
	  "only .nv_fatbin, __nv_relfatbin and their wrappers (no search for fatbins in other sections)" },
	{ "--list-elf", NULL, NULL, 0, NULL, "print exactly what `cuobjdump --list-elf` prints for each PATH (a file)" },
	{ "--list-ptx", NULL, NULL, 0, NULL, "print exactly what `cuobjdump --list-ptx` prints for each PATH (a file)" },
	END_OPTIONS,
};

static const struct cli_option gpu_options[] = {
	{ "--no-driver", NULL, NULL, 0, NULL, "do not load libcuda.so.1; read the files only" },
	END_OPTIONS,
};

static const struct cli_option torch_compat_options[] = {
	{ "--env", NULL, "ENV", 0, "dir", "the environment whose installed torch files and wheels are compared with (default: the one PATH is in)" },
	{ "--releases", NULL, NULL, 0, NULL, "list the releases the index covers, with their wheel and sha256" },
	{ "--index", NULL, "FILE", 0, "file", "read this index (tools/torch_index.py writes one) instead of the built-in one" },
	END_OPTIONS,
};

static const struct cli_option check_options[] = {
	{ "--python", NULL, "PATH", 0, "file", "the interpreter to model (its environment, or the one PATH is in)" },
	{ "--libraries", NULL, NULL, 0, NULL, "also check libraries that are not extension modules" },
	{ "--assume-driver", NULL, NULL, 0, NULL, ASSUME_DRIVER_HELP },
	{ "--verify-hashes", NULL, NULL, 0, NULL, "compare every file with its RECORD sha256 (slower; without it, "
	  "sizes of native objects, __init__.py, version.py, .pth are compared)" },
	{ "--gpu", NULL, "SPEC", OPT_REPEAT, NULL, "judge the CUDA kernels of modules that import for this GPU "
	  "(sm_120, 12.0, H100 ...; repeatable; default: the driver's GPUs)" },
	{ "--driver", NULL, "VERSION", 0, NULL, DRIVER_HELP },
	{ "--no-driver", NULL, NULL, 0, NULL, "do not ask libcuda.so.1 for the GPUs" },
	{ "--ld-library-path", NULL, "LIST", 0, NULL, LLP_HELP },
	{ "--junit", NULL, "FILE", 0, "file", JUNIT_HELP },
	{ "--fail-on", NULL, "LEVEL", 0, "error warning", FAIL_ON_HELP },
	{ "--host", NULL, "SNAPSHOT", 0, "file", "check on the host a snapshot describes (abiscope snapshot): its "
	  "environment, or PATHs of this machine copied into it: a package folder to the same place in its "
	  "site-packages, a whole venv's site-packages over its own; then imported by its interpreter after "
	  "its import torch (a build folder stays where it is)" },
	END_OPTIONS,
};

static const struct cli_option explain_options[] = {
	{ "--python", NULL, "PATH", 0, "file",
	  "the interpreter (and environment) to use when the text does not locate one" },
	END_OPTIONS,
};

static const struct cli_option wheel_options[] = {
	{ "--env", NULL, "PATH", 0, "dir",
	  "the environment (default: $VIRTUAL_ENV, $CONDA_PREFIX, then python3 on PATH)" },
	{ "--python", NULL, "PATH", 0, "file", "the interpreter whose environment to use" },
	{ "--assume-driver", NULL, NULL, 0, NULL, ASSUME_DRIVER_HELP },
	{ "--gpu", NULL, "SPEC", OPT_REPEAT, NULL, "judge the kernels of modules that import for this GPU "
	  "(sm_120, 12.0, H100 ...; repeatable; default: the driver's GPUs)" },
	{ "--driver", NULL, "VERSION", 0, NULL, DRIVER_HELP },
	{ "--junit", NULL, "FILE", 0, "file", JUNIT_HELP },
	END_OPTIONS,
};

static const struct cli_option no_options[] = {
	END_OPTIONS,
};

static const struct cli_option snapshot_options[] = {
	{ "--output", "-o", "FILE", 0, "file", "where to write (default: abiscope-snapshot-HOST.json.gz; '-' for "
	  "standard output); .gz is compressed" },
	{ "--label", NULL, "NAME", 0, NULL, "the host's name in reports (default: its hostname)" },
	{ "--full", NULL, NULL, 0, NULL, "describe every library ld.so.cache lists, with its exports and "
	  "references (the default)" },
	{ "--lean", NULL, NULL, 0, NULL, "keep the libraries of ld.so.cache no check loaded by name, needs and "
	  "versions only (about a quarter smaller): a symbol another host's binary binds to one of them is "
	  "then a labelled guess" },
	{ "--names", NULL, NULL, 0, NULL, "keep the names of what libraries export (larger): on the described "
	  "host, an undefined C++ symbol is then explained against the provider's near misses, as it is here" },
	{ "--python", NULL, "PATH", 0, "file", "the interpreter whose environment to describe" },
	{ "--no-driver", NULL, NULL, 0, NULL, "do not ask libcuda.so.1 for the GPUs" },
	END_OPTIONS,
};

static const struct cli_option fleet_options[] = {
	{ "--expect", NULL, "NAMES", OPT_REPEAT, NULL, "the hosts that should have a snapshot (comma- or "
	  "space-separated): those without one are named, and the exit status is 1" },
	{ "--summary-only", NULL, NULL, 0, NULL, "read only the summary near the start of each snapshot (fast for "
	  "hundreds of large files), not the whole file as check reads a snapshot: one that check would "
	  "refuse may then be grouped; the report says so" },
	END_OPTIONS,
};

static const struct cli_option help_options[] = {
	{ "--man", NULL, NULL, 0, NULL, "print the man page (roff) of COMMAND, or abiscope(1) without one" },
	{ "--synopsis", NULL, NULL, 0, NULL, "print the synopsis of COMMAND, as the README shows it" },
	END_OPTIONS,
};

const struct cli_command cli_commands[] = {
	{
		.name = "why",
		.run = cmd_why,
		.summary = "would dlopen() of a library or extension succeed, and why not",
		.operands = "TARGET",
		.operand_complete = "file",
		.description =
			"Predicts what dlopen(TARGET) does in a process, without loading anything:\n"
			"the dependency tree with how each library is found, and the failure the\n"
			"loader would report, with its root cause and the fix.\n"
			"\n"
			"TARGET is a path to a shared object (an extension module, a library), a\n"
			"bare library name searched the way dlopen() searches it (libz.so.1), or an\n"
			"import name (sgl_kernel, torch._C): its extension modules in the environment\n"
			"($VIRTUAL_ENV, $CONDA_PREFIX, or the --process python's), each judged the\n"
			"way `abiscope check` judges it.  A name without a slash and without \".so\"\n"
			"is an import name when the environment has an extension module by that\n"
			"name; otherwise it is searched the way dlopen() searches a bare name, and\n"
			"the output says which meaning was taken.\n"
			"\n"
			"The --process executable's own start-up is checked first (its dependencies,\n"
			"versions and symbols); when it cannot start, that is the verdict, in the\n"
			"loader's words.",
		.options = why_options,
		.common = COMMON_ALL | COMMON_WHERE,
		.root_help = "inspect the file system under DIR (a container image, a mounted disk) with its own ld.so.cache "
			"and loader",
		.verbose_help = "show notes and every consequence",
		.examples =
			"abiscope why .venv/lib/python3.11/site-packages/sgl_kernel/sm100/common_ops.abi3.so\twould this extension load in python3 on PATH, and why not\n"
			"abiscope why --process .venv/bin/python sgl_kernel\tthe same by import name, in the venv's own python\n"
			"abiscope why --preload-global libtorch.so --gpu H100 _C.so\tafter a library loaded RTLD_GLOBAL, judged for an H100 too\n",
		.exit_status = "0 would load, 1 would not load, 2 usage error, 3 TARGET unreadable",
	},
	{
		.name = "cuda",
		.run = cmd_cuda,
		.summary = "which GPUs the CUDA code of files or an environment runs on",
		.operands = "PATH...",
		.operand_complete = "file",
		.description =
			"Lists the GPU code in shared objects, cubins and fatbins (a file, a folder or a\n"
			"Python environment), per object and per distribution: the SMs of the cubins,\n"
			"the PTX targets with their ISA, the CUDA major each library belongs to; then\n"
			"judges it for the GPU: would a kernel image be found, would the driver have to\n"
			"JIT-compile PTX, is the driver new enough, can the JIT toolkits compile for it.\n"
			"Nothing is loaded or run; only the NVIDIA driver itself is asked about GPUs.",
		.options = cuda_options,
		.common = COMMON_ALL,
		.verbose_help = "every object (also those without device code), each fatbin, and notes",
		.examples =
			"abiscope cuda --gpu sm_120 .venv\twould the CUDA code of the environment run on an RTX 50xx\n"
			"abiscope cuda --list-elf libflash_attn.so\tthe cubins of one library, as cuobjdump --list-elf lists them\n",
		.exit_status = "0 nothing would fail, 1 something would fail on the GPU, 2 usage error, 3 a PATH could not be read",
	},
	{
		.name = "gpu",
		.run = cmd_gpu,
		.summary = "the NVIDIA driver and GPUs of this machine",
		.operands = "",
		.description =
			"Shows the NVIDIA driver (the kernel module's version from\n"
			"/proc/driver/nvidia/version) and the GPUs with their compute capability, as\n"
			"the system's libcuda.so.1 reports them (the driver is the only library abiscope\n"
			"loads).  A machine without a driver is reported as such.",
		.options = gpu_options,
		.common = COMMON_ROOT | COMMON_JSON | COMMON_COLOR | COMMON_QUIET,
		.root_help = "read DIR/proc/driver/nvidia/version; libcuda.so.1 is not loaded",
		.examples =
			"abiscope gpu\tthe driver and GPUs of this machine\n"
			"abiscope gpu --json\tthe same as JSON\n",
		.exit_status = "0 (also without a driver), 2 usage error",
	},
	{
		.name = "check",
		.run = cmd_check,
		.summary = "would every extension module of an environment import",
		.operands = "[PATH...]",
		.operand_complete = "file",
		.description =
			"Checks that every extension module of a Python environment would import,\n"
			"without running Python: each one is dlopen()ed in the state it would meet\n"
			"(after `import torch` when it needs torch), and every failure is explained.\n"
			"\n"
			"PATH is a venv, a conda environment, a site-packages folder, a python\n"
			"executable, or any folder or file (every ELF object in it is checked).\n"
			"Without PATH: $VIRTUAL_ENV, then $CONDA_PREFIX, then the python3 on PATH.\n"
			"\n"
			"The text opens with the verdict, then the one change that fixes the\n"
			"environment (fix: a command to paste) and whether the model checked it\n"
			"(the verdict re-run with the change applied), then each root cause once:\n"
			"what is wrong, the fix, and the distributions and modules it takes down.\n"
			"Warnings follow apart: nothing fails because of them.  Stacked causes fold\n"
			"into the change that removes them all (a torch release its packages bind\n"
			"and whose pins bring the CUDA libraries they need); a conflict keeps what\n"
			"imports today and moves the fewest distributions, each to the release\n"
			"whose own Requires-Dist pins the torch that stays.  No pip line is given\n"
			"for an externally managed Python (PEP 668) or a system package's files\n"
			"(that package is named), nor a downgrade to mend metadata (the stale\n"
			"folder is named).  --json carries every fix as actions (fix_actions, plan).\n"
			"On a machine without the NVIDIA driver it says so once, then gives the\n"
			"verdict a machine with the driver reaches (modelled as --assume-driver does).\n"
			"\n"
			"A module that imports only if its package loads a library itself under a\n"
			"condition abiscope cannot decide (an environment variable), or through a\n"
			"call whose library it cannot name, is CANNOT TELL: counted apart, never as\n"
			"importing, with the file and line of the call it depends on.\n"
			"\n"
			"A package whose import always imports a module nothing on sys.path provides\n"
			"(at the top of its own files, or of another installed package's module it\n"
			"names: deep_gemm imports torch.utils.cpp_extension, which imports\n"
			"setuptools) loads none of its modules: module-not-found, with the chain of\n"
			"files and lines.  Said only in a venv whose sys.path is known whole (no\n"
			"system site packages, no .pth file that runs code).\n"
			"\n"
			"The libraries a package's import loads itself (torchvision's _C_stable.so\n"
			"through torch.ops.load_library, torchaudio's libtorchaudio.so) are judged\n"
			"too, in the state that load meets, and counted apart from modules: where\n"
			"each is loaded (file:line, and the loading call when it is reached through a\n"
			"function of the package), its dlerror(), and what the failure costs: when a\n"
			"try around the load catches the OSError, `import PKG` goes on without it and\n"
			"the library's operators or functions are missing (unless the import itself\n"
			"registers for one of them by name, `@torch.library.register_fake(\"PKG::op\")`:\n"
			"then torch raises \"operator PKG::op does not exist\"); when none does,\n"
			"`import PKG` raises the OSError and every module of the package is lost.  A\n"
			"failing one fails the check.",
		.options = check_options,
		.common = COMMON_ALL | COMMON_WHERE,
		.verbose_help = "every line of each cause, then every distribution and module with its findings "
				"(search lists, every symbol), healthy ones and notes too",
		.examples =
			"abiscope check\tthe active environment ($VIRTUAL_ENV, $CONDA_PREFIX, else python3 on PATH)\n"
			"abiscope check --gpu H100 --driver 580.65.06 .venv\tas it would import on another machine's GPU and driver\n"
			"abiscope check --junit report.xml --fail-on warning .venv\tin CI: a JUnit report, and a failed job on warnings too\n"
			"abiscope check --host node7.json.gz .venv\twould this venv import on the host the snapshot describes\n",
		.exit_status = "0 nothing is known to fail (everything imports, or CANNOT TELL for some), 1 something "
			       "would fail, 2 usage error, 3 a PATH could not be read, or nothing is known to fail but no "
			       "interpreter could be modelled to judge its modules (NOT CHECKED)",
	},
	{
		.name = "explain",
		.run = cmd_explain,
		.summary = "diagnose a pasted ImportError or traceback in its environment",
		.operands = "[TEXT...]",
		.description =
			"Reads an error message or a traceback (the arguments, or standard input),\n"
			"finds the object, symbol or library it names, locates the environment the\n"
			"paths belong to, and diagnoses the failure there without running Python.\n"
			"Options come before TEXT.",
		.options = explain_options,
		.common = COMMON_ALL | COMMON_WHERE,
		.verbose_help = "show every consequence",
		.examples =
			"abiscope explain < traceback.txt\tthe root cause and fix of a pasted error, in the environment its paths name\n"
			"abiscope explain --python .venv/bin/python \"ImportError: libcudart.so.12: cannot open shared object file\"\ta bare error, in a given environment\n",
		.exit_status = "0 the diagnosis finds no failure, 1 it explains a failure, 2 usage error (nothing to explain)",
		.options_end_at_operand = true,
	},
	{
		.name = "wheel",
		.run = cmd_wheel,
		.summary = "would a wheel install and import here, and what would it break",
		.operands = "FILE.whl",
		.operand_complete = "file",
		.description =
			"Says whether a wheel would install and import in a Python environment, before\n"
			"installing it: pip's tag check (Python version, ABI, manylinux glibc level,\n"
			"architecture), then every extension module of the environment checked as it\n"
			"is and as it would be after `pip install FILE.whl` (the wheel replaces the\n"
			"installed distribution of the same name).  The libraries of the wheel that\n"
			"its import loads itself (torchvision 0.29's _C_stable.so) are listed apart,\n"
			"each with where it is loaded, its dlerror() and what its failure costs; a\n"
			"failing one fails the verdict.  Each root cause is said once, with its fix and\n"
			"what it takes down, before the lists.  Nothing is extracted or written: the\n"
			"wheel's members are read from the archive in memory.",
		.options = wheel_options,
		.common = COMMON_ALL | COMMON_WHERE,
		.root_help = "the environment is in the file system under DIR",
		.verbose_help = "also every finding under its module",
		.examples =
			"abiscope wheel flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl\twould it install and import here, and what would it break\n"
			"abiscope wheel --env .venv --gpu sm_90 dist/*.whl\tinto another environment, for an H100's architecture\n",
		.exit_status = "0 it installs and nothing breaks, 1 pip would refuse it, one of its modules would not import, "
			"or it breaks another; 2 usage error; 3 the wheel or the environment could not be read",
	},
	{
		.name = "torch-compat",
		.run = cmd_torch_compat,
		.summary = "which torch releases the extensions of an environment bind against",
		.operands = "[PATH|ENV|WHEEL...]",
		.operand_complete = "file",
		.description =
			"Lists, for each package of an environment (or each file, folder or wheel\n"
			"given), the torch releases whose exported symbols satisfy every torch symbol\n"
			"its native code needs (c10::, at::, torch::, THP*, and the LibTorch stable C\n"
			"ABI aoti_torch_* / torch_*: for those, the oldest release that has them all),\n"
			"then the releases that would satisfy all of them at once, or the pairs of\n"
			"packages that conflict, and the pip install line that fixes it.  The releases\n"
			"come from the built-in index of every torch release on PyPI from 2.0.0 on (the\n"
			"default linux x86_64 build of each; data/torch/README.md).  Nothing is loaded\n"
			"or extracted.  Without PATH: $VIRTUAL_ENV, then $CONDA_PREFIX, then the\n"
			"python3 on PATH.",
		.options = torch_compat_options,
		.common = COMMON_JSON | COMMON_COLOR | COMMON_VERBOSE | COMMON_QUIET,
		.verbose_help = "each object, and the releases each binds against",
		.examples =
			"abiscope torch-compat\twhich torch releases the active environment's extensions bind against\n"
			"abiscope torch-compat sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl\tthe same for a wheel, before installing it\n",
		.exit_status = "0 every package binds against the installed torch (or, with no torch installed, some release "
			"satisfies them all), 1 one does not or they conflict, 2 usage error, 3 a PATH or the index could not be read",
	},
	{
		.name = "diff",
		.run = cmd_diff,
		.summary = "what differs between two hosts or environments, by consequence",
		.operands = "A B",
		.operand_complete = "file",
		.description =
			"Compares two hosts or environments.  A and B are snapshot files (abiscope\n"
			"snapshot) or environments of this machine (a venv, a conda env, a prefix).\n"
			"Each side's environment is checked where it lives; the report starts with\n"
			"the imports that work on one side and fail on the other, then the symbols\n"
			"binaries both sides hold take from another package's library that one side's\n"
			"lacks (with -v also a package's own bindings, and those of binaries only one\n"
			"side holds: they matter only if copied, as check --host says), then the driver,\n"
			"GPUs, glibc, Python, torch and CUDA runtime, then libraries on one side only,\n"
			"binaries that differ, and distribution versions.",
		.options = no_options,
		.common = COMMON_ALL,
		.root_help = "environments (not snapshot files) are under DIR",
		.verbose_help = "every line of every finding",
		.examples =
			"abiscope diff good-node.json.gz bad-node.json.gz\twhat differs between two hosts, imports that differ first\n"
			"abiscope diff .venv-old .venv\ttwo environments of this machine\n",
		.exit_status = "0 no import changes, 1 an import or a used symbol differs, 2 usage error, 3 A or B could not be read",
	},
	{
		.name = "fleet",
		.run = cmd_fleet,
		.summary = "which hosts of a fleet differ from the rest, from their snapshots",
		.operands = "SNAPSHOT|DIR...",
		.operand_complete = "file",
		.description =
			"Groups hosts by everything a load depends on, from their snapshots (abiscope\n"
			"snapshot; a DIR means every *.json and *.json.gz in it): glibc, driver, GPUs,\n"
			"Python, torch, distribution versions, every ELF object of the environment\n"
			"(by a digest of what the loader sees), and the imports that fail.  The\n"
			"largest group is the baseline; every other group is listed with what\n"
			"differs, imports that fail first.  docs/snapshot.md shows how to collect\n"
			"snapshots with srun, pdsh, Ansible or a Kubernetes DaemonSet.",
		.options = fleet_options,
		.common = COMMON_JSON | COMMON_COLOR | COMMON_VERBOSE | COMMON_QUIET,
		.verbose_help = "list every host of every group",
		.examples =
			"abiscope fleet snapshots/\twhich hosts differ from the rest\n"
			"abiscope fleet --expect 'gpu1,gpu2,gpu3' snapshots/\t... and which expected hosts sent no snapshot\n",
		.exit_status = "0 every host alike, 1 some hosts differ or an expected host has no snapshot, 2 usage error, 3 a "
			"snapshot could not be read (the others are still grouped) or there was none and no host was expected",
	},
	{
		.name = "snapshot",
		.run = cmd_snapshot,
		.summary = "describe this host and an environment in one file, for other machines",
		.operands = "[ENV]",
		.operand_complete = "dir",
		.description =
			"Describes this machine's loader (glibc, default directories, ld.so.cache,\n"
			"hwcaps), its NVIDIA driver and GPUs, and the Python environment ENV (default:\n"
			"$VIRTUAL_ENV, $CONDA_PREFIX, then python3 on PATH) with every ELF object it can\n"
			"load, in one JSON file.  Nothing is loaded or run; the file holds no symbol\n"
			"names of libraries, only 64-bit hashes of what they export, and the names of\n"
			"what they import.  Other machines then answer questions about this one:\n"
			"  abiscope check --host FILE [PATH...]   would it import there\n"
			"  abiscope diff FILE OTHER               what differs, ordered by consequence\n"
			"  abiscope fleet FILE...                 which hosts differ from the rest",
		.options = snapshot_options,
		.common = COMMON_ROOT | COMMON_JSON | COMMON_QUIET,
		.root_help = "describe the system under DIR (a container image)",
		.json_help = "print a JSON summary instead of text",
		.examples =
			"abiscope snapshot -o node7.json.gz .venv\tdescribe this host and the venv, for check --host, diff and fleet\n"
			"abiscope snapshot --root /mnt/image -o image.json.gz\ta container image's file system\n",
		.exit_status = "0 written, 2 usage error, 3 ENV could not be read or FILE written",
	},
	{
		.name = "help",
		.run = cmd_help,
		.summary = "describe abiscope or one of its commands",
		.operands = "[COMMAND]",
		.operand_complete = "command",
		.description =
			"Prints the help of COMMAND (the same as `abiscope COMMAND --help`), or the\n"
			"list of commands.  The man pages and the README's synopses are printed by\n"
			"this command from the same table as --help.",
		.options = help_options,
		.common = 0,
		.examples =
			"abiscope help check\tthe same as abiscope check --help\n"
			"abiscope help --man check | man -l -\tthe man page, without installing it\n",
		.exit_status = "0, 2 usage error (no such command)",
	},
	{
		.name = "completion",
		.run = cmd_completion,
		.summary = "print the bash or zsh completion script",
		.operands = "bash|zsh",
		.operand_complete = "bash zsh",
		.description =
			"Prints the shell completion for abiscope.  `make install` installs both;\n"
			"after `pip install abiscope`, load it from your shell's startup file:\n"
			"  eval \"$(abiscope completion bash)\"      # ~/.bashrc\n"
			"  eval \"$(abiscope completion zsh)\"       # ~/.zshrc, after compinit",
		.options = no_options,
		.common = 0,
		.examples =
			"eval \"$(abiscope completion bash)\"\tin ~/.bashrc: completion of commands, options and their values\n",
		.exit_status = "0, 2 usage error (no such shell)",
	},
};

const size_t cli_ncommands = ARRAY_SIZE(cli_commands);
