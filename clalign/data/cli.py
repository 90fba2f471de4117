"""``clalign makedb IN.fa[.gz] OUT [-dbtype prot|nucl]``: prepare a database folder;
``clalign makedb --verify DB``: check one.

Like BLAST+'s ``makeblastdb -dbtype prot|nucl`` (``--dbtype`` works too; default: guess
from the residues). The folder appears whole or not at all; an existing OUT is only replaced
with ``--force`` (and only if it is a clalign database). ``--verify`` recomputes every file's
checksum and applies every consistency rule: "DB: OK (...)" and exit 0, or one line naming
the damaged file and exit 1.
"""
from __future__ import annotations

import signal
import sys

import click

from ..errors import ClalignError
from .database import makedb as _makedb
from .database import verify as _verify

_DBTYPES = {"prot": "protein", "protein": "protein", "nucl": "dna", "dna": "dna", "auto": "auto"}


def _sigterm(signum, frame):  # turn SIGTERM into an exception so the temporary folder is removed
    raise SystemExit(128 + signum)   # (only when no handler is installed yet, see makedb below)


def _fail(message, status):
    click.echo(f"clalign: error: {message}", err=True)
    sys.exit(status)


@click.command("makedb")
@click.argument("fasta", required=False)
@click.argument("out", required=False)
@click.option("-dbtype", "--dbtype", "dbtype", type=click.Choice(sorted(_DBTYPES), case_sensitive=False),
              default="auto", show_default=True, help="Molecule type, as makeblastdb: prot or nucl.")
@click.option("--force", is_flag=True, help="Replace OUT if it is an existing clalign database.")
@click.option("--verify", is_flag=True, help="Check the database folder FASTA (checksums, every rule) instead.")
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
def makedb(fasta, out, dbtype, force, verify, quiet):
    """Prepare the FASTA file FASTA (plain or gzip) as the database folder OUT."""
    if verify:
        if fasta is None or out is not None:
            _fail("makedb --verify takes exactly one database folder", 2)
        try:
            summary = _verify(fasta)
        except ClalignError as exc:
            _fail(exc, 1)
        if not quiet:
            click.echo(summary)
        return
    if fasta is None or out is None:
        _fail("makedb needs a FASTA file and an output folder (makedb IN.fa OUT)", 2)
    old = None
    try:  # run on its own (not under the `clalign` group, which has its own handler)
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            old = signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not in the main thread (e.g. some test runners)
        pass
    bar = None
    progress = None
    if sys.stderr.isatty() and not quiet:
        from tqdm import tqdm

        bar = tqdm(desc="makedb", unit=" seqs", file=sys.stderr, leave=False)

        def progress(done):
            bar.update(done - bar.n)
    try:
        db = _makedb(fasta, out, alphabet=_DBTYPES[dbtype.lower()], force=force, quiet=quiet, progress=progress)
        if db.alphabet.name == "dna":  # the 2-bit form BLASTN scans, beside the residues
            from .nucleotide import add_packed
            add_packed(db, out)
    except ClalignError as exc:  # same one-line form as the `clalign` group, also when run on its own
        if bar is not None:
            bar.close()
            bar = None
        _fail(exc, 2)
    finally:
        if bar is not None:
            bar.close()
        if old is not None:
            signal.signal(signal.SIGTERM, old)
