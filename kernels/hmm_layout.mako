<%doc>
  The S-lane database blocks (clalign.hmm.layout.plan_blocks) written on the device: one
  work-item per column slot copies its sequence's residue codes from the database's residue
  array to the rows of its column, then the END code; the host filled the buffer with PAD
  first (clEnqueueFillBuffer). Row r of column c of a block lies at byte
  off + (r / RG) * C * RG + c * RG + r % RG: from a slot's first byte ``at`` (its first row
  r0, m0 = r0 % RG), the rows up to the end of its group of RG are consecutive bytes, and the
  next group starts ``step`` = C * RG - RG bytes past the last byte of the one before.
  Neighbouring slots are neighbouring columns of one block (clalign.hmm.layout's slot order),
  so a wavefront's stores of one round fall into consecutive groups of RG bytes.

  Parameters (clalign.hmm.layout_dev.HMM_LAYOUT): END (the code after each sequence), RG.
  Arguments: res (residue codes), src (first residue of each slot's sequence), len (its
  residues), at (byte of its first row), m0 (r0 % RG), n (slots), step, data (the blocks).
</%doc>
__kernel void hmm_layout(__global const uchar *restrict res, __global const ulong *restrict src,
                         __global const uint *restrict len, __global const uint *restrict at,
                         __global const uchar *restrict m0, const uint n, const uint step,
                         __global uchar *restrict data)
{
    const uint s = (uint)get_global_id(0);
    if (s >= n)
        return;
    __global const uchar *r = res + src[s];
    const uint L = len[s];
    uint o = at[s];
    uint m = m0[s];
    for (uint j = 0; j < L; ++j) {
        data[o++] = r[j];
        if (++m == ${RG}) {
            m = 0;
            o += step;
        }
    }
    data[o] = ${END};
}
