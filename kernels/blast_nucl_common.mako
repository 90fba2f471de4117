<%doc>
Helpers shared by BLASTN's device kernels (blast_nucl.mako, blast_nucl_ungapped.mako,
blast_nucl_gapped.mako), included by each; the includer defines SENTINEL (the query letter
outside the batch) first.
</%doc>
/* Segment of block scan position p: the last g with pos0[g] <= p. */
inline int segment_of(__global const uint *pos0, const int nseg, const uint p)
{
    int lo = 0, hi = nseg;
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (pos0[mid] <= p) lo = mid; else hi = mid;
    }
    return lo;
}

/* BSearchContextInfo: the last context starting at or before pos. */
inline int context_of(__global const int *ctx_off, const int nctx, const int pos)
{
    int lo = 0, hi = nctx;
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (ctx_off[mid] <= pos) lo = mid; else hi = mid;
    }
    return lo;
}

/* Base i of a packed NCBI2na subject (first base in the high bits of its byte). */
inline uint sbase(__global const uchar *s, const int i)
{
    return (s[i >> 2] >> (6 - 2 * (i & 3))) & 3u;
}

/* Batch letter i, SENTINEL outside the batch. */
inline uint qcode(__global const uchar *q, const int i, const int qn)
{
    return (i >= 0 && i < qn) ? (uint)q[i] : SENTINEL;
}
