// The learning model's forgetting step and the per-deck products (the catalog's feature
// scores and the student's terms, the probes' variances, the collaborative reason's dots, the
// grade scale's sample and its selection's bins) with 256-bit AVX (see SwipeRankKernels.h).
//
// Why C: Swift has no per-function target features, and a package cannot pass -mavx to its
// users' builds, so the portable Swift kernel is limited to SSE2 (two doubles per operation,
// and unaligned operands cost a separate load). A function marked target("avx") is compiled
// for AVX here and only called after the CPU check.
//
// Why bit-identical: every product is one IEEE multiply and every sum one IEEE add, in the same
// order as the portable kernel — no fused multiply-add (contraction is off below, and the
// intrinsics are separate multiplies and adds) — so a model learns the same bits on a machine
// with or without AVX, and stored snapshots, whose model digest is checked on restore, stay
// valid.
#include "SwipeRankKernels.h"
#include <math.h>
#include <stdlib.h>

#pragma clang fp contract(off)

void swiperank_prefetch(const void *p, long bytes) {
    const char *c = (const char *)p;
    for (long i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 0, 3);
    if (bytes > 0) __builtin_prefetch(c + bytes - 1, 0, 3); // the last line of a range not 64-aligned
}

void swiperank_prefetch_rows(const void *base, long stride, const long *rows, long count, long bytes) {
    const char *c = (const char *)base;
    for (long r = 0; r < count; r++) swiperank_prefetch(c + rows[r] * stride, bytes);
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int swiperank_has_avx(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6) == 6; // the OS saves the XMM and YMM registers
}

static inline long packed_start(long j, long n) { return j * n - (j * (j - 1)) / 2; }

// The column's terms: `count` sources (row i of source t at sources[t][i]) with multipliers,
// the first `gram` from the old factor; `add` goes on the diagonal between the two groups.
typedef struct {
    const double *const *sources;
    const double *multipliers;
    long gram, count;
    double add;
} Terms;

// One pass over the terms for up to two blocks of `vectors` × 4 rows each, starting at rows s0
// and s1 (`blocks` is 1 or 2), every row its own chain of adds: acc[b·vectors + v] holds rows
// s_b + 4v ... + 3. With `diagonal`, lane 0 of block 0 is the diagonal row and gets `add`
// after the Gram terms (other lanes get +0, which leaves a sum that started at +0 unchanged:
// such a sum is never −0). Inlined with constant `blocks` and `vectors`, so the accumulators
// live in registers.
__attribute__((target("avx"), always_inline)) static inline void
pass(const Terms *terms, long s0, long s1, int blocks, int vectors, int diagonal, __m256d *acc) {
    for (int a = 0; a < blocks * vectors; a++) acc[a] = _mm256_setzero_pd();
    long t = 0;
    for (int phase = 0; phase < 2; phase++) {
        long end = phase == 0 ? terms->gram : terms->count;
        for (; t < end; t++) {
            const double *source = terms->sources[t];
            __m256d m = _mm256_broadcast_sd(&terms->multipliers[t]);
            for (int v = 0; v < vectors; v++)
                acc[v] = _mm256_add_pd(acc[v], _mm256_mul_pd(_mm256_loadu_pd(source + s0 + 4 * v), m));
            if (blocks == 2)
                for (int v = 0; v < vectors; v++)
                    acc[vectors + v] = _mm256_add_pd(acc[vectors + v],
                                                     _mm256_mul_pd(_mm256_loadu_pd(source + s1 + 4 * v), m));
        }
        if (phase == 0 && diagonal) acc[0] = _mm256_add_pd(acc[0], _mm256_setr_pd(terms->add, 0, 0, 0));
    }
}

