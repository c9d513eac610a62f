#include "firmware/decompress.h"

#include <lzma.h>
#include <zstd.h>

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/printable.h"

namespace firmware {
namespace {

absl::Status TooLarge(absl::string_view path, size_t max_size) {
  return absl::OutOfRangeError(
      absl::StrFormat("%s: decompresses to more than %d bytes, far beyond any amdgpu firmware; the file is corrupt",
                      base::Printable(path), max_size));
}

absl::StatusOr<std::string> Zstd(absl::string_view path, const std::string& data, size_t max_size) {
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!stream)
    return absl::ResourceExhaustedError(absl::StrFormat("%s: cannot allocate a zstd stream", base::Printable(path)));
  std::string out;
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  char chunk[1 << 16];
  size_t last = 1;
  while (in.pos < in.size || last != 0) {
    ZSTD_outBuffer ob{chunk, sizeof(chunk), 0};
    last = ZSTD_decompressStream(stream.get(), &ob, &in);
    if (ZSTD_isError(last)) {
      return absl::DataLossError(absl::StrFormat("%s: zstd decompression failed: %s; the file is corrupt",
                                                 base::Printable(path), ZSTD_getErrorName(last)));
    }
    if (out.size() + ob.pos > max_size) return TooLarge(path, max_size);
    out.append(chunk, ob.pos);
    if (in.pos == in.size && ob.pos == 0 && last != 0) {
      return absl::DataLossError(
          absl::StrFormat("%s: the zstd stream ends early; the file is truncated", base::Printable(path)));
    }
  }
  return out;
}

absl::StatusOr<std::string> Xz(absl::string_view path, const std::string& data, size_t max_size) {
  lzma_stream stream = LZMA_STREAM_INIT;
  // The memory limit bounds the decoder's dictionary, so a crafted header cannot make it allocate gigabytes.
  if (lzma_stream_decoder(&stream, uint64_t{256} << 20, 0) != LZMA_OK) {
    return absl::ResourceExhaustedError(absl::StrFormat("%s: cannot start an xz decoder", base::Printable(path)));
  }
  std::unique_ptr<lzma_stream, decltype(&lzma_end)> guard(&stream, lzma_end);
  stream.next_in = reinterpret_cast<const uint8_t*>(data.data());
  stream.avail_in = data.size();
  std::string out;
  uint8_t chunk[1 << 16];
  while (true) {
    stream.next_out = chunk;
    stream.avail_out = sizeof(chunk);
    const lzma_ret ret = lzma_code(&stream, LZMA_FINISH);
    const size_t produced = sizeof(chunk) - stream.avail_out;
    if (out.size() + produced > max_size) return TooLarge(path, max_size);
    out.append(reinterpret_cast<const char*>(chunk), produced);
    if (ret == LZMA_STREAM_END) return out;
    if (ret != LZMA_OK) {
      const char* why = ret == LZMA_FORMAT_ERROR     ? "not an xz stream"
                        : ret == LZMA_DATA_ERROR     ? "corrupt data"
                        : ret == LZMA_BUF_ERROR      ? "the stream ends early (truncated)"
                        : ret == LZMA_MEMLIMIT_ERROR ? "needs more than 256 MiB of decoder memory"
                                                     : "decoder error";
      return absl::DataLossError(
          absl::StrFormat("%s: xz decompression failed: %s (lzma_ret %d)", base::Printable(path), why, ret));
    }
  }
}

}  // namespace

Compression CompressionOf(absl::string_view path) {
  if (absl::EndsWith(path, ".zst")) return Compression::kZstd;
  if (absl::EndsWith(path, ".xz")) return Compression::kXz;
  return Compression::kNone;
}

absl::StatusOr<std::string> Decompress(absl::string_view path, std::string data, Compression compression,
                                       size_t max_size) {
  switch (compression) {
    case Compression::kNone:
      return data;
    case Compression::kZstd:
      return Zstd(path, data, max_size);
    case Compression::kXz:
      return Xz(path, data, max_size);
  }
  return data;
}

}  // namespace firmware
