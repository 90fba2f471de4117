"""``clalign makedb IN.fa[.gz] OUT [-dbtype prot|nucl]``: prepare a database folder.

Like BLAST+'s ``makeblastdb -dbtype prot|nucl`` (``--dbtype`` works too; default: guess
from the residues). The folder appears whole or not at all; an existing OUT is only replaced
with ``--force`` (and only if it is a clalign database).
"""
from __future__ import annotations

import signal
import sys

import click

from ..errors import ClalignError
from .database import makedb as _makedb

_DBTYPES = {"prot": "protein", "protein": "protein", "nucl": "dna", "dna": "dna", "auto": "auto"}


def _sigterm(signum, frame):  # turn SIGTERM into an exception so the temporary folder is removed
    raise SystemExit(128 + signum)


@click.command("makedb")
@click.argument("fasta", type=click.Path(dir_okay=False))
@click.argument("out", type=click.Path())
@click.option("-dbtype", "--dbtype", "dbtype", type=click.Choice(sorted(_DBTYPES), case_sensitive=False),
              default="auto", show_default=True, help="Molecule type, as makeblastdb: prot or nucl.")
@click.option("--force", is_flag=True, help="Replace OUT if it is an existing clalign database.")
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
def makedb(fasta, out, dbtype, force, quiet):
    """Prepare the FASTA file FASTA (plain or gzip) as the database folder OUT."""
    old = None
    try:
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
        click.echo(f"clalign: error: {exc}", err=True)
        sys.exit(2)
    finally:
        if bar is not None:
            bar.close()
        if old is not None:
            signal.signal(signal.SIGTERM, old)
