/*
 * event.c: the events of a run, with echoes grouped.
 *
 * The same OOM is often printed several times: by every rank of a job, by
 * a launcher that repeats the child's error, by a retry loop.  Two events
 * are the same when their kind and their message, with the whitespace
 * collapsed, are equal; the second is then merged into the first (its rank
 * joins the list of ranks, its count is added).  Distinct events are kept
 * in the order in which they first appeared, at most OD_EVENTS_MAX of
 * them (or the set's own smaller limit); the ones beyond are counted, not
 * kept, so that a log with a million different OOM lines still runs in
 * bounded memory.
 *
 * The cap keeps the most severe events, not merely the first ones.  An
 * event's severity is whether it is fatal, then its confidence
 * (ev_severity).  When the set is full, a new event more severe than the
 * least severe one kept takes its place: the latest of the least severe
 * events is dropped, the later ones move up, and the new one goes at the
 * end, so that the kept events stay in log order.  After 500 allocator
 * warnings or low-confidence kills the one fatal OOM is therefore kept,
 * and the warning it displaced is counted among those not kept.  A
 * streaming caller (--format jsonl) has had the dropped event already if
 * it was delivered; od_events_ndelivered tells the scanner how many of
 * the delivered ones remain, and an echo of the dropped one cannot come
 * back (no event less severe than it is kept, so the echo is not kept).  Each place can only be taken by a more
 * severe event, so a run displaces at most max * (OD_SEVERITY_LEVELS - 1)
 * events, each at a cost of O(max + EV_SLOTS): the cap stays linear.
 *
 * Merging never hides an input.  An event merged from several inputs (the
 * same failure in many job logs, a log per rank) lists every input that
 * reported it, with the line of its first report there (od_event.seen),
 * so that what an input holds can always be told (grep's -c and -l, the
 * summary of cmd_diagnose.c).  The grouping itself crosses inputs on
 * purpose: one rank's log per file is one job, and its ranks' reports are
 * one failure with a per-rank table.
 *
 * Many ranks are one story.  When ranks report one failure each with its
 * own figures (the messages are equal but for their numbers and units,
 * and come within EV_PEER_LINES lines of each other or from another
 * input), the reports join the first one's event as rows of a per-rank
 * table (rank, device, line, requested, free, allocated, reserved,
 * total) instead of making an event each; the event's own figures, and
 * so its causes, are the first report's.  The first fatal event of the run is
 * its first failure: in log order, which is not always what torchrun's
 * ChildFailedError table calls the "root cause" (the first exit torchrun
 * saw).  torchrun's reports of the processes it ended or lost after that
 * (their exitcode -9 lines and tables) are marked secondary.
 *
 * Two Slurm jobs are two failures.  A node's log interleaves its jobs: a
 * kernel kill in one job's memory cgroup (context.c reads the job from the
 * cgroup path the kernel names) and the next job's slurmstepd line
 * ("StepId=N.M") come within a few lines of each other.  Events whose
 * jobs (host.job) are both known and differ are never joined, neither as
 * two views of one failure (ev_near), nor as two reports of one pid, nor
 * as echoes of one message.
 */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "core.h"

#define EV_SLOTS 2048           /* hash slots, a power of two > 2 * max */
/*
 * Rank list entries over all the events of a set: 256 KiB of lists, so
 * that 500 events printed by 4096 ranks each stay within a few MiB (8 MiB
 * of lists otherwise, and in the JSON report about 60 bytes of jansson
 * values and text per listed rank: 120 MiB).  16 events list all of
 * OD_RANKS_MAX ranks; the lists of events beyond that budget stop
 * growing (ranks_dropped, as past OD_RANKS_MAX), while their counts of
 * reports (occurrences) stay whole.
 */
#define EV_RANKS_TOTAL (1u << 16)
#define EV_RANKS_FIRST 8        /* entries of a list's first allocation */

_Static_assert(EV_SLOTS > 2 * OD_EVENTS_MAX, "EV_SLOTS holds OD_EVENTS_MAX");

struct od_events {
	od_event *ev;           /* cap entries, grown up to max */
	size_t n;
	size_t cap;
	size_t max;
	int slot[EV_SLOTS];     /* index + 1 into ev, 0 when empty */
	int nslots;             /* slots in use */
	uint64_t dropped;
	size_t sealed;          /* events before this one were delivered */
	size_t rank_budget;     /* rank list entries left of EV_RANKS_TOTAL */
	int first;              /* the first fatal event: index + 1, 0 none */
	/* The event the last report went into, for ev_near. */
	int last;               /* index + 1, 0 when none */
	int last_input;
	uint64_t last_end;
	bool last_echo;         /* last is open again through an echo */
	/* od_events_filter: -1 any rank, -1 any kind, 0 no limit. */
	int want_rank, want_kind, max_per_input;
	int *per_input;         /* events listing each input, ncount of them */
	int ncount;
	bool nomem;             /* a list or table could not grow
	                         * (od_events_nomem) */
	/* ev_victim's look over the events, kept until one may change
	 * (ev_changed); reached through a pointer so that od_events_known,
	 * which takes the set const, can keep it. */
	struct ev_low *low;
	/* The mentions (od_events_mention): the first OD_MENTIONS_MAX, and
	 * how many there were. */
	od_mention mentions[OD_MENTIONS_MAX];
	size_t nmentions;
};

/* The lowest severity of a set's events and the latest event of it
 * (set->n: no event), while ok. */
struct ev_low {
	bool ok;
	int low;
	size_t last;
};

/* The events of set or their severities may change: ev_victim looks
 * again. */
static void
ev_changed(const od_events *set)
{
	set->low->ok = false;
}

