// The SQ's interrupt words (IH source SQ_INTERRUPT_ID), as amdkfd decodes them for gfx11 in
// drivers/gpu/drm/amd/amdkfd/kfd_int_process_v11.c (SQ_INTERRUPT_WORD_*_CTXID*, enum SQ_INTERRUPT_WORD_ENCODING,
// enum SQ_INTERRUPT_ERROR_TYPE). context_id0 is the entry's src_data[0], context_id1 its src_data[1]. The kernel
// defines these in the .c file, so they are not in the generated headers.
#ifndef BAREGPU_AM_REGS_SQ_INTERRUPT_H_
#define BAREGPU_AM_REGS_SQ_INTERRUPT_H_

#include <cstdint>

namespace am::regs::sq_interrupt {

// enum SQ_INTERRUPT_WORD_ENCODING: context_id1 ENCODING [7:6].
inline constexpr uint32_t kEncodingAuto = 0;
inline constexpr uint32_t kEncodingInstruction = 1;
inline constexpr uint32_t kEncodingError = 2;
inline constexpr uint32_t kEncodingMask = 0x000000c0;
inline constexpr int kEncodingShift = 6;

// enum SQ_INTERRUPT_ERROR_TYPE: context_id0 TYPE [24:21] of an ERROR word.
inline constexpr uint32_t kErrorEdcFue = 0;
inline constexpr uint32_t kErrorIllegalInstruction = 1;
inline constexpr uint32_t kErrorMemoryViolation = 2;
inline constexpr uint32_t kErrorEdcFed = 3;
inline constexpr uint32_t kErrorTypeMask = 0x01e00000;
inline constexpr int kErrorTypeShift = 21;

// The wave that raised it (ERROR and WAVE words alike): context_id0 SH_ID [25], PRIV [26], WAVE_ID [31:27];
// context_id1 SIMD_ID [1:0], WGP_ID [5:2].
inline constexpr uint32_t kShIdMask = 0x02000000;
inline constexpr int kShIdShift = 25;
inline constexpr uint32_t kPrivMask = 0x04000000;
inline constexpr int kPrivShift = 26;
inline constexpr uint32_t kWaveIdMask = 0xf8000000;
inline constexpr int kWaveIdShift = 27;
inline constexpr uint32_t kSimdIdMask = 0x00000003;
inline constexpr int kSimdIdShift = 0;
inline constexpr uint32_t kWgpIdMask = 0x0000003c;
inline constexpr int kWgpIdShift = 2;

constexpr uint32_t Field(uint32_t word, uint32_t mask, int shift) { return (word & mask) >> shift; }

}  // namespace am::regs::sq_interrupt

#endif  // BAREGPU_AM_REGS_SQ_INTERRUPT_H_
