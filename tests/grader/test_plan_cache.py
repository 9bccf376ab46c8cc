"""The plan cache: a hit is the plan as built; any change to what a plan depends on is a miss;
the file is the secret's alone and a tampered one is never read."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import stat
from importlib.machinery import ModuleSpec
from pathlib import Path

import numpy as np
import pytest
from grader_support import SLUG, plan

from grader import inputs
from grader.catalog import Catalog
from grader.contract import Call, OutputValue
from grader.plan import HIDDEN_INPUT_SETS, ExercisePlan
from grader.plan_building import build_plan
from grader.plan_cache import PlanCache
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.settings import GraderSettings
from grader.spec import load_exercise

SECRET = "test-secret"  # grader_support's plan() is built with it


@pytest.fixture
def cache(tmp_path: Path) -> PlanCache:
    return PlanCache(tmp_path / "plans", SECRET)


def stored_file(cache: PlanCache) -> Path:
    [path] = cache.folder.iterdir()
    return path


def same_outputs(a: tuple[OutputValue, ...] | None, b: tuple[OutputValue, ...] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(
        (x.type_name, x.dtype, x.shape) == (y.type_name, y.dtype, y.shape)
        and (x.array is None) == (y.array is None)
        and (x.array is None or y.array is None or _equal(x.array, y.array))
        for x, y in zip(a, b, strict=True)
    )


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, NaN included: a known mistake may divide by zero somewhere."""
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))


def same_calls(a: Call, b: Call) -> bool:
    """Every field equal, arrays by value (their repr would elide the middle of a large one)."""
    arrays_a, arrays_b = [*a.args, *a.parameters.values()], [*b.args, *b.parameters.values()]
    fields = ("id", "init_kwargs", "seed", "strict_parameters", "max_output_elements")
    return (
        all(getattr(a, name) == getattr(b, name) for name in fields)
        and list(a.parameters) == list(b.parameters)
        and len(arrays_a) == len(arrays_b)
        and all(
            x is y is None
            or (
                isinstance(x, np.ndarray)
                and isinstance(y, np.ndarray)
                and x.dtype == y.dtype
                and np.array_equal(x, y)
            )
            for x, y in zip(arrays_a, arrays_b, strict=True)
        )
    )


def assert_same_plans(loaded: ExercisePlan, built: ExercisePlan) -> None:
    assert loaded.exercise == built.exercise
    assert loaded.weight_probe_message == built.weight_probe_message
    for ours, theirs in zip(loaded.tests, built.tests, strict=True):
        assert ours.spec == theirs.spec and ours.output_names == theirs.output_names
        assert ours.reproduce == theirs.reproduce
        for mine, original in zip(ours.cases, theirs.cases, strict=True):
            assert same_calls(mine.call, original.call)
            assert same_outputs(mine.expected, original.expected)
        assert [p.kind for p in ours.probes] == [p.kind for p in theirs.probes]
        assert all(
            same_calls(p.call, q.call) for p, q in zip(ours.probes, theirs.probes, strict=True)
        )
    for ours_known, known in zip(loaded.mistakes, built.mistakes, strict=True):
        assert (
            ours_known.code,
            ours_known.message,
            ours_known.partner,
            list(ours_known.outputs),
        ) == (known.code, known.message, known.partner, list(known.outputs))
        assert all(
            same_outputs(ours_known.outputs[name], known.outputs[name]) for name in known.outputs
        )


def test_a_hit_is_the_plan_as_built(cache: PlanCache) -> None:
    assert cache.load(plan().exercise) is None
    cache.store(plan())
    loaded = cache.load(plan().exercise)
    assert loaded is not None
    assert_same_plans(loaded, plan())
    assert loaded.mistakes and loaded.weight_probe_message is not None


def test_every_hidden_input_set_is_kept(cache: PlanCache) -> None:
    cache.store(plan())
    loaded = cache.load(plan().exercise)
    assert loaded is not None
    hidden = [test for test in loaded.tests if not test.visible]
    assert hidden and all(len(test.cases) == HIDDEN_INPUT_SETS for test in hidden)
    assert all(test.spec.name in loaded.draw() for test in hidden)


