/*
 * cmd_diagnose.c: oomdoc [OPTION]... [FILE]..., the diagnosis.  It loads
 * the rules, runs the scanner over each input, applies the rules to each
 * event, writes the report and turns the outcome into an exit status.
 *
 * The option table below is the one list of the options that diagnose
 * and `oomdoc rules` take: getopt_long's table and --help are made from
 * it, and tests/cli_docs.sh checks that the man page documents exactly
 * these.
 *
 * Many inputs.  The report merges the same failure across inputs (its
 * event lists every input, event.c); the grep-like modes (-c, -l, -L) and
 * --summary read each input into a set of its own, as `oomdoc FILE` would
 * alone, so that what they say of an input is what running on that input
 * alone says.  --format jsonl does the same, and writes each event as soon
 * as the scanner delivers it.
 *
 * Signals.  SIGTERM and SIGINT stop the reading: the input being read is
 * finished with what was read (marked incomplete), the others are not
 * read, the report of what was read is written, and the exit status is
 * 128 + the signal's number.  Standard input is waited on with poll(),
 * which a signal ends; a named FIFO is read without it, and a second
 * signal ends a run that waits there.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "input.h"
#include "live.h"
#include "recog_table.h"
#include "report.h"
#include "snapshot.h"

enum {
	OPT_COLOR = 256, OPT_LIST_ANCHORS, OPT_RULES, OPT_NO_DEFAULT_RULES,
	OPT_FACT, OPT_ZSTD_WINDOW_LOG, OPT_RANK, OPT_KIND, OPT_SUMMARY,
	OPT_WIDTH,
	OPT_FOLLOW,
	OPT_SNAPSHOT,
	OPT_LINE_BUFFERED
};

static const od_option dg_options[] = {
	{ .name = "format", .letter = 'f', .arg = "FORMAT",
	  .help = "report format: text (default), markdown, json, jsonl "
	  "(one event a line, as soon as it is complete), github (GitHub "
	  "Actions annotations), prometheus (metrics for node_exporter's "
	  "textfile collector) or html (one self-contained page with SVG "
	  "charts)",
	  .values = "text markdown json jsonl github prometheus html" },
	{ .name = "count", .letter = 'c',
	  .help = "print the number of failures of each input (NAME:N), "
	  "and no report" },
	{ .name = "files-with-oom", .letter = 'l',
	  .help = "print the name of each input with a failure, and no "
	  "report" },
	{ .name = "files-without-oom", .letter = 'L',
	  .help = "print the name of each input read without a failure, and "
	  "no report" },
	{ .name = "quiet", .letter = 'q',
	  .help = "print nothing: the exit status says it" },
	{ .name = "summary", .letter = OPT_SUMMARY,
	  .help = "print one row per input: events, kind, top cause, "
	  "fingerprint (a JSON document with --format json)" },
	{ .name = "follow", .letter = OPT_FOLLOW,
	  .help = "read the one FILE as it grows, as tail -F does (rotation "
	  "and truncation too), until SIGINT or SIGTERM" },
	{ .name = "line-buffered", .letter = OPT_LINE_BUFFERED,
	  .help = "write each event of the text report as soon as it is "
	  "complete, and the count of events at the end (--format jsonl "
	  "always does)" },
	{ .name = "max-count", .letter = 'm', .arg = "N",
	  .help = "keep the first N events of each input" },
	{ .name = "rank", .letter = OPT_RANK, .arg = "N",
	  .help = "keep only the reports of rank N" },
	{ .name = "kind", .letter = OPT_KIND, .arg = "KIND",
	  .help = "keep only the events of this kind (as in the JSON report, "
	  "e.g. host_oom_killer)" },
	{ .name = "color", .letter = OPT_COLOR, .arg = "WHEN",
	  .help = "colour the text report: auto (default), always or never",
	  .values = "auto always never" },
	{ .name = "width", .letter = OPT_WIDTH, .arg = "N",
	  .help = "wrap the text report at N columns (default: the "
	  "terminal's, else $COLUMNS, else 80; 20 to 1000, or 0 for none)" },
	{ .name = "verbose", .letter = 'v',
	  .help = "show each message in full in the text report (it shows "
	  "about three lines)" },
	{ .name = "rules", .letter = OPT_RULES, .arg = "PATH",
	  .help = "load rules from this file or directory too (repeatable)" },
	{ .name = "no-default-rules", .letter = OPT_NO_DEFAULT_RULES,
	  .help = "do not load the shipped rules" },
	{ .name = "fact", .letter = OPT_FACT, .arg = "NAME=VALUE",
	  .help = "give a fact the log lacks, e.g. batch_size=32 (repeatable)" },
	{ .name = "snapshot", .letter = OPT_SNAPSHOT, .arg = "FILE",
	  .help = "join this PyTorch memory snapshot (pickle or JSON) to the "
	  "logs' failure on its device" },
	{ .name = "zstd-window-log", .letter = OPT_ZSTD_WINDOW_LOG, .arg = "N",
	  .help = "read zstd frames whose window is up to 2^N bytes (default "
	  "23: 8 MiB; 10 to 31)" },
	{ .name = "list-anchors", .letter = OPT_LIST_ANCHORS,
	  .help = "print the fixed strings the prefilter looks for, and exit" },
	{ .name = "help", .letter = 'h', .help = "print this help, and exit" },
	{ .name = "version", .letter = 'V',
	  .help = "print the version, and exit" },
};

#define DG_NOPTS ((int)(sizeof dg_options / sizeof dg_options[0]))

const od_option *
dg_option_table(int *n)
{
	*n = DG_NOPTS;
	return dg_options;
}

static void
dg_help(FILE *out)
{
	fputs("Usage: oomdoc [OPTION]... [FILE]...\n"
	    "       oomdoc rules check|list|show|facts [OPTION]... [PATH|ID]...\n"
	    "       oomdoc live [OPTION]... [LOG|REPORT.json|-]\n"
	    "       oomdoc probe [OPTION]...\n"
	    "       oomdoc completions bash|zsh|fish\n"
	    "Find the out-of-memory failures in the logs of GPU jobs and show "
	    "their numbers.\n"
	    "With no FILE, or when FILE is -, read standard input.  Plain, "
	    "gzip, zstd,\nbzip2 and xz input, UTF-16 with a byte order mark, "
	    "and the JSON-lines records\nof log shippers (Fluent Bit, Loki, "
	    "Vector, journald, Docker) and CRI lines are\nrecognised by their "
	    "bytes (see INPUT in oomdoc(1)), and so is a PyTorch\nmemory "
	    "snapshot (a pickle or its JSON form) named as a FILE.\n\n"
	    "Subcommands (each takes --help): rules (check, list and show the "
	    "rules), live\n(confirm causes on a GPU), probe (check a GPU), "
	    "completions (shell completion\nscripts).\n\n"
	    "Options:\n", out);
	od_options_help(out, dg_options, DG_NOPTS);
	fputs("\nFormats, for example:\n"
	    "  oomdoc -f markdown job.log > ticket.md   a bug ticket\n"
	    "  oomdoc -f json job.log | jq .summary     schema oomdoc.report/2 "
	    "(share/oomdoc/schema)\n"
	    "  tail -f job.log | oomdoc -f jsonl        each event as it "
	    "completes\n"
	    "  oomdoc --follow -f jsonl job.log         the same, following "
	    "the file as tail -F\n"
	    "  oomdoc -f github train.log               GitHub Actions "
	    "annotations\n"
	    "  oomdoc -f prometheus job.log > x.prom    node_exporter's "
	    "textfile collector\n"
	    "  oomdoc -f html job.log > report.html     one page with charts, "
	    "no script\n", out);
	fputs("\nExit status: 0 if an out-of-memory failure was found, 1 if "
	    "none was (warnings\nalone are not one), 2 on a usage or input "
	    "error, 3 on an error in the rules,\n128+N after signal N (the "
	    "report of what was read is written).  See oomdoc(1).\n", out);
}

/* The version, what live mode is built with, and the shipped rules'
 * directory (or the path tried, and why it cannot be used). */
