/*
 * Pipelines compiled ahead (--pipeline-jobs): a thread reads the trace
 * file again from its start and makes, on the replay's first device, what
 * pipelines are made of (shader modules, descriptor set and pipeline
 * layouts, render passes, samplers); it hands each vkCreateGraphicsPipelines
 * and vkCreateComputePipelines of that device to worker threads, which
 * make the pipelines, into a pipeline cache of the replay's own.  When the
 * replay reaches the call, it takes the pipelines a worker made, waiting
 * for one that is making them (vkr_warm_take); where no worker has begun
 * them, it makes them itself from that cache (vkr_warm_cache), which the
 * workers may be filling meanwhile: the cache is internally synchronised.
 * A pipeline made with the thread's layout and render pass is used with
 * the replay's: they are made from the same records, so compatible.
 *
 * On an H200 with the driver's shader cache off, glmark2 through zink's
 * six pipelines took 102 ms of a 0.44 s replay, made one at a time as its
 * scenes start.
 *
 * Descriptor pools and pipeline caches, whose create infos name no
 * handle, are made ahead the same way (the workers make them, the replay
 * takes one at its call: vkr_warm_take_object), at most AHEAD_OBJECTS
 * waiting at once; the records past that wait for room in a list of
 * their own (at most AHEAD_LATER), the oldest going to the workers as the
 * replay takes one.  zink made a descriptor pool a frame in glmark2's
 * texture scene, 235 us each in NVIDIA's driver against 35 us of GPU work
 * a frame, and a pipeline cache (1.4 ms) for each program; its 12-scene
 * capture makes 135 pools, of which the first 64 alone were made ahead
 * when the records past the limit were left to the replay.
 *
 * Nothing the threads do reaches the replay but the cache and the
 * pipelines it takes: a record they cannot follow (one that does not
 * decode, a handle they did not make, a pipeline derived from another, a
 * library) is left to the replay, a pipeline they fail to make too, and a
 * trace they cannot read further ends the reading, without a word.  They
 * never touch the replay's state, and their calls' validation messages are
 * left out (vkr_warm_thread).
 */
#include "replay_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

enum warm_kind {
	WK_NONE = 0,       /* not looked at */
	WK_PIPELINES = 1,  /* a job for the workers */
	WK_MAKE = 2,       /* + i: makes what makes[i] makes */
	WK_AHEAD = 64,     /* + i: a job for the workers, made ahead[i] */
};

#define AHEAD_OBJECTS 64
#define AHEAD_LATER 4096

/* A job: queued (in the list and the registry), running, done (its
 * pipelines kept in its arguments for the replay to take), or taken by the
 * replay before a worker began it (in the list alone: the worker frees it). */
enum job_state { J_QUEUED, J_RUNNING, J_DONE, J_TAKEN };

typedef struct warm_job {
	const vk_command_info *cmd;
	uint64_t no;  /* the record's call number */
	PFN_vkVoidFunction fn;
	void *args;
	enum job_state state;
	bool cache_only;  /* its pipelines are not the replay's to take */
	bool later;       /* in the list waiting for room (made-ahead objects) */
	int ahead;        /* WK_AHEAD + i: one object of ahead[i], or 0 */
	trace_arena arena;
	struct warm_job *next;
} warm_job;

typedef struct made {
	PFN_vkVoidFunction destroy;  /* vkDestroyX(device, handle, NULL) */
	uint64_t handle;
} made;

struct vkr_warm {
	vkr_device *d;
	VkDevice dev;
	uint64_t cap_dev;
	VkPipelineCache cache;
	char *path;
	pthread_t reader, *workers;
	unsigned nworkers;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	warm_job *head, **tail;
	warm_job *later, **later_tail; /* made-ahead jobs waiting for room */
	atomic_size_t nlater;
	tmap byno;                    /* (call number, 1) -> its job: queued, running, done */
	bool reading;                 /* the reader still adds jobs */
	atomic_uint_least64_t jobs, pipelines, taken;
	atomic_uint_least64_t objects, objects_taken, waiting;  /* made ahead */
	atomic_uint_least64_t passed;  /* the last such call the replay reached */
	atomic_uint_least64_t read_no; /* the last call the reader read (those before it: handled) */
	bool wait_reader;              /* TRACE_REPLAY_WARM_WAIT: for the tests */
	/* the reader's alone */
	tmap map;                     /* (capture handle, its type) -> live */
	tmap kinds;                   /* (signature, 1) -> enum warm_kind */
	tmap samplers;                /* layouts with immutable samplers (mark_samplers) */
	bool validate;                /* --validate: every job cache_only */
	made *made;
	size_t nmade, capmade;
	const vk_handle_info *h_device, *h_cache, *h_pipeline;
};

