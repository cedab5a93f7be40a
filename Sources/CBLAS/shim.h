// One header for the two C libraries SwipeRankNumerics wraps: OpenBLAS' CBLAS (found through
// pkg-config `openblas`) and LAPACKE (a separate Debian package, liblapacke-dev).
#include <cblas.h>
#include <lapacke.h>
