from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from grader.catalog import Catalog
from grader.errors import ExerciseDefinitionError, UnknownExerciseError
from grader.settings import GraderSettings
from grader.spec import ExerciseSpec, load_exercise

MINIMAL = {
    "slug": "tiny",
    "title": "Tiny",
    "summary": "Doubles its input.",
    "kind": "function",
    "entry_point": "double",
    "reference": "reference.tiny",
    "allowed_imports": ["torch"],
    "tests": [
        {"name": "a", "seed": 1, "inputs": [{"shape": [2]}]},
        {"name": "b", "visibility": "hidden", "inputs": [{"shape": [3]}]},
    ],
}


def two_tests(fields: dict[str, Any]) -> dict[str, Any]:
    """Two visible tests with these fields."""
    return {"tests": [{"name": name, "seed": 1, **fields} for name in "ab"]}


def test_a_minimal_exercise_validates() -> None:
    spec = ExerciseSpec.model_validate(MINIMAL)
    assert spec.max_score == 2.0
    assert spec.test("b").seed is None


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"slug": "Not A Slug"}, "slug"),
        ({"tests": [MINIMAL["tests"][0], MINIMAL["tests"][0]]}, "unique"),
        ({"tests": [{"name": "a", "inputs": [{"shape": [2]}]}] * 2}, "needs a seed"),
        ({"tests": [{"name": n, "seed": -1, "inputs": [{"shape": [2]}]} for n in "ab"]}, "seed"),
        ({"kind": "function", "weights": "grader"}, "no weights"),
        ({"unknown_key": 1}, "Extra inputs"),
        (two_tests({}), "`inputs` or `steps`"),
        (two_tests({"inputs": [{"shape": [2]}], "steps": [{}]}), "`inputs` or `steps`"),
        (two_tests({"inputs": [{"shape": [2]}], "entry": "half"}), "no entry 'half'"),
        (two_tests({"steps": [{"method": "grow"}]}), "no method 'grow'"),
        ({"decimals": {"loss": 3}}, "names no output 'loss'"),
        (two_tests({"inputs": [{"shape": [2]}], "decimals": 0}), "greater than or equal to 1"),
        (two_tests({"inputs": [{"integers": [2], "high": 0}]}), "must be above low"),
        (two_tests({"inputs": [{"integers": [2], "high": 5, "ignored": 0.5}]}), "go together"),
    ],
)
def test_invalid_exercises_say_what_is_wrong(change: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValidationError, match=complaint):
        ExerciseSpec.model_validate(MINIMAL | change)


def test_a_sequence_compares_some_output() -> None:
    kind = {"kind": "module", "methods": {"reset": {}}}
    with pytest.raises(ValidationError, match="none of its steps returns an output"):
        ExerciseSpec.model_validate(MINIMAL | kind | two_tests({"steps": [{"method": "reset"}]}))


def test_a_function_has_no_methods() -> None:
    calls = {"methods": {"grow": {}}} | two_tests({"steps": [{"method": "grow"}]})
    with pytest.raises(ValidationError, match="a function has no method 'grow'"):
        ExerciseSpec.model_validate(MINIMAL | calls)


def test_hidden_tests_may_not_carry_a_seed() -> None:
    hidden = {"name": "h", "visibility": "hidden", "seed": 3, "inputs": [{"shape": [1]}]}
    with pytest.raises(ValidationError, match="must not carry a seed"):
        ExerciseSpec.model_validate(MINIMAL | {"tests": [MINIMAL["tests"][0], hidden]})


def test_a_broken_folder_names_itself(tmp_path: Path) -> None:
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "exercise.toml").write_text("slug = [", encoding="utf-8")
    with pytest.raises(ExerciseDefinitionError, match="tiny"):
        load_exercise(folder)


def test_unknown_slugs_list_the_known_ones() -> None:
    with pytest.raises(UnknownExerciseError, match="known: none"):
        Catalog([]).get("nope")


def test_the_catalog_knows_every_module_an_exercise_allows() -> None:
    """The warm process preloads these, with the submodules and modules every exercise allows:
    a confined child can import nothing more."""
    catalog = Catalog.from_folder(GraderSettings().exercises_dir)
    imports = catalog.allowed_imports()
    assert list(imports) == sorted(set(imports))
    for exercise in catalog:
        assert set(exercise.spec.allowed_imports) <= set(imports)
    assert {"numpy", "torch"} <= set(imports)
