/*
 * recog_fallback.c: the last recogniser (fb_recogniser of recogniser.h),
 * so that no line with a strong out-of-memory phrase goes unseen.
 *
 * The other recognisers read the messages of the stacks they know, with
 * their figures.  A line that says "out of memory", "OutOfMemory",
 * "OOM when allocating", "RESOURCE_EXHAUSTED", "failed to allocate ...
 * bytes" or, in a failure, "Cannot allocate memory", but that none of them
 * reads, becomes an event of kind `unrecognised`: confidence low, no
 * figures (none is read, so none can be wrong), the phrase in its error
 * field, the line as its message, and a verify_hint saying what would
 * confirm it.  The extractor tries it last: any other recogniser's
 * message wins, wherever it starts (extract.c).
 *
 * A phrase is no failure, and gives no event, where the line only talks
 * about one (each case kept by a fixture in fixtures/no-oom/):
 *
 *   advice or a condition before it   "to avoid out of memory errors",
 *                                      "if you run out of memory", "Fixed
 *                                      CUDA out of memory when ..."
 *   a recovery after it                "retrying", "recovered", "skipping",
 *                                      TF's "this is not a failure"
 *   source code                        a comment ("# catch ...OutOfMemory"),
 *                                      `except`, `raise`, `throw`, `catch`
 *   a command or a quoted search       "+ grep -i "out of memory" *.log",
 *                                      `"out of memory" in str(e)`
 *   a setting                          "retry_on: [RESOURCE_EXHAUSTED]",
 *                                      "oom_policy=OutOfMemory" (a key with
 *                                      no error, status or message in it)
 *   an option of a usage text          "  --batch-size N  ... out of memory"
 *   a heading, a template              "### CUDA out of memory", "out of
 *                                      memory to allocate XXXX bytes"
 *   a generalisation, a title          "most of the time ...", "it
 *                                      typically ... ran out of memory",
 *                                      or after it ("... usually means",
 *                                      "...一般是显存不够")
 *                                      "Fix out of memory for ..."
 *   a term named, not printed          the "Out Of Memory" (OOM) killer,
 *                                      quoted in title case, or spelt out
 *                                      after its abbreviation ("an OOM
 *                                      (out of memory) condition"), or an
 *                                      item of a list ("keywords: ...,
 *                                      OOM, out of memory, killed, ...",
 *                                      "runtime error, out of memory etc.")
 *   a title in title case              a page's or a section's title
 *                                      ("Linux OOM Killer Terminated Process
 *                                      — Out of Memory and Memory Leak
 *                                      Detection"): a line of six or more
 *                                      words and dashes only, each word
 *                                      capitalised but the small ones
 *                                      ("of", "and", ...), the phrase too
 *   an error's name quoted as code     "holds `torch.OutOfMemoryError` or
 *                                      `CUDA out of memory`" (a short
 *                                      span with no "Error: " in it)
 *   a question, a narration            "... after an out of memory
 *                                      error?", "it runs out of memory"
 *   a glossary                         "OOM (Out Of Memory)", "the \"Out
 *                                      Of Memory\" (OOM) killer", "exit
 *                                      code 137 means ..."
 *   a name assigned in source code     "THPException_OutOfMemoryError =
 *                                      PyErr_NewExceptionWithDoc(", "static
 *                                      jclass internal_OutOfMemoryError = 0;"
 *   a name as a call's argument        a line that is only the literal
 *                                      "torch.cuda.OutOfMemoryError", (and
 *                                      ',', ')' or ';')
 *   a statement of source code         "type->tp_name =
 *                                      \"torch.OutOfMemoryError\";", "if
 *                                      (!throwing_OutOfMemoryError) {" (an
 *                                      '=' or a call, a ';' or '{' at the
 *                                      end, no ": " before the phrase)
 *   a status of another resource       gRPC's RESOURCE_EXHAUSTED for a
 *                                      message size or a quota ("Received
 *                                      message larger than max (N vs. M)",
 *                                      "429 ... (e.g. check quota)"), on its
 *                                      line or the next two
 *   the locked-memory limit            "Cannot allocate memory" after a
 *                                      failed mlock or munlock ("failed to
 *                                      mlock 73728000-byte buffer ...: Cannot
 *                                      allocate memory") or an RDMA verb
 *                                      that pins memory ("Call to
 *                                      ibv_create_cq failed with error
 *                                      Cannot allocate memory"):
 *                                      RLIMIT_MEMLOCK or the adapter's
 *                                      resources, not memory running out
 *
 * rg_mention (recogniser.h) is this test, which the recognisers of the
 * table with quiet_in_prose also apply to their match.
 *
 * The event is fatal only when the line says it failed: one of the words
 * of fb_fatal_words (error, exception, failed, fatal, abort, panic, killed,
 * cannot, unable, ...) or its prefix an error severity (glog's E or F,
 * "E1201 12:00:00.1 ...", or a logger's ERROR, FATAL, CRITICAL: extract.c
 * reads the prefix, which the line here no longer has); otherwise it is a
 * mention that the program went on after, non-fatal.
 */
#include <stdlib.h>
#include <string.h>

#include "recogniser.h"

/* What a phrase needs around it to count. */
typedef enum {
	FB_NEEDS_NOTHING,
	FB_NEEDS_FAILURE,       /* a failure word, or "call: " before it */
	FB_NEEDS_MEMORY,        /* memory, bytes, a buffer or a size after it */
} fb_needs;

typedef struct {
	const char *text;
	bool caseless;
	fb_needs needs;
	bool status;            /* a status code that other resources share */
} fb_phrase;

/* The phrases, which are also the prefilter's anchors. */
static const fb_phrase fb_phrases[] = {
	{ .text = "out of memory", .caseless = true },
	{ .text = "out of device memory", .caseless = true },
	{ .text = "OutOfMemory", .caseless = true },
	{ .text = "OOM when allocating" },
	{ .text = "RESOURCE_EXHAUSTED", .status = true },
	{ .text = "ResourceExhausted", .status = true },
	{ .text = "Cannot allocate memory", .caseless = true,
	  .needs = FB_NEEDS_FAILURE },
	{ .text = "failed to allocate", .caseless = true,
	  .needs = FB_NEEDS_MEMORY },
};
#define FB_N ((int)(sizeof fb_phrases / sizeof fb_phrases[0]))

