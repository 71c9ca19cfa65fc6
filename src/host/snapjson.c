/*
 * snapjson.c: the snapshot file format (docs/snapshot.md), through jansson.
 *
 * Writing builds one JSON document; exports are packed 12-byte records
 * (hash, versym, info, flags, little-endian) in base64, the only dense part.
 * Reading validates every member's type and range before use: a snapshot is
 * input from another machine, so anything malformed is an error naming the
 * file and the member (or jansson's line and column), never a crash.  A gzip
 * file (magic 1f 8b) is inflated with zlib up to SNAPSHOT_MAX_BYTES, and a
 * document of more than SNAPSHOT_MAX_VALUES values is refused unparsed.
 */
#include "host/snapshot.h"
#include "host/compare.h"
#include "cuda/arch.h"
#include "core/sha256.h"

#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <zlib.h>

/* Bounds on what is read (see src_open): 5x the largest real snapshot. */
#define SNAPSHOT_MAX_BYTES ((size_t)256 << 20)
#define SNAPSHOT_MAX_VALUES 8000000u
/* The summary sits at the start and takes ~100 kB for 700 objects: the
 * prefix searched for it stops at 4 MiB (and so does its parse's memory). */
#define SUMMARY_MAX_BYTES ((size_t)4 << 20)
#define EXPORT_RECORD 12

/* ---- writing ---- */

static json_t *jbase64(const uint8_t *p, size_t n);

/* A name: a JSON string, or {"bytes": base64} when it is not UTF-8 (file
 * names are bytes; JSON strings are Unicode). */
static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *v = json_string(s);
	if (v)
		return v;
	json_t *o = json_object();
	json_object_set_new(o, "bytes", jbase64((const uint8_t *)s, strlen(s)));
	return o;
}

static json_t *jstrings(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, jstr(v[i]));
	return a;
}

static json_t *jbase64(const uint8_t *p, size_t n)
{
	size_t cap = 4 * ((n + 2) / 3) + 1;
	char *buf = malloc(cap);
	if (!buf)
		return json_null();
	base64_encode(p, n, buf, false);
	json_t *s = json_string(buf);
	free(buf);
	return s;
}

static json_t *elf_json(const struct snap_elf *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "endian", json_string(e->big_endian ? "big" : "little"));
	json_object_set_new(o, "machine", json_integer(e->machine));
	json_object_set_new(o, "type", json_integer(e->type));
	json_object_set_new(o, "osabi", json_integer(e->osabi));
	json_object_set_new(o, "abiversion", json_integer(e->abiversion));
	json_object_set_new(o, "e_flags", json_integer(e->e_flags));
	json_object_set_new(o, "flags", json_integer((json_int_t)e->dt_flags));
	json_object_set_new(o, "flags_1", json_integer((json_int_t)e->dt_flags_1));
	json_object_set_new(o, "bind_now", json_boolean(e->bind_now));
	if (e->nhead)
		json_object_set_new(o, "head", jbase64(e->head, e->nhead));
	if (e->has_gnu_stack)
		json_object_set_new(o, "gnu_stack", json_integer(e->stack_flags));
	if (e->tls_memsz)
		json_object_set_new(o, "tls", json_pack("[II]", (json_int_t)e->tls_memsz, (json_int_t)e->tls_align));
	if (e->soname)
		json_object_set_new(o, "soname", jstr(e->soname));
	if (e->rpath)
		json_object_set_new(o, "rpath", jstr(e->rpath));
	if (e->runpath)
		json_object_set_new(o, "runpath", jstr(e->runpath));
	if (e->interp)
		json_object_set_new(o, "interp", jstr(e->interp));
	json_object_set_new(o, "needed", jstrings(e->needed, e->nneeded));
	if (e->nfilter)
		json_object_set_new(o, "filter", jstrings(e->filter, e->nfilter));
	if (e->nauxiliary)
		json_object_set_new(o, "auxiliary", jstrings(e->auxiliary, e->nauxiliary));
	json_t *vd = json_array();
	for (size_t i = 0; i < e->nverdef; i++)
		json_array_append_new(vd, json_pack("[iio]", e->verdef[i].ndx, e->verdef[i].flags,
						    jstr(e->verdef[i].name)));
	json_object_set_new(o, "verdef", vd);
	json_t *vn = json_array();
	for (size_t i = 0; i < e->nverneed; i++) {
		json_t *aux = json_array();
		for (size_t j = 0; j < e->verneed[i].naux; j++) {
			const struct snap_vernaux *x = &e->verneed[i].aux[j];
			json_array_append_new(aux, json_pack("[oii]", jstr(x->name), x->flags, x->other));
		}
		json_array_append_new(vn, json_pack("[oo]", jstr(e->verneed[i].file), aux));
	}
	json_object_set_new(o, "verneed", vn);
	if (e->cache_only && !e->partial)
		json_object_set_new(o, "cache_only", json_true());
	if (e->partial) {
		json_object_set_new(o, "partial", json_true());
	} else {
		uint8_t *packed = malloc(e->nexports * EXPORT_RECORD + 1);
		if (packed) {
			for (size_t i = 0; i < e->nexports; i++) {
				uint8_t *p = packed + i * EXPORT_RECORD;
				for (int k = 0; k < 8; k++)
					p[k] = (uint8_t)(e->exports[i].hash >> (8 * k));
				p[8] = (uint8_t)e->exports[i].versym;
				p[9] = (uint8_t)(e->exports[i].versym >> 8);
				p[10] = e->exports[i].info;
				p[11] = e->exports[i].flags;
			}
			json_object_set_new(o, "exports", jbase64(packed, e->nexports * EXPORT_RECORD));
			free(packed);
		}
		if (e->nnamed)
			json_object_set_new(o, "named", jstrings(e->named, e->nnamed));
		if (e->export_names)
			json_object_set_new(o, "export_names", jstrings(e->export_names, e->nexports));
		json_t *refs = json_array();
		for (size_t i = 0; i < e->nrefs; i++) {
			const struct snap_ref *r = &e->refs[i];
			json_array_append_new(refs, json_pack("[oiii]", jstr(r->name), r->versym, r->lookup_class,
							      r->flags));
		}
		json_object_set_new(o, "refs", refs);
	}
	if (e->cuda)
		json_object_set_new(o, "cuda", jstr(e->cuda));
	if (e->cuda_runtime)
		json_object_set_new(o, "cuda_runtime", json_integer(e->cuda_runtime));
	if (e->loader_fault)
		json_object_set_new(o, "loader_fault", jstr(e->loader_fault));
	return o;
}

static const char *type_name(enum snap_file_type t)
{
	switch (t) {
	case SNAP_ELF: return "elf";
	case SNAP_LINK: return "link";
	case SNAP_TEXT: return "text";
	case SNAP_HEAD: return "head";
	case SNAP_DIR: return "dir";
	case SNAP_SAME: return "same";
	}
	return "head";
}

