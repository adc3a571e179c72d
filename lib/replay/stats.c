/*
 * Statistics (--stats): the time of each function's records, and what
 * a replay prints at its end, as text or JSON.
 */
#include "replay_internal.h"


static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median, 99th percentile and maximum of N values, in milliseconds;
 * the sum in seconds. */
typedef struct spread {
	double med, p99, max, sum;
} spread;

static spread spread_of(const double *v, size_t n)
{
	spread sp = {0};
	if (!n)
		return sp;
	double *s = trace_xcalloc(n, sizeof(double));
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	for (size_t i = 0; i < n; i++)
		sp.sum += s[i];
	sp.med = s[n / 2] * 1e3;
	sp.p99 = s[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] * 1e3;
	sp.max = s[n - 1] * 1e3;
	free(s);
	return sp;
}

typedef struct fn_time {
	const char *name;
	uint64_t ticks;  /* vkr_ticks */
	double seconds;  /* at the end */
	uint64_t calls;
} fn_time;

static fn_time *time_of(vkr *r, const trace_func_sig *sig)
{
	size_t slot = trace_ptr_slot(sig, SIG_CACHE_BITS);
	if (r->sig_cache.time_sig[slot] == sig)
		return &r->times[r->sig_cache.time[slot]];
	uint64_t *at = tmap_at(&r->time_of, (uint64_t)(uintptr_t)sig, TAG_TIME);
	size_t i;
	r->sig_cache.time_sig[slot] = sig;
	if (at) {
		i = *at;
	} else {
		/* a name seen under another signature (a trace may define a
		 * function twice) shares its entry */
		for (i = 0; i < r->ntimes && strcmp(r->times[i].name, sig->name); i++)
			;
		if (i == r->ntimes) {
			if (r->ntimes == r->captimes) {
				r->captimes = r->captimes ? 2 * r->captimes : 64;
				r->times = trace_xrealloc(r->times, r->captimes * sizeof(*r->times));
			}
			r->times[r->ntimes++] = (fn_time){.name = sig->name};
		}
		tmap_set(&r->time_of, (uint64_t)(uintptr_t)sig, TAG_TIME, i);
	}
	r->sig_cache.time[slot] = (uint32_t)i;
	return &r->times[i];
}

void vkr_time_note(vkr *r, const trace_func_sig *sig, uint64_t ticks)
{
	r->records_ticks += ticks;
	/* a wait put off to this record (ahead.c) counts as its own */
	if (r->ahead_lazy_ticks && r->ahead_lazy_sig) {
		uint64_t lazy = r->ahead_lazy_ticks < ticks ? r->ahead_lazy_ticks : ticks;
		time_of(r, r->ahead_lazy_sig)->ticks += lazy;
		ticks -= lazy;
		r->ahead_lazy_ticks = 0;
	}
	fn_time *t = time_of(r, sig);
	t->ticks += ticks;
	t->calls++;
}

void vkr_times_free(vkr *r)
{
	free(r->times);
	r->times = NULL;
	r->ntimes = r->captimes = 0;
	tmap_free(&r->time_of);
	memset(r->sig_cache.time_sig, 0, sizeof(r->sig_cache.time_sig));
}

static int by_seconds(const void *a, const void *b)
{
	double x = ((const fn_time *)a)->seconds, y = ((const fn_time *)b)->seconds;
	return x > y ? -1 : x < y;
}

/* The functions whose records took the most time, at most TOP_TIMES of
 * them: where a replay's time goes (a driver's pipeline compiles, waits
 * on fences the capture waited on, memory updates). */
#define TOP_TIMES 10

