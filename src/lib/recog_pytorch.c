/*
 * recog_pytorch.c: PyTorch's caching-allocator messages, read clause by
 * clause (the pt_recogniser of recogniser.h).
 *
 * A starter (the head "CUDA out of memory. Tried to allocate N", the bare
 * head, the 1.x parenthesis, the cudaMallocAsync head, the allocator's
 * warning, the NVML assertion) is searched for; from it the message is
 * read clause by clause with anchored patterns.  Clauses are matched one
 * after the other rather than by one big pattern because real messages
 * are cut off after any clause, carry optional clauses (allowed, private
 * pools, any number of process lines) and are wrapped across lines: every
 * gap between words is \s+, which also matches the '\n' of a wrapped line.
 *
 * Where the line between this grammar and a recogniser of the stacks'
 * table (rules/recognisers.yaml, recog_table.h; recogniser.h says it at
 * length) lies: a message that one pattern reads whole, its
 * named groups filling fields as they are, is a row; a message whose
 * clauses are optional, repeat or may be cut off anywhere, and whose
 * figures mean different things in different releases (the layout decides
 * what "reserved" is, and what the missing figures are derived from), is
 * a grammar here, where each step can say what it read.  A table entry is
 * data a user can add; this grammar is code.
 *
 * The messages come from PyTorch's c10/cuda/CUDACachingAllocator.cpp
 * (DeviceCachingAllocator::malloc, which raises the OutOfMemoryError, and
 * the NVML_SUCCESS assertion on its out-of-memory path) and
 * c10/cuda/CUDAMallocAsyncAllocator.cpp (mallocAsync); the layouts they
 * had over the releases are named by od_layout in core.h.
 *
 * Every clause is matched in any case: a copy that a forum or a user
 * lower-cased ("cuda out of memory. tried to allocate 30.00 mib (gpu 0;
 * 8.00 gib total capacity; ...)", bmaltais/kohya_ss#3329) has the same
 * clauses and figures, and its units are read as PyTorch's format_size
 * wrote them (pt_size).
 *
 * torch_npu, the plugin for Huawei Ascend NPUs (Ascend/pytorch), raises
 * the same message from its own torch_npu/csrc/core/npu/
 * NPUCachingAllocator.cpp (DeviceCachingAllocator::malloc), with "NPU"
 * for "CUDA" and "GPU": "NPU out of memory. Tried to allocate R (NPU d;
 * T total capacity; A already allocated; [X current active; ]F free;
 * [L allowed; ]V reserved in total by PyTorch) If reserved memory is >>
 * allocated memory try setting max_split_size_mb to avoid
 * fragmentation.", the early releases "...; F free; C cached)".  Its
 * format_size is c10's (two decimals, powers of 1024).  Those layouts
 * follow torch_npu's releases, not PyTorch's, so knowledge.c infers no
 * PyTorch release from them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recogniser.h"

/* A size as format_size() prints it: two groups, the number and the unit. */
#define SZ "(\\d+(?:\\.\\d+)?)\\s*(bytes|[KMGTP]iB)"
#define GAP "\\s+"

enum {
	/* Starters: searched for, the earliest one covering the hit wins. */
	PT_HEAD,
	PT_HEAD_BARE,
	PT_PAREN,
	PT_ASYNC_HEAD,
	PT_WARN,
	PT_NVML,
	/* Clauses: matched anchored, one after the other. */
	PT_OLD_GPU,
	PT_OLD_TOTAL,
	PT_OLD_ALLOC,
	PT_NPU_ACTIVE,
	PT_OLD_FREE,
	PT_OLD_RESERVED,
	PT_OLD_CLOSE,
	PT_NEW_GPU,
	PT_NEW_FREE,
	PT_NEW_DOT,
	PT_PROC,
	PT_ALLOWED,
	PT_SPLIT,
	PT_SPLIT_CUT,
	PT_HINT,
	PT_XPU_TAIL,
	PT_ASYNC_ALLOC,
	PT_ASYNC_REQ,
	PT_ASYNC_LIMIT,
	PT_ASYNC_FREE,
	PT_ASYNC_PTLIMIT,
	PT_COUNT
};

