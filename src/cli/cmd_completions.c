/*
 * cmd_completions.c: oomdoc completions bash|zsh|fish, the shell
 * completion scripts, made from the option tables of diagnosis
 * (cmd_diagnose.c, which `oomdoc rules` shares) and of live mode
 * (cmd_live.c), so that a new option completes without anyone writing it
 * into three scripts.  The build writes them into build/share and the
 * install puts them where bash-completion, zsh and fish look.
 *
 * An option's argument completes from what the option takes: the words
 * its table entry lists (od_option.values: --format, --color, --backend),
 * the kinds for --kind (the names of od_kind_name), file names for a PATH
 * or FILE, and nothing otherwise.  The operands complete as file names,
 * the subcommands as the first word, and the verbs of `oomdoc rules` as
 * its second.
 */
#include <string.h>

#include "cli.h"

/* The subcommands, as the first word. */
static const char cp_commands[] = "rules live probe completions";
static const char cp_rules_verbs[] = "check list show facts";

/* The words an option's argument completes from into buf ("" for none):
 * its values, or the kinds. */
static void
cp_values(const od_option *o, char *buf, size_t cap)
{
	size_t at = 0;
	int k;

	buf[0] = '\0';
	if (o->values != NULL) {
		snprintf(buf, cap, "%s", o->values);
		return;
	}
	if (o->arg == NULL || strcmp(o->arg, "KIND") != 0)
		return;
	for (k = 0; k < OD_KIND_COUNT; k++) {
		int n = snprintf(buf + at, cap - at, "%s%s", k ? " " : "",
		    od_kind_name((od_kind)k));

		if (n < 0 || (size_t)n >= cap - at)
			break;
		at += (size_t)n;
	}
}

/* Whether an option's argument is a file name. */
static bool
cp_is_file(const od_option *o)
{
	return o->arg != NULL && (strcmp(o->arg, "PATH") == 0 ||
	    strcmp(o->arg, "FILE") == 0);
}

/* bash: one function; the options of the subcommand being completed. */
static void
cp_bash_options(FILE *out, const od_option *opts, int n)
{
	char vals[1024];
	int i;

	fputs("\t\tcase $prev in\n", out);
	for (i = 0; i < n; i++) {
		const od_option *o = &opts[i];

		if (o->arg == NULL)
			continue;
		fputs("\t\t", out);
		if (o->letter < 256)
			fprintf(out, "-%c|", o->letter);
		fprintf(out, "--%s)\n", o->name);
		cp_values(o, vals, sizeof vals);
		if (vals[0] != '\0')
			fprintf(out, "\t\t\tCOMPREPLY=($(compgen -W '%s' -- "
			    "\"$cur\"))\n", vals);
		else if (cp_is_file(o))
			fputs("\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n", out);
		else
			fputs("\t\t\tCOMPREPLY=()\n", out);
		fputs("\t\t\treturn ;;\n", out);
	}
	fputs("\t\tesac\n\t\topts='", out);
	for (i = 0; i < n; i++) {
		if (opts[i].letter < 256)
			fprintf(out, "-%c ", opts[i].letter);
		fprintf(out, "--%s%s", opts[i].name, i + 1 < n ? " " : "");
	}
	fputs("'\n", out);
}

static void
cp_bash(FILE *out, const od_option *dg, int ndg, const od_option *lv, int nlv)
{
	fputs("# bash completion for oomdoc(1), made by `oomdoc completions "
	    "bash` from its\n# option tables.\n"
	    "_oomdoc()\n{\n"
	    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= sub= opts\n"
	    "\t[ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	    "\t[ \"$COMP_CWORD\" -gt 1 ] && sub=${COMP_WORDS[1]}\n"
	    "\tcase $sub in\n\tlive|probe)\n", out);
	cp_bash_options(out, lv, nlv);
	fputs("\t\t;;\n\tcompletions)\n"
	    "\t\tCOMPREPLY=($(compgen -W 'bash zsh fish' -- \"$cur\"))\n"
	    "\t\treturn ;;\n\t*)\n", out);
	cp_bash_options(out, dg, ndg);
	fprintf(out, "\t\t;;\n\tesac\n"
	    "\tif [[ $cur == -* ]]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	    "\telif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\") "
	    "$(compgen -f -- \"$cur\"))\n"
	    "\telif [ \"$sub\" = rules ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n"
	    "\telse\n"
	    "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	    "\tfi\n}\n"
	    "complete -o filenames -F _oomdoc oomdoc\n", cp_commands,
	    cp_rules_verbs);
}

/* zsh: an _arguments spec per option; help in [...] with []:\ escaped. */
static void
cp_zsh_help(FILE *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
			fputc('\\', out);
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
}

static void
cp_zsh_options(FILE *out, const od_option *opts, int n)
{
	char vals[1024];
	int i;

	for (i = 0; i < n; i++) {
		const od_option *o = &opts[i];

		fputs("\t\t", out);
		if (o->letter < 256)
			fprintf(out, "'(-%c --%s)'{-%c%s,--%s%s}'[", o->letter,
			    o->name, o->letter, o->arg ? "+" : "", o->name,
			    o->arg ? "=" : "");
		else
			fprintf(out, "'--%s%s[", o->name, o->arg ? "=" : "");
		cp_zsh_help(out, o->help);
		fputc(']', out);
		if (o->arg != NULL) {
			cp_values(o, vals, sizeof vals);
			fprintf(out, ":%s:", o->arg);
			if (vals[0] != '\0')
				fprintf(out, "(%s)", vals);
			else if (cp_is_file(o))
				fputs("_files", out);
			else
				fputs(" ", out);
		}
		fputs("' \\\n", out);
	}
}

