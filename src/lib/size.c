/*
 * size.c: byte counts as the logs print them, read exactly (128-bit
 * decimal arithmetic, so that a printed figure inverts to the bytes that
 * PyTorch's format_size() rounded) and printed the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

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

size_t
od_env_size(const char *name, size_t lo, size_t hi, size_t dflt)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (e == NULL || *e == '\0')
		return dflt;
	v = strtoull(e, &end, 10);
	if (*end != '\0' || v < lo || v > hi)
		return dflt;
	return (size_t)v;
}
