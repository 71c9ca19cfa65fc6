/*
 * demangle.h: C++ symbol names in the engineer's words.
 *
 * A thin wrapper over libstdc++'s __cxa_demangle (the Itanium C++ ABI
 * demangler every GCC toolchain ships), never a demangler of our own.
 * Results are copied into the caller's arena; a name that is not a
 * mangled C++ name comes back unchanged.
 */
#ifndef ABISCOPE_DEMANGLE_H
#define ABISCOPE_DEMANGLE_H

#include "core/arena.h"

/* The demangled form of name, or name itself when it does not demangle. */
const char *cxx_demangle(struct arena *a, const char *name);
/* True when name is an Itanium-mangled C++ name (_Z...). */
bool cxx_is_mangled(const char *name);

#endif
