<%doc>
BLASTN device word finding, G-BLASTN's three kernels (clalign/blast/nucl_device.py is the host).

The block is the 2-bit packed subject stream (NCBI2na, 4 bases a byte, first base in the high
bits) of a run of subject chunks ("segments", the pieces BLAST+ scans: whole subjects or
5,000,000-base chunks of longer ones, each starting on a byte). Segment g starts at byte
seg_byte[g], has seg_len[g] bases and scan positions pos0[g] .. pos0[g+1]-1 of the block; scan
position j of a segment is subject offset j * STEP. Bytes past a segment's last byte read 0, as
the CPU path's padded subject does.

1. nscan_scan: one work-item per scan position reads the WIDTH-base word there and tests its bit
   of the presence vector (one bit per word code: set when the code indexes at least one query
   offset). Control flow is the same for every work-item; matched positions go to a local buffer
   in position order (a work-group prefix sum), flushed to global memory after one global
   atomic per work-group.
2. nscan_lookup: one work-item per matched position expands it into (position, k) pairs, k the
   index of a query offset in q_offs[cell_start[code] .. cell_start[code + 1]); the work-group's
   pairs, in order, get their global room with one global atomic.
3. nscan_extend: one work-item per pair runs the table's mini-extension (EXT: 0 direct, 1
   s_BlastNaExtend (its aligned variant gives the same words), 2 s_BlastSmallNaExtend, 3
   s_BlastSmallNaExtendAlignedOneByte) and writes surviving word starts (position, k, q, s)
   in order through a local buffer and one global atomic per work-group.

