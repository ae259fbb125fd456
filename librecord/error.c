/* librecord/error.c - error texts, the library's version, the time base. */
#include <config.h>
#include <time.h>
#include "rec/record.h"

const char *rec_strerror(int code)
{
    switch (code) {
    case 0:              return "success";
    case REC_ENOMEM:     return "out of memory";
    case REC_EIO:        return "input/output error (see errno)";
    case REC_EINVAL:     return "invalid argument or state";
    case REC_ECORRUPT:   return "corrupt data";
    case REC_ETRUNCATED: return "data truncated";
    case REC_EVERSION:   return "unsupported format version";
    case REC_ETOOBIG:    return "size exceeds a limit";
    case REC_EMAGIC:     return "not a rec recording";
    case REC_EEXIST:     return "output file exists";
    case REC_ENOTFOUND:  return "not found";
    case REC_EFULL:      return "event too large for the stream buffer";
    case REC_EAGAIN:     return "no event yet";
    case REC_EWRITER:    return "writer died before closing the recording";
    case REC_ESTALLED:   return "recording stalled";
    case REC_EREPLACED:  return "file truncated, removed or replaced";
    default:             return "unknown error";
    }
}

unsigned rec_version(void)
{
    return REC_VERSION_NUMBER;
}

const char *rec_version_string(void)
{
    return REC_VERSION_STRING;
}

uint64_t rec_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
