/*
 * cmd_live.c: `oomdoc live` and `oomdoc probe`.  Parses the options,
 * reads the input (live.c), asks SIGINT and SIGTERM to stop the probes,
 * runs a live session (src/live/session.h), writes its report, and turns
 * what happened into an exit status: 0 when the probes ran, 1 when the
 * input has no out-of-memory event, 2 on a usage or input error, 3 on an
 * error in the rules, 4 when the device failed, 5 with no GPU or driver,
 * 6 when the driver is too old, 7 when refused or stopped for safety, 8
 * on a timeout (the watchdog's _exit included), 128 + N when signal N
 * stopped it.  The session releases everything it took on the device
 * on every one of these paths.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "session.h"
#include "watchdog.h"

enum {
	LV_BACKEND = 256, LV_FAKE, LV_MAX_MEMORY, LV_TIME_LIMIT, LV_FORCE,
	LV_RULES, LV_NO_DEFAULT_RULES, LV_PATTERN_SEED, LV_TORCH_BASELINE,
	LV_TORCH_PYTHON
};

static const od_option lv_options[] = {
	{ .name = "device", .letter = 'd', .arg = "GPU",
	  .help = "the GPU to probe: a CUDA index, a UUID (GPU-..., MIG-...) "
	    "or a PCI bus id (default: the event's GPU, else 0)" },
	{ .name = "backend", .letter = LV_BACKEND, .arg = "NAME",
	  .help = "cuda (default) or fake, a simulated GPU",
	  .values = "cuda fake" },
	{ .name = "fake-device", .letter = LV_FAKE, .arg = "SETTINGS",
	  .help = "the fake GPU, as KEY=VALUE,... (see oomdoc(1))" },
	{ .name = "max-memory", .letter = LV_MAX_MEMORY, .arg = "SIZE",
	  .help = "take at most SIZE, or N% of the free memory (default 90%; "
	    "under --force, never more than 50%)" },
	{ .name = "time-limit", .letter = LV_TIME_LIMIT, .arg = "SECONDS",
	  .help = "stop each kernel after this long (default 10)" },
	{ .name = "pattern-seed", .letter = LV_PATTERN_SEED, .arg = "N",
	  .help = "the seed of the memory test's random pattern (default: "
	    "from the clock; the report prints it)" },
	{ .name = "force", .letter = LV_FORCE,
	  .help = "probe even when other processes use the GPU, or cannot be "
	    "listed" },
	{ .name = "torch-baseline", .letter = LV_TORCH_BASELINE,
	  .help = "also measure an empty PyTorch process (python3 -c 'import "
	    "torch; torch.cuda.init()') as the context's second baseline" },
	{ .name = "torch-python", .letter = LV_TORCH_PYTHON, .arg = "PYTHON",
	  .help = "the interpreter for --torch-baseline (default python3; "
	    "implies it)" },
	{ .name = "format", .letter = 'f', .arg = "FORMAT",
	  .help = "report format: text (default), markdown or json",
	  .values = "text markdown json" },
	{ .name = "rules", .letter = LV_RULES, .arg = "PATH",
	  .help = "load rules from this file or directory too (repeatable)" },
	{ .name = "no-default-rules", .letter = LV_NO_DEFAULT_RULES,
	  .help = "do not load the shipped rules" },
	{ .name = "help", .letter = 'h', .help = "print this help, and exit" },
};

#define LV_NOPTS ((int)(sizeof lv_options / sizeof lv_options[0]))

const od_option *
lv_option_table(int *n)
{
	*n = LV_NOPTS;
	return lv_options;
}

/* What the options asked for. */
typedef struct {
	const char *label;      /* "live" or "probe" */
	bool probe;             /* `oomdoc probe` */
	lv_session_opts session;
	od_report_format format;
	const char *path;       /* the input, "-" for standard input */
	cli_rules rules;
} lv_config;

static void
lv_help(const lv_config *cfg)
{
	if (cfg->probe)
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
	    "error in the rules, 4 when the\ndevice failed, 5 with no GPU, no "
	    "driver or no such device, 6 when the driver\nis too old, 7 when "
	    "refused or stopped for safety (other processes, or none\n"
	    "listable, without --force; a process that came during the run), "
	    "8 when a\ndevice call ran past the time limit, 128 + N when "
	    "signal N stopped it.\nSee oomdoc(1).\n", stdout);
}

/* --max-memory: a size, or a percentage of the free memory. */
static bool
lv_parse_cap(const char *arg, lv_session_opts *o)
{
	size_t n = strlen(arg);

	if (n > 1 && arg[n - 1] == '%') {
		char *end;
		long p = strtol(arg, &end, 10);

		if (end != arg + n - 1 || p < 1 || p > 100)
			return false;
		o->cap = -1;
		o->cap_percent = (int)p;
		return true;
	}
	return od_size_parse_text(arg, n, &o->cap) && o->cap > 0;
}

