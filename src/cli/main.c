/*
 * main.c: the abiscope command line: one subcommand per file, listed in
 * the command table (commands.c).
 */
#include "cli/cli.h"
#include "cli/termsafe.h"
#include "core/fs.h"

#include <signal.h>
#include <unistd.h>

/* A file that shrinks while mapped: fs.h repairs the page and remembers it. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (fs_repair_fault(si->si_addr))
		return;
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Test hook (tests/e2e/hostile.sh): ABISCOPE_TEST_SHRINK_AFTER_MAP=SUFFIX
 * halves each file whose path ends in SUFFIX just after it is mapped, to
 * make "the file shrank while it was read" deterministic. */
static const char *shrink_suffix;
static void shrink_after_map(const char *host_path)
{
	size_t n = strlen(host_path), k = strlen(shrink_suffix);
	if (n < k || !str_eq(host_path + n - k, shrink_suffix))
		return;
	struct fsview host;
	fs_init(&host, NULL);
	struct fs_stat st;
	fs_stat(&host, host_path, &st);
	if (st.kind == FS_REGULAR && truncate(host_path, (off_t)(st.size / 2)) != 0)
		perror("abiscope: test hook");
}

static void install_fault_handling(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	shrink_suffix = getenv("ABISCOPE_TEST_SHRINK_AFTER_MAP");
	if (shrink_suffix && *shrink_suffix)
		fs_test_after_map = shrink_after_map;
}

/* An answer drawn from a file that changed under us is no answer. */
static int check_faults(int code)
{
	const char *f = fs_fault();
	if (!f)
		return code;
	fflush(stdout);
	fprintf(stderr, "abiscope: %s: I/O error: the file shrank while it was read (being written or "
			"replaced?); the results above are not valid for it\n", f);
	return EXIT_UNREADABLE;
}

static int run(int argc, char **argv);

int main(int argc, char **argv)
{
	/* below every renderer: names from inspected files cannot drive the terminal */
	termsafe_install();
	install_fault_handling();
	return check_faults(run(argc, argv));
}

static int run(int argc, char **argv)
{
	if (argc < 2) {
		cli_print_usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (str_eq(cmd, "--help") || str_eq(cmd, "-h")) {
		cli_print_usage(stdout);
		return EXIT_OK;
	}
	if (str_eq(cmd, "--version")) {
		printf("abiscope %s\n", ABISCOPE_VERSION);
		return EXIT_OK;
	}
	const struct cli_command *c = cli_command_named(cmd);
	if (c)
		return c->run(argc - 1, argv + 1);
	fprintf(stderr, "abiscope: unknown command '%s'\n\n", cmd);
	cli_print_usage(stderr);
	return EXIT_USAGE;
}
