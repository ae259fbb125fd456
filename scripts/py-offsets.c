/*
 * scripts/py-offsets.c - prints one row of libsampler/unwind-py-layouts.h: where
 * CPython keeps what the sampler reads (the thread-state key, the current
 * frame, a frame's code, caller and instruction, a code object's names and
 * line table), for the version whose internal headers it is built
 * against:
 *
 *   gcc -DPy_BUILD_CORE -I$P/include/python3.X scripts/py-offsets.c && ./a.out
 *
 * The layouts are internal to CPython and change between minor versions
 * only (a patch release keeps them: they are part of what extension
 * modules built for 3.X rely on through macros).
 */
#include <Python.h>
#include <internal/pycore_runtime.h>
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#include <internal/pycore_code.h>
#include <stddef.h>
#include <stdio.h>

#define NONE 0xffff

#if PY_VERSION_HEX >= 0x030c0000
#define TSS_KEY offsetof(_PyRuntimeState, autoTSSkey)
#else
#define TSS_KEY offsetof(_PyRuntimeState, gilstate.autoTSSkey)
#endif

#if PY_VERSION_HEX < 0x030b0000
/* A PyFrameObject per call, the thread state's current one in "frame";
 * no data stack, no owner, no adaptive code: the instruction is f_lasti's
 * index (bytes in 3.9, code units in 3.10), the name co_name. */
#define CFRAME      NONE
#define CURRENT     offsetof(PyThreadState, frame)
#define TS_CHUNK    NONE
#define TS_TOP      NONE
#define FR_CODE     offsetof(PyFrameObject, f_code)
#define FR_PREVIOUS offsetof(PyFrameObject, f_back)
#define FR_INSTR    NONE
#define FR_LASTI    offsetof(PyFrameObject, f_lasti)
#define LASTI_SHIFT (PY_VERSION_HEX < 0x030a0000)
#define FR_ENTRY    NONE
#define FR_OWNER    NONE
#define OWNER_CSTACK 0xff
#define CO_CODE     NONE
#define CO_SIZE     sizeof(PyCodeObject)
#define CO_NAME     offsetof(PyCodeObject, co_name)
#if PY_VERSION_HEX < 0x030a0000
#define CO_LINES    offsetof(PyCodeObject, co_lnotab)
#else
#define CO_LINES    offsetof(PyCodeObject, co_linetable)
#endif
#else
#define TS_CHUNK    offsetof(PyThreadState, datastack_chunk)
#define TS_TOP      offsetof(PyThreadState, datastack_top)
#define FR_PREVIOUS offsetof(struct _PyInterpreterFrame, previous)
#define FR_LASTI    NONE
#define LASTI_SHIFT 0
#define FR_OWNER    offsetof(struct _PyInterpreterFrame, owner)
#define CO_CODE     offsetof(PyCodeObject, co_code_adaptive)
#define CO_SIZE     CO_CODE
#define CO_NAME     offsetof(PyCodeObject, co_qualname)
#define CO_LINES    offsetof(PyCodeObject, co_linetable)
#if PY_VERSION_HEX >= 0x030d0000
#define CFRAME      NONE
#define CURRENT     offsetof(PyThreadState, current_frame)
#define FR_CODE     offsetof(struct _PyInterpreterFrame, f_executable)
#define FR_INSTR    offsetof(struct _PyInterpreterFrame, instr_ptr)
#else
#define CFRAME      offsetof(PyThreadState, cframe)
#define CURRENT     offsetof(_PyCFrame, current_frame)
#define FR_CODE     offsetof(struct _PyInterpreterFrame, f_code)
#define FR_INSTR    offsetof(struct _PyInterpreterFrame, prev_instr)
#endif
#if PY_VERSION_HEX >= 0x030c0000
#define FR_ENTRY    NONE
#define OWNER_CSTACK FRAME_OWNED_BY_CSTACK
#else
#define FR_ENTRY    offsetof(struct _PyInterpreterFrame, is_entry)
#define OWNER_CSTACK 0xff
#endif
#endif

#define F(name, value) printf("      .%s = %zu,\n", name, (size_t)(value))

int main(void)
{
    printf("    { .version = 0x%x,\n", PY_VERSION_HEX >> 16);
    F("tss_key", TSS_KEY + offsetof(Py_tss_t, _key));
    F("rt_finalizing", offsetof(_PyRuntimeState, _finalizing));
    F("ts_cframe", CFRAME);
    F("current_frame", CURRENT);
    F("ts_chunk", TS_CHUNK);
    F("ts_top", TS_TOP);
    F("fr_code", FR_CODE);
    F("fr_previous", FR_PREVIOUS);
    F("fr_instr", FR_INSTR);
    F("fr_lasti", FR_LASTI);
    F("lasti_shift", LASTI_SHIFT);
    F("fr_entry", FR_ENTRY);
    F("fr_owner", FR_OWNER);
    F("owner_cstack", OWNER_CSTACK);
    F("co_code", CO_CODE);
    F("co_basicsize", CO_SIZE);
    F("co_filename", offsetof(PyCodeObject, co_filename));
    F("co_qualname", CO_NAME);
    F("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
    F("co_linetable", CO_LINES);
    F("str_ascii", sizeof(PyASCIIObject));
    F("str_compact", sizeof(PyCompactUnicodeObject));
    printf("    },\n");
    return 0;
}
