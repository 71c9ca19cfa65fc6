/*
 * termsafe.h: everything abiscope prints reaches the terminal as text.
 *
 * The names abiscope reports come from the files it inspects: a DT_NEEDED
 * of "\e[2J\e[31mEVIL", a module file name holding a newline and a forged
 * verdict line, a snapshot label with an OSC sequence.  Printed raw they
 * would clear the screen, retitle the window or forge output.  Two layers
 * keep that from happening, both here, below every renderer:
 *
 *  - termsafe_install() puts a filter under stdout and stderr: every
 *    control character other than newline and tab, DEL, the C1 controls
 *    and the bidirectional overrides leave as \u00XX (\u202e), and bytes
 *    that are not UTF-8 as \xHH.  JSON output passes unchanged: its
 *    strings never hold those raw (json_out.c escapes them), and \u00XX is
 *    the same character inside a JSON string.  abiscope's own colour
 *    sequences get through because they carry a per-process random mark
 *    (termsafe_mark()) that the filter removes; data cannot forge it.
 *
 *  - The filter cannot tell a newline in a name from the newline that ends
 *    a line, so text renderers pass every name or message that came from
 *    outside through one_line() (\n and \r become the two characters \n).
 *
 * The filter is a stdio cookie stream over the original descriptors;
 * output is flushed at exit as stdio always does.
 */
#ifndef ABISCOPE_TERMSAFE_H
#define ABISCOPE_TERMSAFE_H

#include "core/common.h"

#include <stdio.h>

/* Wraps stdout and stderr.  Call once, first thing in main(). */
void termsafe_install(void);

/* From here on nothing written to stdout reaches the terminal (-qq); a
 * no-op when the filter could not be installed. */
void termsafe_silence_stdout(void);

/* Writes out what stdout still holds and returns the first error writing
 * it met (an errno: ENOSPC on a full disk, EPIPE on a closed pipe), 0 when
 * everything reached the descriptor.  main() turns an error into exit 3:
 * a report that was lost is no answer. */
int termsafe_finish(void);

/* The mark that must follow ESC for the filter to let a sequence through,
 * or "" when the filter is not installed (then nothing is escaped). */
const char *termsafe_mark(void);

/* s itself when it holds no newline or carriage return, else a copy (kept
 * until exit) where each is written as the two characters \n or \r. */
const char *one_line(const char *s);

/* Escapes bytes [p, p+n) as the filter does, writing to out (unfiltered
 * stream); exposed for tests.  Returns the number of bytes consumed: a
 * trailing incomplete UTF-8 sequence or mark is left when !final. */
size_t termsafe_escape(FILE *out, const unsigned char *p, size_t n, bool final);

#endif
