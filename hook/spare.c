// SPDX-License-Identifier: Apache-2.0
#include "spare.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#include "bigmem.h"

/* A few: a 10,000-rule policy frees about a dozen large blocks in all. */
#define MAX_SPARES 8

static struct {
	pthread_mutex_t lock; /* the thread that makes maps allocates too */
	void *block[MAX_SPARES];
	size_t size[MAX_SPARES]; /* what the block may hold: malloc_usable_size */
} spares = {.lock = PTHREAD_MUTEX_INITIALIZER};

void sg_spare_put(void *p)
{
	size_t size = p ? malloc_usable_size(p) : 0;

	/* bigmem keeps its blocks for the next one itself, in any size */
	if (size < SG_SPARE_MIN || sg_bigmem_owns(p)) {
		free(p);
		return;
	}
	pthread_mutex_lock(&spares.lock);
	for (size_t i = 0; i < MAX_SPARES; i++) {
		if (!spares.block[i]) {
			spares.block[i] = p;
			spares.size[i] = size;
			p = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&spares.lock);
	free(p); /* none free: the system takes it */
}

void *sg_spare_take(size_t size)
{
	void *p = NULL;
	size_t best = MAX_SPARES;

	if (size < SG_SPARE_MIN)
		return NULL;
	pthread_mutex_lock(&spares.lock);
	/*
	 * The smallest that fits, and not over twice the size: a large block
	 * stays for a large table (the policy's text, freed after parsing, for
	 * the compiled rules, not for an index a tenth its size).
	 */
	for (size_t i = 0; i < MAX_SPARES; i++)
		if (spares.block[i] && spares.size[i] >= size && spares.size[i] / 2 <= size &&
		    (best == MAX_SPARES || spares.size[i] < spares.size[best]))
			best = i;
	if (best < MAX_SPARES) {
		p = spares.block[best];
		spares.block[best] = NULL;
	}
	pthread_mutex_unlock(&spares.lock);
	return p;
}

void sg_spare_release(void)
{
	pthread_mutex_lock(&spares.lock);
	for (size_t i = 0; i < MAX_SPARES; i++) {
		free(spares.block[i]);
		spares.block[i] = NULL;
	}
	pthread_mutex_unlock(&spares.lock);
}
