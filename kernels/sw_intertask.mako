<%doc>
Smith-Waterman-Gotoh inter-task kernel (after CUDASW++3.0): each work-item aligns the query
against WORDS * (32 / WIDTH) subjects held in the lanes of 32-bit words.

Parameters (defined once in clalign/sw/params.py, SW_PARAMS):
  WIDTH    8 | 16 | 32  bits per lane (8: unsigned biased saturating; 16: signed wrapping add
                        with relu max; 32: plain int, one lane)
  WORDS    1..4         packed words per work-item
  ROWS     4..64        query rows held in registers per strip (multiple of 4)
  PROFILE  plain|pairs  query profile layout (pairs = residue-pair variant, K = 2; 8/16 bits)
  SCHEDULE static|dynamic
  WG       work-items per work-group
  UNROLL   1 | 2 | 4    subject columns per loop iteration (straight-line body over UNROLL columns
                        of a residue chunk: independent chains for the GPU scheduler, but NVIDIA's
                        front end takes ~25 s for ROWS=64 UNROLL=4, docs/perf/cache.md)
  CELL     c | ptx      32-bit cell in OpenCL C or as one inline PTX block (SIMD=ptx only)
  CHAIN    h | x        32-bit cell form: 'h' f' = max(f - ext, h - goe); 'x' the same value as
                        max(f - ext, x - goe) with x = max(dg + p, e, 0), h = max(x, f) (exact as
                        goe >= ext): two dependent operations per row instead of four
Gap convention: a gap of k residues scores -(open + k*extend); GOE = open + extend.

Matrix layout: query rows i (strips of ROWS rows), subject columns j. Per strip the work-item
walks the columns of its group; for each column the boundary (H of the strip's last row, F
entering the next strip) is written to `tmp` and read back by the next strip.
</%doc>
<%include file="simd.mako"/>
<%
L = 32 // WIDTH               # lanes per word
S = WORDS * L                 # subjects per work-item
PK = WIDTH != 32
N = {8: "8x4", 16: "16x2", 32: None}[WIDTH]
T = "uint" if PK else "int"
# RPW: query rows per profile word; NFETCH: profile words fetched per lane word (one per lane,
# or one per lane pair for the pair profile); VW: consecutive words per fetch (vector load).
if WIDTH == 32:
    RPW, NFETCH = 1, 1
elif PROFILE == "plain":
    RPW, NFETCH = L, L
else:
    RPW, NFETCH = (2 if WIDTH == 8 else 1), L // 2
assert ROWS % 4 == 0 and ALPHA & (ALPHA - 1) == 0
if PROFILE == "plain":
    RW = ROWS // (L if PK else 1)        # words per (strip, residue)
    STRIP = ALPHA * RW
else:
    RW = ROWS // 2 if WIDTH == 8 else ROWS   # words per (strip, residue pair)
    STRIP = ALPHA * ALPHA * RW
VW = 4 if RW % 4 == 0 else (2 if RW % 2 == 0 else 1)
CH = RPW * VW                 # rows per fetch group
# The plain profile is stored residue-minor: per strip, for each group of VW words, the ALPHA
# residues' vectors side by side. The lanes of a wavefront hold different subject residues, so
# one vector load then touches ALPHA * VW * 4 contiguous bytes instead of ALPHA scattered rows.
TRANSPOSED = PROFILE == "plain" or WIDTH == 32
%>
/* sw_intertask: WIDTH=${WIDTH} WORDS=${WORDS} ROWS=${ROWS} PROFILE=${PROFILE} SCHEDULE=${SCHEDULE} WG=${WG} UNROLL=${UNROLL} CHAIN=${CHAIN} CELL=${CELL} */
#define SW_SENTINEL ${SENTINEL}u

/* Byte/half-word shuffles used to assemble lane words from profile words.
   ilv_lo8(a,b) = (a.b0, b.b0, a.b1, b.b1); ilv_hi8 = (a.b2, b.b2, a.b3, b.b3)
   lo16(a,b) = (a.h0, b.h0);                 hi16(a,b) = (a.h1, b.h1)                          */
