<%doc>
  Striped HMMER3 MSV / SSV filter for CPU OpenCL devices (Farrar's layout, as HMMER's SSE
  p7_MSVFilter): one work-item scores one target sequence at a time, the model's states
  striped over the VEC unsigned byte lanes of a vector, so that the packed SIMD of the host
  CPU (SSE: 16 lanes, AVX2: 32) does the parallel work; PoCL compiles the vector type and the
  compare + select forms below to vpaddusb / vpsubusb / vpmaxub. The S-lane kernel
  (hmm_slane.mako) is the GPU design; on PoCL its 32-bit SWAR words leave the SIMD unit idle.

  Parameters (clalign.hmm.params.HMM_STRIPED): ALGO (msv | ssv), VEC (16 | 32 lanes; 32 is a
  Clang ext_vector_type, built only where the probe found Clang vectors), WG (work-items per
  work-group), QC (below). Run-time: Q = ceil(M / VEC) vectors per DP row; state k (0-based) is lane
  k / Q of vector k % Q; the profile is [32 codes][Q] vectors of HMMER's MSV costs (rbv,
  255 for padding states past M and for the END/PAD/spare codes).

  MSV is p7_MSVFilter's recurrence on HMMER's biased unsigned bytes, word for word:
      sv = subus(addus(max(mpv, xB), bias), rbv[x][q]),  xE = max over the row,
      overflow when xE >= 255 - bias (the loop stops: the score is +inf), else
      xJ = max(xJ, subus(xE, tec)), xB = subus(max(base, xJ), tjbm).
  A row whose lanes are all <= thr = min(xJ + tec, 254 - bias) changes none of xJ, xB, the
  flag, so the kernel tests that with one vector compare and takes the horizontal max only
  where it fails (exactly HMMER's values, fewer instructions per row).
  Output: xJ | overflow << 8 (clalign.hmm.reference.msv_from_bytes gives the score).

  SSV (HMMER 3.4 p7_SSVFilter: signed bytes v, v' = subss(v_prev, sbv), every diagonal starting
  at -128, xE = max of the raw bytes read as unsigned) in a shifted unsigned form u = v + 128
  with the same table and the same two instructions as MSV:
      u' = subus(addus(u_prev, bias), rbv[x][q]),  u = 0 at the start and for the shifted-in lane.
  Why it is exact: sbv = clip(rbv - bias) >= -bias, so a cell rises by at most bias per row.
  While every cell is below the overflow line v < -1 - bias (u < 127 - bias), u + bias < 127
  does not saturate and rbv > 127 + bias empties the cell either way, so u' = clip(u - sbv, 0,
  255) = subss in the shifted form, and HMMER's unsigned max of those negative bytes is u + 128.
  The first cell to reach v >= -1 - bias lands in [-1 - bias, -2] (it came from <= -2 - bias):
  u >= 127 - bias and HMMER's unsigned max sees >= 255 - bias at the same cell. From then on
  only that overflow fact matters to the host (clalign.hmm.reference.ssv_from_bytes), so the
  kernel writes 255 when its max u reached 127 - bias and u + 128 otherwise. The max is kept
  per lane and reduced once per sequence (no J state, no per-row work).

  QC (SSV only): 0 = Q is the run-time argument and the row is kept in the scratch area; 1..16
  = the kernel is built for exactly Q = QC vectors, the row unrolled into QC vector variables
  (registers, a few spilled to the stack): no load and store of the row per cell.

  Work: sequences are taken from an atomic counter in the order of ``list`` (longest first),
  so that the two or sixteen threads of the device end together; each work-item keeps its DP
  row (Q vectors) in its own scratch area (CPU caches hold it).
</%doc>
<%
    T = "hst_u8x%d" % VEC
    MSV = ALGO == "msv"
%>
/* hmm_striped: ALGO=${ALGO} VEC=${VEC} WG=${WG} */
typedef uchar ${T} __attribute__((ext_vector_type(${VEC})));

/* unsigned saturating add / subtract and max as compare + select (LLVM emits the packed
   instructions for any vector width) */