// Computes and stores rows [s0, s0 + 4·vectors) and [s1, s1 + 4·vectors) of a column. With
// `diagonal`, row s0 is the pivot: it becomes its square root, the other rows are multiplied by
// the root's inverse and *inverse is set; else the rows are multiplied by *inverse. Returns 0 if
// the pivot is not positive (nothing stored).
__attribute__((target("avx"), always_inline)) static inline int
finish(const Terms *terms, double *column, long s0, long s1, int blocks, int vectors, int diagonal, double *inverse) {
    __m256d acc[8];
    pass(terms, s0, s1, blocks, vectors, diagonal, acc);
    double root = 0;
    if (diagonal) {
        double pivot = _mm256_cvtsd_f64(acc[0]);
        if (!(pivot > 0) || !isfinite(pivot)) return 0;
        root = sqrt(pivot);
        *inverse = 1 / root;
    }
    __m256d scale = _mm256_set1_pd(*inverse);
    for (int v = 0; v < vectors; v++) _mm256_storeu_pd(column + s0 + 4 * v, _mm256_mul_pd(acc[v], scale));
    if (blocks == 2)
        for (int v = 0; v < vectors; v++)
            _mm256_storeu_pd(column + s1 + 4 * v, _mm256_mul_pd(acc[vectors + v], scale));
    if (diagonal) column[s0] = root;
    return 1;
}

// Rows j..n−1 of column j for fewer than four rows (the last three columns): one chain per
// row, in registers (`rows` is a constant after inlining).
__attribute__((target("avx"), always_inline)) static inline int
short_column(const Terms *terms, double *column, long j, int rows) {
    double s0 = 0, s1 = 0, s2 = 0;
    long t = 0;
    for (int phase = 0; phase < 2; phase++) {
        long end = phase == 0 ? terms->gram : terms->count;
        for (; t < end; t++) {
            const double *source = terms->sources[t] + j;
            double m = terms->multipliers[t];
            s0 = s0 + source[0] * m;
            if (rows > 1) s1 = s1 + source[1] * m;
            if (rows > 2) s2 = s2 + source[2] * m;
        }
        if (phase == 0) s0 = s0 + terms->add;
    }
    if (!(s0 > 0) || !isfinite(s0)) return 0;
    double root = sqrt(s0), inverse = 1 / root;
    column[j] = root;
    if (rows > 1) column[j + 1] = s1 * inverse;
    if (rows > 2) column[j + 2] = s2 * inverse;
    return 1;
}

__attribute__((target("avx"))) long
swiperank_decayed_factor_avx(const double *l, long n, double keep, double add, double *out,
                             const double **pointers, double *multipliers) {
    // Where each column's row 0 would be (row i at base + i), old and new, then the term list.
    const double **old_columns = pointers, **new_columns = pointers + n, **sources = pointers + 2 * n;
    for (long k = 0; k < n; k++) {
        long offset = packed_start(k, n) - k;
        old_columns[k] = l + offset;
        new_columns[k] = out + offset;
    }
    for (long j = 0; j < n; j++) {
        // Zero multipliers are left out, as the portable kernel does; written without a
        // branch (each entry is stored, then kept only if nonzero), since factors of sparse
        // card vectors have zeros in no predictable pattern.
        long gram = 0;
        for (long k = 0; k <= j; k++) {
            double g = keep * old_columns[k][j];
            sources[gram] = old_columns[k];
            multipliers[gram] = g;
            gram += g != 0;
        }
        long count = gram;
        for (long m = 0; m < j; m++) {
            double h = new_columns[m][j];
            sources[count] = new_columns[m];
            multipliers[count] = -h;
            count += h != 0;
        }
        Terms terms = {sources, multipliers, gram, count, add};
        double *column = out + packed_start(j, n) - j;
        if (n - j < 4) {
            int ok = n - j == 3 ? short_column(&terms, column, j, 3)
                   : n - j == 2 ? short_column(&terms, column, j, 2) : short_column(&terms, column, j, 1);
            if (!ok) return j;
            continue;
        }
        // Passes of 32 rows while more than 32 remain; then the rest in one pass of at most
        // two equal blocks, the second ending at row n − 1 (overlapping rows are computed
        // twice, identically). The first pass holds the diagonal.
        double inverse = 0;
        long i = j;
        int ok = 1;
        while (n - i > 32) {
            ok = finish(&terms, column, i, 0, 1, 8, i == j, &inverse);
            if (!ok) return j;
            i += 32;
        }
        long rest = n - i, first = i == j;
        if (rest > 16) ok = finish(&terms, column, i, n - 16, 2, 4, first, &inverse);
        else if (rest > 8) ok = finish(&terms, column, i, n - 8, 2, 2, first, &inverse);
        else if (rest > 4) ok = finish(&terms, column, i, n - 4, 2, 1, first, &inverse);
        else ok = finish(&terms, column, n - 4, 0, 1, 1, first, &inverse); // rest ≤ 4; first only when rest = 4
        if (!ok) return j;
    }
    return -1;
}

