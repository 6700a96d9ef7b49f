// SPDX-License-Identifier: Apache-2.0
#include "kernel/vacancy.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

uint32_t sg_vacancy_pages_for(uint32_t need)
{
	return need + need / 8 + 1;
}

static void program_dir(const struct sg_program *prog, char dir[PATH_MAX])
{
	snprintf(dir, PATH_MAX, "%s/%s", SG_PROGRAM_ROOT, prog->key);
}

/* "vacant-SLOT-PAGES": its slot and pages, or false for any other name. */
static bool parse_vacancy(const char *name, uint32_t *slot, uint32_t *pages)
{
	unsigned s, p;
	int end = 0;

	if (strncmp(name, SG_VACANCY_PREFIX, strlen(SG_VACANCY_PREFIX)) != 0 ||
	    sscanf(name + strlen(SG_VACANCY_PREFIX), "%u-%u%n", &s, &p, &end) != 2 ||
	    name[strlen(SG_VACANCY_PREFIX) + (size_t)end] != '\0' || s == 0 || p == 0)
		return false;
	*slot = s;
	*pages = p;
	return true;
}

/* More than a program has: one per size class (32 at most). */
#define MAX_LISTED 64

struct vacancy {
	char name[NAME_MAX + 1];
	uint32_t slot, pages;
};

/* The vacancies of @prog into @out, MAX_LISTED at most; returns how many. */
static size_t list_vacancies(const struct sg_program *prog, struct vacancy out[MAX_LISTED])
{
	char dir[PATH_MAX];
	size_t n = 0;

	program_dir(prog, dir);
	DIR *d = opendir(dir);
	for (struct dirent *de; d && n < MAX_LISTED && (de = readdir(d));) {
		struct vacancy *v = &out[n];
		if (!parse_vacancy(de->d_name, &v->slot, &v->pages))
			continue;
		snprintf(v->name, sizeof(v->name), "%s", de->d_name);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

static unsigned size_class(uint32_t pages)
{
	return 31u - (unsigned)__builtin_clz(pages);
}

/* The pages of map @fd, an array of pages; 0 for any other map. */
static uint32_t pages_of(int fd)
{
	struct bpf_map_info info = {0};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || info.value_size != SG_PAGE_SIZE)
		return 0;
	return info.max_entries;
}

bool sg_vacancy_has_room(const struct sg_program *prog, int fd)
{
	struct vacancy v[MAX_LISTED];
	size_t n = list_vacancies(prog, v);
	uint32_t pages = pages_of(fd);

	if (pages == 0 || n >= MAX_LISTED)
		return false;
	for (size_t i = 0; i < n; i++)
		if (size_class(v[i].pages) == size_class(pages))
			return false;
	return true;
}

/* The smallest of @v[0..@n) with @need to 2 * @need pages, or NULL. */
static const struct vacancy *best_fit(const struct vacancy *v, size_t n, uint32_t need)
{
	const struct vacancy *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (v[i].pages >= need && v[i].pages / 2 <= need &&
		    (!best || v[i].pages < best->pages))
			best = &v[i];
	return best;
}

int sg_vacancy_take(const struct sg_program *prog, uint32_t need, const char *key, const char *path,
		    int *fd, uint32_t *slot)
{
	struct vacancy v[MAX_LISTED];
	char dir[PATH_MAX], from[PATH_MAX];
	char holder[SG_KEY_LEN] = {0};

	program_dir(prog, dir);
	/*
	 * Another hook may take the one picked first: then the next, from a new
	 * list, a few times; after that, making a map is as quick.
	 */
	for (int attempt = 0; attempt < 4; attempt++) {
		const struct vacancy *pick = best_fit(v, list_vacancies(prog, v), need);
		if (!pick)
			return 0;
		snprintf(from, sizeof(from), "%s/%s", dir, pick->name);
		if (rename(from, path) < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		*fd = bpf_obj_get(path);
		if (*fd < 0)
			return -errno;
		if (pages_of(*fd) < pick->pages) /* not what its name says */
			return -EPROTO;
		snprintf(holder, sizeof(holder), "%s", key);
		if (bpf_map_update_elem(prog->slots_fd, &pick->slot, holder, BPF_EXIST) < 0)
			return -errno;
		*slot = pick->slot;
		return 1;
	}
	return 0;
}

int sg_vacancy_make(const struct sg_program *prog, uint32_t slot, int fd)
{
	char path[PATH_MAX], dir[PATH_MAX];
	char holder[SG_KEY_LEN] = SG_VACANT;

	program_dir(prog, dir);
	snprintf(path, sizeof(path), "%s/" SG_VACANCY_PREFIX "%u-%u", dir, slot, pages_of(fd));
	if (bpf_obj_pin(fd, path) < 0)
		return -errno;
	if (bpf_map_update_elem(prog->slots_fd, &slot, holder, BPF_EXIST) < 0) {
		int e = errno;
		unlink(path);
		return -e;
	}
	return 0;
}

/* Whether a vacancy of @prog is pinned at @slot; @unpin: unpins it too. */
static bool vacancy_at(const struct sg_program *prog, uint32_t slot, bool unpin)
{
	struct vacancy v[MAX_LISTED];
	char dir[PATH_MAX], path[PATH_MAX];
	size_t n = list_vacancies(prog, v);
	bool found = false;

	program_dir(prog, dir);
	for (size_t i = 0; i < n; i++) {
		if (v[i].slot != slot)
			continue;
		found = true;
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
		if (unpin)
			unlink(path);
	}
	return found;
}

bool sg_vacancy_pinned(const struct sg_program *prog, uint32_t slot)
{
	return vacancy_at(prog, slot, false);
}

void sg_vacancy_unpin(const struct sg_program *prog, uint32_t slot)
{
	vacancy_at(prog, slot, true);
}
