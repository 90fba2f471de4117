<%doc>
Smith-Waterman-Gotoh intra-task kernel (after Hains et al., "Intra-task parallelism for
Smith-Waterman on GPUs", and CUDASW++3.0's long-subject path): one work-group aligns the query
against one long subject.

Parameters (defined once in clalign/sw/params.py, INTRA_PARAMS):
  TH     4..32   tile height: query rows per work-item, in registers (multiple of 4)
  TW     1..16   tile width: subject columns per wavefront step
  WG             work-items per work-group
  PBITS  8|16|32 bits per query-profile score (host: the narrowest the matrix fits), packed
                 32 / PBITS rows per word, so a work-item reads TH * PBITS / 32 words per column
                 (Hains et al.: four 8-bit scores per read)
  PROF   global | local   where the profile is read: global memory (cached), or a private
                 slice per work-item in local memory, copied once per strip (no barrier: only
                 the work-item that copies it reads it)
  AHEAD  bool    profile words of the next tile loaded one step ahead (twice the profile
                 registers; else loaded at the start of the step, codes still one step ahead)
  ALPHA, SENTINEL  host constants (profile rows per code, padding code)
Gap convention: a gap of k residues scores -(open + k*extend); GOE = open + extend.

The DP matrix (query rows i, subject columns j) is cut into strips of WG x TH rows; in a strip,
work-item t owns rows t*TH .. t*TH+TH-1 and computes TH x TW tiles left to right, one tile per
step, one step behind work-item t-1 (an anti-diagonal wavefront of tiles). The bottom border of
a tile (H and F of its last row, TW columns) goes to work-item t+1 through local memory (double
buffered: one barrier per step; stored column-major, (H, F) pairs of consecutive work-items
side by side, so the accesses of a warp hit distinct banks); the last work-item's border goes to global memory, where
work-item 0 reads it for the next strip. Work-item 0 starts the next strip P = max(tiles, WG)
steps after the current one, so the strips follow each other without draining the pipeline, and
it reads a border column at least one step after it was written (P >= WG). Work-items whose rows
all lie past the query (the last strip's padding) skip their steps, so whole idle warps leave
the issue slots to other work-groups. The subject codes of a tile are loaded two steps ahead and
its profile words one step ahead (AHEAD; else codes one step ahead), so the dependent loads
overlap the cells.
Exactness: H >= 0 and E, F start at 0 (never better than a real gap chain: they only matter when
positive); padding rows and columns score smin <= 0 and never raise the maximum. A maximum at or
above `thresh` (INT32_MAX - smax) means a 32-bit value may have wrapped: written as -1, and the
host reports it instead of returning a wrong score.
</%doc>
<%
assert TH % 4 == 0
PER = 32 // PBITS                   # profile rows per word
NW = TH // PER                      # profile words per column per work-item
VN = 4 if NW % 4 == 0 else (2 if NW % 2 == 0 else 1)
VT = "int%d" % VN if VN > 1 else "int"
NV = NW // VN                       # vector loads per column
NC = SENTINEL + 1                   # codes a local slice holds (residues and the padding code)
LOCAL = PROF == "local"

def score(c, r):
    w = r // PER
    word = "p%d_%d" % (c, w // VN) + (".s%d" % (w % VN) if VN > 1 else "")
    if PBITS == 8:
        return "(int)as_char4(%s).s%d" % (word, r % 4)
    if PBITS == 16:
        return "(int)as_short2(%s).s%d" % (word, r % 2)
    return word
%>
<%def name="codes(j, dst)">\
% for c in range(TW):
                { const int jj = ${j} + ${c}; ${dst}${c} = jj < n ? (int)sq[jj] : ${SENTINEL}; }
% endfor
</%def>
<%def name="fetch(src, dst)">\
## profile words of the TW columns whose codes are ${src}0.. (the work-item's TH rows)
% for c in range(TW):
%  for v in range(NV):
% if LOCAL:
                ${dst}${c}_${v} = lp[(${src}${c} * ${WG} + t) * ${NV} + ${v}];
% else:
                ${dst}${c}_${v} = pr[${src}${c} * mv + ${v}];
% endif
%  endfor
% endfor
</%def>
/* sw_intratask: TH=${TH} TW=${TW} WG=${WG} PBITS=${PBITS} PROF=${PROF} AHEAD=${int(bool(AHEAD))} */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void sw_intratask(__global const uchar *restrict res,   /* batch residues */
                  __global const int *restrict offs,    /* per subject: first residue */
                  __global const int *restrict lens,    /* per subject: length */
                  __global const int *restrict list,    /* subject of each work-group */
                  const int npairs,
                  __global const ${VT} *restrict prof,  /* [code][mpad rows] packed ${PBITS}-bit scores */
                  const int m,                          /* query rows */
                  const int mpad,                       /* query rows padded to a multiple of WG*TH */
                  __global int2 *restrict border,       /* per pair: (H, F) of a strip's last row */
                  __global const long *restrict bstart, /* per pair: first border column */
                  __global int *restrict out,           /* per pair: score, -1 = beyond 32 bits */
                  const int goe, const int ext, const int thresh)
{
    __local int2 lx[${2 * TW * WG}];     /* [step parity][column][work-item] (H, F): conflict-free banks */
    __local int red[${WG}];
% if LOCAL:
    __local ${VT} lp[${NC * WG * NV}];   /* [code][work-item][NV]: each work-item's own slice */
% endif
    const int t = get_local_id(0);
    const int g = get_group_id(0);
    if (g >= npairs) return;
    const int sid = list[g];
    const int n = lens[sid];
    __global const uchar *sq = res + offs[sid];
    __global int2 *bd = border + bstart[g];
    const int nt = (n + ${TW - 1}) / ${TW};
    const int nstrips = mpad / ${WG * TH};
    const int mv = mpad / ${PER * VN};      /* profile vectors per code */
    const int P = max(nt, ${WG});
    const int nsteps = nstrips * P + ${WG - 1};
    const int ngoe = -goe, next = -ext;     /* added, not subtracted: add + max fuse on sm_90 (DPX) */
    int mx = 0, hdg = 0;
% for r in range(TH):
    int h${r} = 0, e${r} = 0;
% endfor
    int jt = -t, s = 0;
% if not LOCAL:
    __global const ${VT} *pr = prof;
% endif
    /* p: profile words of the current tile; cn: codes of the next tile */
% for c in range(TW):
    int cn${c} = ${SENTINEL};
%  for v in range(NV):
    ${VT} p${c}_${v} = (${VT})(0);
%  endfor
% endfor
    for (int k = 0; k < nsteps; k++) {
        if (jt >= 0 && jt < nt && s < nstrips && (s * ${WG} + t) * ${TH} < m) {
            const int j0 = jt * ${TW};
            if (jt == 0) {
                hdg = 0;
% for r in range(TH):
                h${r} = 0; e${r} = 0;
% endfor
% if LOCAL:
                {   /* this strip's slice of the profile, for this work-item only */
                    __global const ${VT} *gp = prof + (s * ${WG} + t) * ${NV};
                    for (int a = 0; a < ${NC}; a++) {
%  for v in range(NV):
                        lp[(a * ${WG} + t) * ${NV} + ${v}] = gp[a * mv + ${v}];
%  endfor
                    }
                }
% else:
                pr = prof + (s * ${WG} + t) * ${NV};
% endif
% if AHEAD:
% for c in range(TW):
                int c0_${c};
% endfor
${codes("j0", "c0_")}
${fetch("c0_", "p")}
${codes("j0 + %d" % TW, "cn")}
% else:
${codes("j0", "cn")}
% endif
            }
% for c in range(TW):
            int hu${c}, fu${c};
% endfor
            if (t == 0) {
                if (s == 0) {
% for c in range(TW):
                    hu${c} = 0; fu${c} = 0;
% endfor
                } else {
% for c in range(TW):
                    { const int2 v = bd[j0 + ${c}]; hu${c} = v.x; fu${c} = v.y; }
% endfor
                }
            } else {
                const int rb = ((k - 1) & 1) * ${WG * TW} + t - 1;
% for c in range(TW):
                { const int2 v = lx[rb + ${c * WG}]; hu${c} = v.x; fu${c} = v.y; }
% endfor
            }
% if AHEAD:
% for c in range(TW):
%  for v in range(NV):
            ${VT} q${c}_${v};
%  endfor
% endfor
${fetch("cn", "q")}
${codes("j0 + %d" % (2 * TW), "cn")}
% else:
${fetch("cn", "p")}
${codes("j0 + %d" % TW, "cn")}
% endif
% for c in range(TW):
            int ho${c}, fo${c};
            {   /* column j0 + ${c} */
                int dg = ${"hdg" if c == 0 else "hu%d" % (c - 1)};
                int f = fu${c};
%  for r in range(TH):
                { const int h = max(max(dg + ${score(c, r)}, e${r}), max(f, 0));
                  const int tt = h + ngoe;
                  e${r} = max(e${r} + next, tt);
                  f = max(f + next, tt);
                  dg = h${r}; h${r} = h; }
%  endfor
%  for r in range(0, TH, 2):
                mx = max(mx, max(h${r}, h${r + 1}));
%  endfor
                ho${c} = h${TH - 1}; fo${c} = f;
            }
% endfor
% if AHEAD:
% for c in range(TW):
%  for v in range(NV):
            p${c}_${v} = q${c}_${v};
%  endfor
% endfor
% endif
            hdg = hu${TW - 1};
            if (t == ${WG - 1}) {
                if (s + 1 < nstrips) {
% for c in range(TW):
                    bd[j0 + ${c}] = (int2)(ho${c}, fo${c});
% endfor
                }
            } else {
                const int wb = (k & 1) * ${WG * TW} + t;
% for c in range(TW):
                lx[wb + ${c * WG}] = (int2)(ho${c}, fo${c});
% endfor
            }
        }
        if (++jt == P) { jt = 0; s++; }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    red[t] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        int mm = 0;
        for (int i = 0; i < ${WG}; i++) mm = max(mm, red[i]);
        out[g] = mm >= thresh ? -1 : mm;
    }
}