static void
dg_version(FILE *out)
{
	char dir[PATH_MAX];
	od_error err;

	memset(&err, 0, sizeof err);
	fprintf(out, "oomdoc %s\n%s\n", OD_VERSION, od_live_version_line());
	/* The path is the program's own location: escaped, as any name
	 * from outside is. */
	fputs("Shipped rules: ", out);
	if (cli_rules_dir(dir, sizeof dir, &err)) {
		od_escape_line(out, dir);
	} else {
		fputs("none (", out);
		od_escape_line(out, err.file);
		fputs(err.file[0] != '\0' ? ": " : "", out);
		od_escape_line(out, err.msg);
		fputc(')', out);
	}
	fputc('\n', out);
}

void
dg_defaults(dg_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->report.format = OD_FORMAT_TEXT;
	cfg->color = CLI_COLOR_AUTO;
	cfg->rules.shipped = true;
	cfg->zstd_window_log = IN_ZSTD_WINDOW_LOG;
	cfg->mode = DG_REPORT;
	cfg->rank = -1;
	cfg->kind = -1;
}

/* A whole number from lo to INT_MAX, or -1. */
static int
dg_number(const char *arg, int lo)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (end == arg || *end != '\0' || errno != 0 || v < lo || v > INT_MAX)
		return -1;
	return (int)v;
}

