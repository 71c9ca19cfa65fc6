/* libFuzzer target: the renderers' escapers, fed hostile names (issue 26):
 * the one JSON string escaper (cli/json_out.c) and the one XML text escaper
 * (cli/xml_out.c), both over core/utf8.h.  Each NUL-separated piece of the
 * input is escaped; the JSON must parse (jansson) as one string, the XML
 * must be well-formed character data (valid UTF-8, only XML 1.0 characters,
 * markup only as the five entities), and both must give the input back
 * when it was valid UTF-8 of characters the format carries.  A violation
 * aborts. */
#include "cli/json_out.c"
#include "cli/xml_out.c"

#include <jansson.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Is the input carried unchanged: valid UTF-8 of XML characters (xml), of
 * any character but NUL (json, whose controls come back from their \u). */
static bool carried(const char *s, size_t n, bool xml)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = utf8_seq((const unsigned char *)s + i, n - i, &cp);
		if (!l || (xml && ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe || cp == 0xffff)))
			return false;
		i += l;
	}
	return true;
}

static void check_json(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	jw_write_string(f, s);
	fclose(f);
	json_error_t err;
	json_t *j = json_loadb(buf, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (!j || !json_is_string(j))
		abort();	/* not one JSON string */
	if (carried(s, n, false) && (json_string_length(j) != n || memcmp(json_string_value(j), s, n) != 0))
		abort();	/* valid UTF-8 not given back */
	json_decref(j);
	free(buf);
}

static void check_xml(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	xml_text(f, s);
	fclose(f);
	static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	static const char plain[] = "&<>\"'";
	char *back = malloc(len + 1);
	size_t k = 0;
	for (size_t i = 0; i < len;) {
		const unsigned char *p = (const unsigned char *)buf + i;
		if (*p == '&') {
			size_t e = 0;
			while (e < 5 && strncmp((const char *)p, ents[e], strlen(ents[e])) != 0)
				e++;
			if (e == 5)
				abort();	/* a bare & */
			back[k++] = plain[e];
			i += strlen(ents[e]);
			continue;
		}
		if (*p == '<' || *p == '>' || *p == '"' || *p == '\'')
			abort();	/* markup unescaped */
		uint32_t cp;
		size_t l = utf8_seq(p, len - i, &cp);
		if (!l || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe || cp == 0xffff)
			abort();	/* not UTF-8, or no XML 1.0 character */
		memcpy(back + k, p, l);
		k += l;
		i += l;
	}
	if (carried(s, n, true) && (k != n || memcmp(back, s, n) != 0))
		abort();	/* valid text not given back */
	free(back);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i <= size;) {
		size_t n = strlen(text + i);
		check_json(text + i, n);
		check_xml(text + i, n);
		i += n + 1;
	}
	free(text);
	return 0;
}
