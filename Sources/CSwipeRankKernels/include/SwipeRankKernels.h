// Hand-vectorized numerics kernels for SwipeRankNumerics (internal: no Swift module but
// SwipeRankNumerics imports this, and no C type reaches a public signature).
#ifndef SWIPERANK_KERNELS_H
#define SWIPERANK_KERNELS_H

/// Asks the CPU to start loading the `bytes` bytes at `p` into its caches, without waiting (a
/// hint: no fault, no effect on results; every CPU).
void swiperank_prefetch(const void *p, long bytes);

/// `swiperank_prefetch(base + rows[r]·stride, bytes)` for each of the `count` rows.
void swiperank_prefetch_rows(const void *base, long stride, const long *rows, long count, long bytes);

/// 1 when this CPU and its OS run 256-bit AVX instructions, else 0 (checked with cpuid and
/// xgetbv; always 0 off x86-64).
int swiperank_has_avx(void);

/// The factor of keep·L·Lᵀ + add·I from the packed factor `l` (lower triangle by columns,
/// column j's entries from the diagonal down start at j·n − j(j−1)/2), written to `out` (same
/// layout, another buffer), with 256-bit AVX. `pointers` has room for 4·n pointers and
/// `multipliers` for 2·n values (scratch). Returns −1 on success, or the 0-based column whose
/// pivot was not positive (the rest of `out` is then unwritten). Bit for bit the portable
/// kernel's result (see `decayedFactor` in Cholesky+Kernels.swift). Call only when
/// `swiperank_has_avx()` is 1.
long swiperank_decayed_factor_avx(const double *l, long n, double keep, double add, double *out,
                                  const double **pointers, double *multipliers);

/// y = aᵀ·w for the d × n row-major `a`, each output summed from 0 in row order with zero
/// weights skipped: `Matrix.multiplyTransposedInOrder` bit for bit. Call only when
/// `swiperank_has_avx()` is 1.
void swiperank_multiply_transposed_avx(const float *a, long d, long n, const float *w, float *y);

/// xᵀ(LLᵀ)⁻¹x for `count` vectors of n stored one after another in `x`, with `rows` L's lower
/// triangle by rows: `inverseQuadraticForms` bit for bit. `scratch` holds 32·n doubles, 32-byte
/// aligned. Call only when `swiperank_has_avx()` is 1.
void swiperank_inverse_quadratic_forms_avx(const double *rows, long n, const double *x, long count, double *out,
                                           double *scratch);

/// For each column i of the f × n row-major `xt`, Σⱼ v[j]·xt[j, i] summed from 0 in ascending
/// j: `columnDotsInOrder` bit for bit. Call only when `swiperank_has_avx()` is 1.
void swiperank_column_dots_avx(const double *xt, long f, long n, const double *v, double *out);

/// Solves L·Lᵀ·z = b in place for `count` vectors of n stored one after another in `b`, with
/// `l` the packed factor by columns: per vector `CholeskyFactor.solve` bit for bit (forward
/// substitution by columns, then back substitution by dot products down the columns).
/// `scratch` holds 16·n doubles, 32-byte aligned. Call only when `swiperank_has_avx()` is 1.
void swiperank_cholesky_solve_many_avx(const double *l, long n, double *b, long count, double *scratch);

/// A grade scale's sample (`gradeSample` in OrderedKernels.swift): for i in 0..<m, row
/// r = i (`shift` < 0) or (i·n) >> shift, `out[i]` = (double)(raw[r] − offsets[r]) (`offsets`
/// NULL: raw[r]); `range` gets the values' least and greatest as the portable loop finds them
/// (`x < least ? x : least`, in order). Returns 1 when a value is NaN (the range is then not
/// used), else 0. The same values bit for bit as the portable loop. Call only when
/// `swiperank_has_avx()` is 1.
int swiperank_grade_sample_avx(const float *raw, const float *offsets, long n, long m, long shift, double *out, float *range);

/// y[i] += scales[r]·(float)rows[r][i] for every i in 0..<n, rows r in 0..<count in order: each
/// score the same bits as a scalar pass per row (`addScaledFixedPointRows` in
/// OrderedKernels.swift). Call only when `swiperank_has_avx()` is 1.
void swiperank_add_scaled_fixed_point_avx(float *y, long n, const short *const *rows, const float *scales, long count);

/// The first pass of `valuesAtDescendingRanksByBins` (Selection.swift): for each of the m
/// values (no NaN, each in [least, least + top/scale]), bins[i] = top − min(round((x − least)·scale),
/// top), rounding to nearest-even, and counts[bins[i] + 1] += 1. The portable loop's bins
/// exactly. Call only when `swiperank_has_avx()` is 1.
void swiperank_selection_bins_avx(const double *values, long m, double least, double scale, long top, int *bins, int *counts);

/// The second pass of `valuesAtDescendingRanksByBins`: each value whose bin is one of the
/// `wantedCount` (1…4) bins in `wanted`, in order, goes to sorted[starts[bin]], and that cursor
/// moves on. Call only when `swiperank_has_avx()` is 1.
void swiperank_selection_gather_avx(const double *values, const int *bins, long m, const int *wanted, long wantedCount,
                                    int *starts, double *sorted);

#endif
