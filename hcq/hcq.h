/* The C API of baregpu's HCQ (hcq/device.h and friends) for any language with a C FFI.
 *
 * Handles are opaque. Functions that can fail return hcq_status; on failure hcq_last_error() gives this thread's
 * message for the last failure (valid until the thread's next failing call). Values in queue commands may be
 * variables: the *_var functions take a variable index, and hcq_queue_submit's values array gives their values.
 *
 * Threads: every function may be called from any thread. Calls on one device (and on its buffers, queues and
 * programs) are serialised by the device's lock; signal value reads and writes are atomic and lock-free in effect,
 * and hcq_signal_wait lets other calls on the device go on while it waits (hcq_device_close waits for it). Building
 * one queue from two threads at once is serialised too, but interleaves their commands: give each thread its own
 * queue. hcq_program_run with wait != 0 holds the device until the kernel finished.
 *
 * Recovery: a wait (hcq_signal_wait, hcq_buffer_wait, hcq_device_synchronize, hcq_program_run) that times out resets
 * the device's queues that still have work (a hung or spinning kernel, an illegal instruction, a copy that faulted):
 * their waves are killed and the commands they had not run are dropped and never signal; the device's timeline is
 * completed. HCQ_ERROR_TIMEOUT's message says what was reset, and the next submission runs. A fault the GPU
 * reports while a wait is pending (a page fault, an illegal instruction, a packet an engine refused) ends the wait
 * at once with HCQ_ERROR_DEVICE_FAULT, the decoded fault in its message, and the same recovery.
 *
 * Order of teardown: any. Closing a device stops its engines (queues still waiting are abandoned), then releases
 * its queues' and programs' device resources and its memory; its buffers, signals, queues and programs stay valid
 * handles that must still be freed, and every other call on them fails with HCQ_ERROR_FAILED_PRECONDITION
 * (hcq_buffer_cpu returns NULL, hcq_signal_value 0). Freeing an object before its device is of course fine.
 *
 * Arrays: a NULL array with a non-zero count, or a NULL element in it, is HCQ_ERROR_INVALID_ARGUMENT. No C++
 * exception crosses this interface: one inside becomes HCQ_ERROR_INTERNAL (HCQ_ERROR_RESOURCE_EXHAUSTED for an
 * allocation failure).
 *
 * Signal values are 32 bits (the engines write and compare 32 bits): the API's uint64_t values above 0xffffffff
 * are refused in queue commands and waits, and hcq_signal_set_value stores the value modulo 2^32. */
#ifndef BAREGPU_HCQ_HCQ_H_
#define BAREGPU_HCQ_HCQ_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  HCQ_OK = 0,
  HCQ_ERROR_INVALID_ARGUMENT = 1,
  HCQ_ERROR_NOT_FOUND = 2,
  HCQ_ERROR_TIMEOUT = 3,
  HCQ_ERROR_UNAVAILABLE = 4,
  HCQ_ERROR_UNIMPLEMENTED = 5,
  HCQ_ERROR_RESOURCE_EXHAUSTED = 6,
  HCQ_ERROR_FAILED_PRECONDITION = 7,
  HCQ_ERROR_INTERNAL = 8,
  HCQ_ERROR_DEVICE_FAULT = 9, /* the GPU reported a fault (page fault, illegal instruction) during a wait */
} hcq_status;

/* The API's version: the major changes when a function's meaning or a struct's layout changes incompatibly, the
 * minor when functions or trailing struct fields are added. */
#define HCQ_API_VERSION_MAJOR 1
#define HCQ_API_VERSION_MINOR 3
#define HCQ_API_VERSION ((HCQ_API_VERSION_MAJOR << 16) | HCQ_API_VERSION_MINOR)

typedef struct hcq_device hcq_device;
typedef struct hcq_buffer hcq_buffer;
typedef struct hcq_signal hcq_signal;
typedef struct hcq_queue hcq_queue;
typedef struct hcq_program hcq_program;
typedef struct hcq_graph hcq_graph;

/* This thread's message for its last failed call ("" when none failed). */
const char* hcq_last_error(void);
/* HCQ_API_VERSION of the library (a program built against another major must not use it). */
uint32_t hcq_api_version(void);

/* A command argument that is either a constant or a variable: variable `variable`'s value at submit (the values
 * array of hcq_queue_submit) plus `value`. Build them with hcq_constant and hcq_variable. */
