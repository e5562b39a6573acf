/*
 * live.c: `oomdoc live` and `oomdoc probe`.  Reads a log (diagnosed with
 * the rules, as oomdoc does) or a JSON report made earlier, perhaps on
 * another machine; opens the device; refuses to take memory on a GPU that
 * other processes use unless --force; runs the probes that the causes of
 * each event name; writes the verdicts; and releases everything it took,
 * on every exit path and on SIGINT and SIGTERM.  Errors are printed here,
 * one line each.
 *
 * With --backend fake and no --fake-device, the fake device is the one
 * the log describes: its capacity and the other processes it names.
 */
#define _GNU_SOURCE             /* memmem */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "input.h"
#include "json_read.h"
#include "live.h"
#include "options.h"
#include "rules.h"

#define LV_SNIFF 4096                   /* bytes read to tell a report */
#define LV_STDIN_MAX (64u * 1024 * 1024) /* a log on standard input */
#define LV_EVENTS_MAX 256               /* events probed per run */


enum {
	LV_BACKEND = 256, LV_FAKE, LV_MAX_MEMORY, LV_TIME_LIMIT, LV_FORCE,
	LV_RULES, LV_NO_DEFAULT_RULES
};

#define LV_RULES_MAX 32

static const od_option lv_options[] = {
	{ "device", 'd', "N", "the GPU to use, by CUDA index (default 0)" },
	{ "backend", LV_BACKEND, "NAME",
	  "cuda (default) or fake, a simulated GPU" },
	{ "fake-device", LV_FAKE, "SETTINGS",
	  "the fake GPU, as KEY=VALUE,... (see oomdoc(1))" },
	{ "max-memory", LV_MAX_MEMORY, "SIZE",
	  "take at most SIZE, or N% of the free memory (default 90%)" },
	{ "time-limit", LV_TIME_LIMIT, "SECONDS",
	  "stop each kernel after this long (default 10)" },
	{ "force", LV_FORCE, NULL,
	  "probe even when other processes use the GPU" },
	{ "format", 'f', "FORMAT",
	  "report format: text (default), markdown or json" },
	{ "rules", LV_RULES, "PATH",
	  "load rules from this file or directory too (repeatable)" },
	{ "no-default-rules", LV_NO_DEFAULT_RULES, NULL,
	  "do not load the shipped rules" },
	{ "help", 'h', NULL, "print this help, and exit" },
};

#define LV_NOPTS ((int)(sizeof lv_options / sizeof lv_options[0]))

/* What the options asked for. */
typedef struct {
	const char *cmd;
	int device;
	const char *backend;
	const char *fake;
	int64_t cap;            /* bytes, or -1 for a percentage */
	int cap_percent;
	double time_limit;
	bool force;
	od_report_format format;
	const char *path;       /* the input, "-" for standard input */
	const char *rules[LV_RULES_MAX];
	int nrules;
	bool default_rules;
} lv_config;

/* The input: a log (events of a set) or a report (events of its own). */
typedef struct {
	const char *names[1];
	int nnames;
	od_input info;
	od_events *set;         /* a log's events */
	rl_set *rules;
	jr_doc *doc;            /* a report, and its events */
	od_event *rev;
	const char **rev_input; /* each report event's input name */
	const char **rev_kind;
	int nrev;
	char *text;             /* a report's text, or a log from stdin */
} lv_input;

bool
od_live_cuda_built(void)
{
#ifdef OOMDOC_HAVE_CUDA
	return true;
#else
	return false;
#endif
}

const char *
od_live_version_line(void)
{
#ifdef OOMDOC_HAVE_CUDA
	return "CUDA live mode: built (CUDA runtime " OOMDOC_CUDA_VERSION
	    ", linked statically; NVML and CUPTI loaded at run time)";
#else
	return "CUDA live mode: not built (live mode has only the fake "
	    "backend)";
#endif
}

