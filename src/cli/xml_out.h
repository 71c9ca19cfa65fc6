/*
 * xml_out.h: the one XML text escaper of the renderers (JUnit, junit.c).
 *
 * xml_text() writes s as XML 1.0 character data or attribute value, always
 * well-formed whatever the bytes: & < > " ' as entities; a byte that starts
 * no valid UTF-8 sequence (a METADATA Name or DT_NEEDED in Latin-1), and a
 * character XML 1.0 cannot carry (the C0 controls other than tab, newline
 * and carriage return; U+FFFE, U+FFFF), as U+FFFD.  NULL writes nothing.
 */
#ifndef ABISCOPE_CLI_XML_OUT_H
#define ABISCOPE_CLI_XML_OUT_H

#include <stdio.h>

void xml_text(FILE *out, const char *s);

#endif
