/*
 * decide.c: whether an event that a recogniser read is an out-of-memory
 * failure or only a mention of one (decide.h).
 *
 * The recognisers read messages; each keeps quiet where its own line only
 * talks about a message (rg_mention, quiet_in_prose).  What no single
 * line shows is decided here, once, for the events of every recogniser,
 * after the event is read and before it joins the event set (scan.c).
 * An event is a mention, and no failure, in eight cases:
 *
 *   weak and quiet     the fallback's phrase (low confidence) on a line
 *                      that reports no failure (not fatal), after at
 *                      least DC_WEAK_BEFORE plain words of a sentence
 *                      ("This is an indication that your docker process
 *                      ran out of memory during execution", "Some tests
 *                      run out of memory."): what a person writes about
 *                      a failure, with no error word, severity or
 *                      exception that would confirm one.  A line of a
 *                      program's output ("worker 3 reported OutOfMemory
 *                      on gpu 1", "status: RESOURCE_EXHAUSTED while
 *                      compiling") stays a low-confidence event.  The
 *                      failure word of a message quoted in a code span
 *                      is the quote's, not the line's ("log something
 *                      like `memory cgroup out of memory: process
 *                      killed`").
 *
 *   a status in prose  the message is a bare status of a few words with
 *                      no figures ("OOMKilled", "OUT_OF_MEMORY", "exit
 *                      code 137") and stands inside a sentence: at least
 *                      DC_PROSE_BEFORE_AND plain words before it and
 *                      DC_PROSE_AFTER after it, or DC_PROSE_BEFORE before
 *                      it, with no ':', '=', '|', bracket or figure
 *                      between ("the pod's container status gives the
 *                      Reason as `OOMKilled` and ...", "the container
 *                      keeps dying with exit code 137").  A program
 *                      prints a status after a key, in a column or at the
 *                      start of its line; a pasted message of its own
 *                      (with a colon, a figure or more words) is read as
 *                      before, wherever it stands.  Other codes listed
 *                      after it belong to it ("exit code 137/139, but
 *                      ..."), and a run of CJK characters, which has no
 *                      blanks between its words, counts one word a
 *                      character ("原因 OOMKilled 说明容器...").
 *
 *   a link's title     the message (its phrase, for the fallback) in the
 *                      text of a Markdown link, "[...](": the title of a
 *                      page that a list of links names ("- [XLA failed
 *                      to allocate request for memory on device](https:
 *                      //github.com/...)").
 *
 *   a diff's line      an event on a line that a unified diff adds ('+'
 *                      first, the line before it a diff's line too: '+',
 *                      '-', "@@" or a "```diff" fence): a file's text,
 *                      such as a troubleshooting page's example run ("+
 *                      Killed") or a documentation page's example error
 *                      (ray-project/ray#29341 adds Ray's "ray.exceptions.
 *                      OutOfMemoryError: Task was killed due to the node
 *                      running low on memory." to an .rst page), not this
 *                      run's output, whatever the message's confidence.
 *
 *   a status compared  the message is a bare status (as above) that a
 *                      comparison of source code holds: "==" or "!=" just
 *                      before or after it ("(err ==
 *                      cudaErrorMemoryAllocation)", RMM's "if (status ==
 *                      cudaErrorMemoryAllocation) { throw").  A
 *                      program reports the status it got, and compares
 *                      nothing on its line.
 *
 *   an example shown   the event's line in a fenced code block that a
 *                      label of a comparison opens: the nearest line with
 *                      text before the fence is only "Before", "After",
 *                      "This PR" or "With this PR", alone, as a Markdown
 *                      heading, in bold or with a colon
 *                      ("### Before", "**After:**"): a pull request's
 *                      description showing a message before and after its
 *                      change (cupy/cupy#2242), not this run's output.  A
 *                      report's headings name the log ("### Logs",
 *                      "### Error"), not a comparison.  So is a block
 *                      indented by four blanks or a tab under the label
 *                      "rather than:" (or another of them), the old
 *                      message after the new one.
 *
 *   a kill explained   a shell's "Killed" (low confidence: a SIGKILL, no
 *                      more) within DC_EXPLAIN_LINES lines after the
 *                      program's own exception that is no memory error
 *                      ("ValueError: ... leak detected!" and a launcher's
 *                      kill of its process tree): the program had
 *                      already failed, and its wrapper killed it.  A
 *                      launcher's report of a child's death
 *                      (ChildFailedError, CalledProcessError) explains
 *                      nothing, and an exception that names memory
 *                      (MemoryError, OutOfMemoryError, out of memory)
 *                      makes the kill more likely an OOM, not less.
 *
 *   a limit reached    a Slurm step's warning (kind slurm_oom, not fatal)
 *                      that its memory cgroup reached its limit at some
 *                      point: "Exceeded step memory limit at some point.",
 *                      "StepId=N.batch hit memory limit at least once
 *                      during execution.  This may or may not result in
 *                      some failure."  Slurm's task/cgroup plugin prints it
 *                      whenever the cgroup's failcnt is non-zero
 *                      (src/plugins/task/cgroup/task_cgroup_memory.c,
 *                      task_cgroup_memory_check_oom), and the kernel
 *                      counts a failure each time a charge meets the limit
 *                      and it reclaims the page cache instead, killing
 *                      nothing, so that a job that finished normally
 *                      prints it too (as the GEOS-Chem wiki's page on
 *                      Slurm warnings shows).  Slurm reports a kill
 *                      itself ("Detected 1 oom-kill event(s) in step
 *                      ...", "exceeded memory limit (...), being killed",
 *                      the state OUT_OF_MEMORY), and those stay events.
 *
 * The mention is kept, with its reason, in the event set (event.c,
 * od_events_mention) and written under "mentions" in the JSON report, so
 * that nothing read is lost; it counts for no exit status.
 */
