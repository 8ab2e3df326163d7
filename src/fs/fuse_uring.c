/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_uring.c - FUSE over io_uring for libfuse 3.14 (fuse_uring.h; the
 * kernel's protocol: fuse_kabi.h; why, and what it measured:
 * doc/DESIGN.md and doc/PERFORMANCE.md, "Lever 2").
 *
 * Threads: per possible CPU (one kernel queue each), a few threads
 * pinned to that CPU, each with its own io_uring and one ring entry (a
 * header buffer and a payload buffer) in the kernel's hands. A thread
 * waits for its entry's completion, which brings a request, and
 * processes it itself: the
 * request is rebuilt as /dev/fuse would have given it, in place in
 * front of its payload (no copy of a write's data), and handed to the
 * session (fuse_session_process_buf). The session's reply comes back
 * through fuse_glue.c's writev hook to uring_reply(), which copies it
 * into the entry and prepares COMMIT_AND_FETCH on the thread's own
 * ring; the thread's next io_uring_enter(2) then sends the reply and
 * waits for the next request in one system call, against a read(2)
 * and a writev(2) on /dev/fuse.
 *
 * One entry per thread, not a deep queue per thread: the kernel gives a
 * request to the entry committed last, and an entry whose thread is
 * still busy with another request would leave it waiting while other
 * threads idle (the handlers are synchronous).
 *
 * A reply made later by another thread (a blocking lock granted by the
 * core's waiting thread) is copied into the entry by that thread, which
 * then posts the entry to its owner and wakes it through an eventfd
 * polled on the owner's ring: only the owner ever touches its
 * submission queue, so nothing guards it. Meanwhile the waiting request
 * holds its entry (the kernel lets an entry go only with the reply), so
 * the owner registers another one: a few waiting locks must not leave a
 * CPU without entries, or the unlock that would end them could not
 * reach the daemon.
 *
 * FORGET and INTERRUPT stay on /dev/fuse (the kernel sends them there),
 * and so do INIT and the notifications (unique 0): the session's own
 * loop keeps serving /dev/fuse beside the ring, batching the FORGETs
 * (uring_dev_read()).
 */
#include "fuse_uring.h"
#include "fuse_kabi.h"
#include "log.h"
#include "monotime.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/*
 * Threads (and entries) per queue, at most: enough for a few requests of
 * one CPU in flight at once (readahead sends several; a request waiting
 * for the disk should not hold up the next), but fewer on a machine
 * with many CPUs, so that all queues together have about
 * URING_THREADS_MAX threads (at least one each: the kernel needs an
 * entry on every queue). Each entry costs a payload buffer of max_write
 * (1 MiB), touched only as far as requests fill it.
 */
#define URING_THREADS_PER_QUEUE 4
#define URING_THREADS_MAX 64

/* user_data of the eventfd poll; an entry's is its (aligned) address */
#define EVFD_TAG 1u

/* entries per thread at most: each waiting request (lock) holds one */
#define URING_ENTS_MAX 64

enum ent_state {
	ENT_IDLE,      /* not given to the kernel yet */
	ENT_KERNEL,    /* REGISTER or COMMIT_AND_FETCH submitted or prepared */
	ENT_BUSY,      /* holds a request whose reply is awaited */
	ENT_REPLIED,   /* the reply is in the buffers, not committed yet */
	ENT_DEAD,      /* ended by the kernel (unmount) or failed */
};

struct uring_thread;

/* One ring entry: the buffers the kernel copies requests and replies. */
struct uring_ent {
	struct uring_thread *t;          /* the owner */
	struct k_uring_req_header *hdr;  /* iov[0]: headers (page-aligned) */
	uint8_t *payload;                /* iov[1]: u.payload_len bytes */
	struct iovec iov[2];             /* what REGISTER points to */
	uint64_t commit_id;              /* the request held (owner only) */
	uint64_t unique;                 /* its unique if ENT_BUSY (u.lock) */
	enum ent_state state;            /* u.lock */
	bool registering;                /* REGISTER not done yet (owner) */
	void *map;                       /* hdr and payload, one mapping */
	size_t map_len;                  /* bytes */
	struct uring_ent *next;          /* the owner's next entry (u.lock) */
	struct uring_ent *mail_next;     /* the owner's mailbox (u.lock) */
};

/* A ring thread with its io_uring and entries. */
struct uring_thread {
	struct io_uring ring;     /* used by the owner thread only */
	bool ring_ok;             /* ring set up (to tear down) */
	bool started;             /* the thread runs (to join) */
	pthread_t tid;
	unsigned qid;             /* the kernel queue: the CPU it serves */
	int evfd;                 /* wakes the thread (mail, stop) */
	struct uring_ent *mail;   /* entries replied by others (u.lock) */
	struct uring_ent *ents;   /* its entries (see uring_ent.next) */
	unsigned nents;           /* how many (owner) */
	unsigned in_kernel;       /* of them ENT_KERNEL (owner) */
	bool full_logged;         /* URING_ENTS_MAX reached, said (owner) */
};

enum phase {
	PH_NONE,       /* nothing set up */
	PH_PREPARED,   /* threads wait for uring_start() */
	PH_GO,         /* registering or serving */
	PH_CANCEL,     /* threads told to end without registering */
};

/* The one session's ring (one mount per process). */
static struct {
	struct fuse_session *se;  /* the session requests are handed to */
	int fd;                   /* its /dev/fuse descriptor */
	const char *mnt;          /* for log lines */
	size_t payload_len;       /* bytes of each payload buffer */
	unsigned nqueues;         /* possible CPUs */
	unsigned per_queue;       /* threads per queue */
	unsigned nthreads;        /* nqueues * per_queue */
	struct uring_thread *t;   /* nthreads of them */
	pthread_mutex_t lock;     /* entries' states, mail, the fields below */
	pthread_cond_t cond;      /* phase and reported changes */
	enum phase phase;         /* lock */
	bool active;              /* replies may be ours to route (lock) */
	unsigned reported;        /* threads done registering (lock) */
	unsigned failed;          /* ... of them that failed (lock) */
	int err;                  /* the first failure, -errno (lock) */
	atomic_bool fast_active;  /* lock-free hint of active for writev */
	atomic_bool stopping;     /* uring_stop() asks the threads to end */
	bool unpinned;            /* threads on any CPU (uring_prepare()) */
	atomic_ulong served;      /* requests taken from the ring */
} u = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.fd = -1,
};

/* The entry this thread is processing a request of, if a ring thread. */
static _Thread_local struct uring_ent *tl_ent;

/*
 * The number of possible CPUs, which is the number of queues the kernel
 * expects (num_possible_cpus(); qid = the caller's CPU), from
 * /sys/devices/system/cpu/possible ("0-3" or "0,2-5").
 */
static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned n = 0, a, b;
	int c;

	if (f) {
		while (fscanf(f, "%u", &a) == 1) {
			b = a;
			c = fgetc(f);
			if (c == '-') {
				if (fscanf(f, "%u", &b) != 1)
					break;
				c = fgetc(f);
			}
			if (b >= a)
				n += b - a + 1;
			if (c != ',')
				break;
		}
		fclose(f);
	}
	if (n == 0) {
		long k = sysconf(_SC_NPROCESSORS_CONF);

		n = k > 0 ? (unsigned)k : 1;
	}
	return n;
}