static const char *const pt_patterns[PT_COUNT] = {
	[PT_HEAD] =
	    "(?:(CUDA|HIP|XPU|NPU)" GAP "out" GAP "of" GAP "memory\\.\\s*)?"
	    "Tried" GAP "to" GAP "allocate" GAP
	    "(?:(more" GAP "than" GAP "1EB" GAP "memory\\.?)|" SZ ")",
	/* The bare head's period may be lost where a user pasted the
	 * exception into a sentence: the head then ends the line or a
	 * clause (",", ";", or a full-width comma, full stop or semicolon
	 * in a Chinese report: U+FF0C, U+3002, U+FF1B). */
	[PT_HEAD_BARE] = "(CUDA|HIP|XPU|NPU)" GAP "out" GAP "of" GAP "memory"
	    "(?:\\.|(?=[ \\t]*(?:[\\n,;]|$|\xef\xbc\x8c|\xe3\x80\x82|"
	    "\xef\xbc\x9b)))",
	[PT_PAREN] = "\\(GPU\\s+(\\d+);\\s*(?=" SZ GAP "total" GAP "capacity;)",
	[PT_ASYNC_HEAD] =
	    "Allocation" GAP "on" GAP "device" GAP "(\\d+)" GAP "would" GAP
	    "exceed" GAP "allowed" GAP "memory\\.(?:\\s*\\(out" GAP "of" GAP
	    "memory\\))?",
	[PT_WARN] =
	    "memory" GAP "allocation" GAP "failed" GAP "with" GAP "OOM" GAP
	    "on" GAP "device" GAP "(\\d+)" GAP "while" GAP "trying" GAP "to"
	    GAP "allocate" GAP "(\\d+)" GAP "bytes"
	    "(?:\\s*\\(free:\\s*(\\d+),\\s*total:\\s*(\\d+)\\))?",
	[PT_NVML] =
	    "NVML_SUCCESS\\s*==\\s*[^\\n]{0,160}?INTERNAL" GAP "ASSERT" GAP
	    "FAILED" GAP "at" GAP "\"?[^\\n\"]{0,300}?CUDACachingAllocator"
	    "\\.cpp\"?(?::\\d+)?",
	/* "GPU", or torch_npu's "NPU" (group 2), which only its head
	 * may be followed by (pt_body_old). */
	[PT_OLD_GPU] = "\\s*\\((?:GPU|(NPU))\\s+(\\d+);",
	[PT_OLD_TOTAL] = "\\s*" SZ GAP "total" GAP "capacity;?",
	[PT_OLD_ALLOC] = "\\s*" SZ GAP "already" GAP "allocated;?",
	/* torch_npu's active bytes (stats.active_bytes), between the
	 * allocated and the free figures; read past, not kept. */
	[PT_NPU_ACTIVE] = "\\s*" SZ GAP "current" GAP "active;?",
	[PT_OLD_FREE] = "\\s*" SZ GAP "free;?",
	/* A message cut after "reserved in total" (a paste that stops
	 * mid-clause, before "by PyTorch)") still names the figure. */
	[PT_OLD_RESERVED] =
	    "\\s*" SZ GAP "(reserved" GAP "in" GAP "total(?:" GAP "by(?:" GAP
	    "PyTorch)?)?|cached)",
	[PT_OLD_CLOSE] = "\\s*\\)",
	/*
	 * Builds that streamed the index as c10::DeviceIndex, an int8_t,
	 * printed it as a character: device 0 wrote a NUL that pastes drop
	 * ("GPU  has a total capacity", two blanks), devices 1 and up a
	 * control character (https://github.com/pytorch/pytorch/pull/123984).
	 * Such a message names no device: the index is optional here and the
	 * event's device stays unknown.
	 */
	[PT_NEW_GPU] =
	    "\\.?\\s*GPU(?:\\s+(\\d+))?\\s*[\\x00-\\x1f]?" GAP "has" GAP
	    "a" GAP "total" GAP "capac(it|t)y" GAP "of" GAP SZ,
	[PT_NEW_FREE] = GAP "of" GAP "which" GAP SZ GAP "is" GAP "free",
	[PT_NEW_DOT] = "\\.",
	[PT_PROC] =
	    "\\s*(?:Process" GAP "(\\d+)|Including" GAP "non-PyTorch" GAP
	    "memory,\\s*this" GAP "process)" GAP "has" GAP SZ GAP "memory"
	    GAP "in" GAP "use\\.",
	[PT_ALLOWED] = "\\s*" SZ GAP "allowed;",
	[PT_SPLIT] =
	    "\\s*Of" GAP "the" GAP "allocated" GAP "memory" GAP SZ GAP "is"
	    GAP "allocated" GAP "by" GAP "PyTorch,\\s*(?:with" GAP SZ GAP
	    "allocated" GAP "in" GAP "private" GAP "pools" GAP "\\(e\\.g\\.,"
	    "\\s*(?:CUDA|HIP|XPU)" GAP "Graphs\\),\\s*)?and" GAP SZ GAP "is"
	    GAP "reserved" GAP "by" GAP "PyTorch" GAP "but" GAP "unallocated"
	    "\\.?",
	[PT_SPLIT_CUT] =
	    "\\s*Of" GAP "the" GAP "allocated" GAP "memory" GAP SZ GAP "is"
	    GAP "allocated" GAP "by" GAP "PyTorch",
	[PT_HINT] =
	    "\\s*If" GAP "reserved" GAP "(?:but" GAP "unallocated" GAP ")?"
	    "memory" GAP "is" GAP "(?:large|>>\\s*allocated" GAP "memory)"
	    GAP "try" GAP "setting" GAP "(?:(PYTORCH_[A-Z]+_ALLOC_CONF="
	    "expandable_segments:True)|(max_split_size_mb))" GAP "to" GAP
	    "avoid" GAP "fragmentation\\.(?:\\s+See" GAP "documentation" GAP
	    "for" GAP "Memory" GAP "Management(?:" GAP "and" GAP
	    "PYTORCH_[A-Z]+_ALLOC_CONF|\\s*\\(https?://[^\\s)]*\\))?)?",
	[PT_XPU_TAIL] =
	    "\\s*Please" GAP "use" GAP ".empty_cache." GAP "to" GAP "release"
	    GAP "all" GAP "unoccupied" GAP "cached" GAP "memory\\.",
	[PT_ASYNC_ALLOC] = "\\s*Currently" GAP "allocated\\s*:\\s*" SZ,
	[PT_ASYNC_REQ] = "\\s*Requested\\s*:\\s*" SZ,
	[PT_ASYNC_LIMIT] = "\\s*Device" GAP "limit\\s*:\\s*" SZ,
	[PT_ASYNC_FREE] =
	    "\\s*Free" GAP "\\(according" GAP "to" GAP "CUDA\\)\\s*:\\s*" SZ,
	[PT_ASYNC_PTLIMIT] =
	    "\\s*PyTorch" GAP "limit" GAP "\\(set" GAP "by" GAP
	    "user-supplied" GAP "memory" GAP "fraction\\)\\s*:\\s*" SZ,
};