/*
 * What would confirm an event of this recogniser, by the vendor its line
 * names: each names only that vendor's tool (nvidia-smi(1); ROCm SMI's
 * rocm-smi and AMD SMI's amd-smi; Intel XPU Manager's xpu-smi; macOS's
 * vm_stat(1), since Apple's GPU shares the system's memory; a TPU's
 * runtime has no such tool), and a line that names no device none.  The
 * vendors are tried in order, each with its words; the first found
 * decides.
 */
#define FB_HINT_HEAD "the message of the program's allocator or the " \
    "traceback around this line, its exit status, or "
#define FB_HINT_TAIL " at that time: oomdoc saw an out-of-memory phrase in " \
    "no format it knows, so it read no figures"
static const struct {
	const char *words[4];   /* NULL-terminated */
	const char *hint;
} fb_hints[] = {
	{ .words = { "CUDA", "cuda", "NVIDIA" }, .hint = FB_HINT_HEAD
	  "nvidia-smi and the kernel log (dmesg -T)" FB_HINT_TAIL },
	{ .words = { "HIP", "hip", "ROCm" }, .hint = FB_HINT_HEAD "rocm-smi "
	  "(or amd-smi) and the kernel log (dmesg -T)" FB_HINT_TAIL },
	{ .words = { "XPU", "xpu" }, .hint = FB_HINT_HEAD "xpu-smi and the "
	  "kernel log (dmesg -T)" FB_HINT_TAIL },
	{ .words = { "MPS", "mps" }, .hint = FB_HINT_HEAD "the system's memory "
	  "use (vm_stat, Activity Monitor)" FB_HINT_TAIL },
	{ .words = { "TPU" }, .hint = FB_HINT_HEAD "the TPU program's memory use "
	  "as its framework reports it" FB_HINT_TAIL },
};
/* A line that names no device: the host's memory, or a device the line
 * does not say. */
static const char fb_hint_any[] = FB_HINT_HEAD "the memory use of the "
    "host and of its devices, and the kernel log (dmesg -T)" FB_HINT_TAIL;

/* Whether t[0..len) has word, not inside a longer word ("hip" of "ship",
 * "mps" of "jumps"); a digit or an underscore may follow ("cuda:0",
 * "hipMalloc" is a name of HIP's, "HIP_VISIBLE_DEVICES"). */
static bool
fb_word(const char *t, size_t len, const char *word)
{
	size_t n = strlen(word), at;

	for (at = 0; at + n <= len; at++) {
		unsigned char before = at > 0 ? (unsigned char)t[at - 1] : ' ';

		if (memcmp(t + at, word, n) != 0 || (before >= 'a' &&
		    before <= 'z') || (before >= 'A' && before <= 'Z'))
			continue;
		if (at + n == len || !((t[at + n] >= 'a' && t[at + n] <= 'z') &&
		    word[n - 1] >= 'a' && word[n - 1] <= 'z'))
			return true;
	}
	return false;
}

/* The hint for the line t[0..len). */
static const char *
fb_hint(const char *t, size_t len)
{
	size_t i, w;

	for (i = 0; i < sizeof fb_hints / sizeof fb_hints[0]; i++)
		for (w = 0; fb_hints[i].words[w] != NULL; w++)
			if (fb_word(t, len, fb_hints[i].words[w]))
				return fb_hints[i].hint;
	return fb_hint_any;
}

/* Words before the phrase that make it advice, a condition or history. */
static const char *const fb_advice_words[] = {
	"if ", "in case", "avoid", "prevent", "to reduce", "reduce the",
	"to fix", "fixed", "fixes", "whether", "might ", "may ", "would ",
	"should ", "could be", "could cause", "can cause", "can lead",
	"ought to ", "tip:", "hint:", "help", "to handle", "handling",
	"to detect", "check for", "without ", "never ", "less likely",
	"in order to", "grep", "search for ", "to catch", "how to",
	"refer to",
	"documentation", "not a failure", "not being ",
	/* A generalisation, not a report of this run. */
	"most of the time", "usually", "typically", "generally", "often ",
	/* A pull request's title ("Fix out of memory for training with
	 * large batch size"). */
	"fix ",
	/* The documentation of an exception ("Exception raised when CUDA is
	 * out of memory", torch/csrc/Exceptions.cpp). */
	"raised when", "thrown when",
};

/* Words after it that say the program recovered, or it was no failure. */
static const char *const fb_recovery_words[] = {
	"not a failure", "retry", "retrying", "recovered", "recovering",
	"succeeded", "skipping", "trying again", "will try", "falling back",
	"fall back", "try again",
	/* IPython's traceback header names the exception; its message
	 * comes at the traceback's end. */
	"traceback (most recent call last)",
};

/* Tokens before it that show source code (a traceback's source line). */
static const char *const fb_code_words[] = {
	"except ", "except:", "raise ", "throw ", "catch (", "catch(",
	"assert ", "elif ", "return ", "def ", "print(",
};

/* Words that say the line reports a failure. */
static const char *const fb_fatal_words[] = {
	"error", "exception", "failed", "failure", "fatal", "abort", "panic",
	"killed", "crash", "terminat", "cannot", "could not", "unable",
	"errno",
};

/* Words in a key that make "key: PHRASE" a report rather than a
 * setting. */
static const char *const fb_report_keys[] = {
	"error", "exception", "fail", "fatal", "status", "reason", "message",
	"msg", "detail", "what", "cause", "code",
};

typedef struct {
	ex_anchor anchors[FB_N];
	size_t len[FB_N];       /* each phrase's length */
	char first[FB_N];       /* and its first byte in lower case */
} fb_set;

static char
fb_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool
fb_letter(char c)
{
	c = fb_lower(c);
	return c >= 'a' && c <= 'z';
}

/* Whether p[0..n) contains, caselessly, w (lower case) anywhere. */
static bool
fb_has(const char *p, size_t n, const char *w)
{
	size_t wl = strlen(w), i, k;

	for (i = 0; i + wl <= n; i++) {
		for (k = 0; k < wl && fb_lower(p[i + k]) == w[k]; k++)
			;
		if (k == wl)
			return true;
	}
	return false;
}