/* An IORING_OP_URING_CMD of @op for @e, on the fixed file 0 (/dev/fuse). */
static void prep_cmd(struct io_uring_sqe *sqe, struct uring_ent *e,
		     uint32_t op, uint64_t commit_id)
{
	struct k_uring_cmd_req req = {
		.commit_id = commit_id,
		.qid = (uint16_t)e->t->qid,
	};

	memset(sqe, 0, 128); /* an SQE128 slot, command area included */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0;
	sqe->cmd_op = op;
	io_uring_sqe_set_data(sqe, e);
	memcpy(sqe->cmd, &req, sizeof(req));
}

/* An SQE of @t's ring; its queue has room for every command in flight. */
static struct io_uring_sqe *get_sqe(struct uring_thread *t)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);

	if (!sqe) {
		(void)io_uring_submit(&t->ring);
		sqe = io_uring_get_sqe(&t->ring);
	}
	if (!sqe)
		xtsfs_bug("io_uring submission queue full");
	return sqe;
}

static void set_state(struct uring_ent *e, enum ent_state s)
{
	pthread_mutex_lock(&u.lock);
	e->state = s;
	pthread_mutex_unlock(&u.lock);
}

/* Owner: commit replied @e, with the next io_uring_enter(). */
static void queue_commit(struct uring_ent *e)
{
	prep_cmd(get_sqe(e->t), e, K_URING_CMD_COMMIT_AND_FETCH, e->commit_id);
	set_state(e, ENT_KERNEL);
	e->t->in_kernel++;
}

