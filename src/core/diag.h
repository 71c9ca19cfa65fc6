/*
 * diag.h: status codes and the diagnostic record the library fills in.
 *
 * Library functions return an enum status; on failure they describe the
 * problem in a caller-owned struct diag: which file, at which byte offset
 * (or DIAG_NO_OFFSET), and a message in the house style (lowercase, the
 * problem first, no trailing period).  The first error wins: once a diag
 * holds an error, later diag_set calls on it are ignored, so the root
 * cause is what the caller sees.
 */
#ifndef ABISCOPE_DIAG_H
#define ABISCOPE_DIAG_H

#include "core/common.h"

enum status {
	ST_OK = 0,
	ST_IO,		/* the file could not be opened, mapped or read */
	ST_NOT_FILE,	/* a directory, FIFO, device or socket */
	ST_MALFORMED,	/* the bytes do not follow the format */
	ST_UNSUPPORTED,	/* well-formed, but not something abiscope handles */
	ST_NOT_FOUND,
	ST_LIMIT,	/* an input-driven limit was hit (size, count, depth) */
};

#define DIAG_NO_OFFSET UINT64_MAX

struct diag {
	enum status status;
	int sys_errno;		/* errno for ST_IO, else 0 */
	uint64_t offset;	/* byte offset of the problem, or DIAG_NO_OFFSET */
	char path[512];
	char msg[256];
};

void diag_clear(struct diag *d);
/* Records the error unless d already holds one.  Returns status. */
enum status diag_set(struct diag *d, enum status status, const char *path, uint64_t offset,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
enum status diag_errno(struct diag *d, const char *path, int err, const char *what);
const char *status_name(enum status s);

#endif