/*
 * Events allocated at first: the array grows (doubling) up to max as
 * events come.  Most logs hold a few events, and a run that allocates
 * (and, under a sanitizer, poisons) all max of them (550 KB) at once spends
 * more on that than on its scan: fuzz_scan ran about 20% faster with it.
 * A pointer from od_events_get is valid until the next od_events_add,
 * which may move the events (as a displacement at the cap always could).
 */
#define EV_FIRST_CAP 8

#define EV_NEAR_LINES 20        /* lines between two reports of one failure */
/* The same after the head of a report (od_event.dump_head): the kernel's
 * OOM report runs from its "invoked oom-killer" line through the call
 * trace, the memory counters and the task table, one line a task, to its
 * "Killed process" line. */
#define EV_DUMP_LINES 4096
#define EV_PEER_LINES 2000      /* between two ranks' reports of one failure */

void
od_event_init(od_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->rank = -1;
	ev->device = -1;
	ev->occurrences = 1;
	ev->mem.requested = ev->mem.total = ev->mem.free = OD_UNKNOWN;
	ev->mem.allocated = ev->mem.reserved = OD_UNKNOWN;
	ev->mem.reserved_unallocated = ev->mem.process_in_use = OD_UNKNOWN;
	ev->mem.non_framework = ev->mem.allowed = OD_UNKNOWN;
	ev->mem.private_pools = ev->mem.peak = OD_UNKNOWN;
	ev->host.pid = -1;
	ev->host.total_vm = ev->host.anon_rss = ev->host.file_rss = OD_UNKNOWN;
	ev->host.shmem_rss = ev->host.limit = ev->host.usage = OD_UNKNOWN;
	ev->confidence = OD_CONF_HIGH;
	ev->framework = NULL;
	ev->step = -1;
	ev->after.watchdog_rank = ev->after.root_cause_rank = -1;
	ev->after.watchdog_line = ev->after.root_cause_line = -1;
	cx_reset(&ev->ctx);
}

/*
 * Kills of one process are often reported several times in different
 * words (the kernel's oom-kill line and "Killed process", a launcher's
 * exitcode -9 table and its "Signal 9 received by PID"): such events are
 * one when their kind and process are the same.
 */
static bool
ev_by_pid(const od_event *ev)
{
	return ev->host.pid >= 0 && (ev->kind == OD_KIND_HOST_OOM_KILLER ||
	    ev->kind == OD_KIND_DATALOADER_KILLED);
}

void
od_fix_clear(od_fix *f)
{
	free(f->text);
	free(f->env_name);
	free(f->env_value);
	free(f->code);
	free(f->config_key);
	free(f->config_value);
	memset(f, 0, sizeof *f);
}

void
od_cause_clear(od_cause *c)
{
	int i;

	free(c->explanation);
	for (i = 0; i < c->nevidence; i++)
		free(c->evidence[i].text);
	for (i = 0; i < c->nfixes; i++)
		od_fix_clear(&c->fixes[i]);
	free(c->fixes);
	memset(c, 0, sizeof *c);
}

/*
 * Frees what ev owns and leaves it holding nothing (its pointers NULL),
 * as od_event_clear does but without making it afresh: an event merged
 * into another or left out is not read again (od_events_add), and a
 * dense input merges an event a line, each of which od_event_init's
 * clear (of 9 KiB then, 3 KiB now) cost more than the merge.
 */
static void
ev_drop(od_event *ev)
{
	int i;

	free(ev->message);
	free(ev->ranks);
	free(ev->seen);
	free(ev->per_rank);
	free(ev->frames);
	free(ev->ctx.readings);
	for (i = 0; i < ev->ncauses; i++)
		od_cause_clear(&ev->causes[i]);
	free(ev->causes);
	ev->message = NULL;
	ev->message_len = 0;
	ev->ranks = NULL;
	ev->nranks = ev->ranks_cap = 0;
	ev->seen = NULL;
	ev->nseen = ev->seen_cap = 0;
	ev->per_rank = NULL;
	ev->nper_rank = 0;
	ev->frames = NULL;
	ev->nframes = 0;
	ev->ctx.readings = NULL;
	ev->ctx.nkept = 0;
	ev->causes = NULL;
	ev->ncauses = 0;
}

void
od_event_clear(od_event *ev)
{
	ev_drop(ev);
	od_event_init(ev);
}

/* Whether rank is in ev's sorted list of ranks; *at, when at is not NULL,
 * is set to its place there, or to the place it would take. */
static bool
ev_has_rank(const od_event *ev, int rank, int *at)
{
	int lo = 0, hi = ev->nranks;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (ev->ranks[mid] == rank) {
			lo = mid;
			break;
		}
		if (ev->ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at != NULL)
		*at = lo;
	return lo < ev->nranks && ev->ranks[lo] == rank;
}

/*
 * Adds rank to the sorted list of distinct ranks.  budget, when not NULL,
 * is how many more list entries the set may allocate (EV_RANKS_TOTAL over
 * all its events); a list that would grow past it stops, as one past
 * OD_RANKS_MAX does (ranks_dropped).  An event's first EV_RANKS_FIRST
 * entries are not counted: every event lists its own rank.  False when
 * memory ran out (the rank is not listed, and ranks_dropped says a list
 * is short); the caller tells its user.
 */
