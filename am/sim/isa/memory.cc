// Vector memory: GLOBAL/FLAT (through the GMC, atomics with std::atomic_ref on the mapped host view; FLAT addresses
// in the shared or private aperture go to LDS or to the lane's private segment), SCRATCH (the private segment) and
// DS (the workgroup's LDS), per the RDNA3 ISA.
//
// Scratch: the interpreter keeps each lane's private segment in a host buffer owned by the workgroup runner, sized
// by COMPUTE_TMPRING_SIZE.WAVESIZE (units of 256 bytes per wave, shared by its lanes). A scratch instruction's
// address (SADDR + VADDR + offset) is the offset inside the lane's own segment, which is what the hardware's
// flat-scratch base plus per-lane swizzle resolves to; the segment never aliases GPU memory the driver mapped.
#include <atomic>
#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/str_format.h"
#include "am/regs/sh_mem_constants.h"
#include "am/sim/isa/float_bits.h"
#include "am/sim/isa/opcodes.h"
#include "am/sim/isa/workgroup_runner.h"

namespace am::sim::isa {
namespace {

// The shared load/store opcodes (16..37) of GLOBAL, FLAT and SCRATCH.
struct Access1 {
  bool valid = false;
  bool store = false;
  int bytes = 0;
  bool sign = false;
  int d16 = 0;  // 1: low half of the VGPR, 2: high half
};

Access1 LoadStoreKind(uint16_t op) {
  switch (op) {
    case 16:
      return {true, false, 1, false, 0};
    case 17:
      return {true, false, 1, true, 0};
    case 18:
      return {true, false, 2, false, 0};
    case 19:
      return {true, false, 2, true, 0};
    case 20:
      return {true, false, 4, false, 0};
    case 21:
      return {true, false, 8, false, 0};
    case 22:
      return {true, false, 12, false, 0};
    case 23:
      return {true, false, 16, false, 0};
    case 24:
      return {true, true, 1, false, 0};
    case 25:
      return {true, true, 2, false, 0};
    case 26:
      return {true, true, 4, false, 0};
    case 27:
      return {true, true, 8, false, 0};
    case 28:
      return {true, true, 12, false, 0};
    case 29:
      return {true, true, 16, false, 0};
    case 30:
      return {true, false, 1, false, 1};
    case 31:
      return {true, false, 1, true, 1};
    case 32:
      return {true, false, 2, false, 1};
    case 33:
      return {true, false, 1, false, 2};
    case 34:
      return {true, false, 1, true, 2};
    case 35:
      return {true, false, 2, false, 2};
    case 36:
      return {true, true, 1, false, 2};
    case 37:
      return {true, true, 2, false, 2};
    default:
      return {};
  }
}

// Puts loaded bytes into the lane's destination VGPRs.
void LoadToVgprs(Wave& wave, uint16_t vdst, int lane, const Access1& k, const uint8_t* bytes) {
  if (k.bytes >= 4) {
    for (int i = 0; i < k.bytes / 4; ++i) std::memcpy(&wave.v(vdst + i)[lane], bytes + 4 * i, 4);
    return;
  }
  uint32_t v = k.bytes == 1 ? bytes[0] : (bytes[0] | uint32_t{bytes[1]} << 8);
  if (k.sign)
    v = k.bytes == 1 ? static_cast<uint32_t>(static_cast<int8_t>(v)) : static_cast<uint32_t>(static_cast<int16_t>(v));
  uint32_t& d = wave.v(vdst)[lane];
  if (k.d16 == 0) {
    d = v;
  } else if (k.d16 == 1) {
    d = (d & 0xffff0000u) | (v & 0xffff);
  } else {
    d = (d & 0xffffu) | (v << 16);
  }
}

void StoreFromVgprs(Wave& wave, uint16_t vdata, int lane, const Access1& k, uint8_t* bytes) {
  if (k.bytes >= 4) {
    for (int i = 0; i < k.bytes / 4; ++i) std::memcpy(bytes + 4 * i, &wave.v(vdata + i)[lane], 4);
    return;
  }
  uint32_t v = wave.v(vdata)[lane];
  if (k.d16 == 2) v >>= 16;
  bytes[0] = static_cast<uint8_t>(v);
  if (k.bytes == 2) bytes[1] = static_cast<uint8_t>(v >> 8);
}

// new = f(old, data, compare); the old value is returned.
template <typename T>
T AtomicUpdate(T* location, auto f) {
  std::atomic_ref<T> ref(*location);
  T old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, f(old), std::memory_order_relaxed)) {
  }
  return old;
}