static json_t *file_json(const struct snap_file *f)
{
	json_t *o = json_object();
	json_object_set_new(o, "path", jstr(f->path));
	json_object_set_new(o, "type", json_string(type_name(f->type)));
	switch (f->type) {
	case SNAP_LINK:
	case SNAP_SAME:
		json_object_set_new(o, "target", jstr(f->target));
		break;
	case SNAP_DIR:
		if (f->listed)
			json_object_set_new(o, "children", jstrings(f->children, f->nchildren));
		break;
	case SNAP_TEXT: {
		json_t *t = json_stringn((const char *)f->bytes, f->nbytes);
		if (t)
			json_object_set_new(o, "text", t);
		else
			json_object_set_new(o, "b64", jbase64(f->bytes, f->nbytes));
		break;
	}
	case SNAP_HEAD:
		json_object_set_new(o, "size", json_integer((json_int_t)f->size));
		json_object_set_new(o, "b64", jbase64(f->bytes, f->nbytes));
		break;
	case SNAP_ELF:
		json_object_set_new(o, "size", json_integer((json_int_t)f->size));
		json_object_set_new(o, "elf", elf_json(f->elf));
		break;
	}
	return o;
}

const char *snapshot_machine(const struct snapshot *s)
{
	if (s->uname_machine)
		return s->uname_machine;
	switch (s->machine) {
	case 0:
	case EM_X86_64_: return "x86_64";
	case EM_AARCH64_: return "aarch64";
	}
	return elf_machine_name(s->machine);
}

const char *snapshot_gpus_text(struct arena *a, const struct snapshot *s)
{
	const char *out = "";
	for (size_t i = 0; i < s->ngpus; i++) {
		char cc[16];
		cuda_cc_string(s->gpus[i].cc, cc, sizeof cc);
		out = arena_printf(a, "%s%s%s %s", out, i ? ", " : "", cc, s->gpus[i].name ? s->gpus[i].name : "");
	}
	return out;
}

/* What a fleet compares (snapshot.h struct snap_summary). */
static json_t *summary_json(const struct snapshot *s)
{
	json_t *o = json_object();
	char buf[1024];
	struct arena a;	/* scratch: freed before returning */
	arena_init(&a);
	json_object_set_new(o, "label", jstr(s->label));
	snprintf(buf, sizeof buf, "%d.%d", s->glibc_major, s->glibc_minor);
	json_object_set_new(o, "glibc", json_string(buf));
	json_object_set_new(o, "driver", jstr(s->driver));
	json_object_set_new(o, "gpus", json_string(snapshot_gpus_text(&a, s)));
	if (s->py_major) {
		snprintf(buf, sizeof buf, "%d.%d", s->py_major, s->py_minor);
		json_object_set_new(o, "python", json_string(buf));
	}
	json_object_set_new(o, "torch", jstr(s->torch_version));
	json_object_set_new(o, "hwcaps", jstr(s->nhwcaps_active ? s->hwcaps_active[0] : NULL));
	json_object_set_new(o, "machine", json_string(snapshot_machine(s)));
	if (s->page_size) {
		snprintf(buf, sizeof buf, "%u", s->page_size);
		json_object_set_new(o, "page_size", json_string(buf));
	}
	json_t *dists = json_object();
	for (size_t i = 0; i < s->ndists; i++) {
		const char *name = s->dists[i].name ? s->dists[i].name : "?";
		json_t *have = json_object_get(dists, name);
		const char *v = s->dists[i].version ? s->dists[i].version : "?";
		if (have) {
			char both[512];
			snprintf(both, sizeof both, "%s and %s", json_string_value(have), v);
			json_object_set_new(dists, name, json_string(both));
		} else {
			json_object_set_new(dists, name, json_string(v));
		}
	}
	json_object_set_new(o, "dists", dists);
	json_t *objs = json_object();
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct snap_file *f = &s->files[i];
		if (f->type != SNAP_ELF || !f->elf || f->elf->cache_only)
			continue;
		const char *key = host_object_key(&a, s, f->path);
		if (!str_starts(key, "site/") && !str_starts(key, "env/"))
			continue;
		snprintf(buf, sizeof buf, "%016llx", (unsigned long long)host_elf_digest(f->elf));
		json_object_set_new(objs, key, json_string(buf));
	}
	arena_release(&a);
	json_object_set_new(o, "objects", objs);
	json_object_set_new(o, "failing", jstrings(s->failing, s->nfailing));
	return o;
}

static json_t *snapshot_json(const struct snapshot *s)
{
	json_t *root = json_object();
	json_object_set_new(root, "format", json_string(SNAPSHOT_FORMAT));
	json_object_set_new(root, "version", json_integer(SNAPSHOT_VERSION));
	json_object_set_new(root, "created", jstr(s->created));
	json_object_set_new(root, "abiscope", jstr(s->abiscope));
	json_object_set_new(root, "hostname", jstr(s->hostname));
	json_object_set_new(root, "label", jstr(s->label));
	json_object_set_new(root, "kernel", jstr(s->kernel));
	if (s->uname_machine)
		json_object_set_new(root, "machine", json_string(s->uname_machine));
	json_object_set_new(root, "summary", summary_json(s));

	json_t *ld = json_object();
	json_object_set_new(ld, "interp", jstr(s->interp));
	json_object_set_new(ld, "glibc", json_pack("[ii]", s->glibc_major, s->glibc_minor));
	json_object_set_new(ld, "machine", json_integer(s->machine));
	json_object_set_new(ld, "system_dirs", jstrings(s->system_dirs, s->nsystem_dirs));
	json_object_set_new(ld, "lib", jstr(s->dst_lib));
	json_object_set_new(ld, "platform", jstr(s->platform));
	json_object_set_new(ld, "capstr", jstrings(s->capstr, s->ncapstr));
	json_object_set_new(ld, "hwcaps", jstrings(s->hwcaps_active, s->nhwcaps_active));
	json_object_set_new(ld, "isa_1", json_integer(s->isa_1));
	if (s->hwcap_known) {
		json_object_set_new(ld, "hwcap", json_integer((json_int_t)s->hwcap));
		json_object_set_new(ld, "hwcap2", json_integer((json_int_t)s->hwcap2));
	}
	if (s->page_size)
		json_object_set_new(ld, "page_size", json_integer(s->page_size));
	json_object_set_new(ld, "notes", jstrings(s->notes, s->nnotes));
	if (s->has_cache) {
		json_t *c = json_object();
		const struct ldcache_query *q = &s->cache_query;
		json_object_set_new(c, "path", jstr(s->cache_path));
		json_object_set_new(c, "generator", jstr(s->cache_generator));
		json_object_set_new(c, "hwcaps", jstrings(s->cache_hwcaps, s->ncache_hwcaps));
		json_object_set_new(c, "query", json_pack("{s:i,s:b,s:b,s:I,s:I,s:I,s:i}",
			"expected_flags", q->expected_flags, "any_elf_flag", q->any_elf_flag,
			"legacy_hwcaps", q->legacy_hwcaps, "hwcap_exclude", (json_int_t)q->hwcap_exclude,
			"platform_mask", (json_int_t)q->platform_mask, "platform_bit", (json_int_t)q->platform_bit,
			"isa_1", q->isa_1));
		json_t *ents = json_array();
		for (size_t i = 0; i < s->ncache; i++)
			json_array_append_new(ents, json_pack("[iooI]", s->cache[i].flags, jstr(s->cache[i].key),
							      jstr(s->cache[i].value), (json_int_t)s->cache[i].hwcap));
		json_object_set_new(c, "entries", ents);
		json_object_set_new(ld, "cache", c);
	}
	json_object_set_new(root, "loader", ld);

	json_t *cuda = json_object();
	json_object_set_new(cuda, "driver", jstr(s->driver));
	json_object_set_new(cuda, "driver_cuda", json_integer(s->driver_cuda));
	json_t *gpus = json_array();
	for (size_t i = 0; i < s->ngpus; i++)
		json_array_append_new(gpus, json_pack("{s:i,s:o}", "cc", s->gpus[i].cc, "name", jstr(s->gpus[i].name)));
	json_object_set_new(cuda, "gpus", gpus);
	json_object_set_new(root, "cuda", cuda);

	json_t *env = json_object();
	json_object_set_new(env, "kind", jstr(s->env_kind));
	json_object_set_new(env, "root", jstr(s->env_root));
	json_object_set_new(env, "python", jstr(s->python));
	json_object_set_new(env, "py", json_pack("[ii]", s->py_major, s->py_minor));
	json_object_set_new(env, "ext_suffix", jstr(s->ext_suffix));
	json_object_set_new(env, "site", jstrings(s->site, s->nsite));
	json_object_set_new(env, "torch", json_pack("{s:o,s:o}", "version", jstr(s->torch_version), "cuda",
						    jstr(s->torch_cuda)));
	json_t *dists = json_array();
	for (size_t i = 0; i < s->ndists; i++)
		json_array_append_new(dists, json_pack("[oooo]", jstr(s->dists[i].name), jstr(s->dists[i].version),
						       jstr(s->dists[i].installer), jstr(s->dists[i].meta)));
	json_object_set_new(env, "dists", dists);
	json_object_set_new(env, "failing", jstrings(s->failing, s->nfailing));
	json_object_set_new(root, "env", env);

	json_t *files = json_array();
	for (size_t i = 0; i < s->nfiles; i++)
		json_array_append_new(files, file_json(&s->files[i]));
	json_object_set_new(root, "files", files);
	return root;
}

