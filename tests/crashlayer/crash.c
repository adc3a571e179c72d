/*
 * VK_LAYER_TRACEKIT_test_crash: a layer for the tests only, stacked under
 * the capture layer, that crashes (SIGSEGV) in the command named by
 * TRACEKIT_TEST_CRASH, vkCmdDrawIndexed, vkCmdFillBuffer or vkQueueSubmit,
 * at the call numbered TRACEKIT_TEST_CRASH_AT (from 0, default 0) of that
 * command, and with TRACEKIT_TEST_CRASH_EVERY set at every call from it
 * on, on whatever thread makes it (threads that fault at once: llvmpipe's
 * ran freed code at neverball's exit): a driver that crashes inside a
 * call, for the capture layer's promise that such a call is in the trace.  TRACEKIT_TEST_CRASH_HOW picks the crash:
 * segv (the default), bus, ill, fpe (each a real fault, not raise()),
 * abrt, term (raise(SIGTERM)), exit (exit(5), inside the call: an Xlib
 * error handler's, a debug messenger's), or fork (a child that calls exit(0), then
 * one that SIGTERM ends, each waited for 5 s at most, and said; the
 * call then goes on).  With TRACEKIT_TEST_HANDLER set, the library's
 * constructor installs handlers of SIGTERM and the fatal signals that say
 * which came and _exit(3): a program's own handlers, there before the
 * capture layer's.  With TRACEKIT_TEST_EXTENSION set it adds
 * the device extension VK_TRACEKIT_test_future (which its manifest
 * declares, so that the loader lets a program enable it) to what
 * vkEnumerateDeviceExtensionProperties answers, and takes it out of
 * vkCreateDevice's list again: a driver newer than the capture layer's
 * registry.  With TRACEKIT_TEST_ENUM_LOG=FILE, each
 * vkEnumerateDeviceExtensionProperties of the device's own list adds a
 * line to FILE: the physical device, and "count" or "list".  Everything
 * else passes through.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))
#define FUTURE "VK_TRACEKIT_test_future"

/* One instance and one device: what the tests run makes no more. */
static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;
static PFN_vkEnumerateDeviceExtensionProperties next_enum;
static PFN_vkCmdDrawIndexed next_draw;
static PFN_vkQueueSubmit next_submit;
static PFN_vkCmdFillBuffer next_fill;
static _Atomic unsigned long calls;

static void say(const char *what, int n)
{
	char buf[96];
	int len = snprintf(buf, sizeof(buf), "tracekit-test: %s %d\n", what, n);
	if (write(2, buf, (size_t)len) < 0)
		return;
}

static void on_signal(int sig)
{
	say("the program's handler of signal", sig);
	_exit(3);
}

__attribute__((constructor)) static void install_handlers(void)
{
	static const int sigs[] = { SIGTERM, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	if (!getenv("TRACEKIT_TEST_HANDLER"))
		return;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
}

/* A child of the program: one that calls exit(), one that SIGTERM ends;
 * how each ended, said. */
static void fork_children(void)
{
	for (int term = 0; term < 2; term++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			if (!term)
				exit(0);
			for (;;)
				pause();
		}
		if (term) {
			usleep(100000);
			kill(pid, SIGTERM);
		}
		/* a child that hangs (in exit(), waiting for a thread it
		 * does not have) is said, and killed: no test waits for it */
		int st = 0, tries = 0;
		while (waitpid(pid, &st, WNOHANG) == 0 && ++tries < 50)
			usleep(100000);
		if (tries == 50) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			say("child hung; killed, signal", SIGKILL);
		} else if (WIFSIGNALED(st))
			say("child ended by signal", WTERMSIG(st));
		else
			say("child exited", WEXITSTATUS(st));
	}
}

