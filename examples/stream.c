/*
 * stream.c: a log-pipeline filter built on liboomdoc, to show that the
 * library can be embedded with nothing but its public header.
 *
 * It reads standard input in chunks of 4096 bytes, as they arrive, hands
 * each to the scanner, and prints one line per out-of-memory event as
 * soon as the scanner has it complete:
 *
 *     LINE<TAB>KIND<TAB>REQUESTED
 *
 * LINE is the event's first line in the input, KIND its kind as the JSON
 * report names it, REQUESTED the bytes of the allocation that failed, or
 * "-" when the log does not give them.  Exit status: 0 if an event was
 * found, 1 if none was, 2 on an error.
 *
 *     tail -f train.log | oomdoc-stream /usr/share/oomdoc/rules
 *
 * The argument, a rules directory or file, gives the recognisers of every
 * stack but PyTorch's allocator (the shipped recognisers.yaml); without
 * it only PyTorch's allocator messages and the fallback's "unrecognised"
 * phrases are read.
 *
 * Build it against an installed library with
 *
 *     cc stream.c $(pkg-config --cflags --libs oomdoc)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <oomdoc/oomdoc.h>

/* Called by the scanner, from within feed or finish, once per event. */
static void
print_event(oomdoc_event *ev, void *arg)
{
	int64_t requested = oomdoc_event_figure(ev, OOMDOC_FIG_REQUESTED);
	unsigned long *count = arg;

	printf("%" PRIu64 "\t%s\t", oomdoc_event_line(ev),
	    oomdoc_event_kind(ev));
	if (requested == OOMDOC_UNKNOWN)
		puts("-");
	else
		printf("%" PRId64 "\n", requested);
	/* A filter's reader wants each line now, not when a buffer fills. */
	fflush(stdout);
	(*count)++;
}

int
main(int argc, char **argv)
{
	oomdoc_options opts;
	oomdoc_scanner *sc;
	oomdoc_rules *rules = oomdoc_rules_new();
	oomdoc_error err;
	char chunk[4096];
	unsigned long count = 0;
	int status = 0;

	if (rules == NULL || (argc > 1 && !oomdoc_rules_load(rules, argv[1]))) {
		if (rules != NULL && oomdoc_rules_error(rules, 0, &err))
			fprintf(stderr, "oomdoc-stream: %s:%llu:%llu: %s\n",
			    err.file, (unsigned long long)err.line,
			    (unsigned long long)err.col, err.message);
		else
			fputs("oomdoc-stream: out of memory\n", stderr);
		oomdoc_rules_free(rules);
		return 2;
	}
	/* The defaults, with the version of the options this program knows,
	 * and the recognisers of the rules, which outlive the scanner. */
	oomdoc_options_init(&opts);
	opts.recognisers = rules;
	sc = oomdoc_scanner_new(&opts, &err);
	if (sc == NULL) {
		fprintf(stderr, "oomdoc-stream: %s\n", err.message);
		oomdoc_rules_free(rules);
		return 2;
	}
	oomdoc_scanner_on_event(sc, print_event, &count);

	/* read(2) returns what has arrived, so events come out as the log
	 * is written, not when 4096 bytes have piled up. */
	for (;;) {
		ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "oomdoc-stream: standard input: %s\n",
			    strerror(errno));
			status = 2;
			break;
		}
		if (n == 0)
			break;
		oomdoc_scanner_feed(sc, chunk, (size_t)n);
	}
	/* The end of the input: the events still waiting for text after
	 * them come out now. */
	oomdoc_scanner_finish(sc);
	oomdoc_scanner_free(sc);
	oomdoc_rules_free(rules);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fputs("oomdoc-stream: cannot write the output\n", stderr);
		return 2;
	}
	if (status != 0)
		return status;
	return count > 0 ? 0 : 1;
}
