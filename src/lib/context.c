/*
 * context.c: the facts around an event that the rules need.
 *
 * Two sources.  Settings lines anywhere before the event (a config dump, an
 * "export PYTORCH_CUDA_ALLOC_CONF=...", a metric line with the memory in
 * use) are found by the scanner's prefilter with the anchors below, and
 * each is read when it is seen into a running od_logctx; the event gets a
 * copy of it.  The text just before the event (the history the scanner
 * keeps, up to 32 KiB) gives the traceback's frames, the phase they show
 * and the last step of a progress bar or a trainer's log.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "context.h"

enum {
	CX_ALLOC, CX_XLA, CX_TF, CX_BATCH, CX_ACCUM, CX_SEQ, CX_PREC, CX_CKPT,
	CX_MEM, CX_XID, CX_MEMCG,
	/* Patterns read from the text before an event. */
	CX_FRAME, CX_STEP,
	CX_COUNT
};

#define KV "[\"']?\\]?\\s*[=:]\\s*[\"']?"

static const char *const cx_patterns[CX_COUNT] = {
	[CX_ALLOC] = "(?<!setting )PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF" KV
	    "([A-Za-z_]+:[A-Za-z0-9_.]+(?:,[A-Za-z_]+:[A-Za-z0-9_.]+)*)"
	    "(?! to avoid)",
	[CX_XLA] = "(XLA_PYTHON_CLIENT_[A-Z_]+)" KV "([\\w.]+)",
	[CX_TF] = "(TF_GPU_ALLOCATOR|TF_FORCE_GPU_ALLOW_GROWTH|allow_growth)"
	    KV "([\\w.]+)",
	[CX_BATCH] = "(?i)(?<![a-z])(?<!eval_)(?<!per_device_eval_)"
	    "(?:per_device_train_batch_size|train_micro_batch_size_per_gpu|"
	    "micro_batch_size|train_batch_size|batch[_ -]size)" KV "(\\d{1,9})",
	[CX_ACCUM] = "gradient_accumulation_steps" KV "(\\d{1,9})",
	[CX_SEQ] = "(?<![a-z_])(?:max_seq_length|max_seq_len|seq_length|seq_len|"
	    "sequence_length|max_length|block_size|max_model_len)" KV
	    "(\\d{1,9})",
	[CX_PREC] = "(?<![A-Za-z])(bf16|fp16)" KV "(?:True|true|1)\\b|"
	    "mixed_precision" KV "(bf16|fp16|no)|torch_dtype" KV
	    "(?:torch\\.)?(bfloat16|float16|float32)|precision" KV
	    "(bf16|16|32)(?:-mixed|-true)?\\b",
	[CX_CKPT] = "(?:gradient|activation)_checkpointing" KV
	    "(True|true|1|False|false|0)\\b",
	[CX_MEM] = "(?:max_memory_allocated|memory_allocated|max_memory_reserved"
	    "|memory_reserved|gpu_mem|mem_gb|gpu_mem_gb|max_mem)" KV
	    "([\\d.]+)\\s*(GiB|GB|MiB|MB)?",
	[CX_XID] = "NVRM: Xid \\([^)\\n]*\\): (\\d{1,4})|(uncorrectable ECC error|"
	    "Uncorrectable ECC error|ECC page retirement)",
	[CX_MEMCG] = "memory: usage (\\d{1,15})kB, limit (\\d{1,15})kB",
	[CX_FRAME] = "File \"([^\"\\n]{1,300})\", line (\\d{1,9}), in "
	    "([^\\s\\n]{1,100})",
	[CX_STEP] = "\\|\\s*(\\d{1,9})/\\d{1,9} \\[|[\"']?(?:global_)?step"
	    "[\"']?\\s*[:=]\\s*(\\d{1,9})|\\b[Ss]tep\\s+(\\d{1,9})\\b|"
	    "\\b[Ii]ter(?:ation)?\\s*[:=]?\\s*(\\d{1,9})\\b",
};

/*
 * The anchors of settings lines.  Those marked true occur on every metric
 * line of some logs (a "gpu_mem_gb" column, a "seq_len" field): the
 * scanner reads such a line at most once in CX_SAMPLE_BYTES of input,
 * which keeps the first value, one within 64 KiB of the event, and the
 * trend of memory readings, at a cost that does not grow with their count.
 */
