/*
 * No wait and no call runs for ever.  Replay's own waits are bounded
 * (--wait-timeout: vkr_wait_ns, vkr_bounded).  And a thread watches the
 * replay's progress: a driver may block inside any call while the device
 * works through what was submitted (a vkCmdDraw whose instanceCount was
 * edited to 4294967295 kept llvmpipe's queue busy for hours, and the
 * next vkQueueSubmit waited inside the driver for a queue slot).  Such a draw is valid Vulkan, and the trace
 * cannot say how long the device takes, so no record is refused for it;
 * instead, when no record has begun for --wait-timeout plus 5 seconds
 * (the bounded waits end before that), the replay stops with one line
 * naming the call it is in, without waiting for a device that may never
 * idle.  The end of the replay (its waits for the devices) is watched
 * the same way, and so is the wait that follows a refusal, which then
 * ends with the refusal's line alone.
 */
#include "replay_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

/* The longest wait replay makes.  A wait the capture saw end waits for
 * what replay signals; a record cut out or edited (a submit, its count,
 * a fence) leaves nothing to signal it, and UINT64_MAX would wait for
 * ever.  By default 10 s, or 120 s once a device is made on a CPU (one
 * draw of SuperTuxKart's Vulkan renderer, a tree of 8,100 indices, takes
 * llvmpipe 24 s, at capture too). */
uint64_t vkr_wait_ns(const vkr *r)
{
	return r->opt->wait_ns ? r->opt->wait_ns
	       : r->cpu_device ? 120000000000ull : 10000000000ull;
}

/* Whether a vkCmdWaitEvents has replayed: a device that never finishes
 * may wait for an event nothing set (a cut or an edit that left out its
 * vkSetEvent or vkCmdSetEvent: trace-trim's cuts of Chromium waited so
 * until session 44), which the stuck wait's line then names. */
static atomic_bool event_waits;

void vkr_watchdog_event_wait(void)
{
	atomic_store_explicit(&event_waits, true, memory_order_relaxed);
}

static const char *event_hint(void)
{
	return atomic_load_explicit(&event_waits, memory_order_relaxed)
		       ? "; or a vkCmdWaitEvents waits for an event that no record set"
		       : "";
}

/* RES, a bounded wait's: a timeout stops the replay. */
void vkr_bounded(vkr *r, VkResult res, const char *what)
{
	if (res != VK_TIMEOUT)
		return;
	r->stuck = true;
	vkr_fatal(r, "%s: nothing signaled it in %.3g s (--wait-timeout), where the capture's "
		  "wait ended: a record that signals it missing or edited, or more work than the "
		  "device finishes (a draw, a dispatch or a count edited larger)%s?", what,
		  (double)vkr_wait_ns(r) / 1e9, event_hint());
}

static atomic_uint_least64_t progress;    /* records begun, and phases */
static atomic_uint_least64_t call_no;     /* the record in progress */
static _Atomic(const char *) call_fn;     /* its function, or what replay does */
static atomic_bool watching;
static pthread_t watcher;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;  /* stop() wakes the watcher at once */
static const char *input;
/* how long the replay may make no progress, in ms (a device on a CPU
 * made after the watch began lengthens it) */
static atomic_uint_least64_t limit_ms;

void vkr_watchdog_note(const trace_call *c)
{
	/* one writer (the replay's thread): plain stores, no locked add */
	atomic_store_explicit(&call_no, c->no, memory_order_relaxed);
	atomic_store_explicit(&call_fn, c->sig->name, memory_order_relaxed);
	atomic_store_explicit(&progress, atomic_load_explicit(&progress, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* WHAT: what replay does now; NULL: the line is said, exit silently. */
void vkr_watchdog_phase(const char *what)
{
	atomic_store_explicit(&call_fn, what, memory_order_relaxed);
	atomic_store_explicit(&call_no, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&progress, atomic_load_explicit(&progress, memory_order_relaxed) + 1,
			      memory_order_release);
}

static void *watch(void *arg)
{
	(void)arg;
	uint64_t seen = atomic_load(&progress);
	double still = 0;
	while (atomic_load(&watching)) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += 250000000;
		if (t.tv_nsec >= 1000000000)
			t.tv_sec++, t.tv_nsec -= 1000000000;
		pthread_mutex_lock(&mu);
		if (atomic_load(&watching))
			pthread_cond_timedwait(&cv, &mu, &t);
		pthread_mutex_unlock(&mu);
		uint64_t now = atomic_load_explicit(&progress, memory_order_acquire);
		if (now != seen) {
			seen = now;
			still = 0;
			continue;
		}
		if ((still += 0.25) < (double)atomic_load(&limit_ms) / 1e3 || !atomic_load(&watching))
			continue;
		uint64_t no = atomic_load(&call_no);
		const char *fn = atomic_load(&call_fn);
		if (no == UINT64_MAX && !fn)
			_exit(1);
		trace_cli_progress_done();
		if (no == UINT64_MAX)
			fprintf(stderr, "%s: %s: %s: ", trace_cli_self.prog, input, fn);
		else
			fprintf(stderr, "%s: %s: call %llu (%s): ", trace_cli_self.prog, input,
				(unsigned long long)no, fn ? fn : "?");
		fprintf(stderr, "the driver has not returned in %.3g s: the device is busy with "
			"more work than it finishes (a draw, a dispatch or a count edited "
			"larger?%s); --wait-timeout sets how long replay waits\n",
			(double)atomic_load(&limit_ms) / 1e3,
			event_hint());
		fflush(stderr);
		_exit(1);
	}
	return NULL;
}

/* A device made on a CPU: the default waits, and the watch, longer. */
void vkr_watchdog_cpu_device(vkr *r)
{
	r->cpu_device = true;
	atomic_store(&limit_ms, vkr_wait_ns(r) / 1000000 + 5000);
}

void vkr_watchdog_start(vkr *r)
{
	input = r->opt->input;
	atomic_store(&limit_ms, vkr_wait_ns(r) / 1000000 + 5000);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_store(&watching, true);
	if (pthread_create(&watcher, NULL, watch, NULL))
		atomic_store(&watching, false);
}

void vkr_watchdog_stop(void)
{
	pthread_mutex_lock(&mu);
	bool was = atomic_exchange(&watching, false);
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	if (was)
		pthread_join(watcher, NULL);
}