/*
 * Whether one of the words (lower case, nw of them, at most 64) occurs
 * caselessly in p[0..n): with word_start, only at the start of a word (a
 * letter after a letter starts none); the word equal to except (may be
 * NULL) is left out.  One pass over p for all the words, not one a word:
 * a byte that starts none of them (slot[] 0) is passed over at once, and
 * at one that does only the words starting with it are compared.  A dense
 * input asks this of the rest of a long line at every hit that the
 * extractor does not remember, so the pass is the cost of that hit.
 */
static bool
fb_any_pass(const char *p, size_t n, const char *const *words, size_t nw,
    bool word_start, const char *except)
{
	/* slot[c]: 1 + the index in starts[] of the words that start with
	 * byte c, 0 for none. */
	unsigned char slot[256];
	uint64_t starts[64];
	size_t i, k;
	int ns = 0;

	memset(slot, 0, sizeof slot);
	for (k = 0; k < nw && k < 64; k++) {
		unsigned char c = (unsigned char)words[k][0];

		if (except != NULL && strcmp(words[k], except) == 0)
			continue;
		if (slot[c] == 0) {
			starts[ns] = 0;
			slot[c] = (unsigned char)++ns;
		}
		starts[slot[c] - 1] |= UINT64_C(1) << k;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)fb_lower(p[i]);
		uint64_t m;

		if (slot[c] == 0)
			continue;
		/* w[0] is c: a letter after a letter starts no word. */
		if (word_start && i > 0 && fb_letter(p[i - 1]) &&
		    fb_letter((char)c))
			continue;
		for (m = starts[slot[c] - 1]; m != 0; m &= m - 1) {
			const char *w = words[__builtin_ctzll(m)];
			size_t wl = strlen(w), j;

			if (wl > n - i)
				continue;
			for (j = 1; j < wl && fb_lower(p[i + j]) == w[j]; j++)
				;
			if (j == wl)
				return true;
		}
	}
	return false;
}

static bool
fb_any_word(const char *p, size_t n, const char *const *words, size_t nw)
{
	return fb_any_pass(p, n, words, nw, true, NULL);
}

static bool
fb_any(const char *p, size_t n, const char *const *words, size_t nw)
{
	return fb_any_pass(p, n, words, nw, false, NULL);
}

#define FB_COUNT(a) (sizeof (a) / sizeof (a)[0])

/* fb_any_pass takes at most 64 words a list. */
_Static_assert(FB_COUNT(fb_advice_words) <= 64 &&
    FB_COUNT(fb_recovery_words) <= 64 && FB_COUNT(fb_code_words) <= 64 &&
    FB_COUNT(fb_fatal_words) <= 64, "a word list of more than 64 words");

/* Whether the line l[0..n) reports a failure (the fatal rule above). */
static bool
fb_failure_line(const char *l, size_t n, bool count_cannot)
{
	size_t i = 0;

	if (fb_any_pass(l, n, fb_fatal_words, FB_COUNT(fb_fatal_words), false,
	    count_cannot ? NULL : "cannot"))
		return true;
	/* glog's severity letter and date: E1201 or F1201. */
	for (i = 0; i < n && (l[i] == ' ' || l[i] == '\t'); i++)
		;
	return n - i >= 6 && (l[i] == 'E' || l[i] == 'F') &&
	    l[i + 1] >= '0' && l[i + 1] <= '9' && l[i + 2] >= '0' &&
	    l[i + 2] <= '9' && l[i + 3] >= '0' && l[i + 3] <= '9' &&
	    l[i + 4] >= '0' && l[i + 4] <= '9' && l[i + 5] == ' ';
}

bool
rg_failure_line(const char *l, size_t n)
{
	return fb_failure_line(l, n, true);
}

/* Whether what follows the phrase (post[0..n)) names memory or a size. */
static bool
fb_memory_after(const char *post, size_t n)
{
	size_t i;

	if (n > 80)
		n = 80;
	if (fb_has(post, n, "memory") || fb_has(post, n, "bytes") ||
	    fb_has(post, n, "buffer") || fb_has(post, n, "tensor"))
		return true;
	/* A size: digits, maybe a blank, then [KMGT]i?B. */
	for (i = 0; i + 2 < n; i++) {
		size_t k = i + 1;

		if (post[i] < '0' || post[i] > '9')
			continue;
		if (post[k] == ' ')
			k++;
		if (k + 1 < n && strchr("KMGT", post[k]) != NULL &&
		    post[k] != '\0' && (post[k + 1] == 'B' ||
		    (post[k + 1] == 'i' && k + 2 < n && post[k + 2] == 'B')))
			return true;
	}
	return false;
}

/*
 * Whether the phrase at l[p..q) of the line l[0..n) is a setting: after
 * "key=" or "key: " (maybe with a list's brackets, quotes and other
 * values between) whose key names no report, on a line that reports no
 * failure before it.  A key before ':' must look like a setting's (with
 * '_', '.' or '-': "retry_on", "memory.policy"), so that "worker: out of
 * memory" stays a report.
 */
static bool
fb_setting(const char *l, size_t p)
{
	size_t i = p, ke;
	size_t kb, k;

	while (i > 0 && (strchr(" \t\"'[{(,|_", l[i - 1]) != NULL ||
	    (l[i - 1] >= 'A' && l[i - 1] <= 'Z') ||
	    (l[i - 1] >= '0' && l[i - 1] <= '9')) && l[i - 1] != '\0')
		i--;
	if (i == 0 || (l[i - 1] != '=' && l[i - 1] != ':'))
		return false;
	ke = i - 1;
	kb = ke;
	while (kb > 0 && (fb_letter(l[kb - 1]) || l[kb - 1] == '_' ||
	    l[kb - 1] == '.' || l[kb - 1] == '-' ||
	    (l[kb - 1] >= '0' && l[kb - 1] <= '9')))
		kb--;
	if (kb == ke || (l[ke] == ':' && memchr(l + kb, '_', ke - kb) == NULL &&
	    memchr(l + kb, '.', ke - kb) == NULL &&
	    memchr(l + kb, '-', ke - kb) == NULL))
		return false;
	for (k = 0; k < FB_COUNT(fb_report_keys); k++)
		if (fb_has(l + kb, ke - kb, fb_report_keys[k]))
			return false;
	/* A key with no capital is a setting's ("retry_on", "oom_policy");
	 * a capitalised word is prose or a name ("Reason", "GPU"). */
	for (k = kb; k < ke; k++)
		if (l[k] >= 'A' && l[k] <= 'Z')
			return false;
	return !fb_failure_line(l, kb, true);
}

