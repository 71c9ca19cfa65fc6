/*
 * capture.c: the snapshot of a host and one of its environments.
 *
 * What a snapshot must hold is exactly what the checks read, so capturing
 * is a recorded `check --libraries` of the environment, plus torch's
 * identity, the driver and GPU probe, and the loader's facts (all read
 * while recording, so that the mounted snapshot answers the same reads).
 */
#include "host/snapshot.h"
#include "host/compare.h"
#include "cuda/gpu.h"
#include "pyenv/check.h"
#include "cxx/torch.h"

#include <sys/stat.h>
#include <zlib.h>

static const char *portable_message(struct arena *a, const struct snapshot *snap, const char *msg)
{
	if (!snap->env_root || strlen(snap->env_root) < 2)
		return msg;
	const char *out = "", *p = msg, *hit;
	size_t n = strlen(snap->env_root);
	while ((hit = strstr(p, snap->env_root)) != NULL) {
		out = arena_printf(a, "%s%.*s<env>", out, (int)(hit - p), p);
		p = hit + n;
	}
	return arena_printf(a, "%s%s", out, p);
}

enum status snapshot_capture(struct scan *s, const char *path, const struct capture_options *o,
			     struct snapshot *snap, struct env_check *c, struct diag *d)
{
	struct snap_recorder rec;
	snapshot_record_begin(s, &rec);
	struct check_options co;
	memset(&co, 0, sizeof co);
	co.python = o->python;
	co.libraries_too = true;
	bool rooted = fs_is_rooted(&s->fs);
	co.path_env = rooted ? NULL : o->path_env;
	co.virtual_env = o->virtual_env;
	co.conda_prefix = o->conda_prefix;
	enum status st = check_env(s, path, &co, c, d);
	if (st != ST_OK) {
		snapshot_record_end(s);
		return st;
	}
	/* the loader of the environment's interpreter (its class and machine) */
	uint16_t machine = EM_X86_64_;
	bool is64 = true;
	const char *interp = NULL;
	if (c->process_exe) {
		struct diag pd;
		diag_clear(&pd);
		struct object *po = objcache_get(&s->objs, c->process_exe, &pd);
		if (po && po->kind == OBJ_ELF && po->elf_ok) {
			machine = po->elf.machine;
			is64 = po->elf.is64;
			interp = po->elf.interp;
		}
	}
	struct ldso_facts facts;
	ldso_facts_load(&s->arena, &s->objs, interp, machine, is64, &facts);

	struct snapshot_options so;
	memset(&so, 0, sizeof so);
	so.full = o->full;
	so.names = o->names;
	so.label = o->label;
	so.env = &c->env;
	so.dists = &c->inv.dists.all;
	if (c->torch.found && c->torch.dir) {
		struct torch_identity ti;
		struct diag td;
		diag_clear(&td);
		if (torch_identify(&s->arena, &s->objs, c->torch.dir, &ti, &td) == ST_OK) {
			so.torch_version = ti.v.version;
			so.torch_cuda = ti.v.cuda;
		} else {
			so.torch_version = c->torch.version;
			so.torch_cuda = c->torch.cuda;
		}
	}
	struct gpu_probe gp;
	gpu_probe_run(&s->arena, &s->fs, !o->no_driver && !rooted, &gp);
	snapshot_record_end(s);
	struct snap_gpu gpus[GPU_MAX_DEVICES];
	size_t ngpus = 0;
	for (size_t i = 0; i < gp.ndev && ngpus < GPU_MAX_DEVICES; i++) {
		gpus[ngpus].cc = gp.dev[i].cc;
		gpus[ngpus].name = gp.dev[i].name;
		ngpus++;
	}
	char drv[48];
	if (gp.module_ok) {
		/* desktop drivers print the patch with two digits, Jetson's not */
		snprintf(drv, sizeof drv, gp.module.major >= 100 ? "%u.%u.%02u" : "%u.%u.%u", gp.module.major,
			 gp.module.minor, gp.module.patch);
		so.driver = drv;
	}
	so.driver_cuda = gp.driver_cuda;
	so.gpus = gpus;
	so.ngpus = ngpus;
	st = snapshot_build(s, &rec, &facts, &so, snap, d);
	if (st != ST_OK)
		return st;
	/* what the kernel tells the environment's processes, where it is
	 * known and not assumed (objcache_machine: this host's auxiliary
	 * vector for its own kind of binary; x86's page size is always 4096;
	 * an aarch64 tree under --root on another machine gets neither) */
	struct machine_view mv;
	objcache_machine(&s->objs, machine, &mv);
	snap->page_size = mv.page_size_assumed ? 0 : (uint32_t)mv.page_size;
	snap->hwcap_known = !mv.hwcap_assumed;
	snap->hwcap = mv.hwcap_assumed ? 0 : mv.hwcap;
	snap->hwcap2 = mv.hwcap_assumed ? 0 : mv.hwcap2;
	if (!snap->python && c->process_exe)	/* a plain folder: the python3 its check used */
		snap->python = arena_strdup(&s->arena, c->process_exe);
	snap->failing = arena_calloc(&s->arena, c->nv ? c->nv : 1, sizeof *snap->failing);
	for (size_t i = 0; i < c->nv; i++) {
		const struct module_verdict *v = &c->v[i];
		if (v->state != V_FAILS)
			continue;
		snap->failing[snap->nfailing++] = arena_printf(&s->arena, "%s: %s",
			v->io->module ? v->io->module : host_object_key(&s->arena, snap, v->io->path),
			portable_message(&s->arena, snap, v->dlerror ? v->dlerror : "fails"));
	}
	return ST_OK;
}

enum status snapshot_open_side(struct scan *s, const char *path, const struct capture_options *o,
			       struct snapshot *snap, struct env_check *c, struct diag *d)
{
	/* JSON that is not a snapshot is read as one, to be refused as one:
	 * null or [1,2,3] is no environment either */
	if (!path || snapshot_file_kind(path) == SNAPSHOT_FILE_NOT)
		return snapshot_capture(s, path, o, snap, c, d);
	enum status st = snapshot_read(&s->arena, path, snap, d);
	if (st != ST_OK)
		return st;
	snapshot_mount(s, snap);
	struct check_options co;
	memset(&co, 0, sizeof co);
	co.libraries_too = true;
	if (snap->env_kind && str_eq(snap->env_kind, "folder"))
		co.python = snap->python;	/* the python3 the capture found on PATH */
	return check_env(s, snap->env_root ? snap->env_root : "/", &co, c, d);
}
