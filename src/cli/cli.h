/*
 * cli.h: the command's own header.  src/cli is the only code that parses
 * argv, prints diagnostics and picks exit statuses; the libraries below
 * it (src/lib, src/live) return values and od_error.
 *
 *   main.c          the table of subcommands, and the dispatch
 *   cmd_diagnose.c  oomdoc [OPTION]... [FILE]...: its options, --help,
 *                   --version, and the diagnosis
 *   cmd_rules.c     oomdoc rules check|list|show|facts
 *   cmd_live.c      oomdoc live and oomdoc probe: options, --help,
 *                   signals, and the exit status of a live session
 *   live.c          the input of oomdoc live: a log or a JSON report
 *   rules_dir.c     the one rules loader: the shipped rules (found from
 *                   the program's own location), OOMDOC_RULES, --rules
 *   errors.c        the one error printer, and the one check of
 *                   standard output before exit
 *   options.c       option tables, and --format and --color
 *   follow.c        --follow: a growing log read as tail -F reads it
 *
 * The command is built on the core's own headers, not on the public
 * oomdoc.h, which has what an embedding program needs: scanning, rules
 * and facts, every report format, and joining a snapshot
 * (oomdoc_scanner_join_snapshot).  What only the command needs stays
 * internal: its input policy (a snapshot named as an input, --follow,
 * the --summary triage table, the --line-buffered text report in parts),
 * the text report's width and abridged messages (the library's text
 * report is -v --width 0), the checks of `oomdoc rules check` and the
 * listings of `rules list|show`, the recognisers stopped at PCRE2's
 * limits (named in a diagnostic), and live mode (src/live).
 */
#ifndef OD_CLI_H
#define OD_CLI_H

#include <signal.h>

#include "core.h"
#include "facts.h"
#include "options.h"
#include "rules.h"
#include "session.h"

/* --- main.c: the subcommands ---------------------------------------- */

typedef struct cli_command cli_command;
struct cli_command {
	const char *name;       /* the argv[1] that picks it */
	/* Picked when argv[1] names no other subcommand; its name is not
	 * given. */
	bool implicit;
	/* Its name in diagnostics, "oomdoc live: ...", or NULL for plain
	 * "oomdoc: ...". */
	const char *label;
	/* Runs it; argv[0] is its name (the program's name for the
	 * implicit one), so getopt starts at argv[1].  Returns the exit
	 * status. */
	int (*run)(const cli_command *cmd, int argc, char **argv);
};

int cmd_diagnose(const cli_command *cmd, int argc, char **argv);
int cmd_rules(const cli_command *cmd, int argc, char **argv);
int cmd_live(const cli_command *cmd, int argc, char **argv);
int cmd_completions(const cli_command *cmd, int argc, char **argv);

/* The option tables of diagnosis (and rules) and of live mode, for the
 * completions: *n receives the number of options. */
const od_option *dg_option_table(int *n);
const od_option *lv_option_table(int *n);

/* --- errors.c: diagnostics, each one line on standard error ----------- */

/* "oomdoc[ LABEL]: FILE:LINE:COL: MESSAGE", the location's parts where
 * err has them. */
void cli_error(const char *label, const od_error *err);