static void crash(const char *how)
{
	volatile int zero = 0, one = 1;
	if (!how || !strcmp(how, "segv")) {
		*(volatile int *)NULL = 0;
	} else if (!strcmp(how, "bus")) {
		/* a page of a file past its end */
		FILE *f = tmpfile();
		volatile char *p = f ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0) : NULL;
		if (p && p != MAP_FAILED)
			zero = p[0];
	} else if (!strcmp(how, "ill")) {
		__builtin_trap();
	} else if (!strcmp(how, "fpe")) {
		zero = one / zero; /* not 1 / zero: gcc makes that no division */
	} else if (!strcmp(how, "abrt")) {
		abort();
	} else if (!strcmp(how, "term")) {
		raise(SIGTERM);
	} else if (!strcmp(how, "fork")) {
		fork_children();
	} else if (!strcmp(how, "exit")) {
		exit(5);
	}
}

static void maybe_crash(const char *name)
{
	const char *which = getenv("TRACEKIT_TEST_CRASH");
	const char *at = getenv("TRACEKIT_TEST_CRASH_AT");
	if (!which || strcmp(which, name))
		return;
	unsigned long n = calls++, from = at ? strtoul(at, NULL, 10) : 0;
	if (n == from || (n > from && getenv("TRACEKIT_TEST_CRASH_EVERY")))
		crash(getenv("TRACEKIT_TEST_CRASH_HOW"));
}

static VKAPI_ATTR void VKAPI_CALL crash_CmdDrawIndexed(VkCommandBuffer cb, uint32_t indexCount,
						       uint32_t instanceCount, uint32_t firstIndex,
						       int32_t vertexOffset, uint32_t firstInstance)
{
	maybe_crash("vkCmdDrawIndexed");
	next_draw(cb, indexCount, instanceCount, firstIndex, vertexOffset, firstInstance);
}

static VKAPI_ATTR void VKAPI_CALL crash_CmdFillBuffer(VkCommandBuffer cb, VkBuffer buffer,
						      VkDeviceSize offset, VkDeviceSize size,
						      uint32_t data)
{
	maybe_crash("vkCmdFillBuffer");
	next_fill(cb, buffer, offset, size, data);
}

static VKAPI_ATTR VkResult VKAPI_CALL crash_QueueSubmit(VkQueue queue, uint32_t n,
							const VkSubmitInfo *submits, VkFence fence)
{
	maybe_crash("vkQueueSubmit");
	return next_submit(queue, n, submits, fence);
}

/* The loader's link to the next layer in a create info's chain, of TYPE
 * (VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO or ..._DEVICE_...): the
 * device's link struct begins as the instance's does. */
static void *loader_link(const void *pnext, VkStructureType type)
{
	for (VkLayerInstanceCreateInfo *l = (VkLayerInstanceCreateInfo *)pnext; l;
	     l = (VkLayerInstanceCreateInfo *)l->pNext)
		if (l->sType == type && l->function == VK_LAYER_LINK_INFO)
			return l;
	return NULL;
}