int
dg_parse(int argc, char **argv, dg_config *cfg)
{
	struct option longopts[DG_NOPTS + 1];
	char shortopts[2 * DG_NOPTS + 2];
	od_error err;
	int c;

	od_options_getopt(dg_options, DG_NOPTS, longopts, shortopts);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *arg = argv[optind - 1];

		switch (c) {
		case 'f':
			if (strcmp(optarg, "jsonl") == 0)
				cfg->report.format = OD_FORMAT_JSONL;
			else if (strcmp(optarg, "github") == 0)
				cfg->report.format = OD_FORMAT_GITHUB;
			else if (strcmp(optarg, "prometheus") == 0)
				cfg->report.format = OD_FORMAT_PROMETHEUS;
			else if (strcmp(optarg, "html") == 0)
				cfg->report.format = OD_FORMAT_HTML;
			else if (!cli_format_parse(optarg, &cfg->report.format))
				return cli_usage(NULL, "unknown format", optarg);
			break;
		case 'c':
			cfg->mode = DG_COUNT;
			break;
		case 'l':
			cfg->mode = DG_WITH;
			break;
		case 'L':
			cfg->mode = DG_WITHOUT;
			break;
		case 'q':
			cfg->mode = DG_QUIET;
			break;
		case OPT_SUMMARY:
			cfg->mode = DG_SUMMARY;
			break;
		case OPT_FOLLOW:
			cfg->follow = true;
			break;
		case OPT_LINE_BUFFERED:
			cfg->line_buffered = true;
			break;
		case 'm':
			if ((cfg->max_count = dg_number(optarg, 1)) < 0)
				return cli_usage(NULL, "--max-count takes a number "
				    "from 1, not", optarg);
			break;
		case OPT_RANK:
			if ((cfg->rank = dg_number(optarg, 0)) < 0)
				return cli_usage(NULL, "--rank takes a number from "
				    "0, not", optarg);
			break;
		case OPT_KIND: {
			int k;

			for (k = 0; k < OD_KIND_COUNT; k++)
				if (strcmp(optarg, od_kind_name((od_kind)k)) == 0)
					break;
			if (k == OD_KIND_COUNT)
				return cli_usage(NULL, "unknown kind (see the kinds "
				    "in oomdoc(1))", optarg);
			cfg->kind = k;
			break;
		}
		case OPT_COLOR:
			if (!cli_color_parse(optarg, &cfg->color))
				return cli_usage(NULL, "--color takes auto, always "
				    "or never, not", optarg);
			break;
		case OPT_WIDTH:
			/* 0: no wrapping, as a program's report (api.c). */
			if (strcmp(optarg, "0") == 0)
				cfg->width = OD_WIDTH_NONE;
			else if ((cfg->width = dg_number(optarg,
			    CLI_WIDTH_MIN)) < 0 || cfg->width > CLI_WIDTH_MAX)
				return cli_usage(NULL, "--width takes 0 or a number "
				    "from 20 to 1000, not", optarg);
			break;
		case 'v':
			cfg->report.verbose = true;
			break;
		case OPT_RULES:
			if (cfg->rules.npaths == CLI_RULES_MAX)
				return cli_usage(NULL, "too many --rules; the limit "
				    "is 32, at", optarg);
			cfg->rules.paths[cfg->rules.npaths++] = optarg;
			break;
		case OPT_SNAPSHOT:
			cfg->snapshot = optarg;
			break;
		case OPT_NO_DEFAULT_RULES:
			cfg->rules.shipped = false;
			break;
		case OPT_FACT:
			if (!fc_user_add(&cfg->facts, optarg, &err)) {
				cli_say(NULL, "%s (see oomdoc --help)", err.msg);
				return OD_EXIT_ERROR;
			}
			cfg->fact_args[cfg->facts.n - 1] = optarg;
			break;
		case OPT_ZSTD_WINDOW_LOG: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end != '\0' ||
			    v < IN_ZSTD_WINDOW_LOG_MIN || v > IN_ZSTD_WINDOW_LOG_MAX)
				return cli_usage(NULL, "--zstd-window-log takes a "
				    "number from 10 to 31, not", optarg);
			cfg->zstd_window_log = (int)v;
			break;
		}
		case OPT_LIST_ANCHORS:
			cfg->list_anchors = true;
			break;
		case 'h':
			dg_help(stdout);
			return 0;
		case 'V':
			dg_version(stdout);
			return 0;
		default:
			return od_options_error(NULL, dg_options, DG_NOPTS, c,
			    arg);
		}
	}
	cfg->report.color = cli_color_wanted(cfg->color);
	cfg->report.utf8 = cli_utf8_wanted();
	cfg->report.width = cli_width(cfg->width);
	cfg->report.facts = cfg->fact_args;
	cfg->report.nfacts = cfg->facts.n;
	return -1;
}