char *snapshot_to_json(const struct snapshot *snap, size_t *len)
{
	json_t *root = snapshot_json(snap);
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	*len = text ? strlen(text) : 0;
	return text;
}

/* ---- reading ---- */

struct reader {
	struct arena *a;
	const char *name;
	struct diag *d;
	bool failed;
};

static void bad(struct reader *r, const char *where, const char *what)
{
	if (!r->failed)
		diag_set(r->d, ST_MALFORMED, r->name, DIAG_NO_OFFSET, "snapshot member %s: %s", where, what);
	r->failed = true;
}

static uint8_t *decode_b64(struct reader *r, const char *text, size_t len, size_t *out_len, const char *where);

/* A string as jstr() writes it (see there); NULL and *ok false when v is neither. */
static const char *name_of(struct reader *r, json_t *v, bool *ok, const char *where)
{
	*ok = true;
	if (json_is_string(v))
		return arena_strndup(r->a, json_string_value(v), json_string_length(v));
	json_t *b = json_is_object(v) && json_object_size(v) == 1 ? json_object_get(v, "bytes") : NULL;
	if (!b || !json_is_string(b)) {
		*ok = false;
		return NULL;
	}
	size_t n;
	uint8_t *bytes = decode_b64(r, json_string_value(b), json_string_length(b), &n, where);
	if (!bytes)
		return NULL;
	if (memchr(bytes, 0, n)) {
		bad(r, where, "a name holds a NUL byte");
		return NULL;
	}
	bytes[n] = 0;
	return (const char *)bytes;
}

static const char *get_str(struct reader *r, json_t *o, const char *key, const char *where)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return NULL;
	bool ok;
	const char *out = name_of(r, v, &ok, where);
	if (!ok)
		bad(r, where, arena_printf(r->a, "\"%s\" is not a string", key));
	return out;
}

static int64_t get_int(struct reader *r, json_t *o, const char *key, int64_t lo, int64_t hi,
		       const char *where)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		bad(r, where, arena_printf(r->a, "\"%s\" is not an integer in range", key));
		return 0;
	}
	return json_integer_value(v);
}

static int64_t item_int(struct reader *r, json_t *a, size_t i, int64_t lo, int64_t hi, const char *where)
{
	json_t *v = json_array_get(a, i);
	if (!v || !json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		bad(r, where, "an integer is missing or out of range");
		return 0;
	}
	return json_integer_value(v);
}

static const char *item_str(struct reader *r, json_t *a, size_t i, const char *where)
{
	json_t *v = json_array_get(a, i);
	if (v && json_is_null(v))
		return NULL;
	bool ok = v != NULL;
	const char *out = v ? name_of(r, v, &ok, where) : NULL;
	if (!ok)
		bad(r, where, "a string is missing");
	return out;
}

static const char **get_strings(struct reader *r, json_t *o, const char *key, size_t *n, const char *where)
{
	*n = 0;
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_array(v)) {
		bad(r, where, arena_printf(r->a, "\"%s\" is not a list", key));
		return NULL;
	}
	size_t len = json_array_size(v);
	const char **out = arena_calloc(r->a, len ? len : 1, sizeof *out);
	for (size_t i = 0; i < len; i++) {
		bool ok;
		out[i] = name_of(r, json_array_get(v, i), &ok, where);
		if (!ok) {
			bad(r, where, arena_printf(r->a, "\"%s\" holds a non-string", key));
			return NULL;
		}
		if (!out[i])
			return NULL;
	}
	*n = len;
	return out;
}

