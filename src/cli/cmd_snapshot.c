/*
 * cmd_snapshot.c: `abiscope snapshot` - describe this host and one of its
 * environments in one file, for `check --host`, `diff` and `fleet` elsewhere.
 */
#include "cli/cli.h"

#include <errno.h>
#include "host/snapshot.h"
#include "pyenv/check.h"

#include <sys/stat.h>

struct snapshot_cli {
	const char *env, *out, *label, *python, *root;
	bool full, no_driver, json, names;
};

static int parse(int argc, char **argv, struct snapshot_cli *o)
{
	struct args a;
	enum arg_kind k;
	bool err = false;
	const char *v;
	args_init(&a, argc, argv, "snapshot");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND) {
			if (o->env)
				return usage_error("snapshot", "one environment at a time (run it once per environment)");
			o->env = a.value;
		} else if (arg_is(&a, "--full")) {
			o->full = true;
		} else if (arg_is(&a, "--lean")) {
			o->full = false;
		} else if (arg_is(&a, "--names")) {
			o->names = true;
		} else if (arg_is(&a, "--no-driver")) {
			o->no_driver = true;
		} else if (arg_value(&a, "--output", &v, &err)) {
			o->out = v;
		} else if (arg_value(&a, "--label", &v, &err)) {
			o->label = v;
		} else if (arg_value(&a, "--python", &v, &err)) {
			o->python = v;
		}
	}
	if (k != ARG_END)
		return args_status(k);
	o->json = a.common.json;
	o->root = a.common.root;
	return 0;
}

/* JSON on standard output for "-", else a file (gzip when it ends in .gz);
 * *bytes is the file's size, -1 on standard output. */
static enum status write_snapshot(const struct snapshot *snap, const char *out, long long *bytes,
				  struct diag *d)
{
	size_t len;
	char *text = snapshot_to_json(snap, &len);
	if (!text)
		return diag_set(d, ST_LIMIT, out, DIAG_NO_OFFSET, "out of memory writing the snapshot");
	enum status st = ST_OK;
	size_t n = strlen(out);
	if (str_eq(out, "-")) {
		if (fwrite(text, 1, len, stdout) != len || fputc('\n', stdout) == EOF)
			st = diag_errno(d, out, errno, "cannot write");
	} else {
		st = fs_write_output(out, text, len, n > 3 && str_eq(out + n - 3, ".gz"), bytes, d);
	}
	free(text);
	return st;
}

int cmd_snapshot(int argc, char **argv)
{
	struct snapshot_cli o;
	memset(&o, 0, sizeof o);
	/* Every library ld.so.cache lists is described in full by default: a
	 * binary of another host may need one this host's environment never
	 * loads (torchvision for CUDA 13 needs libcudart.so.13, which only the
	 * system has), and by name only its exports are unknown (a guess). */
	o.full = true;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	struct scan s;
	scan_init(&s, o.root);
	struct capture_options co = {
		.python = o.python, .full = o.full, .no_driver = o.no_driver, .names = o.names,
		.label = o.label, .path_env = getenv("PATH"), .virtual_env = getenv("VIRTUAL_ENV"),
		.conda_prefix = getenv("CONDA_PREFIX"),
	};
	struct snapshot snap;
	struct env_check c;
	struct diag d;
	diag_clear(&d);
	int code = EXIT_OK;
	if (snapshot_capture(&s, o.env, &co, &snap, &c, &d) != ST_OK) {
		fprintf(stderr, "abiscope snapshot: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
		code = d.status == ST_NOT_FOUND ? EXIT_USAGE : EXIT_UNREADABLE;
		goto out;
	}
	snap.abiscope = ABISCOPE_VERSION;
	const char *out = o.out;
	if (!out)
		out = arena_printf(&s.arena, "abiscope-snapshot-%s.json.gz",
				   snap.label ? snap.label : snap.hostname ? snap.hostname : "host");
	long long bytes = -1;
	if (write_snapshot(&snap, out, &bytes, &d) != ST_OK) {
		fprintf(stderr, "abiscope snapshot: %s: %s\n", d.path, d.msg);
		code = EXIT_UNREADABLE;
		goto out;
	}
	size_t nelf = 0, npartial = 0, ntext = 0;
	for (size_t i = 0; i < snap.nfiles; i++) {
		if (snap.files[i].type == SNAP_ELF) {
			nelf++;
			npartial += snap.files[i].elf->partial;
		}
		ntext += snap.files[i].type == SNAP_TEXT;
	}
	FILE *tty = str_eq(out, "-") ? stderr : stdout;
	if (o.json) {
		struct jw w;
		jw_init(&w, tty);
		jw_obj_begin(&w);
		jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
		jw_kstr(&w, "command", "snapshot");
		jw_kstr(&w, "file", out);
		jw_kint(&w, "bytes", bytes);
		jw_kstr(&w, "host", snap.label);
		jw_kstr(&w, "environment", snap.env_root);
		jw_kint(&w, "files", (int64_t)snap.nfiles);
		jw_kint(&w, "elf_objects", (int64_t)nelf);
		jw_kint(&w, "described_by_name_only", (int64_t)npartial);
		jw_kint(&w, "distributions", (int64_t)snap.ndists);
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		fprintf(tty, "snapshot of %s: %s %s", snap.label ? snap.label : "this host",
			snap.env_kind ? snap.env_kind : "environment", snap.env_root ? snap.env_root : "");
		if (snap.torch_version)
			fprintf(tty, ", torch %s", snap.torch_version);
		fprintf(tty, ", glibc %d.%d", snap.glibc_major, snap.glibc_minor);
		if (snap.driver)
			fprintf(tty, ", driver %s", snap.driver);
		fprintf(tty, "\n  %zu files: %zu ELF objects (%zu by name only), %zu text files; %zu distributions\n",
			snap.nfiles, nelf, npartial, ntext, snap.ndists);
		if (bytes >= 0)
			fprintf(tty, "  written to %s (%.1f MB)\n", out, (double)bytes / 1e6);
	}
out:
	scan_release(&s);
	return code;
}
