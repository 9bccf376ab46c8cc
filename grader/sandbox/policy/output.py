"""What `print` is in a submission: text kept for the report, up to a limit, never a file."""

from __future__ import annotations


class StdoutCapture:
    """What restricted code prints, kept up to `limit_chars` between two takes.

    Text past the limit is dropped as it arrives: a print loop must not fill the memory.
    """

    def __init__(self, limit_chars: int) -> None:
        self._limit = limit_chars
        self._parts: list[str] = []
        self._kept = 0
        self._cut = False

    def write(self, text: str) -> None:
        room = self._limit - self._kept
        if len(text) > room:
            text, self._cut = text[:room], True
        if text:
            self._parts.append(text)
            self._kept += len(text)

    def take(self) -> str:
        """What was printed since the last take, cut at the limit with a note; then forget it."""
        text = "".join(self._parts)
        if self._cut:
            text += f"… (output cut at {self._limit} characters)"
        self._parts, self._kept, self._cut = [], 0, False
        return text


class Printer:
    """What `print` is in restricted code: RestrictedPython turns `print(...)` into
    `_print._call_print(...)` on the object that `_print_` returns."""

    def __init__(self, stdout: StdoutCapture) -> None:
        self._stdout = stdout

    def _call_print(
        self, *objects: object, sep: str | None = " ", end: str | None = "\n", flush: bool = False
    ) -> None:
        # `flush` is accepted for code written for a terminal; the capture has nothing to flush.
        # There is no `file`: nothing in the sandbox is worth printing to but the report.
        print(*objects, sep=sep, end=end, file=self._stdout)