/* Set on the reader and the workers: under --validate their calls are
 * not checked, the replay's own are, and the replay takes no pipeline
 * they made (each is made again, from the cache), so that the validation
 * layer sees the trace's calls, each once, named by its call number. */
static _Thread_local bool warm_thread;

bool vkr_warm_thread(void)
{
	return warm_thread;
}

/* What pipelines are made of, and what destroys each. */
static const struct {
	const char *create, *destroy;
} makes[] = {
	{"vkCreateShaderModule", "vkDestroyShaderModule"},
	{"vkCreateDescriptorSetLayout", "vkDestroyDescriptorSetLayout"},
	{"vkCreatePipelineLayout", "vkDestroyPipelineLayout"},
	{"vkCreateRenderPass", "vkDestroyRenderPass"},
	{"vkCreateRenderPass2", "vkDestroyRenderPass"},
	{"vkCreateRenderPass2KHR", "vkDestroyRenderPass"},
	{"vkCreateSampler", "vkDestroySampler"},
};

/* Made ahead, as pipelines are: their create infos name no handle. */
static const struct {
	const char *create, *destroy;
} ahead[] = {
	{"vkCreateDescriptorPool", "vkDestroyDescriptorPool"},
	{"vkCreatePipelineCache", "vkDestroyPipelineCache"},
};

/* What the reader does with records of SIG's function: WK_MAKE + the
 * index in makes[], WK_AHEAD + the index in ahead[], WK_PIPELINES or
 * WK_NONE. */
static unsigned kind_of(vkr_warm *w, const trace_func_sig *sig)
{
	uint64_t *k = tmap_at(&w->kinds, (uint64_t)(uintptr_t)sig, 1);
	if (k)
		return (unsigned)*k;
	unsigned kind = WK_NONE;
	for (size_t i = 0; i < sizeof(makes) / sizeof(makes[0]); i++)
		if (!strcmp(sig->name, makes[i].create))
			kind = WK_MAKE + (unsigned)i;
	for (size_t i = 0; i < sizeof(ahead) / sizeof(ahead[0]); i++)
		if (!strcmp(sig->name, ahead[i].create))
			kind = WK_AHEAD + (unsigned)i;
	if (!strcmp(sig->name, "vkCreateGraphicsPipelines") ||
	    !strcmp(sig->name, "vkCreateComputePipelines"))
		kind = WK_PIPELINES;
	tmap_set(&w->kinds, (uint64_t)(uintptr_t)sig, 1, kind);
	return kind;
}

typedef struct remap {
	vkr_warm *w;
	bool missing;
	uint64_t *vals;  /* outputs: their values, in walk order */
	size_t n, cap;
} remap;

/* An input handle made live: the device, our cache, what the reader
 * made; anything else (another device's, a base pipeline, a library)
 * leaves the record out. */
static void remap_in(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
		     const vk_field *f)
{
	remap *m = ctx;
	vkr_warm *w = m->w;
	(void)top, (void)f;
	if (!*value)
		return;
	if (h == w->h_device) {
		if (*value != w->cap_dev)
			m->missing = true;
		*value = (uint64_t)(uintptr_t)w->dev;
	} else if (h == w->h_cache) {
		*value = (uint64_t)(uintptr_t)w->cache;
	} else {
		uint64_t *live = h == w->h_pipeline ? NULL : tmap_at(&w->map, *value, (uintptr_t)h);
		if (!live)
			m->missing = true;
		else
			*value = *live;
	}
}

static void collect_out(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
			const vk_field *f)
{
	(void)h;
	(void)top;
	(void)f;
	remap *m = ctx;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->vals = trace_xrealloc(m->vals, m->cap * sizeof(*m->vals));
	}
	m->vals[m->n++] = *value;
}

