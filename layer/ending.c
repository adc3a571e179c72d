/*
 * The endings of a program the layer can see, and the trace whole at each.
 *
 * - exit() or a return from main, instances left alive: atexit
 *   (output.c's finish) writes the queue and closes the trace.
 * - A fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE): the handler
 *   writes the queue and the calls in flight (tk_output_crash), then the
 *   signal comes again as the program had it.
 * - An ending signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT): the trace is
 *   flushed, then what the program asked for happens: its handler is
 *   called, an ignored signal is ignored (the layer leaves it alone), and
 *   the default kills the process with the signal, so the exit status is
 *   the one without the layer.
 * - fork(): the child runs as without the layer (output.c's forked):
 *   the program's dispositions are back, and its exit() or signals leave
 *   the parent's trace alone.
 * - Anything else (SIGKILL, a power loss, a handler that calls _exit):
 *   the writer puts a whole chunk into the file every quarter second, so
 *   at most that much is lost, and readers salvage the rest.
 *
 * An ending signal's handler only writes a request into a pipe and, to
 * chain to the program's handler, polls for the answer a bounded time:
 * async-signal-safe.  The flush is done by a thread of ours that reads
 * the pipe ("tracekit-signal").  For the default disposition the handler
 * returns at once and that thread, the trace closed, sends the signal
 * again to the thread it came to, the default restored: a handler that
 * waited could wait for a lock the thread it interrupted holds (a
 * malloc arena's, ours), and a trace that then timed out would lose its
 * end.  The program runs on meanwhile (milliseconds; untraced), with
 * SA_RESTART, so no call of it fails with EINTR because of us.  A second
 * signal while the trace closes kills at once, unless it comes within
 * TK_SAME_SIGNAL_MS of the first (timeout(1) sends two).
 *
 * A handler of the program's that the signal finds in the layer's own
 * code (an entry point's, not the driver's call it makes) is put off
 * until the thread leaves it (tk_out): the thread may hold a lock of ours
 * that the handler's Vulkan calls would wait for.  ioquake3's handler
 * shuts its renderer down and exits: OpenArena through zink, killed while
 * the machine was busy, hung for 38 minutes.  It then runs outside the
 * signal, with the mask the signal would have set, its siginfo and no
 * ucontext.  In the driver's call, as anywhere else, it runs at once.
 *
 * What the layer cannot see: a handler the program installs after the
 * layer's (after its first vkCreateInstance) replaces it.  Wrapping it
 * again would take interposing sigaction(), which a layer the loader
 * opens cannot do, and re-checking from a thread could chain to a handler
 * the program has since put back.  Such a program ends as it chooses:
 * exit() closes the trace whole, anything else loses at most the last
 * quarter second.  Signals a program blocks reach none of our threads
 * either (they block everything): the handler runs on whichever
 * application thread takes the signal, and needs no state of its.
 */
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long the watcher waits for the trace to close before the signal
 * goes on all the same, and how long a handler waits for a flush before
 * the program's handler is called. */
#define TK_END_WAIT_MS 5000
#define TK_CHAIN_WAIT_MS 1000

/* ------------------------------------------------------------------ */
/* Fatal signals: flush, then die as the program would have. */

static const int fatal_signals[] = { SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE };
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
static struct sigaction fatal_old[NFATAL];

static void on_fatal(int sig)
{
	tk_output_crash();
	for (size_t i = 0; i < NFATAL; i++)
		if (fatal_signals[i] == sig)
			sigaction(sig, &fatal_old[i], NULL);
	raise(sig);
}

static void install_fatal(void)
{
	for (size_t i = 0; i < NFATAL; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_NODEFER;
		sigaction(fatal_signals[i], &sa, &fatal_old[i]);
	}
}

/* ------------------------------------------------------------------ */
/* Ending signals: a request to the watcher thread, then the program's
 * disposition. */

static const int end_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NEND (sizeof(end_signals) / sizeof(end_signals[0]))
static struct sigaction end_old[NEND];
static bool end_installed[NEND];

