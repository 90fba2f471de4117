<%doc>
BLASTP preliminary gapped extensions on the device, one work-item per initial HSP.

For every initial (ungapped) HSP of a launch, speculatively (whether BLAST+ extends it at all
depends on the HSPs kept before it in its subject, which the host decides afterwards), the
score-only extension BLAST+'s preliminary stage would compute from it:

1. start point: BlastGetStartForGappedAlignment, the centre of the HSP's best 11-residue window
   (its left end when no window scores above 0, its middle when it is 11 residues or shorter);
2. s_BlastProtGappedAlignment: a left X-drop semi-gapped DP through the start residue and a right
   one after it (Blast_SemiGappedAlign in score-only mode, or s_RestrictedGappedAlign -- gaps open
   only every RESTRICT residues from the start -- where the host asks for it), with
   AdjustSubjectRange's window for subjects of MAX_SUBJECT_OFFSET residues or more.

The DP keeps, per subject cell b of the row being computed, (best score, best score ending in a
gap) as an int2. Only cells first_b .. b_size-1 are alive at any time, so they live in a ring of
BAND int2 (index b mod BAND) in this work-item's slice of global scratch (or of local memory with
SCRATCH_LOCAL). An extension whose live band would outgrow BAND stops and is flagged (status PRE_NONE):
the host computes it on the CPU, so the result stays exact whatever BAND is.

Output per HSP (launch order): score, q_start, q_end, s_start, s_end (ends exclusive), q_off,
s_off of the start point, status (PRE_FULL: full DP, PRE_RESTRICTED: restricted DP, PRE_NONE: overflow, redo on the CPU).

Parameters (clalign/blast/params.py, BLAST_GAPPED): WG, BAND, SCRATCH_LOCAL, RESTRICT, WINDOW,
MAX_SUBJECT_OFFSET, MAX_TOTAL_GAPS, MININT.
</%doc>
/* blast_gapped: WG=${WG} BAND=${BAND} SCRATCH_LOCAL=${int(SCRATCH_LOCAL)} */
#define MININT (${MININT})
#define BMASK ${BAND - 1}
% if SCRATCH_LOCAL:
#define RING_SPACE __local
% else:
#define RING_SPACE __global
% endif

/* One direction of the X-drop DP. Row a (1..M) reads query q[qb + dq * a], cell b (0..N-1) reads
   subject s[sb + ds * b]. Returns the best score, *ra / *rb its row and cell; *ovf set when the
   live band outgrew the ring. RESTRICTED: gaps open only at rows and cells multiple of RESTRICT. */