/* The signal that stopped the reading, 0 while none did. */
static volatile sig_atomic_t dg_signal;

/* The first signal asks for the report of what was read; a second one
 * ends the program at once (a read that a signal cannot end, from a
 * FIFO named as a file, would otherwise hold it). */
static void
dg_on_signal(int sig)
{
	if (dg_signal != 0) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	dg_signal = sig;
}

/* SIGTERM and SIGINT stop the reading (no SA_RESTART: a poll() or read()
 * waiting on a pipe returns EINTR). */
static void
dg_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = dg_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/*
 * A memory snapshot named as an input (recognised by its first bytes,
 * od_snapshot_sniff): the event of its trace's oom entry, if it has one,
 * joins set as a log's would.  Fills in *info as dg_scan does.  JSON that
 * turns out not to be a snapshot (a JSON-lines log that names the keys)
 * is left to be read as a log: -1, with *info and *err cleared.
 */
static int
dg_snapshot_input(const char *path, od_sniff kind, int index,
    od_input *info, od_events *set, od_error *err)
{
	json_t *root;
	od_event ev;

	memset(info, 0, sizeof *info);
	info->compression = "none";
	info->name = strdup(path);
	if (info->name == NULL) {
		od_error_set(err, path, 0, 0, "out of memory");
		return false;
	}
	root = od_snapshot_load(path, &info->bytes, err);
	if (root == NULL && kind == OD_SNIFF_JSON && !cli_nomem(err)) {
		free(info->name);
		memset(info, 0, sizeof *info);
		memset(err, 0, sizeof *err);
		return -1;
	}
	if (root == NULL) {
		info->failed = true;
		return 0;
	}
	if (od_snapshot_event(root, index, &ev)) {
		od_events_add(set, &ev);
		/* The event's list of inputs could not grow: as the scanner
		 * says at its finish. */
		if (od_events_nomem(set)) {
			od_error_set(err, path, 0, 0, "out of memory");
			info->failed = true;
		}
	} else if (ev.snap.from_trace) {
		od_error_set(err, path, 0, 0, "out of memory");
		info->failed = true;
	}
	od_event_clear(&ev);
	json_decref(root);
	return !info->failed;
}

/* How long standard input may be silent before the scanner is asked for
 * what the bytes to come cannot change (od_scan_pause), in --format jsonl,
 * and before it decides the rest up to the last complete line
 * (od_scan_flush). */
#define DG_IDLE_MS 500
#define DG_SETTLE_MS 2000

/*
 * Scans path ("-": standard input) as input index into set, as
 * od_scan_path does, but reading chunk by chunk so that a signal stops it
 * and, when idle_flush, a pause of standard input of DG_IDLE_MS delivers
 * the events complete so far.  Fills in *info (info->name is the
 * caller's to free).  False with err set when it could not be opened or
 * read to the end; a signal leaves it incomplete, without an error.
 */
static bool
dg_scan(od_scanner *sc, const char *path, int index, od_input *info,
    od_events *set, bool idle_flush, od_error *err)
{
	bool ok = true, is_stdin = strcmp(path, "-") == 0;
	/* 0: read since the last pause; 1: paused (od_scan_pause); 2:
	 * settled (od_scan_flush), or nothing read yet. */
	int paused = 2;
	in_reader *r;

	if (!is_stdin) {
		od_sniff kind = od_snapshot_sniff_path(path);
		int st = kind == OD_SNIFF_NONE ? -1 :
		    dg_snapshot_input(path, kind, index, info, set, err);

		if (st >= 0)
			return st != 0;
	}
	r = od_scan_open(sc, path, index, info, set, err);
	if (r == NULL)
		return false;
	for (;;) {
		const char *data;
		ssize_t n;
		int fd;

		if (dg_signal != 0) {
			info->failed = true;
			break;
		}
		/* A pipe that pauses: wait for it here, where a signal or the
		 * idle timeout can end the wait (for the reader's thread, when
		 * it reads one: in_wait_fd).  When the reader may hold bytes
		 * already, read on. */
		if (is_stdin && (fd = in_wait_fd(r)) >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int rc = poll(&p, 1, !idle_flush || paused == 2 ? -1 :
			    paused == 0 ? DG_IDLE_MS : DG_SETTLE_MS - DG_IDLE_MS);

			if (rc < 0 && errno == EINTR)
				continue;
			if (rc == 0) {
				if (paused++ == 0)
					od_scan_pause(sc);
				else
					od_scan_flush(sc);
				continue;
			}
		}
		n = in_next(r, &data, err);
		if (n < 0) {
			ok = false;
			info->failed = true;
		}
		if (n <= 0)
			break;
		od_scan_feed(sc, data, (size_t)n);
		paused = 0;
	}
	return od_scan_close(sc, r, info, err) && ok;
}