static void print_times(vkr *r, FILE *o, bool json, double span)
{
	for (size_t i = 0; i < r->ntimes; i++)
		r->times[i].seconds = vkr_ticks_s(r, r->times[i].ticks);
	double frames_records_s = vkr_ticks_s(r, r->frames_records_ticks);
	double frames_driver_s = vkr_ticks_s(r, r->frames_driver_ticks);
	qsort(r->times, r->ntimes, sizeof(*r->times), by_seconds);
	size_t n = r->ntimes < TOP_TIMES ? r->ntimes : TOP_TIMES;
	double all = 0;
	for (size_t i = 0; i < r->ntimes; i++)
		all += r->times[i].seconds;
	if (json) {
		/* every function: a tool reading it picks its own */
		fprintf(o, "\"records_seconds\": %.6f, \"frames_records_seconds\": %.6f, "
			"\"frames_driver_seconds\": %.6f, \"frames_seconds\": %.6f, \"by_function\": [",
			all, frames_records_s, frames_driver_s, span);
		for (size_t i = 0; i < r->ntimes; i++)
			fprintf(o, "%s{\"function\": \"%s\", \"ms\": %.3f, \"calls\": %llu}",
				i ? ", " : "", r->times[i].name, r->times[i].seconds * 1e3,
				(unsigned long long)r->times[i].calls);
		fprintf(o, "], ");
		return;
	}
	fprintf(o, "time in records:   %.3f s of the frames' %.3f s (the rest: reading the trace, "
		"frame ends); %.3f s of it in the driver's calls for the program's records (those "
		"of the generic path and the submits)\n", frames_records_s, span, frames_driver_s);
	fprintf(o, "time by function (the %zu longest, the records after the last frame too; "
		"checks, decoding and the driver's work):\n", n);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "  %-40s %10.3f ms %8llu calls %10.2f us each\n", r->times[i].name,
			r->times[i].seconds * 1e3, (unsigned long long)r->times[i].calls,
			r->times[i].seconds * 1e6 / (double)r->times[i].calls);
}

