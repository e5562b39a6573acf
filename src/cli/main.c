/*
 * main.c: the oomdoc command.  A thin front over the library: it parses
 * the options, loads the rules, runs the scanner over each input, applies
 * the rules to each event, writes the report and turns the outcome into an
 * exit status.  Errors are printed here and nowhere else, one line each.
 *
 *     oomdoc [OPTION]... [FILE]...          diagnose logs
 *     oomdoc rules check [OPTION]... [PATH]...   lint rule files
 *     oomdoc rules list [OPTION]...         the loaded rules
 *     oomdoc rules show [OPTION]... ID      one rule
 *
 * The option table below is the one list of options: getopt_long's table
 * and --help are made from it, and tests/cli_docs.sh checks that the man
 * page documents exactly these.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "facts.h"
#include "live.h"
#include "core.h"
#include "options.h"
#include "rules.h"

enum {
	OPT_COLOR = 256, OPT_LIST_ANCHORS, OPT_RULES, OPT_NO_DEFAULT_RULES,
	OPT_FACT
};

static const od_option cli_options[] = {
	{ "format", 'f', "FORMAT",
	  "report format: text (default), markdown or json" },
	{ "color", OPT_COLOR, "WHEN",
	  "colour the text report: auto (default), always or never" },
	{ "rules", OPT_RULES, "PATH",
	  "load rules from this file or directory too (repeatable)" },
	{ "no-default-rules", OPT_NO_DEFAULT_RULES, NULL,
	  "do not load the shipped rules" },
	{ "fact", OPT_FACT, "NAME=VALUE",
	  "give a fact the log lacks, e.g. batch_size=32 (repeatable)" },
	{ "list-anchors", OPT_LIST_ANCHORS, NULL,
	  "print the fixed strings the prefilter looks for, and exit" },
	{ "help", 'h', NULL, "print this help, and exit" },
	{ "version", 'V', NULL, "print the version, and exit" },
};

#define CLI_NOPTS ((int)(sizeof cli_options / sizeof cli_options[0]))
#define CLI_RULES_MAX 32

/* What the options asked for. */
typedef struct {
	od_report_opts report;
	const char *color;
	const char *rules[CLI_RULES_MAX];
	int nrules;
	bool default_rules;
	fc_user_facts facts;
} cli_config;

static void
cli_error(const od_error *err)
{
	fputs("oomdoc: ", stderr);
	if (err->file[0] != '\0') {
		fputs(err->file, stderr);
		if (err->line > 0)
			fprintf(stderr, ":%llu", (unsigned long long)err->line);
		if (err->col > 0)
			fprintf(stderr, ":%llu", (unsigned long long)err->col);
		fputs(": ", stderr);
	}
	fprintf(stderr, "%s\n", err->msg);
}

/* A usage error: what is wrong, the word at fault, a pointer to --help,
 * and status 2. */
static int
cli_usage(const char *what, const char *word)
{
	fprintf(stderr, "oomdoc: %s '%s' (see oomdoc --help)\n", what, word);
	return OD_EXIT_ERROR;
}

static void
cli_help(FILE *out)
{
	fputs("Usage: oomdoc [OPTION]... [FILE]...\n"
	    "       oomdoc rules check|list|show|facts [OPTION]... [PATH|ID]...\n"
	    "Find the out-of-memory failures in the logs of GPU jobs and show "
	    "their numbers.\n"
	    "With no FILE, or when FILE is -, read standard input.  Plain, "
	    "gzip and zstd\ninput are recognised by their first bytes.\n\n"
	    "Options:\n", out);
	od_options_help(out, cli_options, CLI_NOPTS);
	fputs("\nExit status: 0 if an out-of-memory failure was found, 1 if "
	    "none was,\n2 on a usage or input error, 3 on an error in the "
	    "rules.  See oomdoc(1).\n", out);
}

/* Prints the errors of a rules load; returns status 3. */
static int
cli_rule_errors(const rl_errors *errs)
{
	int i;

	for (i = 0; i < errs->n; i++)
		cli_error(&errs->v[i]);
	if (errs->dropped > 0)
		fprintf(stderr, "oomdoc: %d more errors in the rules\n",
		    errs->dropped);
	return OD_EXIT_RULES;
}

/*
 * Parses the options of argv.  Returns -1 to go on, or the status to exit
 * with (after --help, --version, --list-anchors or a usage error).
 */