// y = aᵀw for the d × n row-major Float matrix a (the catalog's features by column): each output
// 0 + w₀a₀ᵢ + w₁a₁ᵢ + … in row order, zero weights skipped — `Matrix.multiplyTransposedInOrder`
// bit for bit, 64 outputs held in eight registers across the rows. The rows with a weight are
// listed once: tested per block of 64, the weight's test and the row loop's count cost about
// as much as the block's multiplies and adds.
__attribute__((target("avx"))) void
swiperank_multiply_transposed_avx(const float *a, long d, long n, const float *w, float *y) {
    long stack[256];
    long *rows = d <= 256 ? stack : malloc((size_t)d * sizeof(long));
    if (!rows) abort(); // out of memory: as Swift's own allocations end
    long live = 0;
    for (long r = 0; r < d; r++) {
        if (w[r] != 0) rows[live++] = r; // as `where w[r] != 0`: ±0 skipped, NaN kept
    }
    long i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256 acc[8];
        for (int k = 0; k < 8; k++) acc[k] = _mm256_setzero_ps();
        for (long t = 0; t < live; t++) {
            long r = rows[t];
            __m256 m = _mm256_set1_ps(w[r]);
            const float *p = a + r * n + i;
            for (int k = 0; k < 8; k++) acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(m, _mm256_loadu_ps(p + 8 * k)));
        }
        for (int k = 0; k < 8; k++) _mm256_storeu_ps(y + i + 8 * k, acc[k]);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (long t = 0; t < live; t++) {
            long r = rows[t];
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(w[r]), _mm256_loadu_ps(a + r * n + i)));
        }
        _mm256_storeu_ps(y + i, acc);
    }
    for (; i < n; i++) {
        float sum = 0;
        for (long t = 0; t < live; t++) sum = sum + w[rows[t]] * a[rows[t] * n + i];
        y[i] = sum;
    }
    if (rows != stack) free(rows);
}

// One group of `inverse_quadratic_forms`: `vectors` × 4 lanes (vectors 1…4, a constant once
// inlined, so the accumulators stay in registers), vectors from..<from + lanes.
__attribute__((target("avx"), always_inline)) static inline void
quadratic_group(const double *rows, long n, const double *x, long from, long lanes, double *out,
                __m256d *negated, __m256d *group, int vectors) {
    // The group's vectors lane by lane; unused lanes stay 0 (0 / L[i,i] = 0).
    double *g = (double *)group;
    for (long lane = 0; lane < lanes; lane++) {
        const double *v = x + (from + lane) * n;
        for (long i = 0; i < n; i++) g[i * vectors * 4 + lane] = v[i];
    }
    // Only the unused lanes are zeroed (the used ones were just written): the whole group
    // was, once per group.
    for (long lane = lanes; lane < vectors * 4; lane++) {
        for (long i = 0; i < n; i++) g[i * vectors * 4 + lane] = 0;
    }
    const __m256d sign = _mm256_set1_pd(-0.0);
    __m256d sum[4];
    for (int k = 0; k < vectors; k++) sum[k] = _mm256_setzero_pd();
    for (long i = 0; i < n; i++) {
        __m256d s[4];
        for (int k = 0; k < vectors; k++) s[k] = group[i * vectors + k];
        const double *row = rows + i * (i + 1) / 2;
        for (long j = 0; j < i; j++) {
            __m256d m = _mm256_broadcast_sd(row + j);
            for (int k = 0; k < vectors; k++) s[k] = _mm256_add_pd(s[k], _mm256_mul_pd(m, negated[j * vectors + k]));
        }
        __m256d diagonal = _mm256_broadcast_sd(row + i);
        for (int k = 0; k < vectors; k++) {
            __m256d z = _mm256_div_pd(s[k], diagonal);
            negated[i * vectors + k] = _mm256_xor_pd(z, sign); // −z exactly
            sum[k] = _mm256_add_pd(sum[k], _mm256_mul_pd(z, z));
        }
    }
    double lanesOut[16];
    for (int k = 0; k < vectors; k++) _mm256_storeu_pd(lanesOut + 4 * k, sum[k]);
    for (long lane = 0; lane < lanes; lane++) out[from + lane] = lanesOut[lane];
}

