/* SPDX-License-Identifier: Apache-2.0 */
/*
 * locks.c - POSIX record locks (fcntl F_SETLK, F_SETLKW, F_GETLK and the
 * F_OFD_* ones, which reach us the same way) taken on the lower file,
 * for -o sharedstorage (mount.h), so that two mounts of one cipher
 * directory, or two machines over a network filesystem that forwards
 * locks (NFS), exclude each other.
 *
 * The kernel names each lock owner (a process's file table for POSIX
 * locks, the open file for OFD locks) by an opaque 64-bit id. We keep
 * one lower descriptor, an open file description of its own, per
 * (node, owner), and take the owner's locks on it as OFD locks: OFD
 * locks of different open file descriptions conflict even inside one
 * process, so the daemon's one process keeps the kernel's owners apart,
 * and those of one owner merge, split, upgrade and downgrade on its
 * descriptor exactly as POSIX locks of one process do. The lower
 * filesystem enforces them against every other owner, ours and other
 * mounts'. Byte offsets are the plaintext ones, unchanged: every mount
 * maps them alike.
 *
 * An owner's descriptor is closed, which drops its locks, when the
 * kernel says the owner closed a descriptor of the file (FLUSH: POSIX
 * locks go at any close by their process) or when no open file it was
 * used through is left (RELEASE: an OFD lock's owner is that open file,
 * and nothing else releases it).
 *
 * Waiting (F_SETLKW, and a blocking flock) holds no session thread: the
 * request is tried once and, if the lock is held elsewhere, queued for
 * one thread of the mount that tries again with a short backoff until
 * it gets it or the request is interrupted.
 */
#include "mount_int.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <syslog.h>
#include <unistd.h>

/* Buckets of the owner table, by node. */
#define LK_BUCKETS 256

/* The waiting thread's backoff: from 1 ms, doubling, up to 10 ms. */
#define LK_PAUSE_MIN_NS (1000L * 1000)
#define LK_PAUSE_MAX_NS (10L * 1000 * 1000)

/* struct lk_owner - the lower descriptor of one (node, lock owner). */
struct lk_owner {
	struct lk_owner *next;     /* in its bucket; xlocks.lock */
	struct xnode *in;
	uint64_t owner;            /* the kernel's lock owner id */
	int fd;                    /* its own open file description */
	unsigned refs;             /* the table's (until dropped) + users' */
	pid_t pid;                 /* who last took a lock through it */
	size_t nvia;               /* open files it was used through */
	struct xhandle **via;
};

/* struct lk_wait - a queued wait (struct xm_lockwait, copied). */
struct lk_wait {
	struct lk_wait *next;
	struct xm_lockwait w;
};

/* struct xlocks - a mount's lock owners and waiters (m->locks). */
struct xlocks {
	pthread_mutex_t lock;
	struct lk_owner *bucket[LK_BUCKETS];
	struct lk_wait *waiting;   /* the waiting thread's queue */
	pthread_cond_t wake;       /* a wait queued, or stop */
	pthread_t thread;
	bool thread_on;
	bool stop;
};

/* Makes m->locks, once per mount, on first use. */
static pthread_mutex_t lk_make = PTHREAD_MUTEX_INITIALIZER;

/* The lock table of @m, made now if @make; NULL if none (or no memory). */
static struct xlocks *locks_of(struct xmount *m, bool make)
{
	struct xlocks *L = __atomic_load_n(&m->locks, __ATOMIC_ACQUIRE);
	pthread_condattr_t ca;

