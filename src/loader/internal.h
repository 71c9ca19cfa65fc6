/*
 * internal.h: what the loader model's files share and nobody else uses.
 *
 * search.c finds a file for a name (glibc's _dl_map_object search part and
 * open_verify), bind.c looks symbols up (do_lookup_x, check_match),
 * process.c ties them into start-up and dlopen.
 */
#ifndef ABISCOPE_LOADER_INTERNAL_H
#define ABISCOPE_LOADER_INTERNAL_H

#include "loader/process.h"

/* Result of searching for one name. */
struct search_result {
	enum found_how how;
	const char *realname;		/* the path to open (l_name) */
	const struct lmap *via;
	struct search_trace *trace;
	/* failure */
	enum failure_kind fail;
	const char *fail_path;		/* the candidate that stopped the search */
	const char *fail_msg;		/* its message ("invalid ELF header") */
	int fail_err;			/* the errno in that message, 0 if none */
	int err;			/* errno for "cannot open shared object file" */
	bool other_class;
	bool ok;
};

/* Searches for name on behalf of loader (NULL: the main program). */
void search_library(struct process *p, struct lmap *loader, const char *name,
		    struct search_result *r);

/* Expands $ORIGIN, $LIB, $PLATFORM in s for object l; NULL when a known
 * DST cannot be substituted (the element is then dropped). */
char *expand_dst(struct process *p, const struct lmap *l, const char *s);

/* Splits a path list into directories, glibc style (see fillin_rpath). */
char **split_path_list(struct process *p, const struct lmap *l, const char *list, const char *seps);

/* Verifies one candidate the way open_verify does. */
void verify_candidate(struct process *p, const char *path, struct probe *pr, uint64_t *dev,
		      uint64_t *ino);

/* strerror text as glibc's message would show it. */
const char *loader_strerror(int err);

/* Symbol lookup (bind.c). */
struct lookup_version {
	const char *name;
	uint32_t hash;
	bool hidden;
	const char *filename;
};

struct lookup_result {
	struct lmap *map;
	uint32_t symidx;
	bool assert_crash;	/* glibc <= 2.40 would abort in check_match */
	bool assumed;		/* not found, but map's exports are unknown (a partial
				 * snapshot object): taken as defined there, a guess */
	/* with assumed: the walk of an object's hash chains gave up before
	 * their end (elf_file.long_walk_left), that object's path; NULL for a
	 * snapshot's partial object */
	const char *gave_up_in;
	/* the lookup's walk of map's tables reads outside its memory (or
	 * divides by a zero bucket count): the process dies there */
	bool fault;
	int fault_signal;
	const char *fault_what;		/* "DT_GNU_HASH's bloom filter", ... */
	uint64_t fault_at;
};

bool lookup_symbol(struct process *p, struct lmap *requester, const char *name, uint32_t gnu_hash,
		   const struct lookup_version *ver, uint8_t lookup_class, struct lmap **const *scopes,
		   const size_t *scope_n, size_t nscopes, struct lookup_result *res);

bool name_matches_map(const struct lmap *m, const char *name);

/* The static TLS block (tls.c): the initial blocks of the objects loaded
 * at start-up and the surplus after them; and the block of ef taken from
 * what is left (optional: a TLS descriptor's try, within the optional
 * surplus), false when there is no room. */
void static_tls_layout(struct process *p, struct lmap **maps, size_t n, size_t surplus);
bool static_tls_take(struct process *p, const struct elf_file *ef, bool optional);

/* Links each undefined-symbol failure of item[0..n) to the failure that
 * explains it (causes.c). */
void link_causes(struct process *p, struct failure *item, size_t n);

#endif