static const cx_anchor cx_anchor_list[] = {
	{ "PYTORCH_CUDA_ALLOC_CONF", CX_ALLOC, false },
	{ "PYTORCH_HIP_ALLOC_CONF", CX_ALLOC, false },
	{ "PYTORCH_ALLOC_CONF", CX_ALLOC, false },
	{ "XLA_PYTHON_CLIENT_", CX_XLA, false },
	{ "TF_GPU_ALLOCATOR", CX_TF, false },
	{ "TF_FORCE_GPU_ALLOW_GROWTH", CX_TF, false },
	{ "batch_size", CX_BATCH, true },
	{ "batch size", CX_BATCH, true },
	{ "gradient_accumulation_steps", CX_ACCUM, true },
	{ "seq_len", CX_SEQ, true },
	{ "seq_length", CX_SEQ, true },
	{ "max_length", CX_SEQ, true },
	{ "block_size", CX_SEQ, true },
	{ "max_model_len", CX_SEQ, true },
	{ "bf16", CX_PREC, true },
	{ "fp16", CX_PREC, true },
	{ "mixed_precision", CX_PREC, true },
	{ "torch_dtype", CX_PREC, true },
	{ "_checkpointing", CX_CKPT, true },
	{ "memory_allocated", CX_MEM, true },
	{ "memory_reserved", CX_MEM, true },
	{ "gpu_mem", CX_MEM, true },
	{ "mem_gb", CX_MEM, true },
	{ "NVRM: Xid", CX_XID, false },
	{ "memory: usage", CX_MEMCG, false },
	{ "ncorrectable ECC", CX_XID, false },
	{ "ECC page retirement", CX_XID, false },
	{ NULL, 0, false },
};

struct cx_ctx {
	pcre2_code *re[CX_COUNT];
	pcre2_match_data *md;
	int rc;                 /* the last match's count of set pairs */
	pcre2_match_context *mc;
};

cx_ctx *
cx_new(bool jit, od_error *err)
{
	cx_ctx *c = calloc(1, sizeof *c);
	int i;

	if (c == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < CX_COUNT; i++) {
		int code;
		PCRE2_SIZE off;

		c->re[i] = pcre2_compile((PCRE2_SPTR)cx_patterns[i],
		    PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
		if (c->re[i] == NULL) {
			PCRE2_UCHAR msg[128];

			pcre2_get_error_message(code, msg, sizeof msg);
			od_error_set(err, "context.c", (uint64_t)i + 1,
			    (uint64_t)off + 1, "internal pattern: %s", msg);
			cx_free(c);
			return NULL;
		}
		if (jit)
			(void)pcre2_jit_compile(c->re[i], PCRE2_JIT_COMPLETE);
	}
	c->md = pcre2_match_data_create(16, NULL);
	c->mc = pcre2_match_context_create(NULL);
	if (c->md == NULL || c->mc == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		cx_free(c);
		return NULL;
	}
	pcre2_set_match_limit(c->mc, 100000);
	return c;
}

void
cx_free(cx_ctx *c)
{
	int i;

	if (c == NULL)
		return;
	for (i = 0; i < CX_COUNT; i++)
		pcre2_code_free(c->re[i]);
	pcre2_match_data_free(c->md);
	pcre2_match_context_free(c->mc);
	free(c);
}

const cx_anchor *
cx_anchors(void)
{
	return cx_anchor_list;
}

void
cx_reset(od_logctx *st)
{
	memset(st, 0, sizeof *st);
	st->batch_size = st->accum_steps = st->seq_len = -1;
	st->grad_ckpt = -1;
	st->mem_first = st->mem_last = st->mem_max = -1;
	st->xid = -1;
	st->memcg_usage = st->memcg_limit = -1;
}

static bool
cx_match(cx_ctx *c, int re, const char *s, size_t len, size_t at)
{
	c->rc = pcre2_match(c->re[re], (PCRE2_SPTR)s, len, at, 0, c->md,
	    c->mc);
	return c->rc > 0;
}

/* Group g of the last match as a string, or NULL. */
static const char *
cx_group(cx_ctx *c, const char *s, int g, size_t *n)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);

	/* Pairs from rc on are not written by the match: stale. */
	if (g >= c->rc || ov[2 * g] == PCRE2_UNSET)
		return NULL;
	*n = ov[2 * g + 1] - ov[2 * g];
	return s + ov[2 * g];
}

static int64_t
cx_int(const char *p, size_t n)
{
	int64_t v = 0;
	size_t i;

	for (i = 0; i < n && i < 18; i++)
		v = v * 10 + (p[i] - '0');
	return v;
}