/* The snapshot of --snapshot, read before the logs (NULL: none). */
static json_t *dg_snap;

/* Joins the snapshot of --snapshot to its event of set (snapshot.c),
 * before the rules run; says so when set has none.  False when memory
 * ran out (said too). */
static bool
dg_join(const char *label, const dg_config *cfg, od_events *set)
{
	long i = dg_snap != NULL ? od_snapshot_join(dg_snap, set) : 0;

	if (i == -2)
		cli_say(label, "%s: out of memory", cfg->snapshot);
	else if (i < 0)
		cli_say(label, "%s: no failure of PyTorch's allocator on the "
		    "snapshot's device to join it to", cfg->snapshot);
	return i != -2;
}

/* What --format jsonl's delivery needs. */
typedef struct {
	const dg_config *cfg;
	const rl_set *rules;
	const od_input *inputs;
	uint64_t events, failures;
	bool write_failed;
	bool nomem;             /* the rules ran out of memory */
} dg_stream;

/* Each event as the scanner delivers it: its causes, then its line. */
static void
dg_emit(od_event *ev, void *arg)
{
	dg_stream *s = arg;

	if (!rl_apply(s->rules, ev, &s->cfg->facts))
		s->nomem = true;
	s->events++;
	s->failures += ev->fatal;
	if (!od_report_jsonl_event(stdout, s->inputs, ev))
		s->write_failed = true;
	fflush(stdout);
}

static uint64_t
dg_failures(od_events *set)
{
	uint64_t f = 0;
	size_t i;

	for (i = 0; i < od_events_count(set); i++)
		f += od_events_get(set, i)->fatal;
	return f;
}

/* The row of an input read alone into set, with the rules applied. */
static void
dg_row(od_summary_row *row, const od_input *in, od_events *set)
{
	size_t i, n = od_events_count(set);
	const od_event *first = NULL;
	const char *top = NULL;

	memset(row, 0, sizeof *row);
	row->name = in->name != NULL ? in->name : "-";
	row->failed = in->failed;
	row->events = n;
	row->failures = dg_failures(set);
	for (i = 0; i < n && first == NULL; i++)
		if (od_events_get(set, i)->fatal)
			first = od_events_get(set, i);
	if (first == NULL && n > 0)
		first = od_events_get(set, 0);
	if (first != NULL)
		row->kind = od_kind_name(first->kind);
	/* The report's own top cause (report.c), as the input alone has. */
	top = rp_top_cause(set);
	if (top != NULL)
		snprintf(row->top_cause, sizeof row->top_cause, "%s", top);
	if (n > 0)
		rl_report_fingerprint(set, row->fingerprint);
}

/* An input's name, as grep -l prints it (escaped for a terminal). */
static void
dg_name(const char *name)
{
	od_escape_line(stdout, strcmp(name, "-") == 0 ? "(standard input)" :
	    name);
}

/*
 * Each input into a set of its own: -c, -l, -L, --summary and --format
 * jsonl.  Returns the exit status (before signals and output errors).
 */