/* "oomdoc[ LABEL]: MESSAGE". */
void cli_say(const char *label, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A usage error: what is wrong, the word at fault, a pointer to --help.
 * Returns OD_EXIT_ERROR. */
int cli_usage(const char *label, const char *what, const char *word);

/* True when err says memory ran out (the library's message for it ends
 * "out of memory", after the place it happened). */
bool cli_nomem(const od_error *err);

/* The errors of a rules load, and how many more there were.  Returns
 * OD_EXIT_RULES; or, when memory ran out, prints only that error and
 * returns OD_EXIT_ERROR. */
int cli_rule_errors(const char *label, const rl_errors *errs);

/* Flushes standard output and checks that everything written to it was
 * written (not on a full disk, a closed descriptor or a pipe whose reader
 * left: SIGPIPE is ignored, so that is EPIPE).  False, with the error
 * printed (once a run), when it was not. */
bool cli_stdout_ok(const char *label);

/* The exit status of a command that returned status: OD_EXIT_ERROR when
 * its output could not be written and status was 0 or 1, status
 * otherwise (a rules, device or signal status says more).  main calls it
 * after every command. */
int cli_finish(const char *label, int status);

/* --- rules_dir.c: the rules loader ------------------------------------ */

#define CLI_RULES_MAX 32        /* --rules given at most */

/* The rules the options ask for. */
typedef struct {
	bool shipped;           /* false after --no-default-rules */
	const char *paths[CLI_RULES_MAX];       /* each --rules */
	int npaths;
} cli_rules;

/*
 * The directory of the shipped rules: the program's own directory (read
 * from /proc/self/exe) joined with OOMDOC_RULES_FROM_BINDIR, the path
 * from the installed bin directory to the installed rules.  out holds the
 * path tried ("" when the program's location could not be read).  False,
 * with err set, when it is not a directory that can be read.
 */
bool cli_rules_dir(char *out, size_t len, od_error *err);

/*
 * Loads into rules the shipped rules (unless o->shipped is false), then
 * the files and directories of OOMDOC_RULES (colon-separated), then each
 * of o->paths, a later rule replacing an earlier one with the same id.
 * Returns false when there was an error; errs holds them all, a missing
 * shipped rules directory among them.
 */
bool cli_rules_load(const cli_rules *o, rl_set *rules, rl_errors *errs);

/* cli_rules_load into a new set (*out, freed with rl_free), the errors
 * printed.  Returns -1, or the exit status: OD_EXIT_RULES after an error
 * in the rules, OD_EXIT_ERROR out of memory. */
int cli_rules_open(const char *label, const cli_rules *o, rl_set **out);

/* --- options.c: option tables, --format and --color ------------------- */

/* --format: text, markdown or json (diagnosis also takes jsonl, in
 * cmd_diagnose.c: live mode has no stream of events to write). */
bool cli_format_parse(const char *arg, od_report_format *out);

/* --color: auto, always or never. */
typedef enum { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER } cli_color;
bool cli_color_parse(const char *arg, cli_color *out);

/* Whether the text report is coloured: always; or auto, standard output
 * is a terminal, NO_COLOR is unset or empty and TERM is not "dumb". */
bool cli_color_wanted(cli_color when);
bool cli_utf8_wanted(void);

/* The text report's width: given (--width) when not 0, else the
 * terminal's when standard output is one (TIOCGWINSZ), else $COLUMNS
 * when it is a number from CLI_WIDTH_MIN to CLI_WIDTH_MAX, else 80. */
#define CLI_WIDTH_MIN 20
#define CLI_WIDTH_MAX 1000
int cli_width(int given);

/* --- cmd_diagnose.c: the options that diagnose and rules share -------- */

/* What diagnose prints: the report, or one of grep's modes. */
typedef enum {
	DG_REPORT,              /* the report (default) */
	DG_COUNT,               /* -c: failures per input */
	DG_WITH,                /* -l: the inputs with a failure */
	DG_WITHOUT,             /* -L: the inputs read without one */
	DG_QUIET,               /* -q: nothing, the status */
	DG_SUMMARY              /* --summary: a row per input */
} dg_mode;

typedef struct {
	od_report_opts report;
	cli_color color;
	cli_rules rules;
	fc_user_facts facts;
	int zstd_window_log;    /* --zstd-window-log */
	dg_mode mode;           /* the last of -c, -l, -L, -q, --summary */
	int max_count;          /* -m: events per input, 0 no limit */
	int rank;               /* --rank, -1 any */
	int kind;               /* --kind (an od_kind), -1 any */
	int width;              /* --width, 0 when not given */
	const char *fact_args[FC_USER_MAX];     /* each --fact, as given */
	bool follow;            /* --follow: the one file, as tail -F */
	bool line_buffered;     /* --line-buffered: each event of the text
	                         * report as soon as it is complete */
	const char *snapshot;   /* --snapshot: a memory snapshot, or NULL */
	bool list_anchors;      /* --list-anchors, printed once the rules
	                         * (and their recognisers) are loaded */
} dg_config;

/* The defaults: text, colour auto, the shipped rules. */
void dg_defaults(dg_config *cfg);

/*
 * Parses the options of argv (argv[0] is not one) as `oomdoc` takes
 * them.  Returns -1 to go on, with optind at the first operand, or the
 * status to exit with after --help, --version, --list-anchors or a usage
 * error.
 */
int dg_parse(int argc, char **argv, dg_config *cfg);

/* --- follow.c: --follow ---------------------------------------------- */

#define CLI_FOLLOW_POLL_MS 100  /* the wait at the end of the file */
#define CLI_FOLLOW_IDLE_MS 500  /* the pause after which events are flushed */
#define CLI_FOLLOW_SETTLE_MS 2000 /* and after which the last line is too */

/*
 * Scans path as od_scan_path does, but follows it as `tail -F` does: at
 * its end, waits for more (rotation by rename and truncation included:
 * the file at the name is then read from its start, as the same input)
 * until *stop is set (by a signal), which marks info incomplete.  Fills in
 * *info (info->name is the caller's to free).  False with err set when it
 * could not be opened or read.
 */
bool cli_follow(od_scanner *sc, const char *path, int index, od_input *info,
    od_events *set, volatile sig_atomic_t *stop, od_error *err);

/* --- live.c: the input of oomdoc live --------------------------------- */

typedef struct lv_input lv_input;

lv_input *lv_input_new(void);
void lv_input_free(lv_input *in);

/*
 * Reads path ("-": standard input): a JSON report made earlier
 * (recognised by its first bytes), or a log, scanned and diagnosed with
 * the rules r names.  Errors are printed under label.  Returns -1 when it
 * was read, or the status to exit with.
 */
int lv_input_load(lv_input *in, const char *label, const char *path,
    const cli_rules *r);

/* The input's events with their inputs' names and kinds, for the session:
 * a new array of *n items (freed by the caller), NULL when out of memory.
 * The items borrow from in. */
lv_item *lv_input_items(const lv_input *in, size_t *n);

/* The input's name, as the report shows it (borrowed from in). */
const char *const *lv_input_names(const lv_input *in, int *n);

#endif