static bool
ev_add_rank(od_event *ev, int rank, size_t *budget)
{
	int lo;

	if (rank < 0 || ev_has_rank(ev, rank, &lo))
		return true;
	if (ev->nranks >= OD_RANKS_MAX) {
		ev->ranks_dropped = true;
		return true;
	}
	if (ev->nranks == ev->ranks_cap) {
		int cap = ev->ranks_cap ? ev->ranks_cap * 2 : EV_RANKS_FIRST;
		int *r;

		if (cap > OD_RANKS_MAX)
			cap = OD_RANKS_MAX;
		if (budget != NULL && ev->ranks_cap > 0 &&
		    *budget < (size_t)(cap - ev->ranks_cap)) {
			ev->ranks_dropped = true;
			return true;
		}
		if ((r = realloc(ev->ranks, (size_t)cap * sizeof *r)) == NULL) {
			ev->ranks_dropped = true;
			return false;
		}
		if (budget != NULL && ev->ranks_cap > 0)
			*budget -= (size_t)(cap - ev->ranks_cap);
		ev->ranks = r;
		ev->ranks_cap = cap;
	}
	memmove(ev->ranks + lo + 1, ev->ranks + lo,
	    (size_t)(ev->nranks - lo) * sizeof *ev->ranks);
	ev->ranks[lo] = rank;
	ev->nranks++;
	return true;
}

bool
od_event_add_rank(od_event *ev, int rank)
{
	return ev_add_rank(ev, rank, NULL);
}

#define EV_SEEN_MAX 65536      /* inputs listed on one event */

bool
od_event_seen_in(const od_event *ev, int input)
{
	int i;

	for (i = 0; i < ev->nseen; i++)
		if (ev->seen[i].input == input)
			return true;
	return false;
}

/* How many events list input so far. */
static int
ev_count_of(const od_events *set, int input)
{
	return input >= 0 && input < set->ncount ? set->per_input[input] : 0;
}

/*
 * Adds input (at line) to ev's list unless it is there, and counts the
 * event for that input.  Out of memory, or past EV_SEEN_MAX inputs, the
 * input is not listed (the event's first input always is: it is added
 * when the event is kept, into an empty list).
 */
static void
ev_add_seen(od_events *set, od_event *ev, int input, uint64_t line)
{
	if (input < 0 || od_event_seen_in(ev, input))
		return;
	if (ev->nseen == ev->seen_cap) {
		int cap = ev->seen_cap ? ev->seen_cap * 2 : 2;
		od_event_seen *n;

		if (ev->nseen >= EV_SEEN_MAX)
			return;
		if ((n = realloc(ev->seen, (size_t)cap * sizeof *n)) == NULL) {
			set->nomem = true;
			return;
		}
		ev->seen = n;
		ev->seen_cap = cap;
	}
	ev->seen[ev->nseen].input = input;
	ev->seen[ev->nseen].line = line;
	ev->nseen++;
	if (input >= set->ncount) {
		int want = input + 1 > 2 * set->ncount ? input + 1 :
		    2 * set->ncount;
		int *c = realloc(set->per_input, (size_t)want * sizeof *c);

		if (c == NULL) {
			set->nomem = true;
			return;
		}
		memset(c + set->ncount, 0, (size_t)(want - set->ncount) *
		    sizeof *c);
		set->per_input = c;
		set->ncount = want;
	}
	set->per_input[input]++;
}

/* Whether ev may go into old (NULL: be kept as a new event) under the
 * filter's limit of events per input. */
static bool
ev_room(const od_events *set, const od_event *old, const od_event *ev)
{
	if (set->max_per_input <= 0 || (old != NULL &&
	    od_event_seen_in(old, ev->input)))
		return true;
	return ev_count_of(set, ev->input) < set->max_per_input;
}

void
od_events_filter(od_events *set, int rank, int kind, int max_per_input)
{
	set->want_rank = rank;
	set->want_kind = kind;
	set->max_per_input = max_per_input;
}

/* FNV-1a over the kind and the message with whitespace runs collapsed. */
static uint64_t
ev_key(const od_event *ev)
{
	uint64_t h = 1469598103934665603ULL;
	bool space = false;
	size_t i;

	h = (h ^ (uint64_t)ev->kind) * 1099511628211ULL;
	if (ev_by_pid(ev))
		return (h ^ (uint64_t)ev->host.pid) * 1099511628211ULL;
	h = (h ^ (uint64_t)ev->fatal) * 1099511628211ULL;
	for (i = 0; i < ev->message_len; i++) {
		unsigned char c = (unsigned char)ev->message[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = true;
			continue;
		}
		if (space)
			h = (h ^ ' ') * 1099511628211ULL;
		space = false;
		h = (h ^ c) * 1099511628211ULL;
	}
	return h;
}

/* A reader of a message with whitespace runs as one space and each
 * figure (a number and the unit after it) as '#'. */
typedef struct {
	const char *s;
	size_t n, i;
} ev_norm;

static bool
ev_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool
ev_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether s[0..n) is a unit that follows a figure. */
static bool
ev_unit(const char *s, size_t n)
{
	static const char *const units[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "kB", "KB", "MB", "GB", "TB",
		"bytes",
	};
	size_t k;

	for (k = 0; k < sizeof units / sizeof units[0]; k++)
		if (strlen(units[k]) == n && memcmp(units[k], s, n) == 0)
			return true;
	return false;
}

/* The next character of the normalised message, -1 at its end. */
static int
ev_norm_next(ev_norm *r)
{
	size_t j, k;
	char c;

	if (r->i >= r->n)
		return -1;
	c = r->s[r->i];
	if (ev_space(c)) {
		while (r->i < r->n && ev_space(r->s[r->i]))
			r->i++;
		return ' ';
	}
	if (!ev_digit(c)) {
		r->i++;
		return (unsigned char)c;
	}
	while (r->i < r->n && (ev_digit(r->s[r->i]) || ((r->s[r->i] == '.' ||
	    r->s[r->i] == ',') && r->i + 1 < r->n &&
	    ev_digit(r->s[r->i + 1]))))
		r->i++;
	j = r->i < r->n && r->s[r->i] == ' ' ? r->i + 1 : r->i;
	for (k = j; k < r->n && ((r->s[k] >= 'a' && r->s[k] <= 'z') ||
	    (r->s[k] >= 'A' && r->s[k] <= 'Z')); k++)
		;
	if (k > j && ev_unit(r->s + j, k - j))
		r->i = k;
	return '#';
}

