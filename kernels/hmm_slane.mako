<%doc>
  S-lane HMMER3 MSV / SSV filter (after CUDAMPF++), OpenCL C 1.2.

  Parameters (clalign.hmm.params.HMM_SLANE_KERNEL): ALGO (msv|ssv), WAVE, LANE, S, H, RG, WG_WAVES,
  PROF_LOCAL and the SIMD params, and what the host derives from them (END, PAD, NL, P, L, SPW,
  W, PSTR, PWORDS, LWORDS). A 32-bit word holds NL = 32/LANE DP cells; a wavefront of
  WAVE work-items holds NL*WAVE lanes; each of its S sequences owns P = NL*WAVE/S of them,
  spread over L = max(1, WAVE/S) work-items (a lane group) with W = min(NL, P) lanes of that
  sequence per word; for S > WAVE a work-item packs SPW = S/WAVE sequences into its word.
  Each work-item keeps H words (unrolled), so a sequence's DP row has P*H striped states:
  state k (0-based) = p*H + h for lane p of the sequence's vector and word h. The profile
  table is striped the same way (LANE-bit entries).

  Data: one block of rows x C columns (C = S*WG_WAVES) per work-group; column c is one
  sequence lane; it holds sequences back to back, each followed by an END code (28) that
  writes that sequence's raw result and resets the lane; PAD (29) fills the column to the
  block's row count. Rows 28..31 of the profile are "impossible". RG = 1: the block is
  row-major bytes and the next row's residues are loaded one row ahead (their global latency
  overlaps one row of work). RG = 4/8/16: RG consecutive rows of a column are RG consecutive
  bytes, one 32/64/128-bit load per column fetches them one group ahead (the latency then
  overlaps RG rows; at small M one row is shorter than an L2 round trip), and the row loop
  runs RG rows per group, taking residues from a register by shifts. PROF_LOCAL copies
  profile rows 0..29 to local memory once per work-group (row stride padded to L * odd words
  so that lane groups reading different residue rows start on different banks).

  LANE = 8 (HMMER's bytes). MSV adds the bias with a wrapping add where HMMER saturates:
  until a sequence overflows, every previous-row value and xB is below 255 - bias (else the
  row's xE >= 255 - bias would have set the sticky overflow flag; xB <= max(base, xJ) and
  base + bias <= 254, checked by the host), so max(mpv, xB) + bias <= 254 never saturates
  and the bytes are HMMER's; after an overflow that sequence's bytes no longer matter (+inf).
  SSV is HMMER's signed saturating byte subtraction, xE an unsigned byte max.

  LANE = 16 (exact 16-bit forms, no saturation; the host stores a 16-bit profile):
  * MSV: profile c = bias - cost (in [-255, 255]); cell sv = max(mpv, xB) + c, row
    xE = max(0, max sv). Proof of equality with the bytes, by induction over rows while no
    overflow has been flagged: every stored cell is HMMER's byte where that is >= 0 ...
    precisely, stored = m + bias - cost with m = max(mpv, xB) in [0, 254 - bias] (a
    negative stored mpv is below xB >= 0, so it acts as HMMER's 0), hence HMMER's
    subus(addus(m, bias), cost) = max(stored, 0): same max against xB next row, same row
    xE, same overflow test xE >= 255 - bias, same xJ/xB; cells lie in [-255, 254] (no
    16-bit wrap). After the flag is set that sequence's cells are irrelevant (+inf).
  * SSV: profile t = -sbv (in [-127, 128]); cell v = max(mpv + t, -128) (addmaxs: one DPX
    op on sm_90), xE = signed max. HMMER clips at 127 too and takes the *unsigned* byte max.
    Since sbv = clip(rbv - bias) >= -bias (host checks), a cell rising to >= -1 - bias
    does so from <= -2 - bias, i.e. lands in [-1 - bias, -2]: until then no cell exceeds
    -2 (no upper clip, same values), and that first cell is seen by HMMER's unsigned max
    as >= 255 - bias (overflow) just as ours is >= -1 - bias. So min(xE + 256, 255) is
    HMMER's byte whenever it is below 255 - bias, and >= 255 - bias exactly when HMMER's
    is (the host's decision uses only that test then). xE is a running max, so a later
    16-bit wrap of an overflowed cell cannot lower it.

  Output per sequence (database order), raw bytes for the host to convert exactly as HMMER:
    msv: xJ | overflow << 8          ssv: unsigned max xE (atomic_max over the lane group)
</%doc>
<%include file="simd.mako"/>
<%
    # NL, P, L, SPW, W (geometry), PSTR/PWORDS/LWORDS (profile layout) and the END/PAD codes
    # come from the host (clalign.hmm.params.kernel_values), computed there once
    V = "8x4" if LANE == 8 else "16x2"
    LM = (1 << LANE) - 1
    C = S * WG_WAVES
    WG = WAVE * WG_WAVES
    MSV = ALGO == "msv"
    B16 = LANE == 16
    ONE = 0x01010101 if LANE == 8 else 0x00010001
    # lane value a fresh row / the shifted-in lane starts from
    INIT = 0x00 if MSV else (0x80 if LANE == 8 else 0xff80)
    INITW = "0x%08xu" % (INIT * ONE)
    SHFL = bool(PTX_SHFL) and L > 1
    LOCAL = (not PTX_SHFL) and L > 1
    PBITS = 32 // SPW                      # bits of one packed sequence in a word
    PT = {32: "uint", 16: "ushort", 8: "uchar"}[PBITS]
    MASKS = ["0x%08xu" % ((((1 << PBITS) - 1) << (PBITS * j)) & 0xffffffff) for j in range(SPW)]
    ONES = ["0x%08xu" % (sum(1 << (LANE * (W * j + i)) for i in range(W))) for j in range(SPW)]
    PAS = "__local" if PROF_LOCAL else "__global"
    VT = {1: "uchar", 4: "uint", 8: "uint2", 16: "uint4"}[RG]
    # W > 1 lanes per packed sequence (LANE 8, SPW 2): keep all but each sequence's lane 0
    KEEPW = "0x%08xu" % (0xffffffff & ~sum(LM << (PBITS * j) for j in range(SPW)))
    INITP = "0x%08xu" % sum(INIT << (PBITS * j) for j in range(SPW))
%>
/* hmm_slane: ALGO=${ALGO} WAVE=${WAVE} LANE=${LANE} S=${S} H=${H} RG=${RG} WG_WAVES=${WG_WAVES} PROF_LOCAL=${int(bool(PROF_LOCAL))} -> P=${P} L=${L} SPW=${SPW} W=${W} */
#define HK_END ${END}u
#define HK_PAD ${PAD}u

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
               __global const uint *restrict gprof,      /* [32][${H}][${P}] striped ${LANE}-bit entries */
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
% if PROF_LOCAL:
    __local uint lprof[${LWORDS}];
    for (uint i = lid; i < ${PWORDS}u; i += ${WG}u)
%   if LWORDS == PWORDS:
        lprof[i] = gprof[i];
%   else:
        lprof[i + i / ${H * L}u * ${PSTR - H * L}u] = gprof[i];
%   endif
    barrier(CLK_LOCAL_MEM_FENCE);
    ${PAS} const uint *prof = lprof;
% else:
    ${PAS} const uint *prof = gprof;
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
%   if not B16:
    const uint biasv = cla_splat_8x4(bias);
%   endif
    const uint basev = cla_splat_${V}(base);
    const uint tecv = cla_splat_${V}(tec);
    const uint ceilv = cla_splat_${V}(255u - bias);
    uint tjbmv = 0u;
%   for j in range(SPW):
    tjbmv |= (cur${j} < cend${j} ? (uint)seq_tjbm[id${j}] : 0u) * ${ONES[j]};
%   endfor
    uint xJv = 0u, ovfv = 0u;
    uint xBv = cla_subus_${V}(basev, tjbmv);
% else:
    uint xEv = ${INITW};
%   if B16:
    const uint floorv = ${INITW};
%   endif
% endif

% if RG == 1:
    /* residues of the next row, loaded one row ahead */
%   if SPW == 1:
    uint xn = rows ? (uint)data[col0] : HK_PAD;
%   elif SPW == 2:
    uint xn = rows ? (uint)*(__global const ushort *)(data + col0) : 0u;
%   else:
    uint xn = rows ? *(__global const uint *)(data + col0) : 0u;
%   endif
    for (uint r = 0; r < rows; ++r) {
%   if SPW == 1:
        const uint x0 = xn;
%   else:
        const uint xx = xn;
%     for j in range(SPW):
        const uint x${j} = (xx >> ${8 * j}) & 0xffu;
%     endfor
%   endif
        if (r + 1u < rows) {
            __global const uchar *rown = data + (r + 1u) * ${C}u + col0;
%   if SPW == 1:
            xn = rown[0];
%   elif SPW == 2:
            xn = *(__global const ushort *)rown;
%   else:
            xn = *(__global const uint *)rown;
%   endif
        }
% else:
    /* residue groups: ${RG} rows of a column in one ${VT} (group g of column c is element
       g*${C} + c), loaded one group ahead; byte i of the group is row g*${RG} + i */
%   for j in range(SPW):
    __global const ${VT} *colp${j} = (__global const ${VT} *)data + (col0 + ${j}u);
    ${VT} wn${j} = rows ? colp${j}[0] : (${VT})(0u);
%   endfor
    for (uint r = 0u; r < rows; ) {
%   for j in range(SPW):
        ${VT} w${j} = wn${j};
%   endfor
        if (r + ${RG}u < rows) {
%   for j in range(SPW):
            wn${j} = colp${j}[(r / ${RG}u + 1u) * ${C}u];
%   endfor
        }
        const uint rn = min(rows - r, ${RG}u);
%   for j in range(SPW):
        uint cw${j} = ${"w%d" % j if RG == 4 else "w%d.s0" % j};
%   endfor
        for (uint i = 0u; i < rn; ++i, ++r) {
%   if RG == 8:
            if (i == 4u) {
%     for j in range(SPW):
                cw${j} = w${j}.s1;
%     endfor
            }
%   elif RG == 16:
            if (i != 0u && (i & 3u) == 0u) {
%     for j in range(SPW):
                w${j} = w${j}.s1230;
                cw${j} = w${j}.s0;
%     endfor
            }
%   endif
%   for j in range(SPW):
            const uint x${j} = cw${j} & 0xffu;
            cw${j} >>= 8;
%   endfor
% endif
% if SPW == 1:
        ${PAS} const uint *pr0 = prof + x0 * ${PSTR}u + tg;
% else:
%   for j in range(SPW):
        ${PAS} const ${PT} *pr${j} = (${PAS} const ${PT} *)prof + x${j} * ${H}u;
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
% else:
(${" | ".join("((uint)pr%d[%du]%s)" % (j, h, " << %d" % (PBITS * j) if j else "") for j in range(SPW))})\
% endif
</%def>
<%def name="cell(h, mpv)">\
% if MSV and not B16:
        { uint sv = cla_subus_8x4(cla_add_8x4(cla_maxu_8x4(${mpv}, xBv), biasv), ${cost(h)});
          xE = cla_maxu_8x4(xE, sv); dp[${h}] = sv; }
% elif MSV:
        dp[${h}] = cla_add_16x2(cla_maxs_16x2(${mpv}, xBv), ${cost(h)});
% elif not B16:
        { uint sv = cla_subss_8x4(${mpv}, ${cost(h)});
          xEv = cla_maxu_8x4(xEv, sv); dp[${h}] = sv; }
% else:
        dp[${h}] = cla_addmaxs_16x2(${mpv}, ${cost(h)}, floorv);
% endif
</%def>
<%def name="acc(hs)">\
% if B16:
<%  XA = "xE" if MSV else "xEv" %>\
%   if len(hs) == 2:
        ${XA} = cla_max3s_16x2(${XA}, dp[${hs[0]}], dp[${hs[1]}]);
%   else:
        ${XA} = cla_maxs_16x2(${XA}, dp[${hs[0]}]);
%   endif
% endif
</%def>
        /* words H-1..1 depend on the old row's word h-1 of the same work-item */
% for h in range(H - 1, 0, -1):
${cell(h, "dp[%d]" % (h - 1))}\
%   if (H - 1 - h) % 2 == 1:
${acc([h + 1, h])}\
%   endif
% endfor
% if (H - 1) % 2 == 1:
${acc([1])}\
% endif
        /* word 0: the old last word shifted up by one lane (striped wrap) */
        {
% if L > 1:
%   if SHFL:
            const uint prev = hk_shfl_idx(top, lane == 0u ? 0u : lane - 1u);
%   else:
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint prev = xch[r & 1u][lid == 0u ? 0u : lid - 1u];
%   endif
            const uint mpv = (top << ${LANE}) | (tg == 0u ? ${INIT}u : (prev >> ${32 - LANE}));
% elif SPW == 1:
            const uint mpv = (top << ${LANE}) | ${INIT}u;
% elif W > 1:
            const uint mpv = ((top << ${LANE}) & ${KEEPW}) | ${INITP};
% else:
            const uint mpv = ${INITW};
% endif
${cell(0, "mpv")}\
${acc([0])}\
        }
% if MSV:
        /* row maximum of each sequence, splatted over that sequence's lanes */
%   if SPW == 1:
        uint m = cla_hmaxu_${V}(xE);
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
        const uint xEr = cla_splat_${V}(m);
%   elif W == 2:
        uint m2 = cla_maxu_8x4(xE, xE >> 8) & 0x00ff00ffu;
        const uint xEr = m2 | (m2 << 8);
%   else:
        const uint xEr = xE;
%   endif
        ovfv |= cla_cmpgeu_${V}(xEr, ceilv);
        xJv = cla_maxu_${V}(xJv, cla_subus_${V}(xEr, tecv));
        xBv = cla_subus_${V}(cla_maxu_${V}(basev, xJv), tjbmv);
% endif

        /* END: write the finished sequence's raw result, reset its lanes, load the next */
% if SPW == 1:
        if (x0 == HK_END) {
%   if MSV:
            if (tg == 0u) out[id0] = (xJv & 0xffu) | ((ovfv & 1u) << 8);
%   else:
%     if B16:
            const uint e = (uint)min(cla_hmaxs_16x2(xEv) + 256, 255);
%     else:
            const uint e = cla_hmaxu_8x4(xEv);
%     endif
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
            tjbmv = cur0 < cend0 ? cla_splat_${V}(seq_tjbm[id0]) : 0u;
            xJv = 0u; ovfv = 0u;
            xBv = cla_subus_${V}(basev, tjbmv);
%   endif
        }
% else:
        uint endm = 0u;
%   for j in range(SPW):
        if (x${j} == HK_END) {
%     if MSV:
            out[id${j}] = ((xJv >> ${PBITS * j}) & 0xffu) | (((ovfv >> ${PBITS * j}) & 1u) << 8);
%     elif B16:
            out[id${j}] = (uint)min(cla_gets_16x2(xEv, ${j}u) + 256, 255);
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
            xBv = (xBv & ~endm) | (cla_subus_${V}(basev, tjbmv) & endm);
%   else:
            xEv = (xEv & ~endm) | (${INITW} & endm);
%   endif
        }
% endif
% if RG > 1:
        }
% endif
    }
}
