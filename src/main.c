/*
 * main.c: the oomdoc command.  A thin front over the library: it parses
 * the options, runs the scanner over each input, writes the report and
 * turns the outcome into an exit status.  Errors are printed here and
 * nowhere else, one line each.
 *
 * The option table below is the one list of options: getopt_long's table
 * and --help are made from it, and tests/test_cli_docs.sh checks that the
 * man page documents exactly these.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oomdoc.h"

typedef struct {
	const char *name;       /* long name */
	int letter;             /* short letter, or a code above 255 */
	const char *arg;        /* argument name, NULL for none */
	const char *help;
} cli_option;

enum { OPT_COLOR = 256, OPT_LIST_ANCHORS };

static const cli_option cli_options[] = {
	{ "format", 'f', "FORMAT",
	  "report format: text (default) or json" },
	{ "color", OPT_COLOR, "WHEN",
	  "colour the text report: auto (default), always or never" },
	{ "list-anchors", OPT_LIST_ANCHORS, NULL,
	  "print the fixed strings the prefilter looks for, and exit" },
	{ "help", 'h', NULL, "print this help, and exit" },
	{ "version", 'V', NULL, "print the version, and exit" },
};

#define CLI_NOPTS ((int)(sizeof cli_options / sizeof cli_options[0]))

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
	int i;

	fputs("Usage: oomdoc [OPTION]... [FILE]...\n"
	    "Find the out-of-memory failures in the logs of GPU jobs and show "
	    "their numbers.\n"
	    "With no FILE, or when FILE is -, read standard input.  Plain, "
	    "gzip and zstd\ninput are recognised by their first bytes.\n\n"
	    "Options:\n", out);
	for (i = 0; i < CLI_NOPTS; i++) {
		const cli_option *o = &cli_options[i];
		char left[48];

		if (o->letter < 256)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->letter,
			    o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name,
			    o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-24s %s\n", left, o->help);
	}
	fputs("\nExit status: 0 if an out-of-memory failure was found, 1 if "
	    "none was,\n2 on a usage or input error.  See oomdoc(1).\n", out);
}

int
main(int argc, char **argv)
{
	struct option longopts[CLI_NOPTS + 1];
	char shortopts[2 * CLI_NOPTS + 2];
	od_report_opts ro = { OD_FORMAT_TEXT, false };
	const char *color = "auto";
	od_scanner *sc;
	od_events *set;
	od_input *inputs;
	od_error err;
	int i, c, ninputs, nfiles, status = OD_EXIT_NONE;
	bool failed = false;
	size_t k = 0;

	memset(&err, 0, sizeof err);
	shortopts[k++] = ':';
	for (i = 0; i < CLI_NOPTS; i++) {
		longopts[i].name = cli_options[i].name;
		longopts[i].has_arg = cli_options[i].arg ? required_argument :
		    no_argument;
		longopts[i].flag = NULL;
		longopts[i].val = cli_options[i].letter;
		if (cli_options[i].letter < 256) {
			shortopts[k++] = (char)cli_options[i].letter;
			if (cli_options[i].arg)
				shortopts[k++] = ':';
		}
	}
	memset(&longopts[CLI_NOPTS], 0, sizeof longopts[0]);
	shortopts[k] = '\0';

	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *arg = argv[optind - 1];

		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0)
				ro.format = OD_FORMAT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				ro.format = OD_FORMAT_JSON;
			else
				return cli_usage("unknown format", optarg);
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") != 0 &&
			    strcmp(optarg, "always") != 0 &&
			    strcmp(optarg, "never") != 0)
				return cli_usage("--color takes auto, always or "
				    "never, not", optarg);
			color = optarg;
			break;
		case OPT_LIST_ANCHORS: {
			const char *const *a;

			for (a = od_anchors(); *a != NULL; a++)
				puts(*a);
			return 0;
		}
		case 'h':
			cli_help(stdout);
			return 0;
		case 'V':
			printf("oomdoc %s\nCUDA live mode: not built\n",
			    OD_VERSION);
			return 0;
		case ':':
			return cli_usage("this option needs an argument:", arg);
		default:
			/* getopt sets optopt to a known option's code when
			 * only its argument was wrong. */
			for (i = 0; i < CLI_NOPTS; i++)
				if (optopt != 0 && optopt == cli_options[i].letter)
					return cli_usage("this option takes no "
					    "argument:", arg);
			return cli_usage("unknown option", arg);
		}
	}
	if (strcmp(color, "always") == 0)
		ro.color = true;
	else if (strcmp(color, "auto") == 0)
		ro.color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
	if (getenv("NO_COLOR") != NULL && getenv("NO_COLOR")[0] != '\0')
		ro.color = false;

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
		return OD_EXIT_ERROR;
	}
	for (i = 0; i < ninputs; i++) {
		const char *path = nfiles > 0 ? argv[optind + i] : "-";

		if (!od_scan_path(sc, path, i, &inputs[i], set, &err)) {
			cli_error(&err);
			failed = true;
		}
	}
	od_report_write(stdout, &ro, inputs, ninputs, set);
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
	return status;
}
