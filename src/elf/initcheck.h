/*
 * initcheck.h: what glibc's relocation and constructor phases meet in one
 * object, decided at parse time (elf.c calls these; nothing else does).
 *
 * Each is one pass over the relocation tables, whatever their size: the
 * "which relocation writes this word" questions of the DT_INIT_ARRAY slots
 * are answered from one index of the slots, built in a single pass over
 * DT_RELA, DT_JMPREL and DT_RELR, its memory bounded by the slots checked
 * (a pass per slot was O(slots x relocations): a minute on a library with
 * a million relocations).
 */
#ifndef ABISCOPE_ELF_INITCHECK_H
#define ABISCOPE_ELF_INITCHECK_H

#include "elf/elf.h"

/* The DT_INIT_ARRAY entries call_init calls (x86-64): sets ef->init_fault
 * for the first that is not code after relocation.  relr, relrsz: DT_RELR
 * and DT_RELRSZ (0 when absent). */
void elf_check_init_entries(struct arena *a, struct elf_file *ef, uint64_t array, uint64_t n, uint64_t relr,
			    uint64_t relrsz);

/* The constructors' direct calls of PLT slots (x86-64): ef->ctor_plt_syms,
 * from DT_INIT (init, when has_init) and the entries elf_check_init_entries
 * found.  Byte patterns, not a decoder: a call rel32 (or jmp) to a PLT stub
 * whose jmp *GOT(%rip) names a DT_JMPREL slot, or a call *GOT(%rip) of one,
 * in the first bytes of each function up to its first ret; one pass over
 * DT_JMPREL for all of them. */
void elf_find_ctor_plt_calls(struct arena *a, struct elf_file *ef, bool has_init, uint64_t init);

/* elf_machine_rela_relative's assertion on the first DT_RELACOUNT entries
 * (x86-64): sets ef->relative_assert. */
void elf_check_relative(struct elf_file *ef);

#endif
