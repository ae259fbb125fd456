/* dlopener PLUGIN.so: load a module after the recording started and burn
 * CPU in it: its frames must resolve (the sampler rescans the modules). */
#include <dlfcn.h>
#include <stdio.h>
#include "hazard.h"

int main(int argc, char **argv)
{
    void *h;
    void (*burn)(double);

    if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW))) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    burn = (void (*)(double))dlsym(h, "hz_plugin_burn");
    if (!burn)
        return 3;
    burn(400);
    return 0;
}