/* The starters, in order of preference when two start at the same byte. */
static const int pt_starters[] = {
	PT_HEAD, PT_ASYNC_HEAD, PT_WARN, PT_NVML, PT_PAREN, PT_HEAD_BARE,
};
#define PT_NSTARTERS ((int)(sizeof pt_starters / sizeof pt_starters[0]))

_Static_assert(PT_NSTARTERS <= RG_CANDIDATES_MAX,
    "a skip mask names every starter");

/*
 * The anchors: fixed strings that every message read here contains.  A
 * message that contains none of them is never looked at, so each starter
 * must have one here.
 */
static const ex_anchor pt_anchors_list[] = {
	/* CUDA/HIP/XPU/NPU out of memory, "(out of memory)" */
	{ .text = "out of memory" },
	/* headless messages */
	{ .text = "Tried to allocate" },
	/* capacity, capacty, the parenthesis alone */
	{ .text = "total capacit" },
	/* cudaMallocAsync */
	{ .text = "would exceed allowed memory" },
	/* the allocator's warning */
	{ .text = "allocation failed with OOM" },
	/* the NVML assertion on the out-of-memory path */
	{ .text = "NVML_SUCCESS" },
};

typedef struct {
	rx_code *re[PT_COUNT];
	rx_match *m;
	/* The starters' searches per numbered text (rg_cover_memo), what
	 * holds in longer texts (its pre), and the text of the finds now:
	 * its slot and number. */
	rg_memo memo[RG_TEXTS][PT_NSTARTERS];
	rg_memo pre[PT_NSTARTERS];
	rg_prefix prefix[PT_NSTARTERS];
	int slot;
	rg_text tx;
} pt_ctx;