def test_an_array_passed_several_times_is_read_back_as_one(cache: PlanCache) -> None:
    """An input `same_as` another is one array in the plan (the submission sees one tensor as
    key and value), and one array read back from the cache."""
    exercise = Catalog.from_folder(GraderSettings().exercises_dir).get("torch-multihead-parity")
    built = build_plan(exercise, SECRET)
    cache.store(built)
    loaded = cache.load(exercise)
    assert loaded is not None
    assert_same_plans(loaded, built)
    pairs = [
        (ours.call.args, theirs.call.args)
        for ours, theirs in zip(loaded.tests, built.tests, strict=True)
    ]
    shared = [
        (args, i, j)
        for args, original in pairs
        for i in range(len(original))
        for j in range(i)
        if original[i] is original[j]
    ]
    assert shared and all(args[i] is args[j] for args, i, j in shared)


def test_another_secret_misses(cache: PlanCache, tmp_path: Path) -> None:
    cache.store(plan())
    assert PlanCache(cache.folder, "another secret").load(plan().exercise) is None


def test_another_torch_version_misses(cache: PlanCache, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.store(plan())
    monkeypatch.setattr("grader.plan_cache._installed", lambda distribution: "0.0-other")
    assert cache.load(plan().exercise) is None


def test_a_plan_whose_inputs_older_code_drew_misses(
    cache: PlanCache, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The key covers the code that draws the inputs: once that changes (torch's generator gave
    way to PCG64 under the whole hidden seed), no plan drawn the old way is served, with no
    version raised by hand."""
    cache.store(plan())
    changed = tmp_path / "inputs.py"
    changed.write_text(Path(inputs.__file__).read_text() + "# drawn another way\n")
    find_spec = importlib.util.find_spec

    def found(name: str, package: str | None = None) -> ModuleSpec | None:
        if name == inputs.__name__:
            return importlib.util.spec_from_file_location(name, changed)
        return find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", found)
    assert cache.load(plan().exercise) is None


def test_a_changed_exercise_misses_and_its_older_file_goes(
    cache: PlanCache, tmp_path: Path
) -> None:
    folder = tmp_path / "exercises" / SLUG
    shutil.copytree(GraderSettings().exercises_dir / SLUG, folder)
    before = load_exercise(folder)
    cache.store(ExercisePlan(before, plan().tests, plan().mistakes))
    (folder / "statement.md").write_text("# Changed\n", encoding="utf-8")
    after = load_exercise(folder)
    assert cache.load(after) is None
    cache.store(ExercisePlan(after, plan().tests, plan().mistakes))
    assert len(list(cache.folder.iterdir())) == 1
    assert cache.load(after) is not None and cache.load(before) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-100],  # truncated
        lambda data: data[:40] + bytes([data[40] ^ 1]) + data[41:],  # one bit of the body
        lambda data: bytes([data[0] ^ 1]) + data[1:],  # one bit of the MAC
        lambda data: b"",
    ],
)
def test_a_damaged_file_is_a_miss_and_is_written_again(cache: PlanCache, damage: object) -> None:
    cache.store(plan())
    path = stored_file(cache)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert cache.load(plan().exercise) is None
    cache.store(plan())
    assert cache.load(plan().exercise) is not None


def test_a_file_written_under_another_key_is_not_read_under_this_one(cache: PlanCache) -> None:
    """Its MAC covers its key: an older version's file put in the place of the newer's checks
    out as nothing."""
    cache.store(plan())
    older = stored_file(cache).read_bytes()
    newer = ExercisePlan(plan().exercise.model_copy(update={"version": "0" * 12}), plan().tests)
    cache.store(newer)
    stored_file(cache).write_bytes(older)
    assert cache.load(newer.exercise) is None


def test_the_files_are_ours_alone_and_name_nothing_of_the_secret(cache: PlanCache) -> None:
    cache.store(plan())
    path = stored_file(cache)
    assert stat.S_IMODE(cache.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    digests = {
        hashlib.sha256(SECRET.encode()).hexdigest(),
        hashlib.md5(SECRET.encode()).hexdigest(),
    }
    assert SECRET not in path.name and not any(d[:16] in path.name for d in digests)
    assert SECRET.encode() not in path.read_bytes()


def test_a_folder_made_open_is_closed_again(cache: PlanCache) -> None:
    cache.folder.mkdir(mode=0o755)
    cache.store(plan())
    assert stat.S_IMODE(cache.folder.stat().st_mode) == 0o700


def test_a_grader_builds_each_plan_once_across_processes(
    cache: PlanCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = Catalog([plan().exercise])
    Grader(catalog, InProcessSandbox(), SECRET, cache).warm()

    def refuse(*args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr("grader.plan_building.build_plan", refuse)
    restarted = Grader(catalog, InProcessSandbox(), SECRET, cache)
    assert restarted.warm().slugs() == [SLUG]
    assert_same_plans(restarted.plan(SLUG), plan())
