<%doc>
  Test kernels for simd.mako: one kernel per function, applied element-wise.
  Kernel t_<op>_<width>(a, b, c, out, n): out[k] = cla_<op>_<width>(...) where binary ops take
  (a, b), ternary ops (a, b, c), get/gets (a, b & (lanes-1)), set (a, b & (lanes-1), c),
  splat (a), hmaxu/hmaxs (a). Signed results (gets, hmaxs) are stored as their uint bits.
  Only the SIMD parameters; rendered by clalign.simd.harness.
</%doc>
<%include file="simd.mako"/>
<%include file="simd.mako"/>
<%
    binary = ("add", "sub", "addus", "subus", "addss", "subss", "maxu", "minu", "maxs", "mins",
              "maxzs", "cmpgtu", "cmpgts", "cmpgeu", "cmpeq")
    ternary = ("max3u", "max3s", "max3zs", "addmaxs")
    unary = ("splat", "hmaxu", "hmaxs")
%>
% for N, NL in (("8x4", 4), ("16x2", 2)):
%   for op in binary:
__kernel void t_${op}_${N}(__global const uint *a, __global const uint *b, __global const uint *c,
                          __global uint *out, const uint n)
{ uint k = get_global_id(0); if (k < n) out[k] = cla_${op}_${N}(a[k], b[k]); }
%   endfor
%   for op in ternary:
__kernel void t_${op}_${N}(__global const uint *a, __global const uint *b, __global const uint *c,
                          __global uint *out, const uint n)
{ uint k = get_global_id(0); if (k < n) out[k] = cla_${op}_${N}(a[k], b[k], c[k]); }
%   endfor
%   for op in unary:
__kernel void t_${op}_${N}(__global const uint *a, __global const uint *b, __global const uint *c,
                          __global uint *out, const uint n)
{ uint k = get_global_id(0); if (k < n) out[k] = (uint)cla_${op}_${N}(a[k]); }
%   endfor
__kernel void t_get_${N}(__global const uint *a, __global const uint *b, __global const uint *c,
                        __global uint *out, const uint n)
{ uint k = get_global_id(0); if (k < n) out[k] = cla_get_${N}(a[k], b[k] & ${NL - 1}u); }
__kernel void t_gets_${N}(__global const uint *a, __global const uint *b, __global const uint *c,
                         __global uint *out, const uint n)
{ uint k = get_global_id(0); if (k < n) out[k] = (uint)cla_gets_${N}(a[k], b[k] & ${NL - 1}u); }
__kernel void t_set_${N}(__global const uint *a, __global const uint *b, __global const uint *c,
                        __global uint *out, const uint n)
{ uint k = get_global_id(0); if (k < n) out[k] = cla_set_${N}(a[k], b[k] & ${NL - 1}u, c[k]); }
% endfor
