"""Write ``mixed_names.faa``: the bundled proteome (``data/proteome.faa.gz``) with long and short
target names mixed, laid out so that HMMER's hit-list rule for the name columns matters.

HMMER's hit list of a query holds every target with ``P * i <= E``, ``i`` its 1-based position
(see ``clalign/hmm/tables.py``). With ``-E 1e-3`` the 19 proteins of ``EXTRA`` have, for some
bundled model, a sequence P-value in (E / 2100, E / 10] (found with pyhmmer, then fixed here):
never reported, but listed when they come early. The first ten go to the front with names of
growing length (they widen the columns of the queries they hit); the other nine go to the end
with the longest names of all (listed by no query: they must not widen anything). Every fifth
other protein gets a short name (``s<k>``).

    python3 make_mixed_names.py OUT.faa      (the tests call write_mixed() into a temp dir)
"""
import gzip
import os
import sys

EXTRA = ["938293.PRJEB85.HG003691_78", "938293.PRJEB85.HG003684_52", "938293.PRJEB85.HG003687_15",
         "938293.PRJEB85.HG003685_113", "938293.PRJEB85.HG003686_827", "938293.PRJEB85.HG003691_74",
         "938293.PRJEB85.HG003688_1", "938293.PRJEB85.HG003686_407", "938293.PRJEB85.HG003685_119",
         "938293.PRJEB85.HG003690_27", "938293.PRJEB85.HG003686_527", "938293.PRJEB85.HG003686_375",
         "938293.PRJEB85.HG003686_235", "938293.PRJEB85.HG003685_95", "938293.PRJEB85.HG003687_154",
         "938293.PRJEB85.HG003690_183", "938293.PRJEB85.HG003686_631", "938293.PRJEB85.HG003687_113",
         "938293.PRJEB85.HG003687_187"]
PROTEOME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "data", "proteome.faa.gz")


def write_mixed(out_path, proteome=PROTEOME):
    with gzip.open(proteome, "rt") as fh:
        records = fh.read().split(">")[1:]
    by_id = {r.split(None, 1)[0]: r for r in records}
    rest = [r for r in records if r.split(None, 1)[0] not in set(EXTRA)]

    def renamed(rec, name):
        rid, tail = rec.split(None, 1) if not rec.startswith("\n") else ("", rec)
        sep = rec[len(rid)]
        return ">" + name + sep + tail

    front = [renamed(by_id[n], n + "_" + "x" * (2 * k + 1)) for k, n in enumerate(EXTRA[:10])]
    back = [renamed(by_id[n], n + "_long_name_of_a_late_target_" + "y" * k) for k, n in enumerate(EXTRA[10:])]
    middle = [renamed(r, f"s{k}") if k % 5 == 0 else ">" + r for k, r in enumerate(rest)]
    with open(out_path, "w") as fh:
        fh.write("".join(front + middle + back))


if __name__ == "__main__":
    write_mixed(sys.argv[1])