static void
pt_destroy(void *self)
{
	pt_ctx *p = self;
	int i;

	if (p == NULL)
		return;
	for (i = 0; i < PT_COUNT; i++)
		rx_code_free(p->re[i]);
	rx_match_free(p->m);
	free(p);
}

static void *
pt_create(bool jit, const struct sk_table *table, od_error *err)
{
	pt_ctx *p = calloc(1, sizeof *p);
	int i;

	(void)table;    /* the grammar is its own */
	if (p == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < PT_NSTARTERS; i++)
		rg_prefix_init(&p->prefix[i]);
	for (i = 0; i < PT_COUNT; i++) {
		/* Starters are searched for with an offset limit. */
		p->re[i] = rx_compile(pt_patterns[i], RX_CASELESS |
		    (i >= PT_HEAD && i <= PT_NVML ? RX_OFFSET_LIMIT : 0u), jit,
		    "recog_pytorch.c", (uint64_t)i, err);
		if (p->re[i] == NULL) {
			pt_destroy(p);
			return NULL;
		}
	}
	if ((p->m = rx_match_new(err)) == NULL) {
		pt_destroy(p);
		return NULL;
	}
	return p;
}

static const ex_anchor *
pt_anchors(const void *self, size_t *n)
{
	(void)self;
	*n = sizeof pt_anchors_list / sizeof pt_anchors_list[0];
	return pt_anchors_list;
}

/* Matches clause re anchored at t[at]; the groups are then read with
 * rx_group, rx_int and pt_size. */
static bool
pt_at(pt_ctx *p, int re, const char *t, size_t tlen, size_t at)
{
	return rx_at(p->m, p->re[re], t, tlen, at);
}

static size_t
pt_end(const pt_ctx *p)
{
	return rx_end(p->m);
}

/* The size in groups g (number) and g + 1 (unit); OD_UNKNOWN if absent or
 * too large (the NVML sentinel 17179869184.00 GiB lands here).  The unit,
 * matched in any case, is spelled as format_size() writes it ("bytes",
 * "KiB" ... "PiB") before it is parsed: the grammar reads no other. */
static int64_t
pt_size(const pt_ctx *p, const char *t, int g)
{
	size_t ns, nl, us, ul, i;
	char unit[8];
	int64_t v;

	if (!rx_group(p->m, g, &ns, &nl) || !rx_group(p->m, g + 1, &us, &ul) ||
	    ul >= sizeof unit)
		return OD_UNKNOWN;
	for (i = 0; i < ul; i++)
		unit[i] = (char)tolower((unsigned char)t[us + i]);
	if (ul == 3 && unit[1] == 'i' && unit[2] == 'b') {
		unit[0] = (char)toupper((unsigned char)unit[0]);
		unit[2] = 'B';
	}
	if (!od_size_parse(t + ns, nl, unit, ul, &v))
		return OD_UNKNOWN;
	return v;
}

/* The first letter of a match, upper-cased: "HIP" and "hip" alike. */
static char
pt_letter(const char *t, size_t at)
{
	return (char)toupper((unsigned char)t[at]);
}

/*
 * Whether the report at ms follows Intel Extension for PyTorch's refusal of
 * one block above 4 GiB on a GPU without 2D block arrays, "Current platform
 * can NOT allocate memory block with size larger than 4GB! Tried to
 * allocate ..." (CachingDeviceAllocator::malloc in csrc/gpu/runtime/
 * CachingDeviceAllocator.cpp of intel/intel-extension-for-pytorch): the
 * body is that of its "XPU out of memory" message, so the event is XPU's.
 */
static bool
pt_ipex_4gb_limit(const char *t, size_t ms)
{
	static const char head[] = "Current platform can NOT allocate memory "
	    "block with size larger than 4GB!";
	size_t n = sizeof head - 1, e = ms;

	while (e > 0 && (t[e - 1] == ' ' || t[e - 1] == '\t'))
		e--;
	return e >= n && memcmp(t + e - n, head, n) == 0;
}

/* Reads any number of per-process clauses from t at *at. */
static void
pt_procs(pt_ctx *p, const char *t, size_t tlen, size_t *at, od_memory *m)
{
	while (pt_at(p, PT_PROC, t, tlen, *at)) {
		size_t s, n;
		int64_t v = pt_size(p, t, 2);

		if (rx_group(p->m, 1, &s, &n)) {
			if (m->nprocs < OD_PROCS_MAX) {
				m->procs[m->nprocs].pid = rx_int(p->m, t, 1, -1);
				m->procs[m->nprocs].bytes = v;
				m->nprocs++;
			} else {
				m->procs_dropped++;
			}
		} else {
			m->process_in_use = v;
		}
		*at = pt_end(p);
	}
}

