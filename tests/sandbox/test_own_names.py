"""The policy's allowances for code as students write it, each next to the hostile code that
resembles it and must stay refused.

A submission's own names are its own: private helpers and attributes, name-mangled attributes,
`setattr`/`getattr` with computed names on its own objects, `__all__`. A library's private names
stay refused however they are reached: through the submission's own objects, `super()`,
`getattr`, `setattr` or an import.
"""

from __future__ import annotations

import numpy as np
import pytest
from guest_support import TORCH_POLICY, printed, run, violation_of

from grader.contract import Call, Policy, Violation

OWN_PRIVATE_NAMES = """\
    import torch
    import torch.nn as nn

    _SCALE = 2.0

    def _double(x):
        return x * _SCALE

    class Base(nn.Module):
        def _prepare(self, x):
            return x + 1

    class Net(Base):
        _registry = {}

        def __init__(self):
            super(Net, self).__init__()
            self._cache = None
            self.__secret = 3
            self._proj = nn.Linear(2, 2)
            self.register_buffer("_mask", torch.ones(2))

        @staticmethod
        def _helper(x):
            return x - 1

        @property
        def _size(self):
            return self.__secret

        def _split(self, x):
            self._cache = x
            self._cache += 1
            return super()._prepare(x)

    net = Net()
    print(net._split(1), net._cache, net._size, Net._helper(5), _double(2), Net._registry)
    print(net._proj.weight.shape, net._mask.tolist(), hasattr(net, "_missing"))
    """


def test_the_submission_own_private_names_work_as_in_plain_python() -> None:
    assert printed(OWN_PRIVATE_NAMES) == "2 2 3 4 4.0 {}\ntorch.Size([2, 2]) [1.0, 1.0] False\n"


COMPUTED_NAMES = """\
    import torch.nn as nn

    __all__ = ["Heads"]

    class Heads(nn.Module):
        def __init__(self, count):
            super().__init__()
            self.count = count
            for i in range(count):
                setattr(self, f"head_{i}", nn.Linear(2, 2))
            setattr(self, "_built", True)

        def heads(self):
            return [getattr(self, f"head_{i}") for i in range(self.count)]

    heads = Heads(3)
    print(len(heads.heads()), heads._built, __all__)
    delattr(heads, "head_2")
    print(hasattr(heads, "head_2"))
    """


def test_setattr_getattr_and_delattr_work_on_the_submission_own_objects() -> None:
    assert printed(COMPUTED_NAMES) == "3 True ['Heads']\nFalse\n"


HEADER = "import torch\nimport torch.nn as nn\n"


def library_private_refusal(source: str, fragment: str) -> Violation:
    """The run-time refusal of `source` for a library's private name that `fragment` quotes."""
    violation = violation_of(source)
    assert fragment in violation.message
    assert "private to the library that defines them" in violation.message
    return violation


LIBRARY_PRIVATE_READS = [
    # through the submission's own module: torch's internals on every nn.Module
    ("class Net(nn.Module):\n    pass\nnet = Net()\nx = net._parameters\n", "`_parameters`"),
    ("class Net(nn.Module):\n    pass\nnet = Net()\nf = net._call_impl\n", "`_call_impl`"),
    ("class Net(nn.Module):\n    pass\nnet = Net()\nx = net._forward_hooks\n", "`_forward_hooks`"),
    # through super(), and a library layer the submission subclasses
    (
        "class Net(nn.Module):\n    def f(self):\n        return super()\nx = Net().f()._apply\n",
        "`_apply`",
    ),
    (
        "class Conv(nn.Conv1d):\n    pass\nconv = Conv(1, 1, 1)\nf = conv._conv_forward\n",
        "`_conv_forward`",
    ),
    # an own private attribute that holds a foreign object gives no way into it
    ("class Net:\n    pass\nnet = Net()\nnet._t = torch\nx = net._t._C\n", "`torch._C`"),
    (
        "class Net:\n    pass\nnet = Net()\nnet._l = nn.Linear(1, 1)\nx = net._l._parameters\n",
        "`_parameters`",
    ),
    # foreign objects, by computed names too
    ("x = torch.zeros(2)\ny = x._base\n", "`_base`"),
    ("def g():\n    pass\ny = g._cache\n", "`_cache`"),
]