/* A request: 'L' (the last: close the trace, then SIG again to thread
 * TID) or 'F' (flush, then answer on the ack pipe). */
typedef struct tk_end_request {
	char kind;
	int sig;
	pid_t tid;
} tk_end_request;

static int req_pipe[2] = { -1, -1 }, ack_pipe[2] = { -1, -1 };
static atomic_bool ending;
static atomic_llong ending_ms;  /* when the first ending signal came */

/* A second ending signal within this of the first is the same request:
 * timeout(1) signals the program, then its process group, both at once
 * (a capture it ended came out cut off, one in three, when the second
 * found the first's trace still closing); one later kills at once. */
#define TK_SAME_SIGNAL_MS 250

/* Now, in ms of the monotonic clock (async-signal-safe). */
static long long monotonic_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

_Thread_local unsigned tk_inside __attribute__((tls_model("initial-exec")));
_Thread_local int tk_put_off __attribute__((tls_model("initial-exec")));
static siginfo_t put_off_info;  /* the last signal put off (any thread's) */

static size_t end_index(int sig)
{
	size_t i = 0;
	while (i < NEND - 1 && end_signals[i] != sig)
		i++;
	return i;
}

static bool is_handler(const struct sigaction *sa, void (*h)(int))
{
	return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == h;
}

/* In a handler: the program's disposition of SIG is the default, now. */
static void die_by(int sig, const struct sigaction *dfl)
{
	sigaction(sig, dfl, NULL);
	raise(sig); /* blocked in the handler: delivered as it returns */
}

/* In a handler: asks for a flush and waits for its answer, at most
 * TK_CHAIN_WAIT_MS (answers of earlier requests that timed out are
 * drained first). */
static void flush_and_wait(int sig)
{
	char junk[16];
	while (read(ack_pipe[0], junk, sizeof(junk)) > 0)
		;
	tk_end_request rq = { 'F', sig, 0 };
	if (write(req_pipe[1], &rq, sizeof(rq)) != (ssize_t)sizeof(rq))
		return;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = TK_CHAIN_WAIT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
						(t.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd p = { ack_pipe[0], POLLIN, 0 };
		if (left <= 0 || poll(&p, 1, (int)left) > 0)
			break;
	}
	while (read(ack_pipe[0], junk, sizeof(junk)) > 0)
		;
}

static void chain(const struct sigaction *old, int sig, siginfo_t *info, void *uc)
{
	if (old->sa_flags & SA_SIGINFO)
		old->sa_sigaction(sig, info, uc);
	else
		old->sa_handler(sig);
}

/* The trace flushed, then the program's handler of SIG. */
static void run_program_handler(int sig, siginfo_t *info, void *uc)
{
	struct sigaction *old = &end_old[end_index(sig)];
	flush_and_wait(sig);
	struct sigaction now = *old;
	if (old->sa_flags & SA_RESETHAND) {
		/* the program's handler ran once: the default next time */
		old->sa_flags = 0;
		old->sa_handler = SIG_DFL;
	}
	chain(&now, sig, info, uc);
}

static void on_end(int sig, siginfo_t *info, void *uc)
{
	int saved = errno;
	struct sigaction *old = &end_old[end_index(sig)];
	if (is_handler(old, SIG_IGN)) {
		errno = saved;
		return;
	}
	if (is_handler(old, SIG_DFL)) {
		tk_end_request rq = { 'L', sig, gettid() };
		long long now = monotonic_ms();
		if (atomic_load(&ending)) {
			if (now - atomic_load(&ending_ms) >= TK_SAME_SIGNAL_MS)
				die_by(sig, old);
			errno = saved;
			return;
		}
		atomic_store(&ending_ms, now);
		if (atomic_exchange(&ending, true)) {  /* another thread's, at once */
			errno = saved;
			return;
		}
		if (write(req_pipe[1], &rq, sizeof(rq)) != (ssize_t)sizeof(rq))
			die_by(sig, old);
		errno = saved;
		return;
	}
	if (tk_inside) {
		put_off_info = *info;
		tk_put_off = sig;
		errno = saved;
		return;
	}
	run_program_handler(sig, info, uc);
	errno = saved;
}

