<%doc>
Smith-Waterman-Gotoh intra-task kernel for CPU devices (Farrar's striped SIMD, 2007): one
work-item aligns the query against one long subject, with the query rows striped over the
elements of a vector (element k of vector i holds row i + k * seglen), so the packed SIMD of
the host CPU does the parallel work and no work-group barrier is needed (PoCL runs a barrier
loop per work-item; the tiled sw_intratask kernel is a GPU design).

Parameters (defined once in clalign/sw/params.py, STRIPED_PARAMS):
  LANE   s16 | s32   s16: short16, wrapping add + max (exact below 32767 - smax, a pair at or
                     above it is rescored by the s32 variant); s32: int8 (exact below
                     INT32_MAX - smax, beyond it the host reports the pair)
  WG     work-items per work-group
  ALPHA, SENTINEL    host constants (profile rows per code, padding code)
Gap convention: a gap of k residues scores -(open + k*extend); GOE = open + extend.

Per subject column: one pass over the seglen vectors computes H and E exactly and F within each
element's stripe; the F leaving the last vector moves one element up (to the next stripe) and is
propagated lazily until it can no longer raise any H (Farrar's "lazy F" loop). H >= 0; E starts
at 0 and F at -GOE, the value a gap opened from the zero border row has: no lower value can
matter (H >= 0), and the lazy loop only runs while some F exceeds H - GOE, i.e. for real gaps. Padding rows (sentinel, score smin) sit at the
bottom of the matrix and never raise the maximum.
</%doc>
<%
V = 16 if LANE == "s16" else 8
E = "short" if LANE == "s16" else "int"
T = "%s%d" % (E, V)
%>
/* sw_striped: LANE=${LANE} WG=${WG} */
/* element k <- element k - 1; element 0 <- fill */
inline ${T} sws_shift(const ${T} v, const ${E} fill)
{ return (${T})(fill, ${", ".join("v.s%x" % i for i in range(V - 1))}); }

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void sw_striped(__global const uchar *restrict res, __global const int *restrict offs,
                __global const int *restrict lens, __global const int *restrict list, const int npairs,
                __global const ${T} *restrict prof,    /* [code * seglen + i] striped scores */
                const int seglen,
                __global ${T} *restrict scr,           /* per work-item: seglen H, then seglen E */
                __global int *restrict out,            /* per pair: score, -1 = beyond this lane type */
                const int goe, const int ext, const int thresh)
{
    const int gid = get_global_id(0);
    if (gid >= npairs) return;
    const int sid = list[gid];
    const int n = lens[sid];
    __global const uchar *sq = res + offs[sid];
    __global ${T} *hs = scr + (size_t)gid * 2 * seglen;
    __global ${T} *es = hs + seglen;
    const ${T} vgoe = (${T})((${E})goe), vext = (${T})((${E})ext), vzero = (${T})((${E})0);
    const ${T} vngoe = (${T})((${E})(-goe));
    for (int i = 0; i < seglen; i++) { hs[i] = vzero; es[i] = vzero; }
    ${T} vmx = vzero;
    for (int j = 0; j < n; j++) {
        __global const ${T} *pc = prof + (size_t)sq[j] * seglen;
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
    }
% if V == 16:
    const ${E}8 m8 = max(vmx.lo, vmx.hi);
% else:
    const ${E}8 m8 = vmx;
% endif
    const ${E}4 m4 = max(m8.lo, m8.hi);
    const ${E}2 m2 = max(m4.lo, m4.hi);
    const int m = (int)max(m2.x, m2.y);
    out[gid] = m >= thresh ? -1 : m;
}
