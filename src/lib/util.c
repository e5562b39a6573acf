/*
 * util.c: errors, sizes and the names of enumerations.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

void
od_error_set(od_error *err, const char *file, uint64_t line, uint64_t col,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	snprintf(err->file, sizeof err->file, "%s", file != NULL ? file : "");
	err->line = line;
	err->col = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

/*
 * Turns the decimal number num[0..numlen) into round(num * 2^shift * mult),
 * half up.  The arithmetic is done in 128-bit integers on the decimal
 * digits, so no float rounding creeps in.  False for a malformed number or
 * a result that does not fit in an int64_t.
 */
static bool
od_size_scaled(const char *num, size_t numlen, unsigned shift, int64_t mult,
    int64_t *out)
{
	unsigned __int128 mant = 0, scale = 1, v;
	size_t i, digits = 0;
	bool dot = false;

	for (i = 0; i < numlen; i++) {
		char c = num[i];

		if (c == '.' && !dot) {
			dot = true;
			continue;
		}
		if (c < '0' || c > '9')
			return false;
		/* Beyond 30 significant digits the value cannot fit anyway. */
		if (++digits > 30)
			return false;
		mant = mant * 10 + (unsigned)(c - '0');
		if (dot)
			scale *= 10;
	}
	if (digits == 0 || mult <= 0 || shift > 60)
		return false;
	/* Room for the multiplication, the shift and the doubling. */
	if (mant > (((unsigned __int128)-1) >> (shift + 2)) /
	    (unsigned __int128)mult)
		return false;
	v = (((mant * (unsigned __int128)mult) << shift) * 2 + scale) /
	    (scale * 2);
	if (v > (unsigned __int128)INT64_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

/*
 * Parses a size as PyTorch's format_size() prints it ("0 bytes", "16.00 GiB",
 * "1024.00 KiB") and inverts it exactly: round(value * unit), half up, with
 * KiB = 1024 and so on.  Returns false, leaving *out alone, for a malformed
 * number, an unknown unit or a result that does not fit in an int64_t (a
 * printed "99999999999999999999 GiB").
 */
bool
od_size_parse(const char *num, size_t numlen, const char *unit, size_t unitlen,
    int64_t *out)
{
	static const struct {
		const char *name;
		unsigned shift;
	} units[] = {
		{ "bytes", 0 }, { "byte", 0 }, { "B", 0 },
		{ "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
		{ "PiB", 50 },
	};
	size_t i;

	for (i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].name) == unitlen &&
		    memcmp(units[i].name, unit, unitlen) == 0)
			return od_size_scaled(num, numlen, units[i].shift, 1,
			    out);
	return false;
}

/*
 * Parses a size as other stacks print it: a number with optional thousands
 * commas ("1,073,741,824", "26,184,840kB") or decimals, optional blanks,
 * and a unit.  No unit, "B" and "bytes" are bytes; "K", "KiB", "kB" (the
 * kernel's) and the like are powers of 1024, as are TensorFlow's and
 * XLA's bare "G", "M"; "KB", "MB", "GB", "TB" are powers of 1000 (Ray,
 * psutil).  The inversion is exact as in od_size_parse.
 */
bool
od_size_parse_text(const char *s, size_t n, int64_t *out)
{
	static const struct {
		const char *name;
		unsigned shift;         /* power of two, or 0 */
		int64_t decimal;        /* power of ten, or 0 */
	} units[] = {
		{ "", 0, 1 }, { "B", 0, 1 }, { "bytes", 0, 1 }, { "byte", 0, 1 },
		{ "K", 10, 0 }, { "k", 10, 0 }, { "KiB", 10, 0 }, { "kB", 10, 0 },
		{ "M", 20, 0 }, { "MiB", 20, 0 }, { "G", 30, 0 }, { "GiB", 30, 0 },
		{ "T", 40, 0 }, { "TiB", 40, 0 }, { "P", 50, 0 }, { "PiB", 50, 0 },
		{ "KB", 0, 1000 }, { "MB", 0, 1000000 }, { "GB", 0, 1000000000 },
		{ "TB", 0, 1000000000000LL },
		/* Kubernetes quantities. */
		{ "Ki", 10, 0 }, { "Mi", 20, 0 }, { "Gi", 30, 0 }, { "Ti", 40, 0 },
	};
	char num[64];
	size_t i = 0, k = 0, u;

	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
	    s[i] == ',')) {
		if (s[i] != ',') {
			if (k + 1 >= sizeof num)
				return false;
			num[k++] = s[i];
		}
		i++;
	}
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (u = 0; u < sizeof units / sizeof units[0]; u++) {
		if (strlen(units[u].name) != n - i ||
		    memcmp(units[u].name, s + i, n - i) != 0)
			continue;
		return od_size_scaled(num, k, units[u].shift,
		    units[u].decimal ? units[u].decimal : 1, out);
	}
	return false;
}

/*
 * The length of the valid UTF-8 sequence at p (at most n bytes), or 0 when
 * it is not one: overlong forms, surrogates and values past U+10FFFF are
 * invalid.  *cp receives the code point.
 */
