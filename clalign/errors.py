"""Exceptions shared by every part of clalign."""


class ClalignError(Exception):
    """Base class of every error clalign raises on purpose."""


class InputError(ClalignError):
    """A user-supplied file is malformed; names the file and, where known, the line."""

    def __init__(self, message, path=None, line=None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path}:{line}"
            where += ": "
        super().__init__(where + message)


class ParameterError(ClalignError, ValueError):
    """A kernel template parameter is missing, of the wrong type or out of range."""


class DeviceError(ClalignError):
    """No usable OpenCL device, or a device specification that matches none."""


class KernelBuildError(ClalignError):
    """The OpenCL compiler rejected a rendered kernel; carries the build log."""

    def __init__(self, message, log="", source_path=None):
        self.log = log
        self.source_path = source_path
        text = message
        if source_path:
            text += f"\nrendered source: {source_path}"
        if log:
            text += f"\nbuild log:\n{log}"
        super().__init__(text)


class Interrupted(BaseException):
    """A termination signal (SIGTERM, SIGHUP, SIGINT) turned into an exception by ``clalign.cli``,
    so every ``finally``/``with`` cleanup runs (temporary outputs removed). A BaseException, like
    KeyboardInterrupt, so that no ``except Exception`` swallows it."""

    def __init__(self, signum: int):
        import signal

        self.signum = int(signum)
        try:
            self.name = signal.Signals(signum).name
        except ValueError:
            self.name = f"signal {signum}"
        super().__init__(f"interrupted by {self.name}")

    @property
    def exit_status(self) -> int:
        return 128 + self.signum