@pytest.mark.parametrize(("probe", "fragment"), LIBRARY_PRIVATE_READS)
def test_a_library_private_names_stay_unreadable_however_reached(probe: str, fragment: str) -> None:
    name = fragment.strip("`.").rpartition(".")[2]
    # Never defined by the source, the name is refused before anything runs...
    (violations,) = run(HEADER + probe).rejections
    assert any(name in violation.message for violation in violations)
    # ...and spelled out in the source (as a string), it is refused at run time, on its object.
    source = f"{HEADER}SPELLED = {name!r}\n{probe}"
    assert library_private_refusal(source, fragment).line == source.count("\n")


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("class Net(nn.Module):\n    pass\nnet = Net()\nnet._modules = {}\n", "`._modules`"),
        ("class Net(nn.Module):\n    pass\nnet = Net()\nnet._apply = None\n", "`._apply`"),
        ("class Net(nn.Module):\n    pass\nnet = Net()\nsetattr(net, '_apply', 1)\n", "`_apply`"),
        ("x = nn.Linear(1, 1)\nsetattr(x, '_parameters', {})\n", "`_parameters`"),
        ("x = nn.Linear(1, 1)\nx._own = 1\n", "`._own`"),
    ],
)
def test_a_library_private_names_stay_unwritable(probe: str, fragment: str) -> None:
    source = HEADER + probe
    assert library_private_refusal(source, fragment).line == source.count("\n")


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("setattr(torch, 'allclose', lambda a, b: True)\n", "the module `torch`"),
        ("setattr(nn.Linear, 'forward', None)\n", "the class `Linear`"),
        ("setattr(F, 'softmax', F.relu)\n", "the module `torch.nn.functional`"),
        ("delattr(torch, 'zeros')\n", "the module `torch`"),
    ],
)
def test_setattr_writes_no_more_than_an_assignment_could(probe: str, fragment: str) -> None:
    source = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + probe
    violation = violation_of(source)
    assert fragment in violation.message
    assert "no monkeypatching" in violation.message


@pytest.mark.parametrize(
    "name", ["__class__", "__dict__", "__array_interface__", "__init__", "__torch_function__"]
)
def test_setattr_refuses_special_names_even_on_own_objects(name: str) -> None:
    probe = f"class Net:\n    pass\nnet = Net()\nsetattr(net, {name!r}, 1)\n"
    violation = violation_of(probe)
    assert "double-underscore attributes" in violation.message
    assert violation.line == 4


def test_a_private_name_computed_at_run_time_is_not_the_submission_own() -> None:
    probe = "import torch\nx = torch.zeros(2)\ny = getattr(x, '_ba' + 'se')\n"
    assert "private to the library" in violation_of(probe).message
    probe = (
        "class Net:\n    pass\nnet = Net()\nnet.x = 1\nname = '_' + 'x'\ny = getattr(net, name)\n"
    )
    assert violation_of(probe).line == 6


def test_a_computed_name_in_a_refusal_is_never_quoted() -> None:
    probe = "import torch\nx = torch.zeros(1)\nsetattr(torch, '_' + str(x.sum().item()), 1)\n"
    violation = violation_of(probe)
    assert "0.0" not in violation.message
    assert "<a name computed while running>" in violation.message


def test_nn_init_writes_into_the_submission_own_tensors_not_the_graders_inputs() -> None:
    source = """\
        import torch
        import torch.nn as nn
        def f(x):
            layer = nn.Linear(3, 3)
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(x)
            return x + layer(x) * 0
        """
    grader_input = np.ones((2, 3), np.float32)
    call = Call(id="only", args=(grader_input,))
    (outcome,) = run(source, calls=(call, call)).outcomes[:1]
    assert outcome.outputs is not None and outcome.outputs[0].array is not None
    assert not outcome.outputs[0].array.any()  # the submission zeroed its own copy
    assert grader_input.all()  # the grader's array is untouched


def test_notebook_leftovers_work_print_options_torchtyping_and_a_main_guard() -> None:
    source = """\
        import numpy as np
        import torch
        from torchtyping import TensorType, patch_typeguard
        patch_typeguard()
        torch.set_printoptions(precision=2)
        np.set_printoptions(precision=2)
        def double(x: TensorType["batch", float]) -> TensorType["batch", float]:
            return 2 * x
        x = torch.tensor([1.23456])
        print(double(x), np.array([1.23456]), f"{x.shape=}")
        if __name__ == "__main__":
            print("demo")
        """
    both = Policy((*TORCH_POLICY.allowed_imports, "numpy"))
    assert printed(source, both) == "tensor([2.47]) [1.23] x.shape=torch.Size([1])\n"


