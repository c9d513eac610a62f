#!/usr/bin/env bash
# Fuzzes the firmware parser with libFuzzer (clang-19 -fsanitize=fuzzer,address,undefined). The main build stays
# on g++; this compiles the parser sources and tools/fuzz/firmware_fuzzer.cc directly into build-fuzz/.
#
#   tools/fuzz.sh build              compile build-fuzz/firmware_fuzzer
#   tools/fuzz.sh seeds              (re)make build-fuzz/seeds: the real files in ../shared/firmware/amdgpu (one
#                                    per layout) and the virtual Navi31 firmware of build/ (or of
#                                    $BAREGPU_VIRTUAL_FIRMWARE_DIR, the directory holding amdgpu/)
#   tools/fuzz.sh run [SECONDS]      fuzz for SECONDS (default 300) from the seeds; findings go to build-fuzz/
#   tools/fuzz.sh smoke              build, then run every seed plus 5000 mutations (bounded, < 30 s); exit 77
#                                    (skip) when clang-19 or its fuzzer runtime is missing
# BAREGPU_FUZZ_DIR moves build-fuzz/ elsewhere (the meson test uses BUILD/fuzz).
#   tools/fuzz.sh code_object build|seeds|run|smoke   the same for the AMDGPU code-object parser
#                                    (tools/fuzz/code_object_fuzzer.cc); seeds: the gfx1100 corpus of build/
#                                    (or of $BAREGPU_CORPUS_DIR, the directory holding the *.co files), linked
#                                    (*.co) and relocatable (*.o, *.elf)
#   tools/fuzz.sh nv_firmware build|seeds|run|smoke   the same for the NVIDIA firmware parsers (firmware/nv,
#                                    tools/fuzz/nv_firmware_fuzzer.cc); seeds: every distinct nvfw_bin_hdr file of
#                                    firmware-nvidia-graphics in the cache (tools/fetch_firmware.sh) and its two
#                                    GSP-RM ELF images with .fwimage cut to 256 bytes (38 MB inputs would crawl)
#   tools/fuzz.sh vbios build|seeds|run|smoke         the same for the NVIDIA VBIOS parser
#                                    (tools/fuzz/vbios_fuzzer.cc); seeds: the virtual AD102 VBIOS and mutated
#                                    variants (written by build-fuzz/vbios_seedgen) plus Debian's ipxe option ROMs
#   tools/fuzz.sh gsp_receive|gsp_command build|seeds|run|smoke   the driver's receive path of GSP-RM's message
#                                    queues (nv/gsp/message_queue) and the virtual GSP's command parse
#                                    (nv/sim/gsp_message_queue); tools/fuzz/gsp_*_fuzzer.cc; seeds: queues the
#                                    other end wrote (build-fuzz/gsp_queue_seedgen)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${BAREGPU_FUZZ_DIR:-$root/build-fuzz}
cxx=${CLANGXX:-clang++-19}
target=firmware
if [ "${1:-}" = code_object ] || [ "${1:-}" = nv_firmware ]; then
  target=$1
  shift
fi
# --- vbios (issue 21) ---
if [ "${1:-}" = vbios ]; then
  target=vbios
  shift
fi
# --- end vbios ---
# --- gsp queues (issue 22) ---
if [ "${1:-}" = gsp_receive ] || [ "${1:-}" = gsp_command ]; then
  target=$1
  shift
