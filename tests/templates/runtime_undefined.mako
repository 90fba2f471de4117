__kernel void k(__global int *out) { out[0] = ${NOT_A_PARAM}; }