static void
cp_zsh(FILE *out, const od_option *dg, int ndg, const od_option *lv, int nlv)
{
	fputs("#compdef oomdoc\n# zsh completion for oomdoc(1), made by "
	    "`oomdoc completions zsh` from its\n# option tables.\n"
	    "_oomdoc() {\n"
	    "\tcase $words[2] in\n\tlive|probe)\n"
	    "\t\tshift words; (( CURRENT-- ))\n\t\t_arguments -s \\\n", out);
	cp_zsh_options(out, lv, nlv);
	fputs("\t\t\t'*:log:_files' ;;\n\tcompletions)\n"
	    "\t\t_arguments '2:shell:(bash zsh fish)' ;;\n\trules)\n"
	    "\t\tshift words; (( CURRENT-- ))\n\t\t_arguments -s \\\n", out);
	cp_zsh_options(out, dg, ndg);
	fprintf(out, "\t\t\t'1:verb:(%s)' '*:path:_files' ;;\n\t*)\n"
	    "\t\t_arguments -s \\\n", cp_rules_verbs);
	cp_zsh_options(out, dg, ndg);
	fprintf(out, "\t\t\t'1:log or subcommand:{_alternative "
	    "\"commands:subcommand:(%s)\" \"files:log:_files\"}' "
	    "'*:log:_files' ;;\n"
	    "\tesac\n}\n_oomdoc \"$@\"\n", cp_commands);
}

/* fish: one complete line per option, under the subcommand's
 * condition. */
static void
cp_fish_text(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s != '\0'; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('\'', out);
}

static void
cp_fish_options(FILE *out, const char *cond, const od_option *opts, int n)
{
	char vals[1024];
	int i;

	for (i = 0; i < n; i++) {
		const od_option *o = &opts[i];

		fprintf(out, "complete -c oomdoc -n '%s'", cond);
		if (o->letter < 256)
			fprintf(out, " -s %c", o->letter);
		fprintf(out, " -l %s", o->name);
		if (o->arg != NULL) {
			cp_values(o, vals, sizeof vals);
			if (vals[0] != '\0')
				fprintf(out, " -x -a '%s'", vals);
			else if (cp_is_file(o))
				fputs(" -r -F", out);
			else
				fputs(" -x", out);
		}
		fputs(" -d ", out);
		cp_fish_text(out, o->help);
		fputc('\n', out);
	}
}

static void
cp_fish(FILE *out, const od_option *dg, int ndg, const od_option *lv, int nlv)
{
	fprintf(out, "# fish completion for oomdoc(1), made by `oomdoc "
	    "completions fish` from its\n# option tables.\n"
	    "complete -c oomdoc -n '__fish_use_subcommand' -a '%s'\n"
	    "complete -c oomdoc -n '__fish_seen_subcommand_from completions' "
	    "-x -a 'bash zsh fish'\n"
	    "complete -c oomdoc -n '__fish_seen_subcommand_from rules; and not "
	    "__fish_seen_subcommand_from %s' -x -a '%s'\n", cp_commands,
	    cp_rules_verbs, cp_rules_verbs);
	cp_fish_options(out, "__fish_seen_subcommand_from live probe", lv, nlv);
	cp_fish_options(out, "not __fish_seen_subcommand_from live probe "
	    "completions", dg, ndg);
}

int
cmd_completions(const cli_command *cmd, int argc, char **argv)
{
	const char *shell = argc > 1 ? argv[1] : "";
	const od_option *dg, *lv;
	int ndg, nlv;

	if (strcmp(shell, "-h") == 0 || strcmp(shell, "--help") == 0) {
		fputs("Usage: oomdoc completions bash|zsh|fish\n"
		    "Print the shell completion script for bash, zsh or fish, "
		    "made from oomdoc's\noption tables.  Load it with, e.g., "
		    "source <(oomdoc completions bash).\n"
		    "Exit status: 0, or 2 for another shell.  See oomdoc(1).\n",
		    stdout);
		return 0;
	}
	if (argc != 2)
		return cli_usage(cmd->label, "completions takes bash, zsh or "
		    "fish, not", argc > 2 ? argv[2] : "nothing");
	dg = dg_option_table(&ndg);
	lv = lv_option_table(&nlv);
	if (strcmp(shell, "bash") == 0)
		cp_bash(stdout, dg, ndg, lv, nlv);
	else if (strcmp(shell, "zsh") == 0)
		cp_zsh(stdout, dg, ndg, lv, nlv);
	else if (strcmp(shell, "fish") == 0)
		cp_fish(stdout, dg, ndg, lv, nlv);
	else
		return cli_usage(cmd->label, "completions takes bash, zsh or "
		    "fish, not", shell);
	return cli_stdout_ok(cmd->label) ? 0 : OD_EXIT_ERROR;
}