Each kernel also writes its work-group's run (global start, count). The atomics leave the runs in
any order; nscan_dest sums the counts in work-group order (one work-group) and nscan_order
copies every run to its place, so each stage's output is in BLAST+'s scan order (subject offset, then the table's
order of the cell's query offsets) and the next stage keeps it.

Counters: [0] matched positions, [1] pairs, [2] survivors. A kernel whose output is full still
counts (the host reruns it with room for all).

Parameters (clalign/blast/params.py, BLASTN_SCAN): WG, WIDTH, STEP, WORD, EXT, SENTINEL.
</%doc>
/* blast_nucl: WG=${WG} WIDTH=${WIDTH} STEP=${STEP} WORD=${WORD} EXT=${EXT} */
#define SENTINEL ${SENTINEL}

<%include file="blast_nucl_common.mako"/>

inline uint sbyte(__global const uchar *s, const int k, const int nbytes)
{
    return k < nbytes ? (uint)s[k] : 0u;
}

/* The WIDTH-base word at base offset off: the four bytes from off's byte hold it (WIDTH <= 12,
   off % 4 <= 3); the block carries 4 pad bytes, so the read stays inside it. */
inline uint word_code(__global const uchar *s, const int off)
{
    __global const uchar *b = s + (off >> 2);
    const uint w = ((uint)b[0] << 24) | ((uint)b[1] << 16) | ((uint)b[2] << 8) | (uint)b[3];
    return (w >> (${32 - 2 * WIDTH} - 2 * (off & 3))) & ${(1 << (2 * WIDTH)) - 1}u;
}

/* Exclusive prefix sum of one uint per work-item (Hillis-Steele in a[]); *total gets the sum.
   Every work-item must call it. */
inline uint group_scan(__local uint *a, const int lid, const uint v, uint *total)
{
    a[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < ${WG}; off <<= 1) {
        const uint t = lid >= off ? a[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        a[lid] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *total = a[${WG} - 1];
    const uint r = a[lid] - v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* dest[g] = the counts of runs 0..g-1: one work-group walks the n runs WG at a time. */
__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nscan_dest(__global const uint2 *runs, const uint n, __global uint *dest)
{
    __local uint sc[${WG}];
    const int lid = get_local_id(0);
    uint carry = 0u;
    for (uint a = 0; a < n; a += ${WG}) {
        const uint i = a + lid;
        uint total;
        const uint at = group_scan(sc, lid, i < n ? runs[i].y : 0u, &total);
        if (i < n) dest[i] = carry + at;
        carry += total;
    }
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nscan_order(__global const uint *src, __global uint *dst, __global const uint2 *runs,
                 __global const uint *dest, const int width)
{
    const uint2 r = runs[get_group_id(0)];
    const uint d = dest[get_group_id(0)];
    for (uint i = get_local_id(0); i < r.y * width; i += ${WG})
        dst[d * width + i] = src[r.x * width + i];
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nscan_scan(__global const uchar *packed, __global const uint *seg_byte,
                __global const uint *pos0, const int nseg, const uint npos,
                __global const uint *pv, volatile __global uint *counters,
                __global uint2 *matched, __global uint2 *runs)
{
    __local uint sc[${WG}];
    __local uint2 codes[${WG}];
    __local uint base;
    const int lid = get_local_id(0);
    const uint p = get_global_id(0);
    const uint pp = p < npos ? p : npos - 1;
    const int g = segment_of(pos0, nseg, pp);
    const int off = (int)(pp - pos0[g]) * ${STEP};
    const uint code = word_code(packed + seg_byte[g], off);
    const uint hit = p < npos ? (pv[code >> 5] >> (code & 31)) & 1u : 0u;
    uint total;
    const uint at = group_scan(sc, lid, hit, &total);
    if (hit) codes[at] = (uint2)(p, code);
    if (lid == 0) {
        base = total ? atomic_add(&counters[0], total) : 0u;
        runs[get_group_id(0)] = (uint2)(base, total);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < total; i += ${WG}) matched[base + i] = codes[i];
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nscan_lookup(__global const uint2 *matched, const uint nmatched,
                  __global const uint *cell_start, volatile __global uint *counters,
                  __global uint2 *pairs, const uint capacity, __global uint2 *runs)
{
    __local uint sc[${WG}];
    __local uint base;
    const int lid = get_local_id(0);
    const uint i = get_global_id(0);
    uint a = 0, n = 0, p = 0;
    if (i < nmatched) {
        const uint2 m = matched[i];
        p = m.x;
        a = cell_start[m.y];
        n = cell_start[m.y + 1] - a;
    }
    uint total;
    const uint mine = group_scan(sc, lid, n, &total);
    if (lid == 0) {
        base = total ? atomic_add(&counters[1], total) : 0u;
        runs[get_group_id(0)] = (uint2)(base, total);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < n; k++) {
        const uint at = base + mine + k;
        if (at < capacity) pairs[at] = (uint2)(p, a + k);
    }
}

% if EXT >= 2:
inline int left_matches(const uint x)
{
    int k = 0;
    while (k < 4 && ((x >> (2 * k)) & 3u) == 0) k++;
    return k;
}

inline int right_matches(const uint x)
{
    int k = 0;
    while (k < 4 && ((x >> (6 - 2 * k)) & 3u) == 0) k++;
    return k;
}
% endif

/* Word start of lookup hit (q_off, s_off), or q = -1. */
inline int2 mini_extend(__global const uchar *q, const int qn, __global const uchar *cq,
                        __global const int *ctx_off, __global const int *ctx_len, const int nctx,
                        __global const uchar *s, const int nbytes, const int s_range,
                        const int q_off, const int s_off)
{
% if EXT == 0:
    return (int2)(q_off, s_off);
% elif EXT == 1:
    const int ext_to = ${WORD - WIDTH};
    int left = 0;
    const int lim = min(ext_to, s_off);
    while (left < lim && sbase(s, s_off - 1 - left) == qcode(q, q_off - 1 - left, qn)) left++;
    if (left < ext_to) {
        const int need = ext_to - left;
        if (s_off + ${WIDTH} + need > s_range) return (int2)(-1, -1);
        int right = 0;
        while (right < need && sbase(s, s_off + ${WIDTH} + right) == qcode(q, q_off + ${WIDTH} + right, qn))
            right++;
        if (left + right < ext_to) return (int2)(-1, -1);
    }
    return (int2)(q_off - left, s_off - left);
% else:
    const int c = context_of(ctx_off, nctx, q_off);
    const int c0 = ctx_off[c], c1 = ctx_off[c] + ctx_len[c];
%   if EXT == 2:
    int ext_max = min(min(${WORD - WIDTH}, s_off), q_off - c0);
    const int rsdl = 4 - s_off % 4;
    const int so0 = s_off + rsdl, qo0 = q_off + rsdl;
    ext_max += rsdl;
    int left = 0, so = so0, qo = qo0;
    while (left < ext_max) {
        const int b = left_matches((uint)cq[3 + qo - 4] ^ sbyte(s, so / 4 - 1, nbytes));
        left += b;
        if (b < 4) break;
        qo -= 4;
        so -= 4;
    }
    left = min(left, ext_max);
    ext_max = min(min(${WORD} - left, s_range - so0), c1 - qo0);
    int right = 0;
    so = so0;
    qo = qo0;
    while (right < ext_max) {
        const int b = right_matches((uint)cq[3 + qo] ^ sbyte(s, so / 4, nbytes));
        right += b;
        if (b < 4) break;
        qo += 4;
        so += 4;
    }
    right = min(right, ext_max);
    if (left + right < ${WORD}) return (int2)(-1, -1);
    return (int2)(qo0 - left, so0 - left);
%   else:
    const int ext_to = ${WORD - WIDTH};
    int left = 0;
    if (s_off > 0 && q_off > 0) {
        left = left_matches((uint)cq[3 + q_off - 4] ^ sbyte(s, s_off / 4 - 1, nbytes));
        left = min(min(left, ext_to), q_off - c0);
    }
    if (left < ext_to && q_off + ${WIDTH} < qn) {
        int right = right_matches((uint)cq[3 + q_off + ${WIDTH}] ^ sbyte(s, (s_off + ${WIDTH}) / 4, nbytes));
        right = min(min(right, s_range - (s_off + ${WIDTH})), c1 - (q_off + ${WIDTH}));
        if (left + right < ext_to) return (int2)(-1, -1);
    }
    return (int2)(q_off - left, s_off - left);
%   endif
% endif
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void nscan_extend(__global const uint2 *pairs, const uint npairs,
                  __global const uchar *packed, __global const uint *seg_byte,
                  __global const int *seg_len, __global const uint *pos0, const int nseg,
                  __global const int *q_offs, __global const uchar *q, const int qn,
                  __global const uchar *cq, __global const int *ctx_off,
                  __global const int *ctx_len, const int nctx,
                  volatile __global uint *counters, __global int4 *out, const uint capacity,
                  __global uint2 *runs)
{
    __local uint sc[${WG}];
    __local int4 buf[${WG}];
    __local uint base;
    const int lid = get_local_id(0);
    const uint i = get_global_id(0);
    int4 row = (int4)(0, 0, -1, -1);
    if (i < npairs) {
        const uint2 pr = pairs[i];
        const int g = segment_of(pos0, nseg, pr.x);
        const int s_off = (int)(pr.x - pos0[g]) * ${STEP};
        const int len = seg_len[g];
        const int2 w = mini_extend(q, qn, cq, ctx_off, ctx_len, nctx, packed + seg_byte[g],
                                   (len + 3) / 4, len, q_offs[pr.y], s_off);
        row = (int4)((int)pr.x, (int)pr.y, w.x, w.y);
    }
    const uint keep = row.z >= 0 ? 1u : 0u;
    uint total;
    const uint at = group_scan(sc, lid, keep, &total);
    if (keep) buf[at] = row;
    if (lid == 0) {
        base = total ? atomic_add(&counters[2], total) : 0u;
        runs[get_group_id(0)] = (uint2)(base, total);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = lid; k < total; k += ${WG})
        if (base + k < capacity) out[base + k] = buf[k];
}
