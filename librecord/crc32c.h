/* librecord/crc32c.h - CRC-32C (Castagnoli), shared by the writer and the reader. */
#ifndef REC_CRC32C_H
#define REC_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/* Extend crc (0 to start) with n bytes at p; chaining calls equals one call
 * over the concatenation. rec__crc32c(0, "123456789", 9) == 0xe3069283. */
uint32_t rec__crc32c(uint32_t crc, const void *p, size_t n);

#endif
