/*
 * exports.h: what an object exports, gathered once per scan, for the
 * near-miss search.
 *
 * A torch environment has libraries with 100k and more exported symbols,
 * so nothing here demangles or sorts: cxx_exports_of() makes one pass over
 * the dynamic symbol table of an object the first time a search needs it
 * and keeps a flat array of its exported names (pointers into the file
 * mapping, no copies, one allocation per object).  Each mangled name
 * records where its name body starts: after "_Z", the special-symbol
 * prefix (TV vtable, TI typeinfo, TS typeinfo name, TT VTT, TH/TW TLS
 * helpers, GV guard variable), "N" and the cv/ref qualifiers of a nested
 * name.  A query is then a prefix or substring test over the bodies:
 *
 *   cxx_exports_prefix(x, "3c104cuda", ...)   everything in c10::cuda
 *   cxx_exports_containing(x, "9SetDevice", ...) every name with that identifier
 *
 * Prefix queries that name at least two tokens scan one bucket (names are
 * bucketed by their first two length-prefixed tokens, the only parsing of
 * mangled text done here); others scan the whole list.
 *
 * The mangled prefix of a scope is produced from a parsed demangled name
 * by cxx_mangled_prefix() (mangling plain identifiers is length + text;
 * anything else ends the prefix early and the caller filters the matches
 * by their demangled names).
 *
 * Everything lives in the index's arena; the objects' mappings must
 * outlive it (they belong to the scan's object cache).
 */
#ifndef ABISCOPE_CXX_EXPORTS_H
#define ABISCOPE_CXX_EXPORTS_H

#include "core/hashmap.h"
#include "cxx/signature.h"
#include "elf/object.h"

struct cxx_export {
	const char *name;	/* NUL-terminated, inside the object's .dynstr */
	uint32_t symidx;
	uint32_t body;		/* offset of the name body; 0 for a C name */
	uint16_t versym;	/* raw version index (0 when none) */
	bool mangled;
};

struct cxx_exports {
	const struct object *obj;
	struct cxx_export *e;
	size_t n;
	size_t nmangled;
	/* Prefix queries: the mangled names bucketed by their first two name
	 * tokens ("3c10" "4cuda"), so a query that names both scans one
	 * bucket.  bucket_item[bucket_start[b] .. bucket_start[b + 1]). */
	uint32_t *bucket_start;
	uint32_t *bucket_item;
	uint32_t nbucket;	/* a power of two, or 0 */
	/* For substring queries, built on first use: the bodies of the mangled
	 * names one after another ('\n' between), and where each starts, so
	 * that one memmem over one buffer replaces one call per name. */
	char *blob;
	size_t blob_len;
	uint32_t *blob_start;	/* ascending offsets into blob */
	uint32_t *blob_export;	/* the export each of them belongs to */
	bool blob_done;
	/* how many cxx_exports_containing calls it had in the index's round
	 * queries_round (cxx_exports_substring_queries) */
	size_t substring_queries;
	unsigned queries_round;
};

struct cxx_index {
	struct arena *a;
	struct idmap by_id;	/* (dev, ino), or (~0, address) outside the cache -> struct cxx_exports */
	/* "<exports>:<prefix>" -> the exports that match, in index order: the
	 * same few prefixes are asked of the same objects for every failing
	 * symbol of every process (55,800 queries, 12,500 distinct, on a
	 * serving stack's --libraries) */
	struct strmap prefix_hits;
	/* a symbol searched for -> its demangled text and signature, parsed
	 * once (nearmiss.c: the same symbol fails in process after process) */
	struct strmap wanted;
	/* (wanted symbol, exports) -> the near misses of the same name the
	 * exports hold (nearmiss.c's same_name): a function of the symbol and
	 * the file only, and asked again for each process that misses the
	 * symbol (2,656 searches, 343 symbols, on a serving stack's
	 * --libraries) */
	struct idmap same_name_hits;
	/* a torch folder -> its struct torch_identity, or MAP_NO when it is no
	 * torch (diagnose/verdict.c): identified once, however many failures
	 * it explains; what it says depends on the folder's files alone */
	struct strmap torch_ids;
	size_t objects, symbols;	/* statistics */
	/* A later check of the same files shares the index (what it holds
	 * depends on the files alone) and starts a round: the per-object
	 * budgets (nearmiss.h's NM_MAX_SUBSTRING) are each round's own, so a
	 * check's explanations do not depend on what an earlier one asked. */
	unsigned round;
};

void cxx_index_init(struct cxx_index *ix, struct arena *a);
/* Another check of the same files goes on with ix: budgets start afresh. */
void cxx_index_new_round(struct cxx_index *ix);
/* The exports of o, gathered on first use.  Never NULL (empty for non-ELF). */
struct cxx_exports *cxx_exports_of(struct cxx_index *ix, const struct object *o);

/* Called for each match; return false to stop. */
typedef bool (*cxx_export_fn)(void *ctx, const struct cxx_export *e);

/* Mangled names whose body starts with prefix[0..len), in the exports'
 * order.  Returns how many matched (all of them when fn is NULL; up to the
 * stop otherwise).  Which ones match is remembered per exports and prefix. */
size_t cxx_exports_prefix(struct cxx_index *ix, const struct cxx_exports *x, const char *prefix, size_t len,
			  cxx_export_fn fn, void *ctx);
/* How many mangled names of o start with prefix (cxx_exports_prefix
 * without a callback). */
size_t cxx_exports_count(struct cxx_index *ix, const struct object *o, const char *prefix, size_t len);
/* How many cxx_exports_containing calls x had in ix's current round. */
size_t cxx_exports_substring_queries(const struct cxx_index *ix, const struct cxx_exports *x);
/* Mangled names whose body contains token[0..len), each reported once. */
size_t cxx_exports_containing(struct cxx_index *ix, struct cxx_exports *x, const char *token, size_t len,
			      cxx_export_fn fn, void *ctx);
/* Plain (C) names that start with prefix[0..len). */
size_t cxx_exports_c_prefix(const struct cxx_exports *x, const char *prefix, size_t len,
			    cxx_export_fn fn, void *ctx);

/* The body offset of a mangled name ("_ZNK3c10..." -> 4), 0 if not mangled. */
uint32_t cxx_mangled_body(const char *name);

/*
 * The mangled body prefix of the first nparts parts of s ("c10", "cuda"
 * -> "3c104cuda"), written to out.  *exact is false when a part could not
 * be mangled as a plain identifier (template arguments, operators...): the
 * prefix then stops at that part's identifier and matches a superset.
 * Returns the length, 0 when nothing could be produced.
 */
size_t cxx_mangled_prefix(const struct cxx_sig *s, size_t nparts, char *out, size_t outsz, bool *exact);

/* What the loader could bind to: defined, global, weak or unique, visible. */
bool cxx_sym_exported(const struct elf_sym *s);

/* The version name an export carries, or NULL. */
const char *cxx_export_version(const struct object *o, const struct cxx_export *e);

#endif
