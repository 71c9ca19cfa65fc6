/*
 * pathwalk.h: a path resolved one component at a time, as the kernel does,
 * with symbolic links spliced in as the caller meets them.  Pure string
 * work: what a component is (a directory, a link, missing) is the caller's
 * to find out, on the host under a root (fs.c) or in a snapshot's tree
 * (vfs.c); both walk with this.
 *
 *   struct path_walk w;
 *   path_walk_init(&w, "/a/b/../c");
 *   for (int r; (r = path_walk_next(&w)) > 0;) {
 *           ".." (w.comp): the caller moves w.done up; otherwise it looks
 *           up w.done + "/" + w.comp, and for a link it calls
 *           path_walk_link(&w, target), else records it in w.done
 *   }
 *   r < 0: a component longer than NAME_MAX (ENAMETOOLONG)
 *
 * Everything lives in the struct; nothing is allocated.
 */
#ifndef ABISCOPE_PATHWALK_H
#define ABISCOPE_PATHWALK_H

#include "core/common.h"
#include <limits.h>

struct path_walk {
	char todo[PATH_MAX * 2];	/* the path still to walk, from rest */
	char *rest;
	char done[PATH_MAX];		/* what is resolved so far, "/" at first */
	char comp[NAME_MAX + 1];	/* the component path_walk_next gave */
	bool last;			/* nothing but slashes follows comp */
	int links;			/* links followed: the caller bounds them */
};

void path_walk_init(struct path_walk *w, const char *path);
/* The next component into w->comp ("." is skipped): 1, or 0 at the end,
 * or -1 when a component is longer than NAME_MAX. */
int path_walk_next(struct path_walk *w);
/* Goes on at a link's target followed by what was left of the path; an
 * absolute target restarts w->done at "/" (a relative one is taken from
 * the link's directory, which w->done still is). */
void path_walk_link(struct path_walk *w, const char *target);

#endif
