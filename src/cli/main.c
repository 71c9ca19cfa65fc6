/*
 * main.c: the abiscope command line: one subcommand per file.
 */
#include "cli/cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "why", cmd_why, "would dlopen() of a library or extension succeed, and why not" },
	{ "cuda", cmd_cuda, "which GPUs the CUDA code of files or an environment runs on" },
	{ "gpu", cmd_gpu, "the NVIDIA driver and GPUs of this machine" },
	{ "check", cmd_check, "would every extension module of an environment import" },
	{ "explain", cmd_explain, "diagnose a pasted ImportError or traceback in its environment" },
	{ "wheel", cmd_wheel, "would a wheel install and import here, and what would it break" },
	{ "diff", cmd_diff, "what differs between two hosts or environments, by consequence" },
	{ "fleet", cmd_fleet, "which hosts of a fleet differ from the rest, from their snapshots" },
	{ "snapshot", cmd_snapshot, "describe this host and an environment in one file, for other machines" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: abiscope COMMAND [options] ...\n\n"
		     "abiscope reads shared objects, CUDA fatbins and Python environments without\n"
		     "loading or running them, and predicts what the dynamic loader will do.\n\n"
		     "commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'abiscope COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (str_eq(cmd, "--help") || str_eq(cmd, "-h") || str_eq(cmd, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (str_eq(cmd, "--version")) {
		printf("abiscope %s\n", ABISCOPE_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (str_eq(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "abiscope: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}
