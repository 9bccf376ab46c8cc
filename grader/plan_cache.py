"""Exercise plans kept on disk, so that neither `autograder grade` nor a restarted service runs
the references again (nor imports torch to do so) for an exercise that has not changed.

A plan holds the hidden tests' inputs and expected outputs: it is a secret (the design's
hidden-test principle), kept like the master secret it derives from.

- Where: `<data dir>/plans`, a directory of mode 0700, each file 0600; one file per exercise
  (writing one removes the exercise's older files), written to a temporary file and renamed
  into place, so a reader never sees half of one.
- Key: the exercise's version (its folder and reference module), the reference package, the
  grader modules that compute a plan, the torch and numpy versions (from package metadata:
  nothing is imported to read them) and `FORMAT`, all under the secret. The file's name is an
  HMAC of that key under a key derived from the secret, so it tells nothing of either.
- Content: an HMAC (of the key and the body) followed by the body, checked before anything is
  parsed: a file that is tampered with, truncated or written under another key is a miss, and
  the plan built instead replaces it.
- Format: `grader.plan_format`'s, an archive of arrays and JSON in which nothing can execute.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib.metadata
import importlib.util
import json
import logging
import os
import tempfile
from pathlib import Path

from grader.plan import ExercisePlan
from grader.plan_format import FORMAT, decode, encode
from grader.spec import Exercise
from grader.versions import fingerprint, reference_folders

log = logging.getLogger(__name__)

# The modules whose code decides a plan's contents or how it is stored: a change to any of them
# is a new key.
PLAN_CODE = (
    "grader.plan",
    "grader.plan_building",
    "grader.known_mistakes",
    "grader.plan_format",
    "grader.call_fields",
    "grader.inputs",
    "grader.reference",
    "grader.call_execution",
    "grader.properties",
    "grader.reproduce",
    "grader.reproduce_inputs",
    "grader.property_checks",
    "grader.mistake_properties",
)
_MAC_BYTES = hashlib.sha256().digest_size


class PlanCache:
    def __init__(self, folder: Path, secret: str) -> None:
        self.folder = folder
        self._mac_key = hmac.new(secret.encode(), b"autograder plan cache", "sha256").digest()

    def load(self, exercise: Exercise) -> ExercisePlan | None:
        """The exercise's plan as stored under its current key; None when there is none, or
        what is there does not check out."""
        key = self._key(exercise)
        try:
            data = self._path(exercise, key).read_bytes()
        except OSError:
            return None
        mac, body = data[:_MAC_BYTES], data[_MAC_BYTES:]
        slug = exercise.spec.slug
        if not hmac.compare_digest(mac, self._mac(key, body)):
            log.warning("plan cache: %s's file does not check out; building it again", slug)
            return None
        try:
            return decode(exercise, body)
        except (ValueError, KeyError, TypeError, IndexError, OSError):  # FORMAT left as it was
            log.exception("plan cache: %s's file checks out but cannot be read", slug)
            return None

    def store(self, plan: ExercisePlan) -> None:
        """Keep `plan` for the next process, in place of its exercise's older files; a cache
        that cannot be written only costs the next process the time to build it again."""
        exercise = plan.exercise
        key = self._key(exercise)
        body = encode(plan)
        try:
            self._make_folder()
            path = self._path(exercise, key)
            _write_atomically(path, self._mac(key, body) + body)
            for older in self.folder.glob(f"{exercise.spec.slug}.*.plan"):
                if older != path:
                    older.unlink(missing_ok=True)
        except OSError as error:
            log.warning("plan cache: cannot keep %s's plan: %s", exercise.spec.slug, error)

    def _make_folder(self) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)  # made by an older version, or by hand: ours only now

    def _key(self, exercise: Exercise) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "exercise": exercise.spec.slug,
                "version": exercise.version,
                "references": fingerprint(reference_folders()),
                "code": _code_digest(),
                "torch": _installed("torch"),
                "numpy": _installed("numpy"),
            },
            sort_keys=True,
        )

    def _path(self, exercise: Exercise, key: str) -> Path:
        name = hmac.new(self._mac_key, b"name\0" + key.encode(), "sha256").hexdigest()[:32]
        return self.folder / f"{exercise.spec.slug}.{name}.plan"

    def _mac(self, key: str, body: bytes) -> bytes:
        keyed = b"content\0" + key.encode() + b"\0" + body
        return hmac.new(self._mac_key, keyed, "sha256").digest()


def _installed(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _code_digest() -> str:
    digest = hashlib.sha256()
    for module in PLAN_CODE:
        found = importlib.util.find_spec(module)  # finds the file without running it
        if found is not None and found.origin is not None:
            digest.update(Path(found.origin).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _write_atomically(path: Path, data: bytes) -> None:
    descriptor, temporary = tempfile.mkstemp(prefix=".plan-", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