static bool get_bool(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static uint8_t *decode_b64(struct reader *r, const char *text, size_t len, size_t *out_len, const char *where)
{
	*out_len = 0;
	if (len % 4 || len > INT32_MAX) {
		bad(r, where, "base64 of a length not a multiple of 4");
		return NULL;
	}
	uint8_t *out = arena_alloc(r->a, len / 4 * 3 + 1);
	if (!base64_decode(text, len, out, out_len)) {
		bad(r, where, "invalid base64");
		return NULL;
	}
	return out;
}

static struct snap_elf *parse_elf(struct reader *r, json_t *o, const char *where)
{
	if (!json_is_object(o)) {
		bad(r, where, "\"elf\" is not an object");
		return NULL;
	}
	struct snap_elf *e = arena_calloc(r->a, 1, sizeof *e);
	const char *endian = get_str(r, o, "endian", where);
	e->big_endian = endian && str_eq(endian, "big");
	e->machine = (uint16_t)get_int(r, o, "machine", 0, 0xffff, where);
	e->type = (uint16_t)get_int(r, o, "type", 0, 0xffff, where);
	e->osabi = (uint8_t)get_int(r, o, "osabi", 0, 255, where);
	e->abiversion = (uint8_t)get_int(r, o, "abiversion", 0, 255, where);
	e->e_flags = (uint32_t)get_int(r, o, "e_flags", 0, UINT32_MAX, where);
	e->dt_flags = (uint64_t)get_int(r, o, "flags", 0, INT64_MAX, where);
	e->dt_flags_1 = (uint64_t)get_int(r, o, "flags_1", 0, INT64_MAX, where);
	e->bind_now = get_bool(o, "bind_now");
	json_t *hd = json_object_get(o, "head");
	if (hd) {
		size_t hl;
		if (!json_is_string(hd)) {
			bad(r, where, "\"head\" is not base64 text");
			return NULL;
		}
		e->head = decode_b64(r, json_string_value(hd), json_string_length(hd), &hl, where);
		if (!e->head || hl > 64) {
			bad(r, where, "\"head\" is not up to 64 bytes");
			return NULL;
		}
		e->nhead = hl;
	}
	json_t *gs = json_object_get(o, "gnu_stack");
	if (gs && !json_is_null(gs)) {
		e->has_gnu_stack = true;
		e->stack_flags = (uint32_t)get_int(r, o, "gnu_stack", 0, UINT32_MAX, where);
	}
	json_t *tls = json_object_get(o, "tls");
	if (tls) {
		if (!json_is_array(tls) || json_array_size(tls) != 2) {
			bad(r, where, "\"tls\" is not [memsz, align]");
			return NULL;
		}
		e->tls_memsz = (uint64_t)item_int(r, tls, 0, 0, INT64_MAX, where);
		e->tls_align = (uint64_t)item_int(r, tls, 1, 0, INT64_MAX, where);
	}
	e->soname = get_str(r, o, "soname", where);
	e->rpath = get_str(r, o, "rpath", where);
	e->runpath = get_str(r, o, "runpath", where);
	e->interp = get_str(r, o, "interp", where);
	e->needed = get_strings(r, o, "needed", &e->nneeded, where);
	e->filter = get_strings(r, o, "filter", &e->nfilter, where);
	e->auxiliary = get_strings(r, o, "auxiliary", &e->nauxiliary, where);
	json_t *vd = json_object_get(o, "verdef");
	if (vd && json_is_array(vd)) {
		size_t n = json_array_size(vd);
		e->verdef = arena_calloc(r->a, n ? n : 1, sizeof *e->verdef);
		for (size_t i = 0; i < n && !r->failed; i++) {
			json_t *it = json_array_get(vd, i);
			if (!json_is_array(it)) {
				bad(r, where, "a verdef entry is not a list");
				break;
			}
			e->verdef[i].ndx = (uint16_t)item_int(r, it, 0, 0, VERSYM_INDEX_, where);
			e->verdef[i].flags = (uint16_t)item_int(r, it, 1, 0, 0xffff, where);
			e->verdef[i].name = item_str(r, it, 2, where);
		}
		e->nverdef = n;
	}
	json_t *vn = json_object_get(o, "verneed");
	if (vn && json_is_array(vn)) {
		size_t n = json_array_size(vn);
		e->verneed = arena_calloc(r->a, n ? n : 1, sizeof *e->verneed);
		for (size_t i = 0; i < n && !r->failed; i++) {
			json_t *it = json_array_get(vn, i);
			json_t *aux = json_array_get(it, 1);
			if (!json_is_array(it) || !json_is_array(aux)) {
				bad(r, where, "a verneed entry is not [file, [aux...]]");
				break;
			}
			struct snap_verneed *v = &e->verneed[i];
			v->file = item_str(r, it, 0, where);
			v->naux = json_array_size(aux);
			v->aux = arena_calloc(r->a, v->naux ? v->naux : 1, sizeof *v->aux);
			for (size_t j = 0; j < v->naux && !r->failed; j++) {
				json_t *x = json_array_get(aux, j);
				if (!json_is_array(x)) {
					bad(r, where, "a vernaux entry is not a list");
					break;
				}
				v->aux[j].name = item_str(r, x, 0, where);
				v->aux[j].flags = (uint16_t)item_int(r, x, 1, 0, 0xffff, where);
				v->aux[j].other = (uint16_t)item_int(r, x, 2, 0, 0xffff, where);
			}
		}
		e->nverneed = n;
	}
	e->partial = get_bool(o, "partial");
	e->cache_only = e->partial || get_bool(o, "cache_only");
	json_t *ex = json_object_get(o, "exports");
	if (ex && !e->partial) {
		if (!json_is_string(ex)) {
			bad(r, where, "\"exports\" is not base64 text");
			return NULL;
		}
		size_t blen;
		uint8_t *b = decode_b64(r, json_string_value(ex), json_string_length(ex), &blen, where);
		if (!b)
			return NULL;
		if (blen % EXPORT_RECORD) {
			bad(r, where, "\"exports\" is not a whole number of records");
			return NULL;
		}
		e->nexports = blen / EXPORT_RECORD;
		e->exports = arena_calloc(r->a, e->nexports ? e->nexports : 1, sizeof *e->exports);
		for (size_t i = 0; i < e->nexports; i++) {
			const uint8_t *p = b + i * EXPORT_RECORD;
			uint64_t h = 0;
			for (int k = 7; k >= 0; k--)
				h = h << 8 | p[k];
			e->exports[i].hash = h;
			e->exports[i].versym = (uint16_t)(p[8] | p[9] << 8);
			e->exports[i].info = p[10];
			e->exports[i].flags = p[11];
		}
	}
	e->named = get_strings(r, o, "named", &e->nnamed, where);
	size_t nnames = 0;
	const char **names = get_strings(r, o, "export_names", &nnames, where);
	if (names && nnames != e->nexports) {
		bad(r, where, "\"export_names\" and \"exports\" differ in length");
		return NULL;
	}
	e->export_names = names;
	json_t *refs = json_object_get(o, "refs");
	if (refs && json_is_array(refs) && !e->partial) {
		size_t n = json_array_size(refs);
		e->refs = arena_calloc(r->a, n ? n : 1, sizeof *e->refs);
		for (size_t i = 0; i < n && !r->failed; i++) {
			json_t *it = json_array_get(refs, i);
			if (!json_is_array(it)) {
				bad(r, where, "a reference is not a list");
				break;
			}
			struct snap_ref *x = &e->refs[i];
			x->name = item_str(r, it, 0, where);
			if (!x->name)
				x->name = "";
			x->versym = (uint16_t)item_int(r, it, 1, 0, 0xffff, where);
			x->lookup_class = (uint8_t)item_int(r, it, 2, 0, 3, where);
			x->flags = (uint8_t)item_int(r, it, 3, 0, 15, where);
		}
		e->nrefs = n;
	}
	e->cuda = get_str(r, o, "cuda", where);
	e->cuda_runtime = (int)get_int(r, o, "cuda_runtime", 0, 1000, where);
	e->loader_fault = get_str(r, o, "loader_fault", where);
	struct elf_fault lf;
	if (e->loader_fault && (strchr(e->loader_fault, '\n') || !elf_fault_decode(r->a, e->loader_fault, &lf)))
		bad(r, where, "\"loader_fault\" is not a loader fault record");
	return r->failed ? NULL : e;
}

static bool parse_path(struct reader *r, const char *p, const char *where)
{
	if (!p || p[0] != '/' || strlen(p) >= 4096) {
		bad(r, where, "a path is not absolute");
		return false;
	}
	return true;
}

static void parse_files(struct reader *r, json_t *files, struct snapshot *s)
{
	size_t n = json_array_size(files);
	s->files = arena_calloc(r->a, n ? n : 1, sizeof *s->files);
	for (size_t i = 0; i < n && !r->failed; i++) {
		json_t *o = json_array_get(files, i);
		const char *where = arena_printf(r->a, "files[%zu]", i);
		if (!json_is_object(o)) {
			bad(r, where, "not an object");
			return;
		}
		struct snap_file *f = &s->files[s->nfiles];
		f->path = get_str(r, o, "path", where);
		if (!parse_path(r, f->path, where))
			return;
		char norm[4096];
		path_normalize(f->path, norm, sizeof norm);
		if (!str_eq(norm, f->path)) {
			bad(r, where, "a path is not normalised");
			return;
		}
		const char *type = get_str(r, o, "type", where);
		if (!type) {
			bad(r, where, "no type");
			return;
		}
		f->size = (uint64_t)get_int(r, o, "size", 0, INT64_MAX, where);
		json_t *b64 = json_object_get(o, "b64");
		if (str_eq(type, "link")) {
			f->type = SNAP_LINK;
			f->target = get_str(r, o, "target", where);
			if (!f->target || !f->target[0]) {
				bad(r, where, "a link without a target");
				return;
			}
		} else if (str_eq(type, "same")) {
			f->type = SNAP_SAME;
			f->target = get_str(r, o, "target", where);
			if (!parse_path(r, f->target, where))
				return;
		} else if (str_eq(type, "dir")) {
			f->type = SNAP_DIR;
			json_t *ch = json_object_get(o, "children");
			f->listed = ch != NULL;
			f->children = get_strings(r, o, "children", &f->nchildren, where);
			for (size_t k = 0; k < f->nchildren; k++) {
				const char *c = f->children[k];
				size_t cl = strlen(c);
				bool dir = cl > 1 && c[cl - 1] == '/';
				if (!cl || (dir ? memchr(c, '/', cl - 1) != NULL : strchr(c, '/') != NULL) ||
				    str_eq(c, ".") || str_eq(c, "..") || str_eq(c, "./") || str_eq(c, "../")) {
					bad(r, where, "a directory entry is not a plain name");
					return;
				}
			}
		} else if (str_eq(type, "text") || str_eq(type, "head")) {
			f->type = str_eq(type, "text") ? SNAP_TEXT : SNAP_HEAD;
			json_t *t = json_object_get(o, "text");
			if (t && json_is_string(t)) {
				f->nbytes = json_string_length(t);
				f->bytes = (const uint8_t *)arena_strndup(r->a, json_string_value(t), f->nbytes);
			} else if (b64 && json_is_string(b64)) {
				size_t len;
				f->bytes = decode_b64(r, json_string_value(b64), json_string_length(b64), &len, where);
				f->nbytes = len;
			} else if (f->type == SNAP_TEXT) {
				bad(r, where, "a text file without contents");
				return;
			}
			if (f->type == SNAP_TEXT)
				f->size = f->nbytes;
			if (f->size < f->nbytes)
				f->size = f->nbytes;
		} else if (str_eq(type, "elf")) {
			f->type = SNAP_ELF;
			f->elf = parse_elf(r, json_object_get(o, "elf"), where);
		} else {
			bad(r, where, "unknown file type");
			return;
		}
		if (r->failed)
			return;
		if (strmap_get(&s->by_path, f->path)) {
			bad(r, where, "a path is described twice");
			return;
		}
		strmap_put(r->a, &s->by_path, f->path, f);
		s->nfiles++;
	}
}

enum status snapshot_parse(struct arena *a, const char *text, size_t len, const char *name,
			   struct snapshot *s, struct diag *d)
{
	memset(s, 0, sizeof *s);
	json_error_t err;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (!root)
		return diag_set(d, ST_MALFORMED, name, (uint64_t)err.position,
				"not a snapshot: %s (line %d, column %d)", err.text, err.line, err.column);
	struct reader r = { a, name, d, false };
	enum status st = ST_OK;
	json_t *fmt = json_is_object(root) ? json_object_get(root, "format") : NULL;
	if (!fmt || !json_is_string(fmt) || !str_eq(json_string_value(fmt), SNAPSHOT_FORMAT)) {
		st = diag_set(d, ST_MALFORMED, name, DIAG_NO_OFFSET, "not an abiscope snapshot (no \"format\": \"%s\")",
			      SNAPSHOT_FORMAT);
		goto out;
	}
	s->version = (int)get_int(&r, root, "version", 0, 1000, "version");
	if (s->version != SNAPSHOT_VERSION) {
		st = diag_set(d, ST_UNSUPPORTED, name, DIAG_NO_OFFSET,
			      "snapshot format version %d; this abiscope reads version %d", s->version,
			      SNAPSHOT_VERSION);
		goto out;
	}
	s->created = get_str(&r, root, "created", "created");
	s->abiscope = get_str(&r, root, "abiscope", "abiscope");
	s->hostname = get_str(&r, root, "hostname", "hostname");
	s->label = get_str(&r, root, "label", "label");
	s->kernel = get_str(&r, root, "kernel", "kernel");
	s->uname_machine = get_str(&r, root, "machine", "machine");
	if (s->uname_machine && !s->uname_machine[0])
		bad(&r, "machine", "empty");

	json_t *ld = json_object_get(root, "loader");
	if (!json_is_object(ld)) {
		bad(&r, "loader", "missing");
		goto fail;
	}
	s->interp = get_str(&r, ld, "interp", "loader");
	if (!parse_path(&r, s->interp, "loader.interp"))
		goto fail;
	json_t *g = json_object_get(ld, "glibc");
	if (!json_is_array(g)) {
		bad(&r, "loader.glibc", "not [major, minor]");
		goto fail;
	}
	s->glibc_major = (int)item_int(&r, g, 0, 2, 9, "loader.glibc");
	s->glibc_minor = (int)item_int(&r, g, 1, 0, 999, "loader.glibc");
	s->machine = (uint16_t)get_int(&r, ld, "machine", 0, 0xffff, "loader");
	s->system_dirs = get_strings(&r, ld, "system_dirs", &s->nsystem_dirs, "loader");
	for (size_t i = 0; i < s->nsystem_dirs && !r.failed; i++) {
		size_t n = strlen(s->system_dirs[i]);
		if (s->system_dirs[i][0] != '/' || s->system_dirs[i][n - 1] != '/')
			bad(&r, "loader.system_dirs", "a directory that does not start and end with /");
	}
	if (!s->nsystem_dirs)
		bad(&r, "loader.system_dirs", "empty");
	s->dst_lib = get_str(&r, ld, "lib", "loader");
	s->platform = get_str(&r, ld, "platform", "loader");
	s->capstr = get_strings(&r, ld, "capstr", &s->ncapstr, "loader");
	if (!s->ncapstr) {
		static const char *only_dir[] = { "" };
		s->capstr = only_dir;
		s->ncapstr = 1;
	}
	s->hwcaps_active = get_strings(&r, ld, "hwcaps", &s->nhwcaps_active, "loader");
	s->isa_1 = (uint32_t)get_int(&r, ld, "isa_1", 0, UINT32_MAX, "loader");
	/* from before these fields: hwcaps not known, the page size 4096 */
	s->hwcap_known = json_object_get(ld, "hwcap") != NULL;
	s->hwcap = (uint64_t)get_int(&r, ld, "hwcap", INT64_MIN, INT64_MAX, "loader");
	s->hwcap2 = (uint64_t)get_int(&r, ld, "hwcap2", INT64_MIN, INT64_MAX, "loader");
	s->page_size = (uint32_t)get_int(&r, ld, "page_size", 0, 1 << 30, "loader");
	if (s->page_size && (s->page_size < 1024 || (s->page_size & (s->page_size - 1))))
		bad(&r, "loader.page_size", "not a power of two of 1024 or more");
	s->notes = get_strings(&r, ld, "notes", &s->nnotes, "loader");
	json_t *c = json_object_get(ld, "cache");
	if (c && json_is_object(c)) {
		s->has_cache = true;
		s->cache_path = get_str(&r, c, "path", "loader.cache");
		s->cache_generator = get_str(&r, c, "generator", "loader.cache");
		s->cache_hwcaps = get_strings(&r, c, "hwcaps", &s->ncache_hwcaps, "loader.cache");
		json_t *q = json_object_get(c, "query");
		if (json_is_object(q)) {
			struct ldcache_query *cq = &s->cache_query;
			cq->expected_flags = (int32_t)get_int(&r, q, "expected_flags", INT32_MIN, INT32_MAX, "loader.cache.query");
			cq->any_elf_flag = get_bool(q, "any_elf_flag");
			cq->legacy_hwcaps = get_bool(q, "legacy_hwcaps");
			cq->hwcap_exclude = (uint64_t)get_int(&r, q, "hwcap_exclude", INT64_MIN, INT64_MAX, "loader.cache.query");
			cq->platform_mask = (uint64_t)get_int(&r, q, "platform_mask", INT64_MIN, INT64_MAX, "loader.cache.query");
			cq->platform_bit = (uint64_t)get_int(&r, q, "platform_bit", INT64_MIN, INT64_MAX, "loader.cache.query");
			cq->isa_1 = (uint32_t)get_int(&r, q, "isa_1", 0, UINT32_MAX, "loader.cache.query");
		}
		json_t *ents = json_object_get(c, "entries");
		if (!json_is_array(ents)) {
			bad(&r, "loader.cache.entries", "not a list");
			goto fail;
		}
		size_t n = json_array_size(ents);
		s->cache = arena_calloc(a, n ? n : 1, sizeof *s->cache);
		for (size_t i = 0; i < n && !r.failed; i++) {
			json_t *e = json_array_get(ents, i);
			if (!json_is_array(e)) {
				bad(&r, "loader.cache.entries", "an entry is not a list");
				break;
			}
			struct snap_cache_entry *ce = &s->cache[i];
			ce->flags = (int32_t)item_int(&r, e, 0, INT32_MIN, INT32_MAX, "loader.cache.entries");
			ce->key = item_str(&r, e, 1, "loader.cache.entries");
			ce->value = item_str(&r, e, 2, "loader.cache.entries");
			json_t *hw = json_array_get(e, 3);
			ce->hwcap = hw && json_is_integer(hw) ? (uint64_t)json_integer_value(hw) : 0;
			if (!r.failed && (!ce->key || !ce->value))
				bad(&r, "loader.cache.entries", "an entry without a name or a path");
		}
		s->ncache = n;
	}

	json_t *cu = json_object_get(root, "cuda");
	if (json_is_object(cu)) {
		s->driver = get_str(&r, cu, "driver", "cuda");
		s->driver_cuda = (unsigned)get_int(&r, cu, "driver_cuda", 0, 1000000, "cuda");
		json_t *gp = json_object_get(cu, "gpus");
		if (json_is_array(gp)) {
			size_t n = json_array_size(gp);
			s->gpus = arena_calloc(a, n ? n : 1, sizeof *s->gpus);
			for (size_t i = 0; i < n && !r.failed; i++) {
				json_t *o = json_array_get(gp, i);
				if (!json_is_object(o)) {
					bad(&r, "cuda.gpus", "an entry is not an object");
					break;
				}
				s->gpus[i].cc = (unsigned)get_int(&r, o, "cc", 0, 10000, "cuda.gpus");
				s->gpus[i].name = get_str(&r, o, "name", "cuda.gpus");
			}
			s->ngpus = n;
		}
	}

	json_t *env = json_object_get(root, "env");
	if (json_is_object(env)) {
		s->env_kind = get_str(&r, env, "kind", "env");
		s->env_root = get_str(&r, env, "root", "env");
		s->python = get_str(&r, env, "python", "env");
		s->ext_suffix = get_str(&r, env, "ext_suffix", "env");
		json_t *py = json_object_get(env, "py");
		if (json_is_array(py)) {
			s->py_major = (int)item_int(&r, py, 0, 0, 99, "env.py");
			s->py_minor = (int)item_int(&r, py, 1, 0, 999, "env.py");
		}
		s->site = get_strings(&r, env, "site", &s->nsite, "env");
		json_t *t = json_object_get(env, "torch");
		if (json_is_object(t)) {
			s->torch_version = get_str(&r, t, "version", "env.torch");
			s->torch_cuda = get_str(&r, t, "cuda", "env.torch");
		}
		s->failing = get_strings(&r, env, "failing", &s->nfailing, "env");
		json_t *ds = json_object_get(env, "dists");
		if (json_is_array(ds)) {
			size_t n = json_array_size(ds);
			s->dists = arena_calloc(a, n ? n : 1, sizeof *s->dists);
			for (size_t i = 0; i < n && !r.failed; i++) {
				json_t *o = json_array_get(ds, i);
				if (!json_is_array(o)) {
					bad(&r, "env.dists", "an entry is not a list");
					break;
				}
				s->dists[i].name = item_str(&r, o, 0, "env.dists");
				s->dists[i].version = item_str(&r, o, 1, "env.dists");
				s->dists[i].installer = item_str(&r, o, 2, "env.dists");
				s->dists[i].meta = item_str(&r, o, 3, "env.dists");
				if (!r.failed && !s->dists[i].name)
					bad(&r, "env.dists", "a distribution without a name");
			}
			s->ndists = n;
		}
	}
	json_t *files = json_object_get(root, "files");
	if (!json_is_array(files)) {
		bad(&r, "files", "not a list");
		goto fail;
	}
	parse_files(&r, files, s);
fail:
	if (r.failed)
		st = d->status ? d->status : ST_MALFORMED;
out:
	json_decref(root);
	return st;
}

/*
 * The bytes of a snapshot file: opened through fs.h (a regular file, never
 * blocking: a FIFO named as a snapshot is refused, not waited on), mapped,
 * and inflated when it is gzip.  Inflation stops at the bound: a real
 * snapshot is tens of megabytes, and a few hundred kilobytes of gzip can
 * claim gigabytes.
 */
struct snap_src {
	struct fsview fs;
	struct mapped_file mf;
	bool gz;
	z_stream z;
	bool z_ready, z_end;
};

static enum status src_open(struct snap_src *src, const char *path, struct diag *d)
{
	memset(src, 0, sizeof *src);
	fs_init(&src->fs, NULL);
	enum status st = fs_map(&src->fs, path, &src->mf, d);
	if (st != ST_OK)
		return st;
	src->gz = src->mf.len >= 2 && src->mf.data[0] == 0x1f && src->mf.data[1] == 0x8b;
	if (src->gz) {
		if (inflateInit2(&src->z, 15 + 16) != Z_OK)
			return diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "out of memory (zlib)");
		src->z_ready = true;
		src->z.next_in = (Bytef *)src->mf.data;
		src->z.avail_in = (uInt)MIN(src->mf.len, (size_t)UINT_MAX);
	}
	return ST_OK;
}