typedef struct {
  uint64_t value;    /* the constant; for a variable, an addend */
  uint32_t variable; /* the variable's index, when is_variable */
  uint32_t is_variable;
} hcq_value;
static inline hcq_value hcq_constant(uint64_t value) {
  hcq_value v = {value, 0, 0};
  return v;
}
static inline hcq_value hcq_variable(uint32_t index) {
  hcq_value v = {0, index, 1};
  return v;
}

/* Devices: "sim:navi31" or a PCI address. */
hcq_status hcq_device_open(const char* name, hcq_device** device);
/* Flags of hcq_device_open_flags. */
#define HCQ_DEVICE_PROFILE 1u /* bracket every exec and copy with timestamps for hcq_device_profile_json */
hcq_status hcq_device_open_flags(const char* name, uint32_t flags, hcq_device** device);
void hcq_device_close(hcq_device* device);
hcq_status hcq_device_synchronize(hcq_device* device);

/* What a device is. IP versions are packed as amdgpu's IP_VERSION(major, minor, revision): (major << 16) |
 * (minor << 8) | revision; 0 when the device has no such block. */
typedef struct {
  uint32_t struct_size;        /* the caller sets sizeof(hcq_device_properties); no field past it is written */
  char name[64];               /* as opened: "sim:navi31", "0000:03:00.0" */
  char arch[16];               /* the compiler's target: "gfx1100" */
  uint32_t gfx_target_version; /* major * 10000 + minor * 100 + stepping (KFD's gfx_target_version): 110000 */
  uint32_t shader_engines;     /* gc_info num_se */
  uint32_t shader_arrays_per_engine;
  uint32_t compute_units; /* all of them, active ones only */
  uint32_t simds_per_cu;
  uint32_t wave_size; /* the wave size kernels default to */
  uint32_t max_waves_per_simd;
  uint32_t lds_bytes; /* LDS a workgroup may use */
  uint64_t vram_bytes;
  uint64_t visible_vram_bytes; /* the CPU-visible part (BAR0) */
  uint32_t gc_version, sdma_version, mmhub_version, mp0_version, mp1_version, nbio_version, ih_version, hdp_version;
  uint64_t timestamp_hz; /* the clock signal timestamps count (their raw 64-bit value / timestamp_hz = seconds) */
} hcq_device_properties;
/* The profiled spans so far (after a synchronize) as Chrome trace JSON (chrome://tracing, Perfetto), NUL-terminated
 * into out[capacity]; *length gets its length without the NUL, also when it does not fit
 * (HCQ_ERROR_RESOURCE_EXHAUSTED; out is then left as it was, and may be NULL with capacity 0). Empty "traceEvents"
 * without HCQ_DEVICE_PROFILE. Spans of work no hcq_device_synchronize has waited for yet are not included. */
hcq_status hcq_device_profile_json(hcq_device* device, char* out, size_t capacity, size_t* length);
/* Fills *properties up to properties->struct_size (which must be at least the size of API 1.1's struct; a larger
 * struct keeps the fields past API 1.1's as they were, and struct_size as the caller set it). name and arch are
 * NUL-terminated, truncated to their arrays. */
hcq_status hcq_device_get_properties(hcq_device* device, hcq_device_properties* properties);
/* The timeline: the signal, the next value to signal, and taking that value. */
hcq_signal* hcq_device_timeline_signal(hcq_device* device);
uint64_t hcq_device_timeline_value(const hcq_device* device);
uint64_t hcq_device_next_timeline(hcq_device* device);

/* Buffers: VRAM (host = 0) or host DMA memory (host = 1). A buffer the CPU maps sits at its CPU address:
 * hcq_buffer_address equals hcq_buffer_cpu, on every device it is mapped to (the unified address space tinygrad's
 * HCQ assumes, as KFD gives it). */
hcq_status hcq_buffer_alloc(hcq_device* device, uint64_t size, int host, hcq_buffer** buffer);
void hcq_buffer_free(hcq_buffer* buffer);
uint64_t hcq_buffer_address(const hcq_buffer* buffer);
uint64_t hcq_buffer_size(const hcq_buffer* buffer);
void* hcq_buffer_cpu(const hcq_buffer* buffer); /* NULL when the CPU cannot map it */
/* Copies through the device's copy engine, ordered by its timeline: copyin returns once `data` may be reused, before
 * the copy has landed, so a queue that reads the buffer waits for the timeline's last value first
 * (hcq_device_timeline_value - 1), as HCQ queues do; copyout returns with the bytes, after everything submitted
 * before it. */
