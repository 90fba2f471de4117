<%doc>
  HMMER's Forward filter score (p7_ForwardParser, impl_sse/fwdback.c) in float32, probability
  space with HMMER's sparse rescaling; the recurrence and profile of clalign.hmm.fwd_reference
  (whose docstring has the formulas). HMMER sums in its striped order and this kernel in its
  own, so scores agree to rounding: the host decides near a threshold with HMMER itself.

  One work-group scores one target; work-item t keeps states k = t*P+1 .. t*P+P of the M, I
  and D rows in registers. M and I need only the previous row. The D chain of a row,
  D(k) = a(k) + b(k) D(k-1) with a(k) = M(k-1) MD(k) and b(k) = DD(k), is affine, so each
  work-item composes its states into (A, B): D_out = A + B D_in, with (C, E) giving the sum of
  its D values as C + E D_in; an inclusive Hillis-Steele scan of these maps over the
  work-group (with the row's sum of M) gives every work-item its D_in and the row's
  xE = sum M + sum D. Then the N/C/J/B specials, and when xE > 1e4 the row and the specials
  are divided by xE and log(xE) added to the score, as HMMER does.

  Targets: database indices (targets[]), HMMER's length L of each (lens[]: its stored residues,
  then L - n '*' stops, code STAR), N/C/J loop and move probabilities (ncj[2s], ncj[2s+1]);
  e_move (E->C and E->J) and the rescaling threshold from clalign.hmm.fwd_reference.
  Tables (host, clalign.hmm.fwd_engine.fwd_tables): e [NROWS][P][WG] and t [8][P][WG] float,
  state t*P+j+1 of work-item t at [j][t]; t rows BM MM IM DM MD DD MI II (the moves into M_k,
  into D_k, and I_k's own); states past M are zero.
  Parameters (clalign.hmm.params.HMM_FORWARD): WG, P, NROWS, STAR.
</%doc>
#define WG ${WG}
#define P ${P}
#define S (WG * P)
#define IX(j) ((j) * WG + lid)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hmm_forward(__global const uchar *res, __global const ulong *offs, __global const uint *targets,
                 __global const uint *lens, __global const float *ncj, __global const float *e,
                 __global const float *tf, const float e_move, const float rescale, __global float *out)
{
    const int s = get_group_id(0);
    const int lid = get_local_id(0);
    __local float lm[WG], li[WG], ld[WG], sa[WG], sb[WG], sc[WG], se[WG], ss[WG];
    const uint t = targets[s];
    const ulong a = offs[t];
    const uint n = (uint)(offs[t + 1] - a);        /* residues stored; L - n trailing stops follow */
    const uint L = lens[s];
    const float loop = ncj[2 * s], move = ncj[2 * s + 1];
    float mp[P], ip[P], dp[P], mc[P], ic[P];
    for (int j = 0; j < P; j++) { mp[j] = 0.0f; ip[j] = 0.0f; dp[j] = 0.0f; }
    lm[lid] = 0.0f; li[lid] = 0.0f; ld[lid] = 0.0f;
    float xN = 1.0f, xJ = 0.0f, xC = 0.0f, xB = move, total = 0.0f;
    __global const float *tBM = tf, *tMM = tf + S, *tIM = tf + 2 * S, *tDM = tf + 3 * S;
    __global const float *tMD = tf + 4 * S, *tDD = tf + 5 * S, *tMI = tf + 6 * S, *tII = tf + 7 * S;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < L; i++) {
        __global const float *er = e + (i < n ? (int)res[a + i] : ${STAR}) * S;
        float pm = lid ? lm[lid - 1] : 0.0f, pi = lid ? li[lid - 1] : 0.0f, pd = lid ? ld[lid - 1] : 0.0f;
        float sum_m = 0.0f;
        for (int j = 0; j < P; j++) {
            const int k = IX(j);
            float sv = xB * tBM[k] + pm * tMM[k] + pi * tIM[k] + pd * tDM[k];
            sv *= er[k];
            mc[j] = sv;
            sum_m += sv;
            ic[j] = mp[j] * tMI[k] + ip[j] * tII[k];
            pm = mp[j]; pi = ip[j]; pd = dp[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);               /* every read of last row's edge values done */
        lm[lid] = mc[P - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        const float edge = lid ? lm[lid - 1] : 0.0f; /* M(k-1) of this row for the first state */
        float A = 0.0f, B = 1.0f, C = 0.0f, E = 0.0f, prev = edge;
        for (int j = 0; j < P; j++) {
            const int k = IX(j);
            A = prev * tMD[k] + tDD[k] * A;
            B = tDD[k] * B;
            C += A;
            E += B;
            prev = mc[j];
        }
        sa[lid] = A; sb[lid] = B; sc[lid] = C; se[lid] = E; ss[lid] = sum_m;
        for (int off = 1; off < WG; off <<= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            const int on = lid >= off;
            const float la = on ? sa[lid - off] : 0.0f, lb = on ? sb[lid - off] : 1.0f;
            const float lc = on ? sc[lid - off] : 0.0f, le = on ? se[lid - off] : 0.0f;
            const float ls = on ? ss[lid - off] : 0.0f;
            barrier(CLK_LOCAL_MEM_FENCE);
            C = lc + C + E * la;                     /* the earlier segments, then this one */
            E = le + E * lb;
            A = A + B * la;
            B = B * lb;
            sum_m += ls;
            sa[lid] = A; sb[lid] = B; sc[lid] = C; se[lid] = E; ss[lid] = sum_m;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float d = lid ? sa[lid - 1] : 0.0f;          /* D_in: the chain's value entering this item */
        const float xE = ss[WG - 1] + sc[WG - 1];
        prev = edge;
        float dc[P];
        for (int j = 0; j < P; j++) {
            const int k = IX(j);
            d = prev * tMD[k] + d * tDD[k];
            dc[j] = d;
            prev = mc[j];
        }
        xN = xN * loop;
        xC = xC * loop + xE * e_move;
        xJ = xJ * loop + xE * e_move;
        xB = xJ * move + xN * move;
        if (xE > rescale) {                         /* the same xE in every work-item */
            const float r = 1.0f / xE;
            for (int j = 0; j < P; j++) { mc[j] *= r; ic[j] *= r; dc[j] *= r; }
            xN = xN / xE; xC = xC / xE; xJ = xJ / xE; xB = xB / xE;
            total += log(xE);
        }
        for (int j = 0; j < P; j++) { mp[j] = mc[j]; ip[j] = ic[j]; dp[j] = dc[j]; }
        barrier(CLK_LOCAL_MEM_FENCE);               /* every read of lm and the scan done */
        lm[lid] = mp[P - 1]; li[lid] = ip[P - 1]; ld[lid] = dp[P - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[s] = total + log(xC * move);
}
