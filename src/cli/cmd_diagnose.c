/*
 * cmd_diagnose.c: oomdoc [OPTION]... [FILE]..., the diagnosis.  It loads
 * the rules, runs the scanner over each input, applies the rules to each
 * event, writes the report and turns the outcome into an exit status.
 *
 * The option table below is the one list of the options that diagnose
 * and `oomdoc rules` take: getopt_long's table and --help are made from
 * it, and tests/cli_docs.sh checks that the man page documents exactly
 * these.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "live.h"

enum {
	OPT_COLOR = 256, OPT_LIST_ANCHORS, OPT_RULES, OPT_NO_DEFAULT_RULES,
	OPT_FACT, OPT_ZSTD_WINDOW_LOG
};

static const od_option dg_options[] = {
	{ .name = "format", .letter = 'f', .arg = "FORMAT",
	  .help = "report format: text (default), markdown or json" },
	{ .name = "color", .letter = OPT_COLOR, .arg = "WHEN",
	  .help = "colour the text report: auto (default), always or never" },
	{ .name = "rules", .letter = OPT_RULES, .arg = "PATH",
	  .help = "load rules from this file or directory too (repeatable)" },
	{ .name = "no-default-rules", .letter = OPT_NO_DEFAULT_RULES,
	  .help = "do not load the shipped rules" },
	{ .name = "fact", .letter = OPT_FACT, .arg = "NAME=VALUE",
	  .help = "give a fact the log lacks, e.g. batch_size=32 (repeatable)" },
	{ .name = "zstd-window-log", .letter = OPT_ZSTD_WINDOW_LOG, .arg = "N",
	  .help = "read zstd frames whose window is up to 2^N bytes (default "
	  "23: 8 MiB; 10 to 31)" },
	{ .name = "list-anchors", .letter = OPT_LIST_ANCHORS,
	  .help = "print the fixed strings the prefilter looks for, and exit" },
	{ .name = "help", .letter = 'h', .help = "print this help, and exit" },
	{ .name = "version", .letter = 'V',
	  .help = "print the version, and exit" },
};

#define DG_NOPTS ((int)(sizeof dg_options / sizeof dg_options[0]))

static void
dg_help(FILE *out)
{
	fputs("Usage: oomdoc [OPTION]... [FILE]...\n"
	    "       oomdoc rules check|list|show|facts [OPTION]... [PATH|ID]...\n"
	    "Find the out-of-memory failures in the logs of GPU jobs and show "
	    "their numbers.\n"
	    "With no FILE, or when FILE is -, read standard input.  Plain, "
	    "gzip and zstd\ninput are recognised by their first bytes.\n\n"
	    "Options:\n", out);
	od_options_help(out, dg_options, DG_NOPTS);
	fputs("\nExit status: 0 if an out-of-memory failure was found, 1 if "
	    "none was,\n2 on a usage or input error, 3 on an error in the "
	    "rules.  See oomdoc(1).\n", out);
}

/* The version, what live mode is built with, and the shipped rules'
 * directory (or the path tried, and why it cannot be used). */
static void
dg_version(FILE *out)
{
	char dir[PATH_MAX];
	od_error err;

	memset(&err, 0, sizeof err);
	fprintf(out, "oomdoc %s\n%s\n", OD_VERSION, od_live_version_line());
	/* The path is the program's own location: escaped, as any name
	 * from outside is. */
	fputs("Shipped rules: ", out);
	if (cli_rules_dir(dir, sizeof dir, &err)) {
		od_escape_line(out, dir);
	} else {
		fputs("none (", out);
		od_escape_line(out, err.file);
		fputs(err.file[0] != '\0' ? ": " : "", out);
		od_escape_line(out, err.msg);
		fputc(')', out);
	}
	fputc('\n', out);
}

void
dg_defaults(dg_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->report.format = OD_FORMAT_TEXT;
	cfg->color = CLI_COLOR_AUTO;
	cfg->rules.shipped = true;
	cfg->zstd_window_log = IN_ZSTD_WINDOW_LOG;
}

