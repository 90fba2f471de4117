"""The ``clalign`` command: ``devices``, ``makedb``, ``sw`` and ``hmmsearch``.

Option names follow BLAST+ (``-query``, ``-db``, ``-outfmt`` ...) for the BLAST-like engines
and HMMER (``--tblout``, ``-E``, ``--F1`` ...) for ``hmmsearch``. Errors are one line on
stderr with a non-zero exit status, never a traceback, for anything the user can fix.
"""
from __future__ import annotations

import sys

import click

from .errors import ClalignError


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ClalignError as exc:
            click.echo(f"clalign: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="clalign")
def main():
    """Sequence search on any OpenCL device."""


def _register():
    from .runtime.cli import cache, devices
    from .data.cli import makedb
    from .sw.cli import sw
    from .hmm.cli import hmmsearch

    for cmd in (devices, cache, makedb, sw, hmmsearch):
        main.add_command(cmd)


_register()
