/*
 * follow.c: --follow, a log that is still being written, read as
 * `tail -F` reads it.  At the end of the file the reader waits (a bounded
 * sleep of CLI_FOLLOW_POLL_MS, which a signal ends) and reads on when the
 * file grows; once the file has not grown for CLI_FOLLOW_IDLE_MS, the
 * scanner is asked for what the bytes to come cannot change
 * (od_scan_pause: a message waits for the line after it), and after
 * CLI_FOLLOW_SETTLE_MS for the rest up to the last complete line
 * (od_scan_flush), as a pipe that pauses is, so that --format jsonl
 * writes an event within about that time of its text arriving.
 *
 * Rotation and truncation.  At each end of the data, the name is looked up
 * again: when it names another file (a rotation by rename, or a new file
 * made in place of a removed one) or the file became shorter than what was
 * read of it (truncation), the input read so far is finished (its pending
 * events delivered) and the file now at that name is read from its start,
 * as the same input.  While the name names nothing (removed, not yet made
 * again) the old file is still read.  Line numbers count from the start of
 * the file being read.
 *
 * Only a plain file is followed; a compressed one is read to its end.  The
 * reading ends with SIGTERM or SIGINT (the caller's flag), as any reading
 * does, or with a read error.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "input.h"

#define FL_CHUNK (256 * 1024)   /* over IN_RAW_SIZE: plain reads unbuffered */

/* Sleeps ms milliseconds, or less when a signal comes. */
static void
fl_sleep(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
	    .tv_nsec = (long)(ms % 1000) * 1000000L };

	(void)nanosleep(&ts, NULL);
}

/* Whether path now names another file than fd's, or fd's file is shorter
 * than what was read of it.  False while path names nothing. */
static bool
fl_moved(const char *path, int fd)
{
	struct stat now, was;
	off_t at = lseek(fd, 0, SEEK_CUR);

	if (stat(path, &now) != 0 || fstat(fd, &was) != 0)
		return false;
	return now.st_dev != was.st_dev || now.st_ino != was.st_ino ||
	    (at >= 0 && now.st_size < at);
}

bool
cli_follow(od_scanner *sc, const char *path, int index, od_input *info,
    od_events *set, volatile sig_atomic_t *stop, od_error *err)
{
	static char buf[FL_CHUNK];
	bool ok = true;
	int idle = 0;           /* ms since the file last grew */
	/* 0: read since the last pause; 1: paused (od_scan_pause); 2:
	 * settled (od_scan_flush), or nothing read yet. */
	int paused = 2;
	in_reader *r = od_scan_open(sc, path, index, info, set, err);
	int fd;

	if (r == NULL)
		return false;
	while (*stop == 0) {
		ssize_t n = in_read(r, buf, sizeof buf, err);

		if (n < 0) {
			ok = false;
			info->failed = true;
			break;
		}
		if (n > 0) {
			od_scan_feed(sc, buf, (size_t)n);
			paused = 0;
			idle = 0;
			continue;
		}
		if (!in_resume(r, &fd))
			break;
		if (fl_moved(path, fd)) {
			/* The file that was read ends here; the one at the name
			 * is read from its start.  When it cannot be opened
			 * (gone again between the two looks), the old one is
			 * finished all the same and the name waited for. */
			if (!od_scan_close(sc, r, info, err))
				return false;
			r = NULL;
			while (r == NULL && *stop == 0) {
				od_error e;

				free(info->name);
				r = od_scan_open(sc, path, index, info, set, &e);
				if (r == NULL && info->name == NULL) {
					*err = e;
					return false;
				}
				if (r == NULL)
					fl_sleep(CLI_FOLLOW_POLL_MS);
			}
			if (r == NULL) {
				/* Stopped while the name named nothing. */
				info->failed = true;
				return ok;
			}
			info->failed = false;
			paused = 2;
			idle = 0;
			continue;
		}
		if (paused == 0 && idle >= CLI_FOLLOW_IDLE_MS) {
			od_scan_pause(sc);
			paused = 1;
		}
		if (paused == 1 && idle >= CLI_FOLLOW_SETTLE_MS) {
			od_scan_flush(sc);
			paused = 2;
		}
		fl_sleep(CLI_FOLLOW_POLL_MS);
		idle += CLI_FOLLOW_POLL_MS;
	}
	if (*stop != 0)
		info->failed = true;
	return od_scan_close(sc, r, info, err) && ok;
}
