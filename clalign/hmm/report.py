"""HMMER's text outputs of a :func:`clalign.hmm.search.hmmsearch` run: the ``-o`` report (per-query
sections, the pipeline statistics) and ``--tblout``/``--domtblout``, byte for byte as hmmsearch
3.3.2 writes them (name-column widths from :mod:`clalign.hmm.tables`)."""
from __future__ import annotations

import dataclasses
import io

from .hmmtext import file_text
from .options import SearchOptions
from .pyhmmer_adapter import pipeline_counts
from .tables import report_name_width

# HMMER's human-readable report: p7_tophits_Targets / p7_tophits_Domains / p7_pli_Statistics
# layouts, as hmmsearch --noali prints them
_TEXTW = 120


def _c_columns(hits):
    """Values HMMER computes that pyhmmer exposes only through its tables, read from them.

    Per reported hit: (exp, reported domain count) from the targets table; per reported domain:
    'acc' (mean optimal-accuracy posterior over the envelope) from the domains table.
    """
    per_hit = []
    for fmt in ("targets", "domains"):
        buf = io.BytesIO()
        hits.write(buf, format=fmt, header=False)
        # header=False: every line is a row (a target name may itself start with '#')
        rows = [ln.split() for ln in buf.getvalue().decode("utf-8", "replace").splitlines() if ln]
        if fmt == "targets":
            per_hit = [(float(f[10]), int(f[15])) for f in rows]
        else:
            accs = [float(f[21]) for f in rows]
    return per_hit, accs


def _query_section(res, opts):
    hmm, hits = res.hmm, res.hits
    lines = [f"Query:       {file_text(hmm.name)}  [M={hmm.M}]"]   # the file's bytes, as HMMER
    if hmm.acc:
        lines.append(f"Accession:   {file_text(hmm.acc)}")
    if hmm.desc:
        lines.append(f"Description: {file_text(hmm.desc)}")
    reported = [h for h in hits if h.reported]
    namew = report_name_width(res.name_width)
    descw = max(32, _TEXTW - namew - 61)
    lines.append("Scores for complete sequences (score includes all domains):")
    lines.append("  %22s  %22s  %8s" % (" --- full sequence ---", " --- best 1 domain ---", "-#dom-"))
    lines.append("  %9s %6s %5s  %9s %6s %5s  %5s %2s  %-*s %s" % (
        "E-value", " score", " bias", "E-value", " score", " bias", "  exp", "N", namew, "Sequence", "Description"))
    lines.append("  %9s %6s %5s  %9s %6s %5s  %5s %2s  %-*s %s" % (
        "-------", "------", "-----", "-------", "------", "-----", " ----", "--", namew, "--------", "-----------"))
    per_hit, accs = _c_columns(hits)
    printed_inc = False
    for h, (nexp, nrep) in zip(reported, per_hit):
        if not h.included and not printed_inc:
            lines.append("  ------ inclusion threshold ------")
            printed_inc = True
        d = h.best_domain
        lines.append("%c %9.2g %6.1f %5.1f  %9.2g %6.1f %5.1f  %5.1f %2d  %-*s  %-.*s" % (
            " ", h.evalue, h.score, h.bias, d.i_evalue, d.score, d.bias, nexp, nrep, namew, h.name,
            descw, h.description or ""))
    if not reported:
        lines += ["", "   [No hits detected that satisfy reporting thresholds]"]
    lines += ["", "", "Domain annotation for each sequence:"]
    acc_iter = iter(accs)
    for h in reported:
        descw = max(32, _TEXTW - len(h.name) - 5)
        lines.append(">> %s  %-.*s" % (h.name, descw, h.description or ""))
        doms = [d for d in h.domains if d.reported]
        if not doms:
            lines += ["   [No individual domains that satisfy reporting thresholds (although complete target did)]", ""]
            continue
        lines.append("   #    score  bias  c-Evalue  i-Evalue hmmfrom  hmm to    alifrom  ali to    envfrom  env to     acc")
        lines.append(" ---   ------ ----- --------- --------- ------- -------    ------- -------    ------- -------    ----")
        L = h.length
        for nd, d in enumerate(doms, 1):
            a = d.alignment
            lines.append(" %3d %c %6.1f %5.1f %9.2g %9.2g %7d %7d %c%c %7d %7d %c%c %7d %7d %c%c %4.2f" % (
                nd, "!" if d.included else "?", d.score, d.bias, d.c_evalue, d.i_evalue,
                a.hmm_from, a.hmm_to, "[" if a.hmm_from == 1 else ".", "]" if a.hmm_to == hmm.M else ".",
                a.target_from, a.target_to, "[" if a.target_from == 1 else ".", "]" if a.target_to == L else ".",
                d.env_from, d.env_to, "[" if d.env_from == 1 else ".", "]" if d.env_to == L else ".",
                next(acc_iter)))
        lines.append("")
    if not reported:
        lines += ["", "   [No targets detected that satisfy reporting thresholds]"]
    lines += ["", ""]
    return lines