fi
gsp_sources=(nv/gsp/message_queue.cc nv/gsp/queue_element.cc nv/sim/gsp_message_queue.cc nv/regs/names.cc)
gsp_headers=(nv/gsp/*.h nv/sim/gsp_message_queue.h nv/sim/bar0_block.h nv/regs/*.h tests/nv/sim/host_device_memory.h
             tools/fuzz/gsp_queue_fuzz.h base/*.h)
gsp_absl="absl_status absl_statusor absl_strings absl_str_format absl_time"
# --- end gsp queues ---
binary=$out/${target}_fuzzer
seeds_dir=$out/seeds
corpus_dir=$out/corpus
if [ "$target" != firmware ]; then
  seeds_dir=$out/$target-seeds
  corpus_dir=$out/$target-corpus
fi
# --- vbios ---
if [ "$target" = vbios ]; then
  seeds_dir=$out/vbios-seeds
  corpus_dir=$out/vbios-corpus
fi
vbios_sources=(firmware/nv/vbios.cc firmware/nv/virtual_vbios.cc base/sha256.cc base/printable.cc)
# --- end vbios ---

have_toolchain() {
  command -v "$cxx" >/dev/null || return 1
  echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    "$cxx" -x c++ -fsanitize=fuzzer - -o "$out/.probe-$target" 2>/dev/null
}

build() {
  mkdir -p "$out"
  if ! have_toolchain; then
    echo "fuzz: $cxx with libFuzzer is missing (Debian packages clang-19 libclang-rt-19-dev)" >&2
    return 77
  fi
  local sources=(tools/fuzz/firmware_fuzzer.cc base/sha256.cc base/printable.cc)
  for f in byte_reader container file_kind fw_types gfx_layouts media_layouts misc_layouts psp_image psp_layouts requirements rlc_layouts \
           sdma_layouts smc_layouts virtual_firmware; do
    sources+=("firmware/$f.cc")
  done
  local headers=(firmware/*.h base/*.h)
  if [ "$target" = code_object ]; then
    sources=(tools/fuzz/code_object_fuzzer.cc am/code_object.cc am/implicit_arguments.cc base/msgpack.cc)
    headers=(am/code_object.h am/implicit_arguments.h base/*.h)
  fi
  if [ "$target" = nv_firmware ]; then
    sources=(tools/fuzz/nv_firmware_fuzzer.cc firmware/byte_reader.cc base/printable.cc)
    for f in bin_header file_kind gsp_elf hs_header requirements riscv_desc; do sources+=("firmware/nv/$f.cc"); done
    headers=(firmware/byte_reader.h firmware/store.h firmware/nv/*.h base/*.h)
  fi
  # --- vbios ---
  if [ "$target" = vbios ]; then
    sources=(tools/fuzz/vbios_fuzzer.cc "${vbios_sources[@]}")
    headers=(firmware/nv/*.h base/*.h)
  fi
  # --- end vbios ---
  # --- gsp queues ---
  if [ "$target" = gsp_receive ] || [ "$target" = gsp_command ]; then
    sources=("tools/fuzz/${target}_fuzzer.cc" "${gsp_sources[@]}")
    if [ -x "$binary" ] && [ -z "$(find "${sources[@]}" "${gsp_headers[@]}" -newer "$binary" 2>/dev/null)" ]; then
      return 0
    fi
    # shellcheck disable=SC2046,SC2086
    (cd "$root" && "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I. "${sources[@]}" $(pkg-config --cflags --libs $gsp_absl) -o "$binary")
    return
  fi
  # --- end gsp queues ---
  # Rebuild only when a source is newer than the binary.
  if [ -x "$binary" ] && [ -z "$(find "${sources[@]}" "${headers[@]}" -newer "$binary" 2>/dev/null)" ]; then
    return 0
  fi
  # shellcheck disable=SC2046
  (cd "$root" && "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I. "${sources[@]}" $(pkg-config --cflags --libs absl_status absl_statusor absl_strings absl_str_format \
    absl_flat_hash_map) -o "$binary")
}

nv_seeds() {
  mkdir -p "$seeds_dir"
  rm -f "$seeds_dir"/*
  local nvidia=${BAREGPU_FIRMWARE_CACHE:-$root/.cache/firmware}/debian/20250410-2~bpo12+1/nvidia
  if [ ! -d "$nvidia" ]; then
    echo "fuzz: $nvidia is absent (tools/fetch_firmware.sh); no NVIDIA seeds" >&2
    return 0
  fi
  python3 - "$nvidia" "$seeds_dir" <<'PY'
import hashlib, os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
def shrink_elf(data, keep=256):
    # Rewrites the ELF64 with every section's bytes, .fwimage cut to `keep`, packed back to back (unaligned, as in
    # the real files) and the section table after them.
    shoff, = struct.unpack_from("<Q", data, 40)
    shnum, shstrndx = struct.unpack_from("<HH", data, 60)
    headers = [bytearray(data[shoff + i * 64: shoff + (i + 1) * 64]) for i in range(shnum)]
    names_off, = struct.unpack_from("<Q", headers[shstrndx], 24)
    out = bytearray(data[:64])
    for h in headers:
        name = data[names_off + struct.unpack_from("<I", h, 0)[0]:].split(b"\0", 1)[0]
        off, size = struct.unpack_from("<QQ", h, 24)
        body = data[off:off + size][:keep] if name == b".fwimage" else data[off:off + size]
        struct.pack_into("<QQ", h, 24, len(out) if size else 0, len(body))
        out += body
    struct.pack_into("<Q", out, 40, len(out))
    for h in headers:
        out += h
    return bytes(out)
seen = set()
for top, _, files in os.walk(src):
    for name in sorted(files):
        data = open(os.path.join(top, name), "rb").read()
        if data[:4] == b"\x7fELF":
            data = shrink_elf(data)
        elif data[:4] != struct.pack("<I", 0x10de):
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest not in seen:
            seen.add(digest)
            rel = os.path.relpath(os.path.join(top, name), src).replace("/", "_")
            open(os.path.join(dst, rel), "wb").write(data)
PY
  echo "fuzz: $(ls "$seeds_dir" | wc -l) seeds in $seeds_dir"
}

seeds() {
  if [ "$target" = nv_firmware ]; then
    nv_seeds
    return 0
  fi
  # --- gsp queues ---
  if [ "$target" = gsp_receive ] || [ "$target" = gsp_command ]; then
    mkdir -p "$seeds_dir"
    rm -f "$seeds_dir"/*
    local seedgen=$out/gsp_queue_seedgen
    if [ ! -x "$seedgen" ] || [ -n "$(cd "$root" && find tools/fuzz/gsp_queue_seedgen.cc "${gsp_sources[@]}" \
        "${gsp_headers[@]}" -newer "$seedgen" 2>/dev/null)" ]; then
      # shellcheck disable=SC2046,SC2086
      (cd "$root" && "$cxx" -std=c++20 -O1 -I. tools/fuzz/gsp_queue_seedgen.cc "${gsp_sources[@]}" \
        $(pkg-config --cflags --libs $gsp_absl) -o "$seedgen")
    fi
    "$seedgen" "${target#gsp_}" "$seeds_dir"
    echo "fuzz: $(ls "$seeds_dir" | wc -l) seeds in $seeds_dir"
    return 0
  fi
  # --- end gsp queues ---
  # --- vbios ---
  if [ "$target" = vbios ]; then
    mkdir -p "$seeds_dir"
    rm -f "$seeds_dir"/*
    # The generator is the fuzzer's source built as a plain program (it writes the virtual VBIOS and variants).
    # Rebuilt only when a source is newer than it.
    if [ ! -x "$out/vbios_seedgen" ] || [ -n "$(cd "$root" && find tools/fuzz/vbios_fuzzer.cc "${vbios_sources[@]}" \
        firmware/nv/*.h -newer "$out/vbios_seedgen" 2>/dev/null)" ]; then
      # shellcheck disable=SC2046
      (cd "$root" && "$cxx" -std=c++20 -O1 -DBAREGPU_VBIOS_SEEDGEN -I. tools/fuzz/vbios_fuzzer.cc \
        "${vbios_sources[@]}" $(pkg-config --cflags --libs absl_status absl_statusor absl_strings absl_str_format) \
        -o "$out/vbios_seedgen")
    fi
    "$out/vbios_seedgen" "$seeds_dir"
    # Real PCI expansion ROMs (no BIT): they exercise the image chain.
    for rom in /usr/lib/ipxe/qemu/efi-e1000.rom /usr/lib/ipxe/qemu/pxe-virtio.rom; do
      if [ -f "$rom" ]; then cp "$rom" "$seeds_dir/ipxe_$(basename "$rom")"; fi
    done
    echo "fuzz: $(ls "$seeds_dir" | wc -l) seeds in $seeds_dir"
    return 0
  fi
  # --- end vbios ---
  if [ "$target" = code_object ]; then
    mkdir -p "$seeds_dir"
    rm -f "$seeds_dir"/*
    local corpus=${BAREGPU_CORPUS_DIR:-$root/build/tests/am/sim/isa/kernels}
    # The linked code objects (*.co), the relocatable objects they were linked from (*.o, ET_REL) and
    # relocations.elf (ET_REL with REL32_LO/HI and ABS64 relocations).
    if [ -d "$corpus" ]; then cp "$corpus"/*.co "$corpus"/*.o "$corpus"/*.elf "$seeds_dir"/ 2>/dev/null || true; fi
    echo "fuzz: $(ls "$seeds_dir" | wc -l) seeds in $seeds_dir"
    return 0
  fi
  mkdir -p "$out/seeds"
  rm -f "$out/seeds"/*
  local shared=$root/../shared/firmware/amdgpu
  if [ -d "$shared" ]; then
    # One real file per container kind and header version keeps the corpus small but covers every layout.
    python3 - "$shared" "$out/seeds" <<'PY'
import os, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
seen = set()
for name in sorted(os.listdir(src)):
    if not name.endswith(".bin"):
        continue
    data = open(os.path.join(src, name), "rb").read()
    kind = name[:-4].split("_")[-1].rstrip("0123456789")
    key = (kind, struct.unpack_from("<HH", data, 8))
    if key not in seen:
        seen.add(key)
        shutil.copy(os.path.join(src, name), os.path.join(dst, name))
PY
  else
    echo "fuzz: ../shared/firmware/amdgpu is absent; seeding from the virtual firmware only" >&2
  fi
  # Real PSP images (the "$PS1" header the virtual PSP checks): the first component of a few Navi31 files of the
  # Debian release tools/fetch_firmware.sh unpacked, cut to the size its header states.
  local debian=${BAREGPU_FIRMWARE_CACHE:-$root/.cache/firmware}/debian/20250410-2~bpo12+1/amdgpu
  if [ -d "$debian" ]; then
    python3 - "$debian" "$out/seeds" <<'PY'
import os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
for name in ("gc_11_0_0_mec.bin", "psp_13_0_0_sos.bin", "smu_13_0_0.bin"):
    path = os.path.join(src, name)
    if not os.path.exists(path):
        continue
    data = open(path, "rb").read()
    image = data[0x100:]  # the ucode array of every Navi31 container starts at 0x100
    if image[0x10:0x14] == b"$PS1":
        open(os.path.join(dst, "psp_image_" + name), "wb").write(image[:struct.unpack_from("<I", image, 0x6c)[0]])
PY
  fi
  local virtual=${BAREGPU_VIRTUAL_FIRMWARE_DIR:-$root/build/firmware/virtual}/amdgpu
  if [ -d "$virtual" ]; then
    for f in "$virtual"/*.bin; do cp "$f" "$out/seeds/virtual_$(basename "$f")"; done
  fi
  echo "fuzz: $(ls "$out/seeds" | wc -l) seeds in $out/seeds"
}

cd "$root"
case "${1:-}" in
  build) build ;;
  seeds) seeds ;;
  run)
    build
    [ -d "$seeds_dir" ] || seeds
    mkdir -p "$corpus_dir" "$out/findings"
    "$binary" -max_total_time="${2:-300}" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/findings/" \
      -print_final_stats=1 "$corpus_dir" "$seeds_dir"
    ;;
  smoke)
    build || exit $?
    seeds >/dev/null
    # A fixed seed and run count keep it deterministic and bounded.
    "$binary" -seed=1 -runs=5000 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/" "$seeds_dir"
    ;;
  *)
    sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
