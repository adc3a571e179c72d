/*
 * The Vulkan schema: what the registry (vk.xml) says about every command,
 * struct, enum, bitmask and handle, as tables that lib/vkschema_gen.py
 * writes into build/gen/vkschema_gen.c, and the one walker over them that
 * turns live C arguments into a trace_call and a record back into C.
 *
 * Per command, build/gen/vkschema_cmds.h (which needs <vulkan/vulkan.h>)
 * adds the argument struct vk_args_NAME (the parameters in order, then
 * `result`), the descriptor vk_cmd_NAME and the typed helpers
 * vk_encode_NAME() and vk_decode_NAME().  Everything here is plain C and
 * needs no Vulkan header.
 *
 * How values are written (the apitrace conventions, so `apitrace dump`
 * shows them):
 *   handles                  POINTER (the handle's value)
 *   NULL pointers            NULL
 *   pointer to one T         ARRAY of one T ("&{...}" in dump)
 *   pointer with a len       ARRAY of len T; void* with a len: BLOB
 *   char* / char[N]          STRING; uint8_t[N] BLOB; other T[N] ARRAY
 *   enums, FlagBits          ENUM with a signature of its one value (the
 *                            first name the registry gives it; none for a
 *                            value the type does not name): a trace pays
 *                            for the values it uses, not the whole type
 *   Flags                    BITMASK with the type's flags up to the last
 *                            one the value shows: what apitrace's dump
 *                            reads of all of them
 *   VkBool32                 BOOL (UINT when neither 0 nor 1)
 *   pNext                    the chain flattened: an ARRAY of the chained
 *                            STRUCTs in chain order, each chosen by its
 *                            sType and written with pNext null (one item
 *                            for the usual single link; nesting each link
 *                            in the one before would pass the readers'
 *                            depth limit on zink's 40-struct chains); an
 *                            sType the registry lacks: VkBaseInStructure
 *                            {sType, pNext}; the loader's own link structs
 *                            (sType 47, 48) are left out
 *   unions, structs with bitfields, video Std types
 *                            BLOB of their bytes: which member a union
 *                            holds is not always knowable from the record
 *   void* without a len, function pointers, platform pointers
 *                            POINTER (the address)
 */
#ifndef VKSCHEMA_H
#define VKSCHEMA_H

#include "trace.h"

typedef enum vk_base {
	VK_B_VOID,     /* void: as a pointee, bytes */
	VK_B_BOOL32,
	VK_B_UINT,     /* unsigned, 1 to 8 bytes */
	VK_B_SINT,
	VK_B_FLOAT,
	VK_B_DOUBLE,
	VK_B_CHAR,
	VK_B_ENUM,
	VK_B_BITMASK,
	VK_B_HANDLE,
	VK_B_STRUCT,
	VK_B_UNION,    /* and bitfield structs: their bytes */
	VK_B_OPAQUE,   /* a type vk.xml does not describe (video Std): its bytes */
	VK_B_EXTERN,   /* platform scalar (xcb_window_t): an unsigned value */
	VK_B_PTRVAL,   /* function pointers, void* typedefs: the address */
} vk_base;

enum {
	VK_F_CONST = 1u << 0,
	VK_F_OPTIONAL = 1u << 1,
	VK_F_OUT = 1u << 2,      /* a parameter the command writes */
	VK_F_NULLTERM = 1u << 3, /* char*: a string; char**: strings */
	VK_F_SINGLE = 1u << 4,   /* T**: each item points at one T */
	VK_F_PNEXT = 1u << 5,
	VK_F_STYPE = 1u << 6,
	VK_F_TYPED_HANDLE = 1u << 7, /* a uint64_t handle of the type that the
				      * sibling typed_by names (a VkObjectType
				      * or VkDebugReportObjectTypeEXT) */
	VK_F_NOAUTO = 1u << 8,       /* noautovalidity: the registry leaves its
				      * validity (a null array here) to the prose */
	VK_F_ADDRESS = 1u << 9,      /* a pointer to a window system's object
				      * (Display*, wl_surface*): its address is
				      * recorded, never what it points at */
};