static void
lv_error(const char *cmd, const od_error *err)
{
	fprintf(stderr, "oomdoc %s: ", cmd);
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

static int
lv_usage(const char *cmd, const char *what, const char *word)
{
	fprintf(stderr, "oomdoc %s: %s '%s' (see oomdoc %s --help)\n", cmd,
	    what, word, cmd);
	return OD_EXIT_ERROR;
}

static void
lv_help(const char *cmd)
{
	if (strcmp(cmd, "probe") == 0)
		fputs("Usage: oomdoc probe [OPTION]...\n"
		    "Check a GPU without a log: what a CUDA context costs, the "
		    "largest single\nallocation and all that can be allocated, "
		    "the processes that hold memory,\nmemory errors, "
		    "bandwidth, and the ECC and remapped-row counters.\n\n",
		    stdout);
	else
		fputs("Usage: oomdoc live [OPTION]... [LOG|REPORT.json|-]\n"
		    "Confirm or refute on a GPU the causes of each out-of-memory "
		    "failure of a log,\nor of a JSON report that oomdoc made "
		    "earlier.  With no input, or when it is -,\nread standard "
		    "input.\n\n", stdout);
	fputs("Options:\n", stdout);
	od_options_help(stdout, lv_options, LV_NOPTS);
	fputs("\nExit status: 0 when the probes ran, 1 when the input has no "
	    "out-of-memory\nfailure, 2 on a usage or input error, 3 on an "
	    "error in the rules, 4 when the\nGPU cannot be used (no driver, "
	    "no GPU, other processes without --force, a\ndevice error), 128 "
	    "+ N when signal N stopped it.  See oomdoc(1).\n", stdout);
}

/* --max-memory: a size, or a percentage of the free memory. */
static bool
lv_parse_cap(const char *arg, lv_config *cfg)
{
	size_t n = strlen(arg);

	if (n > 1 && arg[n - 1] == '%') {
		char *end;
		long p = strtol(arg, &end, 10);

		if (end != arg + n - 1 || p < 1 || p > 100)
			return false;
		cfg->cap = -1;
		cfg->cap_percent = (int)p;
		return true;
	}
	return od_size_parse_text(arg, n, &cfg->cap) && cfg->cap > 0;
}

/* Returns -1 to go on, or the status to exit with. */
static int
lv_parse(int argc, char **argv, lv_config *cfg)
{
	struct option longopts[LV_NOPTS + 1];
	char shortopts[2 * LV_NOPTS + 2];
	int c;

	od_options_getopt(lv_options, LV_NOPTS, longopts, shortopts);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *arg = argv[optind - 1];
		char *end;

		switch (c) {
		case 'd': {
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end != '\0' || v < 0 || v > 1023)
				return lv_usage(cfg->cmd, "--device takes a GPU "
				    "index, not", optarg);
			cfg->device = (int)v;
			break;
		}
		case LV_BACKEND:
			if (strcmp(optarg, "cuda") != 0 &&
			    strcmp(optarg, "fake") != 0)
				return lv_usage(cfg->cmd, "--backend takes cuda "
				    "or fake, not", optarg);
			cfg->backend = optarg;
			break;
		case LV_FAKE:
			cfg->fake = optarg;
			break;
		case LV_MAX_MEMORY:
			if (!lv_parse_cap(optarg, cfg))
				return lv_usage(cfg->cmd, "--max-memory takes a "
				    "size or a percentage from 1% to 100%, not",
				    optarg);
			break;
		case LV_TIME_LIMIT:
			cfg->time_limit = strtod(optarg, &end);
			if (end == optarg || *end != '\0' ||
			    !(cfg->time_limit > 0 && cfg->time_limit <= 3600))
				return lv_usage(cfg->cmd, "--time-limit takes "
				    "seconds, more than 0 and at most 3600, not",
				    optarg);
			break;
		case LV_FORCE:
			cfg->force = true;
			break;
		case LV_RULES:
			if (cfg->nrules == LV_RULES_MAX)
				return lv_usage(cfg->cmd, "too many --rules; the "
				    "limit is 32, at", optarg);
			cfg->rules[cfg->nrules++] = optarg;
			break;
		case LV_NO_DEFAULT_RULES:
			cfg->default_rules = false;
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				cfg->format = OD_FORMAT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				cfg->format = OD_FORMAT_JSON;
			else if (strcmp(optarg, "markdown") == 0)
				cfg->format = OD_FORMAT_MARKDOWN;
			else
				return lv_usage(cfg->cmd, "unknown format",
				    optarg);
			break;
		case 'h':
			lv_help(cfg->cmd);
			return 0;
		case ':':
			return lv_usage(cfg->cmd, "this option needs an "
			    "argument:", arg);
		default:
			if (od_options_known(lv_options, LV_NOPTS, optopt))
				return lv_usage(cfg->cmd, "this option takes no "
				    "argument:", arg);
			return lv_usage(cfg->cmd, "unknown option", arg);
		}
	}
	if (cfg->fake != NULL && strcmp(cfg->backend, "fake") != 0)
		return lv_usage(cfg->cmd, "--fake-device needs --backend fake, "
		    "not", cfg->backend);
	if (strcmp(cfg->cmd, "probe") == 0) {
		if (optind < argc)
			return lv_usage(cfg->cmd, "probe reads no input, not",
			    argv[optind]);
	} else {
		if (argc - optind > 1)
			return lv_usage(cfg->cmd, "live reads one input; "
			    "another is", argv[optind + 1]);
		cfg->path = optind < argc ? argv[optind] : "-";
	}
	return -1;
}