% if SIMD == "ptx":
inline uint sw_prmt(uint a, uint b, uint sel)
{ uint d; asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel)); return d; }
inline uint sw_ilv_lo8(uint a, uint b) { return sw_prmt(a, b, 0x5140u); }
inline uint sw_ilv_hi8(uint a, uint b) { return sw_prmt(a, b, 0x7362u); }
inline uint sw_lo16(uint a, uint b) { return sw_prmt(a, b, 0x5410u); }
inline uint sw_hi16(uint a, uint b) { return sw_prmt(a, b, 0x7632u); }
% else:
inline uint sw_ilv_lo8(uint a, uint b)
{ return (a & 0xffu) | ((b & 0xffu) << 8) | ((a & 0xff00u) << 8) | ((b & 0xff00u) << 16); }
inline uint sw_ilv_hi8(uint a, uint b)
{ return ((a >> 16) & 0xffu) | ((b >> 8) & 0xff00u) | ((a >> 8) & 0xff0000u) | (b & 0xff000000u); }
inline uint sw_lo16(uint a, uint b) { return (a & 0xffffu) | (b << 16); }
inline uint sw_hi16(uint a, uint b) { return (a >> 16) | (b & 0xffff0000u); }
% endif

<%def name="cell(r, w)">\
% if WIDTH == 8:
        { uint h = cla_subus_8x4(cla_addus_8x4(dg${w}, p${r}_${w}), vbias);
          h = cla_max3u_8x4(h, e${r}_${w}, f${w});
          uint t = cla_subus_8x4(h, vgoe);
          e${r}_${w} = cla_maxu_8x4(cla_subus_8x4(e${r}_${w}, vext), t);
          f${w} = cla_maxu_8x4(cla_subus_8x4(f${w}, vext), t);
          mx${w} = cla_maxu_8x4(mx${w}, h);
          dg${w} = h${r}_${w}; h${r}_${w} = h; }
% elif WIDTH == 16:
        { uint h = cla_maxzs_16x2(cla_addmaxs_16x2(dg${w}, p${r}_${w}, e${r}_${w}), f${w});
          uint t = cla_add_16x2(h, vngoe);
          e${r}_${w} = cla_addmaxs_16x2(e${r}_${w}, vnext, t);
          f${w} = cla_addmaxs_16x2(f${w}, vnext, t);
          mx${w} = cla_maxs_16x2(mx${w}, h);
          dg${w} = h${r}_${w}; h${r}_${w} = h; }
% elif CELL == "ptx":
## One inline PTX block per cell: NVIDIA's OpenCL front end optimises it as one opaque statement
## (the four-column C body took it ~23 s to build); ptxas still schedules the instructions.
<% fx = CHAIN == "x" %>\
        { const int dgo = dg${w};
          dg${w} = h${r}_${w};
          asm("{\n\t.reg .s32 x, t, hh;\n\t"
            "add.s32 x, %4, %5;\n\tmax.s32 x, x, %1;\n\t"
%  if fx:
            "max.s32 x, x, 0;\n\tmax.s32 hh, x, %2;\n\tsub.s32 t, x, %6;\n\t"
            "sub.s32 %2, %2, %7;\n\tmax.s32 %2, %2, t;\n\tsub.s32 t, hh, %6;\n\t"
%  else:
            "max.s32 t, %2, 0;\n\tmax.s32 hh, x, t;\n\tsub.s32 t, hh, %6;\n\t"
            "sub.s32 %2, %2, %7;\n\tmax.s32 %2, %2, t;\n\t"
%  endif
            "sub.s32 %1, %1, %7;\n\tmax.s32 %1, %1, t;\n\tmax.s32 %3, %3, hh;\n\tmov.s32 %0, hh;\n\t}"
            : "=r"(h${r}_${w}), "+r"(e${r}_${w}), "+r"(f${w}), "+r"(mx${w})
            : "r"(dgo), "r"(p${r}_${w}), "r"(goe), "r"(ext)); }
