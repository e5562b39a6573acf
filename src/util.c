/*
 * util.c: errors, sizes and the names of enumerations.
 */
#include <stdarg.h>
#include <string.h>

#include "oomdoc.h"

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
 * Parses a size as PyTorch's format_size() prints it ("0 bytes", "16.00 GiB",
 * "1024.00 KiB") and inverts it exactly: round(value * unit), half up, with
 * KiB = 1024 and so on.  The arithmetic is done in 128-bit integers on the
 * decimal digits, so no float rounding creeps in.  Returns false, leaving
 * *out alone, for a malformed number, an unknown unit or a result that does
 * not fit in an int64_t (a printed "99999999999999999999 GiB").
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
	unsigned __int128 mant = 0, scale = 1, v;
	size_t i, digits = 0;
	bool dot = false;
	int u = -1;

	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strlen(units[i].name) == unitlen &&
		    memcmp(units[i].name, unit, unitlen) == 0) {
			u = (int)i;
			break;
		}
	}
	if (u < 0 || numlen == 0)
		return false;
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
	if (digits == 0)
		return false;
	v = ((mant << units[u].shift) * 2 + scale) / (scale * 2);
	if (v > (unsigned __int128)INT64_MAX)
		return false;
	*out = (int64_t)v;
	return true;
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

const char *
od_kind_name(od_kind kind)
{
	switch (kind) {
	case OD_KIND_CUDA_CACHING_ALLOCATOR:
		return "cuda_caching_allocator";
	case OD_KIND_HIP:
		return "hip";
	case OD_KIND_XPU:
		return "xpu";
	case OD_KIND_COUNT:
		break;
	}
	return "unknown";
}

const char *
od_kind_title(od_kind kind)
{
	switch (kind) {
	case OD_KIND_CUDA_CACHING_ALLOCATOR:
		return "PyTorch CUDA caching allocator out of memory";
	case OD_KIND_HIP:
		return "PyTorch HIP (ROCm) allocator out of memory";
	case OD_KIND_XPU:
		return "PyTorch XPU allocator out of memory";
	case OD_KIND_COUNT:
		break;
	}
	return "out of memory";
}

const char *
od_format_name(od_format fmt)
{
	static const char *const names[OD_FMT_COUNT] = {
		[OD_FMT_UNKNOWN] = "unknown",
		[OD_FMT_CACHED] = "cached",
		[OD_FMT_RESERVED_TOTAL] = "reserved_in_total",
		[OD_FMT_CAPACTY] = "capacty",
		[OD_FMT_CAPACITY] = "capacity",
		[OD_FMT_ASYNC] = "cuda_malloc_async",
		[OD_FMT_WARNING] = "allocator_warning",
		[OD_FMT_NVML_ASSERT] = "nvml_assert",
		[OD_FMT_HEAD_ONLY] = "head_only",
	};

	return (unsigned)fmt < OD_FMT_COUNT ? names[fmt] : "unknown";
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
