/*
 * watchdog.c: the watchdog thread of live mode (watchdog.h).  It polls
 * every 50 ms how long the device call in progress has run
 * (dv_busy_seconds, device.c); the main thread is then blocked in that
 * call, so what the caller's function reads of the report is not being
 * written.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "watchdog.h"

static struct {
	pthread_t thread;
	bool running;
	atomic_bool stop;
	double deadline;        /* limit + grace */
	lv_watchdog_fn fn;
	void *arg;
	int status;
} wd;

static void *
wd_main(void *unused)
{
	struct timespec step = { 0, 50 * 1000 * 1000 };

	(void)unused;
	while (!atomic_load(&wd.stop)) {
		double busy = dv_busy_seconds();

		if (busy > wd.deadline) {
			if (wd.fn != NULL)
				wd.fn(wd.arg, busy);
			_exit(wd.status);
		}
		nanosleep(&step, NULL);
	}
	return NULL;
}

bool
lv_watchdog_start(double limit, double grace, lv_watchdog_fn fn, void *arg,
    int status)
{
	if (wd.running)
		return true;
	atomic_store(&wd.stop, false);
	wd.deadline = limit + grace;
	wd.fn = fn;
	wd.arg = arg;
	wd.status = status;
	if (pthread_create(&wd.thread, NULL, wd_main, NULL) != 0)
		return false;
	wd.running = true;
	return true;
}

void
lv_watchdog_stop(void)
{
	if (!wd.running)
		return;
	atomic_store(&wd.stop, true);
	pthread_join(wd.thread, NULL);
	wd.running = false;
}
