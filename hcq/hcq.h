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
} hcq_status;

typedef struct hcq_device hcq_device;
typedef struct hcq_buffer hcq_buffer;
typedef struct hcq_signal hcq_signal;
typedef struct hcq_queue hcq_queue;
typedef struct hcq_program hcq_program;

/* This thread's message for its last failed call ("" when none failed). */
const char* hcq_last_error(void);

/* Devices: "sim:navi31" or a PCI address. */
hcq_status hcq_device_open(const char* name, hcq_device** device);
void hcq_device_close(hcq_device* device);
hcq_status hcq_device_synchronize(hcq_device* device);
/* The timeline: the signal, the next value to signal, and taking that value. */
hcq_signal* hcq_device_timeline_signal(hcq_device* device);
uint64_t hcq_device_timeline_value(const hcq_device* device);
uint64_t hcq_device_next_timeline(hcq_device* device);

/* Buffers: VRAM (host = 0) or host DMA memory (host = 1). */
hcq_status hcq_buffer_alloc(hcq_device* device, uint64_t size, int host, hcq_buffer** buffer);
void hcq_buffer_free(hcq_buffer* buffer);
uint64_t hcq_buffer_address(const hcq_buffer* buffer);
uint64_t hcq_buffer_size(const hcq_buffer* buffer);
void* hcq_buffer_cpu(const hcq_buffer* buffer); /* NULL when the CPU cannot map it */
hcq_status hcq_buffer_copyin(hcq_buffer* buffer, const void* data, uint64_t size);
hcq_status hcq_buffer_copyout(void* data, hcq_buffer* buffer, uint64_t size);
/* Peer access: maps another device's buffer (VRAM or host memory) into `device` at the same address. */
hcq_status hcq_buffer_map(hcq_device* device, const hcq_buffer* buffer);
/* Lets `peer`'s queues wait on and write `device`'s signals (maps its signal pool into `peer`). */
hcq_status hcq_device_share_signals(hcq_device* device, hcq_device* peer);

/* Signals. timeout_ms 0 = the default (30 s, or HCQDEV_WAIT_TIMEOUT_MS). */
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
 * values, as arguments (the kernel's hidden arguments and dispatch packet are filled from global and local). */
void hcq_queue_exec(hcq_queue* queue, const hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                    const uint32_t* values, size_t value_count, const uint32_t global[3], const uint32_t local[3]);
hcq_status hcq_queue_bind(hcq_queue* queue);
hcq_status hcq_queue_submit(hcq_queue* queue, const uint64_t* values, size_t value_count);

/* Programs: kernel `kernel` of a gfx1100 code object (ELF bytes). */
hcq_status hcq_program_load(hcq_device* device, const void* code_object, size_t size, const char* kernel,
                            hcq_program** program);
void hcq_program_free(hcq_program* program);
uint64_t hcq_program_kernarg_size(const hcq_program* program);
/* Runs it ordered by the device's timeline; with wait != 0 waits and stores the kernel's time in *seconds. */
hcq_status hcq_program_run(hcq_program* program, hcq_buffer* const* buffers, size_t buffer_count,
                           const uint32_t* values, size_t value_count, const uint32_t global[3],
                           const uint32_t local[3], int wait, double* seconds);

#ifdef __cplusplus
}
#endif

#endif /* BAREGPU_HCQ_HCQ_H_ */
