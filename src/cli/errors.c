/*
 * errors.c: the one place where oomdoc prints a diagnostic.  Each is one
 * line on standard error, "oomdoc: ..." or, for the live and probe
 * commands, "oomdoc live: ..."; an error with a location leads with it,
 * as a compiler does (file:line:col: message).
 */
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
		fputs(err->file, stderr);
		if (err->line > 0)
			fprintf(stderr, ":%llu", (unsigned long long)err->line);
		if (err->col > 0)
			fprintf(stderr, ":%llu", (unsigned long long)err->col);
		fputs(": ", stderr);
	}
	fprintf(stderr, "%s\n", err->msg);
}

void
cli_say(const char *label, const char *fmt, ...)
{
	va_list ap;

	cli_prefix(label);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
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