static int
cli_parse(int argc, char **argv, cli_config *cfg)
{
	struct option longopts[CLI_NOPTS + 1];
	char shortopts[2 * CLI_NOPTS + 2];
	od_error err;
	int c;

	od_options_getopt(cli_options, CLI_NOPTS, longopts, shortopts);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *arg = argv[optind - 1];

		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0)
				cfg->report.format = OD_FORMAT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				cfg->report.format = OD_FORMAT_JSON;
			else if (strcmp(optarg, "markdown") == 0)
				cfg->report.format = OD_FORMAT_MARKDOWN;
			else
				return cli_usage("unknown format", optarg);
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") != 0 &&
			    strcmp(optarg, "always") != 0 &&
			    strcmp(optarg, "never") != 0)
				return cli_usage("--color takes auto, always or "
				    "never, not", optarg);
			cfg->color = optarg;
			break;
		case OPT_RULES:
			if (cfg->nrules == CLI_RULES_MAX)
				return cli_usage("too many --rules; the limit "
				    "is 32, at", optarg);
			cfg->rules[cfg->nrules++] = optarg;
			break;
		case OPT_NO_DEFAULT_RULES:
			cfg->default_rules = false;
			break;
		case OPT_FACT:
			if (!fc_user_add(&cfg->facts, optarg, &err)) {
				fprintf(stderr, "oomdoc: %s (see oomdoc --help)\n",
				    err.msg);
				return OD_EXIT_ERROR;
			}
			break;
		case OPT_LIST_ANCHORS: {
			od_scanner *sc = od_scanner_new(&err);
			const char *const *a;

			if (sc == NULL) {
				cli_error(&err);
				return OD_EXIT_ERROR;
			}
			for (a = od_anchors(sc); *a != NULL; a++)
				puts(*a);
			od_scanner_free(sc);
			return 0;
		}
		case 'h':
			cli_help(stdout);
			return 0;
		case 'V':
			printf("oomdoc %s\n%s\n", OD_VERSION,
			    od_live_version_line());
			return 0;
		case ':':
			return cli_usage("this option needs an argument:", arg);
		default:
			/* getopt sets optopt to a known option's code when
			 * only its argument was wrong. */
			if (od_options_known(cli_options, CLI_NOPTS, optopt))
				return cli_usage("this option takes no argument:",
				    arg);
			return cli_usage("unknown option", arg);
		}
	}
	if (strcmp(cfg->color, "always") == 0)
		cfg->report.color = true;
	else if (strcmp(cfg->color, "auto") == 0)
		cfg->report.color = isatty(STDOUT_FILENO);
	if (getenv("NO_COLOR") != NULL && getenv("NO_COLOR")[0] != '\0')
		cfg->report.color = false;
	return -1;
}

/*
 * Loads the rules: the shipped ones, then the directories of OOMDOC_RULES
 * (colon-separated), then each --rules, a later rule replacing an earlier
 * one with the same id.
 */
static bool
cli_load_rules(const cli_config *cfg, rl_set *rules, rl_errors *errs)
{
	const char *env = getenv("OOMDOC_RULES");
	bool ok = true;
	int i;

	if (cfg->default_rules)
		ok &= rl_load(rules, rl_default_dir(), errs);
	if (env != NULL && env[0] != '\0') {
		char *copy = strdup(env), *save = NULL, *dir;

		for (dir = copy != NULL ? strtok_r(copy, ":", &save) : NULL;
		    dir != NULL; dir = strtok_r(NULL, ":", &save))
			ok &= rl_load(rules, dir, errs);
		free(copy);
	}
	for (i = 0; i < cfg->nrules; i++)
		ok &= rl_load(rules, cfg->rules[i], errs);
	return ok;
}

