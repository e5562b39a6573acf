/*
 * main.c: the oomdoc command.  A thin front over the libraries: it picks
 * the subcommand from argv[1] and runs it.  Each subcommand (cli.h)
 * parses its own options, prints its diagnostics through errors.c, and
 * returns the exit status.
 *
 *     oomdoc [OPTION]... [FILE]...               diagnose logs
 *     oomdoc rules check|list|show|facts ...     the rules
 *     oomdoc live [OPTION]... [LOG|REPORT.json|-]   confirm causes on a GPU
 *     oomdoc probe [OPTION]...                   check a GPU
 *     oomdoc completions bash|zsh|fish           shell completions
 */
#include <signal.h>
#include <string.h>

#include "cli.h"

/* The subcommands.  Diagnose is implicit: `oomdoc job.log`, not
 * `oomdoc diagnose job.log` (a log that is named like a subcommand is
 * given as ./rules). */
static const cli_command cli_commands[] = {
	{ .name = "diagnose", .implicit = true, .label = NULL,
	  .run = cmd_diagnose },
	{ .name = "rules", .label = NULL, .run = cmd_rules },
	{ .name = "live", .label = "live", .run = cmd_live },
	{ .name = "probe", .label = "probe", .run = cmd_live },
	{ .name = "completions", .label = NULL, .run = cmd_completions },
};

#define CLI_NCOMMANDS (sizeof cli_commands / sizeof cli_commands[0])

int
main(int argc, char **argv)
{
	const cli_command *implicit = NULL;
	char cache[4096];
	size_t i;

	/* A reader that leaves (oomdoc big.log | head -1) is a write error
	 * like any other: EPIPE, not death by SIGPIPE, so that the run
	 * still ends with its diagnostics on standard error. */
	signal(SIGPIPE, SIG_IGN);
	/* The prefilter's compiled database is kept between runs in the
	 * user's cache directory (oomdoc(1), FILES); the library keeps none
	 * unless told where. */
	if (od_options_cache_dir(cache, sizeof cache))
		(void)od_scan_cache_dir(cache);
	for (i = 0; i < CLI_NCOMMANDS; i++) {
		const cli_command *c = &cli_commands[i];

		if (c->implicit)
			implicit = c;
		else if (argc > 1 && strcmp(argv[1], c->name) == 0)
			return cli_finish(c->label,
			    c->run(c, argc - 1, argv + 1));
	}
	return cli_finish(implicit->label, implicit->run(implicit, argc, argv));
}