static void src_close(struct snap_src *src)
{
	if (src->z_ready)
		inflateEnd(&src->z);
	fs_unmap(&src->mf);
}

/* Inflates into buf[*len, cap); *eof once the data ends. */
static enum status src_inflate(struct snap_src *src, const char *path, char *buf, size_t cap, size_t *len,
			       bool *eof, struct diag *d)
{
	*eof = false;
	while (*len < cap && !src->z_end) {
		if (src->z.avail_in == 0) {
			size_t used = (size_t)(src->z.next_in - src->mf.data);
			if (used >= src->mf.len)
				return diag_set(d, ST_MALFORMED, path, (uint64_t)used, "gzip data is cut short");
			src->z.avail_in = (uInt)MIN(src->mf.len - used, (size_t)UINT_MAX);
		}
		src->z.next_out = (Bytef *)buf + *len;
		src->z.avail_out = (uInt)MIN(cap - *len, (size_t)UINT_MAX);
		int zr = inflate(&src->z, Z_NO_FLUSH);
		*len = (size_t)((char *)src->z.next_out - buf);
		if (zr == Z_STREAM_END) {
			size_t used = (size_t)(src->z.next_in - src->mf.data);
			/* concatenated members, as gzip(1) and gzread() allow */
			if (used + 2 <= src->mf.len && src->mf.data[used] == 0x1f && src->mf.data[used + 1] == 0x8b)
				inflateReset(&src->z);
			else
				src->z_end = true;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			return diag_set(d, ST_MALFORMED, path, (uint64_t)(src->z.next_in - src->mf.data),
					"gzip data is damaged: %s", src->z.msg ? src->z.msg : zError(zr));
		} else if (zr == Z_BUF_ERROR && src->z.avail_in && src->z.avail_out) {
			return diag_set(d, ST_MALFORMED, path, (uint64_t)(src->z.next_in - src->mf.data),
					"gzip data is damaged");
		}
	}
	*eof = src->z_end;
	return ST_OK;
}