#define _GNU_SOURCE             /* memmem */
#include <string.h>

#include "caseless.h"
#include "decide.h"
#include "lines.h"
#include "recogniser.h"

#define DC_PROSE_BEFORE 5
#define DC_PROSE_BEFORE_AND 2
#define DC_PROSE_AFTER 3
#define DC_WEAK_BEFORE 3
/* A status is a short message: "OUT_OF_MEMORY", "exit code 137", the
 * CUDA runtime's "cudaErrorMemoryAllocation" (25 bytes). */
#define DC_STATUS_MAX 32
/* The longest inline code span a status is looked around, or that
 * counts as a word of a sentence. */
#define DC_SPAN_MAX 32
/* The bytes of a line looked at. */
#define DC_LINE_MAX 1024

const char dc_reason_weak[] = "a weak out-of-memory phrase on a line that "
    "reports no failure";
const char dc_reason_prose[] = "a status inside a sentence of prose, with "
    "no figures";
const char dc_reason_explained[] = "a SIGKILL after the program's own "
    "error, which is no memory error";
const char dc_reason_link[] = "the title of a Markdown link";
const char dc_reason_diff[] = "a line that a diff adds: a file's text, not "
    "output";
const char dc_reason_compared[] = "a status compared in source code";
const char dc_reason_example[] = "an example under a before-and-after label "
    "of a description";
const char dc_reason_limit[] = "a memory limit reached at some point, which "
    "Slurm reports whether or not anything was killed";

