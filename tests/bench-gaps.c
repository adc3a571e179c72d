/*
 * bench-gaps: how long a GPU sits idle between one batch and the next,
 * by what the submission carries: what a replay's frame costs the device
 * beyond its commands.  N batches, each a fill of SIZE bytes between two
 * timestamps, are queued behind a batch that waits on a timeline value
 * the host signals once all are in, so the GPU runs them back to back at
 * its own pace and the CPU's pace does not enter the figure: the gap is
 * the time from one batch's end timestamp to the next one's start.
 *
 *   bench-gaps [SIZE]     (default 16 MiB; 0: no fill)
 *   prints, for each way, the batch's time, the gap's median and spread,
 *   and the CPU time of a vkQueueSubmit call, in microseconds
 *
 * The ways: a call each (plain, with a fence, signalling 13 timeline
 * semaphores as libplacebo does, waiting on the last one's timeline
 * value, a binary semaphore chain), and every batch in one call (plain,
 * 13 signals each).  On llvmpipe the figures are the CPU's, and a submit
 * that waits on a binary semaphore waits for the gate (the call's time
 * then holds 100 ms); the point is a GPU (the README's H200 rows).
 */
#define BENCH_NAME "bench-gaps"
#include "bench-vk.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define N 200
#define NSIG 13

enum way { CALLS, FENCED, SIGNALS, TIMELINE_CHAIN, BINARY_CHAIN, ONE_CALL_SIGNALS, ONE_CALL };

static const char *const way_names[] = {
	"a call each, plain",
	"a call each, a fence each",
	"a call each, 13 timeline signals",
	"a call each, waiting on the last one",
	"a call each, binary semaphore chain",
	"one call, 13 timeline signals each",
	"one call, plain",
};

static VkDevice dev;
static VkQueue queue;
static VkQueryPool queries;
static VkCommandBuffer cbs[N], gate_cb;
static VkSemaphore gate, timelines[NSIG], binaries[N];
static VkFence fences[N];
static uint64_t gate_value, timeline_value;
static double period_ns;

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static bool submitted;

static void *open_gate(void *unused)
{
	(void)unused;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 100 * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lock);
	while (!submitted && pthread_cond_timedwait(&all_in, &lock, &until) == 0)
		;
	pthread_mutex_unlock(&lock);
	VkSemaphoreSignalInfo open = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
				      .semaphore = gate, .value = gate_value};
	CHECK(vkSignalSemaphore(dev, &open));
	return NULL;
}

