/*
 * cmd_rules.c: oomdoc rules check|list|show|facts, over the rules that a
 * diagnosis would load (or, for check, the paths named).  It takes the
 * options of the diagnosis (cmd_diagnose.c), after the verb.
 *
 *     oomdoc rules check [OPTION]... [PATH]...   lint rule files, and run
 *                                                the recognisers' examples
 *     oomdoc rules list [OPTION]...              the loaded rules
 *     oomdoc rules show [OPTION]... ID           one rule
 *     oomdoc rules facts                         the facts rules can use
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knowledge.h"
#include "recog_table.h"

/* oomdoc rules --help (or -h anywhere before "--"). */
static bool
rules_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			break;
	if (i == argc || strcmp(argv[i], "--") == 0)
		return false;
	fputs("Usage: oomdoc rules check [OPTION]... [PATH]...\n"
	    "       oomdoc rules list [OPTION]...\n"
	    "       oomdoc rules show [OPTION]... ID\n"
	    "       oomdoc rules facts\n"
	    "Check rule files (the paths named, or the rules a diagnosis "
	    "loads), list the\nrules a diagnosis loads, show one of them, "
	    "or list the facts rules can use.\n\n"
	    "Options (those of the diagnosis; see oomdoc --help):\n"
	    "  --rules PATH               load rules from this file or "
	    "directory too (repeatable)\n"
	    "  --no-default-rules         do not load the shipped rules\n"
	    "  -h, --help                 print this help, and exit\n"
	    "\nExit status: 0, 2 on a usage error, 3 on an error in the "
	    "rules.  See oomdoc(1).\n", stdout);
	return true;
}

int
cmd_rules(const cli_command *cmd, int argc, char **argv)
{
	const char *label = cmd->label;
	const char *verb = argc > 1 ? argv[1] : "";
	dg_config cfg;
	rl_set *rules = rl_new();
	rl_errors *errs = calloc(1, sizeof *errs);
	int st, i, status = 0;

	if (rules_help(argc, argv)) {
		rl_free(rules);
		free(errs);
		return 0;
	}
	if (rules == NULL || errs == NULL) {
		rl_free(rules);
		free(errs);
		cli_say(label, "out of memory");
		return OD_EXIT_ERROR;
	}
	/* The options after the verb: argv + 1, where getopt takes the verb
	 * for the program's name.  The operands are then argv[1 + optind]
	 * and on. */
	dg_defaults(&cfg);
	st = dg_parse(argc - 1, argv + 1, &cfg);
	if (st >= 0) {
		status = st;
	} else if (strcmp(verb, "check") == 0) {
		/* The paths named, or else what a diagnosis would load. */
		if (optind < argc - 1) {
			for (i = optind; i < argc - 1; i++)
				rl_load(rules, argv[1 + i], errs);
		} else {
			cli_rules_load(&cfg.rules, rules, errs);
		}
		/* The recognisers against their examples, once they load. */
		if (errs->n == 0)
			sk_table_check(rules->recognisers, od_options_jit(), errs);
		if (errs->n > 0) {
			status = cli_rule_errors(label, errs);
		} else {
			printf("oomdoc: %d rules", rl_count(rules));
			if (kn_count(rules->knowledge) > 0)
				printf(", %d knowledge entries",
				    kn_count(rules->knowledge));
			if (sk_table_count(rules->recognisers) > 0)
				printf(", %d recognisers (%d examples)",
				    sk_table_count(rules->recognisers),
				    sk_example_count(rules->recognisers));
			printf(", no errors\n");
		}
	} else if (strcmp(verb, "list") == 0 || strcmp(verb, "show") == 0) {
		if (!cli_rules_load(&cfg.rules, rules, errs)) {
			status = cli_rule_errors(label, errs);
		} else if (strcmp(verb, "list") == 0) {
			for (i = 0; i < rl_count(rules); i++)
				rl_describe(rules, i, stdout, false);
		} else if (optind != argc - 2) {
			status = cli_usage(label, "rules show takes one rule id, "
			    "not", optind < argc - 1 ? argv[1 + optind] :
			    "nothing");
		} else if ((i = rl_find(rules, argv[1 + optind])) < 0) {
			cli_say(label, "no rule '%s' is loaded (see oomdoc rules "
			    "list)", argv[1 + optind]);
			status = OD_EXIT_ERROR;
		} else {
			rl_describe(rules, i, stdout, true);
		}
	} else if (strcmp(verb, "facts") == 0) {
		const char *f;

		for (i = 0; (f = fc_name(i)) != NULL; i++)
			puts(f);
	} else {
		status = cli_usage(label, "rules takes check, list, show or "
		    "facts, not", verb);
	}
	rl_free(rules);
	free(errs);
	return status;
}