/*
 * JSON values in a text (an upper bound: each starts a container or
 * follows a comma), counted without parsing and chunk by chunk as it is
 * inflated; jansson spends about 45 bytes of memory on each value, so the
 * bound on values bounds memory.
 */
struct value_count {
	size_t n;
	bool in_str, escaped;
};

/* Counts text[0, len); false (and the error) as soon as the bound is passed. */
static bool count_values(struct value_count *vc, const char *text, size_t len, const char *path,
			 struct diag *d)
{
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (vc->in_str) {
			if (vc->escaped)
				vc->escaped = false;
			else if (c == '\\')
				vc->escaped = true;
			else if (c == '"')
				vc->in_str = false;
		} else if (c == '"') {
			vc->in_str = true;
		} else if ((c == ',' || c == '[' || c == '{') && ++vc->n > SNAPSHOT_MAX_VALUES) {
			diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET,
				 "more than %u JSON values: a snapshot of the largest environments holds about "
				 "2 million, so this is not one abiscope wrote (refused before parsing, to bound memory)",
				 SNAPSHOT_MAX_VALUES);
			return false;
		}
	}
	return true;
}

static enum status check_values(const char *path, const char *text, size_t len, struct diag *d)
{
	struct value_count vc = { 1, false, false };
	return count_values(&vc, text, len, path, d) ? ST_OK : d->status;
}