% for RESTRICTED in (False, True):
<% fname = "xdrop_restricted" if RESTRICTED else "xdrop_full" %>
inline int ${fname}(__local const int *mat, __global const uchar *q, const int qb, const int dq,
                    const int M, __global const uchar *s, const long sb, const int ds, const int N,
                    const int gap_open, const int gap_extend, int x_dropoff,
                    RING_SPACE int2 *ring, int *ra, int *rb, int *ovf)
{
    *ra = 0;
    *rb = 0;
    const int goe = gap_open + gap_extend;
    if (x_dropoff < goe)
        x_dropoff = goe;
    if (N <= 0 || M <= 0)
        return 0;
    int score = -goe;
    ring[0] = (int2)(0, -goe);
    int i = 1;
    while (i <= N) {
        if (score < -x_dropoff)
            break;
        if (i >= ${BAND}) { *ovf = 1; return 0; }
        ring[i & BMASK] = (int2)(score, score - goe);
        score -= gap_extend;
        i++;
    }
    int b_size = i;
    int best_score = 0;
    int first_b = 0;
% if RESTRICTED:
    int b_gap = 0;
% endif
    for (int a = 1; a <= M; a++) {
        __local const int *row = mat + 28 * (int)q[qb + dq * a];
        int score_gap_row = MININT;
        int last_b = first_b;
        score = MININT;
% if RESTRICTED:
        const bool row_gap = (a % ${RESTRICT}) == 0;
% endif
        for (int b = first_b; b < b_size; b++) {
            const int2 cell = ring[b & BMASK];
            const int next_score = cell.x + (b < N ? row[s[sb + (long)ds * b]] : 0);
            int score_gap_col = cell.y;
            int2 put = cell;
% if RESTRICTED:
            const bool at_gap = b == b_gap;
            if (at_gap) {
                b_gap += ${RESTRICT};
                if (score < score_gap_col)
                    score = score_gap_col;
            }
            if (row_gap && score < score_gap_row)
                score = score_gap_row;
            if (best_score - score > x_dropoff) {
                put.x = MININT;
                if (b == first_b)
                    first_b++;
            } else {
                last_b = b;
                if (score > best_score) {
                    best_score = score;
                    *ra = a;
                    *rb = b;
                }
                if (at_gap) {
                    score_gap_col -= gap_extend;
                    put.y = max(score - goe, score_gap_col);
                }
                if (row_gap) {
                    score_gap_row -= gap_extend;
                    score_gap_row = max(score - goe, score_gap_row);
                }
                put.x = score;
            }
% else:
            if (score < score_gap_col)
                score = score_gap_col;
            if (score < score_gap_row)
                score = score_gap_row;
            if (best_score - score > x_dropoff) {
                if (b == first_b)
                    first_b++;
                else
                    put.x = MININT;
            } else {
                last_b = b;
                if (score > best_score) {
                    best_score = score;
                    *ra = a;
                    *rb = b;
                }
                score_gap_row -= gap_extend;
                score_gap_col -= gap_extend;
                put.y = max(score - goe, score_gap_col);
                score_gap_row = max(score - goe, score_gap_row);
                put.x = score;
            }
% endif
            ring[b & BMASK] = put;
            score = next_score;
        }
% if RESTRICTED:
        if (!row_gap)
            score_gap_row = score;
% endif
        if (first_b == b_size)
            break;
% if RESTRICTED:
        b_gap = first_b + ((first_b % ${RESTRICT}) > 0 ? ${RESTRICT} - first_b % ${RESTRICT} : 0);
% endif
        if (last_b < b_size - 1) {
            b_size = last_b + 1;
        } else {
            while (score_gap_row >= best_score - x_dropoff && b_size <= N) {
                if (b_size - first_b >= ${BAND}) { *ovf = 1; return 0; }
                ring[b_size & BMASK] = (int2)(score_gap_row, score_gap_row - goe);
                score_gap_row -= gap_extend;
                b_size++;
            }
        }
        if (b_size <= N) {
            if (b_size - first_b >= ${BAND}) { *ovf = 1; return 0; }
            ring[b_size & BMASK] = (int2)(MININT, MININT);
            b_size++;
        }
    }
    return best_score;
}
% endfor

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void blast_gapped(__global const uchar *res,      /* subjects, concatenated (Subjects.residues) */
                  __global const long *offsets,   /* subject k: res[offsets[k] .. offsets[k+1]) */
                  __global const int *rows,       /* initial HSPs, 7 ints each (device rows) */
                  __global const int *order,      /* item -> row index (the query's items) */
                  __global const uchar *restrict_row, /* per row: 1 = restricted DP */
                  const int first,                /* this launch's items: first .. first + n - 1 */
                  const int n,
                  __global const uchar *q, const int qlen,
                  __global const int *matrix,     /* 28 x 28 */
                  const int gap_open, const int gap_extend, const int x_dropoff,
% if not SCRATCH_LOCAL:
                  __global int2 *scratch,         /* BAND int2 per work-item of the launch */
% endif
                  __global int *out)              /* 8 ints per item */
{
    __local int mat[28 * 28];
    const int lid = get_local_id(0);
    for (int k = lid; k < 28 * 28; k += ${WG})
        mat[k] = matrix[k];
    barrier(CLK_LOCAL_MEM_FENCE);
% if SCRATCH_LOCAL:
    __local int2 rings[${WG * BAND}];
    __local int2 *ring = rings + lid * ${BAND};
% else:
    __global int2 *ring = scratch + (long)get_global_id(0) * ${BAND};
% endif
    const int gid = get_global_id(0);
    if (gid >= n)
        return;
    const int item = first + gid;
    __global const int *r = rows + 7 * (long)order[item];
    const int oid = r[0], q0 = r[2], s0 = r[3], length = r[4];
    const long s_base = offsets[oid];
    const int slen = (int)(offsets[oid + 1] - s_base);
    __global const uchar *s = res + s_base;

    /* BlastGetStartForGappedAlignment */
    int q_off = q0 + length / 2;
    if (length > ${WINDOW}) {
        int score = 0;
        for (int i = 0; i < ${WINDOW}; i++)
            score += mat[28 * q[q0 + i] + s[s0 + i]];
        int max_score = score, max_offset = q0 + ${WINDOW} - 1;
        for (int i = ${WINDOW}; i < length; i++) {
            score += mat[28 * q[q0 + i] + s[s0 + i]]
                   - mat[28 * q[q0 + i - ${WINDOW}] + s[s0 + i - ${WINDOW}]];
            if (score > max_score) {
                max_score = score;
                max_offset = q0 + i;
            }
        }
        q_off = max_score > 0 ? max_offset - ${WINDOW // 2} : q0;
    }
    const int s_off = r[6] + q_off - r[5];
    const bool restricted = restrict_row[order[item]] != 0;

    /* s_BlastProtGappedAlignment with AdjustSubjectRange */
    const int q_length = q_off + 1;
    int s_length = s_off + 1;
    int shift = 0, subject_length = slen;
    if (slen >= ${MAX_SUBJECT_OFFSET}) {
        const int left = q_length + ${MAX_TOTAL_GAPS};
        const int right = qlen - q_length + ${MAX_TOTAL_GAPS};
        if (s_length > left) {
            shift = s_length - left;
            s_length = left;
        }
        subject_length = min(slen, s_length + shift + right) - shift;
    }
    int ra, rb, ovf = 0;
    int score_left = restricted
        ? xdrop_restricted(mat, q, q_length, -1, q_length, s, shift + s_length - 1, -1, s_length,
                           gap_open, gap_extend, x_dropoff, ring, &ra, &rb, &ovf)
        : xdrop_full(mat, q, q_length, -1, q_length, s, shift + s_length - 1, -1, s_length,
                     gap_open, gap_extend, x_dropoff, ring, &ra, &rb, &ovf);
    __global int *o = out + 8 * (long)item;
    const int q_start = q_length - ra, s_start = s_length - rb + shift;
    int q_end = q_off, s_end = s_off, score_right = 0;
    if (!ovf && q_length < qlen && s_length < subject_length) {
        const int M = qlen - q_length, N = subject_length - s_length;
        score_right = restricted
            ? xdrop_restricted(mat, q, q_off, 1, M, s, s_off + 1, 1, N, gap_open, gap_extend,
                               x_dropoff, ring, &ra, &rb, &ovf)
            : xdrop_full(mat, q, q_off, 1, M, s, s_off + 1, 1, N, gap_open, gap_extend,
                         x_dropoff, ring, &ra, &rb, &ovf);
        q_end = ra + q_off + 1;
        s_end = rb + s_off + 1;
    }
    o[0] = score_left + score_right;
    o[1] = q_start;
    o[2] = q_end;
    o[3] = s_start;
    o[4] = s_end;
    o[5] = q_off;
    o[6] = s_off;
    o[7] = ovf ? ${PRE_NONE} : (restricted ? ${PRE_RESTRICTED} : ${PRE_FULL});
}