static VKAPI_ATTR VkResult VKAPI_CALL crash_CreateInstance(const VkInstanceCreateInfo *ci,
							   const VkAllocationCallbacks *alloc,
							   VkInstance *made)
{
	VkLayerInstanceCreateInfo *link =
		loader_link(ci->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
	if (!link)
		return VK_ERROR_INITIALIZATION_FAILED;
	next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)next_gipa(NULL, "vkCreateInstance");
	VkResult r = create(ci, alloc, made);
	if (r == VK_SUCCESS)
		next_enum = (PFN_vkEnumerateDeviceExtensionProperties)
			next_gipa(*made, "vkEnumerateDeviceExtensionProperties");
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL crash_EnumerateDeviceExtensionProperties(
	VkPhysicalDevice physical, const char *layer, uint32_t *count, VkExtensionProperties *props)
{
	PFN_vkEnumerateDeviceExtensionProperties down = next_enum;
	const char *extra = getenv("TRACEKIT_TEST_EXTENSION") ? FUTURE : NULL;
	const char *log = getenv("TRACEKIT_TEST_ENUM_LOG");
	FILE *f = log && !layer ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "%p %s\n", (void *)physical, props ? "list" : "count");
		fclose(f);
	}
	if (layer || !extra)
		return down(physical, layer, count, props);
	uint32_t n = 0;
	VkResult r = down(physical, NULL, &n, NULL);
	if (r != VK_SUCCESS)
		return r;
	if (!props) {
		*count = n + 1;
		return VK_SUCCESS;
	}
	if (*count <= n) { /* room for the driver's only, or fewer */
		r = down(physical, NULL, count, props);
		return r == VK_SUCCESS ? VK_INCOMPLETE : r;
	}
	r = down(physical, NULL, &n, props);
	if (r != VK_SUCCESS)
		return r;
	memset(&props[n], 0, sizeof(props[n]));
	strncpy(props[n].extensionName, extra, VK_MAX_EXTENSION_NAME_SIZE - 1);
	props[n].specVersion = 1;
	*count = n + 1;
	return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL crash_CreateDevice(VkPhysicalDevice physical,
							 const VkDeviceCreateInfo *ci,
							 const VkAllocationCallbacks *alloc,
							 VkDevice *device)
{
	VkLayerDeviceCreateInfo *link =
		loader_link(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
	if (!link)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(NULL, "vkCreateDevice");
	/* the made-up extension goes no further down */
	const char *names[ci->enabledExtensionCount + 1];
	VkDeviceCreateInfo mine = *ci;
	mine.enabledExtensionCount = 0;
	mine.ppEnabledExtensionNames = names;
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (strcmp(ci->ppEnabledExtensionNames[i], FUTURE))
			names[mine.enabledExtensionCount++] = ci->ppEnabledExtensionNames[i];
	VkResult r = create(physical, &mine, alloc, device);
	if (r == VK_SUCCESS) {
		next_draw = (PFN_vkCmdDrawIndexed)next_gdpa(*device, "vkCmdDrawIndexed");
		next_submit = (PFN_vkQueueSubmit)next_gdpa(*device, "vkQueueSubmit");
		next_fill = (PFN_vkCmdFillBuffer)next_gdpa(*device, "vkCmdFillBuffer");
	}
	return r;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crash_gdpa(VkDevice device, const char *name);
static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crash_gipa(VkInstance inst, const char *name);

typedef struct named_fn {
	const char *name;
	PFN_vkVoidFunction fn;
} named_fn;

/* The functions this layer has: the device's, which vkGetDeviceProcAddr
 * and vkGetInstanceProcAddr both answer, and those only an instance's
 * vkGetInstanceProcAddr does. */
static const named_fn device_fns[] = {
	{"vkGetDeviceProcAddr", (PFN_vkVoidFunction)crash_gdpa},
	{"vkCmdDrawIndexed", (PFN_vkVoidFunction)crash_CmdDrawIndexed},
	{"vkQueueSubmit", (PFN_vkVoidFunction)crash_QueueSubmit},
	{"vkCmdFillBuffer", (PFN_vkVoidFunction)crash_CmdFillBuffer},
};
static const named_fn instance_fns[] = {
	{"vkGetInstanceProcAddr", (PFN_vkVoidFunction)crash_gipa},
	{"vkCreateInstance", (PFN_vkVoidFunction)crash_CreateInstance},
	{"vkCreateDevice", (PFN_vkVoidFunction)crash_CreateDevice},
	{"vkEnumerateDeviceExtensionProperties",
	 (PFN_vkVoidFunction)crash_EnumerateDeviceExtensionProperties},
};
#define COUNT(t) (sizeof(t) / sizeof((t)[0]))

/* NAME's function in table T of N, or NULL. */
static PFN_vkVoidFunction own(const named_fn *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, t[i].name))
			return t[i].fn;
	return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crash_gdpa(VkDevice device, const char *name)
{
	PFN_vkVoidFunction fn = own(device_fns, COUNT(device_fns), name);
	return fn ? fn : next_gdpa(device, name);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crash_gipa(VkInstance inst, const char *name)
{
	PFN_vkVoidFunction fn = own(instance_fns, COUNT(instance_fns), name);
	if (!fn)
		fn = own(device_fns, COUNT(device_fns), name);
	return fn ? fn : next_gipa ? next_gipa(inst, name) : NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v)
{
	if (v->loaderLayerInterfaceVersion > 2)
		v->loaderLayerInterfaceVersion = 2;
	v->pfnGetInstanceProcAddr = crash_gipa;
	v->pfnGetDeviceProcAddr = crash_gdpa;
	v->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