/* The thread left the layer: the program's handler of the signal put
 * off, with the mask its signal would have set. */
void tk_run_put_off(void)
{
	int sig = tk_put_off;
	siginfo_t info = put_off_info;
	tk_put_off = 0;
	const struct sigaction *old = &end_old[end_index(sig)];
	sigset_t mask, prev;
	mask = old->sa_mask;
	for (size_t i = 0; i < NEND; i++)
		sigaddset(&mask, end_signals[i]);
	pthread_sigmask(SIG_BLOCK, &mask, &prev);
	int saved = errno;
	run_program_handler(sig, &info, NULL);
	errno = saved;
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
}

/* The watcher: flushes for the handlers, and ends the program for the
 * default disposition once the trace is closed. */
static void *watch_main(void *unused)
{
	(void)unused;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "tracekit-signal");
	for (;;) {
		tk_end_request rq;
		ssize_t n = read(req_pipe[0], &rq, sizeof(rq));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(rq))
			return NULL;
		if (rq.kind == 'F') {
			tk_output_flush(false, TK_CHAIN_WAIT_MS);
			if (write(ack_pipe[1], "", 1) < 0)
				continue;
			continue;
		}
		if (!tk_output_flush(true, TK_END_WAIT_MS))
			fprintf(stderr, "tracekit: the trace did not close within %d s of signal "
				"%d; the program ends without it\n", TK_END_WAIT_MS / 1000, rq.sig);
		sigaction(rq.sig, &end_old[end_index(rq.sig)], NULL);
		if (tgkill(getpid(), rq.tid, rq.sig) != 0)
			kill(getpid(), rq.sig);
	}
}

/* Our handler for each ending signal the program does not ignore. */
static void install_end(void)
{
	for (size_t i = 0; i < NEND; i++) {
		struct sigaction cur;
		if (sigaction(end_signals[i], NULL, &cur) != 0 || is_handler(&cur, SIG_IGN))
			continue;
		end_old[i] = cur;
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_end;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		if (!is_handler(&cur, SIG_DFL)) {
			/* the program's handler runs from ours: its mask and
			 * flags, as it asked */
			sa.sa_mask = cur.sa_mask;
			sa.sa_flags = SA_SIGINFO | (cur.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER));
		} else {
			sigemptyset(&sa.sa_mask);
		}
		for (size_t j = 0; j < NEND; j++)
			sigaddset(&sa.sa_mask, end_signals[j]);
		end_installed[i] = sigaction(end_signals[i], &sa, NULL) == 0;
	}
}

/* In a child of fork(): the program's dispositions back, our pipes
 * closed; the watcher thread is the parent's. */
void tk_endings_forked(void)
{
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &fatal_old[i], NULL);
	for (size_t i = 0; i < NEND; i++)
		if (end_installed[i])
			sigaction(end_signals[i], &end_old[i], NULL);
	for (int i = 0; i < 2; i++) {
		if (req_pipe[i] >= 0)
			close(req_pipe[i]);
		if (ack_pipe[i] >= 0)
			close(ack_pipe[i]);
		req_pipe[i] = ack_pipe[i] = -1;
	}
}

void tk_endings_start(void)
{
	install_fatal();
	pthread_t watcher;
	if (pipe2(req_pipe, O_CLOEXEC) != 0 || pipe2(ack_pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
	    pthread_create(&watcher, NULL, watch_main, NULL) != 0) {
		fprintf(stderr, "tracekit: cannot watch for SIGINT, SIGTERM, SIGHUP and SIGQUIT; "
			"a program they end loses up to the last quarter second of its trace\n");
		return;
	}
	pthread_detach(watcher);
	install_end();
}
