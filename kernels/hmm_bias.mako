<%doc>
  HMMER's biased-composition filter score (p7_bg_FilterScore: esl_hmm_Forward of the two-state
  filter HMM, scaled rows, plus the null length term), one work-item per target, in the C's
  float32 arithmetic; equal to clalign.hmm.vit_bias (the host form and its docstring).

  Why double: every float32 product, sum and quotient is taken in double and rounded to float.
  A float's product is exact in double and one rounding of a double sum or quotient to float
  is the correctly rounded float result (53 >= 2 * 24 + 2), so this is IEEE float arithmetic
  whatever the device's float division accuracy or FP contraction; the logs are libm's
  ``(float) log((double) x)`` as in the C. Needs cl_khr_fp64 (the host checks).

  Targets: database indices (targets[]) and HMMER's length L of each (lens[]: its stored
  residues, then L - n '*' stops); residues in clalign codes, turned into easel codes by
  cmap[256]; eo[KP][2] emission odds; t10, t11, t02, t12, pi0, pi1 as in vit_bias.filter_hmm.
  Parameters (clalign.hmm.params.HMM_BIAS): WG, KP, STAR (easel code of '*').
</%doc>
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

inline float fmul(float a, float b) { return (float)((double)a * (double)b); }
inline float fadd(float a, float b) { return (float)((double)a + (double)b); }
inline float fdiv(float a, float b) { return (float)((double)a / (double)b); }
inline float flog(float a) { return (float)log((double)a); }

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void hmm_bias(__global const uchar *res, __global const ulong *offs, __global const uint *targets,
              __global const uint *lens, __constant uchar *cmap, __constant float *eo, const uint n_targets,
              const float t10, const float t11, const float t02, const float t12,
              const float pi0, const float pi1, __global float *out)
{
    const uint s = get_global_id(0);
    if (s >= n_targets)
        return;
    const uint t = targets[s];
    const ulong a = offs[t];
    const uint n = (uint)(offs[t + 1] - a);        /* residues stored; L - n trailing stops follow */
    const uint L = lens[s];
    if (L == 0) {
        out[s] = -INFINITY;
        return;
    }
    const float p1 = fdiv((float)L, (float)(L + 1));
    const float q1 = (float)(1.0 - (double)p1);      /* p7_bg_SetLength, after p7_bg_SetFilter */
    int x = n ? cmap[res[a]] : ${STAR};
    float d0 = fmul(eo[2 * x], pi0), d1 = fmul(eo[2 * x + 1], pi1);
    float mx = 0.0f;
    mx = d0 > mx ? d0 : mx;
    mx = d1 > mx ? d1 : mx;
    d0 = fdiv(d0, mx);
    d1 = fdiv(d1, mx);
    float logsc = flog(mx);
    for (uint i = 1; i < L; i++) {
        x = i < n ? cmap[res[a + i]] : ${STAR};
        const float n0 = fmul(fadd(fmul(d0, p1), fmul(d1, t10)), eo[2 * x]);
        const float n1 = fmul(fadd(fmul(d0, q1), fmul(d1, t11)), eo[2 * x + 1]);
        mx = 0.0f;
        mx = n0 > mx ? n0 : mx;
        mx = n1 > mx ? n1 : mx;
        d0 = fdiv(n0, mx);
        d1 = fdiv(n1, mx);
        logsc = fadd(logsc, flog(mx));
    }
    logsc = fadd(logsc, flog(fadd(fmul(d0, t02), fmul(d1, t12))));
    const float lp1 = flog(p1), l1p = flog((float)(1.0 - (double)p1));
    out[s] = fadd(fadd(logsc, fmul((float)L, lp1)), l1p);
}
