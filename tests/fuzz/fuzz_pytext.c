/* libFuzzer target: every text parser of the Python-environment side:
 * RECORD, METADATA, pyvenv.cfg, torch's __init__/version/_utils_internal,
 * and pasted error messages. */
#include "pyenv/dist.h"
#include "pyenv/explain.h"
#include "pyenv/importctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	/* the parsers that take NUL-terminated text get a terminated copy */
	char *text = arena_strndup(&a, (const char *)data, size);
	struct dist d;
	memset(&d, 0, sizeof d);
	record_parse(&a, "/site", (const char *)data, size, &d);
	struct dist rel;	/* rows kept relative to the site, as dists_load keeps them */
	memset(&rel, 0, sizeof rel);
	rel.site = "/site";
	record_parse(&a, "/site", (const char *)data, size, &rel);
	char buf[DIST_PATH_MAX];
	for (size_t i = 0; i < rel.nfile; i++)
		(void)dist_file_path(&rel, &rel.file[i], buf, sizeof buf);
	metadata_parse(&a, (const char *)data, size, &d);
	(void)pyvenv_cfg_value(&a, text, "home");
	(void)pyvenv_cfg_value(&a, text, "version");
	struct torch_layout t;
	memset(&t, 0, sizeof t);
	torch_source_parse(&a, text, text, text, &t);
	struct error_facts f;
	explain_parse(&a, (const char *)data, size, &f);
	arena_release(&a);
	return 0;
}