static int
dg_per_input(const char *label, dg_config *cfg, rl_set *rules,
    od_scanner *sc, od_input *inputs, int ninputs, char **paths)
{
	od_summary_row *rows = calloc((size_t)ninputs, sizeof *rows);
	dg_stream stream = { .cfg = cfg, .rules = rules, .inputs = inputs };
	bool jsonl = cfg->report.format == OD_FORMAT_JSONL &&
	    cfg->mode == DG_REPORT;
	bool failed = false;
	uint64_t failures = 0;
	od_error err;
	int i, nread = 0;

	if (rows == NULL) {
		cli_say(label, "out of memory");
		return OD_EXIT_ERROR;
	}
	if (jsonl)
		od_scanner_on_event(sc, dg_emit, &stream);
	for (i = 0; i < ninputs && dg_signal == 0; i++) {
		const char *path = paths != NULL ? paths[i] : "-";
		od_events *set = od_events_new();
		size_t e;

		if (set == NULL) {
			cli_say(label, "out of memory");
			failed = true;
			break;
		}
		od_events_filter(set, cfg->rank, cfg->kind, cfg->max_count);
		memset(&err, 0, sizeof err);
		if (!(cfg->follow ? cli_follow(sc, path, i, &inputs[i], set,
		    &dg_signal, &err) :
		    dg_scan(sc, path, i, &inputs[i], set, jsonl, &err))) {
			cli_error(label, &err);
			failed = true;
		}
		nread++;
		if (!jsonl && !dg_join(label, cfg, set))
			failed = true;
		if (!jsonl)
			for (e = 0; e < od_events_count(set); e++)
				if (!rl_apply(rules, od_events_get(set, e),
				    &cfg->facts))
					stream.nomem = true;
		dg_row(&rows[i], &inputs[i], set);
		failures += rows[i].failures;
		if (od_events_dropped(set) > 0)
			cli_say(label, "%s: %llu more out-of-memory events were "
			    "not kept (the limit is %d distinct events)",
			    path, (unsigned long long)od_events_dropped(set),
			    OD_EVENTS_MAX);
		od_events_free(set);
		/* grep's -c, -l and -L, as each input ends; an input that
		 * could not be read is never one without a failure. */
		if (cfg->mode == DG_COUNT && !inputs[i].failed) {
			if (ninputs > 1) {
				dg_name(path);
				putchar(':');
			}
			printf("%llu\n", (unsigned long long)rows[i].failures);
		} else if (cfg->mode == DG_WITH && rows[i].failures > 0) {
			dg_name(path);
			putchar('\n');
		} else if (cfg->mode == DG_WITHOUT && !inputs[i].failed &&
		    rows[i].failures == 0) {
			dg_name(path);
			putchar('\n');
		}
		if (cfg->mode != DG_SUMMARY)
			fflush(stdout);
	}
	od_scanner_on_event(sc, NULL, NULL);
	if (cfg->mode == DG_SUMMARY)
		od_summary_write(stdout, cfg->report.format, rows, nread);
	free(rows);
	if (stream.write_failed || stream.nomem)
		cli_say(label, "out of memory");
	if (failed || stream.write_failed || stream.nomem)
		return OD_EXIT_ERROR;
	return failures > 0 ? OD_EXIT_FOUND : OD_EXIT_NONE;
}

/*
 * --line-buffered: the text report's blocks as the scanner delivers their
 * events, and what each block said then (a hash of its bytes, 0 when none
 * was written), so that the end can tell the blocks that later lines
 * changed (another rank's report of the same failure, torchrun's table
 * after it, an echo from another input) and write them again.
 */
typedef struct {
	const dg_config *cfg;
	const rl_set *rules;
	const od_input *inputs;
	int ninputs;
	od_events *set;
	uint64_t shown[OD_EVENTS_MAX];
	bool nomem;
} dg_lines;

/* Event i of set's text block into a memory stream: its bytes in *buf
 * (the caller frees them) and their FNV-1a hash (never 0), or 0 when
 * memory ran out. */
static uint64_t
dg_block(dg_lines *s, int ninputs, size_t i, char **buf, size_t *len)
{
	uint64_t h = 1469598103934665603ULL;
	FILE *f = open_memstream(buf, len);
	bool ok;
	size_t k;

	*buf = NULL;
	if (f == NULL)
		return 0;
	ok = od_report_text_event(f, &s->cfg->report, s->inputs, ninputs,
	    s->set, i);
	if (fclose(f) != 0 || !ok) {
		free(*buf);
		*buf = NULL;
		return 0;
	}
	for (k = 0; k < *len; k++)
		h = (h ^ (unsigned char)(*buf)[k]) * 1099511628211ULL;
	return h != 0 ? h : 1;
}

/* Each event as the scanner delivers it: its causes, then its block,
 * flushed.  The heading's count is not known yet: it comes at the end. */
static void
dg_line_event(od_event *ev, void *arg)
{
	dg_lines *s = arg;
	size_t i, n = od_events_count(s->set), len;
	char *buf;

	if (!rl_apply(s->rules, ev, &s->cfg->facts))
		s->nomem = true;
	for (i = 0; i < n && od_events_get(s->set, i) != ev; i++)
		;
	if (i == n || i >= OD_EVENTS_MAX)
		return;
	s->shown[i] = dg_block(s, s->ninputs, i, &buf, &len);
	if (s->shown[i] == 0) {
		s->nomem = true;
		return;
	}
	fwrite(buf, 1, len, stdout);
	fflush(stdout);
	free(buf);
}

/*
 * The end of --line-buffered, once the rules ran on the final events:
 * each block that reads differently now from what was written when its
 * event was delivered, again, under a line that says so; then the heading
 * and the count of events not kept.
 */