/* How an array's length comes from a sibling member (or parameter). */
typedef enum vk_len_op {
	VK_LEN_NONE,
	VK_LEN_MEMBER,   /* the sibling's value (through it when a pointer) */
	VK_LEN_DIV4,     /* codeSize / 4 */
	VK_LEN_SAMPLES,  /* (rasterizationSamples + 31) / 32 */
	VK_LEN_CONST,    /* arg */
	VK_LEN_FIELD,    /* pAllocateInfo->descriptorSetCount: uint32 at arg */
} vk_len_op;

typedef struct vk_enum_info {
	const char *name;
	trace_enum_sig sig;      /* every value of the type, aliases left out */
	uint32_t nones;
	const trace_enum_sig *ones; /* one per value, sorted by it: vk_enum_sig() */
} vk_enum_info;

typedef struct vk_bitmask_info {
	const char *name;
	uint32_t size;           /* 4 (VkFlags) or 8 (VkFlags64) */
	trace_bitmask_sig sig;   /* every bit of the type */
	const trace_bitmask_sig *prefix; /* [k]: sig's first k flags; vk_bitmask_sig() */
} vk_bitmask_info;

typedef struct vk_handle_info {
	const char *name;
	int dispatchable;
	const char *parent;      /* registry's parent list, or NULL */
	int32_t objtype;         /* VkObjectType */
} vk_handle_info;

typedef struct vk_field {
	const char *name;
	const char *type;        /* the C type name, as the registry has it */
	uint32_t offset;         /* in the struct, or in vk_args_NAME */
	uint32_t size;           /* sizeof one element of the base type */
	uint8_t base;            /* vk_base */
	uint8_t ptr;             /* pointer levels: 0, 1, 2 */
	uint16_t flags;          /* VK_F_* */
	uint32_t count;          /* fixed array elements (T x[N]), 0 if none */
	int16_t len;             /* index of the sibling with the length */
	uint8_t len_op;          /* vk_len_op */
	uint32_t len_arg;
	const void *ref;         /* vk_struct_info, vk_enum_info, vk_bitmask_info, vk_handle_info */
	uint16_t typed_by;       /* VK_F_TYPED_HANDLE: the sibling with its type */
} vk_field;

typedef struct vk_struct_info {
	trace_struct_sig sig;    /* name and member names */
	uint32_t size;
	int32_t stype;           /* VkStructureType, -1 if none */
	uint8_t blob;            /* a union or a bitfield struct: its bytes */
	uint32_t nfields;
	const vk_field *fields;
	uint8_t handles;         /* a member holds a handle (pNext not followed) */
	uint16_t nwalk;          /* the members walking handles visits */
	const uint16_t *walk;    /* (vk_field_walked), in order */
} vk_struct_info;

typedef enum vk_level { VK_LEVEL_GLOBAL, VK_LEVEL_INSTANCE, VK_LEVEL_DEVICE } vk_level;

/* What a command does to the objects of its handle type `object`. */
typedef enum vk_action {
	VK_ACTION_USE,      /* reads or changes objects it is given */
	VK_ACTION_CREATE,   /* vkCreate*: object is its output handle */
	VK_ACTION_ALLOCATE, /* vkAllocate* */
	VK_ACTION_DESTROY,  /* vkDestroy*: object is the handle it ends */
	VK_ACTION_FREE,     /* vkFree* */
	VK_ACTION_GET,      /* vkGet* returning handles (queues, displays) */
	VK_ACTION_RECORD,   /* vkCmd*: records into the command buffer */
} vk_action;

/* Where the registry lets a vkCmd* be recorded (its renderpass
 * attribute): ANY where it says nothing. */
typedef enum vk_renderpass {
	VK_RENDERPASS_ANY,
	VK_RENDERPASS_INSIDE,
	VK_RENDERPASS_OUTSIDE,
	VK_RENDERPASS_BOTH,
} vk_renderpass;

