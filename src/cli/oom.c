/*
 * oom.c: the message the library leaves to the program when memory runs
 * out (core/arena.h): one line on stderr, then the arena aborts.
 */
#include "core/arena.h"

#include <stdio.h>

void arena_out_of_memory(size_t size)
{
	fprintf(stderr, "abiscope: out of memory allocating %zu bytes\n", size);
}