/* FNV-1a over the kind, the fatal flag and the normalised message. */
static uint64_t
ev_peer_key(const od_event *ev)
{
	uint64_t h = 1469598103934665603ULL;
	ev_norm r = { .s = ev->message, .n = ev->message_len };
	int c;

	h = (h ^ (uint64_t)ev->kind) * 1099511628211ULL;
	h = (h ^ (uint64_t)ev->fatal) * 1099511628211ULL;
	while (r.i < r.n) {
		/* A character that is no blank and no digit stands for
		 * itself (ev_norm_next's last case), taken here: the reader
		 * is called for the runs it folds. */
		c = (unsigned char)r.s[r.i];
		if (!ev_space((char)c) && !ev_digit((char)c))
			r.i++;
		else
			c = ev_norm_next(&r);
		h = (h ^ (uint64_t)c) * 1099511628211ULL;
	}
	return h;
}

/* Whether two messages are equal but for their figures. */
static bool
ev_same_but_figures(const od_event *a, const od_event *b)
{
	ev_norm ra = { .s = a->message, .n = a->message_len };
	ev_norm rb = { .s = b->message, .n = b->message_len };
	int ca, cb;

	do {
		ca = ev_norm_next(&ra);
		cb = ev_norm_next(&rb);
		if (ca != cb)
			return false;
	} while (ca >= 0);
	return true;
}

/* Whether two messages are equal with whitespace runs collapsed. */
static bool
ev_same_text(const od_event *a, const od_event *b)
{
	size_t i = 0, j = 0;

	/* The same bytes, the common case of a dense input's echoes: one
	 * compare, not a look at every byte. */
	if (a->message_len == b->message_len && (a->message_len == 0 ||
	    memcmp(a->message, b->message, a->message_len) == 0))
		return true;
	for (;;) {
		bool sa = false, sb = false;

		while (i < a->message_len && strchr(" \t\r\n", a->message[i]))
			i++, sa = true;
		while (j < b->message_len && strchr(" \t\r\n", b->message[j]))
			j++, sb = true;
		if (i == a->message_len || j == b->message_len)
			return i == a->message_len && j == b->message_len;
		if (sa != sb || a->message[i] != b->message[j])
			return false;
		i++;
		j++;
	}
}

/* Both known and different. */
#define EV_DIFF(a, b) ((a) >= 0 && (b) >= 0 && (a) != (b))
#define EV_DIFF_STR(a, b) ((a)[0] != '\0' && (b)[0] != '\0' && \
	strcmp((a), (b)) != 0)

static bool
ev_host_family(od_kind k)
{
	return k == OD_KIND_HOST_OOM_KILLER || k == OD_KIND_SLURM_OOM ||
	    k == OD_KIND_K8S_OOMKILLED || k == OD_KIND_DATALOADER_KILLED;
}

/* How many lines after old's end another report of its failure may
 * come: more after the head of a report (the kernel's "invoked oom-killer"
 * line, whose kill line ends a dump of hundreds of lines). */
static uint64_t
ev_near_lines(const od_event *old)
{
	return old->dump_head ? EV_DUMP_LINES : EV_NEAR_LINES;
}

/*
 * Whether ev, reported just after old, is another report of the same
 * failure by another part of the stack: the THC check line and its
 * exception, a TensorFlow allocator warning and the op's error, a bash
 * "Killed" and Slurm's oom_kill line, a DataLoader worker's message and
 * its parent's.  Only the other stacks' messages are joined this way (a
 * PyTorch allocator message is complete in itself), they must agree on
 * every figure both give, and come from one process (rank).
 */
static bool
ev_near(const od_event *old, const od_event *ev)
{
	const od_memory *a = &old->mem, *b = &ev->mem;

	if (old->layout != OD_LAYOUT_OTHER_STACK || ev->layout != OD_LAYOUT_OTHER_STACK ||
	    old->fatal != ev->fatal)
		return false;
	/* The head of a report starts the next failure's report. */
	if (ev->dump_head)
		return false;
	if (old->kind != ev->kind && !(ev_host_family(old->kind) &&
	    ev_host_family(ev->kind)))
		return false;
	/* Two messages of the same form are two failures (two Slurm steps,
	 * two tensors), not two views of one. */
	if (old->message_len >= 16 && ev->message_len >= 16 &&
	    memcmp(old->message, ev->message, 16) == 0)
		return false;
	if (EV_DIFF_STR(old->tensor_shape, ev->tensor_shape) ||
	    EV_DIFF_STR(old->dtype, ev->dtype) ||
	    EV_DIFF_STR(old->allocator, ev->allocator) ||
	    EV_DIFF_STR(old->host.process, ev->host.process) ||
	    EV_DIFF_STR(old->host.job, ev->host.job) ||
	    EV_DIFF_STR(old->labels.pod, ev->labels.pod) ||
	    EV_DIFF_STR(old->labels.container, ev->labels.container))
		return false;
	return !EV_DIFF(a->requested, b->requested) &&
	    !EV_DIFF(a->total, b->total) && !EV_DIFF(a->free, b->free) &&
	    !EV_DIFF(a->allocated, b->allocated) &&
	    !EV_DIFF(a->allowed, b->allowed) && !EV_DIFF(a->peak, b->peak) &&
	    !EV_DIFF(old->host.pid, ev->host.pid) &&
	    !EV_DIFF(old->host.usage, ev->host.usage) &&
	    !EV_DIFF(old->host.limit, ev->host.limit) &&
	    !EV_DIFF(old->host.anon_rss, ev->host.anon_rss) &&
	    !EV_DIFF(old->device, ev->device) && !EV_DIFF(old->rank, ev->rank);
}