// The atomic operation of a GLOBAL/FLAT opcode (RDNA3 ISA pseudocode). `data` is DATA[0], `cmp` DATA[1].
template <typename T>
bool AtomicOp(uint16_t op, T* location, T data, T cmp, T& old) {
  using S = std::make_signed_t<T>;
  auto run = [&](auto f) {
    old = AtomicUpdate<T>(location, f);
    return true;
  };
  switch (op) {
    case global::kGlobalAtomicSwapB32:
    case global::kGlobalAtomicSwapB64:
      return run([&](T) { return data; });
    case global::kGlobalAtomicCmpswapB32:
    case global::kGlobalAtomicCmpswapB64:
      return run([&](T o) { return o == cmp ? data : o; });
    case global::kGlobalAtomicAddU32:
    case global::kGlobalAtomicAddU64:
      return run([&](T o) { return static_cast<T>(o + data); });
    case global::kGlobalAtomicSubU32:
    case global::kGlobalAtomicSubU64:
      return run([&](T o) { return static_cast<T>(o - data); });
    case global::kGlobalAtomicCsubU32:
      return run([&](T o) { return o > data ? static_cast<T>(o - data) : T{0}; });
    case global::kGlobalAtomicMinI32:
    case global::kGlobalAtomicMinI64:
      return run([&](T o) { return static_cast<S>(data) < static_cast<S>(o) ? data : o; });
    case global::kGlobalAtomicMinU32:
    case global::kGlobalAtomicMinU64:
      return run([&](T o) { return data < o ? data : o; });
    case global::kGlobalAtomicMaxI32:
    case global::kGlobalAtomicMaxI64:
      return run([&](T o) { return static_cast<S>(data) > static_cast<S>(o) ? data : o; });
    case global::kGlobalAtomicMaxU32:
    case global::kGlobalAtomicMaxU64:
      return run([&](T o) { return data > o ? data : o; });
    case global::kGlobalAtomicAndB32:
    case global::kGlobalAtomicAndB64:
      return run([&](T o) { return static_cast<T>(o & data); });
    case global::kGlobalAtomicOrB32:
    case global::kGlobalAtomicOrB64:
      return run([&](T o) { return static_cast<T>(o | data); });
    case global::kGlobalAtomicXorB32:
    case global::kGlobalAtomicXorB64:
      return run([&](T o) { return static_cast<T>(o ^ data); });
    case global::kGlobalAtomicIncU32:
    case global::kGlobalAtomicIncU64:
      return run([&](T o) { return o >= data ? T{0} : static_cast<T>(o + 1); });
    case global::kGlobalAtomicDecU32:
    case global::kGlobalAtomicDecU64:
      return run([&](T o) { return (o == 0 || o > data) ? data : static_cast<T>(o - 1); });
    default:
      break;
  }
  if constexpr (sizeof(T) == 4) {
    switch (op) {
      case global::kGlobalAtomicAddF32:
        return run([&](T o) { return Bits32(AsF32(o) + AsF32(data)); });
      case global::kGlobalAtomicMinF32:
        return run([&](T o) { return Bits32(std::fmin(AsF32(o), AsF32(data))); });
      case global::kGlobalAtomicMaxF32:
        return run([&](T o) { return Bits32(std::fmax(AsF32(o), AsF32(data))); });
      case global::kGlobalAtomicCmpswapF32:
        return run([&](T o) { return AsF32(o) == AsF32(cmp) ? data : o; });
      default:
        break;
    }
  }
  return false;
}

// One lane's dwords of a whole-dword access between its VGPR rows (consecutive rows from `first_row`, kMaxLanes
// apart, Wave::vgpr's layout) and the page's host view (relaxed dword accesses, as MemoryView::CopyRelaxed moves
// them), unrolled. One base pointer with constant row offsets: an array of row pointers was kept in SSE registers
// and on the stack and unpacked for every lane (16 instructions a lane for a b128 load, callgrind).
template <bool kStore, size_t... kRow>
[[gnu::always_inline]] inline void MoveLane(uint32_t* first_row, uint32_t* host_dwords, int l,
                                            std::index_sequence<kRow...>) {
  if constexpr (kStore) {
    (__atomic_store_n(host_dwords + kRow, first_row[kRow * kMaxLanes + l], __ATOMIC_RELAXED), ...);
  } else {
    ((first_row[kRow * kMaxLanes + l] = __atomic_load_n(host_dwords + kRow, __ATOMIC_RELAXED)), ...);
  }
}

bool Is64BitAtomic(uint16_t op) { return op >= global::kGlobalAtomicSwapB64 && op <= global::kGlobalAtomicDecU64; }

}  // namespace