/* Whether the phrase stands quoted alone ("out of memory") on a line
 * that searches for it or tests it. */
static bool
fb_quoted_search(const char *l, size_t n, size_t p, size_t q)
{
	char qc;

	if (p == 0 || q >= n || (l[p - 1] != '"' && l[p - 1] != '\''))
		return false;
	qc = l[p - 1];
	if (l[q] != qc)
		return false;
	return fb_has(l, n, "grep") || fb_has(l + q, n - q, " in ") ||
	    fb_has(l + q, n - q, "==") || fb_has(l + q, n - q, "!=");
}

/* Whether the line is an option of a usage text, or a command shown by a
 * shell ("+ cmd", "$ cmd"). */
static bool
fb_usage_or_command(const char *l, size_t n)
{
	size_t i = 0;

	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i + 1 < n && (l[i] == '+' || l[i] == '$') && l[i + 1] == ' ')
		return true;
	if (i + 1 < n && l[i] == '-' && (l[i + 1] == '-' ||
	    fb_letter(l[i + 1])))
		return i > 0 || l[i + 1] == '-';
	return fb_has(l, n > 8 ? 8 : n, "usage:");
}

/* Whether the line is a Markdown heading ("### CUDA out of memory"): the
 * title of a section of a guide or an issue, not a message. */
static bool
fb_heading(const char *l, size_t n)
{
	size_t i = 0;

	while (i < n && i < 3 && l[i] == ' ')
		i++;
	if (i >= n || l[i] != '#')
		return false;
	while (i < n && l[i] == '#')
		i++;
	return i < n && l[i] == ' ';
}

/* Whether the word that ends l[0..e) (after blanks) is w (lower case,
 * compared caselessly), with no letter before it. */
static bool
fb_word_before(const char *l, size_t e, const char *w)
{
	size_t wl = strlen(w);

	while (e > 0 && l[e - 1] == ' ')
		e--;
	return e >= wl && fb_has(l + e - wl, wl, w) &&
	    (e == wl || !fb_letter(l[e - wl - 1]));
}

/*
 * Whether the phrase at l[p..q) names the term rather than printing the
 * message: quoted alone in title case (the "Out Of Memory" (OOM) killer,
 * 'Out of Memory' errors: programs print the phrase in lower case), quoted
 * alone after an article in any case (a call "failed with an "out of
 * memory" error": a sentence that names the error, where a program's
 * message quotes it after a colon, "cudaMalloc failed: "out of memory""),
 * or an item of a comma-separated list (", out of memory,": a list of
 * search terms or keywords).
 */
static bool
fb_named_term(const char *l, size_t n, size_t p, size_t q)
{
	static const char lq[] = "\xe2\x80\x9c", rq[] = "\xe2\x80\x9d";
	bool open, close;
	size_t ob;

	open = p >= 1 && (l[p - 1] == '"' || l[p - 1] == '\'');
	close = open && q < n && l[q] == l[p - 1];
	ob = open ? p - 1 : p;
	if (!open && p >= 3 && memcmp(l + p - 3, lq, 3) == 0) {
		open = true;
		close = q + 3 <= n && memcmp(l + q, rq, 3) == 0;
		ob = p - 3;
	}
	if (open && close && ((l[p] >= 'A' && l[p] <= 'Z') ||
	    fb_word_before(l, ob, "a") || fb_word_before(l, ob, "an") ||
	    fb_word_before(l, ob, "the")))
		return true;
	return q < n && (l[q] == ',' || (q + 4 <= n &&
	    memcmp(l + q, " etc", 4) == 0)) && p >= 1 && (l[p - 1] == ',' ||
	    (p >= 2 && l[p - 1] == ' ' && l[p - 2] == ','));
}

/*
 * Whether the line l[0..n), the phrase's, is a title in title case: six
 * or more tokens, each a dash ('-', or U+2013 or U+2014 between blanks)
 * or a word of letters (a hyphen or an apostrophe inside) that starts
 * with a capital, but for the small words of a title, so the phrase's
 * own words too ("Out of Memory").  A program writes its message with a
 * colon, a figure or a lower-case word somewhere, not as a headline.
 */
static bool
fb_title(const char *l, size_t n)
{
	static const char *const small[] = {
		"a", "an", "and", "as", "at", "by", "for", "in", "of", "on",
		"or", "the", "to", "vs", "with",
	};
	size_t b = 0;
	int tokens = 0;

	while (b < n) {
		size_t e, i, k;
		bool ok;

		while (b < n && l[b] == ' ')
			b++;
		if (b >= n)
			break;
		for (e = b; e < n && l[e] != ' '; e++)
			;
		tokens++;
		ok = (e - b == 1 && l[b] == '-') || (e - b == 3 &&
		    (memcmp(l + b, "\xe2\x80\x93", 3) == 0 ||
		    memcmp(l + b, "\xe2\x80\x94", 3) == 0));
		if (!ok && fb_letter(l[b])) {
			ok = true;
			for (i = b + 1; i < e; i++)
				if (!fb_letter(l[i]) && l[i] != '-' &&
				    l[i] != '\'')
					ok = false;
			if (ok && !(l[b] >= 'A' && l[b] <= 'Z')) {
				ok = false;
				for (k = 0; k < FB_COUNT(small); k++)
					if (e - b == strlen(small[k]) &&
					    memcmp(l + b, small[k], e - b) == 0)
						ok = true;
			}
		}
		if (!ok)
			return false;
		b = e;
	}
	return tokens >= 6;
}

/*
 * Whether the phrase at l[p..q) is the name of an error quoted as code in
 * prose: alone in a short inline code span with no ':' in it ("holds
 * `torch.OutOfMemoryError` or `CUDA out of memory`"), where a pasted
 * message keeps its "Error: " ("`RuntimeError: CUDA out of memory ...`").
 * A span of more than 40 bytes counts only when it is one dotted name, a
 * class's full path ("to debug
 * `tensorflow.python.framework.errors_impl.ResourceExhaustedError`"),
 * which has no message in it.
 */
