#include "core/diag.h"
#include <stdarg.h>

void diag_clear(struct diag *d)
{
	d->status = ST_OK;
	d->sys_errno = 0;
	d->offset = DIAG_NO_OFFSET;
	d->path[0] = '\0';
	d->msg[0] = '\0';
}

enum status diag_set(struct diag *d, enum status status, const char *path, uint64_t offset,
		     const char *fmt, ...)
{
	if (!d || d->status != ST_OK)
		return status;
	d->status = status;
	d->offset = offset;
	snprintf(d->path, sizeof d->path, "%s", path ? path : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof d->msg, fmt, ap);
	va_end(ap);
	return status;
}

enum status diag_errno(struct diag *d, const char *path, int err, const char *what)
{
	if (d && d->status == ST_OK)
		d->sys_errno = err;
	return diag_set(d, ST_IO, path, DIAG_NO_OFFSET, "%s: %s", what, strerror(err));
}

const char *status_name(enum status s)
{
	switch (s) {
	case ST_OK: return "ok";
	case ST_IO: return "io";
	case ST_NOT_FILE: return "not-a-file";
	case ST_MALFORMED: return "malformed";
	case ST_UNSUPPORTED: return "unsupported";
	case ST_NOT_FOUND: return "not-found";
	case ST_LIMIT: return "limit";
	}
	return "unknown";
}
