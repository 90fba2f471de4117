<%doc>
BLASTN per-word-start work on the device (clalign/blast/nucl_device_ungapped.py is the host):
BLAST+ 2.12's s_BlastnDiag{Table,Hash}ExtendInitialHit for one-hit searches (window 0) on the
mini-extension's word starts of one block (kernels/blast_nucl.mako's nscan_extend output, rows
(block scan position, table index, q, s) in scan order).

The diagonal store's state that a word start reads is a function of its key alone: the folded
cell (s + DLEN - q) & (DLEN - 1) of the array store, or the bucket of the hash store (chains are
per bucket). So each key's starts are processed in scan order, keys in parallel, and within a
key, pieces of starts in parallel by speculation (nucl_device_ungapped's docstring argues it):

1. nw_hist: work-group g counts the keys (key mod NBUCKET) of rows g*TILE .. g*TILE+TILE-1 in a
   local histogram, written to counts[key * ngroups + g]; the host takes the exclusive sum.
2. nw_scatter: a stable counting sort: each row goes to offsets[key * ngroups + g] + (rows of
   its key before it in the tile), so perm lists every key's rows in scan order.
3. nw_spec: one work-item per piece (PIECE starts of one key) as if the store entered the piece
   with enough dead cells (SLOTS private cells); per start: diagonal test, word check (WORD >
   WIDTH, s_TypeOfWord), ungapped extension (EXACT: s_NuclUngappedExtendExact, else the
   byte-wise s_NuclUngappedExtend with the exact redo at the context's reduced cutoff), saved
   hits written (segment, row, q, s, q_start, s_start, length, score, context, piece) through
   counters[0]; what the host and nw_redo need to check the assumption, and the cells' final state.
4. nw_redo: one work-item per key with a piece the host did not keep: the real store from the
   block's start, piece by piece; a piece whose speculation the real store bears out is kept
   (its final cells, recorded by nw_spec, written into the store), any other searched again.

Positions are block positions (segment offset segoff[g] + subject offset): they grow from
segment to segment as BLAST+'s running diagonal offset does, so earlier segments' entries never
block and are stale. Hash store (HASH): a bucket's chain is an array of cells, the head last;
a block starts with k_in[b] stale cells (the chain's length after the previous block: only that
length, not the stale cells' contents, can change a later decision); resets[g] counts BLAST+'s
store clears (Blast_ExtendWordExit past INT4_MAX / 4) before segment g (resets[nseg]: after the
last); k_out[b] is the chain's length at the end. Array store: levels (DLEN cells, zero).

Parameters (clalign/blast/params.py, BLASTN_UNGAPPED): WG, TILE, WIDTH, WORD, HASH, EXACT,
SLOTS, NBUCKET, HASH_MUL, ROW, SENTINEL (PIECE is the host's).
</%doc>
/* blast_nucl_ungapped: WG=${WG} TILE=${TILE} WIDTH=${WIDTH} WORD=${WORD} HASH=${int(HASH)} EXACT=${int(EXACT)} SLOTS=${SLOTS} NBUCKET=${NBUCKET} */
#define SENTINEL ${SENTINEL}
#define STALE (-(1 << 30))
#define ROW ${ROW}
#define NOWRITE (-0x7FFFFFFF - 1)

<%include file="blast_nucl_common.mako"/>

inline uint key_of(const int q, const int s, const int dlen)
{
% if HASH:
    return ((uint)(s - q) * ${HASH_MUL}u) % ${NBUCKET}u;
% else:
    return (uint)((s + dlen - q) & (dlen - 1)) % ${NBUCKET}u;
% endif
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nw_hist(__global const int4 *words, const uint n, const int dlen, __global uint *counts,
             const uint ngroups)
{
    __local uint h[${NBUCKET}];
    const int lid = get_local_id(0);
    const uint g = get_group_id(0);
    for (int k = lid; k < ${NBUCKET}; k += ${WG}) h[k] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint a = g * ${TILE}, e = min(a + ${TILE}u, n);
    for (uint i = a + lid; i < e; i += ${WG}) {
        const int4 w = words[i];
        atomic_inc(&h[key_of(w.z, w.w, dlen)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = lid; k < ${NBUCKET}; k += ${WG}) counts[k * ngroups + g] = h[k];
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nw_scatter(__global const int4 *words, const uint n, const int dlen,
                __global const uint *offsets, const uint ngroups, __global uint *perm)
{
    __local uint run[${NBUCKET}];
    __local uint keys[${WG}];
    const int lid = get_local_id(0);
    const uint g = get_group_id(0);
    for (int k = lid; k < ${NBUCKET}; k += ${WG}) run[k] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint a = g * ${TILE}, e = min(a + ${TILE}u, n);
    for (uint base = a; base < e; base += ${WG}) {
        const uint i = base + lid;
        uint key = 0xFFFFFFFFu;
        if (i < e) {
            const int4 w = words[i];
            key = key_of(w.z, w.w, dlen);
        }
        keys[lid] = key;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i < e) {
            uint rank = 0;
            for (int j = 0; j < lid; j++) rank += keys[j] == key ? 1u : 0u;
            perm[offsets[key * ngroups + g] + run[key] + rank] = i;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i < e) atomic_inc(&run[key]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

% if WORD > WIDTH:
/* s_IsSeedMasked negated: the subject's WIDTH-base word at s_pos is indexed at q_pos. */
inline int in_table(__global const uint *cell_start, __global const int *q_offs,
                    __global const uchar *s, const int s_pos, const int q_pos)
{
    uint code = 0;
    for (int i = 0; i < ${WIDTH}; i++) code = (code << 2) | sbase(s, s_pos + i);
    for (uint k = cell_start[code]; k < cell_start[code + 1]; k++)
        if (q_offs[k] == q_pos) return 1;
    return 0;
}

/* s_TypeOfWord for a single word, masks on (nucl_words._type_of_word). */
inline int type_of_word(int *q_off, int *s_off, int *extended, __global const uint *cell_start,
                        __global const int *q_offs, __global const uchar *s, const int s_range,
                        __global const int *ctx_off, __global const int *ctx_len, const int nctx)
{
    int q_end = *q_off + ${WORD}, s_end = *s_off + ${WORD};
    const int c = context_of(ctx_off, nctx, q_end);
    const int q_range = ctx_off[c] + ctx_len[c];
    if (!in_table(cell_start, q_offs, s, s_end - ${WIDTH}, q_end - ${WIDTH})) return 0;
    while (!in_table(cell_start, q_offs, s, *s_off, *q_off)) {
        (*s_off)++;
        (*q_off)++;
    }
    const int ext_to = ${WORD} - (q_end - *q_off);
    if (ext_to > min(q_range - q_end, s_range - s_end)) return 0;
    q_end += ext_to;
    s_end += ext_to;
    for (int s_pos = s_end - ${WIDTH}, q_pos = q_end - ${WIDTH}; s_pos > *s_off;
         s_pos -= ${WIDTH}, q_pos -= ${WIDTH})
        if (!in_table(cell_start, q_offs, s, s_pos, q_pos)) return 0;
    *extended = ext_to;
    return 1;
}
% endif

/* s_NuclUngappedExtendExact: (q_start, s_start, length, score). */
inline int4 ungapped_exact(__global const uchar *q, const int qn, __global const uchar *s,
                           const int s_len, __global const int *matrix, const int q_off,
                           const int s_off, const int X)
{
    int score = 0, total = 0, q_beg = q_off;
    const int left_bound = q_off < s_off ? s_off - q_off : 0;
    for (int p = s_off; p > left_bound;) {
        p--;
        const int qi = q_off - (s_off - p);
        total += matrix[qcode(q, qi, qn) * 16 + sbase(s, p)];
        if (total > 0) {
            q_beg = qi;
            score += total;
            total = 0;
        } else if (total < X) break;
    }
    const int s_start = s_off - (q_off - q_beg);
    const int end = s_off + min(qn - q_off, s_len - s_off);
    int q_end = q_off, x_now = X;
    total = 0;
    for (int p = s_off; p < end;) {
        const int qi = q_off + (p - s_off);
        total += matrix[qcode(q, qi, qn) * 16 + sbase(s, p)];
        p++;
        if (total > 0) {
            q_end = qi + 1;
            score += total;
            x_now = max(-score, X);
            total = 0;
        } else if (total < x_now) break;
    }
    return (int4)(q_beg, s_start, q_end - q_beg, score);
}

% if not EXACT:
inline uint qbyte(__global const uchar *q, const int i, const int qn)
{
    return ((qcode(q, i, qn) << 6) | (qcode(q, i + 1, qn) << 4) | (qcode(q, i + 2, qn) << 2)
            | qcode(q, i + 3, qn)) & 0xFFu;
}

/* s_NuclUngappedExtend: bytes of 4 bases scored by table[query byte ^ subject byte]. */
inline int4 ungapped_approx(__global const uchar *q, const int qn, __global const uchar *s,
                            const int s_len, __global const int *matrix,
                            __global const int *table, const int q_off, const int s_match_end,
                            const int s_off, const int X, const int reduced)
{
    const int pad = (4 - s_off % 4) % 4;
    const int q_ext = q_off + pad, s_ext = s_off + pad;
    int score = 0, total = 0, new_q = q_ext, qp = q_ext, sb = s_ext / 4;
    for (int k = min(q_ext, s_ext) / 4; k > 0; k--) {
        total += table[qbyte(q, qp - 4, qn) ^ (uint)s[sb - 1]];
        if (total > 0) {
            new_q = qp - 4;
            score += total;
            total = 0;
        }
        if (total < X) break;
        qp -= 4;
        sb--;
    }
    const int q_start = new_q;
    const int s_start = s_ext - (q_ext - q_start);
    qp = q_ext;
    sb = s_ext / 4;
    total = 0;
    new_q = qp;
    for (int k = min(qn - q_ext, s_len - s_ext) / 4; k > 0; k--) {
        total += table[qbyte(q, qp, qn) ^ (uint)s[sb]];
        if (total > 0) {
            new_q = qp + 3;
            score += total;
            total = 0;
        }
        if (total < X) break;
        qp += 4;
        sb++;
    }
    if (score >= reduced) return ungapped_exact(q, qn, s, s_len, matrix, q_off, s_off, X);
    return (int4)(q_start, s_start, max(s_match_end - s_start, new_q - q_start + 1), score);
}
% endif

#define SEARCH_ARGS __global const uchar *packed, __global const uint *seg_byte, \
    __global const int *seg_len, __global const int *segoff, __global const uchar *q, const int qn, \
    __global const int *ctx_off, __global const int *ctx_len, const int nctx, \
    __global const uint *cell_start, __global const int *q_offs, __global const int *matrix, \
    __global const int *table, __global const int *cutoff, __global const int *xdrop, \
    __global const int *reduced, volatile __global uint *counters, __global int *out, \
    const uint capacity
#define SEARCH_PASS packed, seg_byte, seg_len, segoff, q, qn, ctx_off, ctx_len, nctx, cell_start, \
    q_offs, matrix, table, cutoff, xdrop, reduced, counters, out, capacity

/* A start that passed the diagonal test: word check, ungapped extension, the saved hit (tagged);
   the end to write on its diagonal, or NOWRITE (the word check failed: nothing written). */
inline int extend_start(const int g, const uint i, int qo, int so, const int tag, SEARCH_ARGS)
{
    __global const uchar *s = packed + seg_byte[g];
    const int s_len = seg_len[g], off = segoff[g];
    int s_end = so + ${WORD}, s_end_pos = s_end + off;
% if WORD > WIDTH:
    int extended = 0;
    if (!type_of_word(&qo, &so, &extended, cell_start, q_offs, s, s_len, ctx_off, ctx_len, nctx))
        return NOWRITE;
    s_end += extended;
    s_end_pos += extended;
% endif
    const int c = context_of(ctx_off, nctx, qo);
% if EXACT:
    const int4 r = ungapped_exact(q, qn, s, s_len, matrix, qo, so, -xdrop[c]);
% else:
    const int4 r = ungapped_approx(q, qn, s, s_len, matrix, table, qo, s_end, so, -xdrop[c],
                                   reduced[c]);
% endif
    if (r.w >= cutoff[c]) {
        const uint at = atomic_inc(&counters[0]);
        if (at < capacity) {
            __global int *o = out + (size_t)at * ROW;
            o[0] = g;
            o[1] = (int)i;
            o[2] = qo;
            o[3] = so;
            o[4] = r.x;
            o[5] = r.y;
            o[6] = r.z;
            o[7] = r.w;
            o[8] = c;
            o[9] = tag;
        }
        s_end_pos = r.z + r.y + off;
    }
    return s_end_pos;
}

/* Piece cuts: work-item m takes starts m*window .. (m+1)*window-1 of the sorted order and
   names the first whose block position is at least gap past the previous start's (or whose
   key differs), 0 if none: the host cuts each key's run there (and at the keys' bounds). */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nw_cuts(__global const int4 *words, __global const uint *perm, __global const uint *pos0,
             const int nseg, __global const int *segoff, const int dlen, const uint n,
             const uint window, const int gap, __global uint *cuts)
{
    const uint m = get_global_id(0);
    const uint a = m * window, e = min(a + window, n);
    if (a >= n) return;
    uint got = 0;
    int4 w = words[perm[a > 0 ? a - 1 : 0]];
    int prev = w.w + segoff[segment_of(pos0, nseg, (uint)w.x)];
    uint pkey = key_of(w.z, w.w, dlen);
    for (uint j = max(a, 1u); j < e && !got; j++) {
        w = words[perm[j]];
        const int pos = w.w + segoff[segment_of(pos0, nseg, (uint)w.x)];
        const uint key = key_of(w.z, w.w, dlen);
        if (key != pkey || pos - prev >= gap) got = j;
        prev = pos;
        pkey = key;
    }
    cuts[m] = got;
}

/* One work-item per piece (starts lo[p] .. lo[p+1]-1 of one key, in scan order), as if the store
   entered it with enough dead cells (ends at or before every start of the piece): the hash
   chain's SLOTS first cells, head first, or the array cells the piece writes. Records per piece
   (cells used, SLOTS + 1 when they did not fit; greatest end written; least start; whether a
   store clear precedes a start) and its cells' final (diagonal or array cell, end), head first,
   in slots[p * SLOTS ..]: nw_redo keeps a piece's hits when the real store did enter it so, and
   writes those cells into the store instead of searching the piece again. */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nw_spec(__global const int4 *words, __global const uint *perm, __global const uint *pos0,
             const int nseg, __global const int *resets, const int dlen, __global const uint *lo,
             const uint npieces, __global int2 *slots, __global int4 *pinfo, SEARCH_ARGS)
{
    const uint p = get_global_id(0);
    if (p >= npieces) return;
    int sd[${SLOTS}], sv[${SLOTS}];
    int used = 0, max_end = STALE, min_s = 0x7FFFFFFF, cleared = 0;
    for (uint j = lo[p]; j < lo[p + 1]; j++) {
        const uint i = perm[j];
        const int4 w = words[i];
        const int g = segment_of(pos0, nseg, (uint)w.x);
        cleared |= resets[g] != 0;
        const int diag = w.w - w.z, s_off_pos = w.w + segoff[g];
% if HASH:
        const int id = diag;
% else:
        const int id = (w.w + dlen - w.z) & (dlen - 1);
% endif
        min_s = min(min_s, s_off_pos);
        int last = 0;
        for (int k = 0; k < used; k++)
            if (sd[k] == id) {
                last = sv[k];
                break;
            }
        if (s_off_pos < last) continue;
        const int e = extend_start(g, i, w.z, w.w, (int)p, SEARCH_PASS);
        if (e == NOWRITE) continue;
        max_end = max(max_end, e);
        int k = 0;
% if HASH:
        while (k < used && sd[k] != id && s_off_pos - sv[k] <= 1 - ${WORD}) k++;
% else:
        while (k < used && sd[k] != id) k++;
% endif
        if (k == used) {
            if (used == ${SLOTS}) {      /* more cells than slots: the piece is redone */
                used = ${SLOTS} + 1;
                break;
            }
            used++;
        }
        sd[k] = id;
        sv[k] = e;
    }
    __global int2 *o = slots + (size_t)p * ${SLOTS};
    for (int k = 0; k < min(used, ${SLOTS}); k++)
        o[k] = (int2)(sd[k], sv[k]);
    pinfo[p] = (int4)(used, max_end, min_s, cleared);
}

/* One work-item per key t (keys[t], its pieces pk[t].x .. pk[t].y-1) with a piece the host did
   not keep: the store's real state from the block's start, piece by piece in scan order. A
   piece is kept (keep[p] = 1) when the real store enters it as nw_spec assumed: no store clear
   before it in the block, every end written earlier in its key at or before its least start,
   its cells within SLOTS and (hash) within the chain's length, which then stays; its cells'
   final state (slots) is written into the store. Any other piece is searched again start by
   start (keep[p] = 0, hits tagged -1, its starts counted in counters[1]). Hash: the chain of
   cells of its key, head last, entering with k_in stale cells; resets[g] counts BLAST+'s store
   clears before segment g (resets[nseg]: after the last); k_out gets the chain's length.
   Array: levels (zero at the block's start; a clear zeroes the key's cells). */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nw_redo(__global const int4 *words, __global const uint *perm, __global const uint *pos0,
             const int nseg, __global const int *resets, const int dlen, __global const uint *lo,
             __global const uint *keys, __global const uint2 *pk, const uint nkeys,
             __global const int4 *pinfo, __global const int2 *slots, __global int *levels,
             __global int *cdiag, __global int *clevel, __global const uint *cbase,
             __global const int *k_in, __global int *k_out, __global uchar *keep, SEARCH_ARGS)
{
    const uint t = get_global_id(0);
    if (t >= nkeys) return;
    const uint b = keys[t];
    int epoch = 0, maxe = STALE;
% if HASH:
    __global int *cd = cdiag + cbase[t];
    __global int *cv = clevel + cbase[t];
    int len = k_in[b];
    for (int k = 0; k < len; k++) {
        cd[k] = 0;
        cv[k] = STALE;
    }
% endif
    for (uint p = pk[t].x; p < pk[t].y; p++) {
        const int4 info = pinfo[p];
% if HASH:
        const int room = min(len, ${SLOTS});
% else:
        const int room = ${SLOTS};
% endif
        if (info.w == 0 && info.x <= room && maxe <= info.z) {
            keep[p] = 1;
            __global const int2 *c = slots + (size_t)p * ${SLOTS};
            for (int k = 0; k < info.x; k++) {
% if HASH:
                cd[len - 1 - k] = c[k].x;
                cv[len - 1 - k] = c[k].y;
% else:
                levels[c[k].x] = c[k].y;
% endif
            }
            maxe = max(maxe, info.y);
            continue;
        }
        keep[p] = 0;
        atomic_add(&counters[1], lo[p + 1] - lo[p]);
        for (uint j = lo[p]; j < lo[p + 1]; j++) {
            const uint i = perm[j];
            const int4 w = words[i];
            const int g = segment_of(pos0, nseg, (uint)w.x);
            if (resets[g] != epoch) {       /* BLAST+ cleared its store before this segment */
                epoch = resets[g];
% if HASH:
                len = 0;
% else:
                for (int c = (int)b; c < dlen; c += ${NBUCKET}) levels[c] = 0;
% endif
            }
            const int diag = w.w - w.z, s_off_pos = w.w + segoff[g];
% if HASH:
            int last = 0;
            for (int k = len - 1; k >= 0; k--)
                if (cd[k] == diag) {
                    last = cv[k];
                    break;
                }
            const int e = s_off_pos < last ? NOWRITE : extend_start(g, i, w.z, w.w, -1, SEARCH_PASS);
            if (e == NOWRITE) continue;
            maxe = max(maxe, e);
            int k = len - 1;
            for (; k >= 0; k--)
                if (cd[k] == diag || s_off_pos - cv[k] > 1 - ${WORD}) break;
            if (k < 0) k = len++;
            cd[k] = diag;
            cv[k] = e;
% else:
            const int cell = (w.w + dlen - w.z) & (dlen - 1);
            const int e = s_off_pos < levels[cell] ? NOWRITE
                                                   : extend_start(g, i, w.z, w.w, -1, SEARCH_PASS);
            if (e == NOWRITE) continue;
            maxe = max(maxe, e);
            levels[cell] = e;
% endif
        }
    }
% if HASH:
    if (resets[nseg] != epoch) len = 0;
    k_out[b] = len;
% endif
}
