<%doc>
  Throughput kernels for simd.mako (tools/device_simd.py): kernel b_<op>_<width> runs a
  dependent chain of ITERS calls of cla_<op>_<width> per work-item on words held in
  registers and writes the last value, so nothing can be dropped. Inputs: in[k + j*n] for
  j = 0..4 (n = global size): x = in[k], y_j = in[k + (j+1)*n]. Step t (j = t mod 4):
    binary ops   x = op(x, y_j)                 ternary ops  x = op(x, y_j, y_(j+1 mod 4))
    get, gets    x = op(x, j mod lanes) + y_j   set          x = set(x, j mod lanes, x + y_j)
    splat, hmax* x = op(x) ^ y_j                imad (baseline, one 32-bit IMAD) x = x*y_j + y_(j+1)
  (get, gets and set carry one extra add so that each step depends on the previous one:
  for get/gets its carries reach the lane the next step reads; for set the new lane comes
  from x itself, so x is never wholly overwritten by constants.)
  Parameters: ITERS (multiple of 4), ONLY ("all" or one "<op>_<width>" to build a single
  kernel, used to find which op fails to build), plus the SIMD ones.
</%doc>
<%include file="simd.mako"/>
<%
    binary = ("add", "sub", "addus", "subus", "addss", "subss", "maxu", "minu", "maxs", "mins",
              "maxzs", "cmpgtu", "cmpgts", "cmpgeu", "cmpeq")
    ternary = ("max3u", "max3s", "max3zs", "addmaxs")
    lane = ("get", "gets", "set", "splat", "hmaxu", "hmaxs")

    def step(op, N, NL, j):
        y, y1 = "y%d" % j, "y%d" % ((j + 1) % 4)
        f = "cla_%s_%s" % (op, N)
        if op in binary:
            return "x = %s(x, %s);" % (f, y)
        if op in ternary:
            return "x = %s(x, %s, %s);" % (f, y, y1)
        if op in ("get", "gets"):
            return "x = (uint)%s(x, %du) + %s;" % (f, j % NL, y)
        if op == "set":
            return "x = %s(x, %du, x + %s);" % (f, j % NL, y)
        return "x = (uint)%s(x) ^ %s;" % (f, y)
%>
% for N, NL in (("8x4", 4), ("16x2", 2)):
%   for op in binary + ternary + lane:
%     if ONLY in ("all", op + "_" + N):
__kernel void b_${op}_${N}(__global const uint *in, __global uint *out)
{
    const uint k = get_global_id(0), n = get_global_size(0);
    uint x = in[k], y0 = in[k + n], y1 = in[k + 2 * n], y2 = in[k + 3 * n], y3 = in[k + 4 * n];
    #pragma unroll 4
    for (int t = 0; t < ${ITERS // 4}; ++t) {
        ${step(op, N, NL, 0)} ${step(op, N, NL, 1)}
        ${step(op, N, NL, 2)} ${step(op, N, NL, 3)}
    }
    out[k] = x;
}
%     endif
%   endfor
% endfor
% if ONLY in ("all", "imad"):
__kernel void b_imad(__global const uint *in, __global uint *out)
{
    const uint k = get_global_id(0), n = get_global_size(0);
    uint x = in[k], y0 = in[k + n], y1 = in[k + 2 * n], y2 = in[k + 3 * n], y3 = in[k + 4 * n];
    #pragma unroll 4
    for (int t = 0; t < ${ITERS // 4}; ++t) {
        x = x * y0 + y1; x = x * y1 + y2; x = x * y2 + y3; x = x * y3 + y0;
    }
    out[k] = x;
}
% endif