def test_reserved_guard_names_are_refused_where_similar_private_names_pass() -> None:
    assert printed("_getattr = 1\n_write = 2\nprint(_getattr + _write)\n") == "3\n"
    (violations,) = run("_getattr_ = 1\n").rejections
    assert "reserved for the grading sandbox" in violations[0].message


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        # a library layer's __init__ sets private attributes on the submission's own subclass
        (
            "class Rnn(nn.GRU):\n    pass\nrnn = Rnn(2, 2)\nx = getattr(rnn, '_flat_weights')\n",
            "`_flat_weights`",
        ),
        (
            "class Rnn(nn.GRU):\n    pass\nrnn = Rnn(2, 2)\nrnn._flat_weights = []\n",
            "`._flat_weights`",
        ),
        # what the metaclass of an own class defines
        (
            "from typing import Mapping\nclass R(Mapping):\n    pass\n"
            "x = getattr(R, '_dump_registry')\n",
            "`_dump_registry`",
        ),
        # a class body that would be handed nn.Module's internals by its __init__
        (
            "class Net(nn.Module):\n    _parameters = property(lambda self: 1, print)\n",
            "`_parameters`",
        ),
    ],
)
def test_private_names_put_there_by_a_library_are_not_the_submission_own(
    probe: str, fragment: str
) -> None:
    library_private_refusal(HEADER + probe, fragment)


def test_a_callable_object_that_claims_a_math_module_is_not_one_of_its_functions() -> None:
    # numpy.linalg.test is a PytestTester whose instances say they belong to numpy.linalg.
    probe = "import numpy as np\nx = np.linalg.norm\ny = np.linalg.test\n"
    violation = violation_of(probe, Policy(("numpy",)))
    assert "`numpy.linalg.test` is not available" in violation.message
    assert violation.line == 3


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        # a mixin of the submission's own, first in the MRO, overrides what the library base
        # defines: the class body binds nothing of the library's, the mixin has no library base
        (
            "class Raw:\n    def _key_to_attr(self, key):\n        return key\n"
            "class Open(Raw, nn.ParameterDict):\n    pass\n",
            "`_key_to_attr`",
        ),
        (
            "class Fast:\n    def _call_impl(self, *args):\n        return 1\n"
            "class Layer(Fast, nn.Linear):\n    pass\n",
            "`_call_impl`",
        ),
        # further down the submission's own hierarchy
        (
            "class Raw:\n    def _apply(self, fn):\n        return self\n"
            "class Middle(Raw):\n    pass\nclass Net(Middle, nn.Module):\n    pass\n",
            "`_apply`",
        ),
        # nn.Module's instance internals, bound by a mixin
        (
            "class Props:\n    _parameters = property(lambda self: 1, print)\n"
            "class Net(Props, nn.Module):\n    pass\n",
            "`_parameters`",
        ),
    ],
)
def test_a_library_private_name_cannot_be_overridden_from_anywhere_on_the_mro(
    probe: str, fragment: str
) -> None:
    source = HEADER + probe
    violation = library_private_refusal(source, fragment)
    assert violation.line == source.count("\n") - 1  # the class statement that mixes them


def test_mixins_and_library_subclasses_keep_their_own_private_names() -> None:
    source = """\
        import torch
        import torch.nn as nn

        class _Helpers:
            def _split_heads(self, x):
                return x.view(2, 1)

        class Projection(_Helpers, nn.Linear):
            _scale = 2.0

            def __init__(self):
                super(Projection, self).__init__(2, 2)
                self._calls = 0

            def _project(self, x):
                self._calls += 1
                return self._split_heads(super().forward(x)) * self._scale

        layer = Projection()
        print(layer._project(torch.ones(2)).shape, layer._calls)
        """
    assert printed(source) == "torch.Size([2, 1]) 1\n"


@pytest.mark.parametrize(
    ("after_init", "fragment"),
    [
        ("x = self._flat_weights", "`_flat_weights`"),
        ("self._flat_weights = []", "`._flat_weights`"),
        ("setattr(self, '_flat_weights', [])", "`_flat_weights`"),
    ],
)
def test_writing_a_library_private_name_first_does_not_make_it_the_submission_own(
    after_init: str, fragment: str
) -> None:
    # nn.GRU's __init__ sets `_flat_weights`, the list its C++ kernel reads the weights from:
    # whoever wrote the name first, the value there is torch's.
    source = (
        f"{HEADER}class Rnn(nn.GRU):\n"
        "    def __init__(self):\n"
        "        self._flat_weights = []\n"
        "        super().__init__(2, 2)\n"
        f"        {after_init}\n"
        "rnn = Rnn()\n"
    )
    assert library_private_refusal(source, fragment).line == 7


def test_an_own_private_attribute_stays_own_through_every_kind_of_write() -> None:
    source = """\
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                self._early = "before init"  # plain values may be set before nn.Module's init
                super().__init__()
                self._count = 0
                setattr(self, "_name", "net")

            def step(self):
                self._count += 1
                self._early = self._early.upper()
                del self._name
                self._name = "again"
                return self._count, self._early, self._name

        print(Net().step())
        """
    assert printed(source) == "(1, 'BEFORE INIT', 'again')\n"