/* Owner: give @e to the kernel (again). */
static void queue_register(struct uring_ent *e)
{
	struct io_uring_sqe *sqe = get_sqe(e->t);

	prep_cmd(sqe, e, K_URING_CMD_REGISTER, 0);
	sqe->addr = (uintptr_t)e->iov;
	sqe->len = 2;
	e->registering = true;
	set_state(e, ENT_KERNEL);
	e->t->in_kernel++;
}

/*
 * A new entry of @t (not registered): one mapping, the header buffer in
 * the first page and the payload from the second, so that a request can
 * be rebuilt in front of its payload (process()) in the first page's
 * unused end. Linked to @t's entries. Return: 0 or -errno.
 */
static int ent_new(struct uring_thread *t, struct uring_ent **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct uring_ent *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->map_len = page + ((u.payload_len + page - 1) & ~(page - 1));
	e->map = mmap(NULL, e->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->map == MAP_FAILED) {
		int err = -errno;

		free(e);
		return err;
	}
	e->t = t;
	e->hdr = e->map;
	e->payload = (uint8_t *)e->map + page;
	e->iov[0].iov_base = e->hdr;
	e->iov[0].iov_len = sizeof(*e->hdr);
	e->iov[1].iov_base = e->payload;
	e->iov[1].iov_len = u.payload_len;
	pthread_mutex_lock(&u.lock);
	e->next = t->ents;
	t->ents = e;
	pthread_mutex_unlock(&u.lock);
	t->nents++;
	*out = e;
	return 0;
}

/*
 * Owner, after a request left @t's last entry in the kernel's hands
 * waiting for a later reply: register another, so that the CPU's
 * requests still find one here.
 */
static void add_spare(struct uring_thread *t)
{
	struct uring_ent *e;
	int rc;

	if (t->nents >= URING_ENTS_MAX) {
		if (!t->full_logged)
			xlog(u.mnt, LOG_WARNING, "io_uring: queue %u: %u "
			     "requests wait for a late reply in one thread",
			     t->qid, t->nents);
		t->full_logged = true;
		return;
	}
	rc = ent_new(t, &e);
	if (rc) {
		xlog(u.mnt, LOG_WARNING, "io_uring: queue %u: no spare entry "
		     "for a waiting request: %s", t->qid, strerror(-rc));
		return;
	}
	queue_register(e);
}

/* Owner: be woken by a write to the eventfd. */
static void arm_poll(struct uring_thread *t)
{
	struct io_uring_sqe *sqe = get_sqe(t);

	io_uring_prep_poll_add(sqe, t->evfd, POLLIN);
	io_uring_sqe_set_data(sqe, (void *)(uintptr_t)EVFD_TAG);
}

/* Owner: answer the request in @e with error @err, without the session. */
static void commit_error(struct uring_ent *e, uint64_t unique, int err)
{
	struct k_out_header oh = {
		.len = sizeof(oh),
		.error = -err,
		.unique = unique,
	};

	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	e->hdr->ring_ent_in_out.payload_sz = 0;
	queue_commit(e);
}

/*
 * Owner: the request the kernel put in @e, rebuilt as read from
 * /dev/fuse (in_header, the opcode's struct, the rest) in place before
 * the payload, and handed to the session; its reply comes back through
 * uring_reply().
 */