/* The function of CMD on the device, with the allocator of ARGS left out. */
static PFN_vkVoidFunction prepare(vkr_warm *w, const vk_command_info *cmd, void *args)
{
	for (uint32_t i = 0; i < cmd->nparams; i++)
		if (!strcmp(cmd->params[i].name, "pAllocator"))
			memset((uint8_t *)args + cmd->params[i].offset, 0, sizeof(void *));
	vkr_attachment_formats(w->d->vk.physical, vkr_attachments_kind(cmd), args);
	return vkGetDeviceProcAddr(w->dev, cmd->sig.name);
}

typedef void (*destroy_fn)(VkDevice, void *, const VkAllocationCallbacks *);

/*
 * Immutable samplers: a set layout that names them is compatible only
 * with one that names the same samplers (the validation layer compares
 * the handles), so a pipeline whose layout holds one made here is not
 * the replay's to take (ffmpeg's Vulkan filters sample through them): it
 * goes into the cache alone.  Marked by capture handle, before remapping:
 * (set layout or pipeline layout, 1) -> 1.
 */
static void mark_samplers(vkr_warm *w, const vk_command_info *cmd, const void *args)
{
	if (!strcmp(cmd->sig.name, "vkCreateDescriptorSetLayout")) {
		const vk_args_vkCreateDescriptorSetLayout *a = args;
		const VkDescriptorSetLayoutCreateInfo *ci = a->pCreateInfo;
		for (uint32_t i = 0; ci && ci->pBindings && i < ci->bindingCount; i++)
			if (ci->pBindings[i].pImmutableSamplers && ci->pBindings[i].descriptorCount &&
			    (ci->pBindings[i].descriptorType == VK_DESCRIPTOR_TYPE_SAMPLER ||
			     ci->pBindings[i].descriptorType == VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER) &&
			    a->pSetLayout)
				tmap_set(&w->samplers, (uint64_t)(uintptr_t)*a->pSetLayout, 1, 1);
	} else if (!strcmp(cmd->sig.name, "vkCreatePipelineLayout")) {
		const vk_args_vkCreatePipelineLayout *a = args;
		const VkPipelineLayoutCreateInfo *ci = a->pCreateInfo;
		for (uint32_t i = 0; ci && ci->pSetLayouts && i < ci->setLayoutCount; i++)
			if (tmap_at(&w->samplers, (uint64_t)(uintptr_t)ci->pSetLayouts[i], 1) &&
			    a->pPipelineLayout)
				tmap_set(&w->samplers, (uint64_t)(uintptr_t)*a->pPipelineLayout, 1, 1);
	}
}

/* Whether the pipelines of job J (its arguments still the capture's) use
 * a layout with immutable samplers. */
static bool job_samplers(vkr_warm *w, const warm_job *j)
{
	bool graphics = !strcmp(j->cmd->sig.name, "vkCreateGraphicsPipelines");
	const vk_args_vkCreateGraphicsPipelines *g = j->args;
	const vk_args_vkCreateComputePipelines *c = j->args;
	for (uint32_t i = 0; i < g->createInfoCount; i++) {
		VkPipelineLayout l = graphics ? (g->pCreateInfos ? g->pCreateInfos[i].layout : 0)
					      : (c->pCreateInfos ? c->pCreateInfos[i].layout : 0);
		if (tmap_at(&w->samplers, (uint64_t)(uintptr_t)l, 1))
			return true;
	}
	return false;
}

/* Makes what ARGS (a record of CMD, decoded) make, destroyed by DESTROY,
 * and maps its capture handle to the one made. */
