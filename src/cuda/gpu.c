#include "cuda/gpu.h"

#include "loader/process.h"

#include <ctype.h>
#include <dlfcn.h>
#include <link.h>
#include <limits.h>

/* ---- the kernel module's version ---- */

bool gpu_parse_module_version(struct arena *a, const char *text, size_t len,
			      struct driver_version *out, const char **line)
{
	size_t eol = 0;
	while (eol < len && text[eol] != '\n' && text[eol] != '\0')
		eol++;
	if (line)
		*line = arena_strndup(a, text, eol);
	/* "Kernel Module", optionally "for <arch>", then the version. */
	static const char key[] = "Kernel Module";
	const char *p = NULL;
	for (size_t i = 0; i + sizeof key - 1 <= eol; i++)
		if (memcmp(text + i, key, sizeof key - 1) == 0) {
			p = text + i + sizeof key - 1;
			break;
		}
	if (!p)
		return false;
	const char *end = text + eol;
	while (p < end && *p == ' ')
		p++;
	if (end - p > 4 && memcmp(p, "for ", 4) == 0) {
		p += 4;
		while (p < end && *p != ' ')
			p++;
		while (p < end && *p == ' ')
			p++;
	}
	char ver[32];
	size_t n = 0;
	while (p < end && (isdigit((unsigned char)*p) || *p == '.') && n + 1 < sizeof ver)
		ver[n++] = *p++;
	ver[n] = '\0';
	return cuda_parse_driver_version(ver, out);
}

/* A version file of one line: /sys/module/nvidia/version. */
static bool parse_plain_version(const char *text, size_t len, struct driver_version *out)
{
	char ver[32];
	size_t n = 0;
	while (n < len && n + 1 < sizeof ver && text[n] != '\n' && text[n] != '\0')
		n++;
	memcpy(ver, text, n);
	ver[n] = '\0';
	return cuda_parse_driver_version(ver, out);
}

static void read_module(struct arena *a, const struct fsview *fs, struct gpu_probe *p)
{
	static const char *const files[] = { "/proc/driver/nvidia/version", "/sys/module/nvidia/version" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *text = NULL;
		size_t len = 0;
		struct diag d;
		diag_clear(&d);
		if (fs_read_small(fs, files[i], 64 * 1024, &text, &len, &d) != ST_OK)
			continue;
		p->module_path = files[i];
		if (i == 0) {
			p->module_ok = gpu_parse_module_version(a, text, len, &p->module, &p->module_line);
		} else {
			p->module_ok = parse_plain_version(text, len, &p->module);
			p->module_line = arena_strndup(a, text, strcspn(text, "\n"));
		}
		free(text);
		if (p->module_ok)
			return;
	}
}

/* ---- the user-space driver ---- */

/* CUDA driver API entry points; CUresult and CUdevice are ints. */
typedef int (*cu_int_fn)(int *);
typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_errname_fn)(int, const char **);

enum {
	CU_ATTR_CC_MAJOR = 75,	/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
	CU_ATTR_CC_MINOR = 76,
};

/* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
static void *sym(void *h, const char *name, struct gpu_probe *p, struct arena *a)
{
	void *f = dlsym(h, name);
	if (!f && !p->libcuda_error)
		p->libcuda_error = arena_printf(a, "libcuda.so.1 has no %s", name);
	return f;
}

/*
 * Opens the system's libcuda.so.1 and nothing else.  A bare name handed
 * to dlopen() would be searched through LD_LIBRARY_PATH, which often
 * points into an environment we inspect: a file there would run its
 * constructors in our process.  So the loader model picks the files, as
 * for a process with no LD_LIBRARY_PATH and no RUNPATH (ld.so.cache, then
 * the default directories), and they are opened by absolute path,
 * dependencies first, so that the loader finds each one already loaded
 * and never searches.  A driver the model says would not load is not
 * loaded.  NULL with p->libcuda_error set when it is not opened.
 */
