/* SPDX-License-Identifier: Apache-2.0 */
/*
 * itable.c - the inode table (itable.h): chained hashing on the key,
 * doubled when it averages two nodes a bucket.
 */
#include "itable.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t mix64(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static size_t bucket_of(size_t size, unsigned kind, uint64_t k1, uint64_t k2)
{
	return (size_t)mix64(mix64(kind, k1), k2) & (size - 1);
}

static bool same_key(const struct itable_node *n, unsigned kind, uint64_t k1,
		     uint64_t k2)
{
	return n->kind == kind && n->k1 == k1 && n->k2 == k2;
}

/* see itable.h */
int itable_init(struct itable *t, size_t size)
{
	t->bucket = calloc(size, sizeof(*t->bucket));
	if (!t->bucket)
		return -ENOMEM;
	t->size = size;
	t->count = 0;
	t->high = 0;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

/* see itable.h */
void itable_destroy(struct itable *t, void (*free_node)(struct itable_node *))
{
	if (!t->bucket)
		return;
	for (size_t i = 0; i < t->size; i++) {
		struct itable_node *n = t->bucket[i], *next;

		for (; n; n = next) {
			next = n->next;
			if (free_node)
				free_node(n);
		}
	}
	free(t->bucket);
	t->bucket = NULL;
	pthread_mutex_destroy(&t->lock);
}

/* Double the buckets; on no memory keep the old, slower table. Locked. */
static void grow(struct itable *t)
{
	size_t nsize = t->size * 2;
	struct itable_node **nb = calloc(nsize, sizeof(*nb));

	if (!nb)
		return;
	for (size_t i = 0; i < t->size; i++) {
		struct itable_node *n = t->bucket[i], *next;

		for (; n; n = next) {
			size_t b = bucket_of(nsize, n->kind, n->k1, n->k2);

			next = n->next;
			n->next = nb[b];
			nb[b] = n;
		}
	}
	free(t->bucket);
	t->bucket = nb;
	t->size = nsize;
}

/* The node of key (@kind, @k1, @k2) in bucket @b, or NULL. Locked. */
static struct itable_node *find(struct itable *t, size_t b, unsigned kind,
				uint64_t k1, uint64_t k2)
{
	struct itable_node *n;

	for (n = t->bucket[b]; n; n = n->next)
		if (same_key(n, kind, k1, k2))
			return n;
	return NULL;
}

/* see itable.h */
struct itable_node *itable_ref(struct itable *t, unsigned kind, uint64_t k1,
			       uint64_t k2)
{
	struct itable_node *n;

	pthread_mutex_lock(&t->lock);
	n = find(t, bucket_of(t->size, kind, k1, k2), kind, k1, k2);
	if (n)
		n->nlookup++;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* see itable.h */
void itable_hold(struct itable *t, struct itable_node *n)
{
	pthread_mutex_lock(&t->lock);
	n->nlookup++;
	pthread_mutex_unlock(&t->lock);
}

/* see itable.h */
struct itable_node *itable_insert(struct itable *t, struct itable_node *n)
{
	struct itable_node *old;
	size_t b;

	pthread_mutex_lock(&t->lock);
	b = bucket_of(t->size, n->kind, n->k1, n->k2);
	old = find(t, b, n->kind, n->k1, n->k2);
	if (old) {
		old->nlookup++;
		pthread_mutex_unlock(&t->lock);
		return old;
	}
	n->nlookup = 1;
	n->next = t->bucket[b];
	t->bucket[b] = n;
	if (++t->count > t->high)
		t->high = t->count;
	if (t->count > t->size * 2)
		grow(t);
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* see itable.h */
bool itable_forget(struct itable *t, struct itable_node *n, uint64_t count)
{
	struct itable_node **pp;

	pthread_mutex_lock(&t->lock);
	if (n->nlookup > count) {
		n->nlookup -= count;
		pthread_mutex_unlock(&t->lock);
		return false;
	}
	for (pp = &t->bucket[bucket_of(t->size, n->kind, n->k1, n->k2)];
	     *pp; pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			t->count--;
			break;
		}
	n->nlookup = 0;
	pthread_mutex_unlock(&t->lock);
	return true;
}

/* see itable.h */
bool itable_shrunk(struct itable *t, size_t min)
{
	bool shrunk;

	pthread_mutex_lock(&t->lock);
	shrunk = t->high >= min && t->count <= t->high / 4;
	if (shrunk)
		t->high = t->count;
	pthread_mutex_unlock(&t->lock);
	return shrunk;
}

/* see itable.h */
size_t itable_count(struct itable *t)
{
	size_t c;

	pthread_mutex_lock(&t->lock);
	c = t->count;
	pthread_mutex_unlock(&t->lock);
	return c;
}

/* see itable.h */
size_t itable_snapshot(struct itable *t, struct itable_node **out, size_t max)
{
	size_t got = 0;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->size && got < max; i++)
		for (struct itable_node *n = t->bucket[i]; n && got < max;
		     n = n->next) {
			n->nlookup++;
			out[got++] = n;
		}
	pthread_mutex_unlock(&t->lock);
	return got;
}