#define EV_FILL(f) do { if (old->f < 0) old->f = ev->f; } while (0)
#define EV_FILL_STR(f) do { \
	if (old->f[0] == '\0') \
		memcpy(old->f, ev->f, sizeof old->f); \
} while (0)

/*
 * Joins ev into old: the surer report gives the kind and the message (of
 * two host reports as sure, the one with more of the host's figures), and
 * each figure or name that one of them lacks is taken from the other.
 * old keeps its place (its first line).
 */
/* How many of the host's figures an event gives: of two equally sure
 * reports of one kill, the kernel's names the process and its memory,
 * a container runtime's "OOMKilled" none of it. */
static int
ev_host_figures(const od_event *ev)
{
	return (ev->host.pid >= 0) + (ev->host.anon_rss >= 0) +
	    (ev->host.total_vm >= 0) + (ev->host.limit >= 0) +
	    (ev->host.usage >= 0) + ev->host.has_exit;
}

static void
ev_absorb(od_event *old, od_event *ev)
{
	if (ev->confidence > old->confidence ||
	    (ev->confidence == old->confidence && old->kind != ev->kind &&
	    ev_host_figures(ev) > ev_host_figures(old))) {
		char *msg = old->message;
		size_t len = old->message_len;
		bool cut = old->message_cut;

		old->kind = ev->kind;
		old->framework = ev->framework;
		old->confidence = ev->confidence;
		old->verify_hint = ev->verify_hint;
		old->message = ev->message;
		old->message_len = ev->message_len;
		old->message_cut = ev->message_cut;
		ev->message = msg;
		ev->message_len = len;
		ev->message_cut = cut;
	}
	EV_FILL(mem.requested);
	EV_FILL(mem.total);
	EV_FILL(mem.free);
	EV_FILL(mem.allocated);
	EV_FILL(mem.allowed);
	EV_FILL(mem.peak);
	EV_FILL(mem.non_framework);
	EV_FILL(host.pid);
	EV_FILL(host.total_vm);
	EV_FILL(host.anon_rss);
	EV_FILL(host.file_rss);
	EV_FILL(host.shmem_rss);
	EV_FILL(host.limit);
	EV_FILL(host.usage);
	EV_FILL(device);
	EV_FILL(rank);
	if (!old->host.has_exit && ev->host.has_exit) {
		old->host.has_exit = true;
		old->host.exit_code = ev->host.exit_code;
	}
	EV_FILL_STR(host.process);
	EV_FILL_STR(host.signal);
	EV_FILL_STR(host.job);
	EV_FILL_STR(error);
	EV_FILL_STR(tensor_shape);
	EV_FILL_STR(dtype);
	EV_FILL_STR(allocator);
	EV_FILL_STR(exception);
	EV_FILL_STR(timestamp);
	od_labels_fill(&old->labels, &ev->labels);
	if (ev->end_line > old->end_line)
		old->end_line = ev->end_line;
	/* The report the head opened is complete. */
	old->dump_head = ev->dump_head;
}

/* Adds a row of rank's figures, taken from src, to ev's table; the table's
 * room is allocated with its first row (a row that memory cannot hold is
 * counted as dropped, and the scan says memory ran out). */
static void
ev_add_row(od_events *set, od_event *ev, int rank, const od_event *src,
    int input, uint64_t line)
{
	od_rank_row *r;

	if (ev->per_rank == NULL && (ev->per_rank = calloc(OD_RANK_ROWS_MAX,
	    sizeof *ev->per_rank)) == NULL)
		set->nomem = true;
	if (ev->nper_rank == OD_RANK_ROWS_MAX || ev->per_rank == NULL) {
		ev->per_rank_dropped++;
		return;
	}
	r = &ev->per_rank[ev->nper_rank++];
	r->rank = rank;
	r->device = src->device;
	r->input = input;
	r->line = line;
	r->requested = src->mem.requested;
	r->total = src->mem.total;
	r->free = src->mem.free;
	r->allocated = src->mem.allocated;
	r->reserved = src->mem.reserved;
}

/* Whether row r holds the figures of ev. */
static bool
ev_row_is(const od_rank_row *r, const od_event *ev)
{
	return r->device == ev->device && r->requested == ev->mem.requested &&
	    r->total == ev->mem.total && r->free == ev->mem.free &&
	    r->allocated == ev->mem.allocated &&
	    r->reserved == ev->mem.reserved;
}

/*
 * Starts old's per-rank table, the first time a rank reports it with
 * other figures: a row for old's own rank, and one with old's figures
 * for each rank that echoed its message word for word (their lines were
 * not kept: 0).
 */
static void
ev_start_rows(od_events *set, od_event *old)
{
	int i;

	if (old->nper_rank > 0)
		return;
	ev_add_row(set, old, old->rank, old, old->input, old->line);
	for (i = 0; i < old->nranks; i++)
		if (old->ranks[i] != old->rank)
			ev_add_row(set, old, old->ranks[i], old, old->input, 0);
}

/*
 * Whether ev comes close enough after old's last report to be another
 * rank's report of the same failure: within EV_PEER_LINES lines in the
 * same input (ranks fail together; the same message much later is a
 * failure of its own), or in another input (a log per rank).
 */
static bool
ev_peer_near(const od_event *old, const od_event *ev)
{
	uint64_t last = old->end_line > old->line ? old->end_line : old->line;

	if (ev->input != old->input)
		return true;
	if (old->peer_line > last && old->peer_input == ev->input)
		last = old->peer_line;
	return ev->line >= old->line && ev->line - last <= EV_PEER_LINES;
}

