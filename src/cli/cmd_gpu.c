/*
 * cmd_gpu.c: `abiscope gpu` - the NVIDIA driver and GPUs of this machine,
 * as abiscope's CUDA verdicts see them.
 */
#include "cli/cli.h"
#include "cuda/gpu.h"
#include "scan.h"

/* libcuda.so.580.65.06 -> 580.65.06, to compare with the kernel module. */
static bool libcuda_file_version(const char *path, struct driver_version *v)
{
	const char *base = path_basename(path);
	static const char prefix[] = "libcuda.so.";
	if (!str_starts(base, prefix))
		return false;
	return cuda_parse_driver_version(base + sizeof prefix - 1, v);
}

static const char *version_str(struct arena *a, const struct driver_version *v)
{
	return v->patch ? arena_printf(a, "%u.%u.%02u", v->major, v->minor, v->patch)
			: arena_printf(a, "%u.%u", v->major, v->minor);
}

static void print_text(struct arena *a, const struct term *t, const struct gpu_probe *p,
		       const struct cuda_host *h)
{
	bool none = !p->module_path && !p->libcuda_loaded;
	if (none) {
		fprintf(t->out, "no NVIDIA driver found: no /proc/driver/nvidia/version%s\n",
			p->tried_libcuda ? ", and libcuda.so.1 cannot be loaded" : "");
		if (p->libcuda_error)
			fprintf(t->out, "%s  %s%s\n", c_dim(t), p->libcuda_error, c_reset(t));
		fprintf(t->out, "CUDA verdicts need --gpu (sm_90, 12.0, H100 ...) and --driver (580.65.06) on this machine\n");
		return;
	}
	if (p->module_path) {
		if (p->module_ok)
			fprintf(t->out, "%skernel module%s  %s (supports CUDA %u.%u), from %s\n", c_bold(t), c_reset(t),
				version_str(a, &p->module), h->driver_cuda / 1000, h->driver_cuda % 1000 / 10,
				p->module_path);
		else
			fprintf(t->out, "%skernel module%s  version not understood in %s: %s\n", c_bold(t), c_reset(t),
				p->module_path, p->module_line ? p->module_line : "");
	} else {
		fprintf(t->out, "%skernel module%s  no /proc/driver/nvidia/version (a container without the driver files?)\n",
			c_bold(t), c_reset(t));
	}
	if (!p->tried_libcuda) {
		fprintf(t->out, "%slibcuda.so.1%s   not loaded (--root or --no-driver)\n", c_bold(t), c_reset(t));
		return;
	}
	if (!p->libcuda_loaded) {
		fprintf(t->out, "%slibcuda.so.1%s   cannot be loaded: %s\n", c_bold(t), c_reset(t),
			p->libcuda_error ? p->libcuda_error : "");
		return;
	}
	fprintf(t->out, "%slibcuda.so.1%s   %s", c_bold(t), c_reset(t), p->libcuda_path ? p->libcuda_path : "(loaded)");
	if (p->driver_cuda)
		fprintf(t->out, ", CUDA %u.%u", p->driver_cuda / 1000, p->driver_cuda % 1000 / 10);
	fputc('\n', t->out);
	struct driver_version uv;
	if (p->module_ok && p->libcuda_path && libcuda_file_version(p->libcuda_path, &uv) &&
	    cuda_driver_cmp(&uv, &p->module) != 0)
		fprintf(t->out, "%smismatch%s       user-space driver %s but kernel module %s: CUDA calls fail with "
				"\"system has unsupported display driver / cuda driver combination\" (803)\n",
			c_red(t), c_reset(t), version_str(a, &uv), version_str(a, &p->module));
	if (p->init_status) {
		fprintf(t->out, "%scuInit%s         failed: %s\n", c_bold(t), c_reset(t), p->init_error);
		return;
	}
	if (!p->ndev)
		fprintf(t->out, "%sGPUs%s           none visible (CUDA_VISIBLE_DEVICES?)\n", c_bold(t), c_reset(t));
	for (size_t i = 0; i < p->ndev; i++) {
		char cc[16];
		cuda_cc_string(p->dev[i].cc, cc, sizeof cc);
		fprintf(t->out, "%sGPU %d%s          %s, compute capability %s (sm_%u)\n", c_bold(t), p->dev[i].index,
			c_reset(t), p->dev[i].name ? p->dev[i].name : "?", cc, p->dev[i].cc);
	}
}

