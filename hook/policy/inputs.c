// SPDX-License-Identifier: Apache-2.0
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "policy/inputs.h"

#include <elf.h>
#include <link.h>
#include <string.h>

#include "base/siphash.h"

void sg_inputs_init(struct sg_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->build_id_len = sg_build_id(in->build_id, sizeof(in->build_id));
	/* Another build may compile the same text differently. */
	if (in->build_id_len == 0)
		in->uncacheable = true;
	sg_inputs_add(in, "build", in->build_id, in->build_id_len);
}

void sg_inputs_add(struct sg_inputs *in, const char *what, const void *data, size_t len)
{
	if (in->n == SG_INPUTS_MAX) {
		in->uncacheable = true;
		return;
	}
	in->items[in->n++] = (struct sg_input){.what = what, .data = data, .len = data ? len : 0};
}

void sg_inputs_add_str(struct sg_inputs *in, const char *what, const char *text)
{
	sg_inputs_add(in, what, text, text ? strlen(text) : 0);
}

bool sg_inputs_digest(const struct sg_inputs *in, const uint64_t key[2], uint64_t *out)
{
	struct sg_siphash h;

	if (in->uncacheable)
		return false;
	sg_siphash_init(&h, key);
	for (size_t i = 0; i < in->n; i++) {
		const struct sg_input *item = &in->items[i];
		uint8_t present = item->data != NULL;
		uint64_t len = item->len;
		sg_siphash_update(&h, item->what, strlen(item->what) + 1);
		sg_siphash_update(&h, &present, sizeof(present));
		sg_siphash_update(&h, &len, sizeof(len));
		if (present)
			sg_siphash_update(&h, item->data, item->len);
	}
	*out = sg_siphash_final(&h);
	return true;
}

struct build_id_search {
	uint8_t *out;
	size_t max, len;
};

/* The NT_GNU_BUILD_ID note among the notes at [p, end). */
static size_t find_build_id(const uint8_t *p, const uint8_t *end, uint8_t *out, size_t max)
{
	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)p;
		size_t name_len = (note->n_namesz + 3) & ~(size_t)3;
		size_t desc_len = (note->n_descsz + 3) & ~(size_t)3;
		const uint8_t *name = p + sizeof(*note), *desc = name + name_len;
		if (desc + desc_len > end)
			return 0;
		if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 && note->n_descsz <= max) {
			memcpy(out, desc, note->n_descsz);
			return note->n_descsz;
		}
		p = desc + desc_len;
	}
	return 0;
}

/* The first object dl_iterate_phdr reports is the executable itself. */
static int search_executable(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct build_id_search *s = arg;
	(void)size;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum && s->len == 0; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *start = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		s->len = find_build_id(start, start + ph->p_memsz, s->out, s->max);
	}
	return 1;
}

size_t sg_build_id(uint8_t *out, size_t max)
{
	struct build_id_search s = {.out = out, .max = max};
	dl_iterate_phdr(search_executable, &s);
	return s.len;
}