hcq_status hcq_buffer_copyin(hcq_buffer* buffer, const void* data, uint64_t size);
hcq_status hcq_buffer_copyout(void* data, hcq_buffer* buffer, uint64_t size);
/* A view of [offset, offset + size) of `buffer` (itself a buffer or a view): its own handle, at buffer's address +
 * offset, freed with hcq_buffer_free. The memory lives until the buffer and all its views are freed, in any order.
 * Out of range and size 0 are HCQ_ERROR_INVALID_ARGUMENT. */
hcq_status hcq_buffer_view(hcq_buffer* buffer, uint64_t offset, uint64_t size, hcq_buffer** view);
/* Waits until the 32-bit signal value at `offset` of `buffer` (a signal slot the caller laid out, as the *_at
 * commands use) is >= value, as hcq_signal_wait does: spinning briefly, then sleeping in growing steps, without
 * holding the device; on timeout the error names the device's queues and where each stands. timeout_ms 0 = the
 * default. The offset must be 4-byte aligned and inside the buffer, whose memory the CPU must map. */
hcq_status hcq_buffer_wait(hcq_buffer* buffer, uint64_t offset, uint64_t value, uint64_t timeout_ms);
/* Peer access: maps another device's buffer (VRAM or host memory) into `device` at the same address. */
hcq_status hcq_buffer_map(hcq_device* device, const hcq_buffer* buffer);
/* Lets `peer`'s queues wait on and write `device`'s signals (maps its signal pool into `peer`). */
hcq_status hcq_device_share_signals(hcq_device* device, hcq_device* peer);

/* Signals. timeout_ms 0 = the default (30 s, or HCQDEV_WAIT_TIMEOUT_MS as it was when the device opened). */
/* Signals come from a per-device pool of 256 (tinygrad's 4096-byte pool; the device's timeline signal is one of
 * them) whose size this API does not set (C++ has hcq::DeviceOptions::signal_pool_bytes). When the pool is used up,
 * hcq_signal_new fails with HCQ_ERROR_RESOURCE_EXHAUSTED: free the signals no longer needed (hcq_signal_free). */
hcq_status hcq_signal_new(hcq_device* device, uint64_t value, hcq_signal** signal);
void hcq_signal_free(hcq_signal* signal);
uint64_t hcq_signal_value(const hcq_signal* signal);
void hcq_signal_set_value(hcq_signal* signal, uint64_t value);
hcq_status hcq_signal_wait(const hcq_signal* signal, uint64_t value, uint64_t timeout_ms);
double hcq_signal_timestamp_us(const hcq_signal* signal);

/* Queues. Building never fails on the spot; an invalid command makes the next bind or submit fail. */
hcq_status hcq_queue_new_compute(hcq_device* device, hcq_queue** queue);
hcq_status hcq_queue_new_copy(hcq_device* device, hcq_queue** queue);
void hcq_queue_free(hcq_queue* queue);
void hcq_queue_reset(hcq_queue* queue);
void hcq_queue_wait(hcq_queue* queue, const hcq_signal* signal, uint64_t value);
void hcq_queue_wait_var(hcq_queue* queue, const hcq_signal* signal, uint32_t variable);
void hcq_queue_signal(hcq_queue* queue, const hcq_signal* signal, uint64_t value);
void hcq_queue_signal_var(hcq_queue* queue, const hcq_signal* signal, uint32_t variable);
void hcq_queue_timestamp(hcq_queue* queue, const hcq_signal* signal);
void hcq_queue_memory_barrier(hcq_queue* queue);                                             /* compute */
void hcq_queue_copy(hcq_queue* queue, uint64_t destination, uint64_t source, uint64_t size); /* copy */
/* Compute: runs the program on global[] workgroups of local[] work-items, with the buffers' addresses, then the
 * values, as arguments (the kernel's hidden arguments and dispatch packet are filled from global and local). When
 * the code object has metadata, the kernel's explicit arguments must be exactly buffer_count 8-byte pointers then
 * value_count 4-byte values, and local[] its reqd_work_group_size if it has one (also for hcq_program_run). The
 * arguments are the queue's until it is reset or freed and its last submission has finished (a bound queue may be
 * submitted again and again); no signal of the caller's, nor the device's timeline, needs to be signalled for them
 * to be reclaimed. */
void hcq_queue_exec(hcq_queue* queue, const hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                    const uint32_t* values, size_t value_count, const uint32_t global[3], const uint32_t local[3]);
/* The same commands by address, for signals the caller lays out itself (16-byte slots: the 32-bit value at +0, the
 * 64-bit timestamp at +8, in memory the queue's device reaches) and for addresses known only at submit (variables).
 * A signal address must be 4-byte aligned, a timestamp address 8-byte aligned: a misaligned constant fails the next
 * bind or submit, a variable whose value (plus addend) is misaligned fails that submit. */
