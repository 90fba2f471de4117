"""The ``clalign`` command: ``devices``, ``makedb``, ``sw``, ``hmmsearch`` and ``blastp``.

Option names follow BLAST+ (``-query``, ``-db``, ``-outfmt`` ...) for the BLAST-like engines
and HMMER (``--tblout``, ``-E``, ``--F1`` ...) for ``hmmsearch``. Errors are one line on
stderr with a non-zero exit status, never a traceback, for anything the user can fix.
"""
from __future__ import annotations

import sys

import click

from .errors import ClalignError


#: Subcommands, imported only when used: ``clalign hmmsearch`` need not pay for pyopencl and
#: mako before it knows it will use them (they cost ~0.5 s of start-up on a 2-core machine).
_COMMANDS = {"devices": "clalign.runtime.cli:devices", "cache": "clalign.runtime.cli:cache",
             "makedb": "clalign.data.cli:makedb",
             "sw": "clalign.sw.cli:sw", "hmmsearch": "clalign.hmm.cli:hmmsearch",
             "blastp": "clalign.blast.cli:blastp"}


class _Group(click.Group):
    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(_COMMANDS))

    def get_command(self, ctx, name):
        if name in _COMMANDS and name not in self.commands:
            import importlib

            mod, attr = _COMMANDS[name].split(":")
            self.add_command(getattr(importlib.import_module(mod), attr), name)
        return super().get_command(ctx, name)

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