/*
 * Joins ev, a report of another rank whose message is old's but for its
 * figures, into old as a row of its per-rank table.  A rank already in
 * the table joins only with the figures of its row (a repeat); other
 * figures from it are a second failure.  False when ev does not join.
 */
static bool
ev_join_rank(od_events *set, od_event *old, od_event *ev)
{
	int i;

	if (old->key == ev->key || old->peer_key != ev->peer_key ||
	    old->kind != ev->kind || old->fatal != ev->fatal ||
	    old->layout != ev->layout || old->rank < 0 || ev->rank < 0 ||
	    ev_by_pid(old) || !ev_peer_near(old, ev) ||
	    !ev_same_but_figures(old, ev))
		return false;
	if (ev_has_rank(old, ev->rank, NULL)) {
		for (i = 0; i < old->nper_rank; i++)
			if (old->per_rank[i].rank == ev->rank &&
			    ev_row_is(&old->per_rank[i], ev))
				break;
		if (i == old->nper_rank)
			return false;
	} else {
		ev_start_rows(set, old);
		ev_add_row(set, old, ev->rank, ev, ev->input, ev->line);
		if (!ev_add_rank(old, ev->rank, &set->rank_budget))
			set->nomem = true;
	}
	old->occurrences += ev->occurrences;
	old->peer_line = ev->line;
	old->peer_input = ev->input;
	return true;
}

/* Whether ev is torchrun's report of a child process that ended: its
 * "failed (exitcode: -9)" line, its ChildFailedError table, the
 * "Signal 9 (SIGKILL) received by PID" of that table. */
static bool
ev_launcher(const od_event *ev)
{
	return ev_host_family(ev->kind) && ev->message != NULL &&
	    (strstr(ev->message, "exitcode") != NULL ||
	    strstr(ev->message, "received by PID") != NULL);
}

/*
 * The story of a run with several failures or ranks: ev has just been
 * kept as a new event, or grown by another rank (grown).  The first fatal
 * event is the first failure once another rank or another fatal event
 * comes; torchrun's reports of its children after a failure of another
 * kind follow from that failure.
 */
static void
ev_story(od_events *set, od_event *ev, bool grown)
{
	od_event *first;

	if (!ev->fatal)
		return;
	if (set->first == 0) {
		set->first = (int)(ev - set->ev) + 1;
		if (grown)
			ev->first_failure = true;
		return;
	}
	first = &set->ev[set->first - 1];
	if (first == ev) {
		ev->first_failure = ev->first_failure || grown;
		return;
	}
	if (grown)
		return;
	first->first_failure = true;
	if (ev_launcher(ev) && !ev_launcher(first))
		ev->secondary = "torchrun reported this child's end after the "
		    "first failure: when one rank fails, torchrun stops the "
		    "others (SIGTERM, then SIGKILL), and the \"root cause\" of "
		    "its ChildFailedError table is the first exit it saw, "
		    "which need not be the first failure";
}

/* Files old under the key of what it now says, so that its echoes find
 * it (the old slot stays; its key no longer matches and is skipped). */
static void
ev_rekey(od_events *set, od_event *old)
{
	size_t i;

	old->key = ev_key(old);
	if (set->nslots >= EV_SLOTS * 3 / 4)
		return;
	for (i = old->key & (EV_SLOTS - 1); set->slot[i] != 0;
	    i = (i + 1) & (EV_SLOTS - 1))
		;
	set->slot[i] = (int)(old - set->ev) + 1;
	set->nslots++;
}

/* Notes that the report ev went into old, for the next ev_near; echo
 * when ev repeated old's message (not another report of one kill). */
static void
ev_remember(od_events *set, const od_event *old, const od_event *ev,
    bool echo)
{
	set->last = (int)(old - set->ev) + 1;
	set->last_input = ev->input;
	set->last_end = ev->end_line;
	set->last_echo = echo;
}

od_events *
od_events_new_max(size_t max)
{
	od_events *set;

	if (max < 1 || max > OD_EVENTS_MAX)
		return NULL;
	set = calloc(1, sizeof *set);
	if (set == NULL)
		return NULL;
	set->cap = max < EV_FIRST_CAP ? max : EV_FIRST_CAP;
	set->ev = calloc(set->cap, sizeof *set->ev);
	set->low = calloc(1, sizeof *set->low);
	if (set->ev == NULL || set->low == NULL) {
		free(set->ev);
		free(set->low);
		free(set);
		return NULL;
	}
	set->max = max;
	set->rank_budget = EV_RANKS_TOTAL;
	set->want_rank = -1;
	set->want_kind = -1;
	return set;
}

od_events *
od_events_new(void)
{
	return od_events_new_max(OD_EVENTS_MAX);
}

void
od_events_free(od_events *set)
{
	size_t i;

	if (set == NULL)
		return;
	for (i = 0; i < set->n; i++)
		od_event_clear(&set->ev[i]);
	free(set->ev);
	free(set->low);
	free(set->per_input);
	free(set);
}

/* Severity, 0 to OD_SEVERITY_LEVELS - 1: fatal events first, then by
 * confidence (a warning, a kill seen only as a SIGKILL, last). */
#define OD_SEVERITY_LEVELS 6

static int
ev_severity(const od_event *ev)
{
	return (ev->fatal ? 3 : 0) + (int)ev->confidence;
}

void
od_events_delivered(od_events *set, size_t n)
{
	set->sealed = n < set->n ? n : set->n;
}

size_t
od_events_ndelivered(const od_events *set)
{
	return set->sealed;
}

/* Files every kept event under its key again, from an empty table. */
static void
ev_rehash(od_events *set)
{
	size_t k, i;

	memset(set->slot, 0, sizeof set->slot);
	set->nslots = 0;
	for (k = 0; k < set->n; k++) {
		for (i = set->ev[k].key & (EV_SLOTS - 1); set->slot[i] != 0;
		    i = (i + 1) & (EV_SLOTS - 1))
			;
		set->slot[i] = (int)k + 1;
		set->nslots++;
	}
}

