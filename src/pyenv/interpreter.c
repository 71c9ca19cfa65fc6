#include "pyenv/interpreter.h"

#include <limits.h>

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define MAX_SCRIPT 65536

bool file_is_elf(const struct fsview *fs, const char *path)
{
	struct fs_probe pr;
	uint8_t head[4];
	fs_probe(fs, path, head, sizeof head, &pr);
	return pr.kind == FS_REGULAR && pr.head_len == 4 && head[0] == 0x7f && head[1] == 'E' &&
	       head[2] == 'L' && head[3] == 'F';
}

static bool is_executable_file(const struct fsview *fs, const char *path)
{
	struct fs_stat st;
	fs_stat(fs, path, &st);
	return st.kind == FS_REGULAR && (st.mode & 0111);
}

/* The first executable named name on path_env after skip_dir (if given). */
static const char *path_lookup(struct arena *a, const struct fsview *fs, const char *name,
			       const char *path_env, const char *skip_dir)
{
	const char *p = path_env;
	bool skipping = skip_dir != NULL;
	while (*p) {
		size_t n = strcspn(p, ":");
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%.*s", (int)n, n ? p : ".");
		if (skipping) {
			if (str_eq(dir, skip_dir))
				skipping = false;
		} else {
			char cand[PATH_MAX];
			path_join(dir, name, cand, sizeof cand);
			if (is_executable_file(fs, cand))
				return arena_strdup(a, cand);
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return NULL;
}

/* Reads the first line of a small text file into out, trimmed. */
static bool read_first_line(const struct fsview *fs, const char *path, char *out, size_t outsz)
{
	char *buf;
	size_t len;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(fs, path, 4096, &buf, &len, &d) != ST_OK)
		return false;
	size_t n = strcspn(buf, "\r\n");
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	const char *s = buf;
	while (*s == ' ' || *s == '\t') {
		s++;
		n--;
	}
	snprintf(out, outsz, "%.*s", (int)n, s);
	free(buf);
	return out[0] != '\0';
}

/* pyenv's version selection, without running pyenv. */
static const char *pyenv_version_of(struct arena *a, const struct fsview *fs, const char *root,
				    const char *env_version, const char **source)
{
	char line[256];
	if (env_version && *env_version) {
		*source = "PYENV_VERSION";
		size_t n = strcspn(env_version, ":");
		return arena_strndup(a, env_version, n);
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", fs->cwd);
	for (;;) {
		char f[PATH_MAX];
		path_join(dir, ".python-version", f, sizeof f);
		if (read_first_line(fs, f, line, sizeof line)) {
			*source = arena_strdup(a, f);
			size_t n = strcspn(line, ": \t");
			return arena_strndup(a, line, n);
		}
		if (str_eq(dir, "/"))
			break;
		char up[PATH_MAX];
		path_dirname(dir, up, sizeof up);
		snprintf(dir, sizeof dir, "%s", up);
	}
	char g[PATH_MAX];
	path_join(root, "version", g, sizeof g);
	if (read_first_line(fs, g, line, sizeof line)) {
		*source = arena_strdup(a, g);
		size_t n = strcspn(line, ": \t");
		return arena_strndup(a, line, n);
	}
	*source = "default";
	return "system";
}

/* The value of `export PYENV_ROOT="..."` in a shim, if present. */
static const char *shim_root(struct arena *a, const char *script)
{
	const char *k = strstr(script, "PYENV_ROOT=\"");
	if (!k)
		return NULL;
	k += strlen("PYENV_ROOT=\"");
	size_t n = strcspn(k, "\"");
	return arena_strndup(a, k, n);
}

/* An absolute path to a python executable mentioned in a wrapper script. */
static const char *wrapped_python(struct arena *a, const struct fsview *fs, const char *script)
{
	for (const char *p = script; (p = strchr(p, '/')) != NULL; p++) {
		if (p > script && p[-1] != '"' && p[-1] != '\'' && p[-1] != ' ' && p[-1] != '\n' &&
		    p[-1] != '=' && p[-1] != '!')
			continue;
		size_t n = strcspn(p, "\"' \t\n;");
		char cand[PATH_MAX];
		snprintf(cand, sizeof cand, "%.*s", (int)n, p);
		if (strstr(path_basename(cand), "python") && file_is_elf(fs, cand))
			return arena_strdup(a, cand);
	}
	return NULL;
}

void interp_resolve(struct arena *a, const struct fsview *fs, const char *name_or_path,
		    const char *path_env, const char *pyenv_version, const char *pyenv_root,
		    struct interp_result *r)
{
	memset(r, 0, sizeof *r);
	if (!path_env || !*path_env)
		path_env = DEFAULT_PATH;
	const char *found = strchr(name_or_path, '/') ? name_or_path
						       : path_lookup(a, fs, name_or_path, path_env, NULL);
	if (!found) {
		r->problem = arena_printf(a, "no %s on PATH; pass --process /path/to/python", name_or_path);
		return;
	}
	struct fs_stat st;
	fs_stat(fs, found, &st);
	if (st.kind != FS_REGULAR) {
		r->problem = arena_printf(a, "%s is not a file; pass --process /path/to/python", found);
		return;
	}
	if (file_is_elf(fs, found)) {
		r->path = arena_strdup(a, found);
		r->how = strchr(name_or_path, '/') ? "as given" : arena_printf(a, "%s on PATH", name_or_path);
		return;
	}
	char *script;
	size_t len;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(fs, found, MAX_SCRIPT, &script, &len, &d) != ST_OK) {
		r->problem = arena_printf(a, "%s is not an ELF executable and cannot be read (%s); pass "
					  "--process /path/to/the/real/python", found, d.msg);
		return;
	}
	r->via = arena_strdup(a, found);
	r->read[r->nread++] = r->via;
	if (strstr(script, "pyenv") && strstr(script, "exec")) {
		char shims[PATH_MAX], guessed_root[PATH_MAX];
		path_dirname(found, shims, sizeof shims);
		path_dirname(shims, guessed_root, sizeof guessed_root);
		const char *root = pyenv_root && *pyenv_root ? pyenv_root : shim_root(a, script);
		if (!root)
			root = arena_strdup(a, guessed_root);
		const char *source;
		const char *ver = pyenv_version_of(a, fs, root, pyenv_version, &source);
		if (source[0] == '/')
			r->read[r->nread++] = source;
		const char *program = path_basename(found);
		if (str_eq(ver, "system")) {
			const char *sys = path_lookup(a, fs, program, path_env, shims);
			if (sys && file_is_elf(fs, sys)) {
				r->path = sys;
				r->how = arena_printf(a, "pyenv shim %s, version \"system\" (%s)", found, source);
			} else {
				r->problem = arena_printf(a, "%s is a pyenv shim for the system python, which "
							  "was not found; pass --process", found);
			}
		} else {
			char cand[PATH_MAX];
			snprintf(cand, sizeof cand, "%s/versions/%s/bin/%s", root, ver, program);
			if (file_is_elf(fs, cand)) {
				r->path = arena_strdup(a, cand);
				r->how = arena_printf(a, "pyenv shim %s, version %s (from %s)", found, ver, source);
			} else {
				r->problem = arena_printf(a, "%s is a pyenv shim for version %s (from %s), but %s "
							  "is not an ELF executable; pass --process", found, ver,
							  source, cand);
			}
		}
		free(script);
		return;
	}
	const char *inner = wrapped_python(a, fs, script);
	free(script);
	if (inner) {
		r->path = inner;
		r->how = arena_printf(a, "wrapper script %s runs %s", found, inner);
		return;
	}
	r->problem = arena_printf(a, "%s is a script, not the interpreter, and abiscope cannot tell "
				  "which python it runs; pass --process /path/to/the/real/python", found);
}
