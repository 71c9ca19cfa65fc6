/*
 * main.c: the abiscope command line: one subcommand per file, listed in
 * the command table (commands.c).
 */
#include "cli/cli.h"
#include "cli/termsafe.h"

int main(int argc, char **argv)
{
	/* below every renderer: names from inspected files cannot drive the terminal */
	termsafe_install();
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
