/*
 * rules_dir.c: the one rules loader of the command, for diagnose, rules,
 * and live: the shipped rules, then OOMDOC_RULES, then each --rules.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool
cli_rules_load(const cli_rules *o, rl_set *rules, rl_errors *errs)
{
	const char *env = getenv("OOMDOC_RULES");
	bool ok = true;
	int i;

	if (o->shipped)
		ok &= rl_load(rules, rl_default_dir(), errs);
	if (env != NULL && env[0] != '\0') {
		char *copy = strdup(env), *save = NULL, *dir;

		for (dir = copy != NULL ? strtok_r(copy, ":", &save) : NULL;
		    dir != NULL; dir = strtok_r(NULL, ":", &save))
			ok &= rl_load(rules, dir, errs);
		free(copy);
	}
	for (i = 0; i < o->npaths; i++)
		ok &= rl_load(rules, o->paths[i], errs);
	return ok;
}

int
cli_rules_open(const char *label, const cli_rules *o, rl_set **out)
{
	rl_errors *errs = calloc(1, sizeof *errs);
	int status = -1;

	*out = rl_new();
	if (*out == NULL || errs == NULL) {
		free(errs);
		cli_say(label, "out of memory");
		return OD_EXIT_ERROR;
	}
	if (!cli_rules_load(o, *out, errs))
		status = cli_rule_errors(label, errs);
	free(errs);
	return status;
}
