/*
 * options.c: getopt_long's tables and the --help text, from one option
 * table; the values of --format and --color; and the scanner's option that
 * the environment sets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

void
od_options_getopt(const od_option *opts, int n, struct option *longopts,
    char *shortopts)
{
	size_t k = 0;
	int i;

	shortopts[k++] = ':';
	for (i = 0; i < n; i++) {
		longopts[i].name = opts[i].name;
		longopts[i].has_arg = opts[i].arg ? required_argument :
		    no_argument;
		longopts[i].flag = NULL;
		longopts[i].val = opts[i].letter;
		if (opts[i].letter < 256) {
			shortopts[k++] = (char)opts[i].letter;
			if (opts[i].arg)
				shortopts[k++] = ':';
		}
	}
	memset(&longopts[n], 0, sizeof longopts[0]);
	shortopts[k] = '\0';
}

void
od_options_help(FILE *out, const od_option *opts, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		const od_option *o = &opts[i];
		char left[48];

		if (o->letter < 256)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->letter,
			    o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name,
			    o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-26s %s\n", left, o->help);
	}
}

int
od_options_known(const od_option *opts, int n, int code)
{
	int i;

	for (i = 0; i < n; i++)
		if (code != 0 && code == opts[i].letter)
			return 1;
	return 0;
}

int
od_options_error(const char *label, const od_option *opts, int n, int c,
    const char *arg)
{
	char letter[2] = { (char)optopt, '\0' };
	bool is_long = strncmp(arg, "--", 2) == 0;

	if (c == ':')
		return is_long ? cli_usage(label, "this option needs an "
		    "argument:", arg) : cli_usage(label, "option requires an "
		    "argument --", letter);
	/* getopt sets optopt to a known option's code when only its
	 * argument was wrong (--count=3), and to 0 for an unknown long
	 * option. */
	if (is_long && optopt != 0 && od_options_known(opts, n, optopt))
		return cli_usage(label, "this option takes no argument:", arg);
	if (is_long || optopt <= ' ' || optopt > '~')
		return cli_usage(label, "unknown option", arg);
	return cli_usage(label, "unknown option --", letter);
}

bool
cli_format_parse(const char *arg, od_report_format *out)
{
	static const struct {
		const char *name;
		od_report_format format;
	} formats[] = {
		{ .name = "text", .format = OD_FORMAT_TEXT },
		{ .name = "json", .format = OD_FORMAT_JSON },
		{ .name = "markdown", .format = OD_FORMAT_MARKDOWN },
	};
	size_t i;

	for (i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (strcmp(arg, formats[i].name) == 0) {
			*out = formats[i].format;
			return true;
		}
	return false;
}

bool
cli_color_parse(const char *arg, cli_color *out)
{
	static const char *const names[] = {
		[CLI_COLOR_AUTO] = "auto",
		[CLI_COLOR_ALWAYS] = "always",
		[CLI_COLOR_NEVER] = "never",
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(arg, names[i]) == 0) {
			*out = (cli_color)i;
			return true;
		}
	return false;
}

bool
cli_color_wanted(cli_color when)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	/* The flag wins over the environment (no-color.org). */
	if (when != CLI_COLOR_AUTO)
		return when == CLI_COLOR_ALWAYS;
	if ((no != NULL && no[0] != '\0') ||
	    (term != NULL && strcmp(term, "dumb") == 0))
		return false;
	return isatty(STDOUT_FILENO);
}

/*
 * Whether the terminal takes UTF-8, for the sparkline of the memory
 * readings: standard output is a terminal and the locale's first set
 * variable of LC_ALL, LC_CTYPE and LANG names UTF-8.  OOMDOC_ASCII=1 turns
 * it off (the tests' flag); output to a file or a pipe is ASCII.
 */
bool
cli_utf8_wanted(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	const char *a = getenv("OOMDOC_ASCII"), *v = NULL;
	size_t i;

	if ((a != NULL && strcmp(a, "1") == 0) || !isatty(STDOUT_FILENO))
		return false;
	for (i = 0; i < sizeof vars / sizeof vars[0] && v == NULL; i++)
		if ((v = getenv(vars[i])) != NULL && v[0] == '\0')
			v = NULL;
	return v != NULL && (strstr(v, "UTF-8") != NULL ||
	    strstr(v, "utf-8") != NULL || strstr(v, "UTF8") != NULL ||
	    strstr(v, "utf8") != NULL);
}

int
cli_width(int given)
{
	struct winsize ws;
	const char *v = getenv("COLUMNS");

	if (given > 0)
		return given;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col >= CLI_WIDTH_MIN)
		return ws.ws_col > CLI_WIDTH_MAX ? CLI_WIDTH_MAX : ws.ws_col;
	if (v != NULL && v[0] != '\0') {
		char *end;
		long n = strtol(v, &end, 10);

		if (*end == '\0' && n >= CLI_WIDTH_MIN && n <= CLI_WIDTH_MAX)
			return (int)n;
	}
	return 80;
}

/* Whether to compile the patterns to machine code (PCRE2's JIT).  Only to
 * run under valgrind, which cannot see into JIT code, does OOMDOC_NO_JIT=1
 * turn it off: matching is the same, only slower. */
bool
od_options_jit(void)
{
	const char *v = getenv("OOMDOC_NO_JIT");

	return v == NULL || strcmp(v, "1") != 0;
}

bool
od_options_cache_dir(char *out, size_t cap)
{
	const char *off = getenv("OOMDOC_NO_CACHE");
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;

	if (off != NULL && off[0] != '\0' && strcmp(off, "0") != 0)
		return false;
	if (x != NULL && x[0] == '/')
		n = snprintf(out, cap, "%s/oomdoc", x);
	else if (h != NULL && h[0] == '/')
		n = snprintf(out, cap, "%s/.cache/oomdoc", h);
	else
		return false;
	return n > 0 && (size_t)n < cap;
}
