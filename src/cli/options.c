/*
 * options.c: getopt_long's tables and the --help text, from one option
 * table; and the scanner's option that the environment sets.
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

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

bool
od_options_jit(void)
{
	const char *v = getenv("OOMDOC_NO_JIT");

	return v == NULL || strcmp(v, "1") != 0;
}
