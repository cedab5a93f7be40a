#include "MallocInfo.h"
#include <malloc.h>

size_t swiperank_heap_bytes_in_use(void) {
#if defined(__GLIBC__)
    struct mallinfo2 info = mallinfo2();
    return info.uordblks;
#else
    return 0;
#endif
}
