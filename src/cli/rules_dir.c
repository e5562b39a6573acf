/*
 * rules_dir.c: the one rules loader of the command, for diagnose, rules,
 * and live: the shipped rules, then OOMDOC_RULES, then each --rules.
 *
 * The shipped rules are found from the program's own location at run
 * time, as git does with RUNTIME_PREFIX (git's exec-cmd.c,
 * git_get_exec_path_procfs): the directory of /proc/self/exe joined with
 * OOMDOC_RULES_FROM_BINDIR, the path from the installed bin directory to
 * the installed rules, which CMake gives.  So an installed tree copied
 * elsewhere still finds its own rules, and a binary in the build tree,
 * which mirrors the installed layout (bin/oomdoc beside
 * share/oomdoc/rules), finds the source tree's rules, never an older
 * installed copy.  There is no other place: a missing directory is an
 * error that names the path tried.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef OOMDOC_RULES_FROM_BINDIR
#define OOMDOC_RULES_FROM_BINDIR "../share/oomdoc/rules"
#endif

/*
 * Joins the directory dir (absolute, with no "." or ".." component, as
 * /proc/self/exe gives it) and rel, dropping one of dir's components for
 * each leading "../" of rel.  False when out is too small.
 */
static bool
cli_join(char *dir, const char *rel, char *out, size_t len)
{
	int w;

	for (;;) {
		if (strncmp(rel, "./", 2) == 0) {
			rel += 2;
		} else if (strncmp(rel, "../", 3) == 0 || strcmp(rel, "..") == 0) {
			char *slash = strrchr(dir, '/');

			if (slash != NULL)
				*slash = '\0';
			rel += rel[2] == '/' ? 3 : 2;
		} else {
			break;
		}
	}
	/* dir is "" when the climb reached the root. */
	w = snprintf(out, len, "%s/%s", dir, rel);
	return w > 0 && (size_t)w < len;
}

bool
cli_rules_dir(char *out, size_t len, od_error *err)
{
	char exe[PATH_MAX];
	struct stat st;
	ssize_t n;
	char *slash;

	out[0] = '\0';
	if (OOMDOC_RULES_FROM_BINDIR[0] == '/') {
		/* An absolute path from CMake: no lookup to do. */
		snprintf(out, len, "%s", OOMDOC_RULES_FROM_BINDIR);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0 || exe[0] != '/') {
			od_error_set(err, "/proc/self/exe", 0, 0, "cannot find the "
			    "shipped rules from the program's location: %s",
			    n < 0 ? strerror(errno) : "not an absolute path");
			return false;
		}
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		*slash = '\0';
		if (!cli_join(exe, OOMDOC_RULES_FROM_BINDIR, out, len)) {
			od_error_set(err, NULL, 0, 0, "cannot find the shipped "
			    "rules: the path is longer than %zu bytes", len - 1);
			out[0] = '\0';
			return false;
		}
	}
	if (stat(out, &st) != 0) {
		od_error_set(err, out, 0, 0, "cannot open the shipped rules "
		    "directory: %s", strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		od_error_set(err, out, 0, 0, "cannot open the shipped rules "
		    "directory: not a directory");
		return false;
	}
	return true;
}

/* Adds one error to errs, as the loader would. */
static void
cli_rules_error(rl_errors *errs, const od_error *err)
{
	if (errs->n < RL_ERRORS_MAX)
		errs->v[errs->n++] = *err;
	else
		errs->dropped++;
}

bool
cli_rules_load(const cli_rules *o, rl_set *rules, rl_errors *errs)
{
	const char *env = getenv("OOMDOC_RULES");
	bool ok = true;
	int i;

	if (o->shipped) {
		char dir[PATH_MAX];
		od_error err;

		memset(&err, 0, sizeof err);
		if (cli_rules_dir(dir, sizeof dir, &err)) {
			ok &= rl_load(rules, dir, errs);
		} else {
			cli_rules_error(errs, &err);
			ok = false;
		}
	}
	if (env != NULL && env[0] != '\0') {
		char *copy = strdup(env), *save = NULL, *dir;

		if (copy == NULL) {
			od_error err;

			od_error_set(&err, NULL, 0, 0, "out of memory");
			cli_rules_error(errs, &err);
			ok = false;
		}
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
