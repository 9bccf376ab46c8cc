"""How a wrong shape is said for several visible tests at once, in their own terms."""

from __future__ import annotations

from grader.shape_relation import ShapePair, shape_relation

HEADS = [{"attention_dim": 8, "num_heads": 2}, {"attention_dim": 64, "num_heads": 16}]


def test_axes_of_one_size_that_trade_places_are_said_as_the_smallest_move() -> None:
    """(B, T, T, heads) for (B, heads, T, T): two orders fit, the swap moves fewest axes."""
    shapes = [ShapePair({}, (1, 4, 4, 2), (1, 2, 4, 4)), ShapePair({}, (2, 7, 7, 8), (2, 8, 7, 7))]
    assert shape_relation(shapes, named_only=False) == "axes 1 and 3 are swapped"


def test_sizes_are_named_by_the_constructors_arguments_on_every_test() -> None:
    shapes = [
        ShapePair(HEADS[0], (1, 4, 16), (1, 4, 8)),
        ShapePair(HEADS[1], (2, 6, 1024), (2, 6, 64)),
    ]
    assert shape_relation(shapes, named_only=False) == (
        "the last axis is `attention_dim * num_heads` where `attention_dim` is expected"
    )


def test_a_size_no_argument_names_is_said_only_where_every_test_shows_it() -> None:
    wrong = ShapePair(HEADS[0], (1, 4, 3), (1, 4, 8))
    right = ShapePair(HEADS[1], (2, 6, 64), (2, 6, 64))
    assert shape_relation([wrong], named_only=False) == "the last axis has the wrong size"
    assert shape_relation([wrong, right], named_only=True) is None
