// glibc's allocator controls (malloc_trim), which Swift's Glibc module does not include.
#include <malloc.h>