/* The hint and the XPU tail that may follow the body. */
static void
pt_tail(pt_ctx *p, const char *t, size_t tlen, size_t *at, od_event *ev)
{
	size_t s, n;

	if (pt_at(p, PT_HINT, t, tlen, *at)) {
		if (rx_group(p->m, 1, &s, &n))
			ev->hint = OD_HINT_EXPANDABLE;
		else
			ev->hint = OD_HINT_MAX_SPLIT;
		*at = pt_end(p);
	}
	if (pt_at(p, PT_XPU_TAIL, t, tlen, *at))
		*at = pt_end(p);
}

/* The 1.x body: "(GPU 0; T total capacity; A already allocated; ...)". */
static bool
pt_body_old(pt_ctx *p, const char *t, size_t tlen, size_t *at, od_event *ev)
{
	od_memory *m = &ev->mem;
	size_t s, n;

	if (!pt_at(p, PT_OLD_GPU, t, tlen, *at))
		return false;
	/* "(NPU d;" after torch_npu's head only, "(GPU d;" after any other. */
	if (rx_group(p->m, 1, &s, &n) != (ev->kind == OD_KIND_NPU))
		return false;
	ev->device = (int)rx_int(p->m, t, 2, -1);
	*at = pt_end(p);
	ev->layout = OD_LAYOUT_RESERVED_TOTAL;
	if (!pt_at(p, PT_OLD_TOTAL, t, tlen, *at))
		return true;
	m->total = pt_size(p, t, 1);
	*at = pt_end(p);
	if (!pt_at(p, PT_OLD_ALLOC, t, tlen, *at))
		return true;
	m->allocated = pt_size(p, t, 1);
	*at = pt_end(p);
	if (ev->kind == OD_KIND_NPU && pt_at(p, PT_NPU_ACTIVE, t, tlen, *at))
		*at = pt_end(p);
	if (pt_at(p, PT_OLD_FREE, t, tlen, *at)) {
		m->free = pt_size(p, t, 1);
		*at = pt_end(p);
	}
	if (pt_at(p, PT_ALLOWED, t, tlen, *at)) {
		m->allowed = pt_size(p, t, 1);
		*at = pt_end(p);
	}
	if (pt_at(p, PT_OLD_RESERVED, t, tlen, *at)) {
		if (rx_group(p->m, 3, &s, &n) && pt_letter(t, s) == 'C') {
			ev->layout = OD_LAYOUT_CACHED;
			m->reserved_unallocated = pt_size(p, t, 1);
		} else {
			m->reserved = pt_size(p, t, 1);
		}
		*at = pt_end(p);
		if (pt_at(p, PT_OLD_CLOSE, t, tlen, *at))
			*at = pt_end(p);
	}
	pt_tail(p, t, tlen, at, ev);
	return true;
}

/* The 2.x body: ". GPU 0 has a total capacity of T of which F is free. ..." */
static bool
pt_body_new(pt_ctx *p, const char *t, size_t tlen, size_t *at, od_event *ev)
{
	od_memory *m = &ev->mem;
	size_t s, n;

	if (!pt_at(p, PT_NEW_GPU, t, tlen, *at))
		return false;
	ev->device = (int)rx_int(p->m, t, 1, -1);
	ev->layout = rx_group(p->m, 2, &s, &n) && n == 1 ?
	    OD_LAYOUT_CAPACTY : OD_LAYOUT_CAPACITY;
	m->total = pt_size(p, t, 3);
	*at = pt_end(p);
	if (pt_at(p, PT_NEW_FREE, t, tlen, *at)) {
		m->free = pt_size(p, t, 1);
		*at = pt_end(p);
	}
	if (!pt_at(p, PT_NEW_DOT, t, tlen, *at))
		return true;
	*at = pt_end(p);
	pt_procs(p, t, tlen, at, m);
	if (pt_at(p, PT_ALLOWED, t, tlen, *at)) {
		m->allowed = pt_size(p, t, 1);
		*at = pt_end(p);
	}
	if (pt_at(p, PT_SPLIT, t, tlen, *at)) {
		m->allocated = pt_size(p, t, 1);
		m->private_pools = pt_size(p, t, 3);
		m->reserved_unallocated = pt_size(p, t, 5);
		*at = pt_end(p);
		pt_tail(p, t, tlen, at, ev);
	} else if (pt_at(p, PT_SPLIT_CUT, t, tlen, *at)) {
		m->allocated = pt_size(p, t, 1);
		*at = pt_end(p);
	}
	return true;
}