static bool
dg_line_end(dg_lines *s, int nread)
{
	size_t i, n = od_events_count(s->set), len;
	char *buf;

	for (i = 0; i < n; i++) {
		uint64_t h = dg_block(s, nread, i, &buf, &len);

		if (h == 0)
			return false;
		if (i < OD_EVENTS_MAX && h != s->shown[i]) {
			rp_wrapbuf wb;
			FILE *out = s->shown[i] != 0 ?
			    rp_wrap_open(&wb, stdout, s->cfg->report.width) :
			    NULL;

			if (out != NULL) {
				fprintf(out, "oomdoc: #%zu again, as it stands at "
				    "the end: what was read after it was "
				    "written changed it\n", i + 1);
				rp_wrap_close(&wb);
			} else if (s->shown[i] != 0) {
				free(buf);
				return false;
			}
			fwrite(buf, 1, len, stdout);
		}
		free(buf);
	}
	return od_report_text_end(stdout, &s->cfg->report, s->inputs, nread,
	    s->set);
}

/* All inputs into one set, the report of them (or, with -q, only the
 * status; with --line-buffered, each event's block as it is complete).
 * Returns the exit status (before signals and output errors). */
static int
dg_report(const char *label, dg_config *cfg, rl_set *rules, od_scanner *sc,
    od_input *inputs, int ninputs, char **paths)
{
	od_events *set = od_events_new();
	bool failed = false, nomem = false;
	bool lines = cfg->line_buffered && cfg->mode == DG_REPORT;
	dg_lines *ls = NULL;
	od_error err;
	int i, nread = 0, status;
	size_t e;

	if (set == NULL || (lines && (ls = calloc(1, sizeof *ls)) == NULL)) {
		od_events_free(set);
		cli_say(label, "out of memory");
		return OD_EXIT_ERROR;
	}
	od_events_filter(set, cfg->rank, cfg->kind, cfg->max_count);
	if (lines) {
		*ls = (dg_lines){ .cfg = cfg, .rules = rules, .inputs = inputs,
		    .ninputs = ninputs, .set = set };
		od_scanner_on_event(sc, dg_line_event, ls);
	}
	for (i = 0; i < ninputs && dg_signal == 0 && !nomem; i++) {
		memset(&err, 0, sizeof err);
		nread++;
		if (!(cfg->follow ? cli_follow(sc, paths[i], i, &inputs[i], set,
		    &dg_signal, &err) : dg_scan(sc, paths != NULL ? paths[i] :
		    "-", i, &inputs[i], set, lines, &err))) {
			cli_error(label, &err);
			failed = true;
			/* Out of memory: no report (it would be wrong). */
			nomem = inputs[i].name == NULL || cli_nomem(&err);
		}
	}
	if (!nomem && !dg_join(label, cfg, set))
		failed = nomem = true;
	for (e = 0; !nomem && e < od_events_count(set); e++)
		if (!rl_apply(rules, od_events_get(set, e), &cfg->facts)) {
			cli_say(label, "out of memory");
			failed = nomem = true;
		}
	od_scanner_on_event(sc, NULL, NULL);
	rl_report_fingerprint(set, cfg->report.fingerprint);
	if (lines && !nomem && (ls->nomem || !dg_line_end(ls, nread))) {
		cli_say(label, "out of memory");
		failed = true;
	} else if (!lines && !nomem && cfg->mode != DG_QUIET &&
	    !od_report_write(stdout, &cfg->report, inputs, nread, set)) {
		cli_say(label, "out of memory");
		failed = true;
	}
	free(ls);
	status = dg_failures(set) > 0 ? OD_EXIT_FOUND : OD_EXIT_NONE;
	if (od_events_dropped(set) > 0)
		cli_say(label, "%llu more out-of-memory events were not kept "
		    "(the limit is %d distinct events, the most severe kept)",
		    (unsigned long long)od_events_dropped(set), OD_EVENTS_MAX);
	od_events_free(set);
	return failed ? OD_EXIT_ERROR : status;
}