/* Whether arg is a GPU's UUID (GPU-..., MIG-...: nvidia-smi -L) or a PCI
 * bus id (domain:bus:device.function, or bus:device.function, in hex). */
static bool
lv_device_id(const char *arg)
{
	unsigned dom, bus, dev, fn;
	char tail;
	size_t n = strlen(arg);

	if (n > 4 && n < 90 && (strncmp(arg, "GPU-", 4) == 0 ||
	    strncmp(arg, "MIG-", 4) == 0))
		return strspn(arg + 4, "0123456789abcdefABCDEF-/") == n - 4;
	if (sscanf(arg, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4)
		return n < 20 && fn < 8;
	return sscanf(arg, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3 &&
	    n < 12 && fn < 8;
}

/* Returns -1 to go on, or the status to exit with. */
static int
lv_parse(int argc, char **argv, lv_config *cfg)
{
	struct option longopts[LV_NOPTS + 1];
	char shortopts[2 * LV_NOPTS + 2];
	const char *label = cfg->label;
	lv_session_opts *o = &cfg->session;
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

			o->device_explicit = true;
			if (lv_device_id(optarg)) {
				o->device_id = optarg;
				break;
			}
			if (end == optarg || *end != '\0' || v < 0 || v > 1023)
				return cli_usage(label, "--device takes a GPU "
				    "index, UUID or PCI bus id, not", optarg);
			o->device = (int)v;
			break;
		}
		case LV_BACKEND:
			if (strcmp(optarg, "cuda") != 0 &&
			    strcmp(optarg, "fake") != 0)
				return cli_usage(label, "--backend takes cuda or "
				    "fake, not", optarg);
			o->backend = optarg;
			break;
		case LV_FAKE:
			o->fake = optarg;
			break;
		case LV_MAX_MEMORY:
			if (!lv_parse_cap(optarg, o))
				return cli_usage(label, "--max-memory takes a "
				    "size or a percentage from 1% to 100%, not",
				    optarg);
			break;
		case LV_TIME_LIMIT:
			o->time_limit = strtod(optarg, &end);
			if (end == optarg || *end != '\0' ||
			    !(o->time_limit > 0 && o->time_limit <= 3600))
				return cli_usage(label, "--time-limit takes "
				    "seconds, more than 0 and at most 3600, not",
				    optarg);
			break;
		case LV_FORCE:
			o->force = true;
			break;
		case LV_PATTERN_SEED: {
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (end == optarg || *end != '\0' || errno != 0 ||
			    v == 0 || optarg[0] == '-')
				return cli_usage(label, "--pattern-seed takes a "
				    "number from 1 to 2^64 - 1, not", optarg);
			o->seed = (uint64_t)v;
			break;
		}
		case LV_TORCH_BASELINE:
			if (o->torch_python == NULL)
				o->torch_python = "python3";
			break;
		case LV_TORCH_PYTHON:
			if (optarg[0] == '\0')
				return cli_usage(label, "--torch-python takes an "
				    "interpreter, not", optarg);
			o->torch_python = optarg;
			break;
		case LV_RULES:
			if (cfg->rules.npaths == CLI_RULES_MAX)
				return cli_usage(label, "too many --rules; the "
				    "limit is 32, at", optarg);
			cfg->rules.paths[cfg->rules.npaths++] = optarg;
			break;
		case LV_NO_DEFAULT_RULES:
			cfg->rules.shipped = false;
			break;
		case 'f':
			if (!cli_format_parse(optarg, &cfg->format))
				return cli_usage(label, "unknown format", optarg);
			break;
		case 'h':
			lv_help(cfg);
			return 0;
		default:
			return od_options_error(label, lv_options, LV_NOPTS, c,
			    arg);
		}
	}
	if (o->fake != NULL && strcmp(o->backend, "fake") != 0)
		return cli_usage(label, "--fake-device needs --backend fake, "
		    "not", o->backend);
	if (cfg->probe) {
		if (optind < argc)
			return cli_usage(label, "probe reads no input, not",
			    argv[optind]);
	} else {
		if (argc - optind > 1)
			return cli_usage(label, "live reads one input; another "
			    "is", argv[optind + 1]);
		cfg->path = optind < argc ? argv[optind] : "-";
	}
	return -1;
}

/* What the watchdog needs to write the partial report. */
static struct {
	lv_session *s;
	lv_report *rep;
	od_report_format format;
	const char *label;
} lv_wd;

/*
 * The watchdog's end of a hung run (watchdog.h): on its thread, while the
 * run is blocked in the device call, it writes the report of what ran,
 * one line on standard error, and lets the watchdog _exit() with
 * OD_EXIT_TIMEOUT; nothing is freed or unmapped.
 */