static bool
fb_code_span_name(const char *l, size_t n, size_t p, size_t q)
{
	size_t a, b, i, ticks = 0;

	for (a = p; a > 0 && l[a - 1] != '`'; a--)
		if (l[a - 1] == ':' || p - a > 100)
			return false;
	if (a == 0)
		return false;
	for (b = q; b < n && l[b] != '`'; b++)
		if (l[b] == ':' || b - a > 100)
			return false;
	if (b == n)
		return false;
	if (b - a > 40)
		for (i = a; i < b; i++)
			if (!fb_letter(l[i]) && l[i] != '.' && l[i] != '_' &&
			    !(l[i] >= '0' && l[i] <= '9'))
				return false;
	/* The backtick before it opens a span: an even number before it. */
	for (i = 0; i + 1 < a; i++)
		ticks += l[i] == '`';
	return ticks % 2 == 0;
}

/* Whether the line l[0..n) is source code before the phrase at p: a
 * comment or a statement that handles the failure. */
static bool
fb_source(const char *l, size_t p)
{
	size_t i;

	for (i = 0; i < p; i++)
		if ((l[i] == '#' || (l[i] == '/' && i + 1 < p &&
		    l[i + 1] == '/')) && (i == 0 || l[i - 1] == ' ' ||
		    l[i - 1] == '\t') && i + 1 < p && (l[i + 1] == ' ' ||
		    l[i + 1] == '/'))
			return true;
	return fb_any(l, p, fb_code_words, FB_COUNT(fb_code_words));
}

/* Whether the sentence of the phrase, from q on, ends in a question mark
 * ("Does that mean it carries on after an out of memory error?"), ASCII
 * or the full-width one of Chinese and Japanese text (U+FF1F, "...的
 * warning时该怎么办？"): a person asking, not a program reporting.  The
 * full-width full stop (U+3002) ends a sentence as '.' does. */
static bool
fb_question(const char *l, size_t n, size_t q)
{
	size_t i;

	for (i = q; i < n; i++) {
		if (l[i] == '?' || (i + 3 <= n &&
		    memcmp(l + i, "\xef\xbc\x9f", 3) == 0))
			return true;
		if (i + 3 <= n && memcmp(l + i, "\xe3\x80\x82", 3) == 0)
			return false;
		if ((l[i] == '.' || l[i] == '!') && (i + 1 == n ||
		    l[i + 1] == ' '))
			return false;
	}
	return false;
}

/* Whether l[0..vb) ends with a word of two or more lower-case letters
 * and one blank (l[vb] starts the verb), the word at the start of the line
 * or after a blank. */
static bool
fb_lower_word_before(const char *l, size_t vb)
{
	size_t b;

	if (vb < 3 || l[vb - 1] != ' ')
		return false;
	for (b = vb - 1; b > 0 && l[b - 1] >= 'a' && l[b - 1] <= 'z'; b--)
		;
	return vb - 1 - b >= 2 && (b == 0 || l[b - 1] == ' ');
}

/* Whether l[0..vb) ends with a name of two or more letters in any case
 * and one blank (l[vb] starts the verb), after a word of two or more
 * lower-case letters and a blank: a sentence's subject ("so cuDNN runs
 * out of memory", "when PyTorch runs out of memory"), where a program's
 * message has the name at the start of its line or after a colon. */
static bool
fb_name_after_word(const char *l, size_t vb)
{
	size_t b;

	if (vb < 3 || l[vb - 1] != ' ')
		return false;
	for (b = vb - 1; b > 0 && fb_letter(l[b - 1]); b--)
		;
	if (vb - 1 - b < 2 || b == 0 || l[b - 1] != ' ')
		return false;
	return fb_lower_word_before(l, b);
}

/* Subjects and verbs of a person telling what a job did ("it runs out of
 * memory", "we ran out of memory"): a program's message says "out of
 * memory" after a name or a colon, not after a pronoun and "run". */
static const char *const fb_narrators[] = {
	"it", "i", "we", "you", "they", "he", "she", "it's", "i'm", "we're",
	"you're", "they're", "it is", "i am", "we are", "they are",
};

/* The run verbs of those narrators, and whether a verb also narrates
 * after a noun (after_noun): "runs" and "running" do ("the inference
 * service pod running out of memory", "the job runs out of memory"). */
struct fb_verb {
	const char *text;
	bool after_noun;
};

static const struct fb_verb fb_narrated[] = {
	{ .text = "run " },
	{ .text = "runs ", .after_noun = true },
	{ .text = "ran " },
	{ .text = "running ", .after_noun = true },
	{ .text = "keeps running " },
	{ .text = "kept running " },
};

/*
 * Whether l[0..p) ends with a narrator and a run verb.  "runs" and
 * "running" also narrate after a noun ("the inference service pod
 * running out of memory", "the job runs out of memory"): a word in lower
 * case and a blank before them is a sentence's subject, where a program's
 * message has a name, a colon or the start of its line; so is a name after
 * such a word ("so cuDNN runs out of memory").  The verbs that do are
 * marked after_noun.
 */
static bool
fb_narration(const char *l, size_t p)
{
	size_t i, k;

	for (i = 0; i < FB_COUNT(fb_narrated); i++) {
		const struct fb_verb *v = &fb_narrated[i];
		size_t vl = strlen(v->text), vb;

		if (p < vl || !fb_has(l + p - vl, vl, v->text))
			continue;
		vb = p - vl;
		if (v->after_noun && (fb_lower_word_before(l, vb) ||
		    fb_name_after_word(l, vb)))
			return true;
		for (k = 0; k < FB_COUNT(fb_narrators); k++) {
			size_t nl = strlen(fb_narrators[k]);

			if (vb < nl + 1 || l[vb - 1] != ' ' ||
			    !fb_has(l + vb - 1 - nl, nl, fb_narrators[k]))
				continue;
			if (vb - 1 - nl == 0 || !fb_letter(l[vb - 2 - nl]))
				return true;
		}
	}
	return false;
}

/* Whether the phrase at l[p..q) spells out the acronym OOM ("OOM (Out Of
 * Memory)", "the \"Out Of Memory\" (OOM) killer") or is defined ("exit
 * code 137 means ..."): a glossary in prose, not a message. */