static void print_json(struct arena *a, const struct gpu_probe *p, const struct cuda_host *h)
{
	struct jw w;
	jw_init(&w, stdout);
	jw_obj_begin(&w);
	jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
	jw_kstr(&w, "command", "gpu");
	jw_kbool(&w, "driver_found", p->module_path || p->libcuda_loaded);
	jw_key(&w, "kernel_module");
	if (p->module_path) {
		jw_obj_begin(&w);
		jw_kstr(&w, "path", p->module_path);
		jw_kstr(&w, "line", p->module_line);
		jw_kstr(&w, "version", p->module_ok ? version_str(a, &p->module) : NULL);
		jw_obj_end(&w);
	} else {
		jw_null(&w);
	}
	jw_key(&w, "libcuda");
	jw_obj_begin(&w);
	jw_kbool(&w, "tried", p->tried_libcuda);
	jw_kbool(&w, "loaded", p->libcuda_loaded);
	jw_kstr(&w, "path", p->libcuda_path);
	jw_kstr(&w, "error", p->libcuda_error);
	jw_kstr(&w, "cuda", p->driver_cuda ? arena_printf(a, "%u.%u", p->driver_cuda / 1000, p->driver_cuda % 1000 / 10)
					   : NULL);
	jw_key(&w, "cu_init");
	if (p->libcuda_loaded && p->init_error)
		jw_str(&w, p->init_error);
	else
		jw_null(&w);
	jw_obj_end(&w);
	jw_key(&w, "gpus");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->ndev; i++) {
		char cc[16];
		cuda_cc_string(p->dev[i].cc, cc, sizeof cc);
		jw_obj_begin(&w);
		jw_kint(&w, "index", p->dev[i].index);
		jw_kstr(&w, "name", p->dev[i].name);
		jw_kstr(&w, "compute_capability", cc);
		jw_kstr(&w, "sm", arena_printf(a, "sm_%u", p->dev[i].cc));
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_kstr(&w, "driver_cuda", h->driver_cuda ? arena_printf(a, "%u.%u", h->driver_cuda / 1000, h->driver_cuda % 1000 / 10)
						 : NULL);
	jw_kstr(&w, "no_gpu_reason", h->ngpu ? NULL : h->no_gpu_reason);
	jw_obj_end(&w);
	jw_end(&w);
}

int cmd_gpu(int argc, char **argv)
{
	struct args a;
	enum arg_kind k;
	bool no_driver = false;
	args_init(&a, argc, argv, "gpu");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND)
			return usage_error("gpu", "unexpected argument %s", a.value);
		if (arg_is(&a, "--no-driver"))
			no_driver = true;
	}
	if (k != ARG_END)
		return k == ARG_HELP ? EXIT_OK : EXIT_USAGE;
	const char *root = a.common.root;
	bool json = a.common.json;
	enum color_mode color = a.common.color;
	struct scan s;
	scan_init(&s, root);
	struct gpu_probe p;
	struct cuda_host h;
	cuda_host_init(&h);
	cuda_host_complete(&s.arena, &s.fs, !no_driver, &h, &p);
	if (json) {
		print_json(&s.arena, &p, &h);
	} else {
		struct term t;
		term_init(&t, stdout, color);
		print_text(&s.arena, &t, &p, &h);
	}
	scan_release(&s);
	return EXIT_OK;
}
