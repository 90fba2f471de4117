<%doc>
-task blastn's preliminary gapped extension (nucl_gapped.dp_prelim_oriented: the score-only
X-drop DP left and right of the seed, s_BlastDynProgNtGappedAlignment / s_BlastAlignPackedNucl)
of every saved hit of one block, computed in advance: a hit's DP reads only the hit, the query
batch and its segment's packed bases, so the workers replay BLAST+'s containment rule in order
and take the result of each hit they extend (clalign/blast/nucl_device_ungapped.py is the host).

One work-item per row (looping over rows gid, gid + global size, ...). The DP's scratch rows
(best, best_gap: one int2 per cell) are a ring of BAND cells per work-item in global memory,
cell b at b mod BAND (interleaved across work-items). Cells alive at once are first_b .. b_size
(the one written past the band included); the CPU's cells below first_b are never read again
and, while the live span stays within BAND, a cell b is last written for b itself before it is
read (a write for b' = b +- BAND needs b' live at the same time as b). When a write would span
more than BAND cells the row's status is NONE and the CPU computes it; so is a row whose two
extensions visit more than CELLS cells (*budget counts them down): a long true alignment has a
saved hit every few bases along it, and the CPU extends only the first of them (the others are
contained), so the device would otherwise spend whole-gene extensions on hits nobody uses.

