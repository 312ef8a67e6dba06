/*
 * Loads a dibs native library the way a JVM does (dlopen with every symbol resolved now) and
 * finds its JNI entry points. Built against musl, it proves the -musl libraries load and resolve
 * under musl's dynamic loader, where no musl JVM is at hand.
 *
 * Usage: dlopen_check LIBRARY SYMBOL...   (exit 0: loaded and every symbol found)
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIBRARY SYMBOL...\n", argv[0]);
        return 64;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    int missing = 0;
    for (int i = 2; i < argc; i++) {
        if (dlsym(lib, argv[i]) == NULL) {
            fprintf(stderr, "dlsym %s: %s\n", argv[i], dlerror());
            missing++;
        } else {
            printf("found %s\n", argv[i]);
        }
    }
    return missing == 0 ? 0 : 1;
}