/*
 * The latest of the least severe events, when it is less severe than ev;
 * set->n when there is none.  The least severe of all and the latest of
 * them are looked for once while the set stays the same (set->low): a
 * full set asked about every further event of a long log (od_events_known,
 * od_events_add) reads its max events once, not twice an event.
 */
static size_t
ev_victim(const od_events *set, const od_event *ev)
{
	struct ev_low *lw = set->low;
	size_t j;

	if (!lw->ok) {
		lw->low = OD_SEVERITY_LEVELS;
		lw->last = set->n;
		for (j = set->n; j-- > 0;) {
			int s = ev_severity(&set->ev[j]);

			if (s < lw->low) {
				lw->low = s;
				lw->last = j;
			}
		}
		lw->ok = true;
	}
	return lw->last < set->n && lw->low < ev_severity(ev) ? lw->last :
	    set->n;
}

/*
 * Makes room in a full set for ev by dropping ev_victim's event.  False
 * when nothing may go (ev is then not kept).
 */
static bool
ev_displace(od_events *set, const od_event *ev)
{
	size_t j, victim = ev_victim(set, ev);
	int k;
	od_event *v;

	if (victim == set->n)
		return false;
	ev_changed(set);
	v = &set->ev[victim];
	set->dropped += v->occurrences;
	for (k = 0; k < v->nseen; k++)
		if (v->seen[k].input >= 0 && v->seen[k].input < set->ncount)
			set->per_input[v->seen[k].input]--;
	if (v->ranks_cap > EV_RANKS_FIRST)
		set->rank_budget += (size_t)(v->ranks_cap - EV_RANKS_FIRST);
	od_event_clear(v);
	memmove(v, v + 1, (set->n - victim - 1) * sizeof *v);
	set->n--;
	if (set->first == (int)victim + 1) {
		set->first = 0;
		for (j = 0; j < set->n && set->first == 0; j++)
			if (set->ev[j].fatal)
				set->first = (int)j + 1;
	} else if (set->first > (int)victim + 1) {
		set->first--;
	}
	if (victim < set->sealed)
		set->sealed--;
	if (set->last == (int)victim + 1)
		set->last = 0;
	else if (set->last > (int)victim + 1)
		set->last--;
	ev_rehash(set);
	return true;
}


void
od_events_add(od_events *set, od_event *ev)
{
	size_t i, k;
	od_event *old;
	bool grown;

	if ((set->want_rank >= 0 && ev->rank != set->want_rank) ||
	    (set->want_kind >= 0 && (int)ev->kind != set->want_kind)) {
		ev_drop(ev);
		return;
	}
	ev->key = ev_key(ev);
	ev->peer_key = ev_peer_key(ev);
	for (i = ev->key & (EV_SLOTS - 1); set->slot[i] != 0;
	    i = (i + 1) & (EV_SLOTS - 1)) {
		old = &set->ev[set->slot[i] - 1];
		if (old->key != ev->key || old->kind != ev->kind)
			continue;
		/* Kills of one pid in two Slurm jobs (two nodes in one log)
		 * are two failures, and so are the same words in two jobs:
		 * srun's "task 0: Out Of Memory" of each job in a tail of
		 * several job logs. */
		if (ev_by_pid(old) != ev_by_pid(ev) ||
		    EV_DIFF_STR(old->host.job, ev->host.job) || (ev_by_pid(ev) ?
		    old->host.pid != ev->host.pid :
		    (old->fatal != ev->fatal || !ev_same_text(old, ev))))
			continue;
		if (!ev_room(set, old, ev)) {
			ev_drop(ev);
			return;
		}
		ev_changed(set);
		ev_add_seen(set, old, ev->input, ev->line);
		/* Another report of the same kill: the surer one gives the
		 * kind and message, the other what the first lacks. */
		if (ev_by_pid(ev))
			ev_absorb(old, ev);
		/* An echo: remember who echoed it. */
		old->occurrences += ev->occurrences;
		if (old->rank < 0)
			old->rank = ev->rank;
		grown = ev->rank >= 0 && ev->rank != old->rank &&
		    !ev_has_rank(old, ev->rank, NULL);
		if (grown && old->nper_rank > 0)
			ev_add_row(set, old, ev->rank, old, ev->input,
			    ev->line);
		if (grown) {
			old->peer_line = ev->line;
			old->peer_input = ev->input;
		}
		if (!ev_add_rank(old, ev->rank, &set->rank_budget))
			set->nomem = true;
		if (grown)
			ev_story(set, old, true);
		if (old->timestamp[0] == '\0')
			memcpy(old->timestamp, ev->timestamp,
			    sizeof old->timestamp);
		od_labels_fill(&old->labels, &ev->labels);
		ev_remember(set, old, ev, !ev_by_pid(ev));
		ev_drop(ev);
		return;
	}
	/* Another part of the stack reporting the failure just reported. */
	if (set->last > 0) {
		old = &set->ev[set->last - 1];
		if (set->last_input == ev->input && ev->line >= set->last_end &&
		    ev->line - set->last_end <= ev_near_lines(old) &&
		    ev_near(old, ev)) {
			/*
			 * After an echo the report belongs to the repeat, not
			 * to the first report, whose figures and message the
			 * event keeps: the event may have been delivered long
			 * before (a streaming caller has it as it was), and a
			 * repeat's neighbour can be another failure's line
			 * (logs pasted one after another).
			 */
			ev_changed(set);
			if (!set->last_echo) {
				ev_absorb(old, ev);
				ev_rekey(set, old);
			}
			ev_remember(set, old, ev, set->last_echo);
			ev_drop(ev);
			return;
		}
	}
	/* Another rank's report of a failure, with its own figures. */
	for (k = 0; ev->rank >= 0 && k < set->n; k++) {
		old = &set->ev[k];
		if (ev_room(set, old, ev) && ev_join_rank(set, old, ev)) {
			ev_changed(set);
			ev_add_seen(set, old, ev->input, ev->line);
			ev_story(set, old, true);
			ev_remember(set, old, ev, false);
			ev_drop(ev);
			return;
		}
	}
	if (!ev_room(set, NULL, ev)) {
		ev_drop(ev);
		return;
	}
	if (set->n >= set->max) {
		if (!ev_displace(set, ev)) {
			set->dropped += ev->occurrences;
			ev_drop(ev);
			return;
		}
		for (i = ev->key & (EV_SLOTS - 1); set->slot[i] != 0;
		    i = (i + 1) & (EV_SLOTS - 1))
			;
	}
	ev_changed(set);
	if (set->n == set->cap) {
		size_t cap = set->cap * 2 < set->max ? set->cap * 2 : set->max;
		od_event *grown_ev = realloc(set->ev, cap * sizeof *grown_ev);

		if (grown_ev == NULL) {
			/* Counted as dropped, and the scan says memory ran out. */
			set->nomem = true;
			set->dropped += ev->occurrences;
			ev_drop(ev);
			return;
		}
		set->ev = grown_ev;
		set->cap = cap;
	}
	old = &set->ev[set->n];
	*old = *ev;
	old->ranks = NULL;
	old->nranks = old->ranks_cap = 0;
	if (!ev_add_rank(old, ev->rank, &set->rank_budget))
		set->nomem = true;
	free(ev->ranks);
	free(ev->seen);
	old->seen = NULL;
	old->nseen = old->seen_cap = 0;
	ev_add_seen(set, old, ev->input, ev->line);
	set->slot[i] = (int)++set->n;
	set->nslots++;
	ev_remember(set, old, ev, false);
	ev_story(set, old, false);
	od_event_init(ev);
}