int32 throughout: MININT (-2**29) plays the CPU's -2**30. The DP only compares a value derived
from it with the floor (best score - X-drop >= -X-drop) and drops it; it never stores one but
MININT itself (best[] of a dropped cell, the cell past the band). Such values are MININT plus a
matrix entry (>= -2**30, the sentinel letter's score): >= -1.5 * 2**30, no overflow, and below
every floor since the host keeps X-drop and gap costs below 2**28. Real scores stay between
-2**30 - 2**28 and reward x context length (< 2**28, checked on the host).

nd_pass then hands on only the rows the workers can use: a computed row whose score is below
its context's gapped cutoff makes no HSP (BLAST+ drops it, and only HSPs are tested for
containment), so the rows of kept pieces (keep[tag], tag -1: nw_redo's) that are left to the
CPU or reach the cutoff are compacted through counters[2], the row's first HEAD ints and the
result, in no particular order (the workers sort them).

Parameters (clalign/blast/params.py, BLASTN_GAPPED): WG, BAND, CELLS, NCODE, SENTINEL, RATIO,
ROW, MININT, NONE, DONE, COLS, HEAD (LAUNCH is the host's).
</%doc>
/* blast_nucl_gapped: WG=${WG} BAND=${BAND} CELLS=${CELLS} */
#define RING(b) ring[(size_t)((b) & (${BAND} - 1)) * stride]
#define SENTINEL ${SENTINEL}

<%include file="blast_nucl_common.mako"/>

/* align_oriented of N query cells against M subject rows: cell b's letter is q[q0 + dir * b]
   (SENTINEL outside the batch); row a is base s0 + a - 1 (forward) or s0 - a (reverse).
   Returns the best score, *ra / *rb the best cell; *ok = 0 when the band outgrew the ring. */
inline int align(__global const uchar *q, const int qn, const int q0, const int dir, const int N,
                 __global const uchar *s, const int s0, const int M, const int reverse,
                 __global const int *matrix, const int gap_open, const int gap_extend, int x,
                 __global int2 *ring, const size_t stride, int *ra, int *rb, int *ok,
                 int *budget)
{
    *ra = 0;
    *rb = 0;
    const int goe = gap_open + gap_extend;
    if (x < goe) x = goe;
    if (N <= 0 || M <= 0) return 0;
    int score = -goe;
    RING(0) = (int2)(0, -goe);
    int i = 1;
    while (i <= N) {
        if (score < -x) break;
        if (i >= ${BAND}) { *ok = 0; return 0; }
        RING(i) = (int2)(score, score - goe);
        score -= gap_extend;
        i++;
    }
    int b_size = i, best_score = 0, floor = -x, best_a = 0, best_b = 0, first_b = 0;
    for (int a = 1; a <= M; a++) {
        __global const int *row = matrix + sbase(s, reverse ? s0 - a : s0 + a - 1) * ${NCODE};
        score = ${MININT};
        int gap_row = ${MININT};
        int last_b = first_b;
        *budget -= b_size - first_b;
        if (*budget < 0) { *ok = 0; return 0; }
        for (int b = first_b; b < b_size; b++) {
            const int2 c = RING(b);
            const int next = c.x + row[qcode(q, q0 + dir * b, qn)];
            score = max(score, max(c.y, gap_row));
            if (score < floor) {
                if (b == first_b) first_b++;
                else RING(b) = (int2)(${MININT}, c.y);
            } else {
                last_b = b;
                if (score > best_score) {
                    best_score = score;
                    floor = score - x;
                    best_a = a;
                    best_b = b;
                }
                RING(b) = (int2)(score, max(score - goe, c.y - gap_extend));
                gap_row = max(score - goe, gap_row - gap_extend);
            }
            score = next;
        }
        if (first_b == b_size) break;
        if (last_b < b_size - 1) {
            b_size = last_b + 1;
        } else {
            while (gap_row >= floor && b_size <= N) {
                if (b_size - first_b >= ${BAND}) { *ok = 0; return 0; }
                RING(b_size) = (int2)(gap_row, gap_row - goe);
                gap_row -= gap_extend;
                b_size++;
            }
        }
        if (b_size <= N) {
            if (b_size - first_b >= ${BAND}) { *ok = 0; return 0; }
            RING(b_size) = (int2)(${MININT}, ${MININT});
            b_size++;
        }
    }
    *ra = best_a;
    *rb = best_b;
    return best_score;
}

/* res[k * 8 ..]: dp_prelim_oriented's (score, q_start, q_end, s_start, s_end, q_gapped_start,
   s_gapped_start) of saved hit k (rows as nw_spec writes them: segment, word index, q_off,
   s_off, q_start, s_start, length, score, context, tag), context-relative query positions,
   then the status (DONE, or NONE: the CPU computes it). */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nd_prelim(__global const int *rows, const uint n, __global const uchar *packed,
               __global const uint *seg_byte, __global const int *seg_len,
               __global const uchar *q, const int qn, __global const int *ctx_off,
               __global const int *ctx_len, __global const int *matrix, const int gap_open,
               const int gap_extend, const int xdrop, __global int2 *scratch, __global int *res)
{
    const size_t stride = get_global_size(0);
    __global int2 *ring = scratch + get_global_id(0);
    for (size_t k = get_global_id(0); k < n; k += stride) {
        __global const int *h = rows + k * ${ROW};
        const int g = h[0], c = h[8];
        __global const uchar *s = packed + seg_byte[g];
        const int s_len = seg_len[g], a0 = ctx_off[c], q_len = ctx_len[c];
        int q_off = h[2] - a0, s_off = h[3];
        if (h[5] + h[6] >= s_off + 8) {
            s_off += 3;
            q_off += 3;
        }
        const int x = min(xdrop, h[7]);
        const int adj = ${RATIO} - s_off % ${RATIO};
        int q_length = q_off + adj, s_length = s_off + adj;
        if (q_length > q_len || s_length > s_len) {
            q_length -= ${RATIO};
            s_length -= ${RATIO};
        }
        int ok = 1, ra, rb, budget = ${CELLS};
        int score = align(q, qn, a0 + q_length - 1, -1, q_length, s, s_length, s_length, 1,
                          matrix, gap_open, gap_extend, x, ring, stride, &ra, &rb, &ok, &budget);
        const int q_start = q_length - rb, s_start = s_length - ra;
        int q_end = q_length, s_end = s_length;
        if (ok && q_length < q_len && s_length < s_len) {
            score += align(q, qn, a0 + q_length, 1, q_len - q_length, s, s_length,
                           s_len - s_length, 0, matrix, gap_open, gap_extend, x, ring, stride,
                           &ra, &rb, &ok, &budget);
            q_end = q_length + rb;
            s_end = s_length + ra;
        }
        __global int *o = res + k * ${COLS};
        o[0] = score;
        o[1] = q_start;
        o[2] = q_end;
        o[3] = s_start;
        o[4] = s_end;
        o[5] = q_off;
        o[6] = s_off;
        o[7] = ok ? ${DONE} : ${NONE};
    }
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nd_pass(__global const int *rows, const uint n, __global const int *res,
             __global const uchar *keep, const int use_keep, __global const int *cutoff,
             volatile __global uint *counters, __global int *dest)
{
    const uint k = get_global_id(0);
    if (k >= n) return;
    __global const int *h = rows + (size_t)k * ${ROW};
    __global const int *r = res + (size_t)k * ${COLS};
    const int tag = h[${ROW} - 1];
    if (use_keep && tag >= 0 && !keep[tag]) return;
    if (r[${COLS} - 1] == ${DONE} && r[0] < cutoff[h[8]]) return;
    __global int *o = dest + (size_t)atomic_inc(&counters[2]) * (${HEAD} + ${COLS});
    for (int i = 0; i < ${HEAD}; i++) o[i] = h[i];
    for (int i = 0; i < ${COLS}; i++) o[${HEAD} + i] = r[i];
}