WorkgroupRunner::Flow WorkgroupRunner::Global(Wave& wave, const Instruction& inst) {
  const uint64_t exec = wave.exec();
  const uint32_t* vaddr = wave.v(inst.src[0] - operand::kVgpr0);
  const uint32_t* vaddr_hi = wave.v(inst.src[0] - operand::kVgpr0 + 1);
  const bool saddr = inst.encoding == Encoding::kGlobal && inst.src[2] != operand::kNull && inst.src[2] < 128;
  const uint64_t sbase = saddr ? (wave.sgpr[inst.src[2]] | uint64_t{wave.sgpr[(inst.src[2] + 1) & 127]} << 32) : 0;
  auto address = [&](int l) -> uint64_t {
    const uint64_t base = saddr ? sbase + vaddr[l] : (vaddr[l] | uint64_t{vaddr_hi[l]} << 32);
    return base + static_cast<int64_t>(inst.offset);
  };
  // FLAT (not GLOBAL) addresses are generic: a lane's address inside the shared or private aperture is an LDS
  // address or an offset in its private segment.
  const bool generic = inst.encoding == Encoding::kFlat;
  const Access1 k = LoadStoreKind(inst.opcode);
  if (k.valid) {
    // One lane's access, every case (apertures, alignment modes, unaligned or page-straddling addresses, faults);
    // nothing when it went through, else how the instruction ends.
    auto lane_access = [&](int l) -> std::optional<Flow> {
      uint8_t bytes[16];
      absl::StatusOr<uint64_t> aligned = Aligned(address(l), k.bytes);
      if (!aligned.ok()) return MemoryFault(wave, inst, aligned.status());
      const uint64_t where = *aligned;
      if (generic) {
        const Aperture aperture = ApertureOf(where);
        if (aperture == Aperture::kAmbiguous) return MemoryFault(wave, inst, AmbiguousAperture(where));
        const uint32_t offset = static_cast<uint32_t>(where);
        if (aperture == Aperture::kShared) {
          // Out of the workgroup's LDS: reads 0, writes are dropped (as for DS).
          const bool in_range = uint64_t{offset} + k.bytes <= lds_.size();
          if (k.store) {
            StoreFromVgprs(wave, inst.src[1] - operand::kVgpr0, l, k, bytes);
            if (in_range) std::memcpy(lds_.data() + offset, bytes, k.bytes);
          } else {
            if (in_range) {
              std::memcpy(bytes, lds_.data() + offset, k.bytes);
            } else {
              std::memset(bytes, 0, k.bytes);
            }
            LoadToVgprs(wave, inst.vdst, l, k, bytes);
          }
          return std::nullopt;
        }
        if (aperture == Aperture::kPrivate) {
          absl::StatusOr<uint8_t*> lane_bytes = PrivateBytes(wave, l, offset, k.bytes, k.store);
          if (!lane_bytes.ok()) return MemoryFault(wave, inst, lane_bytes.status());
          if (k.store) {
            StoreFromVgprs(wave, inst.src[1] - operand::kVgpr0, l, k, *lane_bytes);
          } else {
            LoadToVgprs(wave, inst.vdst, l, k, *lane_bytes);
          }
          return std::nullopt;
        }
      }
      if (k.store) {
        StoreFromVgprs(wave, inst.src[1] - operand::kVgpr0, l, k, bytes);
        if (absl::Status s = memory_.Write(where, bytes, k.bytes); !s.ok()) return MemoryFault(wave, inst, s);
      } else {
        if (absl::Status s = memory_.Read(where, bytes, k.bytes); !s.ok()) return MemoryFault(wave, inst, s);
        LoadToVgprs(wave, inst.vdst, l, k, bytes);
      }
      return std::nullopt;
    };
    // Whole dwords (b32..b128) at a naturally aligned global address inside one page the view has translated, which
    // is what most lanes of a kernel's loads and stores are: the dwords move between the VGPRs and the page's host
    // view directly, as lane_access would move them (relaxed dword accesses, MemoryView::CopyRelaxed), in the same
    // lane order. A lane in a page not translated yet translates it (faulting as lane_access would: it reads through
    // the same Host); every other lane (apertures, alignment modes, an access straddling two pages) goes through
    // lane_access, so the lanes before a fault have moved their data and the ones after have not.
    // SH_MEM_CONFIG.ALIGNMENT_MODE leaves a dword-aligned address of a dword-multiple access as it is (Aligned),
    // except STRICT, which wants the access's natural alignment (a dword's for 12 bytes).
    const uint64_t misaligned =
        alignment_mode_ == regs::gc::SH_MEM_ALIGNMENT_MODE_STRICT && k.bytes != 12 ? k.bytes - 1 : 3;
    const Access access = k.store ? Access::kWrite : Access::kRead;
    // The lane loop with the access's width, direction and address form as constants (one loop per combination, so
    // that a lane in a translated page costs its address, a few compares and its dwords). What the loop reads is
    // copied into locals first: a relaxed atomic access is a compiler barrier for memory the lambda reaches by
    // reference, which would be reloaded every lane.
    auto lanes = [&](auto dwords, auto store, auto scalar_base) -> Flow {
      constexpr int kDwords = decltype(dwords)::value;
      constexpr uint64_t kBytes = kDwords * 4;
      constexpr bool kStore = decltype(store)::value, kScalarBase = decltype(scalar_base)::value;
      const uint32_t first_row = kStore ? inst.src[1] - operand::kVgpr0 : inst.vdst;
      const uint32_t* const lo = vaddr;
      const uint32_t* const hi = vaddr_hi;
      const uint64_t base = sbase + static_cast<int64_t>(inst.offset);
      const int64_t offset = inst.offset;
      const uint64_t misaligned_bits = misaligned;
      const bool flat = generic;
      const MemoryView::PageSlot* const pages = memory_.Pages(access);
      // A register tuple that wraps past v255 (Wave::v wraps) is not consecutive in memory: lane_access moves it.
      uint32_t* const rows = first_row + kDwords <= kVgprCount ? wave.v(first_row) : nullptr;
      for (uint64_t m = exec; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        const uint64_t where = kScalarBase ? base + lo[l] : (lo[l] | uint64_t{hi[l]} << 32) + offset;
        uint8_t* host = nullptr;
        if (rows != nullptr && (where & misaligned_bits) == 0 &&
            where % MemoryView::kPage <= MemoryView::kPage - kBytes &&
            (!flat || ApertureOf(where) == Aperture::kGlobal)) {
          host = MemoryView::FindPage(pages, where);
          if (host == nullptr) {
            // Not translated yet (or its slot holds another page): Host looks in the view's ways and translates;
            // null when the page's translation is shorter than a page (lane_access reads it piecewise).
            absl::StatusOr<uint8_t*> found = memory_.Host(where, kBytes, access);
            if (!found.ok()) return MemoryFault(wave, inst, found.status());
            host = *found;
          }
        }
        if (host != nullptr) {
          MoveLane<kStore>(rows, reinterpret_cast<uint32_t*>(host), l, std::make_index_sequence<kDwords>());
          continue;
        }
        if (std::optional<Flow> flow = lane_access(l); flow.has_value()) return *flow;
      }
      return Flow::kNext;
    };
    auto with_width = [&](auto store, auto scalar_base) {
      switch (k.bytes) {
        case 4:
          return lanes(std::integral_constant<int, 1>(), store, scalar_base);
        case 8:
          return lanes(std::integral_constant<int, 2>(), store, scalar_base);
        case 12:
          return lanes(std::integral_constant<int, 3>(), store, scalar_base);
        default:
          return lanes(std::integral_constant<int, 4>(), store, scalar_base);
      }
    };
    if (k.bytes >= 4 && k.d16 == 0 && setup_.fast_paths) {
      if (k.store) {
        return saddr ? with_width(std::true_type(), std::true_type()) : with_width(std::true_type(), std::false_type());
      }
      return saddr ? with_width(std::false_type(), std::true_type()) : with_width(std::false_type(), std::false_type());
    }
    for (uint64_t m = exec; m != 0; m &= m - 1) {
      if (std::optional<Flow> flow = lane_access(std::countr_zero(m)); flow.has_value()) return *flow;
    }
    return Flow::kNext;
  }
  if (inst.opcode >= global::kGlobalAtomicSwapB32 && inst.opcode <= global::kGlobalAtomicAddF32) {
    const bool wide = Is64BitAtomic(inst.opcode);
    const int size = wide ? 8 : 4;
    const uint16_t data = inst.src[1] - operand::kVgpr0;
    const bool cmpswap = inst.opcode == global::kGlobalAtomicCmpswapB32 ||
                         inst.opcode == global::kGlobalAtomicCmpswapB64 ||
                         inst.opcode == global::kGlobalAtomicCmpswapF32;
    for (uint64_t m = exec; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      const uint64_t where = address(l);
      if ((where & (size - 1)) != 0) {
        return MemoryFault(wave, inst,
                           absl::InvalidArgumentError(absl::StrFormat("atomic at unaligned address %#x", where)));
      }
      absl::StatusOr<uint8_t*> host;
      const Aperture aperture = generic ? ApertureOf(where) : Aperture::kGlobal;
      if (aperture == Aperture::kAmbiguous) return MemoryFault(wave, inst, AmbiguousAperture(where));
      if (aperture == Aperture::kShared) {
        const uint32_t offset = static_cast<uint32_t>(where);
        if (uint64_t{offset} + size > lds_.size()) continue;  // out of the LDS: dropped, returns nothing
        host = lds_.data() + offset;
      } else if (aperture == Aperture::kPrivate) {
        host = PrivateBytes(wave, l, static_cast<uint32_t>(where), size, true);
      } else {
        host = memory_.Host(where, size, Access::kWrite);
      }
      if (!host.ok()) return MemoryFault(wave, inst, host.status());
      bool ok;
      uint64_t old = 0;
      if (wide) {
        const uint64_t value = wave.v(data)[l] | uint64_t{wave.v(data + 1)[l]} << 32;
        const uint64_t cmp = cmpswap ? (wave.v(data + 2)[l] | uint64_t{wave.v(data + 3)[l]} << 32) : 0;
        ok = AtomicOp<uint64_t>(inst.opcode, reinterpret_cast<uint64_t*>(*host), value, cmp, old);
      } else {
        uint32_t old32 = 0;
        ok = AtomicOp<uint32_t>(inst.opcode, reinterpret_cast<uint32_t*>(*host), wave.v(data)[l],
                                cmpswap ? wave.v(data + 1)[l] : 0, old32);
        old = old32;
      }
      if (!ok) return Illegal(wave, inst, "atomic operation not implemented by the interpreter");
      if (inst.glc) {  // GLC on an atomic: return the old value
        wave.v(inst.vdst)[l] = static_cast<uint32_t>(old);
        if (wide) wave.v(inst.vdst + 1)[l] = static_cast<uint32_t>(old >> 32);
      }
    }
    return Flow::kNext;
  }
  return Illegal(wave, inst, "GLOBAL/FLAT operation not implemented by the interpreter");
}