void
od_events_after(od_events *set, int what, int rank, int input,
    uint64_t line)
{
	od_event *first;
	od_aftermath *a;

	if (set == NULL || set->first == 0)
		return;
	first = &set->ev[set->first - 1];
	/* Before the failure, in its own input: not its aftermath. */
	if (first->input == input && line <= first->line)
		return;
	a = &first->after;
	switch (what) {
	case OD_AFTER_WATCHDOG:
		if (a->watchdog++ == 0) {
			a->watchdog_rank = rank;
			a->watchdog_line = (int64_t)line;
		}
		break;
	case OD_AFTER_SIGTERM:
		a->sigterm++;
		break;
	case OD_AFTER_ROOT_CAUSE:
		/* The first table's: a restarted job prints one per run. */
		if (a->root_cause_line >= 0)
			return;
		a->root_cause_rank = rank;
		a->root_cause_line = (int64_t)line;
		break;
	default:
		return;
	}
	first->first_failure = true;
}

bool
od_events_known(const od_events *set, const od_event *ev)
{
	uint64_t key = ev_key(ev);
	size_t i;

	for (i = key & (EV_SLOTS - 1); set->slot[i] != 0;
	    i = (i + 1) & (EV_SLOTS - 1)) {
		const od_event *old = &set->ev[set->slot[i] - 1];

		if (old->key == key && old->kind == ev->kind &&
		    ev_by_pid(old) == ev_by_pid(ev) && (ev_by_pid(ev) ?
		    old->host.pid == ev->host.pid &&
		    !EV_DIFF_STR(old->host.job, ev->host.job) :
		    (old->fatal == ev->fatal && ev_same_text(old, ev))))
			return true;
	}
	/* A full set keeps no more events but the more severe ones that
	 * displace one (ev_displace): nothing to read for the others. */
	return set->n >= set->max && ev_victim(set, ev) == set->n;
}

/*
 * Only the event the last report went into can absorb the next report
 * (od_events_add, ev_near), and only a message of another stack, from the
 * same input, within EV_NEAR_LINES lines of the last report's end
 * (EV_DUMP_LINES after the head of a report, ev_near_lines).  An
 * echo of an older event makes that one the last again; it is then open
 * again, though it may have been delivered.
 */
bool
od_events_open(const od_events *set, size_t i, int input, uint64_t next_line)
{
	if (i >= set->n || set->last != (int)i + 1)
		return false;
	return set->ev[i].layout == OD_LAYOUT_OTHER_STACK &&
	    set->last_input == input &&
	    next_line <= set->last_end + ev_near_lines(&set->ev[i]);
}

size_t
od_events_count(const od_events *set)
{
	return set->n;
}

od_event *
od_events_get(od_events *set, size_t i)
{
	/* The caller may change the event it gets. */
	ev_changed(set);
	return i < set->n ? &set->ev[i] : NULL;
}

bool
od_events_nomem(od_events *set)
{
	bool nomem = set->nomem;

	set->nomem = false;
	return nomem;
}

uint64_t
od_events_dropped(const od_events *set)
{
	return set->dropped;
}

void
od_events_mention(od_events *set, const od_event *ev, const char *reason)
{
	if (set->nmentions < OD_MENTIONS_MAX)
		set->mentions[set->nmentions] = (od_mention){
		    .input = ev->input, .line = ev->line, .kind = ev->kind,
		    .reason = reason };
	set->nmentions++;
}

size_t
od_events_mention_count(const od_events *set)
{
	return set->nmentions;
}

const od_mention *
od_events_mention_get(const od_events *set, size_t i)
{
	return i < set->nmentions && i < OD_MENTIONS_MAX ?
	    &set->mentions[i] : NULL;
}
