/*
 * librecord/format.h - on-disk layout shared by the writer and the reader.
 * man/rec-format.5 is the normative description; keep the two in step.
 *
 * File  = chunk*            (concatenating recordings gives a recording)
 * Chunk = header block*     (header.chunk_size bytes in all)
 * Block = block header, payload of stored_size bytes
 *
 * All integers in headers are little-endian. Payloads are CBOR sequences
 * (RFC 8742), lz4-compressed as one raw lz4 block when REC_BLOCK_LZ4 is set.
 */
#ifndef REC_FORMAT_H
#define REC_FORMAT_H

#include <stdint.h>
#include "rec/record.h"

/* PNG-style magic: a high byte and CR LF SUB LF catch text-mode damage. */
#define REC_MAGIC "\x89REC\r\n\x1a\n"
#define REC_MAGIC_LEN 8

/* Chunk header, 80 bytes. */
#define REC_CHUNK_HEADER_SIZE 80
#define REC_CH_MAGIC        0   /* u8[8]  REC_MAGIC */
#define REC_CH_MAJOR        8   /* u16    format major version */
#define REC_CH_MINOR       10   /* u16    format minor version */
#define REC_CH_HEADER_SIZE 12   /* u32    80; readers skip extra bytes of a newer minor */
#define REC_CH_GENERATION  16   /* u32    seqlock: odd while the writer updates the header */
#define REC_CH_STATE       20   /* u8     REC_STATE_* */
#define REC_CH_FLAGS       21   /* u8     REC_CHUNK_* */
#define REC_CH_RESERVED0   22   /* u16    0 */
#define REC_CH_SIZE        24   /* u64    committed bytes of the chunk, header included */
#define REC_CH_START_WALL  32   /* u64    wall clock at chunk start, ns since the epoch */
#define REC_CH_START_TICKS 40   /* u64    monotonic clock at chunk start, in ticks */
#define REC_CH_DURATION    48   /* u64    ticks from start to the last flush */
#define REC_CH_TICKS_PER_S 56   /* u64    tick frequency */
/* The tick frequencies a reader accepts: a millisecond to a picosecond. */
#define REC_MIN_TICKS_PER_S 1000ull
#define REC_MAX_TICKS_PER_S 1000000000000ull
#define REC_CH_INDEX       64   /* u32    chunk sequence number in the recording, from 0 */
#define REC_CH_WRITER_PID  68   /* u32    writer's process id (1.1; 0 in 1.0: unknown) */
#define REC_CH_CRC         72   /* u32    CRC-32C of bytes 0..71 */
#define REC_CH_RESERVED2   76   /* u32    0 */

#define REC_STATE_OPEN     1    /* being written: valid up to chunk_size */
#define REC_STATE_FINISHED 2    /* complete: chunk_size is final */

#define REC_CHUNK_LAST     0x01 /* last chunk of a recording closed cleanly */
#define REC_CHUNK_SEALED   0x02 /* written by another process after the
                                   writer ended without closing it */
#define REC_CHUNK_STREAMED 0x04 /* 1.3: sent through a stream piece by
                                   piece, ended by an END block */

/* Block header, 16 bytes. */
#define REC_BLOCK_HEADER_SIZE 16
#define REC_BH_KIND         0   /* u8  REC_BLOCK_* */
#define REC_BH_FLAGS        1   /* u8  REC_BLOCK_LZ4 */
#define REC_BH_RESERVED     2   /* u16 0 */
#define REC_BH_STORED       4   /* u32 payload bytes that follow */
#define REC_BH_RAW          8   /* u32 payload bytes after decompression */
#define REC_BH_CRC         12   /* u32 CRC-32C of header bytes 0..11 then the stored payload */

#define REC_BLOCK_METADATA  1   /* one CBOR map: the schema (first block of a chunk) */
#define REC_BLOCK_POOL      2   /* pool entries: [typeId, id, field...]* */
#define REC_BLOCK_EVENTS    3   /* uint baseTicks, then events: [typeId, field...]* */
#define REC_BLOCK_END       4   /* 1.3: ends a streamed chunk; payload: its
                                 * final header as a file holds it */
/* Kinds 128..255 are skippable extensions; unknown kinds below 128 are errors. */
#define REC_BLOCK_SKIPPABLE 128

#define REC_BLOCK_LZ4       0x01

/* Limits every reader enforces before allocating. */
#define REC_MAX_BLOCK_RAW      (16u << 20)  /* 16 MiB */
#define REC_MAX_METADATA_RAW   (1u << 20)
/* A chunk read from a pipe is held whole in memory (spool.c). */
#define REC_MAX_STREAM_CHUNK   (1u << 30)
/* Files of a directory recording (dir.c): the list is held in memory. */
#define REC_MAX_DIR_FILES      100000u
/* REC_MAX_STRING and REC_MAX_ARRAY are public: <rec/record.h>. */
#define REC_MAX_FIELDS         256u
#define REC_MAX_TYPES          1024u
#define REC_MAX_NESTING        8u           /* metadata map/array depth */

#endif
