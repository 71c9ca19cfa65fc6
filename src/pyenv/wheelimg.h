/*
 * wheelimg.h: a big ELF member of a wheel as a sparse image (for wheel.c).
 *
 * The member is inflated once to its end, its CRC checked against the
 * central directory, with a checkpoint of the inflater every
 * WHEELIMG_SPAN bytes (the method of zlib's examples/zran.c).  Then only
 * what a verdict reads is inflated again, from the nearest checkpoint, into
 * an image of the member's size whose other pages are never written (they
 * read as zeros and cost no memory): everything but the code (SHF_EXECINSTR
 * sections, which no parser reads: the fatbin search skips them too),
 * debug sections, and the payloads of compressed .nv_fatbin entries
 * (never decompressed; their headers are kept).  Anything unexpected in
 * the headers or the fatbins keeps the bytes in question.
 *
 * wheelimg_build() fills m->head, m->data (the image, in the arena's
 * untouched memory), m->len and *filled (the bytes written, at most budget:
 * past it, wheel_kept_limit()).  *applies is
 * false when the member is not one to image this way (not deflated or
 * stored, encrypted, not an ELF file with section headers): the caller
 * then keeps all its bytes.
 */
#ifndef ABISCOPE_PYENV_WHEELIMG_H
#define ABISCOPE_PYENV_WHEELIMG_H

#include "pyenv/wheel.h"

#define WHEELIMG_MIN ((uint64_t)8 << 20)	/* smaller ELF members are kept whole */
#define WHEELIMG_SPAN ((uint64_t)1 << 18)	/* uncompressed bytes between checkpoints */

enum status wheelimg_build(struct arena *a, struct wheel *w, size_t i, uint64_t budget, bool *applies,
			   uint64_t *filled, struct diag *d);

/* ST_LIMIT: what a verdict keeps of the wheel's members, member among them, passes WHEEL_MAX_KEPT. */
enum status wheel_kept_limit(const struct wheel *w, const char *member, struct diag *d);

#endif
