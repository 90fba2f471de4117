<%doc>
BLASTP device phases 2-4 in one launch, work-group-local (after cuBLASTP's binning design).

A work-group takes tasks (runs of whole subjects of the block's residue stream, longest first)
from a global counter and walks each task in chunks of WG positions. Per chunk:

1. hit detection: work-item i reads the word at position c0 + i (coalesced), looks its presence
   bit up and takes its query offsets' range; a work-group scan gives each position the index of
   its first hit in the chunk's position-ordered hit sequence (and, counting separators, its
   subject);
2. binning: the hits of a round (at most CAP of the chunk's hit sequence; a chunk with more
   hits takes several rounds, in position order) go into WG diagonal bins in local memory
   (bin = diagonal mod WG: a local histogram, a scan for the bins' starts, then a scatter with
   local atomics). BALANCE: each position first stages its hits in position order (a second
   local buffer of CAP entries), then the histogram and scatter take the staged hits WG at a
   time, so work-items with many hits do not hold their warp up twice;
3. sort and two-hit rule: work-item b owns bin b -- every diagonal d with d mod WG = b -- sorts
   its bin by subject position (insertion sort: a bin holds about CAP / WG hits) and applies
   s_BlastAaWordFinder_TwoHit's rule to each hit in order (window, overlap skip, the "extended
   past" flag) against the diagonal's state;
4. ungapped extension: s_BlastAaExtendTwoHit (best prefix of the second word, left X-drop
   extension, right extension only when the left one reached the first word); an HSP scoring
   >= cutoff is appended through a global atomic counter. DEFER: each owner walks its bin up to
   QUEUE hits that extend (on distinct diagonal slots: a hit on a slot already queued ends the
   walk before the rule touches that slot), queues them and stops; the work-group then runs all
   queued extensions, work-item by work-item, and the owners resume. Else the owner extends each
   hit in turn. The X-drop loops load UNROLL residue pairs per turn, then step one by one.

Diagonal state: one int per diagonal slot, (absolute stream position of the last hit) << 1 |
flag, in local memory (STATE_LOCAL) or in a per-work-group slice of global memory. A diagonal
D = q - p (p: stream position) lives in slot (D + big) mod nstate, with nstate >= qlen + window
and a multiple of WG (so a slot's owner is the owner of all its diagonals): a newer diagonal
sharing a slot has its first hit more than nstate - qlen >= window positions after any position
the older one stored, so the older state acts as an empty one (a reset or a flag reset, as the
rule does for an empty diagonal); a state older than the hit's subject start is empty too. The state is cleared once per task.

Counters: [0] next task, [1] HSPs written, [2] word hits, [3] two-hit extensions (one global
atomic each per task).

Parameters (clalign/blast/params.py, BLAST_CHUNK): WG, WORD, CHARSIZE, SEPARATOR, QBITS,
STATE_LOCAL, PV_LOCAL, BALANCE, DEFER, QUEUE, UNROLL.
</%doc>
<%
PV_WORDS = (1 << (CHARSIZE * WORD)) // 32
QMASK = (1 << QBITS) - 1
%>
<%def name="hit_slot()">\
const int sl = (int)(v >> ${QBITS});
const int q_off = (int)(v & ${QMASK}u);
const int pa = c0 + sl;
const int base = pos_base[sl];
int slot = q_off - sl + kbase;   /* (q_off - pa + big) mod nstate: big = 0 mod nstate */
if (slot < 0) slot += nstate; else if (slot >= nstate) slot -= nstate;
</%def>
<%def name="two_hit_rule(pending=0)">\
/* s_BlastAaWordFinder_TwoHit for hit i of this owner's bin, against its diagonal's state; falls
   through only for a hit that extends, with v, sl, q_off, pa, base, slot and last declared.
   pending: this owner's extensions queued in this pass (slots pend0..): a hit on one of their
   slots ends the walk before the rule reads or writes the state */
const uint v = hitbuf[i];
${hit_slot()}
% if pending:
if (${" || ".join("slot == pend%d" % m for m in range(pending))}) break;
% endif
const int st = state[slot];
const int last = st >> 1;               /* absolute; EMPTY reads below any base */
if (last < base) { state[slot] = pa << 1; continue; }
if (st & 1) {
    if (pa < last) continue;
    state[slot] = pa << 1;
    continue;
}
const int diff = pa - last;
if (diff >= window) { state[slot] = pa << 1; continue; }
if (diff < ${WORD}) continue;
</%def>
<%def name="extension()">\
__global const uchar *s = res + base;
const int slen = pos_len[sl];
const int s_off = pa - base, last_hit = last - base;
int score = 0, left_score = 0, right_d = 0;
for (int w = 0; w < ${WORD}; ++w) {
    score += matrix[query[q_off + w] * 28 + s[s_off + w]];
    if (score > left_score) { left_score = score; right_d = w + 1; }
}
const int qr = q_off + right_d, sr = s_off + right_d;
int s_last = sr;
const int qo = qr - 1, so = sr - 1;
const int nl = min(so, qo);
/* both extensions step UNROLL residues per turn: the turn's loads are issued together (indices
   clamped to the range, so never out of it), then the steps are taken one by one as BLAST+
   takes them, leaving at the step where it stops */
int kb = -1, sc = 0, mx = 0;            /* kb: steps to the left of qo at the best score */
for (int k = 0; k <= nl; k += ${UNROLL}) {
% for u in range(UNROLL):
    const int m${u} = matrix[query[qo - min(k + ${u}, nl)] * 28 + s[so - min(k + ${u}, nl)]];
% endfor
% for u in range(UNROLL):
%   if u:
    if (k + ${u} > nl) break;
%   endif
    sc += m${u};
    if (sc > mx) { mx = sc; kb = k + ${u}; }
    if (mx - sc >= dropoff) break;
% endfor
}
const int left_d = kb + 1;
left_score = mx;
int right_score = 0, right_len = 0;
const int right = left_d >= sr - (last_hit + ${WORD});
if (right) {
    const int nr = min(slen - sr, qlen - qr);
    int bi = -1, x = 0;
    sc = left_score; mx = left_score;
    for (; x < nr; x += ${UNROLL}) {
% for u in range(UNROLL):
        const int m${u} = matrix[query[qr + min(x + ${u}, nr - 1)] * 28 + s[sr + min(x + ${u}, nr - 1)]];
% endfor
% for u in range(UNROLL):
%   if u:
        if (x + ${u} >= nr) { x = nr; break; }
%   endif
        sc += m${u};
        if (sc > mx) { mx = sc; bi = x + ${u}; }
        if (sc <= 0 || mx - sc >= dropoff) { x += ${u}; break; }
% endfor
    }
    right_score = mx; right_len = bi + 1; s_last = sr + x;
}
const int best = max(left_score, right_score);
if (best >= cutoff) {
    const uint at = atomic_inc(&counters[1]);
    if (at < capacity) {
        __global int *o = out + 7 * (long)at;
        o[0] = pos_subj[sl]; o[1] = best; o[2] = qr - left_d; o[3] = sr - left_d;
        o[4] = left_d + right_len; o[5] = q_off; o[6] = s_off;
    }
}
state[slot] = right ? (((base + s_last - (${WORD} - 1)) << 1) | 1) : (pa << 1);
</%def>
/* blast_chunk: WG=${WG} WORD=${WORD} STATE_LOCAL=${int(STATE_LOCAL)} PV_LOCAL=${int(PV_LOCAL)} BALANCE=${int(BALANCE)} DEFER=${int(DEFER)} QUEUE=${QUEUE} UNROLL=${UNROLL} */
#define EMPTY (-2147483647 - 1)
% if STATE_LOCAL:
#define STATE_SPACE __local
% else:
#define STATE_SPACE __global
% endif

inline int chunk_word(__global const uchar *res, int p)
{
    int code = 0;
% for i in range(WORD):
    { uint c = res[p + ${i}]; if (c == ${SEPARATOR}u) return -1; code = (code << ${CHARSIZE}) | (int)c; }
% endfor
    return code;
}

/* Exclusive scan of one int2 per work-item over the work-group (Hillis-Steele in a[]);
   *total gets the sum. Every work-item must call it. */
inline int2 scan2(__local int2 *a, const int lid, const int2 v, int2 *total)
{
    a[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < ${WG}; off <<= 1) {
        const int2 t = lid >= off ? a[lid - off] : (int2)(0, 0);
        barrier(CLK_LOCAL_MEM_FENCE);
        a[lid] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *total = a[${WG} - 1];
    const int2 r = a[lid] - v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void blast_chunk(__global const int *task_start,   /* stream range [start, end) of each task, */
                 __global const int *task_end,     /* runs of whole subjects, longest first   */
                 __global const int *task_subj,    /* its first subject (block index) */
                 const int ntasks,
                 volatile __global uint *counters, /* next task, HSPs, word hits, extensions */
                 __global const uchar *res,        /* residues, SEPARATOR after each subject, WORD pad */
                 __global const int *subj_base, __global const int *subj_len,
                 __global const uchar *query, const int qlen,
                 __global const uint *present_g, __global const int *starts,
                 __global const int *qoffs, __global const int *matrix_g,
                 const int window, const int dropoff, const int cutoff,
                 STATE_SPACE int *state_all, const int nstate, const int big,
                 __local uint *hitbuf, const int cap,   /* cap entries (2 cap with BALANCE) */
                 __global int *out, const uint capacity)
{
    __local int matrix[28 * 28];
    __local int2 scan_buf[${WG}];
    __local int bcnt[${WG}], bstart[${WG}], bfill[${WG}], pos_base[${WG}], pos_len[${WG}],
              pos_subj[${WG}];
    __local int task;
    __local uint group_hits, group_ext;
% if DEFER:
    __local uint extq[${WG * QUEUE}];
    __local int npend[2];
    int cur = 0;
% endif
    const int lid = get_local_id(0);
% if DEFER:
    if (lid == 0) { npend[0] = 0; npend[1] = 0; }   /* read after the task loop's first barrier */
% endif
    for (int i = lid; i < 28 * 28; i += ${WG}) matrix[i] = matrix_g[i];
% if PV_LOCAL:
    __local uint present[${PV_WORDS}];
    for (int i = lid; i < ${PV_WORDS}; i += ${WG}) present[i] = present_g[i];
% else:
    __global const uint *present = present_g;
% endif
% if STATE_LOCAL:
    __local int *state = state_all;
% else:
    __global int *state = state_all + (long)get_group_id(0) * nstate;
% endif
    for (;;) {
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0) { task = (int)atomic_inc(&counters[0]); group_hits = 0; group_ext = 0; }
        for (int i = lid; i < nstate; i += ${WG}) state[i] = EMPTY;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        const int t = task;
        if (t >= ntasks) break;
        const int p_end = task_end[t];
        int subj = task_subj[t];
        uint my_hits = 0, my_ext = 0;
        for (int c0 = task_start[t]; c0 < p_end; c0 += ${WG}) {
            const int kbase = (big - c0) % nstate;      /* one modulo per chunk, not per hit */
            /* 1. hit detection */
            const int p = c0 + lid;
            int first = 0, cnt = 0, sep = 0;
            if (p < p_end) {
                sep = res[p] == ${SEPARATOR}u;
                const int code = chunk_word(res, p);
                if (code >= 0 && ((present[code >> 5] >> (code & 31)) & 1u)) {
                    first = starts[code];
                    cnt = starts[code + 1] - first;
                }
            }
            int2 total;
            const int2 ex = scan2(scan_buf, lid, (int2)(cnt, sep), &total);
            const int k = subj + ex.y;
            if (p < p_end && !sep) { pos_base[lid] = subj_base[k]; pos_len[lid] = subj_len[k]; pos_subj[lid] = k; }
            subj += total.y;
            my_hits += cnt;
            const int hpre = ex.x;
            for (int h0 = 0; h0 < total.x; h0 += cap) {
                /* 2. binning of this round's hits [h0, h1) by diagonal mod WG */
                const int h1 = min(total.x, h0 + cap);
                const int a = max(hpre, h0), b = min(hpre + cnt, h1);
                bcnt[lid] = 0;
                bfill[lid] = 0;
% if BALANCE:
                /* stage the round's hits in position order, then bin them WG at a time */
                __local uint *stage = hitbuf + cap;
                for (int j = a; j < b; ++j)
                    stage[j - h0] = ((uint)lid << ${QBITS}) | (uint)qoffs[first + j - hpre];
                barrier(CLK_LOCAL_MEM_FENCE);
                for (int i = lid; i < h1 - h0; i += ${WG}) {
                    const uint v = stage[i];
                    atomic_inc(&bcnt[((int)(v & ${QMASK}u) - (int)(v >> ${QBITS}) - c0 + big) & ${WG - 1}]);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                int2 btotal;
                bstart[lid] = scan2(scan_buf, lid, (int2)(bcnt[lid], 0), &btotal).x;
                barrier(CLK_LOCAL_MEM_FENCE);
                for (int i = lid; i < h1 - h0; i += ${WG}) {
                    const uint v = stage[i];
                    const int bin = ((int)(v & ${QMASK}u) - (int)(v >> ${QBITS}) - c0 + big) & ${WG - 1};
                    hitbuf[bstart[bin] + atomic_inc(&bfill[bin])] = v;
                }
% else:
                barrier(CLK_LOCAL_MEM_FENCE);
                for (int j = a; j < b; ++j) {
                    const int q = qoffs[first + j - hpre];
                    atomic_inc(&bcnt[(q - p + big) & ${WG - 1}]);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                int2 btotal;
                bstart[lid] = scan2(scan_buf, lid, (int2)(bcnt[lid], 0), &btotal).x;
                barrier(CLK_LOCAL_MEM_FENCE);
                for (int j = a; j < b; ++j) {
                    const int q = qoffs[first + j - hpre];
                    const int bin = (q - p + big) & ${WG - 1};
                    hitbuf[bstart[bin] + atomic_inc(&bfill[bin])] = ((uint)lid << ${QBITS}) | (uint)q;
                }
% endif
                barrier(CLK_LOCAL_MEM_FENCE);
                /* 3. the owner of bin lid: sort by position, then the two-hit rule */
                const int n0 = bstart[lid], n1 = n0 + bcnt[lid];
                for (int i = n0 + 1; i < n1; ++i) {
                    const uint v = hitbuf[i];
                    int j = i - 1;
                    while (j >= n0 && hitbuf[j] > v) { hitbuf[j + 1] = hitbuf[j]; --j; }
                    hitbuf[j + 1] = v;
                }
% if DEFER:
                /* the extensions wait for the work-group: an owner walks its bin up to QUEUE hits
                   that extend (on distinct slots), queues them and stops; all queued extensions
                   then run together, work-item by work-item, each writing its diagonal's state;
                   the owners resume after their last queued hit */
                int i = n0;
                for (;;) {
% for m in range(QUEUE - 1):
                    int pend${m} = -1;
% endfor
                    int nq = 0;
                    for (; i < n1; ++i) {
                        ${two_hit_rule(QUEUE - 1)}
                        extq[atomic_inc(&npend[cur])] = v;
% for m in reversed(range(1, QUEUE - 1)):
                        pend${m} = pend${m - 1};
% endfor
% if QUEUE > 1:
                        pend0 = slot;
% endif
                        if (++nq == ${QUEUE}) { ++i; break; }
                    }
                    barrier(CLK_LOCAL_MEM_FENCE);
                    const int n = npend[cur];
                    if (lid == 0) npend[cur ^ 1] = 0;
                    cur ^= 1;
                    if (n == 0) break;
                    for (int e = lid; e < n; e += ${WG}) {
                        const uint v = extq[e];
                        ${hit_slot()}
                        const int last = state[slot] >> 1;   /* as the rule read it: nobody wrote it since */
                        ++my_ext;
                        ${extension()}
                    }
                    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
                }
% else:
                for (int i = n0; i < n1; ++i) {
                    ${two_hit_rule()}
                    /* 4. s_BlastAaExtendTwoHit */
                    ++my_ext;
                    ${extension()}
                }
% endif
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        atomic_add(&group_hits, my_hits);
        atomic_add(&group_ext, my_ext);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            atomic_add(&counters[2], group_hits);
            atomic_add(&counters[3], group_ext);
        }
    }
}
