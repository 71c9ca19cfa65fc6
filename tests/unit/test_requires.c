/* Unit tests: Requires-Dist lines, markers and version order (pyenv/requires.h),
 * and the commands of fix actions (report/action.h). */
#include "unit.h"
#include "core/arena.h"
#include "pyenv/requires.h"
#include "report/action.h"

static void parse(void)
{
	struct arena a;
	arena_init(&a);
	struct requirement r;
	CHECK(requirement_parse(&a, "torch (==2.9.1)", &r) && str_eq(r.norm, "torch") && str_eq(r.spec, "==2.9.1") &&
	      str_eq(r.pin, "2.9.1"), "the old form: torch (==2.9.1)");
	CHECK(requirement_parse(&a, "cuda-toolkit[cublas, cudart]==13.0.2; platform_system == \"Linux\"", &r) &&
	      str_eq(r.extras, "cublas,cudart") && str_eq(r.pin, "13.0.2") && r.marker, "extras and a marker");
	CHECK(requirement_parse(&a, "Nvidia_CUDA.nvrtc==13.0.88.*", &r) && str_eq(r.norm, "nvidia-cuda-nvrtc") &&
	      !r.pin, "a prefix pin is no exact pin; the name normalised");
	CHECK(requirement_parse(&a, "torch>=2.10", &r) && !r.pin && str_eq(r.spec, ">=2.10"), "a range");
	CHECK(!requirement_parse(&a, "  ; extra == 'x'", &r), "no name: not a requirement");
	arena_release(&a);
}

static void versions(void)
{
	CHECK(version_cmp("2.10.0", "2.9.1") > 0, "2.10.0 after 2.9.1 (numbers, not text)");
	CHECK(version_cmp("2.9", "2.9.0") == 0, "2.9 is 2.9.0");
	CHECK(version_cmp("0.0.33.post1", "0.0.33") > 0, "a post release after the release");
	CHECK(version_cmp("2.9.0rc1", "2.9.0") < 0, "a release candidate before the release");
	CHECK(spec_allows("==2.9.1", "2.9.1+cu128"), "==2.9.1 allows 2.9.1+cu128 (a local label is ignored)");
	CHECK(!spec_allows("==2.9.1+cu130", "2.9.1+cu128"), "a pin with a local label wants that one");
	CHECK(spec_allows(">=2.10,<3", "2.12.1") && !spec_allows(">=2.10,<3", "2.9.1"), "a range");
	CHECK(spec_allows("==13.0.88.*", "13.0.88.1") && !spec_allows("==13.0.88.*", "13.0.89"), "a prefix pin");
	CHECK(spec_allows("~=2.9.0", "2.9.5") && !spec_allows("~=2.9.0", "2.10.0"), "a compatible release");
}

static void markers(void)
{
	struct marker_env x86 = { "x86_64", 3, 11, NULL }, arm = { "aarch64", 3, 11, NULL };
	const char *m = "platform_system == \"Linux\" and platform_machine == \"x86_64\"";
	CHECK(marker_holds(m, &x86) && !marker_holds(m, &arm), "the machine decides");
	CHECK(!marker_holds("python_version >= \"3.12\"", &x86) && marker_holds("python_version < \"3.15\"", &x86),
	      "python_version compares as a version");
	struct marker_env nvrtc = { "x86_64", 3, 11, "nvrtc" };
	const char *e = "(sys_platform == 'linux' or sys_platform == 'win32') and extra == 'nvrtc'";
	CHECK(marker_holds(e, &nvrtc), "an extra asked for");
	struct marker_env cublas = { "x86_64", 3, 11, "cublas" };
	CHECK(!marker_holds(e, &cublas), "another extra, behind a parenthesised or");
	CHECK(!marker_holds("(sys_platform == 'linux' or sys_platform == 'win32') and extra == 'all'", &cublas),
	      "cuda-toolkit's 'all' extra is not the one asked for");
	CHECK(marker_holds("python_version < \"3.8\" or platform_machine == \"x86_64\"", &x86) &&
	      !marker_holds("python_version < \"3.8\" or platform_machine == \"x86_64\"", &arm), "or at the top");
}

static void commands(void)
{
	struct arena a;
	arena_init(&a);
	struct fix_action *x = fix_action_new(&a, FIX_PIP_INSTALL);
	fix_action_item(&a, x, "torch==2.9.1");
	fix_action_item(&a, x, "nvidia-cuda-nvrtc==13.0.88.*");
	fix_action_item(&a, x, "torch==2.9.1");
	x->index_url = "https://download.pytorch.org/whl/cu128";
	fix_action_finish(&a, x);
	CHECK(str_eq(x->command, "pip install torch==2.9.1 'nvidia-cuda-nvrtc==13.0.88.*' --index-url "
				 "https://download.pytorch.org/whl/cu128"),
	      "one requirement once, quoted when the shell would expand it, the index");
	struct fix_action *r = fix_action_new(&a, FIX_REMOVE_PATH);
	r->path = "/env/it's.dist-info";
	fix_action_finish(&a, r);
	CHECK(str_eq(r->command, "rm -r '/env/it'\\''s.dist-info'"), "a path quoted for the shell");
	arena_release(&a);
}

int main(void)
{
	parse();
	versions();
	markers();
	commands();
	return unit_done();
}
