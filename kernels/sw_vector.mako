<%doc>
Smith-Waterman-Gotoh inter-task kernel for CPU OpenCL devices (after SWIPE, Rognes 2011, and
the inter-task idea of CUDASW++3.0): each work-item aligns the query against VEC subjects held
in the elements of one vector value, so the packed SIMD instructions of the host CPU do the
parallel work that PoCL does not find across work-items in the packed-word kernel.

Parameters (defined once in clalign/sw/params.py, SWV_PARAMS):
  LANE   s16 | u8    s16: signed 16-bit lanes (short{VEC}, VEC 8 | 16), wrapping add/sub and max;
                     u8: unsigned 8-bit lanes with saturating add/sub and a biased profile (SWIPE),
                     VEC 16 (uchar16) | 32 (Clang ext_vector_type, PoCL only)
  VEC    subjects per work-item (elements of the score vector)
  COLS   1 | 2 | 4   subject columns computed per pass over the query rows (the per-row state
                     H, E is read and written once per COLS columns)
  STRIP  rows        query rows per strip; a strip's row state (H, E) lives in a per-work-item
                     scratch area of STRIP x 2 vectors, the strip boundary (H, F of the last
                     row) per column in another
  WG     work-items per work-group
Gap convention: a gap of k residues scores -(open + k*extend); GOE = open + extend.