typedef struct vk_command_info {
	trace_func_sig sig;      /* name and parameter names */
	uint32_t args_size;      /* sizeof(vk_args_NAME) */
	uint32_t nparams;
	const vk_field *params;  /* offsets in vk_args_NAME */
	const vk_field *ret;     /* `result`, or NULL for void */
	uint8_t level;           /* vk_level */
	uint8_t action;          /* vk_action */
	const vk_handle_info *object;
	const char *alias_of;    /* the command this one is an alias of */
	uint8_t renderpass;      /* vk_renderpass */
	uint16_t nwalk_in;       /* the inputs walking handles visits */
	const uint16_t *walk_in; /* (vk_field_walked), in order */
	uint16_t nwalk_out;      /* and the outputs */
	const uint16_t *walk_out;
} vk_command_info;

typedef enum vk_phase {
	VK_PHASE_ENTER, /* before the call: the inputs */
	VK_PHASE_LEAVE, /* after: what the command wrote, and its result */
} vk_phase;

/* The generated tables (build/gen/vkschema_gen.c), each sorted by name. */
extern const vk_struct_info *const vk_structs[];
extern const uint32_t vk_nstructs;
extern const vk_struct_info *const vk_structs_by_stype[]; /* by sType */
extern const uint32_t vk_nstructs_by_stype;
extern const vk_command_info *const vk_commands[];
extern const uint32_t vk_ncommands;
extern const vk_enum_info *const vk_enums[];
extern const uint32_t vk_nenums;
extern const vk_bitmask_info *const vk_bitmasks[];
extern const uint32_t vk_nbitmasks;
extern const vk_handle_info *const vk_handles[];
extern const uint32_t vk_nhandles;

/* A format's texel as the registry's <formats> lays it out (generated,
 * sorted by format): only formats of red, green, blue and alpha
 * channels, uncompressed and of one plane (vkformat.h). */
typedef struct vk_format_layout {
	int32_t format;          /* VkFormat */
	uint8_t block_size;      /* bytes of a texel */
	uint8_t packed;          /* bits of its packed word; 0 if none */
	uint8_t n;               /* channels */
	char chan[5];            /* their names in the order of their bits */
	uint8_t bits[4];
	const char *numeric[4];  /* "UNORM", "SRGB", ... */
} vk_format_layout;
extern const vk_format_layout vk_format_layouts[];
extern const uint32_t vk_nformat_layouts;

/* A value of VkObjectType or VkDebugReportObjectTypeEXT and the handle
 * type it names (generated, sorted by value). */
typedef struct vk_typed_handle {
	int64_t value;
	const vk_handle_info *handle;
} vk_typed_handle;

/* What a VK_F_TYPED_HANDLE field whose type field (TYPE_FIELD) holds
 * VALUE is: the handle type, or vk_handle_untyped where the value names
 * none (VK_OBJECT_TYPE_UNKNOWN, a value newer than the registry). */
const vk_handle_info *vk_typed_handle_type(const vk_field *type_field, int64_t value);
extern const vk_handle_info vk_handle_untyped;

/* Lookups by name (or sType); NULL when the registry has none. */
const vk_command_info *vk_command_lookup(const char *name);
const vk_struct_info *vk_struct_lookup(const char *name);
const vk_struct_info *vk_struct_by_stype(int32_t stype);
/* Whether pointer F of struct S at BASE is one the specification says is
 * ignored there (not followed when writing or reading).  BASE holds the
 * fields the condition reads: all of them, or, when decoding, those
 * decoded before F (a graphics pipeline's states are decoded last). */
bool vk_field_ignored(const vk_struct_info *s, const vk_field *f, const void *base);
const vk_enum_info *vk_enum_lookup(const char *name);
const vk_bitmask_info *vk_bitmask_lookup(const char *name);
const vk_handle_info *vk_handle_lookup(const char *name);

/* The signature an ENUM value of type E carries: VALUE alone, named (one
 * of E's ones), or no value when E (or E NULL) does not name it. */