int
dg_parse(int argc, char **argv, dg_config *cfg)
{
	struct option longopts[DG_NOPTS + 1];
	char shortopts[2 * DG_NOPTS + 2];
	od_error err;
	int c;

	od_options_getopt(dg_options, DG_NOPTS, longopts, shortopts);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *arg = argv[optind - 1];

		switch (c) {
		case 'f':
			if (!cli_format_parse(optarg, &cfg->report.format))
				return cli_usage(NULL, "unknown format", optarg);
			break;
		case OPT_COLOR:
			if (!cli_color_parse(optarg, &cfg->color))
				return cli_usage(NULL, "--color takes auto, always "
				    "or never, not", optarg);
			break;
		case OPT_RULES:
			if (cfg->rules.npaths == CLI_RULES_MAX)
				return cli_usage(NULL, "too many --rules; the limit "
				    "is 32, at", optarg);
			cfg->rules.paths[cfg->rules.npaths++] = optarg;
			break;
		case OPT_NO_DEFAULT_RULES:
			cfg->rules.shipped = false;
			break;
		case OPT_FACT:
			if (!fc_user_add(&cfg->facts, optarg, &err)) {
				cli_say(NULL, "%s (see oomdoc --help)", err.msg);
				return OD_EXIT_ERROR;
			}
			break;
		case OPT_ZSTD_WINDOW_LOG: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end != '\0' ||
			    v < IN_ZSTD_WINDOW_LOG_MIN || v > IN_ZSTD_WINDOW_LOG_MAX)
				return cli_usage(NULL, "--zstd-window-log takes a "
				    "number from 10 to 31, not", optarg);
			cfg->zstd_window_log = (int)v;
			break;
		}
		case OPT_LIST_ANCHORS: {
			od_scanner *sc = od_scanner_new(od_options_jit(), &err);
			const char *const *a;

			if (sc == NULL) {
				cli_error(NULL, &err);
				return OD_EXIT_ERROR;
			}
			for (a = od_anchors(sc); *a != NULL; a++)
				puts(*a);
			od_scanner_free(sc);
			return 0;
		}
		case 'h':
			dg_help(stdout);
			return 0;
		case 'V':
			dg_version(stdout);
			return 0;
		case ':':
			return cli_usage(NULL, "this option needs an argument:",
			    arg);
		default:
			/* getopt sets optopt to a known option's code when
			 * only its argument was wrong. */
			if (od_options_known(dg_options, DG_NOPTS, optopt))
				return cli_usage(NULL, "this option takes no "
				    "argument:", arg);
			return cli_usage(NULL, "unknown option", arg);
		}
	}
	cfg->report.color = cli_color_wanted(cfg->color);
	cfg->report.utf8 = cli_utf8_wanted();
	return -1;
}

int
cmd_diagnose(const cli_command *cmd, int argc, char **argv)
{
	const char *label = cmd->label;
	dg_config cfg;
	od_scanner *sc;
	od_events *set;
	od_input *inputs;
	rl_set *rules;
	od_error err;
	int i, st, ninputs, nfiles, status = OD_EXIT_NONE;
	size_t e;
	bool failed = false, nomem = false;

	memset(&err, 0, sizeof err);
	dg_defaults(&cfg);
	st = dg_parse(argc, argv, &cfg);
	if (st >= 0)
		return st;

	/* The rules first: a broken rule file stops the run (status 3). */
	st = cli_rules_open(label, &cfg.rules, &rules);
	if (st >= 0) {
		rl_free(rules);
		return st;
	}

	nfiles = argc - optind;
	ninputs = nfiles > 0 ? nfiles : 1;
	inputs = calloc((size_t)ninputs, sizeof *inputs);
	set = od_events_new();
	sc = od_scanner_new(od_options_jit(), &err);
	if (inputs == NULL || set == NULL || sc == NULL) {
		if (sc != NULL || err.msg[0] == '\0')
			od_error_set(&err, NULL, 0, 0, "out of memory");
		cli_error(label, &err);
		free(inputs);
		od_events_free(set);
		od_scanner_free(sc);
		rl_free(rules);
		return OD_EXIT_ERROR;
	}
	od_scanner_set_zstd_window_log(sc, cfg.zstd_window_log);
	for (i = 0; i < ninputs && !nomem; i++) {
		const char *path = nfiles > 0 ? argv[optind + i] : "-";

		if (!od_scan_path(sc, path, i, &inputs[i], set, &err)) {
			cli_error(label, &err);
			failed = true;
			/* Out of memory: no report (it would be wrong). */
			nomem = inputs[i].name == NULL || cli_nomem(&err);
		}
	}
	for (e = 0; !nomem && e < od_events_count(set); e++)
		if (!rl_apply(rules, od_events_get(set, e), &cfg.facts)) {
			od_error_set(&err, NULL, 0, 0, "out of memory");
			cli_error(label, &err);
			failed = nomem = true;
		}
	rl_report_fingerprint(set, cfg.report.fingerprint);
	if (!nomem && !od_report_write(stdout, &cfg.report, inputs, ninputs,
	    set)) {
		od_error_set(&err, NULL, 0, 0, "out of memory");
		cli_error(label, &err);
		failed = true;
	}
	if (od_events_count(set) > 0)
		status = OD_EXIT_FOUND;
	if (od_events_dropped(set) > 0)
		cli_say(label, "%llu more out-of-memory events were not kept "
		    "(the limit is %d distinct events)",
		    (unsigned long long)od_events_dropped(set), OD_EVENTS_MAX);
	if (!cli_stdout_ok(label))
		failed = true;
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