static void process(struct uring_ent *e)
{
	struct k_in_header h;
	struct fuse_buf fb = { 0 };
	uint32_t payload_sz = e->hdr->ring_ent_in_out.payload_sz;
	size_t oplen;
	uint8_t *start;

	memcpy(&h, e->hdr->in_out, sizeof(h));
	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	/*
	 * The kernel's in_header.len counts all the arguments: what is
	 * neither header nor payload is the opcode's struct, in op_in.
	 */
	if (payload_sz > u.payload_len || h.len < sizeof(h) + payload_sz ||
	    h.len - sizeof(h) - payload_sz > K_URING_OP_IN_OUT_SZ) {
		xlog(u.mnt, LOG_ERR, "io_uring: malformed request (opcode %u, "
		     "length %u, payload %u): answered EIO", h.opcode, h.len,
		     payload_sz);
		commit_error(e, h.unique, EIO);
		return;
	}
	oplen = h.len - sizeof(h) - payload_sz;
	start = e->payload - oplen - sizeof(h);
	memcpy(start, &h, sizeof(h));
	memcpy(start + sizeof(h), e->hdr->op_in, oplen);
	pthread_mutex_lock(&u.lock);
	e->unique = h.unique;
	e->state = ENT_BUSY;
	pthread_mutex_unlock(&u.lock);
	fb.mem = start;
	fb.size = h.len;
	tl_ent = e;
	atomic_fetch_add_explicit(&u.served, 1, memory_order_relaxed);
	fuse_session_process_buf(u.se, &fb);
	tl_ent = NULL;
	if (e->t->in_kernel == 0 && !atomic_load(&u.stopping)) {
		bool waiting;

		pthread_mutex_lock(&u.lock);
		waiting = e->state == ENT_BUSY;
		pthread_mutex_unlock(&u.lock);
		if (waiting)
			add_spare(e->t);
	}
}

/* Owner: the eventfd fired: commit the replies other threads made. */
static void on_wake(struct uring_thread *t)
{
	struct uring_ent *mail, *next;
	uint64_t v;

	(void)!read(t->evfd, &v, sizeof(v));
	pthread_mutex_lock(&u.lock);
	mail = t->mail;
	t->mail = NULL;
	pthread_mutex_unlock(&u.lock);
	for (; mail; mail = next) {
		next = mail->mail_next;
		queue_commit(mail);
	}
	if (!atomic_load(&u.stopping))
		arm_poll(t);
}

/* Owner: the completion of @e's command, result @res. */
static void on_entry(struct uring_ent *e, int res)
{
	struct uring_thread *t = e->t;

	t->in_kernel--;
	if (res >= 0) {
		e->registering = false;
		process(e);
		return;
	}
	/* the connection ended (unmount, abort) or the ring was cancelled */
	if (res == -ENOTCONN || res == -ECONNABORTED || res == -ECANCELED ||
	    e->registering || atomic_load(&u.stopping)) {
		if (e->registering && res != -ENOTCONN && res != -ECONNABORTED)
			xlog(u.mnt, LOG_WARNING, "io_uring: queue %u: an entry "
			     "could not register: %s", t->qid, strerror(-res));
		set_state(e, ENT_DEAD);
		return;
	}
	/*
	 * A commit the kernel refused (say, ENOENT: no such request): the
	 * kernel keeps the entry as in userspace, out of use; register the
	 * buffers anew, so that the queue keeps its entries.
	 */
	xlog(u.mnt, LOG_WARNING, "io_uring: queue %u: a commit failed: %s",
	     t->qid, strerror(-res));
	queue_register(e);
}

/* Whether @t has an entry the kernel may still use (owner). */
static bool has_live(struct uring_thread *t)
{
	struct uring_ent *e;
	bool live = false;

	pthread_mutex_lock(&u.lock);
	for (e = t->ents; e && !live; e = e->next)
		live = e->state != ENT_DEAD;
	pthread_mutex_unlock(&u.lock);
	return live;
}

/* Owner: serve until every entry has ended or uring_stop() asks. */
static void serve(struct uring_thread *t)
{
	struct io_uring_cqe *cqe;
	int rc;

	while (!atomic_load(&u.stopping) && has_live(t)) {
		/* the reply prepared last goes out, then wait for a request */
		rc = io_uring_submit_and_wait(&t->ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			xlog(u.mnt, LOG_ERR, "io_uring: queue %u: %s", t->qid,
			     strerror(-rc));
			break;
		}
		while (io_uring_peek_cqe(&t->ring, &cqe) == 0) {
			void *tag = io_uring_cqe_get_data(cqe);
			int res = cqe->res;

			io_uring_cqe_seen(&t->ring, cqe);
			if ((uintptr_t)tag == EVFD_TAG)
				on_wake(t);
			else
				on_entry(tag, res);
		}
	}
	(void)io_uring_submit(&t->ring); /* a reply made last, if any */
}

