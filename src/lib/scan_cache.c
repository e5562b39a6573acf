/*
 * scan_cache.c: the prefilter's compiled database kept on disk between
 * runs (scan_cache.h).
 *
 * A cache file holds, one after the other, each as an 8-byte length
 * (host order: the database is for this machine only) and its bytes:
 * what the database was made by (scc_ident), the anchors' list, and the
 * serialized database; then an 8-byte checksum (od_hash_bytes) of all
 * before it.  Its name is a hash of the first two, so that two lists
 * have two files; the list inside is compared in full all the same.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "hash.h"
#include "scan_cache.h"

/*
 * What the file's database was compiled by and how: a change in any of
 * these (a new Vectorscan, a CPU with other features) makes a new file.
 * "lit_multi block" names scan.c's compile (hs_compile_lit_multi, ids in
 * the list's order, HS_MODE_BLOCK, no other flag than HS_FLAG_CASELESS):
 * change it with that call.
 */
#define SCC_FORMAT "oomdoc prefilter cache 1, lit_multi block"

/* The largest file read (a database of the shipped anchors is a few
 * hundred KiB). */
#define SCC_FILE_MAX ((size_t)16 << 20)

/* The most cache files a directory keeps: every list of anchors (a rule
 * file with recognisers of its own) makes one, of some hundred KiB. */
#define SCC_FILES_MAX 16

/* The cache directory that od_scan_cache_dir set; "" keeps no cache. */
static char scc_where[4096];

bool
od_scan_cache_dir(const char *dir)
{
	size_t n = dir != NULL ? strlen(dir) : 0;

	scc_where[0] = '\0';
	if (dir == NULL)
		return true;
	/* An absolute path with a directory above it (scc_dir). */
	if (dir[0] != '/' || n >= sizeof scc_where || strrchr(dir, '/') == dir)
		return false;
	memcpy(scc_where, dir, n + 1);
	return true;
}

/*
 * The cache directory (od_scan_cache_dir), and in *parent the directory
 * above it, which is made too when it is missing (the caller's
 * $XDG_CACHE_HOME or $HOME/.cache).  False when there is none, or the
 * path would not fit.
 */
static bool
scc_dir(char *dir, size_t cap, char *parent, size_t pcap)
{
	size_t n = strlen(scc_where), m;

	if (n == 0 || n >= cap || n >= pcap)
		return false;
	memcpy(dir, scc_where, n + 1);
	m = (size_t)(strrchr(scc_where, '/') - scc_where);
	memcpy(parent, scc_where, m);
	parent[m] = '\0';
	return true;
}

/* What makes the database (SCC_FORMAT, Vectorscan's version, the
 * platform it compiles for) as text; false when it cannot be had. */
static bool
scc_ident(char *out, size_t cap)
{
	hs_platform_info_t plat;
	int n;

	memset(&plat, 0, sizeof plat);
	if (hs_populate_platform(&plat) != HS_SUCCESS)
		return false;
	n = snprintf(out, cap, "%s; %s; tune %u; cpu features %llx",
	    SCC_FORMAT, hs_version(), plat.tune,
	    (unsigned long long)plat.cpu_features);
	return n > 0 && (size_t)n < cap;
}

/* The file's path for list, and the ident it must hold; false when there
 * is no cache to use. */
static bool
scc_path(const char *list, size_t len, char *ident, size_t icap,
    char *path, size_t cap, char *parent, size_t pcap, char *dir,
    size_t dcap)
{
	uint64_t key;
	int n;

	if (!scc_ident(ident, icap) ||
	    !scc_dir(dir, dcap, parent, pcap))
		return false;
	key = od_hash_bytes(OD_HASH_SEED, ident, strlen(ident));
	key = od_hash_bytes(key, list, len);
	n = snprintf(path, cap, "%s/prefilter-%016llx.hsdb", dir,
	    (unsigned long long)key);
	return n > 0 && (size_t)n < cap;
}

/* Reads the 8-byte length at b[*at] and the part it gives; false when it
 * runs past len. */
static bool
scc_part(const char *b, size_t len, size_t *at, const char **part,
    size_t *plen)
{
	uint64_t n;

	if (len - *at < sizeof n)
		return false;
	memcpy(&n, b + *at, sizeof n);
	*at += sizeof n;
	if (n > len - *at)
		return false;
	*part = b + *at;
	*plen = (size_t)n;
	*at += (size_t)n;
	return true;
}

/* Whether the file b[0..len) holds the database of list for ident:
 * its parts in *db, *dblen. */
static bool
scc_check(const char *b, size_t len, const char *ident, const char *list,
    size_t list_len, const char **db, size_t *dblen)
{
	const char *id, *l;
	size_t idlen, llen, at = 0;
	uint64_t sum;

	if (!scc_part(b, len, &at, &id, &idlen) || idlen != strlen(ident) ||
	    memcmp(id, ident, idlen) != 0 ||
	    !scc_part(b, len, &at, &l, &llen) || llen != list_len ||
	    memcmp(l, list, llen) != 0 || !scc_part(b, len, &at, db, dblen) ||
	    len - at != sizeof sum)
		return false;
	memcpy(&sum, b + at, sizeof sum);
	return sum == od_hash_bytes(OD_HASH_SEED, b, at);
}