__attribute__((target("avx"))) void
swiperank_inverse_quadratic_forms_avx(const double *rows, long n, const double *x, long count, double *out,
                                      double *scratch) {
    __m256d *negated = (__m256d *)scratch, *group = negated + 4 * n;
    long v = 0;
    while (v < count) {
        // Up to 16 vectors at a time (four independent chains of adds hide the add latency,
        // which bounds this loop); a window of 12 is one group of three.
        long rest = count - v, lanes = rest < 16 ? rest : 16;
        switch ((lanes + 3) / 4) {
        case 4: quadratic_group(rows, n, x, v, lanes, out, negated, group, 4); break;
        case 3: quadratic_group(rows, n, x, v, lanes, out, negated, group, 3); break;
        case 2: quadratic_group(rows, n, x, v, lanes, out, negated, group, 2); break;
        default: quadratic_group(rows, n, x, v, lanes, out, negated, group, 1); break;
        }
        v += lanes;
    }
}

// For each column i of the f × n row-major matrix xt, Σⱼ v[j]·xt[j, i] from 0 in ascending j
// (`columnDotsInOrder` bit for bit), 16 columns in four registers at a time.
__attribute__((target("avx"))) void
swiperank_column_dots_avx(const double *xt, long f, long n, const double *v, double *out) {
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256d acc[4];
        for (int k = 0; k < 4; k++) acc[k] = _mm256_setzero_pd();
        for (long j = 0; j < f; j++) {
            __m256d m = _mm256_broadcast_sd(v + j);
            const double *p = xt + j * n + i;
            for (int k = 0; k < 4; k++) acc[k] = _mm256_add_pd(acc[k], _mm256_mul_pd(m, _mm256_loadu_pd(p + 4 * k)));
        }
        for (int k = 0; k < 4; k++) _mm256_storeu_pd(out + i + 4 * k, acc[k]);
    }
    for (; i + 4 <= n; i += 4) {
        __m256d acc = _mm256_setzero_pd();
        for (long j = 0; j < f; j++) acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_broadcast_sd(v + j), _mm256_loadu_pd(xt + j * n + i)));
        _mm256_storeu_pd(out + i, acc);
    }
    for (; i < n; i++) {
        double sum = 0;
        for (long j = 0; j < f; j++) sum = sum + v[j] * xt[j * n + i];
        out[i] = sum;
    }
}

// A grade scale's sample: eight rows' values per step (read one by one: the rows are strided),
// their least, greatest and NaN test on eight lanes. Lane k sees values k, k + 8, …; the lanes'
// least and greatest are then taken in lane order, then the tail's, each as `x < least ? x :
// least` — MINPS and MAXPS are exactly `a < b ? a : b` and `a > b ? a : b` — so the result is
// the portable loop's but for which of −0 and +0 it keeps (equal either way). Inlined once per
// way of finding rows and offsets (constants), so neither is decided per value.
__attribute__((target("avx"), always_inline)) static inline int
grade_sample(const float *raw, const float *offsets, long n, long m, long shift, double *out, float *range,
             int byShift, int withOffsets) {
    __m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY), unordered = _mm256_setzero_ps();
    long i = 0;
    for (; i + 8 <= m; i += 8) {
        float v[8];
        for (int k = 0; k < 8; k++) {
            long row = byShift ? ((i + k) * n) >> shift : i + k;
            v[k] = withOffsets ? raw[row] - offsets[row] : raw[row];
        }
        __m256 x = _mm256_loadu_ps(v);
        lo = _mm256_min_ps(x, lo);
        hi = _mm256_max_ps(x, hi);
        unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
        _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
    }
    float lanes[8], highs[8];
    _mm256_storeu_ps(lanes, lo);
    _mm256_storeu_ps(highs, hi);
    float least = INFINITY, greatest = -INFINITY;
    for (int k = 0; k < 8; k++) {
        least = lanes[k] < least ? lanes[k] : least;
        greatest = highs[k] > greatest ? highs[k] : greatest;
    }
    int nan = _mm256_movemask_ps(unordered) != 0;
    for (; i < m; i++) {
        long row = byShift ? (i * n) >> shift : i;
        float x = withOffsets ? raw[row] - offsets[row] : raw[row];
        out[i] = (double)x;
        least = x < least ? x : least;
        greatest = x > greatest ? x : greatest;
        nan |= x != x;
    }
    range[0] = least;
    range[1] = greatest;
    return nan;
}