/*
 * Owner: register the entry and arm the wake-up. A refused REGISTER
 * completes during the submission (fuse_uring_cmd runs in it), so its
 * error is known at once. Return: 0 or -errno.
 */
static int register_entry(struct uring_thread *t)
{
	struct io_uring_cqe *cqe;
	int rc;

	queue_register(t->ents);
	arm_poll(t);
	rc = io_uring_submit(&t->ring);
	if (rc < 0)
		return rc;
	while (io_uring_peek_cqe(&t->ring, &cqe) == 0) {
		if (io_uring_cqe_get_data(cqe) != t->ents || cqe->res >= 0)
			break;
		rc = cqe->res;
		io_uring_cqe_seen(&t->ring, cqe);
		t->in_kernel--;
		set_state(t->ents, ENT_DEAD);
		return rc;
	}
	return 0;
}

static void *thread_main(void *arg)
{
	struct uring_thread *t = arg;
	cpu_set_t cpus;
	bool go;
	int rc;

	/*
	 * On the CPU whose requests it serves: the caller waits there, and
	 * the kernel wakes the thread there. Fails for an offline CPU,
	 * whose queue gets no requests anyway.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(t->qid, &cpus);
	if (!u.unpinned)
		(void)pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	pthread_mutex_lock(&u.lock);
	while (u.phase == PH_PREPARED)
		pthread_cond_wait(&u.cond, &u.lock);
	go = u.phase == PH_GO;
	pthread_mutex_unlock(&u.lock);
	if (!go)
		return NULL;
	rc = register_entry(t);
	pthread_mutex_lock(&u.lock);
	u.reported++;
	if (rc) {
		if (!u.failed++)
			u.err = rc;
	}
	pthread_cond_broadcast(&u.cond);
	pthread_mutex_unlock(&u.lock);
	if (!rc)
		serve(t);
	return NULL;
}

/* Set up @t's ring, eventfd and first entry. Return: 0 or -errno. */
static int thread_setup(struct uring_thread *t)
{
	struct io_uring_params p = { 0 };
	struct uring_ent *e;
	int rc;

	/*
	 * 128-byte SQEs: the command area holds fuse_uring_cmd_req. The
	 * submission queue is flushed when full (get_sqe()); the completion
	 * queue has room for every entry and the eventfd poll.
	 */
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE;
	p.cq_entries = URING_ENTS_MAX + 2;
	rc = io_uring_queue_init_params(4, &t->ring, &p);
	if (rc < 0)
		return rc;
	t->ring_ok = true;
	rc = io_uring_register_files(&t->ring, &u.fd, 1);
	if (rc < 0)
		return rc;
	t->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->evfd < 0)
		return -errno;
	return ent_new(t, &e);
}

static void thread_teardown(struct uring_thread *t)
{
	struct uring_ent *e, *next;

	if (t->ring_ok)
		io_uring_queue_exit(&t->ring);
	if (t->evfd >= 0)
		close(t->evfd);
	for (e = t->ents; e; e = next) {
		next = e->next;
		munmap(e->map, e->map_len);
		free(e);
	}
	t->ents = NULL;
}

/* Join the threads, tear everything down. Not under u.lock. */
static void destroy_all(void)
{
	unsigned i;

	for (i = 0; i < u.nthreads; i++)
		if (u.t[i].started)
			pthread_join(u.t[i].tid, NULL);
	pthread_mutex_lock(&u.lock);
	u.active = false;
	atomic_store(&u.fast_active, false);
	pthread_mutex_unlock(&u.lock);
	for (i = 0; i < u.nthreads; i++)
		thread_teardown(&u.t[i]);
	free(u.t);
	u.t = NULL;
	u.nthreads = 0;
	u.phase = PH_NONE;
}

