/*
 * junit.h: --junit FILE for CI systems (check, wheel).  A JUnit XML report:
 * one <testsuite> per environment (or wheel), one <testcase> per extension
 * module, named by its import name and classed by its distribution; a
 * module that would not import, or has no kernel for the GPU, is a
 * <failure> whose message is its root cause (the first error that nothing
 * else causes) and whose text is the loader's error, the explanation and
 * the fix; a module abiscope could not judge is <skipped>.
 *
 * The report is built in memory and written (core/fs.h's fs_write_output)
 * by junit_close(); everything the writer is given is only read.
 */
#ifndef ABISCOPE_CLI_JUNIT_H
#define ABISCOPE_CLI_JUNIT_H

#include "cli/cli.h"
#include "pyenv/check.h"

struct junit {
	FILE *out;		/* a memory stream: written to path by junit_close() */
	char *buf;
	size_t len;
	const char *path;
};

/* Starts a report for path ("-": standard output); false after a message. */
bool junit_open(struct junit *j, const char *cmd, const char *path);
/* Writes </testsuites>, closes; false (after a message) when anything failed. */
bool junit_close(struct junit *j, const char *cmd);

/* <testsuites name=...>: call once, first. */
void junit_begin(struct junit *j, const char *name);
/* <testsuite> with its counts. */
void junit_suite_begin(struct junit *j, const char *name, size_t tests, size_t failures, size_t skipped);
void junit_suite_end(struct junit *j);

/* Whether v is a test case of the report, and whether it fails. */
bool junit_counts(const struct module_verdict *v);
bool junit_fails(const struct module_verdict *v);
/* One module: classname is its distribution (or group) name. */
void junit_module(struct junit *j, const struct findings *fl, const struct module_verdict *v, const char *classname);
/* A case that is not a module (the wheel's tag check): failure NULL when it passes. */
void junit_case(struct junit *j, const char *classname, const char *name, const char *failure_type,
		const char *failure);

#endif
