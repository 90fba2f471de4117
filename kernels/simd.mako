<%doc>
  Packed-SIMD library on 32-bit words, included by every kernel template:
      <%include file="simd.mako"/>

  Lanes are little-endian: lane i of an 8x4 word is bits [8i, 8i+8), of a 16x2 word bits
  [16i, 16i+16). Every function is `inline`, OpenCL C 1.2, no extensions, and named
  cla_<op>_8x4 / cla_<op>_16x2. Semantics (per lane; "s" = two's-complement signed lanes):
    add, sub          wrapping                 addus, subus   unsigned saturating
    addss, subss      signed saturating        maxu minu maxs mins, max3u max3s
    maxzs(a,b)        max(a,b,0) signed        max3zs(a,b,c)  max(a,b,c,0) signed
    addmaxs(a,b,c)    max(a+b wrapping, c) signed
    cmpgtu cmpgts cmpgeu cmpeq   all-ones lane where true, else 0
    get(w,i) -> uint  gets(w,i) -> int (sign-extended)  set(w,i,v)  splat(v)
    hmaxu(w) -> uint  hmaxs(w) -> int  (horizontal max over the lanes)
  The numpy reference of every function is clalign.simd.reference.

  Template parameters (clalign.runtime.params.SIMD_PARAMS):
    SIMD       "swar": portable bit tricks on uint (any OpenCL device);
               "ptx":  NVIDIA inline PTX where it measured faster than SWAR on an H100
                       (docs/perf/simd.md): 16x2 max/min via vmax2/vmin2. Every other op,
                       and all 8x4 ops, stay SWAR: the video-SIMD instructions (vadd4.sat,
                       vmax4, vset4 ...) are emulated by ptxas on the H100 and ran 1.3-5x
                       slower than the SWAR code here (Kepler, where they are native, was
                       not measured).
    PTX_S16X2  with SIMD=="ptx" on sm_90+: 16x2 ops use add.u16x2, max/min.[su]16x2 and
               max.relu.s16x2 (one instruction each); addmaxs is add.s16x2 then max.s16x2,
               which costs one instruction on the H100 (ptxas fuses it, DPX); addus, subus,
               cmpgeu and cmpgts are built from min/max.[su]16x2 (cmpgtu stays SWAR:
               faster there).
    PTX_SHFL   not used here.
  SWAR idea: a lane's top bit is kept out of the 32-bit add/sub (mask it off, or force it
  on for sub) so no carry or borrow crosses into the next lane; the top bit is then fixed
  up with xor. Per-lane conditions are computed in the lane's top bit and widened to a
  full-lane mask with (m - (m >> (w-1))) | m.
</%doc>
#ifndef CLA_SIMD_H
#define CLA_SIMD_H
<%
    _ptx = SIMD == "ptx"
    _s16 = _ptx and PTX_S16X2
    _widths = (
        dict(N="8x4", W=8, NL=4, H="0x80808080u", L="0x7f7f7f7fu", ONE="0x01010101u", LM="0xffu", V="4"),
        dict(N="16x2", W=16, NL=2, H="0x80008000u", L="0x7fff7fffu", ONE="0x00010001u", LM="0xffffu", V="2"),
    )
%>
/* cla_simd variant: SIMD=${SIMD} PTX_S16X2=${int(bool(PTX_S16X2))} */
% for w in _widths:
<%
    N = w["N"]; W = w["W"]; H = w["H"]; L = w["L"]; LM = w["LM"]; V = w["V"]; SH = W - 1
    s16 = _s16 and W == 16              # sm_90 native 16x2 integer instructions
    vid = _ptx and W == 16 and not s16  # video-SIMD vmax2/vmin2 (faster than SWAR for 16x2)
%>
/* ---------------- ${N}: ${w["NL"]} lanes of ${W} bits ---------------- */

/* Widen lane top bits (m holds only top bits) to all-ones lanes. */
inline uint cla_msbmask_${N}(uint m) { return (m - (m >> ${SH})) | m; }

/* Top bit of each lane set where a >= b (unsigned), other bits zero. */
inline uint cla_geu_msb_${N}(uint a, uint b)
{
    uint t = (a | ${H}) - (b & ${L});        /* low bits compare, no borrow between lanes */
    return ((a & ~b) | (~(a ^ b) & t)) & ${H};
}

