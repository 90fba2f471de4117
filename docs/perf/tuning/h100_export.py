# clalign tune --export, 2026-11-23: 0:0 NVIDIA H100 80GB HBM3
# key {'platform': 'NVIDIA CUDA', 'device': 'NVIDIA H100 80GB HBM3', 'driver': '580.159.04', 'clalign': '0.1.0'}
# family sw_intertask
Entry('device', {'name': 'NVIDIA H100 80GB HBM3'}, {'PROFILE': 'plain', 'ROWS': 64, 'UNROLL': 4, 'WG': 256, 'WIDTH': 32, 'WORDS': 1},
      source='clalign tune 2026-11-23 --strategy annealing --max-seconds 220 --inputs standard: q=144 x1.05, q=464 x1.05, q=1000 x1.04, q=2005 x1.04'),

# family hmm_slane.msv
Entry('device', {'name': 'NVIDIA H100 80GB HBM3'}, {'HMAX': 64, 'HMAX16': 64, 'LANE': 16, 'PTX_S16X2': True, 'PTX_SHFL': True, 'RG': 16, 'SIMD': 'ptx', 'SMAX16': 16, 'WG_WAVES': 4},
      source='clalign tune 2026-11-23 --strategy annealing --max-seconds 140 --inputs standard: M=100 x1.24, M=400 x1.10, M=1000 x1.13'),