int
cmd_diagnose(const cli_command *cmd, int argc, char **argv)
{
	const char *label = cmd->label;
	dg_config cfg;
	od_scanner *sc;
	od_input *inputs;
	rl_set *rules;
	od_error err;
	int i, st, ninputs, nfiles, status;
	char **paths;

	memset(&err, 0, sizeof err);
	dg_defaults(&cfg);
	st = dg_parse(argc, argv, &cfg);
	if (st >= 0)
		return st;

	/* --line-buffered streams the text report; a document (JSON,
	 * Markdown, HTML, ...) is whole or not at all. */
	if (cfg.line_buffered && cfg.mode == DG_REPORT &&
	    cfg.report.format != OD_FORMAT_TEXT &&
	    cfg.report.format != OD_FORMAT_JSONL)
		return cli_usage(NULL, "this format's document is written whole "
		    "(text and jsonl stream), so it takes no", "--line-buffered");
	if (cfg.snapshot != NULL && cfg.mode == DG_REPORT &&
	    (cfg.report.format == OD_FORMAT_JSONL || cfg.line_buffered))
		return cli_usage(NULL, "--snapshot is joined after the whole log "
		    "is read, which --format jsonl and --line-buffered do not "
		    "wait for:", "--snapshot");
	if (cfg.snapshot != NULL) {
		dg_snap = od_snapshot_load(cfg.snapshot, NULL, &err);
		if (dg_snap == NULL) {
			cli_error(label, &err);
			return OD_EXIT_ERROR;
		}
	}

	/* The rules first: a broken rule file stops the run (status 3). */
	st = cli_rules_open(label, &cfg.rules, &rules);
	if (st >= 0) {
		rl_free(rules);
		json_decref(dg_snap);
		return st;
	}

	nfiles = argc - optind;
	if (cfg.follow && (nfiles != 1 || strcmp(argv[optind], "-") == 0)) {
		/* A pipe is read as it comes without it. */
		rl_free(rules);
		cli_say(label, "--follow reads one named file, not %s (see "
		    "oomdoc --help)", nfiles > 1 ? "several" :
		    "standard input");
		return OD_EXIT_ERROR;
	}
	/* A log typed at a terminal is seldom meant: say what is waited
	 * for, and how to end it. */
	if (nfiles == 0 && isatty(STDIN_FILENO))
		cli_say(label, "reading a log from the terminal; end it with "
		    "Ctrl-D, or name a file or pipe one in (see oomdoc --help)");
	ninputs = nfiles > 0 ? nfiles : 1;
	paths = nfiles > 0 ? argv + optind : NULL;
	inputs = calloc((size_t)ninputs, sizeof *inputs);
	/* The scanner reads with the recognisers the rules loaded, which
	 * outlive it. */
	sc = od_scanner_new(od_options_jit(), rules->recognisers, &err);
	if (sc != NULL && inputs != NULL && cfg.list_anchors) {
		const char *const *a;

		for (a = od_anchors(sc); *a != NULL; a++)
			puts(*a);
		free(inputs);
		od_scanner_free(sc);
		rl_free(rules);
		return cli_stdout_ok(label) ? 0 : OD_EXIT_ERROR;
	}
	if (inputs == NULL || sc == NULL) {
		if (sc != NULL || err.msg[0] == '\0')
			od_error_set(&err, NULL, 0, 0, "out of memory");
		cli_error(label, &err);
		free(inputs);
		od_scanner_free(sc);
		rl_free(rules);
		json_decref(dg_snap);
		dg_snap = NULL;
		return OD_EXIT_ERROR;
	}
	od_scanner_set_zstd_window_log(sc, cfg.zstd_window_log);
	dg_catch_signals();
	if (cfg.mode == DG_REPORT && cfg.report.format != OD_FORMAT_JSONL)
		status = dg_report(label, &cfg, rules, sc, inputs, ninputs,
		    paths);
	else if (cfg.mode == DG_QUIET)
		status = dg_report(label, &cfg, rules, sc, inputs, ninputs,
		    paths);
	else
		status = dg_per_input(label, &cfg, rules, sc, inputs, ninputs,
		    paths);
	/* A recogniser stopped at PCRE2's limits read nothing after that
	 * (recog_table.h): name it, so that the user checks its pattern. */
	for (i = od_scanner_stopped(sc, 0); i >= 0;
	    i = od_scanner_stopped(sc, i + 1)) {
		const sk_spec *sp = &rules->recognisers->v[i];

		cli_say(label, "%s:%llu:%llu: recogniser '%s' was stopped: its "
		    "pattern reached PCRE2's match or depth limit %d times, and "
		    "read nothing after that (see oomdoc rules check)", sp->file,
		    (unsigned long long)sp->at.line,
		    (unsigned long long)sp->at.col, sp->id, SK_STRIKES);
	}
	if (!cli_stdout_ok(label))
		status = OD_EXIT_ERROR;
	if (dg_signal != 0)
		status = 128 + dg_signal;
	for (i = 0; i < ninputs; i++)
		free(inputs[i].name);
	free(inputs);
	od_scanner_free(sc);
	rl_free(rules);
	json_decref(dg_snap);
	dg_snap = NULL;
	return status;
}