/* see fuse_uring.h */
int uring_prepare(struct fuse_session *se, int fd, size_t payload_len,
		  bool unpinned, const char *mountpoint)
{
	sigset_t all, old;
	unsigned i;
	int rc = 0;

	if (u.phase != PH_NONE)
		return -EBUSY;
	u.se = se;
	u.fd = fd;
	u.mnt = mountpoint;
	u.payload_len = payload_len;
	u.unpinned = unpinned;
	u.nqueues = possible_cpus();
	if (u.nqueues > UINT16_MAX)
		return -EOPNOTSUPP;
	u.per_queue = URING_THREADS_MAX / u.nqueues;
	if (u.per_queue > URING_THREADS_PER_QUEUE)
		u.per_queue = URING_THREADS_PER_QUEUE;
	if (u.per_queue < 1)
		u.per_queue = 1;
	u.nthreads = u.nqueues * u.per_queue;
	u.t = calloc(u.nthreads, sizeof(*u.t));
	if (!u.t)
		return -ENOMEM;
	u.reported = u.failed = 0;
	u.err = 0;
	atomic_store(&u.stopping, false);
	atomic_store(&u.served, 0);
	for (i = 0; i < u.nthreads; i++) {
		u.t[i].evfd = -1;
		u.t[i].qid = i / u.per_queue;
	}
	for (i = 0; i < u.nthreads && !rc; i++)
		rc = thread_setup(&u.t[i]);
	u.phase = PH_PREPARED;
	/* signals go to the session's own threads, as libfuse's workers do */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < u.nthreads && !rc; i++) {
		rc = -pthread_create(&u.t[i].tid, NULL, thread_main, &u.t[i]);
		u.t[i].started = !rc;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_mutex_lock(&u.lock);
		u.phase = PH_CANCEL;
		pthread_cond_broadcast(&u.cond);
		pthread_mutex_unlock(&u.lock);
		destroy_all();
	}
	return rc;
}

/* see fuse_uring.h */
void uring_start(bool go)
{
	unsigned failed;
	int err;

	pthread_mutex_lock(&u.lock);
	if (u.phase != PH_PREPARED) {
		pthread_mutex_unlock(&u.lock);
		return;
	}
	u.phase = go ? PH_GO : PH_CANCEL;
	u.active = go;
	atomic_store(&u.fast_active, go);
	pthread_cond_broadcast(&u.cond);
	while (go && u.reported < u.nthreads)
		pthread_cond_wait(&u.cond, &u.lock);
	failed = u.failed;
	err = u.err;
	pthread_mutex_unlock(&u.lock);
	if (!go) {
		destroy_all();
		return;
	}
	/*
	 * A refusal from fuse_uring_register() turns io_uring off for the
	 * connection (fc->io_uring = 0), and requests keep going through
	 * /dev/fuse unless every queue got an entry from other threads.
	 */
	if (failed)
		xlog(u.mnt, LOG_WARNING, "-o uring: %u of %u ring entries "
		     "not registered (%s): requests go through /dev/fuse "
		     "where a queue has none", failed, u.nthreads,
		     strerror(-err));
	else
		xlog(u.mnt, LOG_INFO, "FUSE over io_uring: %u queues, %u "
		     "threads each, %s", u.nqueues, u.per_queue,
		     u.unpinned ? "on any CPU" : "pinned to its CPU");
}

/* The entry holding the request @unique (under u.lock). */
static struct uring_ent *find_busy(uint64_t unique)
{
	struct uring_ent *e;
	unsigned i;

	if (tl_ent && tl_ent->state == ENT_BUSY && tl_ent->unique == unique)
		return tl_ent;
	for (i = 0; i < u.nthreads; i++)
		for (e = u.t[i].ents; e; e = e->next)
			if (e->state == ENT_BUSY && e->unique == unique)
				return e;
	return NULL;
}

/*
 * /dev/fuse beside a ring that serves every queue: the FORGET of every
 * file an rm -rf removes used to wake a thread blocked in read(2), on
 * another CPU, once per file. One thread at a time reads instead; while
 * requests keep coming it looks every DEV_POLL_NS without sleeping in
 * the kernel's queue, so that the FORGETs of that time come as one
 * BATCH_FORGET, and after DEV_QUIET_MS without any it sleeps in poll(2)
 * until the next one (an idle mount wakes for nothing). An INTERRUPT
 * waits DEV_POLL_NS at most. Measured: doc/PERFORMANCE.md, "Lever 2:
 * the FORGETs beside the ring".
 *
 * libfuse cancels its loop's threads at exit, in read(2) or whatever
 * this calls instead: every wait here is a cancellation point, and
 * cleanup handlers give the reader's place back.
 */
