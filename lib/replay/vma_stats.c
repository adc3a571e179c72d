/*
 * The VMA replayer's statistics: what VmaReplay printed (text), or one
 * JSON object.
 */
#include "vma.h"
#include "vma_replay_internal.h"

#include <time.h>

double vmar_seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *mib(char *out, size_t cap, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		snprintf(out, cap, "%.2f GiB", (double)bytes / (1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(out, cap, "%.2f MiB", (double)bytes / (1ull << 20));
	else if (bytes >= 1024)
		snprintf(out, cap, "%.2f KiB", (double)bytes / 1024);
	else
		snprintf(out, cap, "%llu B", (unsigned long long)bytes);
	return out;
}

uint64_t vmar_total_warnings(const replay *r)
{
	uint64_t n = 0;
	for (int k = 0; k < W_COUNT; k++)
		n += r->warnings[k];
	return n;
}

static void json_string(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(o, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(o, "\\u%04x", ch);
		else
			fputc(ch, o);
	}
	fputc('"', o);
}

static void json_memory(FILE *o, const vkd_memory_stats *s)
{
	fprintf(o, "\"device_memory_allocations\": %llu, \"device_memory_bytes\": %llu, "
		"\"dedicated_allocations\": %llu, \"peak_device_memory_bytes\": %llu, "
		"\"allocations\": %llu, \"allocation_bytes\": %llu, \"peak_bytes_in_use\": %llu",
		(unsigned long long)s->memory_allocations, (unsigned long long)s->memory_bytes,
		(unsigned long long)s->dedicated, (unsigned long long)s->memory_peak,
		(unsigned long long)s->allocations, (unsigned long long)s->allocation_bytes,
		(unsigned long long)s->used_peak);
}

void vmar_print_json(const replay *r, FILE *o)
{
	const vkd_device *d = &r->dev;
	char f1[160], f2[160];
	vkd_memory_stats all = {0};
	for (uint32_t h = 0; h < d->memory.memoryHeapCount; h++) {
		all.memory_allocations += d->heap_stats[h].memory_allocations;
		all.memory_bytes += d->heap_stats[h].memory_bytes;
		all.dedicated += d->heap_stats[h].dedicated;
		all.memory_peak += d->heap_stats[h].memory_peak;
		all.allocations += d->heap_stats[h].allocations;
		all.allocation_bytes += d->heap_stats[h].allocation_bytes;
		all.used_peak += d->heap_stats[h].used_peak;
	}
	fprintf(o, "{\n  \"device\": {\"gpu\": %u, \"name\": ", d->gpu);
	json_string(o, d->props.deviceName);
	fprintf(o, "},\n  \"playback_seconds\": %.6f,\n  \"calls\": %llu,\n"
		"  \"calls_per_second\": %.0f,\n", r->playback, (unsigned long long)r->calls,
		r->playback > 0 ? (double)r->calls / r->playback : 0.0);
	fprintf(o, "  \"recording\": {\"version\": ");
	json_string(o, r->version);
	fprintf(o, ", \"seconds\": %.3f, \"threads\": %zu},\n",
		r->t_seen ? r->t_last - r->t_first : 0.0, r->nthreads);
	fprintf(o, "  \"created\": {\"allocations\": %llu, \"buffers\": %llu, \"images\": %llu, "
		"\"pools\": %llu, \"lost_allocations\": %llu},\n",
		(unsigned long long)r->allocations, (unsigned long long)r->buffers,
		(unsigned long long)r->images, (unsigned long long)r->pools_made,
		(unsigned long long)r->lost);
	fprintf(o, "  \"failed\": %llu,\n  \"made_lost\": %llu,\n  \"defragmentations\": %llu,\n"
		"  \"maps\": %llu,\n  \"flushes\": %llu,\n  \"warnings\": %llu,\n"
		"  \"validation_errors\": %llu,\n",
		(unsigned long long)r->failed, (unsigned long long)r->made_lost,
		(unsigned long long)r->defrags_done, (unsigned long long)r->maps,
		(unsigned long long)r->flushes, (unsigned long long)vmar_total_warnings(r),
		(unsigned long long)d->msgs->errors);
	fprintf(o, "  \"functions\": {");
	bool first = true;
	for (int k = FN_CREATE_ALLOCATOR; k < FN_COUNT; k++) {
		if (!r->fn_calls[k])
			continue;
		fprintf(o, "%s\"%s\": %llu", first ? "" : ", ", vmar_fn_names[k],
			(unsigned long long)r->fn_calls[k]);
		first = false;
	}
	fprintf(o, "},\n  \"device_memory\": {");
	json_memory(o, &all);
	fprintf(o, "},\n  \"memory_types\": [");
	for (uint32_t t = 0; t < d->memory.memoryTypeCount; t++) {
		fprintf(o, "%s\n    {\"index\": %u, \"heap\": %u, \"flags\": \"%s\", ", t ? "," : "",
			t, d->memory.memoryTypes[t].heapIndex,
			vkd_memory_flags_name(f1, sizeof(f1), d->memory.memoryTypes[t].propertyFlags));
		json_memory(o, &d->type_stats[t]);
		fputc('}', o);
	}
	fprintf(o, "\n  ],\n  \"heaps\": [");
	for (uint32_t h = 0; h < d->memory.memoryHeapCount; h++) {
		fprintf(o, "%s\n    {\"index\": %u, \"size\": %llu, \"flags\": \"%s\", ", h ? "," : "",
			h, (unsigned long long)d->memory.memoryHeaps[h].size,
			vkd_heap_flags_name(f1, sizeof(f1), d->memory.memoryHeaps[h].flags));
		json_memory(o, &d->heap_stats[h]);
		fputc('}', o);
	}
	fprintf(o, "\n  ],\n  \"translation\": [");
	for (uint32_t t = 0; t < r->rec.memoryTypeCount; t++) {
		uint32_t to = r->translate[t];
		fprintf(o, "%s\n    {\"recorded\": %u, \"recorded_heap\": %u, \"recorded_flags\": "
			"\"%s\", \"replay\": %u, \"replay_heap\": %u, \"replay_flags\": \"%s\"}",
			t ? "," : "", t, r->rec.memoryTypes[t].heapIndex,
			vkd_memory_flags_name(f1, sizeof(f1), r->rec.memoryTypes[t].propertyFlags), to,
			d->memory.memoryTypes[to].heapIndex,
			vkd_memory_flags_name(f2, sizeof(f2), d->memory.memoryTypes[to].propertyFlags));
	}
	fprintf(o, "%s]\n}\n", r->rec.memoryTypeCount ? "\n  " : "");
}

void vmar_print_text(const replay *r, FILE *o)
{
	const vkd_device *d = &r->dev;
	char a[32], b[32], c2[32], f1[160], f2[160];
	uint64_t count = 0, bytes = 0;
	for (uint32_t h = 0; h < d->memory.memoryHeapCount; h++) {
		count += d->heap_stats[h].memory_allocations;
		bytes += d->heap_stats[h].memory_bytes;
	}
	fprintf(o, "Device: %s (GPU %u)\n", d->props.deviceName, d->gpu);
	fprintf(o, "Playback time: %.3f s (%llu calls, %.0f calls/s)\n", r->playback,
		(unsigned long long)r->calls,
		r->playback > 0 ? (double)r->calls / r->playback : 0.0);
	fprintf(o, "Recording (format %s): %.3f s, %zu thread%s\n", r->version, r->t_seen ? r->t_last - r->t_first : 0.0,
		r->nthreads, r->nthreads == 1 ? "" : "s");
	fprintf(o, "Created: %llu allocations, %llu buffers, %llu images, %llu pools, "
		"%llu lost allocations\n", (unsigned long long)r->allocations,
		(unsigned long long)r->buffers, (unsigned long long)r->images,
		(unsigned long long)r->pools_made, (unsigned long long)r->lost);
	if (r->failed || r->made_lost || r->defrags_done)
		fprintf(o, "Not made on this device: %llu; made lost: %llu; defragmentations: %llu "
			"(not replayed: allocations stay in place)\n", (unsigned long long)r->failed,
			(unsigned long long)r->made_lost, (unsigned long long)r->defrags_done);
	fprintf(o, "Device memory allocations: %llu, %s in total\n", (unsigned long long)count,
		mib(a, sizeof(a), bytes));
	for (uint32_t t = 0; t < d->memory.memoryTypeCount; t++) {
		const vkd_memory_stats *s = &d->type_stats[t];
		fprintf(o, "  memory type %u (heap %u, %s): %llu device memory allocations, %s; "
			"%llu allocations, %s\n", t, d->memory.memoryTypes[t].heapIndex,
			vkd_memory_flags_name(f1, sizeof(f1), d->memory.memoryTypes[t].propertyFlags),
			(unsigned long long)s->memory_allocations, mib(a, sizeof(a), s->memory_bytes),
			(unsigned long long)s->allocations, mib(b, sizeof(b), s->allocation_bytes));
	}
	for (uint32_t h = 0; h < d->memory.memoryHeapCount; h++) {
		const vkd_memory_stats *s = &d->heap_stats[h];
		fprintf(o, "  heap %u (%s, %s): %llu device memory allocations, %s; peak device "
			"memory %s; peak in use %s\n", h,
			mib(c2, sizeof(c2), d->memory.memoryHeaps[h].size),
			vkd_heap_flags_name(f1, sizeof(f1), d->memory.memoryHeaps[h].flags),
			(unsigned long long)s->memory_allocations, mib(a, sizeof(a), s->memory_bytes),
			mib(b, sizeof(b), s->memory_peak), mib(f2, sizeof(f2), s->used_peak));
	}
	if (!r->rec.memoryTypeCount) {
		fprintf(o, "Memory types: the recording does not list its own; types chosen by "
			"flags only\n");
	} else {
		fprintf(o, "Memory type translation (recorded -> replay):\n");
		for (uint32_t t = 0; t < r->rec.memoryTypeCount; t++) {
			uint32_t to = r->translate[t];
			fprintf(o, "  %u (heap %u, %s) -> %u (heap %u, %s)\n", t,
				r->rec.memoryTypes[t].heapIndex,
				vkd_memory_flags_name(f1, sizeof(f1), r->rec.memoryTypes[t].propertyFlags),
				to, d->memory.memoryTypes[to].heapIndex,
				vkd_memory_flags_name(f2, sizeof(f2), d->memory.memoryTypes[to].propertyFlags));
		}
	}
	if (vmar_total_warnings(r))
		fprintf(o, "Warnings: %llu\n", (unsigned long long)vmar_total_warnings(r));
}