static void *open_trusted_libcuda(struct arena *a, struct gpu_probe *p)
{
	/* the host's own disk, unrecorded: what the model reads to pick the
	 * driver is not part of anything inspected */
	struct fsview host;
	fs_init(&host, NULL);
	struct objcache oc;
	objcache_init(&oc, a, &host);
	struct proc_options po;
	memset(&po, 0, sizeof po);
	struct process proc;
	struct diag d;
	diag_clear(&d);
	void *h = NULL;
	if (proc_init(&proc, a, &oc, &po, NULL, &d) != ST_OK) {
		p->libcuda_error = arena_printf(a, "the system's loader could not be modelled: %s", d.msg);
		goto out;
	}
	struct dlopen_result r;
	proc_dlopen(&proc, "libcuda.so.1", false, &r);
	if (!r.root || (r.root->how != FOUND_CACHE && r.root->how != FOUND_DEFAULT)) {
		p->libcuda_error = arena_strdup(a, r.dlerror ? r.dlerror
							 : "libcuda.so.1: not in ld.so.cache nor in the system's directories");
		goto out;
	}
	if (!r.ok) {
		p->libcuda_error = arena_printf(a, "not loaded, it would fail: %s", r.dlerror);
		goto out;
	}
	/* dependencies first (the search list is breadth-first from the root) */
	for (size_t i = r.nsearchlist; i-- > 1;) {
		const struct lmap *m = r.searchlist[i];
		if (m->is_interp || !m->name || m->name[0] != '/')
			continue;
		void *dep = dlopen(m->name, RTLD_NOW | RTLD_LOCAL);
		if (!dep) {
			const char *e = dlerror();
			p->libcuda_error = arena_strdup(a, e ? e : m->name);
			goto out;
		}
		/* left open: libcuda.so.1 needs it, and closes with it */
	}
	p->libcuda_path = arena_strdup(a, r.root->name);
	h = dlopen(r.root->name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		p->libcuda_error = arena_strdup(a, e ? e : "libcuda.so.1 cannot be loaded");
	}
out:
	objcache_release(&oc);
	return h;
}

static void probe_libcuda(struct arena *a, struct gpu_probe *p)
{
	p->tried_libcuda = true;
	void *h = open_trusted_libcuda(a, p);
	if (!h)
		return;
	p->libcuda_loaded = true;
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) {
		char real[PATH_MAX];
		p->libcuda_path = arena_strdup(a, realpath(lm->l_name, real) ? real : lm->l_name);
	}
	cu_int_fn get_version = (cu_int_fn)sym(h, "cuDriverGetVersion", p, a);
	cu_init_fn init = (cu_init_fn)sym(h, "cuInit", p, a);
	cu_int_fn get_count = (cu_int_fn)sym(h, "cuDeviceGetCount", p, a);
	cu_device_get_fn get_device = (cu_device_get_fn)sym(h, "cuDeviceGet", p, a);
	cu_attr_fn get_attr = (cu_attr_fn)sym(h, "cuDeviceGetAttribute", p, a);
	cu_name_fn get_name = (cu_name_fn)sym(h, "cuDeviceGetName", p, a);
	cu_errname_fn err_name = (cu_errname_fn)dlsym(h, "cuGetErrorName");
	int v = 0;
	if (get_version && get_version(&v) == 0 && v > 0)
		p->driver_cuda = (unsigned)v;
	if (!init || !get_count || !get_device || !get_attr)
		goto out;
	p->init_status = init(0);
	if (p->init_status != 0) {
		const char *n = NULL;
		if (err_name && err_name(p->init_status, &n) == 0 && n)
			p->init_error = arena_strdup(a, n);
		else
			p->init_error = arena_printf(a, "CUresult %d", p->init_status);
		goto out;
	}
	int count = 0;
	if (get_count(&count) != 0 || count < 0)
		goto out;
	for (int i = 0; i < count && p->ndev < GPU_MAX_DEVICES; i++) {
		int dev, major = 0, minor = 0;
		if (get_device(&dev, i) != 0 || get_attr(&major, CU_ATTR_CC_MAJOR, dev) != 0 ||
		    get_attr(&minor, CU_ATTR_CC_MINOR, dev) != 0 || major < 1 || major > 99 || minor < 0 ||
		    minor > 9)
			continue;
		struct gpu_device *g = &p->dev[p->ndev++];
		g->index = i;
		g->cc = (unsigned)(major * 10 + minor);
		char name[256] = "";
		if (get_name && get_name(name, (int)sizeof name - 1, dev) == 0)
			g->name = arena_strdup(a, name);
	}
