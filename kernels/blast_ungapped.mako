<%doc>
BLASTP device phases 2-4 (after cuBLASTP): word hits of a block of subjects, then BLAST+'s
two-hit rule and ungapped X-drop extension per diagonal.

blast_hits: one work-item per position of the block's residue stream (subjects separated by
SEPARATOR). A position whose word is in the query's lookup table (presence bits) emits one key
per query offset: subject | diagonal (q - s + max_slen) | s. Each work-item counts its hits, the
work-group sums them in local memory and one work-item reserves the group's output range with a
single global atomic; then every work-item writes its keys there (order within the array is
arbitrary: the host sorts the keys).

blast_two_hit: one work-item per key; the work-item holding the first key of a (subject,
diagonal) run walks that run in subject order applying s_BlastAaWordFinder_TwoHit's rule
(window, overlap skip, the "extended past" flag) and s_BlastAaExtendTwoHit's extension, and
appends each ungapped HSP scoring >= CUTOFF through a global atomic counter.

Parameters (clalign/blast/params.py, BLAST_UNGAPPED): WG, WORD, CHARSIZE, SEPARATOR,
KEY_SUBJ_BITS, KEY_DIAG_BITS, KEY_POS_BITS, MATRIX_LOCAL.
</%doc>
<%
MASK = (1 << (CHARSIZE * WORD)) - 1
POS_MASK = (1 << KEY_POS_BITS) - 1
DIAG_MASK = (1 << KEY_DIAG_BITS) - 1
DIAG_SHIFT = KEY_POS_BITS
SUBJ_SHIFT = KEY_POS_BITS + KEY_DIAG_BITS
%>
/* blast_ungapped: WG=${WG} WORD=${WORD} MATRIX_LOCAL=${int(MATRIX_LOCAL)} */

