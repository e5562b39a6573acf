/*
 * error.c: errors as values, with the place they were found (od_error).
 * The library fills them in; the command prints them (src/cli/errors.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

void
od_error_set(od_error *err, const char *file, uint64_t line, uint64_t col,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	snprintf(err->file, sizeof err->file, "%s", file != NULL ? file : "");
	err->line = line;
	err->col = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}