/* The kind named in a report, as od_kind. */
static bool
lv_kind(const char *name, od_kind *out)
{
	int k;

	for (k = 0; k < OD_KIND_COUNT; k++)
		if (strcmp(od_kind_name((od_kind)k), name) == 0) {
			*out = (od_kind)k;
			return true;
		}
	return false;
}

/* A byte figure of the report: an integer, or -1 for null or absent. */
static int64_t
lv_figure(const jr_doc *d, jr_ref obj, const char *key)
{
	int64_t v;

	if (!jr_int(d, jr_get(d, obj, key), &v) || v < 0)
		return OD_UNKNOWN;
	return v;
}

/*
 * Turns the events of a report (schema oomdoc.report/1) into events with
 * their causes; the rule ids, titles and names borrow from the document.
 */
static bool
lv_from_report(lv_input *in, const char *shown, od_error *err)
{
	const jr_doc *d = in->doc;
	jr_ref root = jr_root(d), evs, e;
	const char *schema = jr_str(d, jr_get(d, root, "schema"), NULL);
	size_t n;
	int i = 0;

	if (schema == NULL || strcmp(schema, "oomdoc.report/1") != 0) {
		od_error_set(err, shown, 0, 0, "not an oomdoc report of schema "
		    "oomdoc.report/1");
		return false;
	}
	evs = jr_get(d, root, "events");
	if (jr_type_of(d, evs) != JR_ARRAY) {
		od_error_set(err, shown, 0, 0, "the report has no events "
		    "array");
		return false;
	}
	n = jr_count(d, evs);
	if (n > OD_EVENTS_MAX)
		n = OD_EVENTS_MAX;
	in->rev = calloc(n ? n : 1, sizeof *in->rev);
	in->rev_input = calloc(n ? n : 1, sizeof *in->rev_input);
	in->rev_kind = calloc(n ? n : 1, sizeof *in->rev_kind);
	if (in->rev == NULL || in->rev_input == NULL || in->rev_kind == NULL) {
		od_error_set(err, shown, 0, 0, "out of memory");
		return false;
	}
	for (e = jr_first(d, evs); e >= 0 && (size_t)i < n; e = jr_next(d, e)) {
		od_event *ev = &in->rev[i];
		jr_ref mem = jr_get(d, e, "memory"), p, cs, c;
		const char *kind = jr_str(d, jr_get(d, e, "kind"), NULL);
		int64_t v;
		size_t nc;

		od_event_init(ev);
		in->nrev = ++i;
		if (jr_type_of(d, e) != JR_OBJECT || kind == NULL) {
			od_error_set(err, shown, 0, 0, "event %d of the report "
			    "has no kind", i);
			return false;
		}
		in->rev_kind[i - 1] = kind;
		if (!lv_kind(kind, &ev->kind))
			ev->kind = OD_KIND_CUDA_RAW;
		in->rev_input[i - 1] = jr_str(d, jr_get(d, e, "input"), NULL);
		if (in->rev_input[i - 1] == NULL)
			in->rev_input[i - 1] = shown;
		if (jr_int(d, jr_get(d, e, "line"), &v) && v >= 0)
			ev->line = (uint64_t)v;
		if (jr_int(d, jr_get(d, e, "device"), &v) && v >= 0 &&
		    v < 1 << 20)
			ev->device = (int)v;
		if (jr_int(d, jr_get(d, e, "rank"), &v) && v >= 0 &&
		    v < 1 << 30)
			ev->rank = (int)v;
		ev->fatal = jr_type_of(d, jr_get(d, e, "fatal")) != JR_FALSE;
		ev->mem.requested = lv_figure(d, mem, "requested_bytes");
		ev->mem.total = lv_figure(d, mem, "total_bytes");
		ev->mem.free = lv_figure(d, mem, "free_bytes");
		ev->mem.allocated = lv_figure(d, mem, "allocated_bytes");
		ev->mem.reserved = lv_figure(d, mem, "reserved_bytes");
		ev->mem.reserved_unallocated = lv_figure(d, mem,
		    "reserved_unallocated_bytes");
		ev->mem.process_in_use = lv_figure(d, mem,
		    "process_in_use_bytes");
		ev->mem.non_framework = lv_figure(d, mem, "non_framework_bytes");
		ev->mem.allowed = lv_figure(d, mem, "allowed_bytes");
		ev->mem.private_pools = lv_figure(d, mem, "private_pools_bytes");
		for (p = jr_first(d, jr_get(d, mem, "other_processes"));
		    p >= 0 && ev->mem.nprocs < OD_PROCS_MAX; p = jr_next(d, p)) {
			if (!jr_int(d, jr_get(d, p, "pid"), &v))
				continue;
			ev->mem.procs[ev->mem.nprocs].pid = v;
			ev->mem.procs[ev->mem.nprocs].bytes = lv_figure(d, p,
			    "bytes");
			ev->mem.nprocs++;
		}
		cs = jr_get(d, e, "causes");
		nc = jr_count(d, cs);
		if (nc > OD_CAUSES_MAX)
			nc = OD_CAUSES_MAX;
		if (nc == 0)
			continue;
		ev->causes = calloc(nc, sizeof *ev->causes);
		if (ev->causes == NULL) {
			od_error_set(err, shown, 0, 0, "out of memory");
			return false;
		}
		for (c = jr_first(d, cs); c >= 0 && (size_t)ev->ncauses < nc;
		    c = jr_next(d, c)) {
			od_cause *oc = &ev->causes[ev->ncauses];
			double score = 0;

			oc->rule = jr_str(d, jr_get(d, c, "rule"), NULL);
			if (oc->rule == NULL)
				continue;
			oc->title = jr_str(d, jr_get(d, c, "title"), NULL);
			oc->probe = jr_str(d, jr_get(d, c,
			    "confirm_with"), NULL);
			if (jr_num(d, jr_get(d, c, "score"), &score))
				oc->score = score;
			ev->ncauses++;
		}
	}
	return true;
}