/* oomdoc rules check|list|show. */
static int
cli_rules(int argc, char **argv, cli_config *cfg)
{
	const char *verb = argc > 2 ? argv[2] : "";
	rl_set *rules = rl_new();
	rl_errors *errs = calloc(1, sizeof *errs);
	int st, i, status = 0;

	if (rules == NULL || errs == NULL) {
		rl_free(rules);
		free(errs);
		fputs("oomdoc: out of memory\n", stderr);
		return OD_EXIT_ERROR;
	}
	/* The options after the verb. */
	st = cli_parse(argc - 2, argv + 2, cfg);
	if (st >= 0) {
		status = st;
	} else if (strcmp(verb, "check") == 0) {
		/* The paths named, or else what a diagnosis would load. */
		if (optind < argc - 2) {
			for (i = optind; i < argc - 2; i++)
				rl_load(rules, argv[2 + i], errs);
		} else {
			cli_load_rules(cfg, rules, errs);
		}
		if (errs->n > 0)
			status = cli_rule_errors(errs);
		else
			printf("oomdoc: %d rules, no errors\n", rl_count(rules));
	} else if (strcmp(verb, "list") == 0 || strcmp(verb, "show") == 0) {
		if (!cli_load_rules(cfg, rules, errs)) {
			status = cli_rule_errors(errs);
		} else if (strcmp(verb, "list") == 0) {
			for (i = 0; i < rl_count(rules); i++)
				rl_describe(rules, i, stdout, false);
		} else if (optind != argc - 3) {
			status = cli_usage("rules show takes one rule id, not",
			    optind < argc - 2 ? argv[2 + optind] : "nothing");
		} else if ((i = rl_find(rules, argv[2 + optind])) < 0) {
			fprintf(stderr, "oomdoc: no rule '%s' is loaded (see "
			    "oomdoc rules list)\n", argv[2 + optind]);
			status = OD_EXIT_ERROR;
		} else {
			rl_describe(rules, i, stdout, true);
		}
	} else if (strcmp(verb, "facts") == 0) {
		const char *const *f;

		for (f = fc_names(); *f != NULL; f++)
			puts(*f);
	} else {
		status = cli_usage("rules takes check, list, show or facts, not",
		    verb);
	}
	rl_free(rules);
	free(errs);
	return status;
}

int
main(int argc, char **argv)
{
	cli_config cfg;
	od_scanner *sc;
	od_events *set;
	od_input *inputs;
	rl_set *rules;
	rl_errors *errs;
	od_error err;
	int i, st, ninputs, nfiles, status = OD_EXIT_NONE;
	size_t e;
	bool failed = false;

	if (argc > 1 && (strcmp(argv[1], "live") == 0 ||
	    strcmp(argv[1], "probe") == 0))
		return od_live_main(argc, argv);
	memset(&err, 0, sizeof err);
	memset(&cfg, 0, sizeof cfg);
	cfg.report.format = OD_FORMAT_TEXT;
	cfg.color = "auto";
	cfg.default_rules = true;
	if (argc > 1 && strcmp(argv[1], "rules") == 0)
		return cli_rules(argc, argv, &cfg);
	st = cli_parse(argc, argv, &cfg);
	if (st >= 0)
		return st;

	/* The rules first: a broken rule file stops the run (status 3). */
	rules = rl_new();
	errs = calloc(1, sizeof *errs);
	if (rules == NULL || errs == NULL) {
		rl_free(rules);
		free(errs);
		fputs("oomdoc: out of memory\n", stderr);
		return OD_EXIT_ERROR;
	}
	if (!cli_load_rules(&cfg, rules, errs)) {
		st = cli_rule_errors(errs);
		rl_free(rules);
		free(errs);
		return st;
	}
	free(errs);

	nfiles = argc - optind;
	ninputs = nfiles > 0 ? nfiles : 1;
	inputs = calloc((size_t)ninputs, sizeof *inputs);
	set = od_events_new();
	sc = od_scanner_new(&err);
	if (inputs == NULL || set == NULL || sc == NULL) {
		if (sc != NULL || err.msg[0] == '\0')
			od_error_set(&err, NULL, 0, 0, "out of memory");
		cli_error(&err);
		free(inputs);
		od_events_free(set);
		od_scanner_free(sc);
		rl_free(rules);
		return OD_EXIT_ERROR;
	}
	for (i = 0; i < ninputs; i++) {
		const char *path = nfiles > 0 ? argv[optind + i] : "-";

		if (!od_scan_path(sc, path, i, &inputs[i], set, &err)) {
			cli_error(&err);
			failed = true;
		}
	}
	for (e = 0; e < od_events_count(set); e++)
		rl_apply(rules, od_events_get(set, e), &cfg.facts);
	rl_report_fingerprint(set, cfg.report.fingerprint);
	od_report_write(stdout, &cfg.report, inputs, ninputs, set);
	if (od_events_count(set) > 0)
		status = OD_EXIT_FOUND;
	if (od_events_dropped(set) > 0)
		fprintf(stderr, "oomdoc: %llu more out-of-memory events were "
		    "not kept (the limit is %d distinct events)\n",
		    (unsigned long long)od_events_dropped(set), OD_EVENTS_MAX);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		od_error_set(&err, NULL, 0, 0, "cannot write the report");
		cli_error(&err);
		failed = true;
	}
	if (failed)
		status = OD_EXIT_ERROR;
	for (i = 0; i < ninputs; i++)
		free(inputs[i].name);
	free(inputs);
	od_events_free(set);
	od_scanner_free(sc);
	rl_free(rules);
	return status;
}
