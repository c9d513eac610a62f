/* A C application of the installed library (tests/install/install_test.sh builds it with `pkg-config --cflags
 * --libs baregpu` alone): opens the virtual GPU through hcq.h, moves bytes into a VRAM buffer and back, and checks
 * them. Exit status 0 on success; on failure one line on stderr. Usage: hcq_c_program DEVICE */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/version.h"
#include "hcq/hcq.h"

enum { kBufferBytes = 1 << 20 }; /* one MiB: many pages, so the copies cross page boundaries */

static int Fail(const char* what) {
  fprintf(stderr, "hcq_c_program: %s: %s\n", what, hcq_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hcq_c_program DEVICE\n");
    return 2;
  }
  hcq_device* device = NULL;
  if (hcq_device_open(argv[1], &device) != HCQ_OK) return Fail("hcq_device_open");
  hcq_buffer* buffer = NULL;
  if (hcq_buffer_alloc(device, kBufferBytes, /*host=*/0, &buffer) != HCQ_OK) return Fail("hcq_buffer_alloc");

  static uint8_t in[kBufferBytes], out[kBufferBytes];
  for (uint32_t i = 0; i < kBufferBytes; ++i) in[i] = (uint8_t)(i * 7u + 3u); /* a pattern no zero page has */
  if (hcq_buffer_copyin(buffer, in, kBufferBytes) != HCQ_OK) return Fail("hcq_buffer_copyin");
  if (hcq_buffer_copyout(out, buffer, kBufferBytes) != HCQ_OK) return Fail("hcq_buffer_copyout");
  if (memcmp(in, out, kBufferBytes) != 0) {
    fprintf(stderr, "hcq_c_program: the bytes read back from VRAM differ from those written\n");
    return 1;
  }
  hcq_buffer_free(buffer);
  hcq_device_close(device);
  printf("hcq_c_program: baregpu %s, %s: %d bytes through VRAM and back\n", BAREGPU_VERSION_STRING, argv[1],
         kBufferBytes);
  return 0;
}
