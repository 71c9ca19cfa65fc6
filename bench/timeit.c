/*
 * timeit.c: run one command, report its wall time, CPU time and peak RSS.
 *
 *   timeit OUTFILE COMMAND [ARG]...
 *
 * Writes "wall_s=... user_s=... sys_s=... maxrss_kb=... status=..." to
 * OUTFILE once COMMAND exits; COMMAND's own output is left alone.  The
 * figures cover COMMAND and every descendant it waited for
 * (getrusage(RUSAGE_CHILDREN)).
 *
 * Why not Python's wait4(): Linux records a process's peak RSS across
 * exec, so a child forked (or vforked) from the Python benchmark driver
 * starts with the driver's ~16 MB.  This program is small, so the figure
 * is the command's own.  bench/run uses it when it is built.
 */
#include "core/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: timeit OUTFILE COMMAND [ARG]...\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 2;
	}
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(out, "wall_s=%.6f user_s=%.6f sys_s=%.6f maxrss_kb=%ld status=%d\n",
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, code);
	fclose(out);
	return 0;
}