hs_database_t *
scc_load(const char *list, size_t len)
{
	char ident[256], path[4096], parent[4096], dir[4096];
	hs_database_t *db = NULL;
	const char *part;
	size_t have = 0, plen;
	struct stat st;
	char *b;
	int fd;

	if (!scc_path(list, len, ident, sizeof ident, path, sizeof path,
	    parent, sizeof parent, dir, sizeof dir))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY);
	if (fd < 0)
		return NULL;
	/* A regular file of this user that no one else may write, of a
	 * size a cache file can have. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
	    st.st_size <= 0 || (uint64_t)st.st_size > SCC_FILE_MAX ||
	    (b = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return NULL;
	}
	while (have < (size_t)st.st_size) {
		ssize_t got = read(fd, b + have, (size_t)st.st_size - have);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
	}
	/* Its time is when it was last used, for scc_trim (an error is
	 * of no matter: a read-only cache is still read). */
	(void)futimens(fd, NULL);
	close(fd);
	/* hs_deserialize_database checks the database's own header too: its
	 * version, its platform, its size. */
	if (have == (size_t)st.st_size &&
	    scc_check(b, have, ident, list, len, &part, &plen) &&
	    hs_deserialize_database(part, plen, &db) != HS_SUCCESS)
		db = NULL;
	free(b);
	return db;
}

/* Appends the 8-byte length n and p[0..n) at b[*at]. */
static void
scc_put(char *b, size_t *at, const void *p, size_t n)
{
	uint64_t n64 = n;

	memcpy(b + *at, &n64, sizeof n64);
	memcpy(b + *at + sizeof n64, p, n);
	*at += sizeof n64 + n;
}

/*
 * Makes room in dir for one more cache file: while it holds
 * SCC_FILES_MAX or more (prefilter-*.hsdb, regular, this user's), the
 * one used longest ago (scc_load sets its time) goes, four at most a
 * call (a directory that others fill gets there over some calls).  Only
 * such files are touched.
 */
static void
scc_trim(const char *dir)
{
	char path[4400], oldest[4400];
	int files, tries;

	for (tries = 0; tries < 4; tries++) {
		struct dirent *de;
		struct stat st;
		struct timespec when = { 0, 0 };
		DIR *d = opendir(dir);

		if (d == NULL)
			return;
		files = 0;
		oldest[0] = '\0';
		while ((de = readdir(d)) != NULL) {
			size_t n = strlen(de->d_name);
			int k;

			if (n < 15 || strncmp(de->d_name, "prefilter-", 10) != 0 ||
			    strcmp(de->d_name + n - 5, ".hsdb") != 0)
				continue;
			k = snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			if (k <= 0 || (size_t)k >= sizeof path ||
			    lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
			    st.st_uid != geteuid())
				continue;
			if (files++ == 0 || st.st_mtim.tv_sec < when.tv_sec ||
			    (st.st_mtim.tv_sec == when.tv_sec &&
			    st.st_mtim.tv_nsec < when.tv_nsec)) {
				when = st.st_mtim;
				memcpy(oldest, path, (size_t)k + 1);
			}
		}
		closedir(d);
		if (files < SCC_FILES_MAX || oldest[0] == '\0' ||
		    unlink(oldest) != 0)
			return;
	}
}

/* Writes b[0..len) to fd in full. */
static bool
scc_write_all(int fd, const char *b, size_t len)
{
	while (len > 0) {
		ssize_t put = write(fd, b, len);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return false;
		b += put;
		len -= (size_t)put;
	}
	return true;
}

void
scc_store(const char *list, size_t len, const hs_database_t *db)
{
	char ident[256], path[4096], parent[4096], dir[4096], tmp[4200];
	char *bytes = NULL, *b;
	size_t dblen = 0, total, at = 0, ilen;
	uint64_t sum;
	bool ok;
	int fd, n;

	if (db == NULL || !scc_path(list, len, ident, sizeof ident, path,
	    sizeof path, parent, sizeof parent, dir, sizeof dir))
		return;
	if (hs_serialize_database(db, &bytes, &dblen) != HS_SUCCESS)
		return;
	ilen = strlen(ident);
	total = 4 * sizeof(uint64_t) + ilen + len + dblen;
	/* The whole file is made before it is opened. */
	if (total > SCC_FILE_MAX || (b = malloc(total)) == NULL) {
		free(bytes);
		return;
	}
	scc_put(b, &at, ident, ilen);
	scc_put(b, &at, list, len);
	scc_put(b, &at, bytes, dblen);
	free(bytes);    /* hs's misc allocator, malloc unless set */
	sum = od_hash_bytes(OD_HASH_SEED, b, at);
	memcpy(b + at, &sum, sizeof sum);
	/* The directories, private as the specification asks; those there
	 * already are left as they are. */
	(void)mkdir(parent, 0700);
	(void)mkdir(dir, 0700);
	scc_trim(dir);
	n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	fd = n > 0 && (size_t)n < sizeof tmp ? open(tmp, O_WRONLY | O_CREAT |
	    O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600) : -1;
	if (fd >= 0) {
		ok = scc_write_all(fd, b, total);
		ok = close(fd) == 0 && ok;
		/* rename replaces the old file at once: a reader that opened
		 * it goes on reading it whole. */
		if (!ok || rename(tmp, path) != 0)
			(void)unlink(tmp);
	}
	free(b);
}