static enum status too_large(const char *path, struct diag *d)
{
	return diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET,
			"larger than %zu MiB once inflated: a snapshot of the largest environments is about "
			"50 MiB, so this is not one abiscope wrote", SNAPSHOT_MAX_BYTES >> 20);
}

enum status snapshot_read(struct arena *a, const char *path, struct snapshot *snap, struct diag *d)
{
	struct snap_src src;
	char *buf = NULL;
	struct value_count vc = { 1, false, false };
	enum status st = src_open(&src, path, d);
	if (st != ST_OK)
		goto out;
	const char *text = (const char *)src.mf.data;
	size_t len = src.mf.len;
	if (src.gz) {
		size_t cap = 1 << 20;
		len = 0;
		for (;;) {
			if (!buf || len == cap) {
				if (buf && cap >= SNAPSHOT_MAX_BYTES) {
					st = too_large(path, d);
					goto out;
				}
				if (buf)
					cap *= 2;
				char *nb = realloc(buf, cap);
				if (!nb) {
					st = diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "out of memory");
					goto out;
				}
				buf = nb;
			}
			bool eof;
			size_t before = len;
			st = src_inflate(&src, path, buf, cap, &len, &eof, d);
			if (st != ST_OK)
				goto out;
			if (!count_values(&vc, buf + before, len - before, path, d)) {
				st = d->status;
				goto out;
			}
			if (eof)
				break;
		}
		text = buf;
	} else if (len > SNAPSHOT_MAX_BYTES) {
		st = too_large(path, d);
		goto out;
	} else if (!count_values(&vc, text, len, path, d)) {
		st = d->status;
		goto out;
	}
	st = snapshot_parse(a, text, len, path, snap, d);
out:
	free(buf);
	src_close(&src);
	return st;
}

enum snapshot_file_kind snapshot_file_kind(const char *path)
{
	struct fs_stat fst;
	struct fsview host;
	fs_init(&host, NULL);
	fs_stat(&host, path, &fst);
	if (fst.kind != FS_REGULAR)
		return SNAPSHOT_FILE_NOT;
	struct snap_src src;
	struct diag d;
	diag_clear(&d);
	char head[256];
	size_t len = 0;
	enum snapshot_file_kind kind = SNAPSHOT_FILE_NOT;
	if (src_open(&src, path, &d) != ST_OK)
		goto out;
	if (src.gz) {
		bool eof;
		if (src_inflate(&src, path, head, sizeof head - 1, &len, &eof, &d) != ST_OK)
			goto out;
	} else {
		len = MIN(src.mf.len, sizeof head - 1);
		memcpy(head, src.mf.data, len);
	}
	head[len] = '\0';
	if (strstr(head, "\"" SNAPSHOT_FORMAT "\"")) {
		kind = SNAPSHOT_FILE_YES;
		goto out;
	}
	size_t i = strspn(head, " \t\r\n");
	if (i < len && (strchr("{[\"-0123456789", head[i]) || !strncmp(head + i, "null", 4) ||
			!strncmp(head + i, "true", 4) || !strncmp(head + i, "false", 5)))
		kind = SNAPSHOT_FILE_JSON;
out:
	src_close(&src);
	return kind;
}

bool snapshot_is_file(const char *path)
{
	return snapshot_file_kind(path) == SNAPSHOT_FILE_YES;
}

/* ---- the summary alone ---- */

static int cmp_keys(const void *p, const void *q)
{
	return strcmp(*(const char *const *)p, *(const char *const *)q);
}