inline int word_at(__global const uchar *res, long p)
{
    int code = 0;
% for i in range(WORD):
    { uint c = res[p + ${i}]; if (c == ${SEPARATOR}u) return -1; code = (code << ${CHARSIZE}) | (int)c; }
% endfor
    return code;
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void blast_hits(__global const uchar *res,          /* block residues + separators, n + WORD bytes */
                const long n,                        /* word start positions */
                __global const long *subj_base,      /* per subject of the block: start in res */
                const int nsubj,
                __global const uint *present,        /* presence bits, one per word code */
                __global const int *starts,          /* CSR of the lookup table */
                __global const int *qoffs,
                const int max_slen,
                __global ulong *keys, const uint capacity,
                volatile __global uint *counter)
{
    __local uint group_total, group_base;
    const long p = get_global_id(0);
    const int lid = get_local_id(0);
    int code = -1, first = 0, count = 0;
    if (lid == 0) group_total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p < n) {
        code = word_at(res, p);
        if (code >= 0 && ((present[code >> 5] >> (code & 31)) & 1u)) {
            first = starts[code];
            count = starts[code + 1] - first;
        }
    }
    uint mine = count ? atomic_add(&group_total, (uint)count) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) group_base = group_total ? atomic_add(counter, group_total) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (count) {
        int lo = 0, hi = nsubj - 1;                 /* last subject starting at or before p */
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (subj_base[mid] <= p) lo = mid; else hi = mid - 1;
        }
        const ulong subj = (ulong)lo;
        const int s = (int)(p - subj_base[lo]);
        uint at = group_base + mine;
        for (int j = 0; j < count; ++j, ++at) {
            if (at < capacity) {
                const int q = qoffs[first + j];
                keys[at] = (subj << ${SUBJ_SHIFT}) | ((ulong)(q - s + max_slen) << ${DIAG_SHIFT}) | (ulong)s;
            }
        }
    }
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void blast_two_hit(__global const ulong *keys, const uint nkeys,
                   __global const uchar *query, const int qlen,
                   __global const uchar *res,        /* same stream as blast_hits */
                   __global const long *subj_base,   /* per subject in block: start in res */
                   __global const int *subj_len,
                   __global const int *matrix_g,     /* 28 x 28 */
                   const int max_slen, const int window, const int dropoff, const int cutoff,
                   __global int *out, const uint capacity, volatile __global uint *counter)
{
% if MATRIX_LOCAL:
    __local int matrix[28 * 28];
    for (int i = get_local_id(0); i < 28 * 28; i += ${WG}) matrix[i] = matrix_g[i];
    barrier(CLK_LOCAL_MEM_FENCE);
% else:
    __global const int *matrix = matrix_g;
% endif
    const uint k0 = get_global_id(0);
    if (k0 >= nkeys) return;
    const ulong run = keys[k0] >> ${DIAG_SHIFT};
    if (k0 > 0 && (keys[k0 - 1] >> ${DIAG_SHIFT}) == run) return;
    const int subj = (int)(keys[k0] >> ${SUBJ_SHIFT});
    const int diag = (int)(run & ${DIAG_MASK}) - max_slen;       /* q - s */
    __global const uchar *s = res + subj_base[subj];
    const int slen = subj_len[subj];
    int last_hit = 0, flag = 0, started = 0;
    for (uint k = k0; k < nkeys && (keys[k] >> ${DIAG_SHIFT}) == run; ++k) {
        const int s_off = (int)(keys[k] & ${POS_MASK});
        const int q_off = s_off + diag;
        if (!started) { started = 1; last_hit = s_off; continue; }
        if (flag) {
            if (s_off < last_hit) continue;
            last_hit = s_off; flag = 0; continue;
        }
        const int diff = s_off - last_hit;
        if (diff >= window) { last_hit = s_off; continue; }
        if (diff < ${WORD}) continue;
        /* s_BlastAaExtendTwoHit: best prefix of the second word, left to the first word, then right */
        int score = 0, left_score = 0, right_d = 0;
        for (int i = 0; i < ${WORD}; ++i) {
            score += matrix[query[q_off + i] * 28 + s[s_off + i]];
            if (score > left_score) { left_score = score; right_d = i + 1; }
        }
        const int qr = q_off + right_d, sr = s_off + right_d;
        int s_last = sr;
        /* left from (qr - 1, sr - 1) */
        int qo = qr - 1, so = sr - 1;
        int nl = min(so, qo), best_i = nl + 1, sc = 0, mx = 0;
        for (int i = nl; i >= 0; --i) {
            sc += matrix[query[qo - nl + i] * 28 + s[so - nl + i]];
            if (sc > mx) { mx = sc; best_i = i; }
            if (mx - sc >= dropoff) break;
        }
        const int left_d = nl - best_i + 1;
        left_score = mx;
        int right_score = 0, right_len = 0;
        const int right = left_d >= sr - (last_hit + ${WORD});
        if (right) {
            int nr = min(slen - sr, qlen - qr), bi = -1, i = 0;
            sc = left_score; mx = left_score;
            for (; i < nr; ++i) {
                sc += matrix[query[qr + i] * 28 + s[sr + i]];
                if (sc > mx) { mx = sc; bi = i; }
                if (sc <= 0 || mx - sc >= dropoff) break;
            }
            right_score = mx; right_len = bi + 1; s_last = sr + i;
        }
        const int best = max(left_score, right_score);
        if (best >= cutoff) {
            const uint at = atomic_inc(counter);
            if (at < capacity) {
                __global int *o = out + 7 * (ulong)at;
                o[0] = subj; o[1] = best; o[2] = qr - left_d; o[3] = sr - left_d;
                o[4] = left_d + right_len; o[5] = q_off; o[6] = s_off;
            }
        }
        if (right) { flag = 1; last_hit = s_last - (${WORD} - 1); }
        else last_hit = s_off;
    }
}

/* blast_scan: the whole of phases 2-4 for one subject per work-item (the "subject-based"
   alternative to blast_hits + sort + blast_two_hit): scan the subject's words in order, keep
   each diagonal's last hit and flag in this subject's slice of diag_state (qlen + slen + 1
   entries, filled with DIAG_EMPTY before the launch), extend as above. order[] lists the block's
   tasks (subject << 8 | bucket), longest subjects first, so neighbouring work-items do similar
   amounts of work; a long subject is split into nbuckets[subject] tasks by diagonal
   (d mod nbuckets): each scans the whole subject but keeps only its own diagonals, which the
   two-hit rule treats independently. */
