<%doc>
Smith-Waterman-Gotoh intra-task kernel (after Hains et al., "Intra-task parallelism for
Smith-Waterman on GPUs", and CUDASW++3.0's long-subject path): one work-group aligns the query
against one long subject.

Parameters (defined once in clalign/sw/params.py, INTRA_PARAMS):
  TH     4..32   tile height: query rows per work-item, in registers (multiple of 4)
  TW     1..16   tile width: subject columns per wavefront step
  WG             work-items per work-group
  ALPHA, SENTINEL  host constants (profile rows per code, padding code)
Gap convention: a gap of k residues scores -(open + k*extend); GOE = open + extend.

The DP matrix (query rows i, subject columns j) is cut into strips of WG x TH rows; in a strip,
work-item t owns rows t*TH .. t*TH+TH-1 and computes TH x TW tiles left to right, one tile per
step, one step behind work-item t-1 (an anti-diagonal wavefront of tiles). The bottom border of
a tile (H and F of its last row, TW columns) goes to work-item t+1 through local memory (double
buffered: one barrier per step); the last work-item's border goes to global memory, where
work-item 0 reads it for the next strip. Work-item 0 starts the next strip P = max(tiles, WG)
steps after the current one, so the strips follow each other without draining the pipeline, and
it reads a border column at least one step after it was written (P >= WG).
Exactness: H >= 0 and E, F start at 0 (never better than a real gap chain: they only matter when
positive); padding rows and columns score smin <= 0 and never raise the maximum. A maximum at or
above `thresh` (INT32_MAX - smax) means a 32-bit value may have wrapped: written as -1, and the
host reports it instead of returning a wrong score.
</%doc>
<%
assert TH % 4 == 0
NV = TH // 4
%>
<%def name="load(j, dst)">\
## profile vectors of the TW columns starting at ${j} (sentinel past the subject's end)
% for c in range(TW):
                { const int jj = ${j} + ${c};
                  __global const int *pc = pr + (jj < n ? (int)sq[jj] : ${SENTINEL}) * mpad;
%  for v in range(NV):
                  ${dst}${c}_${v} = vload4(${v}, pc);
%  endfor
                }
% endfor
</%def>
/* sw_intratask: TH=${TH} TW=${TW} WG=${WG} */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void sw_intratask(__global const uchar *restrict res,   /* batch residues */
                  __global const int *restrict offs,    /* per subject: first residue */
                  __global const int *restrict lens,    /* per subject: length */
                  __global const int *restrict list,    /* subject of each work-group */
                  const int npairs,
                  __global const int *restrict prof,    /* [code * mpad + row] score */
                  const int mpad,                       /* query rows padded to a multiple of WG*TH */
                  __global int2 *restrict border,       /* per pair: (H, F) of a strip's last row */
                  __global const long *restrict bstart, /* per pair: first border column */
                  __global int *restrict out,           /* per pair: score, -1 = beyond 32 bits */
                  const int goe, const int ext, const int thresh)
{
    __local int lh[${2 * WG * TW}], lf[${2 * WG * TW}];
    __local int red[${WG}];
    const int t = get_local_id(0);
    const int g = get_group_id(0);
    if (g >= npairs) return;
    const int sid = list[g];
    const int n = lens[sid];
    __global const uchar *sq = res + offs[sid];
    __global int2 *bd = border + bstart[g];
    const int nt = (n + ${TW - 1}) / ${TW};
    const int nstrips = mpad / ${WG * TH};
    const int P = max(nt, ${WG});
    const int nsteps = nstrips * P + ${WG - 1};
    int mx = 0, hdg = 0;
% for r in range(TH):
    int h${r} = 0, e${r} = 0;
% endfor
    int jt = -t, s = 0;
    /* profile scores of the current tile (column c, rows 4v..4v+3: p{c}_{v}), loaded one step
       ahead so that the dependent loads (residue code -> profile row) overlap the cells */
% for c in range(TW):
%  for v in range(NV):
    int4 p${c}_${v} = (int4)(0);
%  endfor
% endfor
    for (int k = 0; k < nsteps; k++) {
        if (jt >= 0 && jt < nt && s < nstrips) {
            __global const int *pr = prof + (s * ${WG} + t) * ${TH};
            const int j0 = jt * ${TW};
            if (jt == 0) {
                hdg = 0;
% for r in range(TH):
                h${r} = 0; e${r} = 0;
% endfor
${load("j0", "p")}
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
                const int rb = ((k - 1) & 1) * ${WG * TW} + (t - 1) * ${TW};
% for c in range(TW):
                hu${c} = lh[rb + ${c}]; fu${c} = lf[rb + ${c}];
% endfor
            }
% for c in range(TW):
%  for v in range(NV):
            int4 q${c}_${v} = (int4)(0);
%  endfor
% endfor
            if (jt + 1 < nt) {
${load("j0 + %d" % TW, "q")}
            }
% for c in range(TW):
            int ho${c}, fo${c};
            {   /* column j0 + ${c} */
                int dg = ${"hdg" if c == 0 else "hu%d" % (c - 1)};
                int f = fu${c};
%  for r in range(TH):
                { const int h = max(max(dg + p${c}_${r // 4}.s${r % 4}, e${r}), max(f, 0));
                  const int tt = h - goe;
                  e${r} = max(e${r} - ext, tt);
                  f = max(f - ext, tt);
                  mx = max(mx, h);
                  dg = h${r}; h${r} = h; }
%  endfor
                ho${c} = h${TH - 1}; fo${c} = f;
            }
% endfor
% for c in range(TW):
%  for v in range(NV):
            p${c}_${v} = q${c}_${v};
%  endfor
% endfor
            hdg = hu${TW - 1};
            if (t == ${WG - 1}) {
                if (s + 1 < nstrips) {
% for c in range(TW):
                    bd[j0 + ${c}] = (int2)(ho${c}, fo${c});
% endfor
                }
            } else {
                const int wb = (k & 1) * ${WG * TW} + t * ${TW};
% for c in range(TW):
                lh[wb + ${c}] = ho${c}; lf[wb + ${c}] = fo${c};
% endfor
            }
        }
        if (++jt == P) { jt = 0; s++; }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    red[t] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        int m = 0;
        for (int i = 0; i < ${WG}; i++) m = max(m, red[i]);
        out[g] = m >= thresh ? -1 : m;
    }
}