static bool
fb_glossary(const char *l, size_t n, size_t p, size_t q)
{
	size_t i = p, j = q;

	if (i > 0 && l[i - 1] == '(') {
		i--;
		while (i > 0 && l[i - 1] == ' ')
			i--;
		if (i >= 3 && fb_has(l + i - 3, 3, "oom"))
			return true;
	}
	if (j < n && (l[j] == '"' || l[j] == '\'' || l[j] == '`'))
		j++;
	while (j < n && l[j] == ' ')
		j++;
	if (j + 5 <= n && fb_has(l + j, 5, "(oom)"))
		return true;
	return fb_has(l + q, n - q > 16 ? 16 : n - q, " means ") ||
	    fb_has(l + q, n - q > 16 ? 16 : n - q, " stands for ");
}

/* The words that may stand between a negation and the phrase it negates
 * ("does not look like an out of memory error", "wasn't caused by out of
 * memory", "is not really an out of memory error"). */
static const char *const fb_negation_links[] = {
	"a", "an", "the", "any", "really", "actually", "be", "look", "looks",
	"like", "seem", "seems", "to", "related", "caused", "by", "due",
};
#define FB_NEGATION_LINKS 4

/* Whether the word l[b..e) is a negation: "no", "not", or a contraction
 * with "n't" (ASCII or U+2019's apostrophe: "isn't", "doesn’t"). */
static bool
fb_negation(const char *l, size_t b, size_t e)
{
	size_t n = e - b;

	return (n == 2 && fb_has(l + b, 2, "no")) ||
	    (n == 3 && fb_has(l + b, 3, "not")) ||
	    (n >= 4 && fb_has(l + e - 3, 3, "n't")) ||
	    (n >= 6 && fb_lower(l[e - 5]) == 'n' &&
	    memcmp(l + e - 4, "\xe2\x80\x99", 3) == 0 &&
	    fb_lower(l[e - 1]) == 't');
}

/*
 * Whether the phrase at l[p..q) is negated: "no", "not" or a word with
 * "n't" before it, maybe with Markdown's emphasis or a quote between
 * ("- No out of memory errors" in a test report's list of what went well,
 * "I expect no Out Of Memory errors at all"), or with at most
 * FB_NEGATION_LINKS words of fb_negation_links between ("This does not
 * look like an out of memory error", "The timeout was not an Out of
 * Memory error"): it says the failure did not happen, or was not this
 * one.
 */
static bool
fb_negated(const char *l, size_t p)
{
	size_t e = p;
	int links = 0;

	while (e > 0 && (l[e - 1] == '*' || l[e - 1] == '_' ||
	    l[e - 1] == '"' || l[e - 1] == '\'' || l[e - 1] == '`'))
		e--;
	for (;;) {
		size_t b, w, k;
		bool link = false;

		if (e == 0 || l[e - 1] != ' ')
			return false;
		e--;
		for (b = e; b > 0 && l[b - 1] != ' '; b--)
			;
		if (b == e)
			return false;
		/* A negation may have a list's dash, a parenthesis or
		 * emphasis before it ("-No", "(not", "**not"). */
		for (w = b; w < e && (unsigned char)l[w] < 0x80 &&
		    !fb_letter(l[w]); w++)
			;
		if (w < e && fb_negation(l, w, e))
			return true;
		for (k = 0; k < FB_COUNT(fb_negation_links) && !link; k++)
			link = e - b == strlen(fb_negation_links[k]) &&
			    fb_has(l + b, e - b, fb_negation_links[k]);
		if (!link || ++links > FB_NEGATION_LINKS)
			return false;
		e = b;
	}
}

/* Words that, right after the phrase, make its sentence say what the
 * error generally means: English adverbs, with "is" or "are" before them
 * or not, and Chinese 一般 (generally), 通常 (usually), 往往 (often) and
 * 大多 (mostly). */
static const char *const fb_general_after_words[] = {
	"usually ", "generally ", "typically ", "normally ", "often ",
	"is usually ", "is generally ", "is typically ", "is normally ",
	"is often ", "are usually ", "are generally ", "are typically ",
	"are often ",
	"\xe4\xb8\x80\xe8\x88\xac", "\xe9\x80\x9a\xe5\xb8\xb8",
	"\xe5\xbe\x80\xe5\xbe\x80", "\xe5\xa4\xa7\xe5\xa4\x9a",
};

/*
 * Whether a word of fb_general_after_words comes right after the phrase
 * at l[..q) of the line l[0..n), with only blanks, a closing quote,
 * backtick or emphasis between: a sentence about what the error usually
 * means ("单看报错信息，CUBLAS_STATUS_ALLOC_FAILED一般是显存不够", a
 * maintainer's reply in QwenLM/Qwen; "`out of memory` usually means
 * ..."), where a program's message goes on with its details or ends.
 */
static bool
fb_general_after(const char *l, size_t n, size_t q)
{
	size_t i, k;

	for (i = q; i < n && (l[i] == ' ' || l[i] == '`' || l[i] == '"' ||
	    l[i] == '\'' || l[i] == '*'); i++)
		;
	for (k = 0; k < FB_COUNT(fb_general_after_words); k++) {
		const char *w = fb_general_after_words[k];
		size_t wl = strlen(w), j;

		if (wl > n - i)
			continue;
		for (j = 0; j < wl && fb_lower(l[i + j]) == w[j]; j++)
			;
		if (j == wl)
			return true;
	}
	return false;
}

bool
rg_mention(const char *l, size_t n, size_t p, size_t q)
{
	return fb_any_word(l, p, fb_advice_words, FB_COUNT(fb_advice_words)) ||
	    fb_any_word(l + q, n - q, fb_recovery_words,
	    FB_COUNT(fb_recovery_words)) || fb_source(l, p) ||
	    fb_quoted_search(l, n, p, q) || fb_usage_or_command(l, n) ||
	    fb_setting(l, p) || fb_heading(l, n) || rg_placeholder(l, n) ||
	    fb_question(l, n, q) || fb_narration(l, p) ||
	    fb_glossary(l, n, p, q) || fb_negated(l, p) ||
	    fb_general_after(l, n, q);
}

/*
 * Whether the line l[0..n) is a statement of source code that assigns to
 * a name holding a phrase, which makes every phrase on the line code
 * ("OutOfMemoryError = torch._C.OutOfMemoryError"): the line's first '='
 * is a lone one (not "==", "!=", "<=", ">=", "=>"), the last word before
 * it holds "OutOfMemory" or the status's name, and what comes before that
 * word is only words (a type, "static", "public"), blanks, a diff's '+'
 * or '-' and the '.', "->", '*', '&' and brackets of a name:
 * "tls32_.throwing_OutOfMemoryError = true;", "static jclass
 * internal_OutOfMemoryError = 0;".  A program's message does not begin
 * with such a name and " = " ("status = StatusCode.RESOURCE_EXHAUSTED"
 * assigns to "status": that is a report).
 */
