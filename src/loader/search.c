/*
 * search.c: how glibc finds the file for a library name.
 *
 * Mirrors elf/dl-load.c of glibc 2.36: _dl_map_object's search order
 * (RPATH up the loader chain and the executable's, LD_LIBRARY_PATH,
 * RUNPATH, ld.so.cache, default directories), open_path's probing of each
 * directory with every hwcaps subdirectory, and open_verify's verdict on
 * each candidate: which ones are skipped and which ones stop the search.
 */
#include "loader/internal.h"

#include <errno.h>

#define MAX_TRACE_PROBES 4096

const char *loader_strerror(int err)
{
	/* The loader prints strerror(); keep the common ones stable here. */
	switch (err) {
	case ENOENT: return "No such file or directory";
	case EACCES: return "Permission denied";
	case ENOTDIR: return "Not a directory";
	case EISDIR: return "Is a directory";
	case ELOOP: return "Too many levels of symbolic links";
	case ENAMETOOLONG: return "File name too long";
	}
	return strerror(err);
}

/* ---- DSTs and path lists ---- */

/* glibc's is_dst: the name, optionally in braces, not followed by an
 * identifier character.  Returns the length consumed (without the $). */
static size_t is_dst(const char *in, const char *ref)
{
	bool curly = false;
	if (in[0] == '{') {
		curly = true;
		in++;
	}
	size_t n = strlen(ref);
	if (strncmp(in, ref, n) != 0)
		return 0;
	char c = in[n];
	if (curly && c != '}')
		return 0;
	if (!curly && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
		return 0;
	return curly ? n + 2 : n;
}

static char *expand_dst_in(struct arena *a, struct process *p, const struct lmap *l, const char *s)
{
	if (!strchr(s, '$'))
		return arena_strdup(a, s);
	char out[8192];
	size_t o = 0;
	while (*s && o < sizeof out - 1) {
		if (*s == '$') {
			size_t len;
			const char *repl = NULL;
			if ((len = is_dst(s + 1, "ORIGIN")) != 0)
				repl = l ? l->origin : NULL;
			else if ((len = is_dst(s + 1, "PLATFORM")) != 0)
				repl = p->facts.platform;
			else if ((len = is_dst(s + 1, "LIB")) != 0)
				repl = p->facts.dst_lib;
			if (len && !repl)
				return NULL;	/* a known DST without a value drops the element */
			if (repl) {
				int w = snprintf(out + o, sizeof out - o, "%s", repl);
				o += (size_t)MAX(w, 0);
				if (o >= sizeof out)
					o = sizeof out - 1;
				s += 1 + len;
				continue;
			}
		}
		out[o++] = *s++;
	}
	out[o] = '\0';
	return arena_strdup(a, out);
}

char *expand_dst(struct process *p, const struct lmap *l, const char *s)
{
	return expand_dst_in(p->arena, p, l, s);
}

/* split_path_list() into a given arena. */
static char **split_path_list_in(struct arena *a, struct process *p, const struct lmap *l, const char *list,
				 const char *seps)
{
	/* fillin_rpath: strsep on the separators; an empty element stays as ""
	 * (the current directory); an element whose DSTs expand to nothing is
	 * dropped; trailing slashes are normalised to one; duplicates within
	 * the list are kept once. */
	size_t cap = 1;
	for (const char *c = list; *c; c++)
		if (strchr(seps, *c))
			cap++;
	char **dirs = arena_calloc(a, cap + 1, sizeof *dirs);
	size_t n = 0;
	const char *s = list;
	for (;;) {
		size_t len = strcspn(s, seps);
		char *elem = arena_strndup(a, s, len);
		char *dir = NULL;
		if (*elem == '\0') {
			dir = elem;
		} else {
			char *exp = expand_dst_in(a, p, l, elem);
			if (exp && *exp) {
				size_t el = strlen(exp);
				while (el > 1 && exp[el - 1] == '/')
					el--;
				dir = arena_printf(a, "%.*s%s", (int)el, exp,
						   (el == 1 && exp[0] == '/') ? "" : "/");
			}
		}
		if (dir) {
			bool dup = false;
			for (size_t i = 0; i < n; i++)
				if (str_eq(dirs[i], dir))
					dup = true;
			if (!dup)
				dirs[n++] = dir;
		}
		if (!s[len])
			break;
		s += len + 1;
	}
	dirs[n] = NULL;
	return dirs;
}

char **split_path_list(struct process *p, const struct lmap *l, const char *list, const char *seps)
{
	return split_path_list_in(p->arena, p, l, list, seps);
}

/* ---- candidate verification (open_verify) ---- */

static uint8_t libc_abi_max(uint16_t machine)
{
	/* LIBC_ABI_MAX from libc-abis: UNIQUE everywhere, IFUNC on x86,
	 * powerpc, sparc and riscv, ABSOLUTE everywhere. */
	switch (machine) {
	case EM_X86_64_: case EM_386_: case EM_PPC64_: case EM_PPC_: case EM_RISCV_:
		return 4;
	}
	return 3;
}

void verify_candidate(struct process *p, const char *path, struct probe *pr, uint64_t *dev,
		      uint64_t *ino)
{
	const struct file_probe *fp = objcache_probe(p->oc, path);
	const struct fs_probe *st = &fp->st;
	pr->path = path;
	pr->err = 0;
	pr->why = NULL;
	if (st->open_err) {
		pr->err = st->open_err;
		if (st->open_err == ENOENT || st->open_err == ENOTDIR)
			pr->outcome = PROBE_MISSING;
		else if (st->open_err == EACCES)
			pr->outcome = PROBE_EACCES;
		else
			pr->outcome = PROBE_STOP_LIST;
		return;
	}
	if (st->kind == FS_FIFO) {
		pr->outcome = PROBE_WOULD_BLOCK;
		pr->why = "a FIFO: the loader's read() would block forever";
		return;
	}
	if (st->kind == FS_DIR) {
		pr->outcome = PROBE_FATAL;
		pr->err = EISDIR;
		pr->why = "cannot read file data: Is a directory";
		return;
	}
	if (st->kind != FS_REGULAR) {
		pr->outcome = PROBE_FATAL;
		pr->why = "cannot read file data";
		return;
	}
	size_t ehdr = p->facts.is64 ? 64 : 52;
	if (st->read_err) {
		pr->outcome = PROBE_FATAL;
		pr->err = st->read_err;
		pr->why = arena_printf(p->arena, "cannot read file data: %s", loader_strerror(st->read_err));
		return;
	}
	if (st->head_len < ehdr) {
		pr->outcome = PROBE_FATAL;
		pr->why = "file too short";
		return;
	}
	const uint8_t *h = fp->head;
	uint8_t want_class = p->facts.is64 ? ELF_CLASS64 : ELF_CLASS32;
	bool big = false;
	uint8_t want_data = big ? ELF_DATA_MSB : ELF_DATA_LSB;
	if (!elf_has_magic(h, st->head_len)) {
		pr->outcome = PROBE_FATAL;
		pr->why = "invalid ELF header";
		return;
	}
	if (h[4] != want_class) {
		pr->outcome = PROBE_WRONG_CLASS;
		pr->err = ENOENT;
		return;
	}
	if (h[5] != want_data) {
		pr->outcome = PROBE_FATAL;
		pr->why = "ELF file data encoding not little-endian";
		return;
	}
	if (h[6] != 1) {
		pr->outcome = PROBE_FATAL;
		pr->why = "ELF file version ident does not match current one";
		return;
	}
	if (h[7] != 0 && h[7] != 3) {
		pr->outcome = PROBE_FATAL;
		pr->why = "ELF file OS ABI invalid";
		return;
	}
	if (!(h[8] == 0 || (h[7] == 3 && h[8] < libc_abi_max(p->facts.machine)))) {
		pr->outcome = PROBE_FATAL;
		pr->why = "ELF file ABI version invalid";
		return;
	}
	for (int i = 9; i < 16; i++)
		if (h[i] != 0) {
			pr->outcome = PROBE_FATAL;
			pr->why = "nonzero padding in e_ident";
			return;
		}
	struct bytes hb = bytes_make(h, st->head_len, big);
	uint16_t type, machine, phentsize, phnum;
	uint32_t version;
	uint64_t phoff;
	bytes_u16(&hb, 16, &type);
	bytes_u16(&hb, 18, &machine);
	bytes_u32(&hb, 20, &version);
	if (p->facts.is64) {
		bytes_u64(&hb, 32, &phoff);
		bytes_u16(&hb, 54, &phentsize);
		bytes_u16(&hb, 56, &phnum);
	} else {
		uint32_t v;
		bytes_u32(&hb, 28, &v);
		phoff = v;
		bytes_u16(&hb, 42, &phentsize);
		bytes_u16(&hb, 44, &phnum);
	}
	if (version != 1) {
		pr->outcome = PROBE_FATAL;
		pr->why = "ELF file version does not match current one";
		return;
	}
	if (machine != p->facts.machine) {
		pr->outcome = PROBE_WRONG_MACHINE;
		pr->err = ENOENT;
		return;
	}
	if (type != ET_DYN_ && type != ET_EXEC_) {
		pr->outcome = PROBE_FATAL;
		pr->why = "only ET_DYN and ET_EXEC can be loaded";
		return;
	}
	if (phentsize != (p->facts.is64 ? 56 : 32)) {
		pr->outcome = PROBE_FATAL;
		pr->why = "ELF file's phentsize not the expected size";
		return;
	}
	uint64_t need = phoff + (uint64_t)phnum * phentsize;
	if (need < phoff || need > st->size) {
		pr->outcome = PROBE_FATAL;
		pr->why = "cannot read file data";
		return;
	}
	pr->outcome = PROBE_OK;
	*dev = st->dev;
	*ino = st->ino;
}

/* ---- the search ---- */

struct search_state {
	struct process *p;
	struct lmap *loader;
	const char *name;
	struct search_result *r;
	struct search_trace *trace;
	int cur_errno;
	size_t probes;
	bool stop;		/* a fatal candidate ended the whole search */
};

static struct search_step *new_step(struct search_state *s, enum found_how src, const char *owner,
				    const char *list, const char *skipped)
{
	struct search_trace *t = s->trace;
	if ((t->nstep & (t->nstep - 1)) == 0) {
		size_t cap = t->nstep ? t->nstep * 2 : 4;
		t->step = arena_grow(s->p->arena, t->step, t->nstep, cap, sizeof *t->step);
	}
	struct search_step *st = &t->step[t->nstep++];
	memset(st, 0, sizeof *st);
	st->source = src;
	st->owner = owner;
	st->list = list;
	st->skipped = skipped;
	return st;
}

/* Records a probe in the trace; past the cap it is evaluated but not kept. */
static void keep_probe(struct search_state *s, struct search_step *st, const struct probe *pr)
{
	if (s->probes >= MAX_TRACE_PROBES)
		return;
	if ((st->nprobe & (st->nprobe - 1)) == 0) {
		size_t cap = st->nprobe ? st->nprobe * 2 : 8;
		st->probe = arena_grow(s->p->arena, st->probe, st->nprobe, cap, sizeof *st->probe);
	}
	s->probes++;
	st->probe[st->nprobe++] = *pr;
}

static void fail_fatal(struct search_state *s, const struct probe *pr)
{
	s->stop = true;
	s->r->ok = false;
	s->r->fail = pr->outcome == PROBE_WOULD_BLOCK ? FAIL_WOULD_BLOCK : FAIL_INVALID;
	s->r->fail_path = pr->path;
	s->r->fail_msg = pr->why;
	s->r->fail_err = pr->err;
}

/* One candidate: true when found (or when the search must stop). */
static bool try_candidate(struct search_state *s, struct search_step *st, const char *path,
			  enum found_how how, const struct lmap *via)
{
	struct probe probe;
	const struct probe *pr = &probe;
	uint64_t dev = 0, ino = 0;
	verify_candidate(s->p, path, &probe, &dev, &ino);
	keep_probe(s, st, &probe);
	switch (pr->outcome) {
	case PROBE_OK:
		s->r->ok = true;
		s->r->how = how;
		s->r->realname = path;
		s->r->via = via;
		return true;
	case PROBE_FATAL:
	case PROBE_WOULD_BLOCK:
		fail_fatal(s, pr);
		return true;
	case PROBE_WRONG_CLASS:
		s->r->other_class = true;
		s->cur_errno = ENOENT;
		return false;
	case PROBE_WRONG_MACHINE:
		s->cur_errno = ENOENT;
		return false;
	default:
		s->cur_errno = pr->err;
		return false;
	}
}

/* open_path over one list of directories.  True when found or stopped.
 * glibc remembers, per directory and hwcaps subdirectory, whether it
 * exists; a subdirectory known not to exist is skipped without a probe,
 * which matters only for the errno the final message shows. */
static bool try_list(struct search_state *s, struct search_step *st, char **dirs,
		     enum found_how how, const struct lmap *via)
{
	struct process *p = s->p;
	for (size_t d = 0; dirs[d]; d++) {
		bool here_any = false;
		bool relative = dirs[d][0] != '/';
		for (size_t c = 0; c < p->facts.ncapstr; c++) {
			const char *sub = arena_join(p->arena, dirs[d], "", p->facts.capstr[c]);
			const char *path = arena_join(p->arena, sub, "", s->name);
			void *status = relative ? MAP_YES : strmap_get(&p->dirstatus, sub);
			if (status == MAP_NO) {
				struct probe pr = { path, PROBE_MISSING, ENOENT, NULL };
				keep_probe(s, st, &pr);
				continue;
			}
			if (try_candidate(s, st, path, how, via)) {
				if (s->r->ok && !status)
					strmap_put(p->arena, &p->dirstatus, sub, MAP_YES);
				return true;
			}
			if (!status) {
				/* first failure in this directory: glibc stat()s it */
				size_t sl = strlen(sub);
				char *dir = arena_strndup(p->arena, sub, sl > 1 ? sl - 1 : sl);
				bool isdir = objcache_is_dir(p->oc, dir);
				if (!isdir) {
					struct fs_stat fst;
					fs_stat(p->fs, dir, &fst);
					if (fst.kind == FS_MISSING)
						s->cur_errno = fst.err;
				}
				status = isdir ? MAP_YES : MAP_NO;
				strmap_put(p->arena, &p->dirstatus, sub, status);
			}
			here_any |= status != MAP_NO;
		}
		if (here_any && s->cur_errno != ENOENT && s->cur_errno != EACCES) {
			/* open_path gives up on the rest of this list. */
			if (st->nprobe)
				st->probe[st->nprobe - 1].outcome = PROBE_STOP_LIST;
			return false;
		}
	}
	return false;
}

/*
 * An object's DT_RPATH and DT_RUNPATH as folders, split and expanded once
 * for each $ORIGIN it is loaded from (and the DST values in force): every
 * DT_NEEDED of every process that loads it searches them, and TensorFlow's
 * RUNPATHs name a dozen folders each.  In the scan's arena, with the object.
 */
struct path_lists {
	const char *origin, *platform, *dst_lib;
	char **dirs[2];		/* [0] DT_RPATH, [1] DT_RUNPATH; NULL until asked */
	struct path_lists *next;	/* the lists for another $ORIGIN */
};

/* decompose_rpath: an empty RPATH or RUNPATH is ignored, not the current
 * directory (as an empty element within one is). */
static char **rpath_dirs(struct process *p, const struct lmap *l, bool runpath)
{
	const char *list = runpath ? l->obj->elf.runpath : l->obj->elf.rpath;
	if (!list[0])
		return arena_calloc(p->arena, 1, sizeof(char *));
	/* in the object cache's arena: a scan that borrows the objects
	 * (scan_borrow_objects) ends before their owner */
	struct arena *a = p->oc->arena;
	struct path_lists *pl = l->obj->paths;
	while (pl && !(str_same(pl->origin, l->origin) && str_same(pl->platform, p->facts.platform) &&
		       str_same(pl->dst_lib, p->facts.dst_lib)))
		pl = pl->next;
	if (!pl) {
		pl = arena_calloc(a, 1, sizeof *pl);
		pl->origin = l->origin ? arena_strdup(a, l->origin) : NULL;
		pl->platform = p->facts.platform ? arena_strdup(a, p->facts.platform) : NULL;
		pl->dst_lib = p->facts.dst_lib ? arena_strdup(a, p->facts.dst_lib) : NULL;
		pl->next = l->obj->paths;
		l->obj->paths = pl;
	}
	if (!pl->dirs[runpath])
		pl->dirs[runpath] = split_path_list_in(a, p, l, list, ":");
	return pl->dirs[runpath];
}

static bool obj_has(const struct lmap *l, bool runpath)
{
	if (!l || l->obj->kind != OBJ_ELF || !l->obj->elf_ok)
		return false;
	return runpath ? l->obj->elf.runpath != NULL
		       : (l->obj->elf.rpath != NULL && l->obj->elf.runpath == NULL);
}

static uint64_t flags_1_of(const struct lmap *l)
{
	return (l && l->obj->kind == OBJ_ELF && l->obj->elf_ok) ? l->obj->elf.dt_flags_1 : 0;
}

void search_library(struct process *p, struct lmap *loader, const char *name,
		    struct search_result *r)
{
	memset(r, 0, sizeof *r);
	struct search_state s = { .p = p, .loader = loader, .name = name, .r = r,
				  .cur_errno = p->sim_errno };
	s.trace = arena_alloc(p->arena, sizeof *s.trace);
	s.trace->name = arena_strdup(p->arena, name);
	r->trace = s.trace;
	struct lmap *main = p->main;

	/* 1. DT_RPATH of the requester and up its loader chain, then the
	 *    executable's; none of it when the requester has DT_RUNPATH. */
	if (loader && obj_has(loader, true)) {
		new_step(&s, FOUND_RPATH, loader->path, NULL,
			 "not used: the requesting object has RUNPATH");
	} else {
		bool did_main = false;
		for (struct lmap *l = loader; l; l = l->loader) {
			if (!obj_has(l, false))
				continue;
			struct search_step *st = new_step(&s, FOUND_RPATH, l->path, l->obj->elf.rpath, NULL);
			char **dirs = rpath_dirs(p, l, false);
			if (try_list(&s, st, dirs, FOUND_RPATH, l))
				goto done;
			did_main |= l == main;
		}
		if (!did_main && main && obj_has(main, false)) {
			struct search_step *st = new_step(&s, FOUND_RPATH, main->path,
							  main->obj->elf.rpath, NULL);
			char **dirs = rpath_dirs(p, main, false);
			if (try_list(&s, st, dirs, FOUND_RPATH, main))
				goto done;
		}
	}

	/* 2. LD_LIBRARY_PATH */
	if (p->llp && p->llp[0]) {
		struct search_step *st = new_step(&s, FOUND_LD_LIBRARY_PATH, NULL, p->llp_raw, NULL);
		if (try_list(&s, st, p->llp, FOUND_LD_LIBRARY_PATH, NULL))
			goto done;
	} else {
		new_step(&s, FOUND_LD_LIBRARY_PATH, NULL, NULL,
			 p->llp_raw ? "set but empty" : "not set");
	}

	/* 3. DT_RUNPATH of the requester only */
	if (loader && obj_has(loader, true)) {
		struct search_step *st = new_step(&s, FOUND_RUNPATH, loader->path, loader->obj->elf.runpath, NULL);
		char **dirs = rpath_dirs(p, loader, true);
		if (try_list(&s, st, dirs, FOUND_RUNPATH, loader))
			goto done;
	}

	/* 4. ld.so.cache */
	const struct lmap *fl = loader ? loader : main;
	bool nodeflib = flags_1_of(fl) & DF_1_NODEFLIB_;
	{
		const struct diag *cd = &p->facts.cache_diag;
		const char *why = p->facts.has_cache ? NULL
			: !cd->msg[0] ? "no usable ld.so.cache"
			: cd->offset != DIAG_NO_OFFSET
				? arena_printf(p->arena, "no usable ld.so.cache: %s (at offset %llu)", cd->msg,
					       (unsigned long long)cd->offset)
				: arena_printf(p->arena, "no usable ld.so.cache: %s", cd->msg);
		struct search_step *st = new_step(&s, FOUND_CACHE, NULL, p->facts.cache_path, why);
		const char *cached = p->facts.has_cache
			? ldcache_lookup(&p->facts.cache, &p->facts.cache_query, name) : NULL;
		if (cached && nodeflib) {
			for (size_t i = 0; i < p->facts.nsystem_dirs; i++)
				if (str_starts(cached, p->facts.system_dirs[i])) {
					st->skipped = "entry ignored: the requester has DF_1_NODEFLIB";
					cached = NULL;
					break;
				}
		}
		if (cached && try_candidate(&s, st, arena_strdup(p->arena, cached), FOUND_CACHE, NULL))
			goto done;
	}

	/* 5. default directories */
	if (!nodeflib) {
		struct search_step *st = new_step(&s, FOUND_DEFAULT, NULL, NULL, NULL);
		char **dirs = arena_calloc(p->arena, p->facts.nsystem_dirs + 1, sizeof *dirs);
		for (size_t i = 0; i < p->facts.nsystem_dirs; i++)
			dirs[i] = (char *)p->facts.system_dirs[i];
		if (try_list(&s, st, dirs, FOUND_DEFAULT, NULL))
			goto done;
	} else {
		new_step(&s, FOUND_DEFAULT, NULL, NULL, "not used: the requester has DF_1_NODEFLIB");
	}

	r->ok = false;
	r->fail = r->other_class ? FAIL_WRONG_CLASS : FAIL_NOT_FOUND;
	r->err = s.cur_errno;
	p->sim_errno = s.cur_errno;
	return;
done:
	/* open_verify sets errno to 0 after a successful open. */
	p->sim_errno = r->ok ? 0 : s.cur_errno;
	if (!r->ok && s.stop)
		r->err = 0;
}
