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
#include <stdbool.h>
#include <stdio.h>

typedef struct {
	const char *name;       /* long name */
	int letter;             /* short letter, or a code above 255 */
	const char *arg;        /* argument name, NULL for none */
	const char *help;
	/* The words the argument takes, space-separated, for the shell
	 * completions (cmd_completions.c); NULL when it is not one of a
	 * list. */
	const char *values;
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

/*
 * The usage error for getopt_long's answer c (':' or '?') at arg, the
 * word it was reading, printed under label; returns the exit status.  A
 * short option names its letter as getopt does ("unknown option -- 'x'",
 * "option requires an argument -- 'm'"), so that in a cluster (-cx) the
 * letter at fault is the one named.
 */
int od_options_error(const char *label, const od_option *opts, int n, int c,
    const char *arg);

/* Whether code is the letter of one of the options (getopt's optopt
 * after an option that takes no argument was given one). */
int od_options_known(const od_option *opts, int n, int code);

/*
 * Whether to compile the patterns to machine code (PCRE2's JIT), the
 * scanner's option: yes, unless OOMDOC_NO_JIT=1.  Only to run under
 * valgrind, which cannot see into JIT code and reports false errors
 * there, is it turned off: matching is the same, only slower.
 */
bool od_options_jit(void);

/*
 * The prefilter cache's directory (od_scan_cache_dir) into out[0..cap):
 * $XDG_CACHE_HOME/oomdoc, or $HOME/.cache/oomdoc where XDG_CACHE_HOME is
 * unset, empty or not absolute (the XDG Base Directory Specification,
 * https://specifications.freedesktop.org/basedir-spec/latest/, ignores a
 * relative one).  False, no cache, with OOMDOC_NO_CACHE set to anything
 * but "" or "0", without either variable, or when the path does not fit.
 */
bool od_options_cache_dir(char *out, size_t cap);

#endif
