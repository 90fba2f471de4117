<%doc>
  S-lane HMMER3 MSV / SSV filter (after CUDAMPF++), OpenCL C 1.2.

  Parameters (clalign.hmm.params.HMM_SLANE): ALGO (msv|ssv), WAVE, S, H, WG_WAVES, and the
  SIMD params. A wavefront of WAVE work-items holds 4*WAVE byte lanes; each of its S
  sequences owns P = 4*WAVE/S of them, spread over L = max(1, WAVE/S) work-items (a lane
  group) with W = min(4, P) bytes of that sequence per 32-bit word; for S > WAVE a work-item
  packs SPW = S/WAVE sequences into its word. Each work-item keeps H words (unrolled), so a
  sequence's DP row has P*H striped states: state k (0-based) = p*H + h for byte lane p of
  the sequence's vector and word h. The profile table is striped the same way.

  Data: one block of rows x C columns (C = S*WG_WAVES) per work-group; column c is one
  sequence lane; it holds sequences back to back, each followed by an END code (28) that
  writes that sequence's raw result and resets the lane; PAD (29) fills the column to the
  block's row count. Rows 28..31 of the profile are "impossible" (cost 255 / signed 127).

  MSV adds the bias with a wrapping add where HMMER saturates: until a sequence overflows,
  every previous-row value and xB is below 255 - bias (else the row's xE >= 255 - bias would
  have set the sticky overflow flag), so max(mpv, xB) + bias <= 254 never saturates and the
  bytes are HMMER's; after an overflow that sequence's bytes no longer matter (+inf).

  Output per sequence (database order), raw bytes for the host to convert exactly as HMMER:
    msv: xJ | overflow << 8          ssv: unsigned max xE (atomic_max over the lane group)
