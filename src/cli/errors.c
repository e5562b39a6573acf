/*
 * errors.c: the one place where oomdoc prints a diagnostic.  Each is one
 * line on standard error, "oomdoc: ..." or, for the live and probe
 * commands, "oomdoc live: ..."; an error with a location leads with it,
 * as a compiler does (file:line:col: message).
 *
 * A diagnostic names files and quotes rule text, which come from outside:
 * each is written through od_escape_line, as the text report writes log
 * text, so that a file name or a rule holding an ESC, a C1 control or a
 * bidi override cannot drive the terminal.
 *
 * And the one check of standard output (cli_stdout_ok): every command's
 * output is flushed and checked before it exits.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "oomdoc: " or "oomdoc LABEL: ". */
static void
cli_prefix(const char *label)
{
	if (label != NULL)
		fprintf(stderr, "oomdoc %s: ", label);
	else
		fputs("oomdoc: ", stderr);
}

void
cli_error(const char *label, const od_error *err)
{
	cli_prefix(label);
	if (err->file[0] != '\0') {
		od_escape_line(stderr, err->file);
		if (err->line > 0)
			fprintf(stderr, ":%llu", (unsigned long long)err->line);
		if (err->col > 0)
			fprintf(stderr, ":%llu", (unsigned long long)err->col);
		fputs(": ", stderr);
	}
	od_escape_line(stderr, err->msg);
	fputc('\n', stderr);
}

void
cli_say(const char *label, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	/* Formatted first, then escaped whole: the arguments may be file
	 * names or rule text. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cli_prefix(label);
	od_escape_line(stderr, msg);
	fputc('\n', stderr);
}

int
cli_usage(const char *label, const char *what, const char *word)
{
	cli_say(label, "%s '%s' (see oomdoc%s%s --help)", what, word,
	    label != NULL ? " " : "", label != NULL ? label : "");
	return OD_EXIT_ERROR;
}

bool
cli_nomem(const od_error *err)
{
	static const char nomem[] = "out of memory";
	size_t n = strlen(err->msg);

	return n >= sizeof nomem - 1 &&
	    strcmp(err->msg + n - (sizeof nomem - 1), nomem) == 0;
}

int
cli_rule_errors(const char *label, const rl_errors *errs)
{
	int i;

	/* Out of memory is not an error in the rules: the one line that says
	 * so, status 2, and none of the errors that followed from it. */
	for (i = 0; i < errs->n; i++)
		if (cli_nomem(&errs->v[i])) {
			cli_error(label, &errs->v[i]);
			return OD_EXIT_ERROR;
		}
	for (i = 0; i < errs->n; i++)
		cli_error(label, &errs->v[i]);
	if (errs->dropped > 0)
		cli_say(label, "%d more errors in the rules", errs->dropped);
	return OD_EXIT_RULES;
}

bool
cli_stdout_ok(const char *label)
{
	static bool said;
	int e;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return true;
	e = errno;
	if (!said)
		cli_say(label, "cannot write to standard output%s%s",
		    e != 0 ? ": " : "", e != 0 ? strerror(e) : "");
	said = true;
	return false;
}

int
cli_finish(const char *label, int status)
{
	if (!cli_stdout_ok(label) && (status == OD_EXIT_FOUND ||
	    status == OD_EXIT_NONE))
		return OD_EXIT_ERROR;
	return status;
}