inline uint cla_add_${N}(uint a, uint b)
{
% if s16:
    uint d; asm("add.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
% else:
    return ((a & ${L}) + (b & ${L})) ^ ((a ^ b) & ${H});
% endif
}

inline uint cla_sub_${N}(uint a, uint b)
{
    return ((a | ${H}) - (b & ${L})) ^ ((a ^ ~b) & ${H});
}

<%def name="minmax(op, pinstr, vinstr, swar)">
inline uint cla_${op}_${N}(uint a, uint b)
{
% if s16:
    uint d; asm("${pinstr} %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
% elif vid:
    uint d; asm("${vinstr} %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0u)); return d;
% else:
    ${swar}
% endif
}
</%def>
${minmax("maxu", "max.u16x2", "vmax2.u32.u32.u32", "return b ^ ((a ^ b) & cla_msbmask_%s(cla_geu_msb_%s(a, b)));" % (N, N))}
${minmax("minu", "min.u16x2", "vmin2.u32.u32.u32", "return a ^ ((a ^ b) & cla_msbmask_%s(cla_geu_msb_%s(a, b)));" % (N, N))}
${minmax("maxs", "max.s16x2", "vmax2.s32.s32.s32", "return b ^ ((a ^ b) & cla_msbmask_%s(cla_geu_msb_%s(a ^ %s, b ^ %s)));" % (N, N, H, H))}
${minmax("mins", "min.s16x2", "vmin2.s32.s32.s32", "return a ^ ((a ^ b) & cla_msbmask_%s(cla_geu_msb_%s(a ^ %s, b ^ %s)));" % (N, N, H, H))}

inline uint cla_cmpeq_${N}(uint a, uint b)
{
    uint x = a ^ b;
    uint nz = (((x & ${L}) + ${L}) | x) & ${H};   /* top bit set where the lane is non-zero */
    return ~cla_msbmask_${N}(nz);
}

inline uint cla_cmpgeu_${N}(uint a, uint b)
{
% if s16:
    return cla_cmpeq_${N}(cla_maxu_${N}(a, b), a);
% else:
    return cla_msbmask_${N}(cla_geu_msb_${N}(a, b));
% endif
}

inline uint cla_cmpgtu_${N}(uint a, uint b)
{
    /* SWAR also with PTX_S16X2: ~cmpeq(max.u16x2(a, b), b) measured slower on H100 */
    return cla_msbmask_${N}(cla_geu_msb_${N}(b, a) ^ ${H});
}

inline uint cla_cmpgts_${N}(uint a, uint b)
{
% if s16:
    return ~cla_cmpeq_${N}(cla_maxs_${N}(a, b), b);
% else:
    return cla_msbmask_${N}(cla_geu_msb_${N}(b ^ ${H}, a ^ ${H}) ^ ${H});
% endif
}

inline uint cla_addus_${N}(uint a, uint b)
{
% if s16:
    return cla_add_${N}(cla_minu_${N}(a, ~b), b);   /* min(a, max - b) + b never wraps */
% else:
    uint s = ((a & ${L}) + (b & ${L})) ^ ((a ^ b) & ${H});
    uint carry = ((a & b) | ((a | b) & ~s)) & ${H};
    return s | cla_msbmask_${N}(carry);
% endif
}

inline uint cla_subus_${N}(uint a, uint b)
{
% if s16:
    return cla_sub_${N}(cla_maxu_${N}(a, b), b);    /* max(a, b) - b never wraps */
% else:
    uint d = ((a | ${H}) - (b & ${L})) ^ ((a ^ ~b) & ${H});
    return d & ~cla_msbmask_${N}(cla_geu_msb_${N}(a, b) ^ ${H});
% endif
}

inline uint cla_addss_${N}(uint a, uint b)
{
    uint s = ((a & ${L}) + (b & ${L})) ^ ((a ^ b) & ${H});
    uint m = cla_msbmask_${N}(~(a ^ b) & (a ^ s) & ${H});   /* signed overflow lanes */
    uint sat = ((a & ${H}) >> ${SH}) + ${L};                 /* 0x7f.. or 0x80.. by sign of a */
    return s ^ ((s ^ sat) & m);
}

inline uint cla_subss_${N}(uint a, uint b)
{
    uint s = ((a | ${H}) - (b & ${L})) ^ ((a ^ ~b) & ${H});
    uint m = cla_msbmask_${N}((a ^ b) & (a ^ s) & ${H});
    uint sat = ((a & ${H}) >> ${SH}) + ${L};
    return s ^ ((s ^ sat) & m);
}

inline uint cla_max3u_${N}(uint a, uint b, uint c) { return cla_maxu_${N}(cla_maxu_${N}(a, b), c); }
inline uint cla_max3s_${N}(uint a, uint b, uint c) { return cla_maxs_${N}(cla_maxs_${N}(a, b), c); }

inline uint cla_maxzs_${N}(uint a, uint b)
{
% if s16:
    uint d; asm("max.relu.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d;
% else:
    uint m = cla_maxs_${N}(a, b);
    return m & ~cla_msbmask_${N}(m & ${H});   /* negative lanes -> 0 */
% endif
}

inline uint cla_max3zs_${N}(uint a, uint b, uint c) { return cla_maxzs_${N}(cla_maxs_${N}(a, b), c); }

inline uint cla_addmaxs_${N}(uint a, uint b, uint c)
{
% if s16:
    /* add.s16x2 then max.s16x2: timed as one instruction on H100 (DPX fusion) */
    uint s, d;
    asm("add.s16x2 %0, %1, %2;" : "=r"(s) : "r"(a), "r"(b));
    asm("max.s16x2 %0, %1, %2;" : "=r"(d) : "r"(s), "r"(c));
    return d;
% else:
    return cla_maxs_${N}(cla_add_${N}(a, b), c);
% endif
}

inline uint cla_get_${N}(uint w, uint i) { return (w >> (${W}u * i)) & ${LM}; }
inline int cla_gets_${N}(uint w, uint i) { return (int)(((w >> (${W}u * i)) & ${LM}) ^ ${1 << SH}u) - ${1 << SH}; }
inline uint cla_set_${N}(uint w, uint i, uint v)
{
    uint sh = ${W}u * i;
    return (w & ~(${LM} << sh)) | ((v & ${LM}) << sh);
}
inline uint cla_splat_${N}(uint v) { return (v & ${LM}) * ${w["ONE"]}; }

inline uint cla_hmaxu_${N}(uint w)
{
    uint m = cla_maxu_${N}(w, w >> 16);
% if W == 8:
    m = cla_maxu_${N}(m, m >> 8);
% endif
    return m & ${LM};
}

inline int cla_hmaxs_${N}(uint w)
{
    uint m = cla_maxs_${N}(w, w >> 16);
% if W == 8:
    m = cla_maxs_${N}(m, m >> 8);
% endif
    return cla_gets_${N}(m, 0u);
}
% endfor

#endif /* CLA_SIMD_H */
