"""The ``clalign`` command: ``devices``, ``makedb``, ``sw``, ``hmmsearch`` and ``blastp``.

Option names follow BLAST+ (``-query``, ``-db``, ``-outfmt`` ...) for the BLAST-like engines
and HMMER (``--tblout``, ``-E``, ``--F1`` ...) for ``hmmsearch``. Errors are one line on
stderr with a non-zero exit status, never a traceback, for anything the user can fix.

Signals: SIGTERM, SIGHUP and SIGINT (Ctrl-C) become an :class:`~clalign.errors.Interrupted`
exception in the main thread for every command, so every cleanup runs (temporary output files
and folders are removed, worker threads are told to stop); the command then prints one line and
exits with status 128 + the signal number (143, 129, 130), as a shell reports a killed program.
Further signals during that cleanup are ignored. Worker threads still inside a C call (pyhmmer)
are not waited for once the cleanup is done.
"""
from __future__ import annotations

import os
import signal
import sys
import threading

import click

from . import __version__
from .errors import ClalignError, Interrupted

#: Signals turned into a clean exit.
SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, n))


def _on_signal(signum, frame):
    from .outfile import defer_signal

    if defer_signal(signum):    # outputs are being renamed into place: after the last one
        return
    for s in SIGNALS:           # the cleanup that follows must not be interrupted in turn
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signum)


def _install():
    """Install the handler (main thread only); returns the previous handlers to restore."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.signal(s, _on_signal) for s in SIGNALS}


def _mute_stderr():
    """Send file descriptor 2 to the null device (C libraries write there directly)."""
    try:
        sys.stderr.flush()
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        os.close(fd)
    except (OSError, ValueError):
        pass


def _silent(unraisable):
    """sys.unraisablehook after an interruption: nothing more is printed (see _Group.invoke)."""


def _exit_now_if_workers(status):
    """Every cleanup has run; worker threads still busy in C code (a pyhmmer search, a kernel
    build) cannot be stopped and would hold the exit until they finish, so leave at once."""
    busy = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if busy:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)


#: Subcommands, imported only when used: ``clalign hmmsearch`` need not pay for pyopencl and
#: mako before it knows it will use them (they cost ~0.5 s of start-up on a 2-core machine).
_COMMANDS = {"devices": "clalign.runtime.cli:devices", "cache": "clalign.runtime.cli:cache",
             "makedb": "clalign.data.cli:makedb",
             "sw": "clalign.sw.cli:sw", "hmmsearch": "clalign.hmm.cli:hmmsearch",
             "blastp": "clalign.blast.cli:blastp", "blastn": "clalign.blast.nucl_cli:blastn",
             "tune": "clalign.tune.cli:tune"}


class _Group(click.Group):
    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(_COMMANDS))

    def get_command(self, ctx, name):
        if name in _COMMANDS and name not in self.commands:
            import importlib

            mod, attr = _COMMANDS[name].split(":")
            self.add_command(getattr(importlib.import_module(mod), attr), name)
        return super().get_command(ctx, name)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """As click's, but a usage error (bad option value, unknown option) is one line too."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            hint = ""
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                hint = f" (see '{ctx.command_path} --help')"
            click.echo(f"clalign: error: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("clalign: aborted", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx):
        old = _install()
        status = None
        try:
            return super().invoke(ctx)
        except ClalignError as exc:
            click.echo(f"clalign: error: {exc}", err=True)
            sys.exit(2)
        except Interrupted as exc:
            click.echo(f"clalign: {exc}; partial outputs removed", err=True)
            status = exc.exit_status
            # our line is the last one: a kernel build still running in a worker thread (its
            # compiler reports the interrupted build) and objects a library was building when the
            # signal came (freed with the exception's frames, their __del__ failing on half-set
            # state) must not print after it
            _mute_stderr()
            sys.unraisablehook = _silent
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        _exit_now_if_workers(status)
        sys.exit(status)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="clalign")
def main():
    """Sequence search on any OpenCL device.

    Outputs appear whole or not at all, and an existing output file is only replaced with
    --force. SIGTERM/SIGHUP/SIGINT stop cleanly (exit status 128 + signal number).
    """


def run():
    """The ``clalign`` program (console script and ``python -m clalign``): :func:`main`, then the
    process ends at once with its status. Every output is complete (or removed) when the command
    returns, so the interpreter's teardown -- releasing the device contexts and gigabytes of
    device buffers one object at a time, ~0.35-0.45 s after a ``clalign sw`` or ``blastp`` search
    on the H100 (docs/perf/sw.md run 15, blastp.md run 16) -- only delays the exit. In-process
    callers use :func:`main`."""
    from . import numba_optional

    numba_optional.install()    # this process is one command: numba's optional imports go
    status = 0
    try:
        main()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            status = exc.code or 0
        else:                   # sys.exit("message"): printed, status 1, as the interpreter does
            print(exc.code, file=sys.stderr)
            status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 1 if stream is sys.stdout else status
    os._exit(status)