def _pli_stats(res, stats, Zopt):
    hits = res.hits
    st = {**pipeline_counts(hits), "n_past_msv": res.n_past_msv, "n_past_bias": res.n_past_bias,
          "n_past_vit": res.n_past_vit, "n_past_fwd": res.n_past_fwd}     # the whole search's counts
    n = stats.sequences
    F1, F2, F3 = st["F1"], st["F2"], st["F3"]
    out = ["Internal pipeline statistics summary:",
           "-------------------------------------",
           "%-29s%15d  (%d nodes)" % ("Query model(s):", 1, res.hmm.M),
           "%-29s%15d  (%d residues searched)" % ("Target sequences:", n, stats.residues),
           "%-29s%15d  (%.6g); expected %.1f (%.2g)" % ("Passed MSV filter:", st["n_past_msv"], st["n_past_msv"] / n,
                                                        F1 * n, F1),
           "%-29s%15d  (%.6g); expected %.1f (%.2g)" % ("Passed bias filter:", st["n_past_bias"], st["n_past_bias"] / n,
                                                        F1 * n, F1),
           "%-29s%15d  (%.6g); expected %.1f (%.2g)" % ("Passed Vit filter:", st["n_past_vit"], st["n_past_vit"] / n,
                                                        F2 * n, F2),
           "%-29s%15d  (%.6g); expected %.1f (%.2g)" % ("Passed Fwd filter:", st["n_past_fwd"], st["n_past_fwd"] / n,
                                                        F3 * n, F3),
           "Initial search space (Z):    %15.0f  %s" % (hits.Z, "[as set by --Z on cmdline]" if Zopt is not None
                                                     else "[actual number of targets]"),
           "Domain search space  (domZ): %15.0f  %s" % (hits.domZ, "[number of targets reported over threshold]"),
           "# Mc/sec: %.2f" % ((stats.residues * res.hmm.M) / max(res.seconds, 1e-9) / 1e6),
           "//"]
    return out


def write_report(results, stats, hmmfile, seqdb, output=None, tblout=None, domtblout=None, options=None):
    """hmmsearch's main output (as with --noali) for a list of :class:`ModelResult`; returns the text."""
    from .. import __version__

    options = dataclasses.asdict(options) if isinstance(options, SearchOptions) else dict(options or {})
    d = dataclasses.asdict(SearchOptions())
    options = {**d, **options}
    sep = "# - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -"
    lines = ["# hmmsearch :: search profile(s) against a sequence database",
             f"# clalign {__version__}: MSV filter on OpenCL; later stages by HMMER via pyhmmer",
             sep,
             "# query HMM file:                  %s" % hmmfile,
             "# target sequence database:        %s" % seqdb]
    if output:
        lines.append("# output directed to file:         %s" % output)
    if tblout:
        lines.append("# per-seq hits tabular output:     %s" % tblout)
    if domtblout:
        lines.append("# per-dom hits tabular output:     %s" % domtblout)
    if options["E"] != d["E"]:
        lines.append("# sequence reporting threshold:    E-value <= %g" % options["E"])
    if options["domE"] != d["domE"]:
        lines.append("# domain reporting threshold:      E-value <= %g" % options["domE"])
    if options["incE"] != d["incE"]:
        lines.append("# sequence inclusion threshold:    E-value <= %g" % options["incE"])
    if options["incdomE"] != d["incdomE"]:
        lines.append("# domain inclusion threshold:      E-value <= %g" % options["incdomE"])
    if options["F1"] != d["F1"]:
        lines.append("# MSV filter P threshold:       <= %g" % options["F1"])
    if options.get("Z") is not None:
        lines.append("# database size is set to:         %.0f" % options["Z"])
    lines += ["# show alignments in output:       no", sep, ""]
    for res in results:
        lines += _query_section(res, options)
        lines += _pli_stats(res, stats, options.get("Z"))
    lines.append("[ok]")
    return "\n".join(lines) + "\n"