out:
	dlclose(h);
}

void gpu_probe_run(struct arena *a, const struct fsview *fs, bool use_libcuda, struct gpu_probe *p)
{
	memset(p, 0, sizeof *p);
	read_module(a, fs, p);
	/* Under --root the driver that would run is the root's, which we must
	 * not load; the host's would answer for another machine. */
	if (use_libcuda && !fs_is_rooted(fs))
		probe_libcuda(a, p);
}

/* ---- the target ---- */

void cuda_host_init(struct cuda_host *h)
{
	memset(h, 0, sizeof *h);
}

void cuda_host_add_gpu(struct cuda_host *h, unsigned cc, const char *name, const char *source)
{
	for (size_t i = 0; i < h->ngpu; i++)
		if (h->gpu[i].cc == cc)
			return;
	if (h->ngpu == GPU_MAX_DEVICES)
		return;
	h->gpu[h->ngpu].cc = cc;
	h->gpu[h->ngpu].name = name;
	h->gpu[h->ngpu].source = source;
	h->ngpu++;
}

bool cuda_host_set_driver(struct cuda_host *h, const char *version)
{
	struct driver_version v;
	if (!cuda_parse_driver_version(version, &v))
		return false;
	h->driver_known = true;
	h->driver_version_known = true;
	h->driver = v;
	h->driver_cuda = cuda_release_for_driver(&v);
	h->driver_source = "--driver";
	return true;
}

void cuda_host_from_probe(struct arena *a, struct cuda_host *h, const struct gpu_probe *p)
{
	if (!h->driver_known) {
		if (p->module_ok) {
			h->driver_known = true;
			h->driver_version_known = true;
			h->driver = p->module;
			h->driver_cuda = cuda_release_for_driver(&p->module);
			h->driver_source = p->module_path;
		}
		/* cuDriverGetVersion is the driver's own answer: it wins. */
		if (p->driver_cuda) {
			h->driver_known = true;
			h->driver_cuda = p->driver_cuda;
			h->driver_source = h->driver_version_known ? arena_printf(a, "%s and libcuda.so.1", p->module_path)
								   : "libcuda.so.1";
		}
	}
	if (h->ngpu)
		return;
	for (size_t i = 0; i < p->ndev; i++)
		cuda_host_add_gpu(h, p->dev[i].cc, p->dev[i].name, "libcuda.so.1");
	if (h->ngpu)
		return;
	if (!p->module_path && !p->libcuda_loaded)
		h->no_gpu_reason = "no NVIDIA driver found";
	else if (!p->tried_libcuda)
		h->no_gpu_reason = "the driver was not asked for its GPUs (give --gpu)";
	else if (!p->libcuda_loaded)
		h->no_gpu_reason = arena_printf(a, "libcuda.so.1 could not be loaded: %s",
						p->libcuda_error ? p->libcuda_error : "unknown error");
	else if (p->init_status)
		h->no_gpu_reason = arena_printf(a, "cuInit failed: %s", p->init_error);
	else
		h->no_gpu_reason = "the driver reports no GPU";
}

void cuda_host_complete(struct arena *a, const struct fsview *fs, bool use_libcuda,
			struct cuda_host *h, struct gpu_probe *p)
{
	/* Files first; the driver is loaded only for what --gpu, --driver and
	 * the kernel module's version file leave open: the GPUs, or the
	 * driver's CUDA release when no version file says it. */
	gpu_probe_run(a, fs, false, p);
	bool need = h->ngpu == 0 || (!h->driver_known && !p->module_ok);
	if (use_libcuda && need && !fs_is_rooted(fs))
		probe_libcuda(a, p);
	cuda_host_from_probe(a, h, p);
}

bool cuda_host_add_spec(struct cuda_host *h, const char *spec)
{
	unsigned cc;
	const char *name;
	if (!cuda_parse_gpu_spec(spec, &cc, &name))
		return false;
	cuda_host_add_gpu(h, cc, name, "--gpu");
	return true;
}