__attribute__((target("avx"))) int
swiperank_grade_sample_avx(const float *raw, const float *offsets, long n, long m, long shift, double *out, float *range) {
    if (shift < 0) {
        return offsets ? grade_sample(raw, offsets, n, m, 0, out, range, 0, 1) : grade_sample(raw, offsets, n, m, 0, out, range, 0, 0);
    }
    return offsets ? grade_sample(raw, offsets, n, m, shift, out, range, 1, 1) : grade_sample(raw, offsets, n, m, shift, out, range, 1, 0);
}

// One group of `swiperank_cholesky_solve_many_avx`: `vectors` × 4 lanes (1…4, constant once
// inlined), vectors from..<from + lanes; the group lives in `x` as n rows of `vectors` registers.
__attribute__((target("avx"), always_inline)) static inline void
solve_group(const double *l, long n, double *b, long from, long lanes, __m256d *x, int vectors) {
    double *g = (double *)x;
    for (long lane = 0; lane < lanes; lane++) {
        const double *v = b + (from + lane) * n;
        for (long i = 0; i < n; i++) g[i * vectors * 4 + lane] = v[i];
    }
    for (long lane = lanes; lane < vectors * 4; lane++) {  // only the unused lanes need zeros
        for (long i = 0; i < n; i++) g[i * vectors * 4 + lane] = 0;
    }
    const __m256d sign = _mm256_set1_pd(-0.0);
    // L y = b, by columns: y_j = x_j / L[j,j], then x_i += L[i,j]·(−y_j) for i > j.
    for (long j = 0; j < n; j++) {
        const double *column = l + packed_start(j, n) - j; // column[i] is L[i, j]
        __m256d diagonal = _mm256_broadcast_sd(column + j), negated[4];
        for (int k = 0; k < vectors; k++) {
            __m256d y = _mm256_div_pd(x[j * vectors + k], diagonal);
            x[j * vectors + k] = y;
            negated[k] = _mm256_xor_pd(y, sign);
        }
        for (long i = j + 1; i < n; i++) {
            __m256d m = _mm256_broadcast_sd(column + i);
            for (int k = 0; k < vectors; k++) x[i * vectors + k] = _mm256_add_pd(x[i * vectors + k], _mm256_mul_pd(m, negated[k]));
        }
    }
    // Lᵀ z = y, from the last row up: z_j = (y_j − Σ_{i>j} L[i,j]·z_i) / L[j,j], i ascending.
    for (long j = n - 1; j >= 0; j--) {
        const double *column = l + packed_start(j, n) - j;
        __m256d s[4];
        for (int k = 0; k < vectors; k++) s[k] = x[j * vectors + k];
        for (long i = j + 1; i < n; i++) {
            __m256d m = _mm256_broadcast_sd(column + i);
            for (int k = 0; k < vectors; k++) s[k] = _mm256_sub_pd(s[k], _mm256_mul_pd(m, x[i * vectors + k]));
        }
        __m256d diagonal = _mm256_broadcast_sd(column + j);
        for (int k = 0; k < vectors; k++) x[j * vectors + k] = _mm256_div_pd(s[k], diagonal);
    }
    for (long lane = 0; lane < lanes; lane++) {
        double *v = b + (from + lane) * n;
        for (long i = 0; i < n; i++) v[i] = g[i * vectors * 4 + lane];
    }
}