	if (L || !make)
		return L;
	pthread_mutex_lock(&lk_make);
	L = m->locks;
	if (!L) {
		L = calloc(1, sizeof(*L));
		if (L) {
			pthread_mutex_init(&L->lock, NULL);
			pthread_condattr_init(&ca);
			pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
			pthread_cond_init(&L->wake, &ca);
			pthread_condattr_destroy(&ca);
			__atomic_store_n(&m->locks, L, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&lk_make);
	return L;
}

static struct lk_owner **bucket_of(struct xlocks *L, const struct xnode *in)
{
	return &L->bucket[((uintptr_t)in >> 4) % LK_BUCKETS];
}

/* The owner @owner of @in in the table, or NULL; L->lock held. */
static struct lk_owner *owner_find(struct xlocks *L, const struct xnode *in,
				   uint64_t owner)
{
	struct lk_owner *o;

	for (o = *bucket_of(L, in); o; o = o->next)
		if (o->in == in && o->owner == owner)
			return o;
	return NULL;
}

/* Take @o out of the table; L->lock held. The caller puts the table's ref. */
static void owner_unlink(struct xlocks *L, struct lk_owner *o)
{
	struct lk_owner **pp;

	for (pp = bucket_of(L, o->in); *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			o->next = NULL;
			return;
		}
}

/*
 * Drop a reference to @o; L->lock held. The last one closes its
 * descriptor, which releases every lock taken on it.
 */
static void owner_put(struct lk_owner *o)
{
	if (--o->refs)
		return;
	close(o->fd);
	free(o->via);
	free(o);
}

/* Record that @o was used through open file @h; L->lock held. */
static int owner_via(struct lk_owner *o, struct xhandle *h)
{
	struct xhandle **v;

	for (size_t i = 0; i < o->nvia; i++)
		if (o->via[i] == h)
			return 0;
	v = realloc(o->via, (o->nvia + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[o->nvia++] = h;
	o->via = v;
	return 0;
}

/*
 * A new open file description of @in's lower file for a lock owner:
 * read-write if we may (a write lock needs it; the kernel has already
 * checked that the caller's own descriptor allows the lock it asks
 * for), else read-only (a read-only mount or lower file: read locks).
 */
static int owner_open(const struct xmount *m, const struct xnode *in)
{
	int fd = m->readonly ? -EROFS : reopen(in, O_RDWR | O_NOCTTY);

	if (fd == -EROFS || fd == -EACCES || fd == -EPERM || fd == -ETXTBSY)
		fd = reopen(in, O_RDONLY | O_NOCTTY);
	return fd;
}

/*
 * The descriptor of owner @owner of @h's node, with a reference, made
 * if @make (and recorded as used through @h); *@out NULL if it has none
 * and !@make.
 */
static int owner_get(struct xmount *m, struct xlocks *L, struct xhandle *h,
		     uint64_t owner, bool make, struct lk_owner **out)
{
	struct xnode *in = h->in;
	struct lk_owner *o, *fresh = NULL;
	int err = 0;

	pthread_mutex_lock(&L->lock);
	o = owner_find(L, in, owner);
	if (!o && make) {
		/* opened outside the table's lock: a network round trip */
		pthread_mutex_unlock(&L->lock);
		fresh = calloc(1, sizeof(*fresh));
		if (!fresh)
			return -ENOMEM;
		fresh->fd = owner_open(m, in);
		if (fresh->fd < 0) {
			err = fresh->fd;
			free(fresh);
			return err;
		}
		fresh->in = in;
		fresh->owner = owner;
		fresh->refs = 1; /* the table's */
		pthread_mutex_lock(&L->lock);
		o = owner_find(L, in, owner); /* made meanwhile? */
		if (!o) {
			struct lk_owner **b = bucket_of(L, in);

			fresh->next = *b;
			*b = fresh;
			o = fresh;
			fresh = NULL;
		}
	}
	if (o && make)
		err = owner_via(o, h);
	if (o && !err)
		o->refs++;
	if (fresh)
		owner_put(fresh);
	pthread_mutex_unlock(&L->lock);
	*out = err ? NULL : o;
	return err;
}

static void owner_release(struct xlocks *L, struct lk_owner *o)
{
	pthread_mutex_lock(&L->lock);
	owner_put(o);
	pthread_mutex_unlock(&L->lock);
}

/* F_SETLK's checks of a lock request (the kernel made them too). */
static int lk_valid(const struct flock *lk)
{
	if (lk->l_type != F_RDLCK && lk->l_type != F_WRLCK &&
	    lk->l_type != F_UNLCK)
		return -EINVAL;
	if (lk->l_whence != SEEK_SET || lk->l_start < 0 || lk->l_len < 0)
		return -EINVAL;
	return 0;
}

/* see mount.h */
int xm_setlk(struct xmount *m, struct xhandle *h, uint64_t owner,
	     const struct flock *lk)
{
	struct xlocks *L;
	struct lk_owner *o;
	struct flock l = *lk;
	int err = lk_valid(lk);

	if (err)
		return err;
	L = locks_of(m, lk->l_type != F_UNLCK);
	if (!L)
		return lk->l_type == F_UNLCK ? 0 : -ENOLCK;
	err = owner_get(m, L, h, owner, lk->l_type != F_UNLCK, &o);
	if (err)
		return err == -ENOMEM ? -ENOLCK : err;
	if (!o)
		return 0; /* an unlock by an owner that holds nothing here */
	l.l_pid = 0; /* F_OFD_*: must be 0 */
	err = fcntl(o->fd, F_OFD_SETLK, &l) ? -errno : 0;
	if (err == -EACCES)
		err = -EAGAIN; /* both mean "held": one answer */
	if (!err && lk->l_type != F_UNLCK) {
		pthread_mutex_lock(&L->lock);
		o->pid = lk->l_pid;
		pthread_mutex_unlock(&L->lock);
	}
	owner_release(L, o);
	return err;
}

/*
 * The process that holds conflicting lock @c (found through @mine, or
 * through the node's open file if @mine is NULL) for a request of
 * @type, if it took it through this mount: the owner of @in whose
 * descriptor sees no conflict over @c's range holds it (a query through
 * a descriptor ignores its own locks). Else 0: a lock of another mount
 * or machine, whose process we cannot know.
 */
static pid_t holder_pid(struct xlocks *L, struct xnode *in,
			const struct lk_owner *mine, const struct flock *c,
			short type)
{
	struct lk_owner *list[16], *o;
	size_t n = 0;
	pid_t pid = 0;

	pthread_mutex_lock(&L->lock);
	for (o = *bucket_of(L, in); o && n < sizeof(list) / sizeof(*list);
	     o = o->next)
		if (o->in == in && o != mine) {
			o->refs++;
			list[n++] = o;
		}
	pthread_mutex_unlock(&L->lock);
	for (size_t i = 0; i < n; i++) {
		struct flock q = *c;

		q.l_type = type;
		q.l_pid = 0;
		if (!pid && fcntl(list[i]->fd, F_OFD_GETLK, &q) == 0 &&
		    q.l_type == F_UNLCK) {
			pthread_mutex_lock(&L->lock);
			pid = list[i]->pid;
			pthread_mutex_unlock(&L->lock);
		}
	}
	pthread_mutex_lock(&L->lock);
	for (size_t i = 0; i < n; i++)
		owner_put(list[i]);
	pthread_mutex_unlock(&L->lock);
	return pid;
}

/* see mount.h */
int xm_getlk(struct xmount *m, struct xhandle *h, uint64_t owner,
	     struct flock *lk)
{
	struct xlocks *L = locks_of(m, false);
	struct lk_owner *o = NULL;
	struct flock l = *lk;
	short type = lk->l_type;
	int err = lk_valid(lk);

	if (err || type == F_UNLCK)
		return err ? err : -EINVAL;
	if (L) {
		err = owner_get(m, L, h, owner, false, &o);
		if (err)
			return err;
	}
	/*
	 * Without a descriptor of its own the owner holds no lock here:
	 * ask through the open file's, which never holds record locks.
	 */
	l.l_pid = 0;
	err = fcntl(o ? o->fd : h->fd, F_OFD_GETLK, &l) ? -errno : 0;
	if (!err) {
		l.l_pid = l.l_type == F_UNLCK || !L ? 0 :
			  holder_pid(L, h->in, o, &l, type);
		*lk = l;
	}
	if (o)
		owner_release(L, o);
	return err;
}

/* see mount.h */
void xm_lock_flush(struct xmount *m, struct xnode *in, uint64_t owner)
{
	struct xlocks *L = locks_of(m, false);
	struct lk_owner *o;

	if (!L)
		return;
	pthread_mutex_lock(&L->lock);
	o = owner_find(L, in, owner);
	if (o) {
		owner_unlink(L, o);
		owner_put(o);
	}
	pthread_mutex_unlock(&L->lock);
}

/* see mount.h */
void xm_lock_release(struct xmount *m, struct xhandle *h)
{
	struct xlocks *L = locks_of(m, false);
	struct lk_owner **pp, *o;

	if (!L)
		return;
	pthread_mutex_lock(&L->lock);
	for (pp = bucket_of(L, h->in); (o = *pp);) {
		size_t i;

		for (i = 0; o->in == h->in && i < o->nvia; i++)
			if (o->via[i] == h) {
				o->via[i] = o->via[--o->nvia];
				break;
			}
		if (o->in == h->in && !o->nvia) {
			*pp = o->next;
			o->next = NULL;
			owner_put(o);
		} else {
			pp = &o->next;
		}
	}
	pthread_mutex_unlock(&L->lock);
}

/* ---- waiting ------------------------------------------------------------ */

/* One try of @w: 0, -EAGAIN (held elsewhere) or another -errno. */
static int wait_try(struct xmount *m, const struct xm_lockwait *w)
{
	if (w->flock_op)
		return xm_flock(w->h, w->flock_op);
	return xm_setlk(m, w->h, w->owner, &w->lk);
}

static void pause_add(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	if (t->tv_nsec >= 1000L * 1000 * 1000) {
		t->tv_sec++;
		t->tv_nsec -= 1000L * 1000 * 1000;
	}
}

/* The waiting thread: tries every queued wait, then pauses. */
static void *waiter(void *arg)
{
	struct xmount *m = arg;
	struct xlocks *L = m->locks;
	long pause = LK_PAUSE_MIN_NS;

	pthread_mutex_lock(&L->lock);
	while (!L->stop) {
		struct lk_wait *list, **pp, *w;
		struct timespec until;

		if (!L->waiting) {
			pause = LK_PAUSE_MIN_NS;
			pthread_cond_wait(&L->wake, &L->lock);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		pause_add(&until, pause);
		pthread_cond_timedwait(&L->wake, &L->lock, &until);
		if (pause < LK_PAUSE_MAX_NS)
			pause = pause * 2 > LK_PAUSE_MAX_NS ? LK_PAUSE_MAX_NS :
				pause * 2;
		if (L->stop)
			break;
		/* tried without the lock held: they take it themselves */
		list = L->waiting;
		L->waiting = NULL;
		pthread_mutex_unlock(&L->lock);
		for (pp = &list; (w = *pp);) {
			int err = w->w.interrupted(w->w.arg) ? -EINTR :
				  wait_try(m, &w->w);

			if (err == -EAGAIN || err == -EWOULDBLOCK) {
				pp = &w->next;
				continue;
			}
			*pp = w->next;
			w->w.done(w->w.arg, err);
			free(w);
		}
		pthread_mutex_lock(&L->lock);
		if (list) { /* still waiting, before those queued meanwhile */
			for (pp = &list; *pp; pp = &(*pp)->next)
				;
			*pp = L->waiting;
			L->waiting = list;
		}
	}
	pthread_mutex_unlock(&L->lock);
	return NULL;
}

/* Start the waiting thread of @L if it is not running; L->lock held. */
static int waiter_start(struct xmount *m, struct xlocks *L)
{
	sigset_t all, old;
	int rc;

	if (L->thread_on)
		return 0;
	/* it takes no signals: they belong to the session loop */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&L->thread, NULL, waiter, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	L->thread_on = true;
	return 0;
}

/* see mount.h */
void xm_lock_wait(struct xmount *m, const struct xm_lockwait *w)
{
	struct xlocks *L;
	struct lk_wait *q;
	int err = wait_try(m, w);

	if (err != -EAGAIN && err != -EWOULDBLOCK) {
		w->done(w->arg, err);
		return;
	}
	L = locks_of(m, true);
	q = L ? calloc(1, sizeof(*q)) : NULL;
	if (!q) {
		w->done(w->arg, -ENOLCK);
		return;
	}
	q->w = *w;
	pthread_mutex_lock(&L->lock);
	err = L->stop ? -EINTR : waiter_start(m, L);
	if (!err) {
		q->next = L->waiting;
		L->waiting = q;
		pthread_cond_signal(&L->wake);
	}
	pthread_mutex_unlock(&L->lock);
	if (err) {
		xm_log(m, LOG_ERR, "cannot wait for a lock: %s", strerror(-err));
		w->done(w->arg, err == -EINTR ? -EINTR : -ENOLCK);
		free(q);
	}
}

/* see mount.h */
void xm_locks_end(struct xmount *m)
{
	struct xlocks *L = locks_of(m, false);
	struct lk_wait *w;
	bool joined;

	if (!L)
		return;
	pthread_mutex_lock(&L->lock);
	L->stop = true;
	joined = L->thread_on;
	L->thread_on = false;
	pthread_cond_broadcast(&L->wake);
	pthread_mutex_unlock(&L->lock);
	if (joined)
		pthread_join(L->thread, NULL);
	/* the session is ending: nobody waits any more */
	while ((w = L->waiting)) {
		L->waiting = w->next;
		w->w.done(w->w.arg, -EINTR);
		free(w);
	}
	for (size_t b = 0; b < LK_BUCKETS; b++) {
		struct lk_owner *o;

		while ((o = L->bucket[b])) {
			L->bucket[b] = o->next;
			o->refs = 1;
			owner_put(o);
		}
	}
	m->locks = NULL;
	pthread_cond_destroy(&L->wake);
	pthread_mutex_destroy(&L->lock);
	free(L);
}