/* Reads from r until buf holds cap bytes or the input ends. */
static ssize_t
lv_read_all(in_reader *r, char *buf, size_t cap, od_error *err)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = in_read(r, buf + got, cap - got, err);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Whether the first bytes are those of an oomdoc JSON report. */
static bool
lv_is_report(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' ||
	    p[i] == '\t'))
		i++;
	return i < n && p[i] == '{' &&
	    memmem(p, n, "\"schema\"", 8) != NULL &&
	    memmem(p, n, "\"oomdoc.report/", 15) != NULL;
}

/* The rules, as oomdoc loads them: shipped, OOMDOC_RULES, --rules. */
static int
lv_load_rules(lv_input *in, const lv_config *cfg)
{
	const char *env = getenv("OOMDOC_RULES"), *cmd = cfg->cmd;
	rl_errors *errs = calloc(1, sizeof *errs);
	bool ok = true;
	int i;

	in->rules = rl_new();
	if (in->rules == NULL || errs == NULL) {
		free(errs);
		fprintf(stderr, "oomdoc %s: out of memory\n", cmd);
		return OD_EXIT_ERROR;
	}
	if (cfg->default_rules)
		ok = rl_load(in->rules, rl_default_dir(), errs);
	if (env != NULL && env[0] != '\0') {
		char *copy = strdup(env), *save = NULL, *dir;

		for (dir = copy != NULL ? strtok_r(copy, ":", &save) : NULL;
		    dir != NULL; dir = strtok_r(NULL, ":", &save))
			ok &= rl_load(in->rules, dir, errs);
		free(copy);
	}
	for (i = 0; i < cfg->nrules; i++)
		ok &= rl_load(in->rules, cfg->rules[i], errs);
	if (!ok) {
		for (i = 0; i < errs->n; i++)
			lv_error(cmd, &errs->v[i]);
		if (errs->dropped > 0)
			fprintf(stderr, "oomdoc %s: %d more errors in the "
			    "rules\n", cmd, errs->dropped);
		free(errs);
		return OD_EXIT_RULES;
	}
	free(errs);
	return -1;
}