/* The cudaMallocAsync block, one field per line (or all on one line). */
static void
pt_body_async(pt_ctx *p, const char *t, size_t tlen, size_t *at,
    od_event *ev)
{
	static const int fields[] = {
		PT_ASYNC_ALLOC, PT_ASYNC_REQ, PT_ASYNC_LIMIT, PT_ASYNC_FREE,
		PT_ASYNC_PTLIMIT,
	};
	od_memory *m = &ev->mem;
	int64_t *dest[] = {
		&m->allocated, &m->requested, &m->total, &m->free, &m->allowed,
	};
	size_t i;

	for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (!pt_at(p, fields[i], t, tlen, *at))
			break;
		*dest[i] = pt_size(p, t, 1);
		*at = pt_end(p);
	}
}

/*
 * Fills in what follows from the printed figures: reserved is allocated
 * plus reserved-but-unallocated ("cached" in 1.0 to 1.3), and the memory
 * outside the framework is what the process uses beyond what PyTorch
 * reserved.
 */
static void
pt_derive(od_event *ev)
{
	od_memory *m = &ev->mem;

	switch (ev->layout) {
	case OD_LAYOUT_CACHED:
		/* "cached" is reserved - allocated in the 1.0 era. */
		if (m->allocated >= 0 && m->reserved_unallocated >= 0)
			m->reserved = m->allocated + m->reserved_unallocated;
		break;
	case OD_LAYOUT_RESERVED_TOTAL:
		if (m->reserved >= 0 && m->allocated >= 0 &&
		    m->reserved >= m->allocated)
			m->reserved_unallocated = m->reserved - m->allocated;
		break;
	case OD_LAYOUT_CAPACTY:
	case OD_LAYOUT_CAPACITY:
		if (m->allocated >= 0 && m->reserved_unallocated >= 0)
			m->reserved = m->allocated + m->reserved_unallocated;
		break;
	default:
		break;
	}
	if (m->process_in_use >= 0 && m->reserved >= 0 &&
	    m->process_in_use >= m->reserved)
		m->non_framework = m->process_in_use - m->reserved;
}

/* The starters that match nowhere in t (ex_recogniser.absent), as
 * sk_absent finds them. */
static bool
pt_absent(void *self, const char *t, size_t tlen, rg_skip *none)
{
	pt_ctx *p = self;
	bool all = true;
	int i;

	for (i = 0; i < PT_NSTARTERS; i++) {
		if (!rx_find(p->m, p->re[pt_starters[i]], t, tlen, 0) &&
		    rx_nomatch(p->m)) {
			none->w[i / 64] |= UINT64_C(1) << (i % 64);
			continue;
		}
		all = false;
	}
	return all;
}

/* The earliest starter that covers the hit; of two at the same byte, the
 * one first in pt_starters. */
static int
pt_find(void *self, const char *t, size_t tlen, size_t ht,
    const rg_skip *skip, size_t *ms)
{
	pt_ctx *p = self;
	int best = -1, i;
	size_t s;
	bool limited;

	*ms = SIZE_MAX;
	for (i = 0; i < PT_NSTARTERS; i++) {
		if (rg_skipped(skip, i))
			continue;
		/* A search stopped at a limit finds nothing, as rg_cover's. */
		if (rg_cover_memo(p->m, p->re[pt_starters[i]], &p->tx,
		    &p->memo[p->slot][i], &p->pre[i], &p->prefix[i], t, tlen,
		    ht, NULL, &s, &limited) && s < *ms) {
			*ms = s;
			best = i;
		}
	}
	return best;
}

/*
 * Reads the message that starts at ms with starter c.  False when what
 * starts there is no report after all.
 */
