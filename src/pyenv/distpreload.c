#include "pyenv/distpreload.h"

#include <jansson.h>

/* The first file of d's RECORD named name, as importlib.metadata's
 * file.locate() gives it (the site folder joined with the row). */
static const char *recorded_file(struct scan *s, const struct dist *d, const char *name)
{
	for (size_t i = 0; i < d->nfile; i++) {
		if (!str_eq(path_basename(d->file[i].rel), name))
			continue;
		char buf[DIST_PATH_MAX];
		return arena_strdup(&s->arena, dist_file_path(d, &d->file[i], buf, sizeof buf));
	}
	return NULL;
}

enum dist_preload_list dist_preloads(struct scan *s, const struct distset *ds, const char *dir,
				     struct dist_preload *out, size_t max, size_t *n)
{
	char *text = NULL;
	size_t len;
	struct diag d;
	diag_clear(&d);
	json_t *root = NULL;
	enum dist_preload_list got = DIST_PRELOAD_UNREADABLE;
	*n = 0;
	const char *path = arena_printf(&s->arena, "%s/%s", dir, DIST_PRELOAD_FILE);
	if (fs_kind_of(&s->fs, path) == FS_MISSING) {
		got = DIST_PRELOAD_ABSENT;
		goto out;
	}
	if (!ds || fs_read_small(&s->fs, path, DIST_PRELOAD_TEXT, &text, &len, &d) != ST_OK)
		goto out;
	json_error_t err;
	root = json_loadb(text, len, 0, &err);
	json_t *list = json_object_get(root, "preload-library");
	if (!json_is_array(list))
		goto out;
	if (json_array_size(list) > max || json_array_size(list) > DIST_PRELOAD_MAX)
		goto out;	/* entries past the cap: what they do is not known */
	got = DIST_PRELOAD_READ;
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *e = json_array_get(list, i);
		const char *package = json_string_value(json_object_get(e, "package"));
		const char *library = json_string_value(json_object_get(e, "library"));
		if (!package || !library) {
			got = DIST_PRELOAD_UNREADABLE;	/* the loader's target["package"] raises */
			break;
		}
		const struct dist *owner = strmap_get(&ds->by_norm, dist_normalize(&s->arena, package));
		out[*n].package = arena_strdup(&s->arena, package);
		out[*n].library = arena_strdup(&s->arena, library);
		out[*n].installed = owner != NULL;
		out[*n].path = owner && *library && !strchr(library, '/') ? recorded_file(s, owner, library) : NULL;
		(*n)++;
	}
out:
	json_decref(root);
	free(text);
	return got;
}