Scores: per column the score profile sp[a] = (score of query code a against lane l's residue)
over the lanes is built by transposing the lanes' rows of the transposed matrix (SWIPE's
per-column profile), then each cell reads sp[q_i]: one vector load, no gather or shuffle.
Subjects past their end and empty lanes read the sentinel code 28 (matrix row of smin).
Exactness: a lane whose best score reaches `thresh` may have gone past its range and is
written as -1, and the host rescores that subject in a wider pass (u8 -> s16 -> 32-bit
sw_intertask). s16: thresh = 32767 - smax. An H can only wrap when the diagonal H is above
32767 - smax, i.e. after the lane's max has reached thresh; E and F stay >= -GOE (0 start,
max with H - GOE), so E - ext, F - ext, H - GOE never wrap (GOE + ext < 16384 is checked on
the host). u8 (values >= 0, floor 0 from the saturating subtract): thresh = 255 - bias - smax,
same argument with the upper saturation.
Work-items take groups from an atomic counter, longest group first (groups are in ascending
length order), and keep their scratch areas across groups.
</%doc>
<%
U8 = LANE == "u8"
assert (VEC in (16, 32)) if U8 else (VEC in (8, 16))
E = "uchar" if U8 else "short"
V = "swv_u8x32" if VEC == 32 else "%s%d" % (E, VEC)
NB = -(-28 // VEC)            # blocks of VEC codes covering the 28 residue codes
import math
STAGES = int(math.log2(VEC))
%>
<%
# VEC == 32 (Clang only): the transpose is 4 rounds of in-128-bit-lane byte unpacks (vpunpck[lh]bw)
# and one round of 128-bit half selections (vperm2i128), with __builtin_shufflevector. Simulated
# here on labels (row, code): T32[a] = ((vector, half), (vector, half)) holding code a for all
# rows, POS[p] = the input row that ends up in element p of every output, ROW = its inverse.
def _t32():
    X = [[(l, e) for e in range(32)] for l in range(32)]
    def unpack(a, b, hi):
        out = []
        for h in (0, 1):
            for i in range(8):
                k = h * 16 + i + (8 if hi else 0)
                out += [a[k], b[k]]
        return out
    for _ in range(4):
        X = [unpack(X[k], X[k + 16], hi) for k in range(16) for hi in (0, 1)]
    where = {}
    for v in range(32):
        for h in (0, 1):
            seg = X[v][h * 16:(h + 1) * 16]
            codes = {e for _, e in seg}
            assert len(codes) == 1
            where.setdefault(codes.pop(), []).append((v, h, [l for l, _ in seg]))
    table, order = [], None
    for a in range(32):
        (v0, h0, l0), (v1, h1, l1) = sorted(where[a], key=lambda t: t[2][0])
        assert order is None or order == l0 + l1
        order = l0 + l1
        table.append(((v0, h0), (v1, h1)))
    assert sorted(order) == list(range(32))
    return table, order
if VEC == 32:
    T32, POS = _t32()
    # element p of every output comes from input row POS[p], so input row POS[p] is lane p's row
    ROW = [None] * 32
    for _p, _r in enumerate(POS):
        ROW[_r] = _p
    UNPACK = [", ".join(str(h * 16 + i + (8 if hi else 0) + o) for h in (0, 1) for i in range(8) for o in (0, 32))
              for hi in (0, 1)]
else:
    T32, POS, ROW, UNPACK = None, None, None, None
%>
<%def name="profile(c)">\
## sp[c][a] = lanes' scores against query code a, from the VEC matrix rows m_l (one per lane: the
## transposed-matrix row of the lane's residue), transposed with constant shuffles only.
% if VEC == 32:
                    {
%  for l in range(32):
                    const ${V} x0_${l} = *((__global const ${V} *)m${ROW[l]});
%  endfor
%  for st in range(4):
%   for k in range(16):
%    for hi in (0, 1):
                    const ${V} x${st + 1}_${2 * k + hi} = __builtin_shufflevector(x${st}_${k}, x${st}_${k + 16}, ${UNPACK[hi]});
%    endfor
%   endfor
%  endfor
%  for a in range(28):
<% (v0, h0), (v1, h1) = T32[a] %>\
                    sp[${c}][${a}] = __builtin_shufflevector(x4_${v0}, x4_${v1}, ${", ".join([str(h0 * 16 + i) for i in range(16)] + [str(32 + h1 * 16 + i) for i in range(16)])});
%  endfor
                    }
% else:
## log2(VEC) rounds of even/odd unzips (OpenCL C swizzles), VEC codes at a time
% for b in range(NB):
                    {
%  for l in range(VEC):
                    ${V} x0_${l} = ((__global const ${V} *)m${l})[${b}];
%  endfor
%  for st in range(STAGES):
%   for k in range(VEC // 2):
                    const ${V} x${st + 1}_${k} = (${V})(x${st}_${2 * k}.even, x${st}_${2 * k + 1}.even);
                    const ${V} x${st + 1}_${k + VEC // 2} = (${V})(x${st}_${2 * k}.odd, x${st}_${2 * k + 1}.odd);
%   endfor
%  endfor
%  for a in range(VEC):
                    sp[${c}][${b * VEC + a}] = x${STAGES}_${a};
%  endfor
                    }
% endfor
% endif
</%def>
/* sw_vector: LANE=${LANE} VEC=${VEC} COLS=${COLS} STRIP=${STRIP} WG=${WG} */
#define SWV_SENTINEL ${SENTINEL}
% if VEC == 32:
/* 32 unsigned 8-bit lanes (one AVX2 register): a Clang vector extension, beyond OpenCL C 1.2's
   16 elements, so this variant builds only with Clang-based compilers (PoCL, Intel CPU). */
typedef uchar swv_u8x32 __attribute__((ext_vector_type(32)));
% endif
% if U8:
/* unsigned saturating add/subtract and max, written as compare + select so that LLVM emits the
   packed instructions (vpaddusb, vpsubusb, vpmaxub) for every vector type */
inline ${V} swv_addus(const ${V} a, const ${V} b) { const ${V} s = a + b; return s < a ? (${V})(255) : s; }
inline ${V} swv_subus(const ${V} a, const ${V} b) { return a > b ? a - b : (${V})(0); }
inline ${V} swv_max(const ${V} a, const ${V} b) { return a > b ? a : b; }
% endif

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void sw_vector(__global const uchar *restrict ires,    /* interleaved residue codes (swv_interleave) */
               __global const long *restrict goff,     /* first code of each group in ires (ngroups + 1) */
               __global const int *restrict list,      /* VEC subject ids per group, -1 = empty lane */
               const int ngroups,
               __global const uchar *restrict query, const int qlen,
               __global const ${E} *restrict matT,    /* [c * ${ALPHA} + a] = score(query a, subject c)${" + bias" if U8 else ""} */
               __global ${V} *restrict hscr,          /* per work-item: STRIP x (H, E) */
               __global ${V} *restrict bscr,          /* per work-item: maxcols x (H, F) */
               const int maxcols,
               __global int *restrict scores,          /* per subject; -1 = may have saturated */
               __global int *restrict counter,         /* next group to take */
               const int bias, const int goe, const int ext, const int thresh)
{
    const ${V} vgoe = (${V})((${E})goe), vext = (${V})((${E})ext), vzero = (${V})((${E})0);
% if U8:
    const ${V} vbias = (${V})((${E})bias);
% endif
    const size_t wid = get_global_id(0);
    __global ${V} *hs = hscr + wid * ${2 * STRIP};
    __global ${V} *bs = bscr + wid * (size_t)maxcols * 2;
    ${V} sp[${COLS}][${ALPHA}];
    for (;;) {
        const int taken = atomic_inc(counter);
        if (taken >= ngroups) break;
        const int g = ngroups - 1 - taken;            /* longest groups first */
        __global const uchar *gres = ires + goff[g];
        const int ncol = (int)((goff[g + 1] - goff[g]) / ${VEC});   /* a multiple of COLS */
        ${V} mx = vzero;
        for (int s0 = 0; s0 < qlen; s0 += ${STRIP}) {
            const int rows = min(${STRIP}, qlen - s0);
            const int first = s0 == 0, last = s0 + ${STRIP} >= qlen;
            __global const uchar *qs = query + s0;
            for (int i = 0; i < 2 * rows; i++) hs[i] = vzero;
            ${V} dgb = vzero;                          /* boundary H of the previous column */
            for (int j = 0; j < ncol; j += ${COLS}) {
% for c in range(COLS):
                {
% for l in range(VEC):
                    __global const ${E} *m${l} = matT + (int)gres[(j + ${c}) * ${VEC} + ${l}] * ${ALPHA};
% endfor
${profile(c)}
                }
                ${V} up${c} = first ? vzero : bs[2 * (j + ${c})];
                ${V} f${c} = first ? vzero : bs[2 * (j + ${c}) + 1];
% endfor
                ${V} left = dgb;                       /* H[i-1][j-1] */
                dgb = up${COLS - 1};
                for (int i = 0; i < rows; i++) {
                    const int q = qs[i];
                    ${V} h = hs[2 * i], e = hs[2 * i + 1];
                    const ${V} hl = h;
% for c in range(1, COLS):
                    const ${V} d${c} = up${c - 1};
% endfor
% for c in range(COLS):
                    {
                        const ${V} dg = ${"left" if c == 0 else "d%d" % c};
% if U8:
                        h = swv_max(swv_max(swv_subus(swv_addus(dg, sp[${c}][q]), vbias), e), f${c});
                        mx = swv_max(mx, h);
                        const ${V} t = swv_subus(h, vgoe);
                        e = swv_max(swv_subus(e, vext), t);
                        f${c} = swv_max(swv_subus(f${c}, vext), t);
% else:
                        h = max(max(dg + sp[${c}][q], e), max(f${c}, vzero));
                        mx = max(mx, h);
                        const ${V} t = h - vgoe;
                        e = max(e - vext, t);
                        f${c} = max(f${c} - vext, t);
% endif
                        up${c} = h;
                    }
% endfor
                    left = hl;
                    hs[2 * i] = h;
                    hs[2 * i + 1] = e;
                }
                if (!last) {
% for c in range(COLS):
                    bs[2 * (j + ${c})] = up${c};
                    bs[2 * (j + ${c}) + 1] = f${c};
% endfor
                }
            }
        }
        union { ${V} v; ${E} s[${VEC}]; } mxu;
        mxu.v = mx;
        for (int l = 0; l < ${VEC}; l++) {
            const int sid = list[g * ${VEC} + l];
            if (sid >= 0) scores[sid] = (int)mxu.s[l] >= thresh ? -1 : (int)mxu.s[l];
        }
    }
}

/* swv_interleave: one work-item per group lays its subjects' residue codes out column by column,
   VEC codes per column (lane order), SWV_SENTINEL past a subject's end and in empty lanes, so that
   sw_vector reads each column's codes from one contiguous stretch without bounds checks. */
__kernel void swv_interleave(__global const uchar *restrict res, __global const int *restrict offs,
                             __global const int *restrict lens, __global const int *restrict list,
                             __global const long *restrict goff, const int ngroups,
                             __global uchar *restrict ires)
{
    const int g = get_global_id(0);
    if (g >= ngroups) return;
    const int ncol = (int)((goff[g + 1] - goff[g]) / ${VEC});
    __global uchar *out = ires + goff[g];
    for (int l = 0; l < ${VEC}; l++) {
        const int sid = list[g * ${VEC} + l];
        const int len = sid < 0 ? 0 : lens[sid];
        __global const uchar *sq = res + (sid < 0 ? 0 : offs[sid]);
        for (int j = 0; j < ncol; j++) out[j * ${VEC} + l] = j < len ? sq[j] : (uchar)SWV_SENTINEL;
    }
}