const trace_enum_sig *vk_enum_sig(const vk_enum_info *e, int64_t value);
/* The signature a BITMASK value of type B carries: B's flags in order up
 * to the last that VALUE shows (as apitrace's dump picks them: a flag
 * whose bits are all left, a zero flag for zero); none without B. */
const trace_bitmask_sig *vk_bitmask_sig(const vk_bitmask_info *b, uint64_t value);

/*
 * Sets c's signature (on first use) and fills the arguments of PHASE from
 * ARGS, a vk_args_NAME: at VK_PHASE_ENTER the inputs, the outputs left
 * TRACE_MISSING; at VK_PHASE_LEAVE only the outputs and the result.  A
 * deep copy into c's arena: nothing in c points at ARGS afterwards.
 */
void vk_encode_args(const vk_command_info *cmd, trace_call *c, const void *args,
		    vk_phase phase);
/* The whole record at once, inputs, outputs and result (a call made
 * from C, as a trimmer writes it, rather than traced around). */
void vk_encode_call(const vk_command_info *cmd, trace_call *c, const void *args);
/* One struct at P as a STRUCT value (its pNext chain included). */
void vk_encode_struct(const vk_struct_info *s, trace_arena *a, trace_value *out,
		      const void *p);

/*
 * The reverse: a record into ARGS (a zeroed vk_args_NAME), everything it
 * points at allocated in A.  Arguments the record lacks stay zero.  -1
 * with err when a value has a kind the schema does not allow there.
 */
int vk_decode_args(const vk_command_info *cmd, const trace_call *c, trace_arena *a,
		   void *args, trace_error *err);
int vk_decode_struct(const vk_struct_info *s, trace_arena *a, const trace_value *v,
		     void *out, trace_error *err);

/*
 * Every handle that ARGS (a vk_args_NAME, as vk_decode_args() made it)
 * holds, in parameter order: in the parameters themselves, in the structs
 * and arrays they point at, and in pNext chains; a uint64_t typed by a
 * sibling (VK_F_TYPED_HANDLE) as the handle type the sibling names
 * (vk_handle_untyped where it names none).  OUTPUTS: the parameters
 * the command writes (VK_F_OUT), else the others.  FN gets the handle's
 * type and its value, which it may change in place; TOP says the value is
 * a parameter itself, not inside a struct or array (f is its field).
 */
typedef void (*vk_handle_fn)(void *ctx, const vk_handle_info *h, uint64_t *value, bool top,
			     const vk_field *f);
/* A code by command name, in a table a file keeps: vk_by_name gives
 * NAME's, or DFLT where the table has none (tables are short: a few
 * dozen names, looked up once per command, not per record). */
typedef struct vk_named {
	const char *name;
	int code;
} vk_named;
int vk_by_name(const vk_named *table, size_t n, const char *name, int dflt);
#define VK_BY_NAME(table, name, dflt) \
	vk_by_name((table), sizeof(table) / sizeof((table)[0]), (name), (dflt))

/* The struct of type STYPE (a VkStructureType) in the pNext chain NEXT,
 * or NULL. */
const void *vk_chain_find(const void *next, int32_t stype);

void vk_walk_handles(const vk_command_info *cmd, void *args, bool outputs, vk_handle_fn fn,
		     void *ctx);
/* The same over one struct (its pNext chain included). */
void vk_walk_struct_handles(const vk_struct_info *s, void *p, vk_handle_fn fn, void *ctx);
/* Whether the walks visit F: a pNext chain, a handle, a typed handle, a
 * struct that holds one (the generator lists them: walk, walk_in,
 * walk_out). */
bool vk_field_walked(const vk_field *f);
/* The index of cmd in vk_commands[], or -1. */
int32_t vk_command_index(const vk_command_info *cmd);

/*
 * Descriptor update templates.  vkUpdateDescriptorSetWithTemplate and
 * vkCmdPushDescriptorSetWithTemplateKHR pass their descriptors as pData,
 * a void* the registry gives no length: where it is and what it holds
 * comes from the template's entries (the N VkDescriptorUpdateTemplateEntry
 * of its create info).  The capture layer writes pData as a BLOB of the
 * bytes the template reads (man/trace-format.5).
 */
