"""Per model: Viterbi plan wall, kernel seconds, longest target run, group sizes (in-process, prepared db)."""
import sys, time
import numpy as np
from clalign.hmm import vit_search, vit_engine, bias_engine
rec = []
orig_split = vit_search.DeviceViterbi.split
orig_words = vit_engine.vit_words_device
def words(prof, res, off, targets, lens, *a, **k):
    t = time.perf_counter(); out = orig_words(prof, res, off, targets, lens, *a, **k)
    rec.append(("vit", prof.M, len(targets), int(np.max(lens)) if len(lens) else 0, round(out[1] * 1e3, 2), round((time.perf_counter() - t) * 1e3, 1)))
    return out
vit_engine.vit_words_device = words
orig_bias = bias_engine.bias_scores_device
def bias(M, compo, r, o, targets, lengths, *a, **k):
    t = time.perf_counter(); out = orig_bias(M, compo, r, o, targets, lengths, *a, **k)
    rec.append(("bias", M, len(targets), int(np.max(lengths)) if len(lengths) else 0, round((time.perf_counter() - t) * 1e3, 1)))
    return out
bias_engine.bias_scores_device = bias
def split(self, hmm, nats, passing, lengths):
    t = time.perf_counter(); p = orig_split(self, hmm, nats, passing, lengths)
    rec.append(("split", hmm.M, len(passing), [len(g) for g, _ in p.groups], round((time.perf_counter() - t) * 1e3, 1)))
    return p
vit_search.DeviceViterbi.split = split
if len(sys.argv) > 3 and sys.argv[3] == "nolong":
    vit_search.LONG_TARGET = None
from clalign.hmm.search import hmmsearch
s = hmmsearch(sys.argv[1], sys.argv[2], cpus=16)
t = time.time(); res = list(s); print("search", round(time.time() - t, 2), "s; pyhmmer", round(s.stats.pyhmmer_seconds, 2), "vit", round(s.stats.vit_seconds, 2))
for r in rec: print(*r)
