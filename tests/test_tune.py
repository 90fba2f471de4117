"""clalign tune and the tuning table: declared entries, levels, the user database, verification.

The device tests run one tiny tuning search on PoCL (one model, a two-value space): a few
kernel builds, ~20 s on a 2-core machine.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from types import SimpleNamespace

import numpy as np
import pytest

from clalign.errors import ParameterError
from clalign.runtime import Param, ParamSet, tuning, tuning_db
from clalign.runtime.params import clamp_work_group
from clalign.runtime.tuning import Entry


def _caps(**kw):
    base = dict(name="Test GPU 9000", platform="P", vendor="ACME", driver="1.0", is_cpu=False, is_gpu=True,
                is_nvidia=False, compute_capability=None, ptx=False, ptx_s16x2=False, ptx_shfl=False,
                clang_vectors=False, subgroups=False, max_work_group=256, local_mem=1024)
    base.update(kw)
    return SimpleNamespace(**base)


@pytest.fixture
def userdb(tmp_path, monkeypatch):
    monkeypatch.setenv("CLALIGN_TUNING_DIR", str(tmp_path))
    return tmp_path / tuning_db.FILENAME


def test_builtin_table_is_declared_and_valid():
    """Every built-in entry's keys are declared parameters with legal values (checked at load),
    at most one entry per level and matcher."""
    fams = tuning.families()
    for fam in ("sw_intertask", "sw_vector", "sw_intratask", "hmm_slane.msv", "hmm_slane.ssv", "hmm_filter.rate"):
        assert fam in fams
        seen = set()
        for e in tuning.entries(fam):
            fams[fam].check_partial(e.values)
            key = (e.level, repr(sorted(e.match.items())))
            assert key not in seen
            seen.add(key)
    assert "HMAX16" in fams["hmm_slane.msv"].names() and "SMAX16" in fams["hmm_slane.ssv"].names()


def test_typo_in_a_device_only_entry_fails_at_registration():
    ps = ParamSet("t_typo", (Param.int("ROWS", "rows", values=(16, 32)),), with_simd=False)
    with pytest.raises(ParameterError, match="ROWZ"):
        tuning.register("t_typo", [Entry("architecture", {"cc_min": (9, 0)}, {"ROWZ": 16})], ps)
    with pytest.raises(ParameterError, match="not one of"):
        tuning.register("t_typo", [Entry("device", {"name": "H100"}, {"ROWS": 17})], ps)
    with pytest.raises(ParameterError, match="more specific"):
        Entry("vendor", {"name_contains": "H100"}, {"ROWS": 16})


def test_levels_merge_general_to_specific_first_match_per_level():
    ps = ParamSet("t_levels", (Param.int("A", "a", lo=0), Param.int("B", "b", lo=0), Param.int("C", "c", lo=0)),
                  with_simd=False)
    tuning.register("t_levels", [Entry("default", {}, {"A": 1, "B": 1, "C": 1}),
                                 Entry("vendor", {"is_gpu": True}, {"A": 2}),
                                 Entry("vendor", {"vendor": "acme"}, {"A": 3, "B": 3}),
                                 Entry("architecture", {"cc_min": (9, 0)}, {"B": 4}),
                                 Entry("device", {"name_contains": "9000"}, {"C": 5})], ps)
    assert tuning.lookup("t_levels", _caps()) == {"A": 2, "B": 1, "C": 5}          # first vendor match only
    assert tuning.lookup("t_levels", _caps(compute_capability=(9, 0), is_gpu=False)) == {"A": 3, "B": 4, "C": 5}
    src = tuning.sources("t_levels", _caps())
    assert src["C"][1].startswith("built-in table, device")


def test_ladder_real_constraints_and_local_memory(caplog):
    p = Param.int("HMAX16", "h", lo=1, hi=256, by_size=True)
    assert p.check(((256, 16), (None, 64))) == ((256, 16), (None, 64))
    for bad in (((None, 16), (256, 64)), ((256, 300), (None, 1)), ()):
        with pytest.raises(ParameterError):
            p.check(bad)
    from clalign.sw.params import INTRA_PARAMS, SWV_PARAMS

    assert SWV_PARAMS.problems({"LANE": "s16", "VEC": 32})
    assert not SWV_PARAMS.problems({"LANE": "u8", "VEC": 32})
    caps = _caps(local_mem=4096, max_work_group=128)
    why = INTRA_PARAMS.problems({"TH": 8, "TW": 8, "WG": 256}, caps)
    assert any("work-group limit" in w for w in why) and any("local memory" in w for w in why)
    with caplog.at_level(logging.INFO, logger="clalign.params"):
        assert clamp_work_group("f", 256, caps) == 128
    assert "clamped" in caplog.text
    with pytest.raises(ParameterError):
        clamp_work_group("f", 256, caps, explicit=True)


def test_damaged_user_database_warns_and_keeps_builtin_values(userdb, capsys):
    caps = _caps(is_cpu=True, is_gpu=False)
    want = tuning.lookup("sw_intertask", caps)
    for text in ("{not json", json.dumps({"format": tuning_db.FORMAT, "entries": [
            {**tuning_db.device_key(caps), "family": "sw_intertask", "values": {"ROWS": 13}}]})):
        userdb.write_text(text)
        assert tuning.lookup("sw_intertask", caps) == want
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "damaged" in err and str(userdb) in err
    with pytest.raises(Exception, match="damaged"):
        tuning_db.store(caps, "sw_intertask", {"ROWS": 16}, "test")
    tuning_db.store(caps, "sw_intertask", {"ROWS": 16}, "test", force=True)
    assert tuning.lookup("sw_intertask", caps)["ROWS"] == 16


# ------------------------------------------------------------------------- on the device (PoCL)
def test_tune_verifies_rejects_a_wrong_candidate_and_its_entry_is_picked_up(userdb, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from clalign.cli import main
    from clalign.hmm import engine as E
    from clalign.runtime import Runtime
    from clalign.tune import families as F

    fam = F.FAMILIES["hmm_slane.msv"]
    real_run = fam.run

    def run(rt, values, inp):
        out, secs = real_run(rt, values, inp)
        if values.get("RG") == 8:            # the test-only value: wrong scores, and "fastest"
            out = {"scores": out["scores"] + np.float32(1.0)}
            secs = secs / 100
        return out, secs

    monkeypatch.setitem(F.FAMILIES, "hmm_slane.msv", dataclasses.replace(
        fam, run=run, space=lambda caps: {"RG": [4, 8]}))
    res_path = tmp_path / "results.json"
    r = CliRunner().invoke(main, ["tune", "--family", "hmm_slane.msv", "--inputs", "quick", "--strategy", "full",
                                  "--max-seconds", "120", "--repeats", "1", "--quiet", "--results", str(res_path)])
    assert r.exit_code == 0, r.output
    rows = json.loads(res_path.read_text())["rows"]
    wrong = [x for x in rows if x["values"].get("RG") == 8]
    assert wrong and wrong[0]["status"] == "wrong" and "differ from the reference" in wrong[0]["reason"]
    rt = Runtime.get()
    stored = tuning_db.user_values("hmm_slane.msv", rt.caps)
    assert stored is not None and stored["values"]["RG"] in (1, 4)           # never the wrong one
    show = CliRunner().invoke(main, ["tune", "--show", "--family", "hmm_slane.msv"])
    assert f"RG = {stored['values']['RG']}  (user database" in show.output

    # an entry with other values than the table: the engine takes them, and the scores stay the same
    tuning_db.store(rt.caps, "hmm_slane.msv", {**stored["values"], "RG": 4, "WG_WAVES": 2}, "test")
    rng = np.random.default_rng(3)
    from clalign.tune import inputs as I

    inp = F.FAMILIES["hmm_slane.msv"].make_inputs(rt.caps, "quick", rng)[0]
    db, prof = inp.data["db"], inp.data["profile"]
    tuned = E.msv_scores_run(prof, db, cache={}, kernel="slane")     # the tuned family (CPUs default to the striped kernel)
    assert tuned[1].values["RG"] == 4 and tuned[1].values["WG_WAVES"] == 2
    monkeypatch.setenv("CLALIGN_TUNING_DIR", str(tmp_path / "empty"))
    builtin = E.msv_scores_run(prof, db, cache={}, kernel="slane")
    assert (builtin[1].values["RG"], builtin[1].values["WG_WAVES"]) != (4, 2)
    np.testing.assert_array_equal(tuned[0], builtin[0])
    assert I.TAIL_MIN == 2000


def test_import_takes_the_best_verified_row_of_a_results_file(userdb, tmp_path):
    """Rows of a benchmark's clalign-results-1 file (no kernel runs): the wrong row is never
    taken even when fastest; the best verified one is stored for the device."""
    from click.testing import CliRunner

    from clalign.cli import main
    from clalign.runtime import Runtime
    from clalign.runtime.harness import result_doc, write_results

    caps = Runtime.get().caps
    table = tuning.table_values("sw_vector", caps)
    base = {k: table[k] for k in ("LANE", "VEC", "COLS", "STRIP", "WG")}
    fast, wrong = {**base, "COLS": 1 if base["COLS"] != 1 else 2}, {**base, "STRIP": 1024}
    rows = []
    for values, secs, status in ((base, 2.0, "ok"), (fast, 1.5, "ok"), (wrong, 0.1, "wrong")):
        for q in ("q1", "q2"):
            rows.append({"family": "sw_vector", "values": values, "input": q, "status": status,
                         "seconds": secs if status == "ok" else None, "reason": ""})
    path = tmp_path / "bench.json"
    write_results(path, result_doc(caps, "test", rows))
    r = CliRunner().invoke(main, ["tune", "--import", str(path)])
    assert r.exit_code == 0, r.output
    assert tuning_db.user_values("sw_vector", caps)["values"] == fast
    assert "1.33" in r.output


def test_one_declared_entry_per_level_and_matcher_older_pairs_merge():
    ps = ParamSet("t_dup", (Param.int("A", "a", lo=0), Param.int("B", "b", lo=0)), with_simd=False)
    with pytest.raises(ParameterError, match="same level and matcher"):
        tuning.register("t_dup", [Entry("vendor", {"is_gpu": True}, {"A": 1}),
                                  Entry("vendor", {"is_gpu": True}, {"B": 2})], ps)
    tuning.register("t_dup", [({"is_gpu": True}, {"A": 1}), ({"is_gpu": True}, {"B": 2})], ps)   # older form
    tuning.register("t_dup", [Entry("vendor", {"is_gpu": True}, {"A": 3})])
    assert tuning.lookup("t_dup", _caps()) == {"A": 3, "B": 2}


def test_sw_plans_take_user_entries_and_a_trial_over_them(userdb):
    """The SW plan (no kernel runs) reads the user database; a tuner trial replaces it."""
    from clalign.runtime import Runtime
    from clalign.sw.plan import make_plan
    from clalign.sw.scoring import Scoring

    caps = Runtime.get().caps
    sc = Scoring.make("BLOSUM62", 11, 1)
    builtin = make_plan(caps, sc, {})
    tuning_db.store(caps, "sw_vector", {"COLS": 1}, "test")
    tuning_db.store(caps, "sw_intratask", {"TH": 24}, "test")
    plan = make_plan(caps, sc, {})
    assert plan.vvalues["COLS"] == 1 and plan.ivalues["TH"] == 24
    assert builtin.vvalues["COLS"] != 1 or builtin.ivalues["TH"] != 24
    with tuning.trial("sw_vector", {"COLS": 2}):
        assert make_plan(caps, sc, {}).vvalues["COLS"] == 2
    assert make_plan(caps, sc, {"COLS": 4}).vvalues["COLS"] == 4          # the override wins
    assert tuning.sources("sw_vector", caps)["COLS"][1].startswith("user database")


def test_harness_never_times_what_fails():
    from clalign.errors import KernelBuildError
    from clalign.runtime.harness import compare, verify_then_time

    calls = []

    def run(out, secs):
        def f():
            calls.append(1)
            return out, secs
        return f

    def boom(exc):
        def f():
            raise exc
        return f

    m = verify_then_time(run(np.array([1, 2]), 0.5), lambda o: compare(o, [1, 3]), repeats=5)
    assert m.status == "wrong" and m.seconds is None and len(calls) == 1 and "first at 1" in m.reason
    assert verify_then_time(boom(KernelBuildError("no")), lambda o: None).status == "build"
    assert verify_then_time(boom(ParameterError("WG too big")), lambda o: None).status == "limit"
    calls.clear()
    m = verify_then_time(run(np.array([1, 2]), 0.25), lambda o: compare(o, [1, 2]), repeats=3)
    assert m.ok and m.seconds == 0.25 and len(calls) == 4 and len(m.samples) == 3
    assert compare(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])) is None
