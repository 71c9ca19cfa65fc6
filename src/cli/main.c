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

static void install_fault_handling(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
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

/* Whatever the command answered, a report that did not reach stdout (a
 * full disk, a closed pipe with SIGPIPE ignored) is no answer: exit 3, as
 * for -o and --junit. */
static int check_stdout(int code)
{
	int err = termsafe_finish();
	if (!err)
		return code;
	fprintf(stderr, "abiscope: cannot write the report to standard output: %s\n", strerror(err));
	return EXIT_UNREADABLE;
}

static int run(int argc, char **argv);

int main(int argc, char **argv)
{
	/* below every renderer: names from inspected files cannot drive the terminal */
	termsafe_install();
	install_fault_handling();
	return check_stdout(check_faults(run(argc, argv)));
}

/* The options every command takes that may also come before it
 * (`abiscope -q check`): they are moved after the command's name, with the
 * value of one that takes a separate value. */
static int global_option(const char *s)
{
	static const char *const flags[] = { "--json", "--verbose", "-v", "--quiet", "-q" };
	static const char *const valued[] = { "--color", "--root" };
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if (str_eq(s, flags[i]))
			return 1;
	if (s[0] == '-' && s[1] == 'q' && strspn(s + 1, "q") == strlen(s + 1))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(valued); i++) {
		size_t n = strlen(valued[i]);
		if (!strncmp(s, valued[i], n) && s[n] == '=')
			return 1;
		if (str_eq(s, valued[i]))
			return 2;
	}
	return 0;
}

static int unknown_command(const char *cmd)
{
	const char *names[64];
	size_t n = MIN(cli_ncommands, ARRAY_SIZE(names));
	for (size_t i = 0; i < n; i++)
		names[i] = cli_commands[i].name;
	const char *like = cli_similar(cmd, strlen(cmd), names, n);
	fprintf(stderr, "abiscope: unknown command '%s'\n", cmd);
	if (like)
		fprintf(stderr, "  a similar command exists: '%s'\n", like);
	fprintf(stderr, "Try 'abiscope --help' for the list of commands.\n");
	return EXIT_USAGE;
}

static int unknown_top_option(const char *s)
{
	static const char *const names[] = { "--help", "--version", "--json", "--verbose", "--quiet", "--color",
					     "--root" };
	size_t n = strcspn(s, "=");
	const char *like = s[1] == '-' ? cli_similar(s, n, names, ARRAY_SIZE(names)) : NULL;
	fprintf(stderr, "abiscope: unknown option '%.*s'\n", (int)n, s);
	if (like)
		fprintf(stderr, "  a similar option exists: '%s'\n", like);
	fprintf(stderr, "Try 'abiscope --help'.\n");
	return EXIT_USAGE;
}

static int run(int argc, char **argv)
{
	if (argc < 2) {
		cli_print_usage(stderr);
		return EXIT_USAGE;
	}
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *s = argv[i];
		if (str_eq(s, "--help") || str_eq(s, "-h")) {
			cli_print_usage(stdout);
			return EXIT_OK;
		}
		if (str_eq(s, "--version") || str_eq(s, "-V")) {
			printf("abiscope %s\n", ABISCOPE_VERSION);
			return EXIT_OK;
		}
		int takes = global_option(s);
		if (!takes)
			return unknown_top_option(s);
		if (takes == 2 && ++i == argc) {
			fprintf(stderr, "abiscope: %s needs a value\nTry 'abiscope --help'.\n", s);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		fprintf(stderr, "abiscope: the options come with a COMMAND\n\n");
		cli_print_usage(stderr);
		return EXIT_USAGE;
	}
	const struct cli_command *c = cli_command_named(argv[i]);
	if (!c)
		return unknown_command(argv[i]);
	/* the command's name first, then the options given before it, then the rest */
	char **args = malloc(sizeof *args * (size_t)(argc + 1));
	if (!args)
		return EXIT_UNREADABLE;
	int n = 0;
	args[n++] = argv[i];
	for (int k = 1; k < i; k++)
		args[n++] = argv[k];
	for (int k = i + 1; k < argc; k++)
		args[n++] = argv[k];
	args[n] = NULL;
	int rc = c->run(n, args);
	free(args);
	return rc;
}