size_t
od_utf8_decode(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c = p[0], v;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
	    v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/*
 * Prints a byte count the way PyTorch's format_size() does: "N bytes" up to
 * 1024, then KiB, MiB and GiB with two decimals, the boundaries inclusive in
 * the lower unit.  Unknown prints as "?".
 */
void
od_size_format(int64_t bytes, char *buf, size_t len)
{
	double v = (double)bytes;

	if (bytes < 0)
		snprintf(buf, len, "?");
	else if (bytes <= 1024)
		snprintf(buf, len, "%lld bytes", (long long)bytes);
	else if (bytes <= 1048576)
		snprintf(buf, len, "%.2f KiB", v / 1024.0);
	else if (bytes <= 1073741824LL)
		snprintf(buf, len, "%.2f MiB", v / 1048576.0);
	else
		snprintf(buf, len, "%.2f GiB", v / 1073741824.0);
}

/* The kinds: JSON name, title for people, the framework that prints it. */
static const struct {
	const char *name, *title, *framework;
} od_kinds[OD_KIND_COUNT] = {
	[OD_KIND_CUDA_CACHING_ALLOCATOR] = { "cuda_caching_allocator",
	    "PyTorch CUDA caching allocator out of memory", "pytorch" },
	[OD_KIND_HIP] = { "hip", "PyTorch HIP (ROCm) out of memory", "pytorch" },
	[OD_KIND_XPU] = { "xpu", "PyTorch XPU allocator out of memory",
	    "pytorch" },
	[OD_KIND_CUDA_RAW] = { "cuda_raw", "CUDA runtime or driver out of memory",
	    "cuda" },
	[OD_KIND_CUBLAS] = { "cublas", "cuBLAS could not allocate", "cuda" },
	[OD_KIND_CUDNN] = { "cudnn", "cuDNN could not allocate", "cuda" },
	[OD_KIND_NCCL] = { "nccl", "NCCL out of device memory", "nccl" },
	[OD_KIND_MPS] = { "mps", "PyTorch MPS (Apple) out of memory", "pytorch" },
	[OD_KIND_TF] = { "tf_resource_exhausted",
	    "TensorFlow out of memory (ResourceExhausted)", "tensorflow" },
	[OD_KIND_XLA] = { "xla_resource_exhausted",
	    "XLA/JAX out of memory (RESOURCE_EXHAUSTED)", "jax" },
	[OD_KIND_HOST_OOM_KILLER] = { "host_oom_killer",
	    "Host memory: process killed", "linux" },
	[OD_KIND_DATALOADER_KILLED] = { "dataloader_killed",
	    "PyTorch DataLoader worker killed", "pytorch" },
	[OD_KIND_SLURM_OOM] = { "slurm_oom", "Slurm out-of-memory kill",
	    "slurm" },
	[OD_KIND_K8S_OOMKILLED] = { "k8s_oomkilled",
	    "Kubernetes container OOMKilled", "kubernetes" },
	[OD_KIND_HOST_ALLOC] = { "host_alloc_failed",
	    "Host memory allocation failed", "python" },
	[OD_KIND_CUPY] = { "cupy", "CuPy out of memory", "cupy" },
	[OD_KIND_ONNXRUNTIME] = { "onnxruntime",
	    "ONNX Runtime could not allocate", "onnxruntime" },
	[OD_KIND_TENSORRT] = { "tensorrt", "TensorRT could not allocate",
	    "tensorrt" },
	[OD_KIND_RAY] = { "ray", "Ray killed a task: node low on memory",
	    "ray" },
	[OD_KIND_VLLM_KV_CACHE] = { "vllm_kv_cache",
	    "vLLM: no memory left for the KV cache", "vllm" },
	[OD_KIND_GGML] = { "ggml", "llama.cpp/ggml could not allocate a buffer",
	    "ggml" },
};

const char *
od_kind_name(od_kind kind)
{
	return (unsigned)kind < OD_KIND_COUNT ? od_kinds[kind].name : "unknown";
}

const char *
od_kind_title(od_kind kind)
{
	return (unsigned)kind < OD_KIND_COUNT ? od_kinds[kind].title :
	    "out of memory";
}

const char *
od_kind_framework(od_kind kind)
{
	return (unsigned)kind < OD_KIND_COUNT ? od_kinds[kind].framework : NULL;
}

const char *
od_confidence_name(od_confidence c)
{
	switch (c) {
	case OD_CONF_LOW:
		return "low";
	case OD_CONF_MEDIUM:
		return "medium";
	case OD_CONF_HIGH:
		break;
	}
	return "high";
}

const char *
od_layout_name(od_layout fmt)
{
	static const char *const names[OD_LAYOUT_COUNT] = {
		[OD_LAYOUT_UNKNOWN] = "unknown",
		[OD_LAYOUT_CACHED] = "cached",
		[OD_LAYOUT_RESERVED_TOTAL] = "reserved_in_total",
		[OD_LAYOUT_CAPACTY] = "capacty",
		[OD_LAYOUT_CAPACITY] = "capacity",
		[OD_LAYOUT_ASYNC] = "cuda_malloc_async",
		[OD_LAYOUT_WARNING] = "allocator_warning",
		[OD_LAYOUT_NVML_ASSERT] = "nvml_assert",
		[OD_LAYOUT_HEAD_ONLY] = "head_only",
		[OD_LAYOUT_OTHER_STACK] = "stack",
	};

	return (unsigned)fmt < OD_LAYOUT_COUNT ? names[fmt] : "unknown";
}

const char *
od_hint_name(od_hint hint)
{
	switch (hint) {
	case OD_HINT_MAX_SPLIT:
		return "max_split_size_mb";
	case OD_HINT_EXPANDABLE:
		return "expandable_segments";
	case OD_HINT_NONE:
		break;
	}
	return NULL;
}

/*
 * Whether to compile the patterns to machine code (PCRE2's JIT).  Only to
 * run under valgrind, which cannot see into JIT code and reports false
 * errors there, does OOMDOC_NO_JIT=1 turn it off: matching is the same,
 * only slower.
 */
bool
od_jit_wanted(void)
{
	const char *v = getenv("OOMDOC_NO_JIT");

	return v == NULL || strcmp(v, "1") != 0;
}