static bool
pt_fill(void *self, int c, const char *t, size_t tlen, size_t ms, size_t *me,
    od_event *ev)
{
	pt_ctx *p = self;
	int starter;
	size_t at, gs, gn;
	bool head, exa;

	if (c < 0 || c >= PT_NSTARTERS)
		return false;
	starter = pt_starters[c];
	/* Match the starter again: the search's match is gone. */
	if (!pt_at(p, starter, t, tlen, ms))
		return false;
	at = pt_end(p);
	ev->fatal = true;
	switch (starter) {
	case PT_HEAD:
		head = rx_group(p->m, 1, &gs, &gn);
		if (head && pt_letter(t, gs) == 'H')
			ev->kind = OD_KIND_HIP;
		else if (head && pt_letter(t, gs) == 'X')
			ev->kind = OD_KIND_XPU;
		else if (head && pt_letter(t, gs) == 'N')
			ev->kind = OD_KIND_NPU;
		else if (!head && pt_ipex_4gb_limit(t, ms)) {
			/* The rule xpu_block_limit reads the limit here. */
			ev->kind = OD_KIND_XPU;
			snprintf(ev->error, sizeof ev->error,
			    "block larger than 4GB");
		}
		exa = rx_group(p->m, 2, &gs, &gn);
		ev->mem.requested = pt_size(p, t, 3);
		ev->layout = OD_LAYOUT_HEAD_ONLY;
		/* "Tried to allocate N" alone is not enough: MPS and others
		 * say it too.  It needs the head or a body. */
		if (!exa && !pt_body_old(p, t, tlen, &at, ev) &&
		    !pt_body_new(p, t, tlen, &at, ev) && !head)
			return false;
		break;
	case PT_HEAD_BARE: {
		/* The rest of the line: "Tried to allocate XXX MiB" there is
		 * a template that a guide shows (rg_placeholder). */
		const char *nl = memchr(t + at, '\n', tlen - at);
		size_t rest = nl != NULL ? (size_t)(nl - (t + at)) : tlen - at;

		rg_exception(t, ms, ev->exception);
		if (ev->exception[0] == '\0' || rg_placeholder(t + at, rest))
			return false;
		if (pt_letter(t, ms) == 'H')
			ev->kind = OD_KIND_HIP;
		else if (pt_letter(t, ms) == 'X')
			ev->kind = OD_KIND_XPU;
		else if (pt_letter(t, ms) == 'N')
			ev->kind = OD_KIND_NPU;
		ev->layout = OD_LAYOUT_HEAD_ONLY;
		break;
	}
	case PT_PAREN:
		at = ms;
		if (!pt_body_old(p, t, tlen, &at, ev) ||
		    ev->mem.allocated == OD_UNKNOWN)
			return false;
		break;
	case PT_ASYNC_HEAD:
		ev->device = (int)rx_int(p->m, t, 1, -1);
		ev->layout = OD_LAYOUT_ASYNC;
		pt_body_async(p, t, tlen, &at, ev);
		break;
	case PT_WARN:
		ev->device = (int)rx_int(p->m, t, 1, -1);
		ev->mem.requested = rx_int(p->m, t, 2, OD_UNKNOWN);
		ev->mem.free = rx_int(p->m, t, 3, OD_UNKNOWN);
		ev->mem.total = rx_int(p->m, t, 4, OD_UNKNOWN);
		ev->layout = OD_LAYOUT_WARNING;
		ev->fatal = false;
		break;
	case PT_NVML:
		ev->layout = OD_LAYOUT_NVML_ASSERT;
		break;
	default:
		return false;
	}
	pt_derive(ev);
	*me = at;
	return true;
}

/* The message ends where its clauses end: nothing is read after it. */
static bool
pt_follows(const void *self, int c)
{
	(void)self;
	(void)c;
	return false;
}

/* The text of the finds that follow (ex_recogniser.text). */
static void
pt_text(void *self, int slot, const rg_text *tx)
{
	pt_ctx *p = self;
	bool ok = slot >= 0 && slot < RG_TEXTS;

	p->slot = ok ? slot : 0;
	p->tx = ok ? *tx : (rg_text){ 0 };
}

/*
 * The grammar is tried once per text: when the earliest starter gives no
 * report, the other starters are not searched again (retry false).
 */
const ex_recogniser pt_recogniser = {
	.create = pt_create,
	.destroy = pt_destroy,
	.anchors = pt_anchors,
	.find = pt_find,
	.fill = pt_fill,
	.follows = pt_follows,
	.retry = false,
	.absent = pt_absent,
	.text = pt_text,
};