__attribute__((target("avx"))) void
swiperank_cholesky_solve_many_avx(const double *l, long n, double *b, long count, double *scratch) {
    __m256d *x = (__m256d *)scratch;
    long v = 0;
    while (v < count) {
        long rest = count - v, lanes = rest < 16 ? rest : 16;
        switch ((lanes + 3) / 4) {
        case 4: solve_group(l, n, b, v, lanes, x, 4); break;
        case 3: solve_group(l, n, b, v, lanes, x, 3); break;
        case 2: solve_group(l, n, b, v, lanes, x, 2); break;
        default: solve_group(l, n, b, v, lanes, x, 1); break;
        }
        v += lanes;
    }
}

// One pass of `swiperank_add_scaled_fixed_point_avx` over `count` rows (1…4, a constant once
// inlined): per eight scores, each row's eight Int16 units widened (VPMOVSXWD, SSE4.1, which
// every AVX CPU has) and converted to float (exact), times its scale, added in row order.
__attribute__((target("avx"), always_inline)) static inline void
add_fixed_point_pass(float *y, long n, const short *const *rows, const float *scales, int count) {
    const short *p[4];
    __m256 s[4];
    for (int r = 0; r < count; r++) {
        p[r] = rows[r];
        s[r] = _mm256_set1_ps(scales[r]);
    }
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 sum = _mm256_loadu_ps(y + i);
        for (int r = 0; r < count; r++) {
            __m128i low = _mm_cvtepi16_epi32(_mm_loadl_epi64((const __m128i *)(p[r] + i)));
            __m128i high = _mm_cvtepi16_epi32(_mm_loadl_epi64((const __m128i *)(p[r] + i + 4)));
            __m256 units = _mm256_cvtepi32_ps(_mm256_insertf128_si256(_mm256_castsi128_si256(low), high, 1));
            sum = _mm256_add_ps(sum, _mm256_mul_ps(s[r], units));
        }
        _mm256_storeu_ps(y + i, sum);
    }
    for (; i < n; i++) {
        for (int r = 0; r < count; r++) y[i] = y[i] + scales[r] * (float)p[r][i];
    }
}

__attribute__((target("avx"))) void
swiperank_add_scaled_fixed_point_avx(float *y, long n, const short *const *rows, const float *scales, long count) {
    for (long first = 0; first < count; first += 4) {
        long group = count - first < 4 ? count - first : 4;
        switch (group) {
        case 1: add_fixed_point_pass(y, n, rows + first, scales + first, 1); break;
        case 2: add_fixed_point_pass(y, n, rows + first, scales + first, 2); break;
        case 3: add_fixed_point_pass(y, n, rows + first, scales + first, 3); break;
        default: add_fixed_point_pass(y, n, rows + first, scales + first, 4); break;
        }
    }
}

// The bins of a selection (`valuesAtDescendingRanksByBins`): four values per step, each
// top − min(round((x − least)·scale), top) with the rounding to nearest-even (VROUNDPD), which
// is what the portable loop's addition of 2⁵² does to a value in [0, 2⁵²); the bin counts are
// then added one value at a time (a scatter), into counts[b + 1].
__attribute__((target("avx"))) void
swiperank_selection_bins_avx(const double *values, long m, double least, double scale, long top, int *bins, int *counts) {
    const __m256d low = _mm256_set1_pd(least), factor = _mm256_set1_pd(scale), ceiling = _mm256_set1_pd((double)top);
    long i = 0;
    for (; i + 4 <= m; i += 4) {
        __m256d t = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(values + i), low), factor);
        t = _mm256_round_pd(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        t = _mm256_sub_pd(ceiling, _mm256_min_pd(t, ceiling));
        _mm_storeu_si128((__m128i *)(bins + i), _mm256_cvttpd_epi32(t));
    }
    for (; i < m; i++) {
        double t = nearbyint((values[i] - least) * scale);
        t = t < (double)top ? t : (double)top;
        bins[i] = (int)((double)top - t);
    }
    for (i = 0; i < m; i++) counts[bins[i] + 1]++;
}

