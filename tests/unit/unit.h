/*
 * unit.h: the unit tests' only dependency.  Each check prints a TAP line
 * ("ok - what" / "not ok - what" with the file, line and the values that
 * differ); unit_done() returns the exit status.  tests/run.sh counts the
 * lines.
 */
#ifndef ABISCOPE_UNIT_H
#define ABISCOPE_UNIT_H

#include "core/common.h"
#include <inttypes.h>

static int unit_failed, unit_passed;

static inline void unit_report(bool ok, const char *what, const char *file, int line,
			       const char *detail)
{
	if (ok) {
		unit_passed++;
		printf("ok - %s\n", what);
	} else {
		unit_failed++;
		printf("not ok - %s\n#   %s:%d%s%s\n", what, file, line, detail ? ": " : "",
		       detail ? detail : "");
	}
}

#define CHECK(cond, what) unit_report((cond), (what), __FILE__, __LINE__, #cond)

/* A step that prepares a test, not a test: counted by no one, and a failure
 * stops the program (tests/run.sh counts a suite that dies as a failure). */
#define SETUP(cond, what)                                                                     \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			printf("Bail out! setup failed: %s (%s:%d)\n", (what), __FILE__, __LINE__); \
			exit(2);                                                              \
		}                                                                             \
	} while (0)

#define CHECK_INT(got, want, what)                                                           \
	do {                                                                                  \
		int64_t g_ = (int64_t)(got), w_ = (int64_t)(want);                            \
		char d_[128];                                                                 \
		snprintf(d_, sizeof d_, "got %" PRId64 ", want %" PRId64, g_, w_);            \
		unit_report(g_ == w_, (what), __FILE__, __LINE__, d_);                        \
	} while (0)

#define CHECK_STR(got, want, what)                                                           \
	do {                                                                                  \
		const char *g_ = (got), *w_ = (want);                                         \
		char d_[1100];                                                                 \
		snprintf(d_, sizeof d_, "got \"%s\", want \"%s\"", g_ ? g_ : "(null)",        \
			 w_ ? w_ : "(null)");                                                  \
		unit_report((g_ && w_ && strcmp(g_, w_) == 0) || (!g_ && !w_), (what),         \
			    __FILE__, __LINE__, d_);                                            \
	} while (0)

static inline int unit_done(void)
{
	printf("# %d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
