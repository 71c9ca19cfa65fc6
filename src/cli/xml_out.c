#include "cli/xml_out.h"

#include "core/common.h"
#include "core/utf8.h"

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

void xml_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	for (size_t i = 0; i < n;) {
		switch (p[i]) {
		case '&': fputs("&amp;", out); i++; continue;
		case '<': fputs("&lt;", out); i++; continue;
		case '>': fputs("&gt;", out); i++; continue;
		case '"': fputs("&quot;", out); i++; continue;
		case '\'': fputs("&apos;", out); i++; continue;
		default: break;
		}
		uint32_t cp;
		size_t len = utf8_seq(p + i, n - i, &cp);
		bool xml_char = len && (cp >= 0x20 || cp == '\t' || cp == '\n' || cp == '\r') && cp != 0xfffe &&
				cp != 0xffff;
		if (xml_char)
			fwrite(p + i, 1, len, out);
		else
			fputs(REPLACEMENT, out);
		i += len ? len : 1;
	}
}
