/*
 * prefix.c: reading the prefixes in front of a line (prefix.h).
 *
 * A launcher or logger may colour its prefix (`ESC [32m[rank3]:ESC [0m`):
 * the escape sequences are left out of a copy of the line's start, the
 * prefixes are read there, and their length is given back in the line's
 * own bytes.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "hash.h"
#include "prefix.h"
#include "regex.h"

/* One layer of prefix; group 1 is a timestamp, groups 2 to 6 and 10 a
 * rank, groups 7 and 8 kubectl's pod and container, group 9 pdsh's
 * host. */
static const char px_pattern[] =
    "(?:(\\d{4}-\\d\\d-\\d\\d[T ]\\d\\d:\\d\\d:\\d\\d(?:[.,]\\d+)?"
    "(?:Z|[+-]\\d\\d:?\\d\\d)?)(?:\\s+(?:stdout|stderr)\\s+[FP])?"
    "\\s+(?:-\\s+)?"
    "|\\[rank(\\d{1,7})\\]:\\s?"
    "|\\[default(\\d{1,7})\\]:\\s?"
    "|\\[\\d{1,7},(\\d{1,7})\\]<(?:stdout|stderr)>:\\s?"
    "|[ \\t]{0,4}(\\d{1,5}):[ \\t]"
    /* torch_xla's xla_dist on a TPU Pod: "CLIENTIP [ORDINAL] " after the
     * time (DistributedExecutor._get_logger in torch_xla/distributed/
     * xla_dist.py, '%(asctime)-12s %(clientip)s [%(ordinal)s]
     * %(message)s'), the ordinal the worker's XRT_SHARD_ORDINAL of
     * XRT_SHARD_WORLD_SIZE workers (_env_vars_cmd). */
    "|(?:\\d{1,3}\\.){3}\\d{1,3}[ \\t]+\\[(\\d{1,7})\\][ \\t]+"
    "|>[ \\t]"
    /* Markdown's inline code opened at the line's start ("`2020-10-22
     * 02:48:58 10.128.0.33 [3] ..." pasted into an issue), not a fence. */
    "|`(?!`)"
    /* kubectl logs --prefix: "[pod/NAME/CONTAINER] " (kubectl
     * pkg/cmd/logs/logs.go, addPrefixIfNeeded). */
    "|\\[pod/([a-z0-9][a-z0-9.-]{0,252})/([a-z0-9][a-z0-9-]{0,62})?\\][ \\t]"
    /* pdsh (and DeepSpeed's pdsh launcher) "HOST: ": a lowercase host
     * name with a digit in it, so that "RuntimeError: " and
     * "torch.OutOfMemoryError: " are not read as hosts, and not
     * Slurm's "slurmstepd-NODE: ", a daemon's name. */
    "|((?=[a-z0-9.-]{0,253}\\d)(?!slurm)[a-z][a-z0-9-]{0,62}(?:\\.[a-z0-9-]{1,63}){0,4})"
    ":[ \\t]"
    "|[A-Za-z0-9_.-]+[ \\t]+\\|[ \\t]"
    /* vLLM: "(VllmWorkerProcess pid=1234) " and its logger's
     * "ERROR 04-27 09:07:04 [engine.py:160] "; V1's workers name their
     * rank, "(VllmWorker rank=1 pid=2978) " (WorkerProc.__init__ in
     * vllm/v1/executor/multiproc_executor.py, _add_prefix(sys.stdout,
     * f"VllmWorker rank={rank}", pid)). */
    "|\\([A-Za-z_][\\w.]*(?:[ \\t]+rank=(\\d{1,7}))?[ \\t]+pid=\\d{1,9}\\)"
    "[ \\t]"
    "|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ \\t]+\\d\\d-\\d\\d[ \\t]+"
    "\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?[ \\t]+\\[[^\\]\\n]{1,80}\\][ \\t]"
    /* glog and absl: "E0325 20:57:27.620000 2606 file.py:123] " */
    "|[IWEF]\\d{4}[ \\t]+\\d\\d:\\d\\d:\\d\\d\\.\\d+[ \\t]+\\d+[ \\t]+"
    "[^\\]\\n]{1,120}\\][ \\t])";

/* The groups of px_pattern that hold a rank. */
static const int px_rank_groups[] = { 2, 3, 4, 5, 6, 10 };

/* Prefixes stack (a runtime's timestamp, then [rank3]:, ...): at most
 * this many layers are read. */
#define PX_LAYERS_MAX 6

/* The bytes of a coloured line's start that are read for prefixes,
 * escape sequences left out. */
#define PX_CLEAN_MAX 512

/*
 * Lines of at most PX_MEMO_LINE bytes whose prefixes were read, kept by
 * their bytes (PX_MEMO slots, one per hash): what px_strip gives for a
 * line depends on its bytes alone, and a dense input asks about each line
 * three times (as the hit's line and as the new last line of each of the
 * extractor's two joins, extract.c) and about a repeated line again and
 * again.  A slot holds what the line gave from an empty timestamp: its
 * length, the rank (when a prefix named one), the timestamp and the
 * labels.  Asking again costs a hash and a compare of the line, not the
 * pattern's search at each layer (about 800 instructions for a line
 * without a prefix).
 */
#define PX_MEMO 64
#define PX_MEMO_LINE 256

typedef struct {
	bool used, rank_set;
	int rank;
	uint64_t hash;
	size_t len, at;
	char ts[OD_TIMESTAMP_MAX];
	od_labels labels;
	char line[PX_MEMO_LINE];
} px_memo;