static enum status summary_from(struct reader *r, json_t *o, struct snap_summary *sum)
{
	if (!json_is_object(o)) {
		bad(r, "summary", "not an object");
		return ST_MALFORMED;
	}
	sum->label = get_str(r, o, "label", "summary");
	sum->glibc = get_str(r, o, "glibc", "summary");
	sum->driver = get_str(r, o, "driver", "summary");
	sum->gpus = get_str(r, o, "gpus", "summary");
	sum->python = get_str(r, o, "python", "summary");
	sum->torch = get_str(r, o, "torch", "summary");
	sum->hwcaps = get_str(r, o, "hwcaps", "summary");
	sum->machine = get_str(r, o, "machine", "summary");	/* NULL: from before the field */
	sum->page_size = get_str(r, o, "page_size", "summary");
	sum->failing = get_strings(r, o, "failing", &sum->nfailing, "summary");
	json_t *dists = json_object_get(o, "dists");
	json_t *objs = json_object_get(o, "objects");
	if (!json_is_object(dists) || !json_is_object(objs)) {
		bad(r, "summary", "\"dists\" or \"objects\" is not an object");
		return ST_MALFORMED;
	}
	size_t n = json_object_size(dists), k = 0;
	const char **names = arena_calloc(r->a, n ? n : 1, sizeof *names);
	const char *key;
	json_t *val;
	json_object_foreach(dists, key, val) {
		if (!json_is_string(val)) {
			bad(r, "summary.dists", "a version is not a string");
			return ST_MALFORMED;
		}
		names[k++] = arena_strdup(r->a, key);
	}
	sort_items(names, k, sizeof *names, cmp_keys);
	sum->dist_names = names;
	sum->dist_versions = arena_calloc(r->a, k ? k : 1, sizeof *sum->dist_versions);
	for (size_t i = 0; i < k; i++)
		sum->dist_versions[i] = arena_strdup(r->a, json_string_value(json_object_get(dists, names[i])));
	sum->ndists = k;
	n = json_object_size(objs);
	k = 0;
	const char **keys = arena_calloc(r->a, n ? n : 1, sizeof *keys);
	json_object_foreach(objs, key, val) {
		const char *hex = json_is_string(val) ? json_string_value(val) : NULL;
		if (!hex || strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16) {
			bad(r, "summary.objects", "a digest is not 16 hex digits");
			return ST_MALFORMED;
		}
		keys[k++] = arena_strdup(r->a, key);
	}
	sort_items(keys, k, sizeof *keys, cmp_keys);
	sum->object_keys = keys;
	sum->object_digests = arena_calloc(r->a, k ? k : 1, sizeof *sum->object_digests);
	for (size_t i = 0; i < k; i++)
		sum->object_digests[i] = strtoull(json_string_value(json_object_get(objs, keys[i])), NULL, 16);
	sum->nobjects = k;
	return r->failed ? ST_MALFORMED : ST_OK;
}

/* The value of a top-level member the writer puts before the summary
 * (text[0..end)), or NULL.  A key cannot occur raw inside a string value:
 * its quotes would be escaped. */
static json_t *header_member(const char *text, size_t end, const char *key)
{
	const char *at = memmem(text, end, key, strlen(key));
	if (!at)
		return NULL;
	size_t off = (size_t)(at - text) + strlen(key);
	json_error_t err;
	return json_loadb(text + off, end - off, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &err);
}

/* What check --host refuses in the header, fleet refuses too (issue 13
 * item 18): not a snapshot, or of another format version. */
static enum status check_header(const char *text, size_t end, const char *name, struct diag *d)
{
	json_t *fmt = header_member(text, end, "\"format\":");
	json_t *ver = header_member(text, end, "\"version\":");
	enum status st = ST_OK;
	if (!json_is_string(fmt) || !str_eq(json_string_value(fmt), SNAPSHOT_FORMAT))
		st = diag_set(d, ST_MALFORMED, name, DIAG_NO_OFFSET, "not an abiscope snapshot (no \"format\": \"%s\")",
			      SNAPSHOT_FORMAT);
	else if (!json_is_integer(ver) || json_integer_value(ver) != SNAPSHOT_VERSION)
		st = diag_set(d, ST_UNSUPPORTED, name, DIAG_NO_OFFSET,
			      "snapshot format version %lld; this abiscope reads version %d",
			      json_is_integer(ver) ? (long long)json_integer_value(ver) : 0LL, SNAPSHOT_VERSION);
	json_decref(fmt);
	json_decref(ver);
	return st;
}

enum status snapshot_parse_summary(struct arena *a, const char *text, size_t len, const char *name,
				   struct snap_summary *sum, struct diag *d)
{
	memset(sum, 0, sizeof *sum);
	static const char key[] = "\"summary\":";
	const char *at = memmem(text, len, key, sizeof key - 1);
	if (!at)
		return diag_set(d, ST_MALFORMED, name, DIAG_NO_OFFSET, "no \"summary\" (not an abiscope snapshot?)");
	if (check_header(text, (size_t)(at - text), name, d) != ST_OK)
		return d->status;
	size_t off = (size_t)(at - text) + sizeof key - 1;
	json_error_t err;
	json_t *o = json_loadb(text + off, len - off, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &err);
	if (!o)
		return diag_set(d, ST_MALFORMED, name, (uint64_t)off + (uint64_t)err.position,
				"the summary is not JSON: %s", err.text);
	struct reader r = { a, name, d, false };
	enum status st = summary_from(&r, o, sum);
	json_decref(o);
	if (st != ST_OK && !d->status)
		st = diag_set(d, ST_MALFORMED, name, DIAG_NO_OFFSET, "malformed summary");
	return st;
}

/*
 * Inflates only as much of the file as the summary needs: it sits before
 * the loader and the files, so a few hundred kilobytes usually suffice.
 */
enum status snapshot_read_summary(struct arena *a, const char *path, struct snap_summary *sum,
				  struct diag *d)
{
	struct snap_src src;
	char *buf = NULL;
	enum status st = src_open(&src, path, d);
	if (st != ST_OK)
		goto out;
	/* growing prefixes: the summary comes first */
	size_t cap = 256 << 10, len = 0;
	for (;;) {
		const char *text;
		bool eof;
		if (src.gz) {
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				st = diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "out of memory");
				break;
			}
			buf = nb;
			st = src_inflate(&src, path, buf, cap, &len, &eof, d);
			if (st != ST_OK)
				break;
			buf[len] = '\0';
			text = buf;
		} else {
			len = MIN(cap, src.mf.len);
			eof = len == src.mf.len;
			text = (const char *)src.mf.data;
		}
		struct diag tmp;
		diag_clear(&tmp);
		st = check_values(path, text, len, &tmp);
		const char *at = st == ST_OK ? memmem(text, len, "\"summary\":", 10) : NULL;
		if (at && check_header(text, (size_t)(at - text), path, &tmp) != ST_OK) {
			*d = tmp;	/* the header is whole: more text will not mend it */
			st = tmp.status;
			break;
		}
		if (st == ST_OK && snapshot_parse_summary(a, text, len, path, sum, &tmp) == ST_OK)
			break;
		if (eof || st != ST_OK) {
			*d = tmp;
			st = tmp.status ? tmp.status : ST_MALFORMED;
			break;
		}
		if (cap >= SUMMARY_MAX_BYTES) {
			st = diag_set(d, ST_LIMIT, path, (uint64_t)len,
				      "no complete summary in the first %zu bytes (a real one takes a few hundred "
				      "kilobytes at the start)", cap);
			break;
		}
		cap *= 2;
	}
out:
	free(buf);
	src_close(&src);
	return st;
}