/*
 * Reads the input: a JSON report (recognised by its first bytes) or a
 * log.  Returns -1 when it was read, or the status to exit with.
 */
static int
lv_load(const lv_config *cfg, lv_input *in)
{
	const char *cmd = cfg->cmd, *path = cfg->path;
	const char *shown = strcmp(path, "-") == 0 ? "(standard input)" : path;
	bool stdin_in = strcmp(path, "-") == 0;
	od_scanner *sc;
	in_reader *r;
	od_error err;
	ssize_t n, more;
	size_t cap;
	int st;

	memset(&err, 0, sizeof err);
	in->names[0] = shown;
	in->nnames = 1;
	r = in_open(path, &err);
	if (r == NULL) {
		lv_error(cmd, &err);
		return OD_EXIT_ERROR;
	}
	in->text = malloc(LV_SNIFF);
	if (in->text == NULL || (n = lv_read_all(r, in->text, LV_SNIFF,
	    &err)) < 0) {
		if (in->text == NULL)
			od_error_set(&err, shown, 0, 0, "out of memory");
		lv_error(cmd, &err);
		in_close(r);
		return OD_EXIT_ERROR;
	}
	if (!lv_is_report(in->text, (size_t)n) && !stdin_in) {
		/* A log file: scanned as oomdoc scans it. */
		in_close(r);
		free(in->text);
		in->text = NULL;
	} else {
		/* A report, or a log on standard input: kept in memory. */
		char *big;

		cap = lv_is_report(in->text, (size_t)n) ? JR_INPUT_MAX :
		    LV_STDIN_MAX;
		big = realloc(in->text, cap + 1);
		if (big == NULL) {
			od_error_set(&err, shown, 0, 0, "out of memory");
			lv_error(cmd, &err);
			in_close(r);
			return OD_EXIT_ERROR;
		}
		in->text = big;
		more = lv_read_all(r, in->text + n, cap + 1 - (size_t)n, &err);
		in_close(r);
		if (more < 0) {
			lv_error(cmd, &err);
			return OD_EXIT_ERROR;
		}
		n += more;
		if ((size_t)n > cap) {
			od_error_set(&err, shown, 0, 0, "more than %zu MiB: give "
			    "a log this large as a file, or its JSON report",
			    cap >> 20);
			lv_error(cmd, &err);
			return OD_EXIT_ERROR;
		}
		if (lv_is_report(in->text, (size_t)n)) {
			in->doc = jr_parse(in->text, (size_t)n, &err);
			if (in->doc == NULL) {
				snprintf(err.file, sizeof err.file, "%s", shown);
				lv_error(cmd, &err);
				return OD_EXIT_ERROR;
			}
			if (!lv_from_report(in, shown, &err)) {
				lv_error(cmd, &err);
				return OD_EXIT_ERROR;
			}
			return -1;
		}
	}
	st = lv_load_rules(in, cfg);
	if (st >= 0)
		return st;
	in->set = od_events_new();
	sc = od_scanner_new(od_options_jit(), &err);
	if (in->set == NULL || sc == NULL) {
		if (sc != NULL || err.msg[0] == '\0')
			od_error_set(&err, NULL, 0, 0, "out of memory");
		lv_error(cmd, &err);
		od_scanner_free(sc);
		return OD_EXIT_ERROR;
	}
	if (in->text != NULL) {
		od_scan_buffer(sc, in->text, (size_t)n, 0, &in->info, in->set);
	} else if (!od_scan_path(sc, path, 0, &in->info, in->set, &err)) {
		lv_error(cmd, &err);
		od_scanner_free(sc);
		return OD_EXIT_ERROR;
	}
	od_scanner_free(sc);
	for (cap = 0; cap < od_events_count(in->set); cap++)
		rl_apply(in->rules, od_events_get(in->set, cap), NULL);
	return -1;
}