WorkgroupRunner::Flow WorkgroupRunner::Mubuf(Wave& wave, const Instruction& inst) {
  // The cache invalidations the memory model emits around barriers: the interpreter's memory is coherent.
  if (inst.opcode == mubuf::kBufferGl0Inv || inst.opcode == mubuf::kBufferGl1Inv) return Flow::kNext;
  const Access1 k = LoadStoreKind(inst.opcode);
  if (!k.valid) return Illegal(wave, inst, "MUBUF operation not implemented by the interpreter");
  // The buffer resource (V#) in four SGPRs: base [47:0], stride [61:48], num_records in the third dword.
  const uint32_t* desc = &wave.sgpr[inst.src[2] & 124];
  const uint64_t base = desc[0] | (uint64_t{desc[1] & 0xffff} << 32);
  const uint32_t stride = (desc[1] >> 16) & 0x3fff, records = desc[2];
  const uint32_t soffset = ScalarValue(wave, inst, inst.vdst);
  const uint16_t vaddr = inst.src[0] - operand::kVgpr0, vdata = inst.src[1] - operand::kVgpr0;
  for (uint64_t m = wave.exec(); m != 0; m &= m - 1) {
    const int l = std::countr_zero(m);
    const uint32_t index = inst.idxen ? wave.v(vaddr)[l] : 0;
    const uint32_t voffset = inst.offen ? wave.v(vaddr + (inst.idxen ? 1 : 0))[l] : 0;
    const uint64_t offset = uint64_t{voffset} + soffset + static_cast<uint32_t>(inst.offset);
    // Out-of-range accesses (raw buffers: past num_records bytes; structured: index past num_records) read 0 and
    // drop writes.
    const bool in_range = stride == 0 ? offset + k.bytes <= records : index < records;
    absl::StatusOr<uint64_t> aligned = Aligned(base + uint64_t{index} * stride + offset, k.bytes);
    if (!aligned.ok()) return MemoryFault(wave, inst, aligned.status());
    const uint64_t address = *aligned;
    uint8_t bytes[16] = {};
    if (k.store) {
      if (!in_range) continue;
      StoreFromVgprs(wave, vdata, l, k, bytes);
      if (absl::Status s = memory_.Write(address, bytes, k.bytes); !s.ok()) return MemoryFault(wave, inst, s);
    } else {
      if (in_range) {
        if (absl::Status s = memory_.Read(address, bytes, k.bytes); !s.ok()) return MemoryFault(wave, inst, s);
      }
      LoadToVgprs(wave, vdata, l, k, bytes);
    }
  }
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::Scratch(Wave& wave, const Instruction& inst) {
  const Access1 k = LoadStoreKind(inst.opcode);
  if (!k.valid) return Illegal(wave, inst, "SCRATCH operation not implemented by the interpreter");
  const uint64_t exec = wave.exec();
  const uint32_t sbase = inst.src[2] != operand::kNull && inst.src[2] < 128 ? wave.sgpr[inst.src[2]] : 0;
  const uint32_t* vaddr = wave.v(inst.src[0] - operand::kVgpr0);
  for (uint64_t m = exec; m != 0; m &= m - 1) {
    const int l = std::countr_zero(m);
    const int64_t unaligned = int64_t{sbase} + (inst.offen ? vaddr[l] : 0) + inst.offset;
    absl::StatusOr<uint64_t> aligned = Aligned(static_cast<uint64_t>(unaligned), k.bytes);
    if (!aligned.ok()) return MemoryFault(wave, inst, aligned.status());
    const int64_t offset = static_cast<int64_t>(*aligned);
    absl::StatusOr<uint8_t*> lane_bytes = PrivateBytes(wave, l, offset, k.bytes, k.store);
    if (!lane_bytes.ok()) return MemoryFault(wave, inst, lane_bytes.status());
    if (k.store) {
      StoreFromVgprs(wave, inst.src[1] - operand::kVgpr0, l, k, *lane_bytes);
    } else {
      LoadToVgprs(wave, inst.vdst, l, k, *lane_bytes);
    }
  }
  return Flow::kNext;
}

absl::StatusOr<uint8_t*> WorkgroupRunner::PrivateBytes(const Wave& wave, int lane, int64_t offset, int bytes,
                                                       bool store) {
  const uint32_t per_lane = setup_.scratch_bytes_per_lane;
  if (offset < 0 || offset + bytes > per_lane) {
    return absl::OutOfRangeError(
        absl::StrFormat("private %s of %d bytes at offset %d of lane %d, but the lane's private segment is %d bytes "
                        "(COMPUTE_TMPRING_SIZE.WAVESIZE and RSRC2.SCRATCH_EN size it)",
                        store ? "store" : "load", bytes, offset, lane, per_lane));
  }
  return scratch_.data() + (size_t{wave.wave_id} * wave.lanes + lane) * per_lane + offset;
}

WorkgroupRunner::Flow WorkgroupRunner::Ds(Wave& wave, const Instruction& inst) {
  if (inst.gds) return Illegal(wave, inst, "GDS is not modelled");
  const uint64_t exec = wave.exec();
  const uint32_t* addr = wave.v(inst.src[0] - operand::kVgpr0);
  const uint16_t data0 = inst.src[1] - operand::kVgpr0, data1 = inst.src[2] - operand::kVgpr0;
  const uint32_t offset = static_cast<uint32_t>(inst.offset) | (uint32_t{inst.offset1} << 8);
  const uint32_t lds_size = static_cast<uint32_t>(lds_.size());
  // Out-of-range LDS reads return 0 and writes are dropped (the hardware's LDS range check).
  auto read = [&](uint32_t a, void* out, int bytes) {
    if (uint64_t{a} + bytes <= lds_size) {
      std::memcpy(out, lds_.data() + a, bytes);
    } else {
      std::memset(out, 0, bytes);
    }
  };
  auto write = [&](uint32_t a, const void* in, int bytes) {
    if (uint64_t{a} + bytes <= lds_size) std::memcpy(lds_.data() + a, in, bytes);
  };
  // The first MEMVIOL of the instruction: the lanes after it do not run, and the wave stops.
  absl::Status violation;
  auto each = [&](auto body) {
    for (uint64_t m = exec; m != 0 && violation.ok(); m &= m - 1) body(std::countr_zero(m));
    return violation.ok() ? Flow::kNext : MemoryFault(wave, inst, violation);
  };
  // A load or store's LDS address under SH_MEM_CONFIG.ALIGNMENT_MODE (false: MEMVIOL, recorded).
  auto aligned = [&](uint32_t& a, int bytes) {
    absl::StatusOr<uint64_t> where = Aligned(a, bytes);
    if (!where.ok()) {
      violation = where.status();
      return false;
    }
    a = static_cast<uint32_t>(*where);
    return true;
  };
  // Atomics must be aligned to their size in every mode (RDNA3 ISA 3.3.3: "or they trigger a MEMVIOL").
  auto atomic_aligned = [&](uint32_t a, int bytes) {
    if ((a & (bytes - 1)) == 0) return true;
    violation = absl::FailedPreconditionError(absl::StrFormat("%d-byte LDS atomic at unaligned address %#x", bytes, a));
    return false;
  };
  const uint16_t op = inst.opcode;
  // Read-modify-write on 32 bits, returning the old value to VDST for the _RTN forms.
  auto rmw32 = [&](bool rtn, auto f) {
    return each([&](int l) {
      const uint32_t a = addr[l] + offset;
      if (!atomic_aligned(a, 4)) return;
      uint32_t old = 0;
      read(a, &old, 4);
      const uint32_t r = f(old, wave.v(data0)[l], wave.v(data1)[l]);
      write(a, &r, 4);
      if (rtn) wave.v(inst.vdst)[l] = old;
    });
  };
  auto rmw64 = [&](bool rtn, auto f) {
    return each([&](int l) {
      const uint32_t a = addr[l] + offset;
      if (!atomic_aligned(a, 8)) return;
      uint64_t old = 0;
      read(a, &old, 8);
      const uint64_t d0 = wave.v(data0)[l] | uint64_t{wave.v(data0 + 1)[l]} << 32;
      const uint64_t d1 = wave.v(data1)[l] | uint64_t{wave.v(data1 + 1)[l]} << 32;
      const uint64_t r = f(old, d0, d1);
      write(a, &r, 8);
      if (rtn) {
        wave.v(inst.vdst)[l] = static_cast<uint32_t>(old);
        wave.v(inst.vdst + 1)[l] = static_cast<uint32_t>(old >> 32);
      }
    });
  };
  auto store = [&](int bytes, bool high) {
    return each([&](int l) {
      uint32_t a = addr[l] + offset;
      if (!aligned(a, bytes)) return;
      uint8_t b[16];
      for (int i = 0; i < (bytes + 3) / 4; ++i) {
        uint32_t v = wave.v(data0 + i)[l];
        if (high) v >>= 16;
        std::memcpy(b + 4 * i, &v, 4);
      }
      write(a, b, bytes);
    });
  };
  auto load = [&](int bytes, bool sign) {
    return each([&](int l) {
      uint32_t a = addr[l] + offset;
      if (!aligned(a, bytes)) return;
      uint8_t b[16] = {};
      read(a, b, bytes);
      if (bytes >= 4) {
        for (int i = 0; i < bytes / 4; ++i) std::memcpy(&wave.v(inst.vdst + i)[l], b + 4 * i, 4);
      } else {
        uint32_t v = bytes == 1 ? b[0] : (b[0] | uint32_t{b[1]} << 8);
        if (sign)
          v = bytes == 1 ? static_cast<uint32_t>(static_cast<int8_t>(v))
                         : static_cast<uint32_t>(static_cast<int16_t>(v));
        wave.v(inst.vdst)[l] = v;
      }
    });
  };
  // Two addresses: ADDR + OFFSET0 * size (* 64 for STRIDE64) and ADDR + OFFSET1 * size.
  auto two = [&](int size, int stride, bool is_store) {
    return each([&](int l) {
      uint32_t a0 = addr[l] + uint32_t{static_cast<uint8_t>(inst.offset)} * size * stride;
      uint32_t a1 = addr[l] + uint32_t{inst.offset1} * size * stride;
      if (!aligned(a0, size) || !aligned(a1, size)) return;
      const int dwords = size / 4;
      if (is_store) {
        uint32_t v0[2], v1[2];
        for (int i = 0; i < dwords; ++i) {
          v0[i] = wave.v(data0 + i)[l];
          v1[i] = wave.v(data1 + i)[l];
        }
        write(a0, v0, size);
        write(a1, v1, size);
      } else {
        uint32_t v0[2] = {}, v1[2] = {};
        read(a0, v0, size);
        read(a1, v1, size);
        for (int i = 0; i < dwords; ++i) {
          wave.v(inst.vdst + i)[l] = v0[i];
          wave.v(inst.vdst + dwords + i)[l] = v1[i];
        }
      }
    });
  };
  auto f32 = [](auto f) { return [f](uint32_t o, uint32_t d, uint32_t) { return Bits32(f(AsF32(o), AsF32(d))); }; };
  switch (op) {
    case ds::kDsNop:
      return Flow::kNext;
    case ds::kDsAddU32:
      return rmw32(false, [](uint32_t o, uint32_t d, uint32_t) { return o + d; });
    case ds::kDsAddRtnU32:
      return rmw32(true, [](uint32_t o, uint32_t d, uint32_t) { return o + d; });
    case ds::kDsSubU32:
      return rmw32(false, [](uint32_t o, uint32_t d, uint32_t) { return o - d; });
    case ds::kDsSubRtnU32:
      return rmw32(true, [](uint32_t o, uint32_t d, uint32_t) { return o - d; });
    case ds::kDsRsubU32:
      return rmw32(false, [](uint32_t o, uint32_t d, uint32_t) { return d - o; });
    case ds::kDsIncU32:
    case ds::kDsIncRtnU32:
      return rmw32(op == ds::kDsIncRtnU32, [](uint32_t o, uint32_t d, uint32_t) { return o >= d ? 0 : o + 1; });
    case ds::kDsDecU32:
    case ds::kDsDecRtnU32:
      return rmw32(op == ds::kDsDecRtnU32,
                   [](uint32_t o, uint32_t d, uint32_t) { return (o == 0 || o > d) ? d : o - 1; });
    case ds::kDsMinI32:
    case ds::kDsMinRtnI32:
      return rmw32(op == ds::kDsMinRtnI32, [](uint32_t o, uint32_t d, uint32_t) {
        return static_cast<int32_t>(d) < static_cast<int32_t>(o) ? d : o;
      });
    case ds::kDsMaxI32:
    case ds::kDsMaxRtnI32:
      return rmw32(op == ds::kDsMaxRtnI32, [](uint32_t o, uint32_t d, uint32_t) {
        return static_cast<int32_t>(d) > static_cast<int32_t>(o) ? d : o;
      });
    case ds::kDsMinU32:
    case ds::kDsMinRtnU32:
      return rmw32(op == ds::kDsMinRtnU32, [](uint32_t o, uint32_t d, uint32_t) { return std::min(o, d); });
    case ds::kDsMaxU32:
    case ds::kDsMaxRtnU32:
      return rmw32(op == ds::kDsMaxRtnU32, [](uint32_t o, uint32_t d, uint32_t) { return std::max(o, d); });
    case ds::kDsAndB32:
    case ds::kDsAndRtnB32:
      return rmw32(op == ds::kDsAndRtnB32, [](uint32_t o, uint32_t d, uint32_t) { return o & d; });
    case ds::kDsOrB32:
    case ds::kDsOrRtnB32:
      return rmw32(op == ds::kDsOrRtnB32, [](uint32_t o, uint32_t d, uint32_t) { return o | d; });
    case ds::kDsXorB32:
    case ds::kDsXorRtnB32:
      return rmw32(op == ds::kDsXorRtnB32, [](uint32_t o, uint32_t d, uint32_t) { return o ^ d; });
    case ds::kDsStorexchgRtnB32:
      return rmw32(true, [](uint32_t, uint32_t d, uint32_t) { return d; });
    // CMPSTORE: DATA0 is the compare value, DATA1 the new one (RDNA3 ISA, DS_CMPSTORE_B32).
    case ds::kDsCmpstoreB32:
    case ds::kDsCmpstoreRtnB32:
      return rmw32(op == ds::kDsCmpstoreRtnB32,
                   [](uint32_t o, uint32_t cmp, uint32_t src) { return o == cmp ? src : o; });
    case ds::kDsAddF32:
    case ds::kDsAddRtnF32:
      return rmw32(op == ds::kDsAddRtnF32, f32([](float o, float d) { return o + d; }));
    case ds::kDsMinF32:
    case ds::kDsMinRtnF32:
      return rmw32(op == ds::kDsMinRtnF32, f32([](float o, float d) { return std::fmin(o, d); }));
    case ds::kDsMaxF32:
    case ds::kDsMaxRtnF32:
      return rmw32(op == ds::kDsMaxRtnF32, f32([](float o, float d) { return std::fmax(o, d); }));
    case ds::kDsAddU64:
    case ds::kDsAddRtnU64:
      return rmw64(op == ds::kDsAddRtnU64, [](uint64_t o, uint64_t d, uint64_t) { return o + d; });
    case ds::kDsStoreB8:
      return store(1, false);
    case ds::kDsStoreB16:
      return store(2, false);
    case ds::kDsStoreB8D16Hi:
      return store(1, true);
    case ds::kDsStoreB16D16Hi:
      return store(2, true);
    case ds::kDsStoreB32:
      return store(4, false);
    case ds::kDsStoreB64:
      return store(8, false);
    case ds::kDsStoreB96:
      return store(12, false);
    case ds::kDsStoreB128:
      return store(16, false);
    case ds::kDsLoadU8:
      return load(1, false);
    case ds::kDsLoadI8:
      return load(1, true);
    case ds::kDsLoadU16:
      return load(2, false);
    case ds::kDsLoadI16:
      return load(2, true);
    case ds::kDsLoadB32:
      return load(4, false);
    case ds::kDsLoadB64:
      return load(8, false);
    case ds::kDsLoadB96:
      return load(12, false);
    case ds::kDsLoadB128:
      return load(16, false);
    case ds::kDsStore2addrB32:
      return two(4, 1, true);
    case ds::kDsStore2addrStride64B32:
      return two(4, 64, true);
    case ds::kDsStore2addrB64:
      return two(8, 1, true);
    case ds::kDsStore2addrStride64B64:
      return two(8, 64, true);
    case ds::kDsLoad2addrB32:
      return two(4, 1, false);
    case ds::kDsLoad2addrStride64B32:
      return two(4, 64, false);
    case ds::kDsLoad2addrB64:
      return two(8, 1, false);
    case ds::kDsLoad2addrStride64B64:
      return two(8, 64, false);
    case ds::kDsBpermuteB32:
    case ds::kDsPermuteB32: {
      // Lane-to-lane through the LDS crossbar, without touching LDS: bpermute reads lane (ADDR+offset)/4, permute
      // writes to it.
      uint32_t source[kMaxLanes];
      const uint32_t* data = wave.v(data0);
      std::memcpy(source, data, sizeof(uint32_t) * wave.lanes);
      uint32_t result[kMaxLanes];
      std::memset(result, 0, sizeof(result));
      uint32_t* d = wave.v(inst.vdst);
      for (int l = 0; l < wave.lanes; ++l) result[l] = d[l];
      each([&](int l) {
        const int other = static_cast<int>(((addr[l] + offset) / 4) % wave.lanes);
        if (op == ds::kDsBpermuteB32) {
          result[l] = ((exec >> other) & 1) ? source[other] : 0;
        } else {
          result[other] = source[l];
        }
      });
      each([&](int l) { d[l] = result[l]; });
      return Flow::kNext;
    }
    default:
      return Illegal(wave, inst, "DS operation not implemented by the interpreter");
  }
}

}  // namespace am::sim::isa
