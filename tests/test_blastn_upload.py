"""The BLASTN search's read-only device buffers filled on a thread (:mod:`nucl_upload`), and the
command's output text (:func:`blastn.tabular_text`) against the lines it replaces."""
import dataclasses
import os

import numpy as np
import pyopencl as cl

from clalign.blast.blastn import run_blastn, tabular_lines, tabular_text
from clalign.blast.nucl_setup import BlastnOptions
from clalign.blast.nucl_upload import Uploads
from clalign.runtime import Runtime

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


def test_uploads_seen_by_another_queue_after_order():
    rt = Runtime.get(None)
    rng = np.random.default_rng(3)
    arrays = [rng.integers(0, 1 << 30, 1 << 20).astype(np.int32), rng.integers(0, 255, 12345).astype(np.uint8),
              np.zeros(0, np.int32), np.arange(7, dtype=np.uint32)]
    up = Uploads(rt)
    bufs = [up.add(a) for a in arrays]
    up.start()
    q = rt.new_queue()
    for _ in range(2):                 # a second order() of the same queue does no harm
        up.order(q)
    for a, buf in zip(arrays, bufs):
        want = a if len(a) else np.zeros(4, np.uint8)
        got = np.empty_like(want)
        cl.enqueue_copy(q, got, buf)
        assert got.tobytes() == want.tobytes()


def test_tabular_text_is_the_lines_joined():
    res = run_blastn(os.path.join(HERE, "reads.fa"), os.path.join(HERE, "genome.fa"),
                     BlastnOptions(task="megablast"))
    assert sum(len(r.hits) for r in res) > 0
    for comments in (False, True):
        lines = tabular_lines(res, comments=comments)
        assert tabular_text(res, comments=comments) == "".join(l + "\n" for l in lines)
    # a title with line breaks other than "\n": the lines' form (splitlines splits there too)
    odd = [dataclasses.replace(res[0], title="a\x0cb\r\nc\u2028d")] + list(res[1:])
    lines = tabular_lines(odd, comments=True)
    assert tabular_text(odd, comments=True) == "".join(l + "\n" for l in lines)
    assert tabular_text([], comments=False) == ""
