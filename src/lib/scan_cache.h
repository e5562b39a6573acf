/*
 * scan_cache.h: the prefilter's compiled database kept on disk between
 * runs.
 *
 * Compiling the prefilter's anchors (hs_compile_lit_multi) was about a
 * third of a run's start-up (38 M of 130 M instructions, valgrind
 * --tool=callgrind on `oomdoc /dev/null`), paid by every run, although
 * the anchors change only with the recognisers.  So the database is
 * serialized (hs_serialize_database) into a file of the user's cache
 * directory, named by a hash of what it was compiled from, and the next
 * run with the same anchors reads it back (hs_deserialize_database)
 * instead of compiling it again.  The file is only a cache: it is used
 * when it holds the very anchors asked (compared byte for byte), was made
 * by the same Vectorscan for the same CPU features, and passes its
 * checksum; on any mismatch or error the database is compiled as before,
 * and nothing is said.  A cache file therefore never changes what a run
 * finds.  The library reads no environment: the cache is kept only in
 * the directory the caller names (od_scan_cache_dir in core.h; the
 * command names $XDG_CACHE_HOME/oomdoc unless OOMDOC_NO_CACHE=1, FILES and
 * ENVIRONMENT in oomdoc(1)), and none by default.
 */
#ifndef OD_SCAN_CACHE_H
#define OD_SCAN_CACHE_H

#include <stddef.h>

#include <hs/hs.h>

/*
 * The database compiled from list[0..len) (scan.c's sc_db_list: for each
 * anchor in id order, its caselessness and its text), read from the
 * cache; NULL when there is none to use.
 */
hs_database_t *scc_load(const char *list, size_t len);

/* Writes db, compiled from list[0..len), into the cache (atomically: a
 * reader sees the old file or the whole new one).  Errors are ignored. */
void scc_store(const char *list, size_t len, const hs_database_t *db);

#endif
