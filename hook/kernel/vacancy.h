/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Vacancies: maps of tables left placed in their slots of the program's
 * outer map when gc frees their policy, for a new policy to take over.
 *
 * Placing a map in an outer map returns only after an RCU grace period (the
 * kernel waits until no program can still see what the slot held), which
 * is most of what a new policy costs a container's start. A new policy that
 * takes a vacancy of its size updates no outer map: it fills the map through
 * a mapping and its slot is ready.
 *
 * A vacancy is pinned in its program's directory as "vacant-SLOT-PAGES"; its
 * slot's holder (the slots map) is SG_VACANT. A hook takes it by renaming
 * the pin, which one hook only can do; gc makes them, holding the pins lock
 * exclusively, so no hook takes one meanwhile.
 */
#ifndef SG_VACANCY_H
#define SG_VACANCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/program.h"

#define SG_VACANT	  "vacant" /* a vacancy's slot holder: no policy key is this */
#define SG_VACANCY_PREFIX "vacant-"

/*
 * The pages to make a policy's map of tables with, for @need: an eighth
 * more, so that, made a vacancy, it fits a policy a little larger.
 */
uint32_t sg_vacancy_pages_for(uint32_t need);

/*
 * Takes the smallest vacancy of @prog with at least @need pages, and at most
 * twice that: renames its pin to @path and opens it into *@fd, and sets its
 * slot's holder to @key into *@slot. 1 when taken, 0 when none fits, or -errno.
 */
int sg_vacancy_take(const struct sg_program *prog, uint32_t need, const char *key, const char *path,
		    int *fd, uint32_t *slot);

/*
 * Whether @prog has room for map @fd as a vacancy: a program keeps one per
 * size class (from 2^k to 2^(k+1) - 1 pages), as their memory is held while
 * they wait: at most about four times the largest.
 */
bool sg_vacancy_has_room(const struct sg_program *prog, int fd);

/*
 * Makes map @fd, placed at @slot of @prog's outer map of tables, a vacancy:
 * 0 or -errno. The caller holds the pins lock exclusively, has made sure no
 * policy names the map, and that there is room for it.
 */
int sg_vacancy_make(const struct sg_program *prog, uint32_t slot, int fd);

/* Whether a vacancy of @prog is pinned at @slot. */
bool sg_vacancy_pinned(const struct sg_program *prog, uint32_t slot);

/* Unpins the vacancy of @prog at @slot, if there is one (its slot is freed). */
void sg_vacancy_unpin(const struct sg_program *prog, uint32_t slot);

#endif