inline ${T} hst_addus(const ${T} a, const ${T} b) { const ${T} s = a + b; return s < a ? (${T})(255) : s; }
inline ${T} hst_subus(const ${T} a, const ${T} b) { return a > b ? a - b : (${T})(0); }
inline ${T} hst_max(const ${T} a, const ${T} b) { return a > b ? a : b; }
/* lane j <- lane j - 1, lane 0 <- 0 (the striped wrap of the previous row's last vector) */
inline ${T} hst_shift(const ${T} v)
{ return __builtin_shufflevector(v, (${T})(0), ${VEC}, ${", ".join(str(i) for i in range(VEC - 1))}); }
/* whether some lane of a exceeds the same lane of b (a vector compare + movemask) */
inline int hst_any_gt(const ${T} a, const ${T} b)
{
% if VEC == 32:
    const __typeof__(a > b) c = a > b;
    return any(__builtin_shufflevector(c, c, ${", ".join(str(i) for i in range(16))}) |
               __builtin_shufflevector(c, c, ${", ".join(str(i) for i in range(16, 32))}));
% else:
    return any(a > b);
% endif
}
inline uint hst_hmax(const ${T} v)
{
% if VEC == 32:
    const uchar16 a = max(__builtin_shufflevector(v, v, ${", ".join(str(i) for i in range(16))}),
                          __builtin_shufflevector(v, v, ${", ".join(str(i) for i in range(16, 32))}));
% else:
    const uchar16 a = v;
% endif
    const uchar8 b = max(a.lo, a.hi);
    const uchar4 c = max(b.lo, b.hi);
    const uchar2 d = max(c.lo, c.hi);
    return (uint)max(d.x, d.y);
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void hmm_striped(__global const uchar *restrict res,     /* residue codes of the database     */
                 __global const ulong *restrict offs,    /* first residue of each sequence    */
                 __global const uint *restrict lens,     /* residues of each sequence         */
                 __global const uint *restrict list,     /* sequences to score, longest first */
                 const uint nlist,
                 __global const ${T} *restrict prof,     /* [32][Q] striped rbv               */
                 const uint Q,
                 __global const uchar *restrict seq_tjbm, /* (tjb_b + tbm_b) & 255 per sequence */
                 const uint base, const uint bias, const uint tec,
                 __global ${T} *restrict scr,            /* Q vectors per work-item           */
                 __global uint *restrict counter,        /* next list entry to take           */
                 __global uint *restrict out)            /* raw result per sequence           */
{
    __global ${T} *dp = scr + get_global_id(0) * (size_t)Q;
    const ${T} vbias = (${T})((uchar)bias);
% if MSV:
    const uint ceil = 255u - bias;
% endif
    for (;;) {
        const uint t = atomic_inc(counter);
        if (t >= nlist) break;
        const uint id = list[t];
        const uint n = lens[id];
        __global const uchar *sq = res + offs[id];
% if not QC:
        for (uint q = 0; q < Q; ++q) dp[q] = (${T})(0);
% endif
% if MSV:
        const uint tjbm = seq_tjbm[id];
        uint xJ = 0u, ovf = 0u;
        uint xB = base > tjbm ? base - tjbm : 0u;
        ${T} vthr = (${T})((uchar)min(tec, ceil - 1u));
        for (uint i = 0; i < n; ++i) {
            __global const ${T} *rsc = prof + (size_t)sq[i] * Q;
            const ${T} vxB = (${T})((uchar)xB);
            ${T} mpv = hst_shift(dp[Q - 1u]);
            ${T} vxE = (${T})(0);
            for (uint q = 0; q < Q; ++q) {
                const ${T} sv = hst_subus(hst_addus(hst_max(mpv, vxB), vbias), rsc[q]);
                vxE = hst_max(vxE, sv);
                mpv = dp[q];
                dp[q] = sv;
            }
            /* xJ, xB and the overflow flag change only where some lane exceeds thr: one
               compare + movemask per row, the horizontal max only then */
            if (hst_any_gt(vxE, vthr)) {
                const uint xE = hst_hmax(vxE);
                if (xE >= ceil) { ovf = 1u; break; }
                const uint e = xE > tec ? xE - tec : 0u;
                xJ = max(xJ, e);
                const uint b = max(base, xJ);
                xB = b > tjbm ? b - tjbm : 0u;
                vthr = (${T})((uchar)min(xJ + tec, ceil - 1u));
            }
        }
        out[id] = xJ | (ovf << 8);
% elif QC:
        /* Q = ${QC} fixed: the row lives in registers */
        ${T} vxE = (${T})(0);
%   for q in range(QC):
        ${T} d${q} = (${T})(0);
%   endfor
        for (uint i = 0; i < n; ++i) {
            __global const ${T} *rsc = prof + (size_t)sq[i] * ${QC}u;
            ${T} mpv = hst_shift(d${QC - 1});
%   for q in range(QC):
            { const ${T} sv = hst_subus(hst_addus(mpv, vbias), rsc[${q}]);
              vxE = hst_max(vxE, sv); mpv = d${q}; d${q} = sv; }
%   endfor
        }
        const uint m = hst_hmax(vxE);
        out[id] = m >= 127u - bias ? 255u : m + 128u;
% else:
        ${T} vxE = (${T})(0);
        for (uint i = 0; i < n; ++i) {
            __global const ${T} *rsc = prof + (size_t)sq[i] * Q;
            ${T} mpv = hst_shift(dp[Q - 1u]);
            for (uint q = 0; q < Q; ++q) {
                const ${T} sv = hst_subus(hst_addus(mpv, vbias), rsc[q]);
                vxE = hst_max(vxE, sv);
                mpv = dp[q];
                dp[q] = sv;
            }
        }
        const uint m = hst_hmax(vxE);
        out[id] = m >= 127u - bias ? 255u : m + 128u;
% endif
    }
}