static void
lv_input_free(lv_input *in)
{
	int i;

	for (i = 0; i < in->nrev; i++)
		od_event_clear(&in->rev[i]);
	free(in->rev);
	free(in->rev_input);
	free(in->rev_kind);
	jr_free(in->doc);
	od_events_free(in->set);
	rl_free(in->rules);
	free(in->info.name);
	free(in->text);
}

static size_t
lv_nevents(lv_input *in)
{
	return in->set != NULL ? od_events_count(in->set) : (size_t)in->nrev;
}

static od_event *
lv_event_at(lv_input *in, size_t i)
{
	return in->set != NULL ? od_events_get(in->set, i) : &in->rev[i];
}

/*
 * The fake device as the log describes it: the capacity of its first
 * event that gives one (a fatal one first), and the other processes that
 * event names.
 */
static void
lv_fake_from_log(lv_input *in, dv_fake_spec *spec)
{
	const od_event *best = NULL;
	size_t i;
	int k, self;

	dv_fake_default(spec);
	for (i = 0; i < lv_nevents(in); i++) {
		const od_event *ev = lv_event_at(in, i);

		if (ev->mem.total > 0 && (best == NULL || (!best->fatal &&
		    ev->fatal)))
			best = ev;
	}
	if (best == NULL)
		return;
	snprintf(spec->name, sizeof spec->name, "fake GPU as the log "
	    "describes it");
	spec->total = best->mem.total;
	/* The failed process is gone; the others may still be there. */
	self = fc_self(best);
	for (k = 0; k < best->mem.nprocs && spec->nprocs < DV_PROCS_MAX; k++)
		if (k != self && best->mem.procs[k].bytes > 0) {
			spec->procs[spec->nprocs].pid = best->mem.procs[k].pid;
			spec->procs[spec->nprocs].bytes =
			    best->mem.procs[k].bytes;
			spec->procs[spec->nprocs].self = false;
			spec->nprocs++;
		}
}

static void
lv_on_signal(int sig)
{
	dv_request_stop(sig);
}

/* SIGINT and SIGTERM ask the probes to stop; a second one kills. */
static void
lv_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = lv_on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The other processes on the device, before any context of ours. */
static void
lv_others(dv_device *d, lv_report *rep)
{
	dv_proc v[DV_PROCS_MAX];
	int n, i;

	n = dv_processes(d, v, DV_PROCS_MAX, &rep->procs_known);
	for (i = 0; i < n; i++)
		if (!v[i].self)
			rep->procs[rep->nprocs++] = v[i];
}