static void run(enum way way, bool print)
{
	static VkSubmitInfo si[N];
	static VkTimelineSemaphoreSubmitInfo ti[N];
	static uint64_t signal_values[N][NSIG], wait_values[N];
	VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;

	/* the gate: everything after it waits for the host's signal */
	gate_value++;
	VkTimelineSemaphoreSubmitInfo gti = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.waitSemaphoreValueCount = 1, .pWaitSemaphoreValues = &gate_value};
	VkSubmitInfo g = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &gti,
			  .waitSemaphoreCount = 1, .pWaitSemaphores = &gate,
			  .pWaitDstStageMask = &stage,
			  .commandBufferCount = 1, .pCommandBuffers = &gate_cb};
	CHECK(vkQueueSubmit(queue, 1, &g, VK_NULL_HANDLE));

	for (int i = 0; i < N; i++) {
		si[i] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
				       .commandBufferCount = 1, .pCommandBuffers = &cbs[i]};
		ti[i] = (VkTimelineSemaphoreSubmitInfo){
			.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
		if (way == SIGNALS || way == ONE_CALL_SIGNALS) {
			for (int k = 0; k < NSIG; k++)
				signal_values[i][k] = timeline_value + 1 + (uint64_t)i;
			ti[i].signalSemaphoreValueCount = NSIG;
			ti[i].pSignalSemaphoreValues = signal_values[i];
			si[i].pNext = &ti[i];
			si[i].signalSemaphoreCount = NSIG;
			si[i].pSignalSemaphores = timelines;
		} else if (way == TIMELINE_CHAIN) {
			signal_values[i][0] = timeline_value + 1 + (uint64_t)i;
			wait_values[i] = timeline_value + (uint64_t)i;
			ti[i].signalSemaphoreValueCount = 1;
			ti[i].pSignalSemaphoreValues = signal_values[i];
			si[i].pNext = &ti[i];
			si[i].signalSemaphoreCount = 1;
			si[i].pSignalSemaphores = timelines;
			if (i) {
				ti[i].waitSemaphoreValueCount = 1;
				ti[i].pWaitSemaphoreValues = &wait_values[i];
				si[i].waitSemaphoreCount = 1;
				si[i].pWaitSemaphores = timelines;
				si[i].pWaitDstStageMask = &stage;
			}
		} else if (way == BINARY_CHAIN) {
			si[i].signalSemaphoreCount = 1;
			si[i].pSignalSemaphores = &binaries[i];
			if (i) {
				si[i].waitSemaphoreCount = 1;
				si[i].pWaitSemaphores = &binaries[i - 1];
				si[i].pWaitDstStageMask = &stage;
			}
		}
	}
	/* the host's signal: once every submit is in, or after 100 ms where
	 * a vkQueueSubmit waits for what the gate holds back (lavapipe, on a
	 * binary semaphore whose signal has not run) */
	pthread_t opener;
	submitted = false;
	if (pthread_create(&opener, NULL, open_gate, NULL) != 0) {
		fprintf(stderr, "bench-gaps: cannot start a thread\n");
		exit(1);
	}
	double t0 = now_us();
	if (way == ONE_CALL || way == ONE_CALL_SIGNALS)
		CHECK(vkQueueSubmit(queue, N, si, VK_NULL_HANDLE));
	else
		for (int i = 0; i < N; i++)
			CHECK(vkQueueSubmit(queue, 1, &si[i],
					    way == FENCED ? fences[i] : VK_NULL_HANDLE));
	double cpu = (now_us() - t0) / N;
	pthread_mutex_lock(&lock);
	submitted = true;
	pthread_cond_signal(&all_in);
	pthread_mutex_unlock(&lock);
	pthread_join(opener, NULL);
	CHECK(vkQueueWaitIdle(queue));
	if (way == SIGNALS || way == ONE_CALL_SIGNALS || way == TIMELINE_CHAIN)
		timeline_value += N;
	if (way == BINARY_CHAIN) {  /* the last one's signal, waited on */
		VkSubmitInfo w = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
				  .waitSemaphoreCount = 1, .pWaitSemaphores = &binaries[N - 1],
				  .pWaitDstStageMask = &stage};
		CHECK(vkQueueSubmit(queue, 1, &w, VK_NULL_HANDLE));
		CHECK(vkQueueWaitIdle(queue));
	}
	if (way == FENCED)
		CHECK(vkResetFences(dev, N, fences));

	static uint64_t ts[2 * N];
	CHECK(vkGetQueryPoolResults(dev, queries, 0, 2 * N, sizeof(ts), ts, sizeof(ts[0]),
				    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
	static double gap[N - 1], busy[N];
	for (int i = 0; i < N; i++) {
		busy[i] = (double)(ts[2 * i + 1] - ts[2 * i]) * period_ns / 1e3;
		if (i)
			gap[i - 1] = (double)(int64_t)(ts[2 * i] - ts[2 * i - 1]) * period_ns / 1e3;
	}
	if (!print)
		return;
	qsort(gap, N - 1, sizeof(gap[0]), by_value);
	qsort(busy, N, sizeof(busy[0]), by_value);
	printf("%-38s batch %7.2f us  gap %6.2f us (%6.2f to %6.2f)  submit call %6.2f us\n",
	       way_names[way], busy[N / 2], gap[(N - 1) / 2], gap[(N - 1) / 10],
	       gap[(N - 1) * 9 / 10], cpu);
}

int main(int argc, char **argv)
{
	char *end = NULL;
	unsigned long long size = argc > 1 ? strtoull(argv[1], &end, 0) : 16ull << 20;
	if (argc > 2 || (end && *end) || (size & 3)) {
		fprintf(stderr, "usage: bench-gaps [SIZE]   (bytes, a multiple of 4; 0: no fill)\n");
		return 2;
	}
	VkInstance inst;
	VkPhysicalDevice pd = bench_first_device(VK_API_VERSION_1_2, &inst);
	VkPhysicalDeviceProperties props;
	vkGetPhysicalDeviceProperties(pd, &props);
	period_ns = props.limits.timestampPeriod;
	printf("bench-gaps: %s, %d batches of %llu bytes filled each\n", props.deviceName, N, size);

	float prio = 1;
	VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
				       .queueCount = 1, .pQueuePriorities = &prio};
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
		.timelineSemaphore = VK_TRUE};
	VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f12,
				  .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci};
	CHECK(vkCreateDevice(pd, &dci, NULL, &dev));
	vkGetDeviceQueue(dev, 0, 0, &queue);
	VkDeviceMemory mem;
	VkBuffer buf = bench_buffer(pd, dev, size ? size : 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &mem);

	VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
				     .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2 * N};
	CHECK(vkCreateQueryPool(dev, &qpi, NULL, &queries));
	bench_command_buffers(dev, N, cbs);
	bench_command_buffers(dev, 1, &gate_cb);
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
	CHECK(vkBeginCommandBuffer(gate_cb, &bi));
	CHECK(vkEndCommandBuffer(gate_cb));
	for (uint32_t i = 0; i < N; i++) {
		CHECK(vkBeginCommandBuffer(cbs[i], &bi));
		vkCmdResetQueryPool(cbs[i], queries, 2 * i, 2);
		vkCmdWriteTimestamp(cbs[i], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 2 * i);
		if (size)
			vkCmdFillBuffer(cbs[i], buf, 0, VK_WHOLE_SIZE, i);
		vkCmdWriteTimestamp(cbs[i], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 2 * i + 1);
		CHECK(vkEndCommandBuffer(cbs[i]));
	}
	VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
					 .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
	VkSemaphoreCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
	VkSemaphoreCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	CHECK(vkCreateSemaphore(dev, &tci, NULL, &gate));
	for (int k = 0; k < NSIG; k++)
		CHECK(vkCreateSemaphore(dev, &tci, NULL, &timelines[k]));
	for (int i = 0; i < N; i++) {
		CHECK(vkCreateSemaphore(dev, &bci, NULL, &binaries[i]));
		CHECK(vkCreateFence(dev, &fci, NULL, &fences[i]));
	}

	for (int pass = 0; pass < 2; pass++)  /* the first warms up, unprinted */
		for (int w = CALLS; w <= ONE_CALL; w++)
			run((enum way)w, pass == 1);

	CHECK(vkDeviceWaitIdle(dev));
	vkDestroyDevice(dev, NULL);
	vkDestroyInstance(inst, NULL);
	return 0;
}