</%doc>
<%include file="simd.mako"/>
<%
    P = 4 * WAVE // S
    L = max(1, WAVE // S)
    SPW = max(1, S // WAVE)
    W = min(4, P)
    C = S * WG_WAVES
    WG = WAVE * WG_WAVES
    MSV = ALGO == "msv"
    INIT = 0x00 if MSV else 0x80
    INITW = "0x%08xu" % (INIT * 0x01010101)
    SHFL = bool(PTX_SHFL) and L > 1
    LOCAL = (not PTX_SHFL) and L > 1
    # byte mask of packed sequence j inside a word
    if SPW == 1:
        MASKS = ["0xffffffffu"]
    elif SPW == 2:
        MASKS = ["0x0000ffffu", "0xffff0000u"]
    else:
        MASKS = ["0x000000ffu", "0x0000ff00u", "0x00ff0000u", "0xff000000u"]
    ONES = {1: ["0x01010101u"], 2: ["0x00000101u", "0x01010000u"],
            4: ["0x00000001u", "0x00000100u", "0x00010000u", "0x01000000u"]}[SPW]
%>
/* hmm_slane: ALGO=${ALGO} WAVE=${WAVE} S=${S} H=${H} WG_WAVES=${WG_WAVES} -> P=${P} L=${L} SPW=${SPW} W=${W} */
#define HK_END 28u
#define HK_PAD 29u

% if SHFL:
inline uint hk_shfl_idx(uint v, uint src)
{
    uint d;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(d) : "r"(v), "r"(src));
    return d;
}
%   if MSV:
inline uint hk_shfl_bfly(uint v, uint m)
{
    uint d;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(d) : "r"(v), "r"(m));
    return d;
}
%   endif
% endif

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void hmm_slane(__global const uchar *restrict blocks,    /* all blocks, rows x ${C} bytes each   */
               __global const uint *restrict blk_off,    /* byte offset of each block (4-aligned) */
               __global const uint *restrict blk_rows,   /* rows of each block                    */
               __global const uint *restrict col_start,  /* nblocks*${C}+1 starts into ids        */
               __global const uint *restrict ids,        /* sequence index per column slot        */
               __global const uchar *restrict seq_tjbm,  /* (tjb_b + tbm_b) & 255 per sequence     */
               __global const uchar *restrict prof,      /* [32][${H}][${P}] striped match bytes  */
               const uint base, const uint bias, const uint tec,
               __global uint *restrict out)
{
    const uint lid = get_local_id(0);
    const uint blk = get_group_id(0);
    const uint wave = lid / ${WAVE}u;
    const uint lane = lid % ${WAVE}u;
% if SPW == 1:
    const uint tg = lane % ${L}u;                       /* position inside the lane group */
    const uint col0 = wave * ${S}u + lane / ${L}u;
% else:
    const uint col0 = wave * ${S}u + lane * ${SPW}u;
% endif
    const uint rows = blk_rows[blk];
    __global const uchar *data = blocks + blk_off[blk];
    const uint cbase = blk * ${C}u + col0;
% if LOCAL:
    __local uint xch[2][${WG}];
%   if MSV:
    __local uint red[${WG}];
%   endif
% endif

    /* per packed sequence: current slot, end of the column, database index */
% for j in range(SPW):
    uint cur${j} = col_start[cbase + ${j}u];
    const uint cend${j} = col_start[cbase + ${j + 1}u];
    uint id${j} = cur${j} < cend${j} ? ids[cur${j}] : 0u;
% endfor

    uint dp[${H}];
% for h in range(H):
    dp[${h}] = ${INITW};
% endfor
% if MSV:
    const uint biasv = cla_splat_8x4(bias);
    const uint basev = cla_splat_8x4(base);
    const uint tecv = cla_splat_8x4(tec);
    const uint ceilv = cla_splat_8x4(255u - bias);
    uint tjbmv = 0u;
%   for j in range(SPW):
    tjbmv |= (cur${j} < cend${j} ? (uint)seq_tjbm[id${j}] : 0u) * ${ONES[j]};
%   endfor
    uint xJv = 0u, ovfv = 0u;
    uint xBv = cla_subus_8x4(basev, tjbmv);
% else:
    uint xEv = ${INITW};
% endif

    for (uint r = 0; r < rows; ++r) {
        __global const uchar *rowp = data + r * ${C}u + col0;
% if SPW == 1:
        const uint x0 = rowp[0];
        __global const uint *pr0 = (__global const uint *)prof + x0 * ${H * L}u + tg;
% elif SPW == 2:
        const uint xx = *(__global const ushort *)rowp;
        const uint x0 = xx & 0xffu, x1 = xx >> 8;
        __global const ushort *pr0 = (__global const ushort *)prof + x0 * ${H}u;
        __global const ushort *pr1 = (__global const ushort *)prof + x1 * ${H}u;
% else:
        const uint xx = *(__global const uint *)rowp;
%   for j in range(4):
        const uint x${j} = (xx >> ${8 * j}) & 0xffu;
        __global const uchar *pr${j} = prof + x${j} * ${H}u;
%   endfor
% endif
        const uint top = dp[${H - 1}];          /* old row's last word, before it is overwritten */
% if LOCAL:
        xch[r & 1u][lid] = top;
% endif
% if MSV:
        uint xE = 0u;
% endif
<%def name="cost(h)">\
% if SPW == 1:
pr0[${h * L}u]\
% elif SPW == 2:
((uint)pr0[${h}u] | ((uint)pr1[${h}u] << 16))\
% else:
((uint)pr0[${h}u] | ((uint)pr1[${h}u] << 8) | ((uint)pr2[${h}u] << 16) | ((uint)pr3[${h}u] << 24))\
% endif
</%def>
<%def name="cell(h, mpv)">\
% if MSV:
        { uint sv = cla_subus_8x4(cla_add_8x4(cla_maxu_8x4(${mpv}, xBv), biasv), ${cost(h)});
          xE = cla_maxu_8x4(xE, sv); dp[${h}] = sv; }
% else:
        { uint sv = cla_subss_8x4(${mpv}, ${cost(h)});
          xEv = cla_maxu_8x4(xEv, sv); dp[${h}] = sv; }
% endif
</%def>
        /* words H-1..1 depend on the old row's word h-1 of the same work-item */
% for h in range(H - 1, 0, -1):
${cell(h, "dp[%d]" % (h - 1))}
% endfor
        /* word 0: the old last word shifted up by one byte lane (striped wrap) */
        {
% if L > 1:
%   if SHFL:
            const uint prev = hk_shfl_idx(top, lane == 0u ? 0u : lane - 1u);
%   else:
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint prev = xch[r & 1u][lid == 0u ? 0u : lid - 1u];
%   endif
            const uint mpv = (top << 8) | (tg == 0u ? ${INIT}u : (prev >> 24));
% elif SPW == 1:
            const uint mpv = (top << 8) | ${INIT}u;
% elif SPW == 2:
            const uint mpv = ((top << 8) & 0xff00ff00u) | ${"0x%08xu" % (INIT * 0x00010001)};
% else:
            const uint mpv = ${INITW};
% endif
${cell(0, "mpv")}
        }
% if MSV:
        /* row maximum of each sequence, splatted over that sequence's bytes */
%   if SPW == 1:
        uint m = cla_hmaxu_8x4(xE);
%     if SHFL:
%       for o in [1 << i for i in range(L.bit_length() - 1)]:
        m = max(m, hk_shfl_bfly(m, ${o}u));
%       endfor
%     elif LOCAL:
        red[lid] = m;
        barrier(CLK_LOCAL_MEM_FENCE);
        {
            const uint g0 = lid - tg;
%       for t in range(L):
            m = max(m, red[g0 + ${t}u]);
%       endfor
        }
%     endif
        const uint xEr = cla_splat_8x4(m);
%   elif SPW == 2:
        uint m2 = cla_maxu_8x4(xE, xE >> 8) & 0x00ff00ffu;
        const uint xEr = m2 | (m2 << 8);
%   else:
        const uint xEr = xE;
%   endif
        ovfv |= cla_cmpgeu_8x4(xEr, ceilv);
        xJv = cla_maxu_8x4(xJv, cla_subus_8x4(xEr, tecv));
        xBv = cla_subus_8x4(cla_maxu_8x4(basev, xJv), tjbmv);
% endif

        /* END: write the finished sequence's raw result, reset its lanes, load the next */
% if SPW == 1:
        if (x0 == HK_END) {
%   if MSV:
            if (tg == 0u) out[id0] = (xJv & 0xffu) | ((ovfv & 1u) << 8);
%   else:
            const uint e = cla_hmaxu_8x4(xEv);
%     if L > 1:
            atomic_max(out + id0, e);
%     else:
            out[id0] = e;
%     endif
            xEv = ${INITW};
%   endif
%   for h in range(H):
            dp[${h}] = ${INITW};
%   endfor
            cur0 += 1u;
            id0 = cur0 < cend0 ? ids[cur0] : 0u;
%   if MSV:
            tjbmv = cur0 < cend0 ? cla_splat_8x4(seq_tjbm[id0]) : 0u;
            xJv = 0u; ovfv = 0u;
            xBv = cla_subus_8x4(basev, tjbmv);
%   endif
        }
% else:
        uint endm = 0u;
%   for j in range(SPW):
        if (x${j} == HK_END) {
%     if MSV:
            out[id${j}] = ((xJv >> ${8 * W * j}) & 0xffu) | (((ovfv >> ${8 * W * j}) & 1u) << 8);
%     elif W == 2:
            out[id${j}] = max((xEv >> ${16 * j}) & 0xffu, (xEv >> ${16 * j + 8}) & 0xffu);
%     else:
            out[id${j}] = (xEv >> ${8 * j}) & 0xffu;
%     endif
            endm |= ${MASKS[j]};
            cur${j} += 1u;
            id${j} = cur${j} < cend${j} ? ids[cur${j}] : 0u;
%     if MSV:
            tjbmv = (tjbmv & ~${MASKS[j]}) | ((cur${j} < cend${j} ? (uint)seq_tjbm[id${j}] : 0u) * ${ONES[j]});
%     endif
        }
%   endfor
        if (endm) {
%   for h in range(H):
            dp[${h}] = (dp[${h}] & ~endm) | (${INITW} & endm);
%   endfor
%   if MSV:
            xJv &= ~endm; ovfv &= ~endm;
            xBv = (xBv & ~endm) | (cla_subus_8x4(basev, tjbmv) & endm);
%   else:
            xEv = (xEv & ~endm) | (${INITW} & endm);
%   endif
        }
% endif
    }
}