void hcq_queue_wait_at(hcq_queue* queue, hcq_value address, hcq_value value);
void hcq_queue_signal_at(hcq_queue* queue, hcq_value address, hcq_value value);
void hcq_queue_timestamp_at(hcq_queue* queue, hcq_value address);
void hcq_queue_copy_at(hcq_queue* queue, hcq_value destination, hcq_value source, uint64_t size); /* copy */
/* Compute: runs the program with kernel arguments the caller wrote at offset `args_offset` of `args` (CPU-visible
 * memory, hcq_program_args_size(program) bytes from there, 16-byte aligned; the buffers' addresses and values as
 * the kernel's metadata lays them out). The queue writes the hidden arguments and dispatch packet behind them; the
 * dimensions may be variables (with addends), constant local sizes must equal the kernel's reqd_work_group_size.
 * The memory must stay untouched until the submission ran. */
void hcq_queue_exec_at(hcq_queue* queue, const hcq_program* program, hcq_buffer* args, uint64_t args_offset,
                       const hcq_value global[3], const hcq_value local[3]);
hcq_status hcq_queue_bind(hcq_queue* queue);
hcq_status hcq_queue_submit(hcq_queue* queue, const uint64_t* values, size_t value_count);

/* Programs: kernel `kernel` of a gfx1100 code object (ELF bytes): linked (ET_DYN), or the relocatable object (ET_REL)
 * LLVM writes, as tinygrad's compiler hands it over, laid out and relocated by the loader. */
hcq_status hcq_program_load(hcq_device* device, const void* code_object, size_t size, const char* kernel,
                            hcq_program** program);
void hcq_program_free(hcq_program* program);
uint64_t hcq_program_kernarg_size(const hcq_program* program);
/* Bytes of argument memory one hcq_queue_exec_at needs (the kernarg segment and the backend's dispatch packet). */
uint64_t hcq_program_args_size(const hcq_program* program);
/* What the code object's metadata says of the kernel's explicit arguments: their count, and each one's offset and
 * size in the kernarg segment (arrays of `capacity`; *count is the total even when larger). 0 arguments when the
 * code object has no metadata. reqd_work_group_size: 0,0,0 when the kernel does not require one. */
hcq_status hcq_program_arguments(const hcq_program* program, uint32_t* offsets, uint32_t* sizes, size_t capacity,
                                 size_t* count);
hcq_status hcq_program_required_local(const hcq_program* program, uint32_t local[3]);
/* Runs it ordered by the device's timeline; with wait != 0 waits and stores the kernel's time in *seconds. */
hcq_status hcq_program_run(hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                           const uint32_t* values, size_t value_count, const uint32_t global[3],
                           const uint32_t local[3], int wait, double* seconds);

/* Graphs (hcq::Graph, tinygrad's HCQGraph): kernels and copies, on one device or several, recorded once into bound
 * queues and replayed with new variable values; a replay patches what depends on variables and submits each queue
 * by reference. `variables`: how many values hcq_graph_run takes (the variables the recorded values use). Entries
 * on one device run in recorded order; across devices an entry runs after earlier entries of other devices whose
 * memory it shares (their signals must be shared: hcq_device_share_signals). Recording never fails on the spot: a
 * bad entry makes hcq_graph_finalize fail. Finalize, run and wait hold every device of the graph while they work
 * (wait: until the last run finished). Closing one of its devices releases the graph's device resources; its other
 * calls then fail with HCQ_ERROR_FAILED_PRECONDITION, and hcq_graph_free stays safe. Do not free a graph while
 * another thread uses it. */
hcq_status hcq_graph_new(uint32_t variables, hcq_graph** graph);
void hcq_graph_free(hcq_graph* graph);
/* A kernel launch: the buffers' addresses, then the 32-bit values (constants or variables), as arguments. */
void hcq_graph_add_kernel(hcq_graph* graph, const hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                          const hcq_value* values, size_t value_count, const hcq_value global[3],
                          const hcq_value local[3]);
/* A copy of `size` bytes between device addresses, on `device`'s copy engine. */
void hcq_graph_add_copy(hcq_graph* graph, hcq_device* device, uint64_t destination, uint64_t source, uint64_t size);
hcq_status hcq_graph_finalize(hcq_graph* graph);
hcq_status hcq_graph_run(hcq_graph* graph, const uint64_t* values, size_t value_count);
hcq_status hcq_graph_wait(hcq_graph* graph);

#ifdef __cplusplus
}
#endif

#endif /* BAREGPU_HCQ_HCQ_H_ */