#define DIAG_EMPTY (-2147483647 - 1)
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void blast_scan(__global const int *order, const int nsubj,   /* tasks: subject << 8 | bucket */
                __global const uchar *nbuckets,
                __global const uchar *query, const int qlen,
                __global const uchar *res, __global const long *subj_base,
                __global const int *subj_len, __global const long *diag_base,
                __global int *diag_state,           /* per diagonal: last_hit << 1 | flag */
                __global const uint *present, __global const int *starts,
                __global const int *qoffs, __global const int *matrix_g,
                const int window, const int dropoff, const int cutoff,
                __global int *out, const uint capacity, volatile __global uint *counter)
{
% if MATRIX_LOCAL:
    __local int matrix[28 * 28];
    for (int i = get_local_id(0); i < 28 * 28; i += ${WG}) matrix[i] = matrix_g[i];
    barrier(CLK_LOCAL_MEM_FENCE);
% else:
    __global const int *matrix = matrix_g;
% endif
    const int t = get_global_id(0);
    if (t >= nsubj) return;
    const int subj = order[t] >> 8;
    const int bucket = order[t] & 255;
    const int nb = nbuckets[subj];
    __global const uchar *s = res + subj_base[subj];
    const int slen = subj_len[subj];
    __global int *dstate = diag_state + diag_base[subj];
    int code = 0;
    for (int p = 0; p + ${WORD} <= slen; ++p) {
        if (p == 0) {
% for i in range(WORD - 1):
            code = (code << ${CHARSIZE}) | (int)s[${i}];
% endfor
        }
        code = ((code << ${CHARSIZE}) | (int)s[p + ${WORD} - 1]) & ${MASK};
        if (!((present[code >> 5] >> (code & 31)) & 1u)) continue;
        const int s_off = p;
        for (int j = starts[code]; j < starts[code + 1]; ++j) {
            const int q_off = qoffs[j];
            const int d = q_off - s_off + slen;
            if (nb > 1 && d % nb != bucket) continue;
            const int st = dstate[d];
            if (st == DIAG_EMPTY) { dstate[d] = s_off << 1; continue; }
            int last_hit = st >> 1;
            if (st & 1) {
                if (s_off < last_hit) continue;
                dstate[d] = s_off << 1; continue;
            }
            const int diff = s_off - last_hit;
            if (diff >= window) { dstate[d] = s_off << 1; continue; }
            if (diff < ${WORD}) continue;
            int score = 0, left_score = 0, right_d = 0;
            for (int i = 0; i < ${WORD}; ++i) {
                score += matrix[query[q_off + i] * 28 + s[s_off + i]];
                if (score > left_score) { left_score = score; right_d = i + 1; }
            }
            const int qr = q_off + right_d, sr = s_off + right_d;
            int s_last = sr;
            int qo = qr - 1, so = sr - 1;
            int nl = min(so, qo), best_i = nl + 1, sc = 0, mx = 0;
            for (int i = nl; i >= 0; --i) {
                sc += matrix[query[qo - nl + i] * 28 + s[so - nl + i]];
                if (sc > mx) { mx = sc; best_i = i; }
                if (mx - sc >= dropoff) break;
            }
            const int left_d = nl - best_i + 1;
            left_score = mx;
            int right_score = 0, right_len = 0;
            const int right = left_d >= sr - (last_hit + ${WORD});
            if (right) {
                int nr = min(slen - sr, qlen - qr), bi = -1, i = 0;
                sc = left_score; mx = left_score;
                for (; i < nr; ++i) {
                    sc += matrix[query[qr + i] * 28 + s[sr + i]];
                    if (sc > mx) { mx = sc; bi = i; }
                    if (sc <= 0 || mx - sc >= dropoff) break;
                }
                right_score = mx; right_len = bi + 1; s_last = sr + i;
            }
            const int best = max(left_score, right_score);
            if (best >= cutoff) {
                const uint at = atomic_inc(counter);
                if (at < capacity) {
                    __global int *o = out + 7 * (ulong)at;
                    o[0] = subj; o[1] = best; o[2] = qr - left_d; o[3] = sr - left_d;
                    o[4] = left_d + right_len; o[5] = q_off; o[6] = s_off;
                }
            }
            dstate[d] = right ? (((s_last - (${WORD} - 1)) << 1) | 1) : (s_off << 1);
        }
    }
}