static bool
dc_letter(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

/* Bytes that wrap a word in Markdown or prose and are passed over:
 * code spans, emphasis, quotes, an opening parenthesis. */
static bool
dc_wrap(char c)
{
	return c == '`' || c == '*' || c == '_' || c == '"' || c == '\'' ||
	    c == '(';
}

/*
 * Whether w[0..n) is a plain word of prose: letters (any byte of a UTF-8
 * sequence counts as one), with an apostrophe or a hyphen inside, and at
 * most one ',' or ';' after.  Digits, '/', ':', '=' and the like make a
 * token of a program's output, not a word.
 */
static bool
dc_word(const char *w, size_t n)
{
	size_t i;

	while (n > 0 && dc_wrap(w[0])) {
		w++;
		n--;
	}
	while (n > 0 && (dc_wrap(w[n - 1]) || w[n - 1] == ')'))
		n--;
	if (n > 0 && (w[n - 1] == ',' || w[n - 1] == ';'))
		n--;
	if (n == 0 || !dc_letter((unsigned char)w[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!dc_letter((unsigned char)w[i]) && w[i] != '\'' &&
		    w[i] != '-')
			return false;
	return true;
}

/*
 * How many words the plain word w[0..n) counts for: one, or one a
 * character for a run of CJK characters (three-byte UTF-8 sequences led
 * by 0xE3 to 0xE9: kana, CJK punctuation and ideographs), since Chinese
 * and Japanese write no blank between words.
 */
static int
dc_weight(const char *w, size_t n)
{
	size_t i;

	if (n < 3 || n % 3 != 0)
		return 1;
	for (i = 0; i < n; i += 3)
		if ((unsigned char)w[i] < 0xe3 || (unsigned char)w[i] > 0xe9 ||
		    ((unsigned char)w[i + 1] & 0xc0) != 0x80 ||
		    ((unsigned char)w[i + 2] & 0xc0) != 0x80)
			return 1;
	return (int)(n / 3);
}

/* The plain words just before l[p] on the line l[0..p), back to the
 * first token that is none, two blanks or a sentence's end. */
static int
dc_words_before(const char *l, size_t p)
{
	size_t e = p;
	int count = 0;

	/* The message's own wrapping: "`OOMKilled", "(OUT_OF_MEMORY". */
	while (e > 0 && dc_wrap(l[e - 1]))
		e--;
	if (e == 0 || l[e - 1] != ' ')
		return 0;
	for (;;) {
		size_t b;

		e--;    /* the blank */
		if (e == 0 || l[e - 1] == ' ')
			return count;
		for (b = e; b > 0 && l[b - 1] != ' '; b--)
			;
		if (!dc_word(l + b, e - b))
			return count;
		/* A word that ends a sentence ends the count before it. */
		if (count > 0 && strchr(".!?", l[e - 1]) != NULL)
			return count;
		count += dc_weight(l + b, e - b);
		if (b == 0 || strchr(".!?", l[e - 1]) != NULL)
			return count;
		e = b;
	}
}

/* The plain words just after l[q] on the line l[q..n), up to the first
 * token that is none, two blanks or a sentence's end. */
static int
dc_words_after(const char *l, size_t n, size_t q)
{
	size_t b = q;
	int count = 0;

	/* Other codes listed after the status's own ("exit code
	 * 137/236/237") are part of it. */
	while (b + 1 < n && l[b] == '/' && l[b + 1] >= '0' && l[b + 1] <= '9')
		for (b++; b < n && l[b] >= '0' && l[b] <= '9'; b++)
			;
	while (b < n && (dc_wrap(l[b]) || l[b] == ')' || l[b] == ','))
		b++;
	if (b >= n || l[b] != ' ')
		return 0;
	for (;;) {
		size_t e;

		b++;
		if (b >= n || l[b] == ' ')
			return count;
		for (e = b; e < n && l[e] != ' '; e++)
			;
		if (strchr(".!?", l[e - 1]) != NULL) {
			if (e - b > 1 && dc_word(l + b, e - b - 1))
				count++;
			return count;
		}
		if (!dc_word(l + b, e - b))
			return count;
		count += dc_weight(l + b, e - b);
		b = e;
	}
}

/* Whether the event carries a figure of memory or of the host. */
static bool
dc_figures(const od_event *ev)
{
	const od_memory *m = &ev->mem;
	const od_host *h = &ev->host;

	return m->requested != OD_UNKNOWN || m->total != OD_UNKNOWN ||
	    m->free != OD_UNKNOWN || m->allocated != OD_UNKNOWN ||
	    m->reserved != OD_UNKNOWN || m->allowed != OD_UNKNOWN ||
	    m->peak != OD_UNKNOWN || h->total_vm != OD_UNKNOWN ||
	    h->anon_rss != OD_UNKNOWN || h->limit != OD_UNKNOWN ||
	    h->usage != OD_UNKNOWN;
}

/*
 * Widens l[*p..*q) to the inline code span around it, backticks
 * included, where it stands in a short one ("reports `reason: OOMKilled`
 * and exit code 137"): a key and its value quoted in a sentence are
 * quoted as a whole, and the sentence is around the span.
 */
static void
dc_code_span(const char *l, size_t n, size_t *p, size_t *q)
{
	size_t a = *p, b = *q, i, ticks = 0;

	while (a > 0 && l[a - 1] != '`' && *p - a < DC_SPAN_MAX)
		a--;
	while (b < n && l[b] != '`' && b - *q < DC_SPAN_MAX)
		b++;
	if (a == 0 || l[a - 1] != '`' || b >= n || l[b] != '`' ||
	    b - a > DC_SPAN_MAX)
		return;
	/* The backtick before it opens a span: an even number before it. */
	for (i = 0; i + 1 < a; i++)
		ticks += l[i] == '`';
	if (ticks % 2 != 0)
		return;
	*p = a - 1;
	*q = b + 1;
}

/* Makes the inside of every short inline code span of l[0..n) outside
 * [p, q) letters, so that "`reason: OOMKilled`" in a sentence reads as
 * one word of it. */
static void
dc_mask_spans(char *l, size_t n, size_t p, size_t q)
{
	size_t i = 0, k;

	while (i < n) {
		const char *c = memchr(l + i, '`', n - i);

		if (c == NULL)
			return;
		i = (size_t)(c - l);
		c = memchr(l + i + 1, '`', n - i - 1);
		if (c == NULL)
			return;
		k = (size_t)(c - l);
		if (k - i <= DC_SPAN_MAX && (k < p || i >= q)) {
			size_t j;

			for (j = i + 1; j < k; j++)
				l[j] = 'x';
		}
		i = k + 1;
	}
}

/* Whether s[0..n) contains w (ASCII, compared caselessly). */
static bool
dc_has(const char *s, size_t n, const char *w)
{
	return od_caseless_find(s, n, w, strlen(w)) != NULL;
}

/*
 * Finds the event's text in the first DC_LINE_MAX bytes of its line
 * l[0..n), at l[*p..*q): the fallback's phrase (the event's error,
 * compared caselessly; the first that is no mention by rg_mention's
 * measure, as the fallback took it, past a glossary's "(Out of Memory)"
 * before it, or else the first), or the first line of another
 * recogniser's message.
 */
static bool
dc_find(const od_event *ev, const char *l, size_t n, size_t *p, size_t *q)
{
	const char *nl, *at;
	size_t k, i;
	bool found = false;

	if (n > DC_LINE_MAX)
		n = DC_LINE_MAX;
	if (ev->kind == OD_KIND_UNRECOGNISED) {
		k = strlen(ev->error);
		if (k == 0)
			return false;
		for (i = 0; i + k <= n; i++) {
			if (!dc_has(l + i, k, ev->error))
				continue;
			if (!found) {
				*p = i;
				*q = i + k;
				found = true;
			}
			if (!rg_mention(l, n, i, i + k)) {
				*p = i;
				*q = i + k;
				break;
			}
		}
		return found;
	}
	if (ev->message == NULL || ev->message_len == 0)
		return false;
	nl = memchr(ev->message, '\n', ev->message_len);
	k = nl != NULL ? (size_t)(nl - ev->message) : ev->message_len;
	at = k > 0 && k <= n ? memmem(l, n, ev->message, k) : NULL;
	if (at == NULL)
		return false;
	*p = (size_t)(at - l);
	*q = *p + k;
	return true;
}

/*
 * Whether l[p..q) stands in an inline code span of the line l[0..n) and
 * the line says nothing failed outside the span (rg_failure_line): the
 * failure word is the quoted message's.
 */
static bool
dc_failure_quoted(const char *l, size_t n, size_t p, size_t q)
{
	char copy[DC_LINE_MAX];
	size_t a = p, b = q, i, ticks = 0;

	while (a > 0 && l[a - 1] != '`')
		a--;
	while (b < n && l[b] != '`')
		b++;
	if (a == 0 || b >= n)
		return false;
	/* The backtick before it opens a span: an even number before it. */
	for (i = 0; i + 1 < a; i++)
		ticks += l[i] == '`';
	if (ticks % 2 != 0)
		return false;
	memcpy(copy, l, n);
	memset(copy + a, ' ', b - a);
	return !rg_failure_line(copy, n);
}

/* Whether the fallback's phrase (the event's error) stands after at
 * least DC_WEAK_BEFORE plain words of a sentence on the line l[0..n),
 * which says nothing failed, or only in the code span that quotes the
 * phrase. */
static bool
dc_weak_in_prose(const od_event *ev, const char *l, size_t n)
{
	char copy[DC_LINE_MAX];
	size_t p, q;

	if (ev->kind != OD_KIND_UNRECOGNISED || !dc_find(ev, l, n, &p, &q))
		return false;
	if (n > DC_LINE_MAX)
		n = DC_LINE_MAX;
	if (ev->fatal && !dc_failure_quoted(l, n, p, q))
		return false;
	memcpy(copy, l, n);
	dc_mask_spans(copy, n, p, q);
	return dc_words_before(copy, p) >= DC_WEAK_BEFORE;
}

/* Whether the event's text stands in the text of a Markdown link,
 * "[...](", on its line l[0..n). */
static bool
dc_link_title(const od_event *ev, const char *l, size_t n)
{
	size_t p, q;

	/* No link without a '[' (most lines have none): that costs one
	 * memchr, not the search for the text. */
	if (memchr(l, '[', n < DC_LINE_MAX ? n : DC_LINE_MAX) == NULL ||
	    !dc_find(ev, l, n, &p, &q))
		return false;
	if (n > DC_LINE_MAX)
		n = DC_LINE_MAX;
	while (p > 0 && l[p - 1] != '[' && l[p - 1] != ']')
		p--;
	while (q < n && l[q] != ']' && l[q] != '[')
		q++;
	return p > 0 && l[p - 1] == '[' && q + 1 < n && l[q] == ']' &&
	    l[q + 1] == '(';
}

/*
 * The line of t that ends at *e, no earlier than lo: a newline just
 * before *e is taken off *e (the line's end), and the line's start is
 * returned, just after the newline before it, or lo.
 */
static size_t
dc_line_back(const char *t, size_t lo, size_t *e)
{
	if (*e > lo && t[*e - 1] == '\n')
		(*e)--;
	return ln_bol(t, lo, *e);
}

/*
 * Whether the line l[0..n) is one that a unified diff adds, in a diff:
 * '+' first (not a "+++" header), and the line before it, at the end of
 * before[0..bn), a diff's line too: one added or removed, a hunk's "@@"
 * or a Markdown fence that opens a diff.
 */
static bool
dc_diff_line(const char *l, size_t n, const char *before, size_t bn)
{
	size_t e = bn, b;

	if (n == 0 || l[0] != '+' || (n > 1 && l[1] == '+'))
		return false;
	b = dc_line_back(before, 0, &e);
	if (e > b && before[e - 1] == '\r')
		e--;
	if (b == e)
		return false;
	return before[b] == '+' || before[b] == '-' ||
	    (e - b >= 2 && memcmp(before + b, "@@", 2) == 0) ||
	    (e - b >= 7 && memcmp(before + b, "```diff", 7) == 0);
}

/* Whether the short message (one line of it) stands inside a sentence
 * of the line l[0..n). */
static bool
dc_status_in_prose(const od_event *ev, const char *l, size_t n)
{
	const char *m = ev->message, *at;
	char copy[DC_LINE_MAX];
	size_t mn, p, q;
	int before, after;

	if (m == NULL || ev->message_len == 0 ||
	    ev->message_len > DC_STATUS_MAX ||
	    memchr(m, '\n', ev->message_len) != NULL ||
	    memchr(m, ':', ev->message_len) != NULL || dc_figures(ev))
		return false;
	mn = ev->message_len;
	at = mn <= n ? memmem(l, n, m, mn) : NULL;
	if (at == NULL)
		return false;
	p = (size_t)(at - l);
	q = p + mn;
	if (q > DC_LINE_MAX)
		return false;
	if (n > DC_LINE_MAX)
		n = DC_LINE_MAX;
	/* The other short code spans of the line count as one word each:
	 * a copy with their insides made letters.  A line without a
	 * backquote has no span (most have none). */
	if (memchr(l, '`', n) != NULL) {
		dc_code_span(l, n, &p, &q);
		memcpy(copy, l, n);
		dc_mask_spans(copy, n, p, q);
		l = copy;
	}
	before = dc_words_before(l, p);
	after = dc_words_after(l, n, q);
	return before >= DC_PROSE_BEFORE ||
	    (before >= DC_PROSE_BEFORE_AND && after >= DC_PROSE_AFTER);
}

/* Whether the short message (one line of it) stands on the line l[0..n)
 * as an operand of a comparison: "==" or "!=" just before or just after
 * it, blanks between. */
static bool
dc_status_compared(const od_event *ev, const char *l, size_t n)
{
	const char *m = ev->message, *at;
	size_t mn, p, q;

	if (m == NULL || ev->message_len == 0 ||
	    ev->message_len > DC_STATUS_MAX ||
	    memchr(m, '\n', ev->message_len) != NULL || dc_figures(ev))
		return false;
	mn = ev->message_len;
	if (n > DC_LINE_MAX)
		n = DC_LINE_MAX;
	at = mn <= n ? memmem(l, n, m, mn) : NULL;
	if (at == NULL)
		return false;
	p = (size_t)(at - l);
	q = p + mn;
	while (p > 0 && l[p - 1] == ' ')
		p--;
	while (q < n && l[q] == ' ')
		q++;
	return (p >= 2 && (l[p - 2] == '=' || l[p - 2] == '!') &&
	    l[p - 1] == '=') || (q + 1 < n && (l[q] == '=' || l[q] == '!') &&
	    l[q + 1] == '=');
}

/* The lines looked back over for the fence and the label of an example,
 * and the bytes. */
#define DC_EXAMPLE_LINES 12
#define DC_EXAMPLE_BYTES 4096

/* Whether b[0..n) opens or closes a Markdown fence: "```" after at most
 * three blanks. */
static bool
dc_fence(const char *b, size_t n)
{
	size_t i = 0;

	while (i < n && i < 3 && b[i] == ' ')
		i++;
	return n - i >= 3 && memcmp(b + i, "```", 3) == 0;
}

/*
 * Whether b[0..n), a line with no blank at its end, is only the label of
 * a comparison: "Before", "After", "This PR", "With this PR" or
 * "Rather than" (which a description puts before the old message, after
 * the new one), caseless (not "Now:", after which a report shows the
 * error it gets since a change), alone ("Before", as
 * pytorch/pytorch#20618 has it), as a Markdown heading ("### Before"),
 * in bold ("**After**", "**After:**") or with a colon ("Before:").
 */
static bool
dc_comparison_label(const char *b, size_t n)
{
	static const char *const labels[] = {
		"before", "after", "this pr", "with this pr", "rather than",
	};
	size_t i = 0, k;

	while (i < n && i < 3 && b[i] == ' ')
		i++;
	if (i < n && b[i] == '#') {
		while (i < n && b[i] == '#')
			i++;
		if (i >= n || b[i] != ' ')
			return false;
	}
	while (i < n && b[i] == ' ')
		i++;
	if (n - i >= 4 && memcmp(b + i, "**", 2) == 0 &&
	    memcmp(b + n - 2, "**", 2) == 0) {
		i += 2;
		n -= 2;
	}
	if (n > i && b[n - 1] == ':')
		n--;
	for (k = 0; k < sizeof labels / sizeof labels[0]; k++)
		if (n - i == strlen(labels[k]) &&
		    od_caseless_find(b + i, n - i, labels[k], n - i) != NULL)
			return true;
	return false;
}

/* Whether b[0..n) is a line of a Markdown code block by indentation:
 * four blanks or a tab first. */
static bool
dc_indented(const char *b, size_t n)
{
	return (n >= 1 && b[0] == '\t') ||
	    (n >= 4 && memcmp(b, "    ", 4) == 0);
}

/*
 * Whether the event's line l[0..n), indented as a Markdown code block,
 * after the text before[0..bn), stands in such a block that a
 * comparison's label opens: back over at most DC_EXAMPLE_LINES lines,
 * each indented or blank, to the nearest other line, which is such a
 * label ("rather than:" and the old message under it, as a pull
 * request's description shows a message before and after its change).
 */
static bool
dc_example_indented(const char *l, size_t n, const char *before, size_t bn)
{
	size_t e = bn, lo = bn > DC_EXAMPLE_BYTES ? bn - DC_EXAMPLE_BYTES : 0;
	int lines;

	if (!dc_indented(l, n))
		return false;
	for (lines = 0; lines < DC_EXAMPLE_LINES && e > lo; lines++) {
		size_t b = dc_line_back(before, lo, &e), te;

		if (b == lo && lo > 0)
			return false;   /* a line cut by the window */
		te = e;
		while (te > b && (before[te - 1] == ' ' ||
		    before[te - 1] == '\r' || before[te - 1] == '\t'))
			te--;
		if (te > b && !dc_indented(before + b, te - b))
			return dc_comparison_label(before + b, te - b);
		e = b;
	}
	return false;
}

/*
 * Whether the event's line, after the text before[0..bn), stands in a
 * fenced code block that a comparison's label opens: back over at most
 * DC_EXAMPLE_LINES lines to the first fence, and the nearest line with
 * text before that fence is such a label (dc_comparison_label).  A fence
 * that closes an earlier block has that block's last line before it,
 * which is no label.
 */
static bool
dc_example_shown(const char *before, size_t bn)
{
	size_t e = bn, lo = bn > DC_EXAMPLE_BYTES ? bn - DC_EXAMPLE_BYTES : 0;
	bool fence = false;
	int lines;

	/* No fence without a backquote: most windows have none, and one
	 * memchr over them costs less than the walk back line by line. */
	if (bn == lo || memchr(before + lo, '`', bn - lo) == NULL)
		return false;
	for (lines = 0; lines < DC_EXAMPLE_LINES + 2 && e > lo; lines++) {
		size_t b = dc_line_back(before, lo, &e), te;

		if (b == lo && lo > 0)
			return false;   /* a line cut by the window */
		te = e;
		while (te > b && (before[te - 1] == ' ' ||
		    before[te - 1] == '\r'))
			te--;
		if (!fence) {
			if (dc_fence(before + b, te - b))
				fence = true;
			else if (lines >= DC_EXAMPLE_LINES)
				return false;
		} else if (te > b) {
			return dc_comparison_label(before + b, te - b);
		}
		e = b;
	}
	return false;
}

/*
 * Whether the line l[0..n) is a Python exception's last line that is no
 * memory error: "Name: ..." at its start (after blanks), the name a
 * dotted identifier ending in Error or Exception.
 */
static bool
dc_other_exception(const char *l, size_t n)
{
	/* What makes an exception a memory error or a launcher's report
	 * (compared caselessly; "memory" alone is no failure of memory: "a
	 * memory leak detected!"). */
	static const char *const memory[] = {
		"out of memory", "outofmemory", "memoryerror", "oom ", "oom:",
		"resource_exhausted", "resourceexhausted", "failed to allocate",
		"cannot allocate", "not enough memory", "childfailed",
		"calledprocesserror",
	};
	size_t i = 0, b, k;

	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	b = i;
	while (i < n && ((l[i] >= 'a' && l[i] <= 'z') ||
	    (l[i] >= 'A' && l[i] <= 'Z') || (l[i] >= '0' && l[i] <= '9') ||
	    l[i] == '_' || l[i] == '.'))
		i++;
	if (i == b || i + 1 >= n || l[i] != ':' || l[i + 1] != ' ')
		return false;
	if (!((i - b >= 5 && memcmp(l + i - 5, "Error", 5) == 0) ||
	    (i - b >= 9 && memcmp(l + i - 9, "Exception", 9) == 0)))
		return false;
	for (k = 0; k < sizeof memory / sizeof memory[0]; k++)
		if (dc_has(l + b, n - b, memory[k]))
			return false;
	return true;
}

/* Line i of the memo's ring, nearest first. */
static struct dc_line *
dc_memo_line(dc_memo *memo, int i)
{
	return &memo->line[(memo->head + i) % DC_EXPLAIN_LINES];
}

/*
 * Whether the memo's lines 0 to n - 1 are what the look back over the
 * text from input offset from would read, once it has come to where the
 * first ends.  A step of the look back reads the line that ends at e (a
 * line break before e left out), from after the last line break before
 * it, or from the text's start when there is none: it depends on the
 * input's bytes before e, and on where the text starts only when the
 * line was cut there.  A kept line that starts after the kept text's
 * start had its line break before it, and reads the same in any text that
 * holds its first byte; one that starts where the kept text did reads the
 * same in a text that starts there too.  The lines' starts fall with i,
 * so the last one needed says it for all.
 */
static bool
dc_memo_holds(dc_memo *memo, uint64_t from, int n)
{
	uint64_t b = dc_memo_line(memo, n - 1)->b;

	return b >= from && (b > memo->from || memo->from == from);
}

/*
 * Whether the event is a shell's bare kill after the program's own other
 * error in the text before it, before[0..bn), which starts at input
 * offset at - bn.  The look back reads the lines up to the memo's first
 * one and takes the rest from the memo (dc_memo_holds), so that each line
 * of a log dense with events is read once, not once for each of the
 * DC_EXPLAIN_LINES events after it.
 */
static bool
dc_kill_explained(const od_event *ev, uint64_t at, const char *before,
    size_t bn, dc_memo *memo)
{
	struct dc_line got[DC_EXPLAIN_LINES];
	uint64_t from = at - bn;
	size_t e = bn;
	int lines = 0, kept = 0, i;
	bool explained = false, meet;

	if (ev->kind != OD_KIND_HOST_OOM_KILLER ||
	    ev->confidence != OD_CONF_LOW || ev->message == NULL ||
	    (strstr(ev->message, "Killed") == NULL &&
	    strstr(ev->message, "\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb") ==
	    NULL))
		return false;
	if (memo != NULL && memo->set && memo->at == at && memo->bn == bn)
		return memo->explained;
	meet = memo != NULL && memo->set && memo->nlines > 0;
	while (e > 0 && lines < DC_EXPLAIN_LINES) {
		size_t b, le = e;

		if (meet && dc_memo_line(memo, 0)->e == from + e) {
			/* The kept lines from here, as many as are wanted. */
			int want = DC_EXPLAIN_LINES - lines;
			int n = memo->nlines < want ? memo->nlines : want;

			if (dc_memo_holds(memo, from, n)) {
				kept = n;
				explained = dc_memo_line(memo, n - 1)->error;
				/* The kept look back stopped at its text's
				 * start, an error or its last line: so would
				 * this one (its text starts there, or the line
				 * count is reached). */
				break;
			}
			meet = false;
		}
		b = dc_line_back(before, 0, &le);
		got[lines] = (struct dc_line){ .e = from + e, .b = from + b,
		    .error = dc_other_exception(before + b, le - b) };
		if (got[lines++].error) {
			explained = true;
			break;
		}
		e = b;
	}
	if (memo != NULL) {
		/* The lines read go before those kept (the ring's head moves
		 * back over the ones no longer wanted). */
		if (kept == 0)
			memo->head = 0;
		memo->head = (memo->head + DC_EXPLAIN_LINES - lines) %
		    DC_EXPLAIN_LINES;
		for (i = 0; i < lines; i++)
			*dc_memo_line(memo, i) = got[i];
		memo->nlines = lines + kept;
		memo->set = true;
		memo->explained = explained;
		memo->at = at;
		memo->bn = bn;
		memo->from = from;
	}
	return explained;
}

const char *
dc_mention(const od_event *ev, const char *line, size_t n, uint64_t at,
    const char *before, size_t bn, dc_memo *memo)
{
	if (ev->confidence == OD_CONF_LOW && dc_weak_in_prose(ev, line, n))
		return dc_reason_weak;
	if (dc_status_in_prose(ev, line, n))
		return dc_reason_prose;
	if (dc_link_title(ev, line, n))
		return dc_reason_link;
	if (dc_diff_line(line, n, before, bn))
		return dc_reason_diff;
	if (dc_status_compared(ev, line, n))
		return dc_reason_compared;
	if (dc_example_shown(before, bn) ||
	    dc_example_indented(line, n, before, bn))
		return dc_reason_example;
	if (dc_kill_explained(ev, at, before, bn, memo))
		return dc_reason_explained;
	if (ev->kind == OD_KIND_SLURM_OOM && !ev->fatal)
		return dc_reason_limit;
	return NULL;
}