static void
lv_on_watchdog(void *arg, double seconds)
{
	(void)arg;
	lv_session_partial(lv_wd.s, seconds);
	lv_wd.rep->format = lv_wd.format;
	lv_report_write(stdout, lv_wd.rep);
	fflush(stdout);
	cli_say(lv_wd.label, "%s", lv_wd.rep->failed);
	fflush(stderr);
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

int
cmd_live(const cli_command *cmd, int argc, char **argv)
{
	const char *label = cmd->label;
	lv_config cfg;
	lv_input *in = NULL;
	lv_item *items = NULL;
	lv_session *s = NULL;
	lv_report rep;
	od_error err;
	size_t n = 0;
	int status;

	memset(&cfg, 0, sizeof cfg);
	memset(&err, 0, sizeof err);
	cfg.label = label;
	cfg.probe = strcmp(cmd->name, "probe") == 0;
	cfg.session.probe_only = cfg.probe;
	cfg.session.backend = "cuda";
	cfg.session.cap = -1;
	cfg.session.cap_percent = 0;    /* 90 %, or 50 % under --force */
	cfg.session.time_limit = 10;
	cfg.format = OD_FORMAT_TEXT;
	cfg.rules.shipped = true;
	status = lv_parse(argc, argv, &cfg);
	if (status >= 0)
		return status;
	if (!cfg.probe) {
		in = lv_input_new();
		if (in == NULL)
			goto no_memory;
		status = lv_input_load(in, label, cfg.path, &cfg.rules);
		if (status >= 0)
			goto out;
		items = lv_input_items(in, &n);
		if (items == NULL)
			goto no_memory;
		cfg.session.inputs = lv_input_names(in, &cfg.session.ninputs);
	}
	cfg.session.nvml_path = getenv("OOMDOC_NVML");
	cfg.session.cupti_path = getenv("OOMDOC_CUPTI");
	s = lv_session_new();
	if (s == NULL)
		goto no_memory;
	lv_signals();
	memset(&rep, 0, sizeof rep);
	lv_wd.s = s;
	lv_wd.rep = &rep;
	lv_wd.format = cfg.format;
	lv_wd.label = label;
	if (!lv_watchdog_start(cfg.session.time_limit, LV_WATCHDOG_GRACE,
	    lv_on_watchdog, NULL, OD_EXIT_TIMEOUT)) {
		cli_say(label, "cannot start the watchdog thread, so a hung "
		    "kernel could not be stopped: refusing to run");
		status = OD_EXIT_REFUSED;
		goto out;
	}
	switch (lv_session_run(s, &cfg.session, items, n, &rep, &err)) {
	case LV_RUN_DONE:
		break;
	case LV_RUN_NO_EVENTS:
		/* Nothing to confirm: the report says so. */
		rep.format = cfg.format;
		lv_report_write(stdout, &rep);
		status = OD_EXIT_NONE;
		goto out;
	case LV_RUN_BAD_SETTINGS:
		cli_say(label, "%s (see oomdoc(1), LIVE MODE)", err.msg);
		status = OD_EXIT_ERROR;
		goto out;
	case LV_RUN_NO_DEVICE:
		cli_error(label, &err);
		status = OD_EXIT_NO_GPU;
		goto out;
	case LV_RUN_DRIVER_OLD:
		cli_error(label, &err);
		status = OD_EXIT_DRIVER_OLD;
		goto out;
	case LV_RUN_DEVICE_FAILED:
		cli_error(label, &err);
		status = OD_EXIT_DEVICE;
		goto out;
	case LV_RUN_NO_MEMORY:
		goto no_memory;
	}
	rep.format = cfg.format;
	lv_report_write(stdout, &rep);
	status = 0;
	if (!cli_stdout_ok(label))
		status = OD_EXIT_ERROR;
	if (rep.failed[0] != '\0' && rep.timed_out) {
		cli_say(label, "timed out: %s", rep.failed);
		status = OD_EXIT_TIMEOUT;
	} else if (rep.failed[0] != '\0' && rep.driver_old) {
		cli_say(label, "driver too old: %s", rep.failed);
		status = OD_EXIT_DRIVER_OLD;
	} else if (rep.failed[0] != '\0') {
		cli_say(label, "the device failed: %s", rep.failed);
		status = OD_EXIT_DEVICE;
	} else if (rep.refused[0] != '\0') {
		cli_say(label, "%s", rep.refused);
		status = OD_EXIT_REFUSED;
	}
	if (dv_stopped()) {
		/* Released before it says so. */
		lv_session_free(s);
		s = NULL;
		cli_say(label, "stopped by signal %d; everything it allocated "
		    "was released", dv_stop_signal());
		status = 128 + dv_stop_signal();
	}
	goto out;
no_memory:
	cli_say(label, "out of memory");
	status = OD_EXIT_ERROR;
out:
	lv_watchdog_stop();
	lv_session_free(s);
	free(items);
	lv_input_free(in);
	return status;
}