struct VkDescriptorUpdateTemplateEntry;

/* The length of array F (an element of FIELDS, the members of the struct
 * or the parameters at STRUCT_BASE) from the sibling that counts it; 1
 * for a field that is no array. */
uint64_t vk_field_len(const vk_field *fields, const vk_field *f, const void *struct_base);

/*
 * The bytes of pData the entries read: the largest offset + (count - 1) *
 * stride + the size of one descriptor's info (VkDescriptorImageInfo,
 * VkDescriptorBufferInfo, a VkBufferView or an acceleration structure
 * handle; count bytes for an inline uniform block).  False when an entry
 * has a descriptor type this does not know (mutable, later extensions).
 */
bool vk_template_data_size(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			   uint64_t *size);

/*
 * Every handle in DATA (SIZE bytes of pData) that the entries' descriptors
 * name, in entry order, to FN as vk_walk_handles gives them (TOP false; F
 * the registry member that holds such a handle: VkDescriptorImageInfo's
 * sampler or imageView, VkDescriptorBufferInfo's buffer, ...).  Only what
 * the descriptor type reads: a sampled image's sampler member is not a
 * handle.  FN may change the value in place (DATA must be writable then).
 * False when an entry reads past SIZE (those descriptors are skipped) or
 * has a type vk_template_data_size() does not know.
 */
bool vk_walk_template_handles(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			      void *data, uint64_t size, vk_handle_fn fn, void *ctx);

/*
 * The N entries E rewritten into PACKED to read pData packed: each
 * entry's descriptors one after another from offset 0 (each entry
 * 8-aligned), at a stride of one descriptor's info; *SIZE the bytes they
 * read.  What the capture layer records, so that pData's blob holds only
 * bytes the entries read (zink's entries point into a large struct of its
 * own).  False where vk_template_data_size() is, or past 4 GB.
 */
bool vk_template_pack(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
		      struct VkDescriptorUpdateTemplateEntry *packed, uint64_t *size);

/* Copies what the entries E read of SRC (laid out as E says) into DST (as
 * PACKED, vk_template_pack()'s, says; zeroed by the caller), only the
 * members each descriptor type reads. */
void vk_template_data_pack(const struct VkDescriptorUpdateTemplateEntry *e,
			   const struct VkDescriptorUpdateTemplateEntry *packed, uint32_t n,
			   const void *src, void *dst);

/*
 * Where each descriptor the entries read lies in pData (SIZE bytes): FN
 * gets the entry, the descriptor's index in it, and the offset and length
 * of its bytes (a VkDescriptorImageInfo, a VkDescriptorBufferInfo, a
 * handle; an inline uniform block is one descriptor of count bytes), in
 * entry order.  False as vk_walk_template_handles: an entry reads past
 * SIZE (those descriptors are skipped) or has a type it does not know.
 */
typedef void (*vk_template_fn)(void *ctx, const struct VkDescriptorUpdateTemplateEntry *e,
			       uint32_t index, uint64_t at, uint64_t len);
bool vk_walk_template_data(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			   uint64_t size, vk_template_fn fn, void *ctx);

struct VkWriteDescriptorSet;
struct VkDescriptorImageInfo;
struct VkDescriptorBufferInfo;

/*
 * One descriptor that a write names, from a VkWriteDescriptorSet or from
 * a template's pData: its binding, array element and type, and what its
 * type holds: an image info, a buffer info or a texel buffer view (the
 * view's handle), each NULL for the other types and where a write's array
 * is NULL.  An inline uniform block is one descriptor holding none.
 */
typedef struct vk_descriptor {
	uint32_t binding, element;
	int32_t type;
	const struct VkDescriptorImageInfo *image;
	const struct VkDescriptorBufferInfo *buffer;
	const uint64_t *texel_view;
} vk_descriptor;
typedef void (*vk_descriptor_fn)(void *ctx, const vk_descriptor *d);

