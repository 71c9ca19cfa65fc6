/*
 * inventory.h: every ELF object of an environment (or folder), with who
 * owns it and what it is.
 *
 * The site directories (and a conda environment's lib/) are walked without
 * following symbolic links to directories; files named like shared objects
 * (*.so, *.so.N...) are read through the object cache.  Each ELF object is
 * mapped to the distribution whose RECORD lists it, to its import name, and
 * marked as an extension module when it exports PyInit_<name> (the only
 * reliable sign: torch/lib/libc10.so sits under a package but is a plain
 * library).  Only a module an import statement can name is one: under
 * folders whose names are identifiers (not .cache/ or not-a-pkg/).  A
 * folder a .pth file adds to sys.path is no installation tree: it is listed
 * only as far as Python could import from it, and only so far (notes says
 * where it stopped).  An index by file name and SONAME answers "where in
 * this environment is libnvrtc.so.13".
 */
#ifndef ABISCOPE_PYENV_INVENTORY_H
#define ABISCOPE_PYENV_INVENTORY_H

#include "cxx/torchabi.h"
#include "pyenv/dist.h"

struct inv_obj {
	const char *path;
	struct object *obj;
	struct dist *dist;	/* the RECORD owner, or NULL */
	const char *site;	/* the site directory it is under, or NULL */
	const char *package;	/* first path component under the site directory */
	const char *module;	/* import name when it is an extension module */
	bool is_extension;
	bool in_stdlib;		/* under the standard library's lib-dynload */
	/* what it needs of torch, for the index torch_compat_ix (NULL: not
	 * asked yet): asked by every report of the check and of the pass with
	 * the driver, and a matter of the file alone */
	struct torch_compat torch_compat;
	const struct torchabi *torch_compat_ix;
};

/* A file named like a shared object that is none anyone can load. */
struct inv_broken {
	const char *path;
	const char *why;	/* "a FIFO, not a file ...", "a dangling symbolic link", ... */
};

struct inventory {
	const struct pyenv *env;
	struct distset dists;
	struct inv_obj **obj;
	size_t nobj;
	struct strmap by_name;	/* file name or SONAME -> struct ptrvec * of inv_obj */
	size_t files_seen, dirs_seen;
	struct ptrvec unreadable;	/* const char *: "path: reason" for files that could not be read */
	struct ptrvec broken;		/* struct inv_broken *: FIFOs, links to nothing, unreadable... */
	struct ptrvec notes;		/* const char *: what the walk left out, and why */
};

/* Walks the environment (or the plain folder / file at e->root). */
void inventory_build(struct scan *s, const struct pyenv *e, struct inventory *inv);

/* Every object known under name (file name or SONAME), or NULL. */
const struct ptrvec *inventory_find(const struct inventory *inv, const char *name);

/* The inventory entry of an object, or NULL. */
struct inv_obj *inventory_entry(const struct inventory *inv, const struct object *o);

/* True when o exports PyInit_<stem>. */
bool object_is_extension(const struct object *o, const char *stem);

/* True when a file of this name is an extension module Python would
 * import for e whatever its content: the interpreter's own suffix
 * (".cpython-311-x86_64-linux-gnu.so"), ".abi3.so", or in a plain folder
 * any ".so".  Such a file that is no ELF object (emptied by an interrupted
 * install, text, a wheel's symbolic link installed as a file of its
 * target's name) is inventoried as a module all the same: its import fails
 * the way the loader refuses it ("file too short", "invalid ELF header"). */
bool inventory_module_file(const struct pyenv *e, const char *name);

#endif
