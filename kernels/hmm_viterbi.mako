<%doc>
  HMMER's 16-bit Viterbi filter (p7_ViterbiFilter, impl_sse/vitfilter.c) on saturated int16
  values held in ints, equal to clalign.hmm.vit_reference (the plain cell-order recurrence;
  that module's docstring says why HMMER's striped "lazy F" code gives the same scores).

  One work-group scores one target sequence; work-item t keeps the model states (nodes)
  k = t*P+1 .. t*P+P of the M, I and D rows in registers. Per residue x:
      M(k) = sat(max(sat(xB + BM(k)), sat(M'(k-1) + MM(k)), sat(I'(k-1) + IM(k)),
                     sat(D'(k-1) + DM(k))) + rw[x](k))            (' = previous row)
      I(k) = max(sat(M'(k) + MI(k)), sat(I'(k) + II(k)))
      D(k) = max(sat(M(k-1) + MD(k-1)), sat(D(k-1) + DD(k-1)))
  The D chain is sequential in k; every DD <= 0, so a run of saturated additions is the
  clamped sum and D(k) = max(-32768, G(k) + max_{j<=k} (a(j) - G(j))) with a(j) =
  sat(M(j-1) + MD(j-1)) and G(k) = DD(1) + ... + DD(k-1) (host table, int32): a prefix
  maximum over the work-group (Hillis-Steele in local memory, with the row maximum xE).
  Then, as HMMER: overflow (score +inf) when xE >= 32767; xC = max(xC, xE + E_move),
  xJ = max(xJ, xE + E_loop), xB = max(xJ + move, xN + move) with xN = BASE_W and the N/C/J
  loops 0, each stored as int16. Output: the final xC word, 32767 on overflow.

  Targets: database indices (targets[]), HMMER's length L of each (its stored residues, then
  L - n '*' stops, code STAR), the N/C/J move word of L (moves[]).
  Tables (host, clalign.hmm.vit_engine.vit_tables): rw [NROWS][P][WG] and tw [7][P][WG] int16,
  G [P][WG] int32, state t*P+j+1 of work-item t at [j][t] (one j: contiguous loads across the
  work-group); tw rows BM MM IM DM (into M_k), MDin (into D_k from M_{k-1}), MI II (of I_k);
  states past M are -32768.
  Parameters (clalign.hmm.params.HMM_VITERBI): WG, P, NROWS, BASE_W, STAR.
</%doc>
#define NEG (-32768)
#define LOW (-0x3fffffff)
#define WG ${WG}
#define P ${P}
#define S (WG * P)
#define IX(j) ((j) * WG + lid)

inline int sat16(int x) { return clamp(x, -32768, 32767); }
inline int wrap16(int x) { return (int)(short)x; }

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hmm_viterbi(__global const uchar *res, __global const ulong *offs, __global const uint *targets,
                 __global const uint *lens, __global const short *moves, __global const short *rw,
                 __global const short *tw, __global const int *G, const int e_loop, const int e_move,
                 __global int *out)
{
    const int s = get_group_id(0);
    const int lid = get_local_id(0);
    __local int lm[WG], li[WG], ld[WG], sc[WG], se[WG];
    const uint t = targets[s];
    const ulong a = offs[t];
    const uint n = (uint)(offs[t + 1] - a);        /* residues stored; L - n trailing stops follow */
    const uint L = lens[s];
    const int move = moves[s];
    int mp[P], ip[P], dp[P], mc[P], ic[P], run[P];
    for (int j = 0; j < P; j++) { mp[j] = NEG; ip[j] = NEG; dp[j] = NEG; }
    lm[lid] = NEG; li[lid] = NEG; ld[lid] = NEG;
    const int xN = ${BASE_W};
    int xB = wrap16(xN + move), xJ = NEG, xC = NEG, over = 0;
    __global const short *tBM = tw, *tMM = tw + S, *tIM = tw + 2 * S, *tDM = tw + 3 * S;
    __global const short *tMD = tw + 4 * S, *tMI = tw + 5 * S, *tII = tw + 6 * S;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < L; i++) {
        __global const short *r = rw + (i < n ? (int)res[a + i] : ${STAR}) * S;
        int pm = lid ? lm[lid - 1] : NEG, pi = lid ? li[lid - 1] : NEG, pd = lid ? ld[lid - 1] : NEG;
        int xe = NEG;
        for (int j = 0; j < P; j++) {
            const int k = IX(j);
            int sv = sat16(xB + tBM[k]);
            sv = max(sv, sat16(pm + tMM[k]));
            sv = max(sv, sat16(pi + tIM[k]));
            sv = max(sv, sat16(pd + tDM[k]));
            sv = sat16(sv + r[k]);
            mc[j] = sv;
            xe = max(xe, sv);
            ic[j] = max(sat16(mp[j] + tMI[k]), sat16(ip[j] + tII[k]));
            pm = mp[j]; pi = ip[j]; pd = dp[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);               /* every read of last row's edge values done */
        lm[lid] = mc[P - 1];
        li[lid] = ic[P - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        int prev = lid ? lm[lid - 1] : NEG;
        int best = LOW;
        for (int j = 0; j < P; j++) {
            const int k = IX(j);
            best = max(best, sat16(prev + tMD[k]) - G[k]);
            run[j] = best;
            prev = mc[j];
        }
        sc[lid] = best;
        se[lid] = xe;
        for (int off = 1; off < WG; off <<= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            const int t1 = lid >= off ? sc[lid - off] : LOW;
            const int t2 = lid >= off ? se[lid - off] : NEG;
            barrier(CLK_LOCAL_MEM_FENCE);
            sc[lid] = max(sc[lid], t1);
            se[lid] = max(se[lid], t2);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int before = lid ? sc[lid - 1] : LOW;
        const int xE = se[WG - 1];
        for (int j = 0; j < P; j++) {
            dp[j] = max(NEG, G[IX(j)] + max(before, run[j]));
            mp[j] = mc[j];
            ip[j] = ic[j];
        }
        ld[lid] = dp[P - 1];
        if (xE >= 32767) { over = 1; break; }        /* the same xE in every work-item */
        xC = wrap16(max(xC, xE + e_move));
        xJ = wrap16(max(xJ, xE + e_loop));
        xB = wrap16(max(xJ + move, xN + move));
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[s] = over ? 32767 : xC;
}