static void make(vkr_warm *w, const vk_command_info *cmd, void *args, const char *destroy)
{
	remap m = {.w = w};
	mark_samplers(w, cmd, args);
	vk_walk_handles(cmd, args, false, remap_in, &m);
	PFN_vkVoidFunction fn = prepare(w, cmd, args);
	PFN_vkVoidFunction end = vkGetDeviceProcAddr(w->dev, destroy);
	if (m.missing || !fn || !end)
		return;
	vk_walk_handles(cmd, args, true, collect_out, &m);
	if (m.n != 1) {
		free(m.vals);
		return;
	}
	uint64_t cap = m.vals[0];
	m.n = 0;
	vk_calls[vk_command_index(cmd)](fn, args);
	vk_walk_handles(cmd, args, true, collect_out, &m);
	uint64_t live = m.vals[0];
	free(m.vals);
	if (!live || !cap)
		return;
	/* the capture may reuse a handle value once the first is destroyed:
	 * the later one is meant from then on; the first lives until the
	 * end (a queued job may name it) */
	tmap_set(&w->map, cap, (uintptr_t)cmd->object, live);
	if (w->nmade == w->capmade) {
		w->capmade = w->capmade ? 2 * w->capmade : 64;
		w->made = trace_xrealloc(w->made, w->capmade * sizeof(*w->made));
	}
	w->made[w->nmade++] = (made){end, live};
}

static void job_free(warm_job *j)
{
	trace_arena_free(&j->arena);
	free(j);
}

/* J to the workers.  Under w->mu. */
static void to_workers(vkr_warm *w, warm_job *j)
{
	if (j->ahead)
		atomic_fetch_add(&w->waiting, 1);
	j->next = NULL;
	*w->tail = j;
	w->tail = &j->next;
	pthread_cond_signal(&w->cv);
}

static void push(vkr_warm *w, warm_job *j)
{
	pthread_mutex_lock(&w->mu);
	if (j->ahead && atomic_load(&w->waiting) >= AHEAD_OBJECTS) {
		j->later = true;
		*w->later_tail = j;
		w->later_tail = &j->next;
		atomic_fetch_add(&w->nlater, 1);
	} else {
		to_workers(w, j);
	}
	tmap_set(&w->byno, j->no, 1, (uint64_t)(uintptr_t)j);
	pthread_mutex_unlock(&w->mu);
}

/* A made-ahead object no longer waits (taken, or destroyed): the oldest
 * jobs waiting for room go to the workers, those the replay took before
 * a worker could begin them freed.  Under w->mu. */
static void ahead_left(vkr_warm *w)
{
	atomic_fetch_sub(&w->waiting, 1);
	while (w->later && atomic_load(&w->waiting) < AHEAD_OBJECTS) {
		warm_job *j = w->later;
		w->later = j->next;
		if (!w->later)
			w->later_tail = &w->later;
		atomic_fetch_sub(&w->nlater, 1);
		if (j->state == J_TAKEN) {
			job_free(j);
			continue;
		}
		j->later = false;
		to_workers(w, j);
	}
}

