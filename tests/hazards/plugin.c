/* plugin: a module the dlopener hazard loads after the recording started. */
#include "hazard.h"

void hz_plugin_burn(double ms);

__attribute__((noinline)) void hz_plugin_burn(double ms)
{
    hz_burn_ms(ms);
    __asm__ volatile("" ::: "memory");
}