static bool
fb_assigned_name(const char *l, size_t n)
{
	size_t e, w, i;

	for (e = 0; e < n && l[e] != '='; e++)
		if (!fb_letter(l[e]) && (l[e] < '0' || l[e] > '9') &&
		    strchr(" \t_.*&[]+-", l[e]) == NULL &&
		    !(l[e] == '>' && e > 0 && l[e - 1] == '-'))
			return false;
	if (e == n || e == 0 || strchr("=!<>", l[e - 1]) != NULL ||
	    (e + 1 < n && (l[e + 1] == '=' || l[e + 1] == '>')))
		return false;
	/* The last word before the '=': [w, i). */
	for (i = e; i > 0 && (l[i - 1] == ' ' || l[i - 1] == '\t'); i--)
		;
	for (w = i; w > 0 && l[w - 1] != ' ' && l[w - 1] != '\t'; w--)
		;
	return fb_has(l + w, i - w, "outofmemory") ||
	    fb_has(l + w, i - w, "resource_exhausted") ||
	    fb_has(l + w, i - w, "resourceexhausted");
}

/*
 * Whether the phrase at l[p..q) is in a string literal that is a dotted
 * name alone ("torch.cuda.OutOfMemoryError") and the whole line (after
 * the blanks and a diff's '+' or '-') is that literal and a ',', ')' or
 * ';': an argument of a call in source code.  A message quoted on a line
 * of its own has more than a name in it (a notebook's "RuntimeError: CUDA
 * out of memory. Tried to allocate ...\n",).
 */
static bool
fb_name_argument(const char *l, size_t n, size_t p, size_t q)
{
	size_t i = 0, b, e;

	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i < n && (l[i] == '+' || l[i] == '-'))
		i++;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i == n || (l[i] != '"' && l[i] != '\''))
		return false;
	b = i + 1;
	for (e = b; e < n && l[e] != l[i]; e++)
		if (!fb_letter(l[e]) && (l[e] < '0' || l[e] > '9') &&
		    l[e] != '_' && l[e] != '.')
			return false;
	if (e == n || p < b || q > e)
		return false;
	for (e++; e < n && (l[e] == ' ' || l[e] == '\t'); e++)
		;
	if (e == n || strchr(",);", l[e]) == NULL)
		return false;
	for (e++; e < n; e++)
		if (strchr(" \t,);", l[e]) == NULL)
			return false;
	return true;
}

/*
 * Whether the line l[0..n) is a statement of C, C++, Java or JavaScript
 * with the phrase at p in it: it ends in ';' or a block's '{' (after
 * blanks), has an '=' or a call's '(', and has no ": " before the phrase,
 * which a program's message has after its error's name ("RuntimeError:
 * CUDA out of memory", "RESOURCE_EXHAUSTED: Out of memory while ...").
 */
static bool
fb_statement(const char *l, size_t n, size_t p)
{
	size_t e = n, i;

	while (e > 0 && (l[e - 1] == ' ' || l[e - 1] == '\t' ||
	    l[e - 1] == '\r'))
		e--;
	if (e == 0 || (l[e - 1] != ';' && l[e - 1] != '{') ||
	    (memchr(l, '=', n) == NULL && memchr(l, '(', n) == NULL))
		return false;
	for (i = 0; i + 1 < p; i++)
		if (l[i] == ':' && l[i + 1] == ' ')
			return false;
	return true;
}

/* Words that name a limit of another resource than memory, which gRPC's
 * RESOURCE_EXHAUSTED also reports (https://grpc.io/docs/guides/status-codes/:
 * "Some resource has been exhausted, perhaps a per-user quota, or perhaps
 * the entire file system is out of space"; the library's own status for a
 * message larger than the configured limit,
 * https://github.com/grpc/grpc/blob/master/doc/statuscodes.md), and words
 * that keep it memory. */
static const char *const fb_other_limits[] = {
	"larger than max", "maximum configured message size", "message size",
	"quota", "rate limit", "too many requests",
};
static const char *const fb_memory_words[] = {
	"memory", "oom", "allocat", "hbm",
};

/*
 * Whether the status on the line t[ls..le) is of another resource: the
 * line or one of the next two names another limit (gRPC prints the
 * status, then "details = ..." or "Message: ..." on the next line), and
 * the line names no memory.
 */
static bool
fb_other_resource(const char *t, size_t tlen, size_t ls, size_t le)
{
	size_t e = le;
	int k;

	if (fb_any(t + ls, le - ls, fb_memory_words,
	    FB_COUNT(fb_memory_words)))
		return false;
	for (k = 0; k < 2 && e < tlen; k++) {
		const char *nl = memchr(t + e + 1, '\n', tlen - e - 1);

		e = nl != NULL ? (size_t)(nl - t) : tlen;
	}
	return fb_any(t + ls, e - ls, fb_other_limits,
	    FB_COUNT(fb_other_limits));
}

/* The calls that lock memory in RAM, and their unlocking: mlock(2) and
 * mlockall(2) fail with ENOMEM when the caller would lock more than its
 * RLIMIT_MEMLOCK allows, munlock(2) when the range is not mapped
 * (https://man7.org/linux/man-pages/man2/mlock.2.html).  So do the RDMA
 * verbs that pin their queues and buffers (ibv_create_cq, ibv_create_qp,
 * ibv_reg_mr and its variants), or find the adapter out of its own
 * resources: UCX says of the same ENOMEM "Please set max locked memory
 * (ulimit -l) to 'unlimited'" (openucx/ucx#8746), and NCCL's ibvwrap.cc
 * logs it as "Call to ibv_create_cq failed with error Cannot allocate
 * memory". */
static const char *const fb_lock_calls[] = {
	"mlock", "munlock", "ibv_create_", "ibv_reg_mr",
};

