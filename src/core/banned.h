/*
 * banned.h: functions that are too easy to misuse on untrusted input.
 *
 * Every translation unit of abiscope includes this (through common.h).
 * Using one of these turns into a compile error naming the function.
 * Use snprintf / memcpy with explicit lengths / arena_strndup instead.
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

#endif
