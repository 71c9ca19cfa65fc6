/*
 * banned.h: functions that are too easy to misuse on untrusted input.
 *
 * Every translation unit of abiscope includes this (through common.h).
 * Using one of these turns into a compile error naming the function.
 * Use snprintf / memcpy with explicit lengths / arena_strndup instead.
 *
 * The library (src/ outside src/cli/, built with -DABISCOPE_LIBRARY) also
 * may not print or read the environment: it returns status and
 * diagnostics, and the CLI renders them and passes settings in.
 */
#ifndef ABISCOPE_BANNED_H
#define ABISCOPE_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef gets
#define gets(x) BANNED(gets)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef mktemp
#define mktemp(x) BANNED(mktemp)
#undef system
#define system(x) BANNED(system)
#undef popen
#define popen(x, y) BANNED(popen)

#ifdef ABISCOPE_LIBRARY
#undef printf
#define printf(...) BANNED(printf_in_the_library)
#undef fprintf
#define fprintf(...) BANNED(fprintf_in_the_library)
#undef vfprintf
#define vfprintf(...) BANNED(vfprintf_in_the_library)
#undef puts
#define puts(x) BANNED(puts_in_the_library)
#undef fputs
#define fputs(x, y) BANNED(fputs_in_the_library)
#undef putchar
#define putchar(x) BANNED(putchar_in_the_library)
#undef perror
#define perror(x) BANNED(perror_in_the_library)
#undef stdout
#define stdout BANNED(stdout_in_the_library)
#undef stderr
#define stderr BANNED(stderr_in_the_library)
#undef getenv
#define getenv(x) BANNED(getenv_in_the_library)
#undef secure_getenv
#define secure_getenv(x) BANNED(secure_getenv_in_the_library)
#endif

#endif