// The selection's second pass (`valuesAtDescendingRanksByBins`): the values whose bin is one of
// `wanted` (1…4 bins) written, in their order, at their bin's cursor in `starts`, which moves
// on. Four bins compared per step (128-bit integer compares); a value of another bin, the most
// of them, costs no branch of its own.
__attribute__((target("avx"))) void
swiperank_selection_gather_avx(const double *values, const int *bins, long m, const int *wanted, long wantedCount,
                               int *starts, double *sorted) {
    __m128i w[4];
    for (int k = 0; k < 4; k++) w[k] = _mm_set1_epi32(wanted[k < wantedCount ? k : wantedCount - 1]);
    long i = 0;
    for (; i + 4 <= m; i += 4) {
        __m128i b = _mm_loadu_si128((const __m128i *)(bins + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(b, w[0]), _mm_cmpeq_epi32(b, w[1])),
                                   _mm_or_si128(_mm_cmpeq_epi32(b, w[2]), _mm_cmpeq_epi32(b, w[3])));
        int mask = _mm_movemask_ps(_mm_castsi128_ps(hit));
        while (mask) {
            int k = __builtin_ctz(mask);
            mask &= mask - 1;
            int bin = bins[i + k];
            sorted[starts[bin]++] = values[i + k];
        }
    }
    for (; i < m; i++) {
        int bin = bins[i];
        int hit = 0;
        for (long k = 0; k < wantedCount; k++) hit |= bin == wanted[k];
        if (hit) sorted[starts[bin]++] = values[i];
    }
}

#else

int swiperank_has_avx(void) { return 0; }

long swiperank_decayed_factor_avx(const double *l, long n, double keep, double add, double *out,
                                  const double **pointers, double *multipliers) {
    (void)l; (void)n; (void)keep; (void)add; (void)out; (void)pointers; (void)multipliers;
    return -2; // never called: swiperank_has_avx() is 0 here
}

void swiperank_multiply_transposed_avx(const float *a, long d, long n, const float *w, float *y) {
    (void)a; (void)d; (void)n; (void)w; (void)y; // never called: swiperank_has_avx() is 0 here
}

void swiperank_inverse_quadratic_forms_avx(const double *rows, long n, const double *x, long count, double *out,
                                           double *scratch) {
    (void)rows; (void)n; (void)x; (void)count; (void)out; (void)scratch;
}

void swiperank_column_dots_avx(const double *xt, long f, long n, const double *v, double *out) {
    (void)xt; (void)f; (void)n; (void)v; (void)out;
}

void swiperank_cholesky_solve_many_avx(const double *l, long n, double *b, long count, double *scratch) {
    (void)l; (void)n; (void)b; (void)count; (void)scratch; // never called: swiperank_has_avx() is 0 here
}

int swiperank_grade_sample_avx(const float *raw, const float *offsets, long n, long m, long shift, double *out, float *range) {
    (void)raw; (void)offsets; (void)n; (void)m; (void)shift; (void)out; (void)range; // never called: swiperank_has_avx() is 0 here
    return 0;
}

void swiperank_add_scaled_fixed_point_avx(float *y, long n, const short *const *rows, const float *scales, long count) {
    (void)y; (void)n; (void)rows; (void)scales; (void)count; // never called: swiperank_has_avx() is 0 here
}

void swiperank_selection_bins_avx(const double *values, long m, double least, double scale, long top, int *bins, int *counts) {
    (void)values; (void)m; (void)least; (void)scale; (void)top; (void)bins; (void)counts; // never called
}

void swiperank_selection_gather_avx(const double *values, const int *bins, long m, const int *wanted, long wantedCount,
                                    int *starts, double *sorted) {
    (void)values; (void)bins; (void)m; (void)wanted; (void)wantedCount; (void)starts; (void)sorted; // never called
}

#endif
