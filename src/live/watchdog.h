/*
 * watchdog.h: the watchdog of live mode.  A hung kernel makes the call
 * that waits for it (cudaStreamSynchronize, cudaFree) wait for ever, so a
 * check between launches cannot end it.  The watchdog is a thread that
 * watches the device call in progress (device.c marks each one) and, when
 * one has run past the time limit plus a grace, calls the caller's
 * function (which writes the partial report) and ends the process with
 * _exit(), freeing and unmapping nothing: memory a kernel may still be
 * using is never handed back while it runs, and the driver releases the
 * process's context when the process ends.
 *
 * Ownership: one watchdog per process; lv_watchdog_stop joins it.
 */
#ifndef OD_WATCHDOG_H
#define OD_WATCHDOG_H

#include <stdbool.h>

/* Called on the watchdog's thread, with the seconds the call had run;
 * it must not free device memory.  The process ends when it returns. */
typedef void (*lv_watchdog_fn)(void *arg, double seconds);

/* The grace after the time limit, seconds. */
#define LV_WATCHDOG_GRACE 2.0

/*
 * Starts the watchdog: a device call that runs more than limit + grace
 * seconds makes it call fn(arg, seconds), then _exit(status).  False when
 * the thread could not be made (live mode then refuses to run).
 */
bool lv_watchdog_start(double limit, double grace, lv_watchdog_fn fn,
    void *arg, int status);
/* Stops and joins it; a no-op when it was not started. */
void lv_watchdog_stop(void);

#endif