/*
 * Whether the text before the phrase, l[0..p), names a call that locks
 * memory: strerror(ENOMEM), "Cannot allocate memory", after a failed
 * mlock is the locked-memory limit, which the program warns of and goes
 * on without ("warning: failed to mlock 73728000-byte buffer (after
 * previously locking 0 bytes): Cannot allocate memory", llama.cpp's
 * llama_mlock, abetlen/llama-cpp-python#618; "mlock() failed: Cannot
 * allocate memory for attributes", manticoresoftware/manticoresearch#662),
 * not an out-of-memory failure.
 */
static bool
fb_lock_limit(const char *l, size_t p)
{
	return fb_any(l, p, fb_lock_calls, FB_COUNT(fb_lock_calls));
}

/*
 * Whether the phrase fb_phrases[c] at l[p..q) on the line l[0..n) reports
 * an out-of-memory failure or mention that no quiet case above covers.
 */
static bool
fb_counts(int c, const char *l, size_t n, size_t p, size_t q)
{
	if (rg_mention(l, n, p, q) || fb_named_term(l, n, p, q) ||
	    fb_title(l, n) ||
	    fb_code_span_name(l, n, p, q) || fb_assigned_name(l, n) ||
	    fb_name_argument(l, n, p, q) || fb_statement(l, n, p))
		return false;
	switch (fb_phrases[c].needs) {
	case FB_NEEDS_FAILURE:
		if (fb_lock_limit(l, p))
			return false;
		return fb_failure_line(l, n, false) ||
		    (p >= 2 && l[p - 2] == ':' && l[p - 1] == ' ');
	case FB_NEEDS_MEMORY:
		return fb_memory_after(l + q, n - q);
	case FB_NEEDS_NOTHING:
		break;
	}
	return true;
}

static void *
fb_create(bool jit, const struct sk_table *table, od_error *err)
{
	fb_set *s = calloc(1, sizeof *s);
	int i;

	(void)jit;
	(void)table;    /* its phrases are its own */
	if (s == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < FB_N; i++) {
		s->anchors[i].text = fb_phrases[i].text;
		s->anchors[i].caseless = fb_phrases[i].caseless;
		s->len[i] = strlen(fb_phrases[i].text);
		s->first[i] = fb_lower(fb_phrases[i].text[0]);
	}
	return s;
}

static void
fb_destroy(void *self)
{
	free(self);
}

static const ex_anchor *
fb_anchors(const void *self, size_t *n)
{
	const fb_set *s = self;

	*n = FB_N;
	return s->anchors;
}

/* Whether phrase c occurs at t[at]. */
static bool
fb_at(int c, const char *t, size_t tlen, size_t at)
{
	const fb_phrase *ph = &fb_phrases[c];
	size_t n = strlen(ph->text), k;

	if (at + n > tlen)
		return false;
	if (!ph->caseless)
		return memcmp(t + at, ph->text, n) == 0;
	for (k = 0; k < n; k++)
		if (fb_lower(t[at + k]) != fb_lower(ph->text[k]))
			return false;
	return true;
}

/* The bounds of the line around t[at]: [*ls, *le). */
static void
fb_line(const char *t, size_t tlen, size_t at, size_t *ls, size_t *le)
{
	const char *nl = at < tlen ? memchr(t + at, '\n', tlen - at) : NULL;
	size_t b = at, e = at;

	while (b > 0 && t[b - 1] != '\n' && at - b < RG_BACK)
		b--;
	if (at < tlen)
		e = nl != NULL ? (size_t)(nl - t) : tlen;
	*ls = b;
	*le = e;
}

/*
 * The first phrase that covers the hit (starts at most RG_BACK before it
 * and RG_AHEAD after it, on its line, and ends at or after it) and counts;
 * the message is its line from at most RG_BACK before the hit.
 */
static int
fb_find(void *self, const char *t, size_t tlen, size_t ht,
    const rg_skip *skip, size_t *ms)
{
	const fb_set *s = self;
	size_t ls, le, at, last;
	int c;

	if (ht >= tlen)
		return -1;
	fb_line(t, tlen, ht, &ls, &le);
	last = ht + RG_AHEAD < le ? ht + RG_AHEAD : le;
	for (at = ls; at <= last && at < le; at++)
		for (c = 0; c < FB_N; c++) {
			size_t q = at + s->len[c];

			/* The first letter first: most places start none. */
			if (fb_lower(t[at]) != s->first[c] ||
			    rg_skipped(skip, c) || q < ht || q > le ||
			    !fb_at(c, t, tlen, at) ||
			    !fb_counts(c, t + ls, le - ls, at - ls, q - ls) ||
			    (fb_phrases[c].status &&
			    fb_other_resource(t, tlen, ls, le)))
				continue;
			*ms = ls;
			return c;
		}
	return -1;
}

static bool
fb_fill(void *self, int c, const char *t, size_t tlen, size_t ms, size_t *me,
    od_event *ev)
{
	size_t e = ms, at, k;

	(void)self;
	if (c < 0 || c >= FB_N)
		return false;
	while (e < tlen && t[e] != '\n')
		e++;
	for (at = ms; at < e && !fb_at(c, t, tlen, at); at++)
		;
	if (at == e)
		return false;
	ev->kind = OD_KIND_UNRECOGNISED;
	ev->confidence = OD_CONF_LOW;
	ev->layout = OD_LAYOUT_OTHER_STACK;
	ev->fatal = fb_failure_line(t + ms, e - ms, true);
	ev->verify_hint = fb_hint(t + ms, e - ms);
	/* The phrase as the line has it. */
	rx_copy_text(ev->error, sizeof ev->error, t + at,
	    strlen(fb_phrases[c].text));
	/* The exception that raised it: just before the phrase, or the first
	 * "Name:" of the line ("RuntimeError: CUDA error(2): out of ..."). */
	rg_exception(t, at, ev->exception);
	for (k = ms; ev->exception[0] == '\0' && k < at; k++)
		if (t[k] == ':')
			rg_exception(t, k + 1, ev->exception);
	*me = e;
	return true;
}

/* Its message is its line, and a line read does not change. */
static bool
fb_follows(const void *self, int c)
{
	(void)self;
	(void)c;
	return false;
}

const ex_recogniser fb_recogniser = {
	.create = fb_create,
	.destroy = fb_destroy,
	.anchors = fb_anchors,
	.find = fb_find,
	.fill = fb_fill,
	.follows = fb_follows,
	.retry = false,
};
