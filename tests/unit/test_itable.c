/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_itable.c - the inode table alone: keys of every kind, references
 * counted exactly, a second insert of a key finds the first, growth
 * keeps every node findable, forget frees only at the last reference,
 * destroy hands back every node still in (the sanitizer build checks
 * that nothing leaks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "itable.h"
#include "testutil.h"

#define N 20000

struct node {
	struct itable_node n; /* first */
	int id;
};

static int freed;

static void free_node(struct itable_node *n)
{
	freed++;
	free(n);
}

static struct node *mk(unsigned kind, uint64_t k1, uint64_t k2, int id)
{
	struct node *x = calloc(1, sizeof(*x));

	if (!x)
		abort();
	x->n.kind = kind;
	x->n.k1 = k1;
	x->n.k2 = k2;
	x->id = id;
	return x;
}

int main(void)
{
	static struct node *nodes[N];
	struct itable t;
	struct itable_node *got;
	struct node *dup;
	size_t i;

	CHECK(itable_init(&t, 4) == 0, "init");
	CHECK(itable_ref(&t, 0, 1, 2) == NULL, "empty table finds nothing");
	/* keys differing in one part each: kind, k1, k2 */
	for (i = 0; i < N; i++) {
		nodes[i] = mk((unsigned)(i % 3), i / 3, i % 7, (int)i);
		got = itable_insert(&t, &nodes[i]->n);
		CHECK(got == &nodes[i]->n && got->nlookup == 1,
		      "insert %zu: new node, one reference", i);
	}
	CHECK(itable_count(&t) == N, "count %zu", itable_count(&t));
	/* found after many growths, with the reference taken */
	for (i = 0; i < N; i++) {
		got = itable_ref(&t, (unsigned)(i % 3), i / 3, i % 7);
		CHECK(got == &nodes[i]->n && got->nlookup == 2,
		      "ref %zu after growth", i);
	}
	CHECK(itable_ref(&t, 3, 0, 0) == NULL, "unknown kind");
	CHECK(itable_ref(&t, 0, 0, 6) == NULL, "unknown k2");
	/* a second insert of a key gives the first node; the caller frees */
	dup = mk(1, 1 / 3, 1 % 7, -1);
	got = itable_insert(&t, &dup->n);
	CHECK(got == &nodes[1]->n && got->nlookup == 3, "duplicate insert");
	free(dup);
	itable_hold(&t, &nodes[1]->n);
	CHECK(nodes[1]->n.nlookup == 4, "hold");
	/* forget frees only at the last reference */
	CHECK(!itable_forget(&t, &nodes[1]->n, 3), "forget 3 of 4");
	CHECK(itable_ref(&t, 1, 0, 1) == &nodes[1]->n, "still there");
	CHECK(itable_forget(&t, &nodes[1]->n, 2), "forget the last 2");
	CHECK(itable_ref(&t, 1, 0, 1) == NULL, "gone");
	free(nodes[1]);
	/* more than held: all of them (the kernel's counts are the truth) */
	CHECK(itable_forget(&t, &nodes[2]->n, 100), "forget past the count");
	CHECK(itable_ref(&t, 2, 0, 2) == NULL, "gone too");
	free(nodes[2]);
	CHECK(itable_count(&t) == N - 2, "count after forgets");
	/* shrunk: once down to a quarter of the most it held, said once */
	CHECK(!itable_shrunk(&t, 4096), "not shrunk at %zu", itable_count(&t));
	for (i = 3; i < 3 + 15000; i++) {
		CHECK(itable_forget(&t, &nodes[i]->n, 2), "forget %zu", i);
		free(nodes[i]);
	}
	CHECK(!itable_shrunk(&t, 1u << 30), "never that many");
	CHECK(itable_shrunk(&t, 4096), "shrunk at %zu", itable_count(&t));
	CHECK(!itable_shrunk(&t, 4096), "said once");
	/* the rest is handed back once each */
	itable_destroy(&t, free_node);
	CHECK(freed == N - 2 - 15000, "destroy freed %d", freed);
	if (test_failures) {
		printf("test_itable: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_itable: all passed\n");
	return 0;
}
