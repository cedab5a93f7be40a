#ifndef SWIPERANK_MALLOC_INFO_H
#define SWIPERANK_MALLOC_INFO_H
#include <stddef.h>

/// Bytes the C allocator has handed out and not taken back (glibc's mallinfo2 uordblks).
size_t swiperank_heap_bytes_in_use(void);

#endif
