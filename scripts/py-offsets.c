/*
 * scripts/py-offsets.c - prints one row of libsampler/py-layouts.h: where
 * CPython keeps what the sampler reads (the thread-state key, the current
 * frame, a frame's code, caller and instruction, a code object's names and
 * location table), for the version whose internal headers it is built
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
#include <internal/pycore_frame.h>
#include <internal/pycore_code.h>
#include <stddef.h>
#include <stdio.h>

#if PY_VERSION_HEX >= 0x030c0000
#define TSS_KEY offsetof(_PyRuntimeState, autoTSSkey)
#else
#define TSS_KEY offsetof(_PyRuntimeState, gilstate.autoTSSkey)
#endif

#if PY_VERSION_HEX >= 0x030d0000
#define CFRAME      0xffff
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
#define FR_ENTRY    0xffff
#define OWNER_CSTACK FRAME_OWNED_BY_CSTACK
#else
#define FR_ENTRY    offsetof(struct _PyInterpreterFrame, is_entry)
#define OWNER_CSTACK 0xff
#endif

#define F(name, value) printf("      .%s = %zu,\n", name, (size_t)(value))

int main(void)
{
    printf("    { .version = 0x%x,\n", PY_VERSION_HEX >> 16);
    F("tss_key", TSS_KEY + offsetof(Py_tss_t, _key));
    F("rt_finalizing", offsetof(_PyRuntimeState, _finalizing));
    F("ts_cframe", CFRAME);
    F("current_frame", CURRENT);
    F("ts_chunk", offsetof(PyThreadState, datastack_chunk));
    F("ts_top", offsetof(PyThreadState, datastack_top));
    F("fr_code", FR_CODE);
    F("fr_previous", offsetof(struct _PyInterpreterFrame, previous));
    F("fr_instr", FR_INSTR);
    F("fr_entry", FR_ENTRY);
    F("fr_owner", offsetof(struct _PyInterpreterFrame, owner));
    F("owner_cstack", OWNER_CSTACK);
    F("co_code", offsetof(PyCodeObject, co_code_adaptive));
    F("co_filename", offsetof(PyCodeObject, co_filename));
    F("co_qualname", offsetof(PyCodeObject, co_qualname));
    F("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
    F("co_linetable", offsetof(PyCodeObject, co_linetable));
    F("str_ascii", sizeof(PyASCIIObject));
    F("str_compact", sizeof(PyCompactUnicodeObject));
    printf("    },\n");
    return 0;
}