#define DEV_POLL_NS 1000000L
#define DEV_QUIET_MS 50

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool busy;                /* a thread reads (lock) */
	int64_t last_ms;          /* when it last read a request (busy) */
} devq = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void devq_unlock(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&devq.lock);
}

static void devq_leave(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&devq.lock);
	devq.busy = false;
	pthread_cond_signal(&devq.cond);
	pthread_mutex_unlock(&devq.lock);
}

/* see fuse_uring.h */
bool uring_dev_read(int fd, void *buf, size_t len, ssize_t *n)
{
	const struct timespec tick = { 0, DEV_POLL_NS };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int saved;
	bool all;

	if (!atomic_load_explicit(&u.fast_active, memory_order_acquire))
		return false;
	pthread_mutex_lock(&u.lock);
	all = u.active && u.failed == 0;
	pthread_mutex_unlock(&u.lock);
	if (!all)
		return false;

	pthread_mutex_lock(&devq.lock);
	pthread_cleanup_push(devq_unlock, NULL);
	while (devq.busy)
		pthread_cond_wait(&devq.cond, &devq.lock);
	devq.busy = true;
	pthread_cleanup_pop(1);

	pthread_cleanup_push(devq_leave, NULL);
	/* a closed connection polls as an error: the read then says so */
	while (poll(&p, 1, 0) == 0) {
		if (mono_ms() - devq.last_ms > DEV_QUIET_MS) {
			(void)poll(&p, 1, -1);
			break;
		}
		nanosleep(&tick, NULL);
	}
	*n = read(fd, buf, len);
	saved = errno;
	devq.last_ms = mono_ms();
	pthread_cleanup_pop(1);
	errno = saved;
	return true;
}

/* see fuse_uring.h */
bool uring_reply(const struct iovec *iov, int count, ssize_t *res)
{
	struct k_out_header oh;
	struct uring_ent *e;
	size_t len = 0, off = 0;
	int i;

	if (!atomic_load_explicit(&u.fast_active, memory_order_acquire) ||
	    count < 1 || iov[0].iov_len < sizeof(oh))
		return false;
	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	/* notifications (0) and interrupt replies (bit 0) are /dev/fuse's */
	if (oh.unique == 0 || (oh.unique & K_INT_REQ_BIT))
		return false;
	pthread_mutex_lock(&u.lock);
	e = u.active ? find_busy(oh.unique) : NULL;
	if (e) {
		e->state = ENT_REPLIED;
		e->unique = 0;
	}
	pthread_mutex_unlock(&u.lock);
	if (!e)
		return false;
	for (i = 1; i < count; i++)
		len += iov[i].iov_len;
	if (len > u.payload_len) {
		xlog(u.mnt, LOG_ERR, "io_uring: a reply of %zu bytes does not "
		     "fit the ring's %zu: answered EIO", len, u.payload_len);
		oh.error = -EIO;
		len = 0;
	}
	for (i = 1; i < count && len; i++) {
		memcpy(e->payload + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	oh.len = (uint32_t)(sizeof(oh) + len);
	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)len;
	*res = (ssize_t)oh.len;
	if (tl_ent == e) {
		/* the owner, inside process(): sent with its next enter */
		queue_commit(e);
	} else {
		pthread_mutex_lock(&u.lock);
		e->mail_next = e->t->mail;
		e->t->mail = e;
		pthread_mutex_unlock(&u.lock);
		(void)eventfd_write(e->t->evfd, 1);
	}
	return true;
}

/* see fuse_uring.h */
void uring_stop(void)
{
	unsigned i;

	pthread_mutex_lock(&u.lock);
	if (u.phase != PH_GO) {
		pthread_mutex_unlock(&u.lock);
		return;
	}
	pthread_mutex_unlock(&u.lock);
	atomic_store(&u.stopping, true);
	for (i = 0; i < u.nthreads; i++)
		if (u.t[i].evfd >= 0)
			(void)eventfd_write(u.t[i].evfd, 1);
	destroy_all();
	xlog(u.mnt, LOG_INFO, "io_uring: %lu requests served through the ring",
	     atomic_load(&u.served));
}
