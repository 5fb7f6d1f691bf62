/*
 * An LD_PRELOAD shim for a server program: its second rdma_listen() starts
 * LATE_LISTEN_MS (default 500) milliseconds late. perftest's -R server listens for
 * its parameter exchange, destroys that listener and listens again for the test's
 * QPs while its client already connects; this widens that gap the way a loaded
 * machine does, so a test can show the client's connection is retried until the
 * listener is there rather than rejected.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/rdma_cma.h>

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	static int calls;
	int (*next)(struct rdma_cm_id *, int) =
		(int (*)(struct rdma_cm_id *, int))dlsym(RTLD_NEXT, "rdma_listen");
	if (++calls == 2) {
		const char *ms = getenv("LATE_LISTEN_MS");
		long delay = ms ? atol(ms) : 500;
		struct timespec ts = { delay / 1000, (delay % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return next(id, backlog);
}
