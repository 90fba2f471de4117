<%doc>
Smith-Waterman-Gotoh intra-task kernel for CPU devices (Farrar's striped SIMD, 2007): one
work-item aligns the query against one long subject, with the query rows striped over the
elements of a vector (element k of vector i holds row i + k * seglen), so the packed SIMD of
the host CPU does the parallel work and no work-group barrier is needed (PoCL runs a barrier
loop per work-item; the tiled sw_intratask kernel is a GPU design).

Parameters (defined once in clalign/sw/params.py, STRIPED_PARAMS):
  LANE   u8 | s16 | s32
         u8:  unsigned 8-bit, biased profile (score + bias >= 0), saturating add/subtract with
              the floor at 0 (exact for local alignment: H >= 0, and an E or F below 0 can never
              win); a pair whose maximum reaches 255 - bias - smax may have saturated and is
              rescored by the s16 variant (Farrar's own 8-bit scheme)
         s16: short16, wrapping add + max (exact below 32767 - smax, a pair at or above it is
              rescored by the s32 variant)
         s32: int8 (exact below INT32_MAX - smax, beyond it the host reports the pair)
  VEC    elements per vector: u8 16 (uchar16) | 32 or 64 (Clang ext_vector_type: one AVX2 or
         AVX-512 register; PoCL only), s16 16, s32 8
  WG     work-items per work-group
  ALPHA, SENTINEL    host constants (profile rows per code, padding code)
Gap convention: a gap of k residues scores -(open + k*extend); GOE = open + extend.

Per subject column: one pass over the seglen vectors computes H and E exactly and F within each
element's stripe; the F leaving the last vector moves one element up (to the next stripe) and is
propagated lazily until it can no longer raise any H (Farrar's "lazy F" loop). H >= 0; E starts
at 0 and F at -GOE (u8: 0), the value a gap opened from the zero border row has: no lower value
can matter (H >= 0), and the lazy loop only runs while some F exceeds H - GOE, i.e. for real gaps.
Padding rows (sentinel, score smin) sit at the bottom of the matrix and never raise the maximum.
</%doc>
<%
U8 = LANE == "u8"
V = VEC
E = {"u8": "uchar", "s16": "short", "s32": "int"}[LANE]
EXT = U8 and V in (32, 64)
W64 = V // 8                  # 64-bit words of an EXT vector
T = "sws_u8x%d" % V if EXT else "%s%d" % (E, V)
assert (LANE, V) in (("u8", 16), ("u8", 32), ("u8", 64), ("s16", 16), ("s32", 8))
%>
/* sw_striped: LANE=${LANE} VEC=${VEC} WG=${WG} */
% if EXT:
/* ${V} unsigned 8-bit lanes (one AVX2 or AVX-512 register): a Clang vector extension, beyond OpenCL
   C 1.2's 16 elements, so this variant builds only with Clang-based compilers (PoCL). */
typedef uchar ${T} __attribute__((ext_vector_type(${V})));
typedef ulong sws_u64x${W64} __attribute__((ext_vector_type(${W64})));
% endif
/* element k <- element k - 1; element 0 <- fill */
inline ${T} sws_shift(const ${T} v, const ${E} fill)
{
% if EXT:
    return __builtin_shufflevector(v, (${T})(fill), ${V}, ${", ".join(str(i) for i in range(V - 1))});
% else:
    return (${T})(fill, ${", ".join("v.s%x" % i for i in range(V - 1))});
% endif
}
% if U8:
/* unsigned saturating add/subtract and max as compare + select (LLVM emits vpaddusb, vpsubusb,
   vpmaxub; OpenCL's add_sat was lowered to compare + blend by PoCL) */
inline ${T} sws_addus(const ${T} a, const ${T} b) { const ${T} s = a + b; return s < a ? (${T})(255) : s; }
inline ${T} sws_subus(const ${T} a, const ${T} b) { return a > b ? a - b : (${T})(0); }
inline ${T} sws_max(const ${T} a, const ${T} b) { return a > b ? a : b; }
/* whether any element of a is above the same element of b */
inline int sws_anygt(const ${T} a, const ${T} b)
{
    const ${T} d = sws_subus(a, b);
%  if EXT:
    const sws_u64x${W64} w = __builtin_astype(d, sws_u64x${W64});
    ulong o = 0;
%   for k in range(W64):
    o |= w.s${"%x" % k};
%   endfor
    return o != 0;
%  else:
    const ulong2 w = as_ulong2(d);
    return (w.x | w.y) != 0;
%  endif
}
% endif

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void sw_striped(__global const uchar *restrict res, __global const int *restrict offs,
                __global const int *restrict lens, __global const int *restrict list, const int npairs,
                __global const ${T} *restrict prof,    /* [code * seglen + i] striped scores${" + bias" if U8 else ""} */
                const int seglen,
                __global ${T} *restrict scr,           /* per work-item: seglen H, then seglen E */
                __global int *restrict out,            /* per pair: score, -1 = beyond this lane type */
                const int goe, const int ext, const int thresh, const int bias)
{
    const int gid = get_global_id(0);
    if (gid >= npairs) return;
    const int sid = list[gid];
    const int n = lens[sid];
    __global const uchar *sq = res + offs[sid];
    __global ${T} *hs = scr + (size_t)gid * 2 * seglen;
    __global ${T} *es = hs + seglen;
    const ${T} vgoe = (${T})((${E})goe), vext = (${T})((${E})ext), vzero = (${T})((${E})0);
% if U8:
    const ${T} vbias = (${T})((${E})bias);
% else:
    const ${T} vngoe = (${T})((${E})(-goe));
% endif
    for (int i = 0; i < seglen; i++) { hs[i] = vzero; es[i] = vzero; }
    ${T} vmx = vzero;
    for (int j = 0; j < n; j++) {
        __global const ${T} *pc = prof + (size_t)sq[j] * seglen;
% if U8:
        ${T} vf = vzero;
        ${T} vh = sws_shift(hs[seglen - 1], (${E})0);
        for (int i = 0; i < seglen; i++) {
            const ${T} e = es[i];
            const ${T} h = sws_max(sws_max(sws_subus(sws_addus(vh, pc[i]), vbias), e), vf);
            vmx = sws_max(vmx, h);
            const ${T} t = sws_subus(h, vgoe);
            es[i] = sws_max(sws_subus(e, vext), t);
            vf = sws_max(sws_subus(vf, vext), t);
            vh = hs[i];
            hs[i] = h;
        }
        vf = sws_shift(vf, (${E})0);
        int i = 0;
        while (sws_anygt(vf, sws_subus(hs[i], vgoe))) {
            const ${T} h = sws_max(hs[i], vf);
            hs[i] = h;
            vmx = sws_max(vmx, h);
            es[i] = sws_max(es[i], sws_subus(h, vgoe));
            vf = sws_subus(vf, vext);
            if (++i == seglen) { i = 0; vf = sws_shift(vf, (${E})0); }
        }
% else:
        ${T} vf = vngoe;
        ${T} vh = sws_shift(hs[seglen - 1], (${E})0);
        for (int i = 0; i < seglen; i++) {
            const ${T} e = es[i];
            const ${T} h = max(max(vh + pc[i], e), max(vf, vzero));
            vmx = max(vmx, h);
            const ${T} t = h - vgoe;
            es[i] = max(e - vext, t);
            vf = max(vf - vext, t);
            vh = hs[i];
            hs[i] = h;
        }
        vf = sws_shift(vf, (${E})(-goe));
        int i = 0;
        while (any(vf > hs[i] - vgoe)) {
            const ${T} h = max(hs[i], vf);
            hs[i] = h;
            vmx = max(vmx, h);
            es[i] = max(es[i], h - vgoe);
            vf = vf - vext;
            if (++i == seglen) { i = 0; vf = sws_shift(vf, (${E})(-goe)); }
        }
% endif
    }
% if U8:
    union { ${T} v; uchar s[${V}]; } mu;
    mu.v = vmx;
    int m = 0;
    for (int l = 0; l < ${V}; l++) m = max(m, (int)mu.s[l]);
% else:
%  if V == 16:
    const ${E}8 m8 = max(vmx.lo, vmx.hi);
%  else:
    const ${E}8 m8 = vmx;
%  endif
    const ${E}4 m4 = max(m8.lo, m8.hi);
    const ${E}2 m2 = max(m4.lo, m4.hi);
    const int m = (int)max(m2.x, m2.y);
% endif
    out[gid] = m >= thresh ? -1 : m;
}