void vkr_print_stats(vkr *r, double total)
{
	double span = r->frames_done ? r->t_last_frame - r->t_first_frame : 0;
	double fps = span > 0 ? (double)r->frames_done / span : 0;
	spread cpu = spread_of(r->frame_times, r->nframe_times);
	/* frames whose batches were never timed (none, or a family without
	 * timestamps alone) count 0 */
	bool gpu = r->frame_gpu && !r->gpu_unmeasured;
	double *g = trace_xcalloc(r->nframe_times, sizeof(double));
	for (size_t i = 0; gpu && i < r->nframe_times && i < r->cap_frame_gpu; i++)
		g[i] = r->frame_gpu[i];
	spread gs = spread_of(g, r->nframe_times);
	free(g);
	/* the first device's name and heaps; each heap's peak over them all */
	const VkPhysicalDeviceProperties *props = &r->stats_props;
	const VkPhysicalDeviceMemoryProperties *mem = &r->stats_memory;
	uint64_t peak[VK_MAX_MEMORY_HEAPS];
	memcpy(peak, r->stats_peak, sizeof(peak));
	for (size_t i = 0; i < r->ndevs; i++) {
		const vkd_device *d = &r->devs[i]->vk;
		if (!props->deviceName[0]) {
			props = &d->props;
			mem = &d->memory;
		}
		for (uint32_t h = 0; h < VK_MAX_MEMORY_HEAPS; h++)
			if (d->heap_stats[h].memory_peak > peak[h])
				peak[h] = d->heap_stats[h].memory_peak;
	}
	FILE *o = stdout;
	if (r->opt->stats == 2) {
		fprintf(o, "{\"device\": \"%s\", \"frames\": %llu, \"seconds\": %.6f, "
			"\"fps\": %.3f, \"frame_ms\": {\"median\": %.3f, \"p99\": %.3f, \"max\": %.3f}, ",
			props->deviceName, (unsigned long long)r->frames_done, total, fps,
			cpu.med, cpu.p99, cpu.max);
		if (gpu)
			fprintf(o, "\"frame_gpu_ms\": {\"median\": %.3f, \"p99\": %.3f, \"max\": %.3f}, "
				"\"gpu_seconds\": %.6f, \"gpu_span_seconds\": %.6f, "
				"\"gpu_idle_seconds\": %.6f, \"gpu_gaps\": %llu, \"gpu_gap_max_ms\": %.3f, "
				"\"gpu_batches_dropped\": %llu, ",
				gs.med, gs.p99, gs.max, gs.sum, r->gpu_span, r->gpu_idle,
				(unsigned long long)r->gpu_gaps, r->gpu_gap_max * 1e3,
				(unsigned long long)r->gpu_dropped);
		else
			fprintf(o, "\"frame_gpu_ms\": null, \"gpu_seconds\": null, ");
		uint64_t jobs, taken;
		unsigned threads;
		uint64_t ahead = vkr_warm_made(r, &jobs, &taken, &threads), objs, objs_taken;
		vkr_warm_objects(r, &objs, &objs_taken);
		fprintf(o, "\"pipelines_ahead\": {\"calls\": %llu, \"pipelines\": %llu, \"taken\": %llu, "
			"\"threads\": %u, \"objects\": %llu, \"objects_taken\": %llu}, "
			"\"timelines_reused\": %llu, ", (unsigned long long)jobs,
			(unsigned long long)ahead, (unsigned long long)taken, threads,
			(unsigned long long)objs, (unsigned long long)objs_taken,
			(unsigned long long)r->timelines_reused);
		fprintf(o, "\"uniforms_moved\": {\"descriptors\": %llu, \"copies\": %llu}, ",
			(unsigned long long)r->uniforms_moved, (unsigned long long)r->uniform_copies);
		fprintf(o, "\"timestamps_left_out\": %llu, ", (unsigned long long)r->stamps_left_out);
		fprintf(o, "\"ahead\": {\"on\": %s, \"waits_skipped\": %llu, \"joined\": %llu, "
			"\"paid\": %llu, \"barriers\": %llu, \"renamed_command_buffers\": %llu, "
			"\"renamed_fences\": %llu, \"staged_bytes\": %llu, \"ended\": %llu, "
			"\"paid_seconds\": %.6f, \"held_seconds\": %.6f}, ",
			r->ahead_on ? "true" : "false", (unsigned long long)r->ahead_waits,
			(unsigned long long)r->ahead_joined, (unsigned long long)r->ahead_paid,
			(unsigned long long)r->ahead_barriers,
			(unsigned long long)r->ahead_renamed, (unsigned long long)r->ahead_fences,
			(unsigned long long)r->ahead_staged, (unsigned long long)r->ahead_ended,
			r->ahead_paid_s, r->ahead_held_s);
		const trace_ahead_waits *dw = &r->decode_waits;
		fprintf(o, "\"decode_ahead\": %s, \"decode_ahead_waits\": {\"replay\": %llu, "
			"\"replay_slept\": %llu, \"replay_seconds\": %.6f, "
			"\"replay_seconds_frames\": %.6f, \"thread\": %llu, "
			"\"thread_slept\": %llu, \"hook_thread\": %s, \"hook\": %llu, "
			"\"hook_slept\": %llu}, ",
			r->decode_ahead ? "true" : "false", (unsigned long long)dw->caller,
			(unsigned long long)dw->caller_slept, dw->caller_seconds,
			r->waited_in_frames, (unsigned long long)dw->thread,
			(unsigned long long)dw->thread_slept, dw->hook_thread ? "true" : "false",
			(unsigned long long)dw->hook, (unsigned long long)dw->hook_slept);
		fprintf(o, "\"preload\": {\"records\": %llu, \"decoded\": %llu, "
			"\"bytes\": %llu, \"seconds\": %.6f}, ",
			(unsigned long long)r->preload_records,
			(unsigned long long)r->preload_decoded, (unsigned long long)r->preload_bytes,
			r->preload_s);
		print_times(r, o, true, span);
		fprintf(o, "\"calls\": %llu, \"calls_per_second\": %.0f, \"warnings\": %llu, "
			"\"heaps\": [", (unsigned long long)r->calls,
			total > 0 ? (double)r->calls / total : 0, (unsigned long long)r->warnings);
		for (uint32_t h = 0; h < mem->memoryHeapCount; h++)
			fprintf(o, "%s{\"heap\": %u, \"peak_bytes\": %llu}", h ? ", " : "", h,
				(unsigned long long)peak[h]);
		fprintf(o, "]}\n");
		return;
	}
	fprintf(o, "device:            %s\n", props->deviceName);
	fprintf(o, "frames:            %llu\n", (unsigned long long)r->frames_done);
	fprintf(o, "replay time:       %.3f s\n", total);
	fprintf(o, "frames per second: %.1f\n", fps);
	fprintf(o, "frame CPU time:    median %.3f ms, p99 %.3f ms, max %.3f ms\n", cpu.med,
		cpu.p99, cpu.max);
	if (gpu) {
		fprintf(o, "frame GPU time:    median %.3f ms, p99 %.3f ms, max %.3f ms (busy)\n"
			"GPU time:          %.3f s\n", gs.med, gs.p99, gs.max, gs.sum);
		fprintf(o, "GPU idle:          %.3f s between batches (%llu gaps, %.3f ms on average, "
			"%.3f ms at most); %.3f s of the replay time before the first batch and "
			"after the last (start-up, teardown)\n", r->gpu_idle,
			(unsigned long long)r->gpu_gaps,
			r->gpu_gaps ? r->gpu_idle * 1e3 / (double)r->gpu_gaps : 0,
			r->gpu_gap_max * 1e3, total > r->gpu_span ? total - r->gpu_span : 0);
		if (r->gpu_dropped)
			fprintf(o, "GPU time dropped:  %llu batches, their timestamps further apart "
				"than the time since their submit (not counted)\n",
				(unsigned long long)r->gpu_dropped);
	}
	else
		fprintf(o, "frame GPU time:    not measured (%s)\n", r->opt->no_gpu_time
			? "--no-gpu-time" : r->gpu_unmeasured
			? "a queue without timestamps, or not from vkGetDeviceQueue"
			: "no command buffer submitted");
	fprintf(o, "calls:             %llu (%.0f per second)\n", (unsigned long long)r->calls,
		total > 0 ? (double)r->calls / total : 0);
	for (uint32_t h = 0; h < mem->memoryHeapCount; h++)
		fprintf(o, "heap %u peak:       %.1f MiB\n", h, (double)peak[h] / (1024.0 * 1024.0));
	uint64_t jobs, taken;
	unsigned threads;
	uint64_t ahead = vkr_warm_made(r, &jobs, &taken, &threads), objs, objs_taken;
	vkr_warm_objects(r, &objs, &objs_taken);
	if (threads)
		fprintf(o, "pipelines ahead:   %llu made from %llu calls, on %u threads; %llu taken; "
			"%llu descriptor pools and pipeline caches made ahead, %llu taken\n",
			(unsigned long long)ahead, (unsigned long long)jobs, threads,
			(unsigned long long)taken, (unsigned long long)objs,
			(unsigned long long)objs_taken);
	else
		fprintf(o, "pipelines ahead:   none (--pipeline-jobs 0, a CPU device or a stream)\n");
	fprintf(o, "timelines reused:  %llu (semaphores made again from those destroyed)\n",
		(unsigned long long)r->timelines_reused);
	if (r->uniforms_moved)
		fprintf(o, "uniforms moved:    %llu descriptors at offsets this device refuses, to "
			"slots of replay's; %llu copies into them\n",
			(unsigned long long)r->uniforms_moved, (unsigned long long)r->uniform_copies);
	if (r->stamps_left_out)
		fprintf(o, "timestamps:        %llu writes, resets and copies of the program's left "
			"out (--timestamps-as-captured)\n", (unsigned long long)r->stamps_left_out);
	if (r->ahead_on)
		fprintf(o, "running ahead:     %llu waits skipped (%llu with a wait for older work "
			"joined to them; %llu paid later, %.3f s), %.3f s "
			"waiting at frame ends for the device, %llu barriers, %llu command buffers and "
			"%llu fences renamed, %.1f KiB of updates staged%s\n",
			(unsigned long long)r->ahead_waits, (unsigned long long)r->ahead_joined,
			(unsigned long long)r->ahead_paid, r->ahead_paid_s, r->ahead_held_s,
			(unsigned long long)r->ahead_barriers, (unsigned long long)r->ahead_renamed,
			(unsigned long long)r->ahead_fences, (double)r->ahead_staged / 1024.0,
			r->ahead_ended ? "; ended at a second queue or a sparse bind" : "");
	else
		fprintf(o, "running ahead:     off (--waits-as-captured, --loop or --dump)\n");
	const trace_ahead_waits *dw = &r->decode_waits;
	if (r->decode_ahead) {
		fprintf(o, "records:           read ahead on a thread of their own and decoded %s; "
			"the replay waited for it %llu times (%llu asleep, %.3f s; %.3f s in the "
			"frames), it for room %llu times (%llu asleep)",
			dw->hook_thread ? "on another" : "there",
			(unsigned long long)dw->caller, (unsigned long long)dw->caller_slept,
			dw->caller_seconds, r->waited_in_frames,
			(unsigned long long)dw->thread, (unsigned long long)dw->thread_slept);
		if (dw->hook_thread)
			fprintf(o, ", the decoding for records %llu times (%llu asleep)",
				(unsigned long long)dw->hook, (unsigned long long)dw->hook_slept);
		fputc('\n', o);
	}
	if (r->preload_records)
		fprintf(o, "preloaded:         %llu records (%llu decoded), %.1f MiB, in %.3f s before "
			"they replayed\n", (unsigned long long)r->preload_records,
			(unsigned long long)r->preload_decoded,
			(double)r->preload_bytes / (1024.0 * 1024.0), r->preload_s);
	print_times(r, o, false, span);
}