static void
cx_copy(char *dst, size_t cap, const char *p, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

/* Adds "NAME=value" to a list of settings, replacing NAME's old value. */
static void
cx_setting(char *list, size_t cap, const char *name, size_t nlen,
    const char *val, size_t vlen)
{
	char item[160], rest[160];
	char *p;

	if (nlen + vlen + 2 > sizeof item)
		return;
	memcpy(item, name, nlen);
	item[nlen] = '=';
	memcpy(item + nlen + 1, val, vlen);
	item[nlen + 1 + vlen] = '\0';
	/* Drop an earlier value of the same name ("NAME=" at a word start). */
	for (p = list; (p = strstr(p, "=")) != NULL; p++) {
		char *start = p;

		while (start > list && start[-1] != ' ')
			start--;
		if ((size_t)(p - start) == nlen &&
		    memcmp(start, item, nlen) == 0) {
			char *end = strchr(p, ' ');

			cx_copy(rest, sizeof rest, end != NULL ? end + 1 : "",
			    end != NULL ? strlen(end + 1) : 0);
			*start = '\0';
			strncat(list, rest, cap - strlen(list) - 1);
			break;
		}
	}
	if (strlen(list) + strlen(item) + 2 > cap)
		return;
	if (list[0] != '\0' && list[strlen(list) - 1] != ' ')
		strcat(list, " ");
	strcat(list, item);
}

void
cx_line(cx_ctx *c, int what, const char *line, size_t len, od_logctx *st)
{
	const char *g, *g2;
	size_t n = 0, n2 = 0;
	int64_t v;

	if (what < 0 || what >= CX_FRAME || !cx_match(c, what, line, len, 0))
		return;
	g = cx_group(c, line, 1, &n);
	g2 = cx_group(c, line, 2, &n2);
	switch (what) {
	case CX_ALLOC:
		if (g != NULL)
			cx_copy(st->alloc_conf, sizeof st->alloc_conf, g, n);
		break;
	case CX_XLA:
		if (g != NULL && g2 != NULL)
			cx_setting(st->xla_conf, sizeof st->xla_conf, g, n, g2,
			    n2);
		break;
	case CX_TF:
		if (g != NULL && g2 != NULL)
			cx_setting(st->tf_allocator, sizeof st->tf_allocator, g,
			    n, g2, n2);
		break;
	case CX_BATCH:
		if (g != NULL)
			st->batch_size = cx_int(g, n);
		break;
	case CX_ACCUM:
		if (g != NULL)
			st->accum_steps = cx_int(g, n);
		break;
	case CX_SEQ:
		if (g != NULL)
			st->seq_len = cx_int(g, n);
		break;
	case CX_PREC: {
		int k;

		for (k = 1; k <= 4; k++)
			if ((g = cx_group(c, line, k, &n)) != NULL)
				break;
		if (g == NULL)
			return;
		if ((n == 4 && memcmp(g, "bf16", 4) == 0) ||
		    (n == 8 && memcmp(g, "bfloat16", 8) == 0))
			strcpy(st->precision, "bf16");
		else if ((n == 4 && memcmp(g, "fp16", 4) == 0) ||
		    (n == 7 && memcmp(g, "float16", 7) == 0) ||
		    (n == 2 && memcmp(g, "16", 2) == 0))
			strcpy(st->precision, "fp16");
		else
			strcpy(st->precision, "fp32");
		break;
	}
	case CX_CKPT:
		if (g != NULL)
			st->grad_ckpt = g[0] == 'T' || g[0] == 't' || g[0] == '1';
		break;
	case CX_MEM: {
		char text[48];

		if (g == NULL || g2 == NULL || n + n2 + 1 >= sizeof text)
			return;
		memcpy(text, g, n);
		memcpy(text + n, g2, n2);
		/* "GB" in a metric line is the binary unit nearly always:
		 * the frameworks divide by 1024**3. */
		if (n2 == 2) {
			memcpy(text + n, g2[0] == 'G' ? "GiB" : "MiB", 3);
			n2 = 3;
		}
		if (!od_size_parse_text(text, n + n2, &v))
			return;
		if (st->nreadings++ == 0)
			st->mem_first = v;
		st->mem_last = v;
		if (v > st->mem_max)
			st->mem_max = v;
		break;
	}
	case CX_MEMCG:
		if (g != NULL && g2 != NULL) {
			st->memcg_usage = cx_int(g, n) * 1024;
			st->memcg_limit = cx_int(g2, n2) * 1024;
		}
		break;
	case CX_XID:
		if (g != NULL)
			st->xid = cx_int(g, n);
		else
			st->ecc = true;
		break;
	default:
		break;
	}
}

/* Whether a traceback frame's file belongs to a library, not the user. */
static bool
cx_library_file(const char *f)
{
	static const char *const marks[] = {
		"site-packages", "dist-packages", "/lib/python", "<frozen",
		"/torch/", "/usr/lib/", "\\Lib\\", "<string>",
	};
	size_t i;

	for (i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (strstr(f, marks[i]) != NULL)
			return true;
	return false;
}

/* The phase the frames show; the order of the checks is their weight. */
static void
cx_phase(od_event *ev)
{
	static const struct {
		const char *phase;
		const char *marks[6];
	} phases[] = {
		{ "backward", { "backward", "run_backward", "autograd", NULL } },
		{ "optimizer", { "optimizer.step", "optim/", "_single_tensor_",
		    "_multi_tensor_", "zero_grad", NULL } },
		{ "generation", { "generate", "sample(", "decode", NULL } },
		{ "evaluation", { "evaluat", "validation", "predict",
		    "eval_loop", "inference", NULL } },
		{ "forward", { "forward", "_call_impl", "__call__", "model(",
		    NULL } },
	};
	size_t p;
	int i, k;

	for (p = 0; p < sizeof phases / sizeof phases[0]; p++) {
		for (i = 0; i < ev->nframes; i++) {
			const od_frame *f = &ev->frames[i];

			for (k = 0; phases[p].marks[k] != NULL; k++) {
				const char *m = phases[p].marks[k];

				if (strstr(f->func, m) != NULL ||
				    strstr(f->code, m) != NULL ||
				    (strchr(m, '/') != NULL &&
				    strstr(f->file, m) != NULL)) {
					strcpy(ev->phase, phases[p].phase);
					return;
				}
			}
		}
	}
}

/* Finds the last occurrence of needle in hay[0..n). */
static const char *
cx_last(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	const char *p = hay, *last = NULL, *q;

	while (n >= k && (q = memmem(p, n, needle, k)) != NULL) {
		last = q;
		n -= (size_t)(q - p) + 1;
		p = q + 1;
	}
	return last;
}

void
cx_before(cx_ctx *c, const char *buf, size_t len, od_event *ev)
{
	const char *tb = cx_last(buf, len, "Traceback (most recent call last)");
	od_frame user;
	size_t at;
	int64_t step = -1;
	bool have_user = false;

	/* The frames of the last traceback before the event. */
	ev->nframes = 0;
	if (tb != NULL) {
		const char *end = buf + len;

		at = (size_t)(tb - buf);
		while (cx_match(c, CX_FRAME, buf, len, at)) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
			od_frame *f;
			const char *g, *nl, *code, *ce;
			size_t n = 0, indent;

			/* Keep the innermost frames: drop the oldest. */
			if (ev->nframes == OD_FRAMES_MAX) {
				memmove(ev->frames, ev->frames + 1,
				    (OD_FRAMES_MAX - 1) * sizeof ev->frames[0]);
				ev->nframes--;
			}
			f = &ev->frames[ev->nframes++];
			g = cx_group(c, buf, 1, &n);
			cx_copy(f->file, sizeof f->file, g, n);
			g = cx_group(c, buf, 2, &n);
			f->line = cx_int(g, n);
			g = cx_group(c, buf, 3, &n);
			cx_copy(f->func, sizeof f->func, g, n);
			f->user = !cx_library_file(f->file);
			/* The source line follows, at the same prefix. */
			f->code[0] = '\0';
			indent = ov[0];
			while (indent > 0 && buf[indent - 1] != '\n')
				indent--;
			indent = ov[0] - indent;
			nl = memchr(buf + ov[1], '\n', len - ov[1]);
			at = ov[1];
			if (nl != NULL && (size_t)(end - nl) > indent + 1) {
				code = nl + 1 + indent;
				ce = memchr(code, '\n', (size_t)(end - code));
				if (ce == NULL)
					ce = end;
				while (code < ce && (*code == ' ' || *code == '\t'))
					code++;
				if (code < ce && strncmp(code, "File \"", 6) != 0)
					cx_copy(f->code, sizeof f->code, code,
					    (size_t)(ce - code));
			}
			if (f->user) {
				user = *f;
				have_user = true;
			}
		}
		/* The user's failing frame matters most: keep it. */
		if (have_user) {
			int i;

			for (i = 0; i < ev->nframes && !ev->frames[i].user; i++)
				;
			if (i == ev->nframes)
				ev->frames[0] = user;
		}
		cx_phase(ev);
	}
	/* The last step the log gave before the event. */
	at = 0;
	while (cx_match(c, CX_STEP, buf, len, at)) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
		const char *g = NULL;
		size_t n = 0;
		int k;

		for (k = 1; k <= 4 && g == NULL; k++)
			g = cx_group(c, buf, k, &n);
		if (g != NULL)
			step = cx_int(g, n);
		at = ov[1] > at ? ov[1] : at + 1;
	}
	ev->step = step;
}