/* The line that says why only the read-only probes ran. */
static void
lv_refusal(const lv_report *rep, int index, char *out, size_t len)
{
	int64_t sum = 0;
	size_t used;
	int i;
	char total[32];

	for (i = 0; i < rep->nprocs; i++)
		if (rep->procs[i].bytes > 0)
			sum += rep->procs[i].bytes;
	od_size_format(sum, total, sizeof total);
	used = (size_t)snprintf(out, len, "GPU %d is in use by %d other "
	    "process%s (pid", index, rep->nprocs, rep->nprocs == 1 ? "" : "es");
	for (i = 0; i < rep->nprocs && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s %lld",
		    i ? "," : "", (long long)rep->procs[i].pid);
	if (used < len)
		snprintf(out + used, len - used, "; %s): only the read-only "
		    "probes ran; use --force to run the others", total);
}

int
od_live_main(int argc, char **argv)
{
	lv_config cfg;
	lv_input in;
	lv_report rep;
	lv_event *events = NULL;
	dv_fake_spec spec;
	dv_config dcfg;
	dv_device *d = NULL;
	pb_session *s = NULL;
	pb_opts po;
	od_error err;
	dv_status st;
	size_t i, nev = 0;
	int status, ne = 0, argc2 = argc - 1;
	char **argv2 = argv + 1;

	memset(&cfg, 0, sizeof cfg);
	memset(&in, 0, sizeof in);
	memset(&rep, 0, sizeof rep);
	memset(&err, 0, sizeof err);
	cfg.cmd = strcmp(argv[1], "probe") == 0 ? "probe" : "live";
	cfg.backend = "cuda";
	cfg.cap = -1;
	cfg.cap_percent = 90;
	cfg.time_limit = 10;
	cfg.format = OD_FORMAT_TEXT;
	cfg.default_rules = true;
	status = lv_parse(argc2, argv2, &cfg);
	if (status >= 0)
		return status;
	if (strcmp(cfg.cmd, "live") == 0) {
		status = lv_load(&cfg, &in);
		if (status >= 0)
			goto out;
		nev = lv_nevents(&in);
		if (nev == 0) {
			/* Nothing to confirm: the report says so, and no
			 * device is opened. */
			rep.format = cfg.format;
			rep.command = cfg.cmd;
			rep.backend = cfg.backend;
			rep.context = rep.free_at_start = rep.cap = -1;
			rep.time_limit = cfg.time_limit;
			rep.inputs = in.names;
			rep.ninputs = in.nnames;
			lv_report_write(stdout, &rep);
			status = OD_EXIT_NONE;
			goto out;
		}
	}
	dv_fake_default(&spec);
	if (strcmp(cfg.backend, "fake") == 0) {
		if (strcmp(cfg.cmd, "live") == 0)
			lv_fake_from_log(&in, &spec);
		if (cfg.fake != NULL && !dv_fake_parse(&spec, cfg.fake, &err)) {
			fprintf(stderr, "oomdoc %s: %s (see oomdoc(1), LIVE "
			    "MODE)\n", cfg.cmd, err.msg);
			status = OD_EXIT_ERROR;
			goto out;
		}
	}
	memset(&dcfg, 0, sizeof dcfg);
	dcfg.index = cfg.device;
	dcfg.fake = &spec;
	dcfg.time_limit = cfg.time_limit;
	dcfg.nvml_path = getenv("OOMDOC_NVML");
	dcfg.cupti_path = getenv("OOMDOC_CUPTI");
	lv_signals();
	d = dv_open(cfg.backend, &dcfg, &st, &err);
	if (d == NULL) {
		lv_error(cfg.cmd, &err);
		status = OD_EXIT_DEVICE;
		goto out;
	}
	rep.format = cfg.format;
	rep.command = cfg.cmd;
	rep.backend = cfg.backend;
	rep.info = dv_info_of(d);
	rep.time_limit = cfg.time_limit;
	rep.force = cfg.force;
	rep.context = rep.free_at_start = rep.cap = -1;
	rep.inputs = in.names;
	rep.ninputs = strcmp(cfg.cmd, "live") == 0 ? in.nnames : 0;
	if (cfg.cap < 0)
		snprintf(rep.cap_from, sizeof rep.cap_from, "%d%% of the free "
		    "memory", cfg.cap_percent);
	else
		snprintf(rep.cap_from, sizeof rep.cap_from, "--max-memory");
	lv_others(d, &rep);
	memset(&po, 0, sizeof po);
	po.read_only = rep.nprocs > 0 && !cfg.force;
	po.cap = cfg.cap;
	po.cap_percent = cfg.cap_percent;
	if (po.read_only)
		lv_refusal(&rep, cfg.device, rep.refused, sizeof rep.refused);
	s = pb_session_new(d, &po);
	if (s == NULL) {
		fprintf(stderr, "oomdoc %s: out of memory\n", cfg.cmd);
		status = OD_EXIT_ERROR;
		goto out;
	}
	if (strcmp(cfg.cmd, "probe") == 0) {
		static const pb_probe order[] = { PB_PROCESSES, PB_CONTEXT_COST,
		    PB_LARGEST_ALLOCATION, PB_HEALTH };

		for (i = 0; i < sizeof order / sizeof order[0]; i++)
			rep.probes[rep.nprobes++] = pb_run(s, order[i], NULL);
	} else {
		events = calloc(nev < LV_EVENTS_MAX ? nev : LV_EVENTS_MAX,
		    sizeof *events);
		if (events == NULL) {
			fprintf(stderr, "oomdoc live: out of memory\n");
			status = OD_EXIT_ERROR;
			goto out;
		}
		for (i = 0; i < nev && ne < LV_EVENTS_MAX && !dv_stopped(); i++) {
			lv_event *le = &events[ne++];

			le->ev = lv_event_at(&in, i);
			le->input = in.set != NULL ? in.names[0] :
			    in.rev_input[i];
			le->kind = in.set != NULL ? od_kind_name(le->ev->kind) :
			    in.rev_kind[i];
			le->nv = pb_verdicts(s, le->ev, le->v, OD_CAUSES_MAX);
		}
	}
	rep.events = events;
	rep.nevents = ne;
	rep.nevents_total = (int)nev;
	rep.context = pb_session_context(s);
	rep.free_at_start = pb_session_free_at_start(s);
	if (pb_session_started(s))
		rep.cap = dv_cap(d);
	rep.peak_held = dv_peak(d);
	if (pb_session_failed(s, &err) != DV_OK)
		snprintf(rep.failed, sizeof rep.failed, "%s", err.msg);
	if (dv_stopped())
		snprintf(rep.stopped, sizeof rep.stopped, "signal %d",
		    dv_stop_signal());
	lv_report_write(stdout, &rep);
	status = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "oomdoc %s: cannot write the report\n",
		    cfg.cmd);
		status = OD_EXIT_ERROR;
	}
	if (rep.failed[0] != '\0') {
		fprintf(stderr, "oomdoc %s: the device failed: %s\n", cfg.cmd,
		    rep.failed);
		status = OD_EXIT_DEVICE;
	} else if (rep.refused[0] != '\0') {
		fprintf(stderr, "oomdoc %s: %s\n", cfg.cmd, rep.refused);
		status = OD_EXIT_DEVICE;
	}
	if (dv_stopped()) {
		pb_session_free(s);
		s = NULL;
		dv_close(d);
		d = NULL;
		fprintf(stderr, "oomdoc %s: stopped by signal %d; everything "
		    "it allocated was released\n", cfg.cmd, dv_stop_signal());
		status = 128 + dv_stop_signal();
	}
out:
	pb_session_free(s);
	dv_close(d);
	free(events);
	lv_input_free(&in);
	return status;
}