struct px_ctx {
	rx_code *re;
	rx_match *m;
	od_labels labels;       /* those of the last px_strip_read's line */
	/* Those of the last px_strip's line: labels, or its memo slot's. */
	const od_labels *last_labels;
	char clean[PX_CLEAN_MAX];
	size_t raw_of[PX_CLEAN_MAX + 1];        /* clean offset -> line's */
	px_memo memo[PX_MEMO];
};

px_ctx *
px_new(bool jit, od_error *err)
{
	px_ctx *p = calloc(1, sizeof *p);

	if (p == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	p->re = rx_compile(px_pattern, 0, jit, "prefix.c", 0, err);
	if (p->re == NULL || (p->m = rx_match_new(err)) == NULL) {
		px_free(p);
		return NULL;
	}
	return p;
}

void
px_free(px_ctx *p)
{
	if (p == NULL)
		return;
	rx_code_free(p->re);
	rx_match_free(p->m);
	free(p);
}

/* Reads the layers of prefix at the start of line[0..len). */
static size_t
px_layers(px_ctx *p, const char *line, size_t len, int *rank, char *ts)
{
	size_t at = 0;
	int layers;
	bool srun_seen = false;

	for (layers = 0; layers < PX_LAYERS_MAX && at < len; layers++) {
		size_t s, n, k;
		int g;

		if (!rx_at(p->m, p->re, line, len, at) || rx_end(p->m) == at)
			break;
		if (ts != NULL && ts[0] == '\0')
			(void)rx_copy(p->m, line, 1, ts, OD_TIMESTAMP_MAX);
		if (p->labels.pod[0] == '\0')
			(void)rx_copy(p->m, line, 7, p->labels.pod, OD_LABEL_MAX);
		if (p->labels.container[0] == '\0')
			(void)rx_copy(p->m, line, 8, p->labels.container,
			    OD_LABEL_MAX);
		if (p->labels.host[0] == '\0')
			(void)rx_copy(p->m, line, 9, p->labels.host, OD_LABEL_MAX);
		for (k = 0; k < sizeof px_rank_groups / sizeof px_rank_groups[0];
		    k++) {
			g = px_rank_groups[k];
			if (!rx_group(p->m, g, &s, &n))
				continue;
			/* "12: " is a rank only once, at the outside. */
			if (g == 5 && srun_seen)
				break;
			if (g == 5)
				srun_seen = true;
			if (rank != NULL)
				*rank = (int)rx_int(p->m, line, g, -1);
		}
		at = rx_end(p->m);
	}
	return at;
}

const od_labels *
px_labels(const px_ctx *p)
{
	return p->last_labels != NULL ? p->last_labels : &p->labels;
}

/* Reads the prefixes of line[0..len) (px_strip, without the memo). */
static size_t
px_strip_read(px_ctx *p, const char *line, size_t len, int *rank, char *ts)
{
	size_t i = 0, c = 0, at;

	memset(&p->labels, 0, sizeof p->labels);
	if (memchr(line, 0x1b, len < PX_CLEAN_MAX ? len : PX_CLEAN_MAX) == NULL)
		return px_layers(p, line, len, rank, ts);
	while (i < len && c < PX_CLEAN_MAX) {
		size_t e = ln_escape(line + i, len - i);

		if (e > 0) {
			i += e;
			continue;
		}
		p->raw_of[c] = i;
		p->clean[c++] = line[i++];
	}
	p->raw_of[c] = i;
	at = px_layers(p, p->clean, c, rank, ts);
	/* No prefix: the line starts where it did; else just after the last
	 * prefix and the escapes after it. */
	return at == 0 ? 0 : p->raw_of[at];
}

/* A hash of the line's bytes, eight at a time, for its memo slot. */
static uint64_t
px_hash(const char *line, size_t len)
{
	uint64_t h = od_hash_bytes(OD_HASH_SEED ^ len, line, len);

	return h ^ (h >> 32);
}

size_t
px_strip(px_ctx *p, const char *line, size_t len, int *rank, char *ts)
{
	px_memo *m;
	uint64_t h;
	int r = INT_MIN;

	if (len > PX_MEMO_LINE) {
		p->last_labels = &p->labels;
		return px_strip_read(p, line, len, rank, ts);
	}
	h = px_hash(line, len);
	m = &p->memo[h % PX_MEMO];
	if (!m->used || m->hash != h || m->len != len ||
	    memcmp(m->line, line, len) != 0) {
		/* Read from an empty timestamp and no rank, and kept. */
		m->used = false;
		m->ts[0] = '\0';
		m->at = px_strip_read(p, line, len, &r, m->ts);
		m->rank_set = r != INT_MIN;
		m->rank = r;
		m->labels = p->labels;
		memcpy(m->line, line, len);
		m->len = len;
		m->hash = h;
		m->used = true;
	}
	/* Valid until the next px_strip, the only writer of the slot. */
	p->last_labels = &m->labels;
	/* What px_layers would have written: the rank when a prefix named
	 * one, and the timestamp (its bytes and the NUL) only into an empty
	 * one. */
	if (m->rank_set && rank != NULL)
		*rank = m->rank;
	if (ts != NULL && ts[0] == '\0' && m->ts[0] != '\0')
		memcpy(ts, m->ts, strlen(m->ts) + 1);
	return m->at;
}