/* The descriptors W writes, in order, to FN. */
void vk_write_descriptors(const struct VkWriteDescriptorSet *w, vk_descriptor_fn fn, void *ctx);
/* The descriptors the entries E write from DATA (SIZE bytes of pData), in
 * entry order, to FN; false as vk_walk_template_data. */
bool vk_template_descriptors(const struct VkDescriptorUpdateTemplateEntry *e, uint32_t n,
			     const void *data, uint64_t size, vk_descriptor_fn fn, void *ctx);

/* What the capture's call of record C returned, a VkResult's value (0,
 * VK_SUCCESS, where it returns none). */
static inline int32_t vk_record_result(const trace_call *c)
{
	if (!c->ret)
		return 0;
	if (c->ret->kind == TRACE_ENUM)
		return (int32_t)c->ret->en.value;
	if (c->ret->kind == TRACE_SINT)
		return (int32_t)c->ret->i;
	if (c->ret->kind == TRACE_UINT)
		return (int32_t)c->ret->u;
	return 0;
}

/* The command named NAME, for a record's function name ("vk..."), or NULL. */
const vk_command_info *trace_vk_command(const char *name);

/*
 * The object update pseudo-calls (man/trace-format.5): bytes the host
 * wrote into a buffer or image, at offsets of the object.
 *   tracekit.update(object, offset, data): data at offset.
 *   tracekit.update.sparse(object, offset, mask, data): 4-byte word i
 *     from offset (bit i % 8 of mask byte i / 8 set), the set words one
 *     after another in data.
 */
#define VK_UPDATE_CALL "tracekit.update"
#define VK_UPDATE_SPARSE_CALL "tracekit.update.sparse"
extern const trace_func_sig vk_update_sig, vk_update_sparse_sig;

/* Whether NAME is one of them. */
bool vk_is_update(const char *name);

/* An update record, read. */
typedef struct vk_update_run {
	uint64_t offset, len;
	const uint8_t *data;
} vk_update_run;

typedef struct vk_update {
	uint64_t object;
	uint64_t offset, end;   /* the bytes it may write: [offset, end) */
	const uint8_t *data;
	uint64_t len;           /* of data */
	const uint8_t *mask;    /* sparse: the words written; NULL: all */
	uint64_t mask_len;
	const vk_update_run *runs; /* listed ahead (vk_update_list), or NULL */
	uint64_t nruns;
} vk_update;

/* C (an update record) into *U; -1 with ERR set if it is malformed. */
int vk_update_read(const trace_call *c, vk_update *u, trace_error *err);

/* The runs of adjacent bytes U writes, in order: FN(CTX, offset, bytes,
 * length) for each. */
typedef void (*vk_update_fn)(void *ctx, uint64_t off, const uint8_t *data, uint64_t len);
void vk_update_runs(const vk_update *u, vk_update_fn fn, void *ctx);
/* How many runs vk_update_runs gives, counted up to a little past MOST. */
uint64_t vk_update_nruns(const vk_update *u, uint64_t most);
/* U's runs listed, in A: vk_update_runs and vk_update_nruns read the list
 * from then on (a replay lists them on the thread that decodes ahead). */
void vk_update_list(vk_update *u, trace_arena *a);
/* U's runs written into DST, the bytes of its object from offset 0:
 * vk_update_runs with a memcpy a run and nothing else between. */
void vk_update_copy(const vk_update *u, uint8_t *dst);

/* A sparse update's mask and data from the N words at LIVE and a copy of
 * what they held, OLD: the bits of MASK ((N + 7) / 8 bytes) set for the
 * words that differ, those words one after another in DATA (room for N
 * words); OLD becomes LIVE.  Returns how many words differ.  _plain: the
 * same without vector instructions (vk_update_gather uses them where the
 * processor has them). */
size_t vk_update_gather(const uint8_t *live, uint8_t *old, size_t n, uint8_t *mask, uint8_t *data);
size_t vk_update_gather_plain(const uint8_t *live, uint8_t *old, size_t n, uint8_t *mask,
			      uint8_t *data);

#endif
