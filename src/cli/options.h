/*
 * options.h: a command's option table, the one list from which both
 * getopt_long's tables and the --help text are made (cmd_diagnose.c for
 * diagnosis and rules, cmd_live.c for live and probe).  The parsers of
 * --format and --color, which more than one command takes, are declared
 * in cli.h.
 */
#ifndef OD_OPTIONS_H
#define OD_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

typedef struct {
	const char *name;       /* long name */
	int letter;             /* short letter, or a code above 255 */
	const char *arg;        /* argument name, NULL for none */
	const char *help;
} od_option;

/*
 * Fills getopt_long's tables: longopts has room for n + 1 entries and
 * shortopts for 2 * n + 2 bytes.  shortopts starts with ':' so that a
 * missing argument is told apart from an unknown option.
 */
void od_options_getopt(const od_option *opts, int n, struct option *longopts,
    char *shortopts);

/* Prints the options, one a line, as --help shows them. */
void od_options_help(FILE *out, const od_option *opts, int n);

/* Whether code is the letter of one of the options (getopt's optopt
 * after an option that takes no argument was given one). */
int od_options_known(const od_option *opts, int n, int code);

#endif