% elif CHAIN == "x":
        { const int x = max(max(dg${w} + p${r}_${w}, e${r}_${w}), 0);
          const int h = max(x, f${w});
          f${w} = max(f${w} - ext, x - goe);
          e${r}_${w} = max(e${r}_${w} - ext, h - goe);
          mx${w} = max(mx${w}, h);
          dg${w} = h${r}_${w}; h${r}_${w} = h; }
% else:
        { int h = max(max(dg${w} + p${r}_${w}, e${r}_${w}), max(f${w}, 0));
          int t = h - goe;
          e${r}_${w} = max(e${r}_${w} - ext, t);
          f${w} = max(f${w} - ext, t);
          mx${w} = max(mx${w}, h);
          dg${w} = h${r}_${w}; h${r}_${w} = h; }
% endif
</%def>

<%def name="fetch(r0, w)">\
## profile words for rows r0 .. r0+CH-1 of word w; VW consecutive words per lane in one vector load
<% t0 = r0 // RPW %>\
        {
% for k in range(NFETCH):
<% idx = ("pc%d_%d + %du" % (w, k, (t0 // VW) * ALPHA)) if TRANSPOSED else ("(pc%d_%d + %du) / %d" % (w, k, t0, VW)) %>\
%  if VW == 4:
        const uint4 x${k}_${w} = ((__global const uint4 *)pb)[${idx}];
%  elif VW == 2:
        const uint2 x${k}_${w} = ((__global const uint2 *)pb)[${idx}];
%  else:
        const uint x${k}_${w} = pb[${idx}];
%  endif
% endfor
% for v in range(VW):
<% sx = ("." + "s%d" % v) if VW > 1 else ""; rb = r0 + v * RPW %>\
%  if WIDTH == 32:
        p${rb}_${w} = (int)x0_${w}${sx};
%  elif PROFILE == "plain" and WIDTH == 8:
        { uint lo01 = sw_ilv_lo8(x0_${w}${sx}, x1_${w}${sx}), lo23 = sw_ilv_lo8(x2_${w}${sx}, x3_${w}${sx});
          uint hi01 = sw_ilv_hi8(x0_${w}${sx}, x1_${w}${sx}), hi23 = sw_ilv_hi8(x2_${w}${sx}, x3_${w}${sx});
          p${rb}_${w} = sw_lo16(lo01, lo23); p${rb + 1}_${w} = sw_hi16(lo01, lo23);
          p${rb + 2}_${w} = sw_lo16(hi01, hi23); p${rb + 3}_${w} = sw_hi16(hi01, hi23); }
%  elif PROFILE == "plain" or WIDTH == 8:
        p${rb}_${w} = sw_lo16(x0_${w}${sx}, x1_${w}${sx}); p${rb + 1}_${w} = sw_hi16(x0_${w}${sx}, x1_${w}${sx});
%  else:
        p${rb}_${w} = x0_${w}${sx};
%  endif
% endfor
        }
</%def>

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void sw_intertask(__global const uint *restrict ires,   /* interleaved residues (sw_interleave) */
                  __global const int *restrict list,     /* S subject ids per group, -1 = empty lane */
                  __global const int *restrict glen,     /* columns of each group (longest lane) */
                  __global const long *restrict boff,    /* first column of each block (multiple of 4) */
                  const int ngroups, const int nblocks,
                  __global const uint *restrict prof,    /* query profile, ${STRIP} words per strip */
                  const int nstrips,
                  __global uint *restrict tmp,           /* strip boundary (H, F) per column */
                  __global int *restrict scores,         /* per subject; -1 = lane overflowed */
                  __global int *restrict counter,        /* dynamic schedule: next block */
                  const int bias, const int goe, const int ext, const int thresh)
{
% if PK:
    const uint vbias = cla_splat_${N}((uint)bias);
    const uint vgoe = cla_splat_${N}((uint)goe);
    const uint vext = cla_splat_${N}((uint)ext);
    const uint vnext = cla_splat_${N}((uint)(-ext));
    const uint vngoe = cla_splat_${N}((uint)(-goe));
% endif
    const int lid = get_local_id(0);
% if SCHEDULE == "dynamic":
    __local int next_block;
    for (;;) {
        if (lid == 0) next_block = atomic_inc(counter);
        barrier(CLK_LOCAL_MEM_FENCE);
        const int taken = next_block;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (taken >= nblocks) break;
        const int blk = nblocks - 1 - taken;       /* longest blocks first */
% else:
    {
        const int blk = get_group_id(0);
% endif
        const int g = blk * ${WG} + lid;
        if (g < ngroups) {
            const int ncol = glen[g];
            __global uint *tbase = tmp + (ulong)boff[blk] * ${WG * WORDS * 2} + (ulong)lid * ${WORDS * 2};
            const int ncol4 = (ncol + 3) & ~3;
            /* chunk c (columns 4c..4c+3) of this work-item's lanes: S words, one per lane, 4 codes each */
            __global const uint *rbase = ires + ((ulong)(boff[blk] >> 2) * ${WG} + lid) * ${S};
% for w in range(WORDS):
%  for k in range(L):
            const int sid${w}_${k} = list[g * ${S} + ${w * L + k}];
%  endfor
            ${T} mx${w} = 0;
% endfor
            for (int s = 0; s < nstrips; s++) {
                __global const uint *pb = prof + (ulong)s * ${STRIP};
                __global uint *tp = tbase;
                const int last = s == nstrips - 1;
% for w in range(WORDS):
                ${T} dgb${w} = 0;
%  for r in range(ROWS):
                ${T} h${r}_${w} = 0, e${r}_${w} = 0;
%  endfor
% endfor
                /* UNROLL columns per iteration: with UNROLL=4 (one chunk of residue codes) the body
                   is straight-line code for four columns, so the compiler can overlap their
                   dependency chains. The next chunk's residue codes and the next columns' strip
                   boundary are loaded while the current ones are computed. */
                const uint2 zero2 = (uint2)(0u, 0u);
% for w in range(WORDS):
%  for k in range(L):
                uint rw${w}_${k} = 0u, rn${w}_${k} = ncol4 > 0 ? rbase[${w * L + k}] : 0u;
%  endfor
%  for u in range(UNROLL):
                uint2 hfn${u}_${w} = (s > 0 && ncol4 > 0) ? ((__global const uint2 *)tp)[${u * WG * WORDS + w}] : zero2;
%  endfor
% endfor
                for (int j = 0; j < ncol4; j += ${UNROLL}) {
% if UNROLL < 4:
                    if ((j & 3) == 0) {
% endif
% for w in range(WORDS):
%  for k in range(L):
                    rw${w}_${k} = rn${w}_${k};
%  endfor
% endfor
                    if (j + 4 < ncol4) {
                        __global const uint *rp = rbase + (ulong)((j >> 2) + 1) * ${WG * S};
% for w in range(WORDS):
%  for k in range(L):
                        rn${w}_${k} = rp[${w * L + k}];
%  endfor
% endfor
                    }
% if UNROLL < 4:
                    }
                    const uint sh = (uint)(j & 3) * 8u;
% endif
% for w in range(WORDS):
%  for u in range(UNROLL):
                    const uint2 hf${u}_${w} = hfn${u}_${w};
%  endfor
% endfor
                    if (s > 0 && j + ${UNROLL} < ncol4) {
% for w in range(WORDS):
%  for u in range(UNROLL):
                        hfn${u}_${w} = ((__global const uint2 *)tp)[${(UNROLL + u) * WG * WORDS + w}];
%  endfor
% endfor
                    }
% for w in range(WORDS):
%  for u in range(UNROLL):
                    ${T} hs${u}_${w}, fs${u}_${w};
%  endfor
% endfor
% for u in range(UNROLL):
                    {   /* column j + ${u} */
%  for w in range(WORDS):
                    ${T} f${w} = (${T})hf${u}_${w}.y;
                    ${T} dg${w} = dgb${w};
                    dgb${w} = (${T})hf${u}_${w}.x;
%   for k in range(L):
                    const uint c${w}_${k} = (rw${w}_${k} >> ${("%du" % (8 * u)) if UNROLL == 4 else ("sh" if u == 0 else "(sh + %du)" % (8 * u))}) & 0xffu;
%   endfor
%   if PROFILE == "pairs" and PK:
%    for k in range(0, L, 2):
                    const uint pc${w}_${k // 2} = (c${w}_${k} | (c${w}_${k + 1} << ${ALPHA.bit_length() - 1})) * ${RW}u;
%    endfor
%   else:
%    for k in range(L):
                    const uint pc${w}_${k} = c${w}_${k}${"" if TRANSPOSED else " * %du" % RW};
%    endfor
%   endif
%  endfor
%  for r0 in range(0, ROWS, CH):
%   for w in range(WORDS):
%    for r in range(r0, r0 + CH):
                    ${T} p${r}_${w};
%    endfor
${fetch(r0, w)}
%   endfor
%   for r in range(r0, r0 + CH):
%    for w in range(WORDS):
${cell(r, w)}
%    endfor
%   endfor
%  endfor
%  for w in range(WORDS):
                    hs${u}_${w} = h${ROWS - 1}_${w}; fs${u}_${w} = f${w};
%  endfor
                    }
% endfor
                    if (!last) {
% for w in range(WORDS):
%  for u in range(UNROLL):
                        ((__global uint2 *)tp)[${u * WG * WORDS + w}] = (uint2)((uint)hs${u}_${w}, (uint)fs${u}_${w});
%  endfor
% endfor
                    }
                    tp += ${UNROLL * WG * WORDS * 2};
                }
            }
% for w in range(WORDS):
%  for k in range(L):
            if (sid${w}_${k} >= 0) {
%   if WIDTH == 8:
                const int v = (int)cla_get_8x4(mx${w}, ${k}u);
%   elif WIDTH == 16:
                const int v = cla_gets_16x2(mx${w}, ${k}u);
%   else:
                const int v = mx${w};
%   endif
                scores[sid${w}_${k}] = v >= thresh ? -1 : v;
            }
%  endfor
% endfor
        }
    }
}

/* sw_interleave: lays the subjects of each block out for sw_intertask. For block b, chunk c
   (columns 4c..4c+3), work-item t and lane l the word at ((boff[b]/4 + c) * WG + t) * S + l holds
   the lane's four residue codes (SW_SENTINEL past the subject's end or in empty lanes), so a
   wavefront reads one contiguous stretch per chunk. */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void sw_interleave(__global const uchar *restrict res, __global const int *restrict offs,
                   __global const int *restrict lens, __global const int *restrict list,
                   __global const long *restrict boff, const int ngroups, const int nblocks,
                   __global uint *restrict ires)
{
    const int blk = get_group_id(0), lid = get_local_id(0);
    if (blk >= nblocks) return;
    const int g = blk * ${WG} + lid;
    const long nch = (boff[blk + 1] - boff[blk]) >> 2;
    __global uint *out = ires + ((ulong)(boff[blk] >> 2) * ${WG} + lid) * ${S};
    for (int l = 0; l < ${S}; l++) {
        const int sid = g < ngroups ? list[g * ${S} + l] : -1;
        const int len = sid < 0 ? 0 : lens[sid];
        __global const uchar *sq = res + (sid < 0 ? 0 : offs[sid]);
        for (long c = 0; c < nch; c++) {
            uint wv = 0;
            for (int b = 0; b < 4; b++) {
                const long j = 4 * c + b;
                const uint code = j < len ? (uint)sq[j] : SW_SENTINEL;
                wv |= code << (8 * b);
            }
            out[c * ${WG * S} + l] = wv;
        }
    }
}