static void *reader_main(void *arg)
{
	vkr_warm *w = arg;
	warm_thread = true;
	pthread_setname_np(pthread_self(), "tracekit-warmrd");
	trace_error err;
	trace_error_clear(&err);
	trace_reader *in = trace_reader_open(w->path, &err);
	trace_arena arena;
	trace_arena_init(&arena);
	trace_call *c;
	/* a pipeline whose shaders do not fit its layout, or a module that is
	 * no SPIR-V, is the replay's to refuse: the reading ends before it */
	vk_iface *iface = vk_iface_new();
	vk_iface_set_max_viewports(iface, w->d->vk.props.limits.maxViewports);
	while (in && !atomic_load(&w->stop) && trace_reader_next(in, &c, &err) > 0) {
		if (w->wait_reader) {
			pthread_mutex_lock(&w->mu);
			atomic_store(&w->read_no, c->no);
			pthread_cond_broadcast(&w->cv);
			pthread_mutex_unlock(&w->mu);
		}
		unsigned kind = kind_of(w, c->sig);
		if (kind == WK_NONE)
			continue;
		const vk_command_info *cmd = vk_command_lookup(c->sig->name);
		if (!cmd)
			continue;
		/* under --validate the replay makes them: the layer sees each */
		if (kind >= WK_AHEAD && (w->validate || vkr_failed(vkr_cap_result(c)) ||
					 atomic_load(&w->nlater) >= AHEAD_LATER ||
					 c->no <= atomic_load(&w->passed)))
			continue;
		if (kind != WK_PIPELINES && kind < WK_AHEAD) {
			void *args = trace_arena_alloc(&arena, cmd->args_size);
			memset(args, 0, cmd->args_size);
			int rc = vk_decode_args(cmd, c, &arena, args, &err);
			if (rc == 0 && (rc = vk_iface_note(iface, cmd, args,
							   vkr_failed(vkr_cap_result(c)), &err)) == 0)
				make(w, cmd, args, makes[kind - WK_MAKE].destroy);
			trace_arena_reset(&arena);
			if (rc < 0)
				break;
			continue;
		}
		warm_job *j = trace_xcalloc(1, sizeof(*j));
		trace_arena_init(&j->arena);
		j->cmd = cmd;
		j->no = c->no;
		j->args = trace_arena_alloc(&j->arena, cmd->args_size);
		memset(j->args, 0, cmd->args_size);
		remap m = {.w = w};
		int rc = vk_decode_args(cmd, c, &j->arena, j->args, &err);
		if (rc == 0 && kind < WK_AHEAD && vk_iface_note(iface, cmd, j->args, false, &err) < 0) {
			job_free(j);
			break;
		}
		if (rc == 0 && kind >= WK_AHEAD) {
			j->ahead = (int)kind;
			vk_walk_handles(cmd, j->args, false, remap_in, &m);
			j->fn = prepare(w, cmd, j->args);
		} else if (rc == 0) {
			j->cache_only = w->validate || job_samplers(w, j);
			vk_walk_handles(cmd, j->args, false, remap_in, &m);
			j->fn = prepare(w, cmd, j->args);
		}
		if (m.missing || !j->fn) {
			job_free(j);
			continue;
		}
		if (!j->ahead)
			atomic_fetch_add(&w->jobs, 1);
		push(w, j);
	}
	trace_arena_free(&arena);
	vk_iface_free(iface);
	if (in)
		trace_reader_close(in);
	pthread_mutex_lock(&w->mu);
	w->reading = false;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Both commands are (device, pipelineCache, createInfoCount,
 * pCreateInfos, pAllocator, pPipelines). */
static uint64_t *job_object(const warm_job *j);

static void destroy_made(vkr_warm *w, warm_job *j)
{
	if (j->ahead) {
		uint64_t *o = job_object(j);
		PFN_vkVoidFunction end = vkGetDeviceProcAddr(w->dev, ahead[j->ahead - WK_AHEAD].destroy);
		if (o && *o && end)
			((destroy_fn)end)(w->dev, (void *)(uintptr_t)*o, NULL);
		return;
	}
	const vk_args_vkCreateGraphicsPipelines *a = j->args;
	for (uint32_t i = 0; a->pPipelines && i < a->createInfoCount; i++)
		if (a->pPipelines[i])
			vkDestroyPipeline(w->dev, a->pPipelines[i], NULL);
}

/* The object a made-ahead job's call makes: its last parameter's. */
static uint64_t *job_object(const warm_job *j)
{
	const vk_field *f = &j->cmd->params[j->cmd->nparams - 1];
	uint64_t *p;
	memcpy(&p, (const uint8_t *)j->args + f->offset, sizeof(p));
	return p;
}

static void run_job(vkr_warm *w, warm_job *j)
{
	vk_args_vkCreateGraphicsPipelines *a = j->args;
	vk_calls[vk_command_index(j->cmd)](j->fn, j->args);
	if (j->ahead) {
		uint64_t *o = job_object(j);
		if (o && *o)
			atomic_fetch_add(&w->objects, 1);
		return;
	}
	for (uint32_t i = 0; a->pPipelines && i < a->createInfoCount; i++)
		if (a->pPipelines[i])
			atomic_fetch_add(&w->pipelines, 1);
}

static void *worker_main(void *arg)
{
	vkr_warm *w = arg;
	warm_thread = true;
	pthread_setname_np(pthread_self(), "tracekit-warm");
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->head && (w->reading || w->later) && !atomic_load(&w->stop))
			pthread_cond_wait(&w->cv, &w->mu);
		warm_job *j = w->head;
		if (!j || atomic_load(&w->stop))
			break;  /* read to the end and none waits for room, or stopped */
		w->head = j->next;
		if (!w->head)
			w->tail = &w->head;
		if (j->state == J_TAKEN) {
			job_free(j);
			continue;
		}
		j->state = J_RUNNING;
		pthread_mutex_unlock(&w->mu);
		run_job(w, j);
		pthread_mutex_lock(&w->mu);
		j->state = J_DONE;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

bool vkr_warm_take(vkr *r, uint64_t no, uint32_t count, VkPipeline *out)
{
	vkr_warm *w = r->warm;
	if (!w || w->d != r->d || r->loop)
		return false;
	pthread_mutex_lock(&w->mu);
	uint64_t *at = tmap_at(&w->byno, no, 1);
	warm_job *j = at ? (warm_job *)(uintptr_t)*at : NULL;
	if (!j) {
		pthread_mutex_unlock(&w->mu);
		return false;
	}
	tmap_del(&w->byno, no, 1, NULL);
	if (j->state == J_QUEUED) {
		/* not begun: made here, from the cache, not twice at once */
		j->state = J_TAKEN;
		pthread_mutex_unlock(&w->mu);
		return false;
	}
	while (j->state == J_RUNNING)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	vk_args_vkCreateGraphicsPipelines *a = j->args;
	bool whole = !j->cache_only && a->createInfoCount == count && a->pPipelines &&
		     a->result == VK_SUCCESS;
	for (uint32_t i = 0; whole && i < count; i++)
		whole = a->pPipelines[i] != VK_NULL_HANDLE;
	if (whole) {
		memcpy(out, a->pPipelines, count * sizeof(*out));
		atomic_fetch_add(&w->taken, count);
	} else {
		destroy_made(w, j);
	}
	job_free(j);
	return whole;
}

bool vkr_warm_take_object(vkr *r, uint64_t no, uint64_t *out)
{
	vkr_warm *w = r->warm;
	if (!w || w->d != r->d || r->loop)
		return false;
	pthread_mutex_lock(&w->mu);
	/* for the tests: what the threads would make, had they the time */
	while (w->wait_reader && w->reading && atomic_load(&w->read_no) <= no)
		pthread_cond_wait(&w->cv, &w->mu);
	/* the reader makes none the replay has passed */
	atomic_store(&w->passed, no);
	uint64_t *at = tmap_at(&w->byno, no, 1);
	warm_job *j = at ? (warm_job *)(uintptr_t)*at : NULL;
	while (w->wait_reader && j && j->state == J_QUEUED && !j->later && w->nworkers)
		pthread_cond_wait(&w->cv, &w->mu);
	if (!j || !j->ahead) {
		pthread_mutex_unlock(&w->mu);
		return false;
	}
	tmap_del(&w->byno, no, 1, NULL);
	if (j->state == J_QUEUED) {
		/* not begun: made here (the worker, or ahead_left, frees the job) */
		j->state = J_TAKEN;
		if (!j->later)
			ahead_left(w);
		pthread_mutex_unlock(&w->mu);
		return false;
	}
	while (j->state == J_RUNNING)
		pthread_cond_wait(&w->cv, &w->mu);
	ahead_left(w);
	pthread_mutex_unlock(&w->mu);
	/* (both: device, create info, allocator, the object, then the result) */
	const vk_args_vkCreateDescriptorPool *a = j->args;
	uint64_t *o = job_object(j);
	bool ok = a->result == VK_SUCCESS && o && *o;
	if (ok) {
		*out = *o;
		atomic_fetch_add(&w->objects_taken, 1);
	} else {
		destroy_made(w, j);
	}
	job_free(j);
	return ok;
}

/* How many workers: N asked (-1: as many as the cores but one, at most
 * 8, on a device that is not the CPU: llvmpipe compiles on the cores that
 * render, and on 2 cores vkcube and glmark2-zink replayed no faster with
 * a worker). */
static unsigned workers_for(const vkr *r, const vkr_device *d)
{
	int n = r->opt->pipeline_jobs;
	if (n >= 0)
		return (unsigned)n;
	if (d->vk.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
		return 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores <= 1 ? 0 : cores - 1 > 8 ? 8 : (unsigned)(cores - 1);
}

void vkr_warm_start(vkr *r, vkr_device *d)
{
	struct stat st;
	unsigned n = workers_for(r, d);
	if (r->warm || r->checking || !n || !r->opt->input || stat(r->opt->input, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return;
	vkr_warm *w = trace_xcalloc(1, sizeof(*w));
	VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
	if (vkCreatePipelineCache(d->vk.device, &ci, NULL, &w->cache) != VK_SUCCESS) {
		free(w);
		return;
	}
	w->d = d;
	w->dev = d->vk.device;
	w->validate = r->opt->dev.validate;
	const char *wait = getenv("TRACE_REPLAY_WARM_WAIT");
	w->wait_reader = wait && *wait && strcmp(wait, "0");
	w->cap_dev = d->cap;
	w->path = trace_xstrdup(r->opt->input);
	w->h_device = r->h_device;
	w->h_cache = vk_handle_lookup("VkPipelineCache");
	w->h_pipeline = vk_handle_lookup("VkPipeline");
	w->tail = &w->head;
	w->later_tail = &w->later;
	w->reading = true;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->workers = trace_xcalloc(n, sizeof(*w->workers));
	if (pthread_create(&w->reader, NULL, reader_main, w) != 0) {
		vkDestroyPipelineCache(w->dev, w->cache, NULL);
		free(w->workers);
		free(w->path);
		free(w);
		return;
	}
	for (; w->nworkers < n; w->nworkers++)
		if (pthread_create(&w->workers[w->nworkers], NULL, worker_main, w) != 0)
			break;
	r->warm = w;
}

VkPipelineCache vkr_warm_cache(const vkr *r)
{
	return r->warm && r->warm->d == r->d ? r->warm->cache : VK_NULL_HANDLE;
}

void vkr_warm_objects(const vkr *r, uint64_t *objects, uint64_t *taken)
{
	*objects = r->warm ? atomic_load(&r->warm->objects) : r->warm_objects;
	*taken = r->warm ? atomic_load(&r->warm->objects_taken) : r->warm_objects_taken;
}

uint64_t vkr_warm_made(const vkr *r, uint64_t *jobs, uint64_t *taken, unsigned *threads)
{
	*jobs = r->warm ? atomic_load(&r->warm->jobs) : r->warm_jobs;
	*taken = r->warm ? atomic_load(&r->warm->taken) : r->warm_taken;
	*threads = r->warm ? r->warm->nworkers : r->warm_threads;
	return r->warm ? atomic_load(&r->warm->pipelines) : r->warm_pipelines;
}

void vkr_warm_stop(vkr *r, vkr_device *d)
{
	vkr_warm *w = r->warm;
	if (!w || (d && w->d != d))
		return;
	atomic_store(&w->stop, true);
	pthread_mutex_lock(&w->mu);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->reader, NULL);
	for (unsigned i = 0; i < w->nworkers; i++)
		pthread_join(w->workers[i], NULL);
	/* done, never taken (the replay stopped first, or made them
	 * itself): theirs destroyed; then what was never begun */
	for (size_t i = 0; i < w->byno.cap; i++) {
		warm_job *j = (warm_job *)(uintptr_t)w->byno.vals[i];
		if (!tmap_used(&w->byno, i) || j->state != J_DONE)
			continue;
		destroy_made(w, j);
		job_free(j);
	}
	for (warm_job *j = w->head, *next; j; j = next) {
		next = j->next;
		job_free(j);
	}
	for (warm_job *j = w->later, *next; j; j = next) {
		next = j->next;
		job_free(j);
	}
	for (size_t i = w->nmade; i-- > 0;)
		((destroy_fn)w->made[i].destroy)(w->dev, (void *)(uintptr_t)w->made[i].handle, NULL);
	vkDestroyPipelineCache(w->dev, w->cache, NULL);
	/* what it did, for --stats */
	r->warm_jobs = atomic_load(&w->jobs);
	r->warm_pipelines = atomic_load(&w->pipelines);
	r->warm_taken = atomic_load(&w->taken);
	r->warm_objects = atomic_load(&w->objects);
	r->warm_objects_taken = atomic_load(&w->objects_taken);
	r->warm_threads = w->nworkers;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	TMAP_FREE(&w->map, &w->kinds, &w->byno, &w->samplers);
	free(w->made);
	free(w->workers);
	free(w->path);
	free(w);
	r->warm = NULL;
}
