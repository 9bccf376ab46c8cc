"""The memory primitives that library objects offered a submission, each refused, beside the
legitimate code that resembles it (`policy.naming`, `policy.unsafe`).

In-process, through `guest.execute`, with an `on_violation` that raises: every probe is refused
before it could touch memory, and its values are harmless should a refusal ever fail (no
address, no pointer dict). The real sandbox runs the attacks themselves in tests/security.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import NoReturn

import pytest
import torch
from guest_support import Ended, printed, run

from grader.contract import Policy
from grader.sandbox.policy import naming
from grader.sandbox.policy.patches import patched

POLICY = Policy(("torch", "numpy"))


def refusal(source: str) -> str:
    """The message that refuses `source`, from the static layer or a runtime guard."""
    try:
        recorder = run(textwrap.dedent(source) + "\ndef f():\n    pass\n", policy=POLICY)
    except Ended as ended:
        return ended.violation.message
    assert recorder.rejections, f"not refused: {source!r}"
    return recorder.rejections[0][0].message


def runs(source: str) -> str:
    return printed(textwrap.dedent(source), POLICY)


CANNOT_NAME = "cannot name a key, a buffer, a parameter or a submodule"


@pytest.mark.parametrize(
    "probe",
    [
        # nn.ParameterDict: every route to a key, guarded or not
        "p = nn.ParameterDict()\np['__array_interface__'] = 1",
        "p = nn.ParameterDict({'__array_interface__': 1})",
        "p = nn.ParameterDict()\np.update({'__array_interface__': 1})",
        "p = nn.ParameterDict()\np.update([('__array_struct__', 1)])",
        "p = nn.ParameterDict()\np.setdefault('__array__', 1)",
        "p = nn.ParameterDict().fromkeys(['__dlpack__'], 1)",
        "p = nn.ParameterDict() | {'__array_interface__': 1}",
        "p = nn.ParameterDict()\np |= {'__array_interface__': 1}",
        "p = nn.ParameterDict()\nx = p['__dict__']",
        "p = nn.ParameterDict()\nx = p.pop('__dict__')",
        # nn.ModuleDict and the registrations of nn.Module
        "m = nn.ModuleDict({'__array__': nn.Identity()})",
        "m = nn.ModuleDict()\nm['__dlpack__'] = nn.Identity()",
        "m = nn.Linear(1, 1)\nm.add_module('__array__', nn.Identity())",
        "m = nn.Linear(1, 1)\nm.register_module('__array__', nn.Identity())",
        "m = nn.Linear(1, 1)\nm.register_buffer('__array_interface__', None)",
        "m = nn.Linear(1, 1)\nm.register_parameter(name='__array_struct__', param=None)",
        "m = nn.Sequential(nn.Linear(1, 1))\nm.set_submodule('0.__array__', nn.Identity())",
        "m = nn.Sequential(nn.Linear(1, 1))\nx = m.get_submodule('0.__class__')",
        "m = nn.Linear(1, 1)\nm.add_module('gi_frame', nn.Identity())",
    ],
)
def test_a_special_name_cannot_become_an_attribute_through_a_library_method(probe: str) -> None:
    assert CANNOT_NAME in refusal("import torch.nn as nn\n" + probe)


@pytest.mark.parametrize(
    "probe",
    [
        "p = nn.ParameterDict()\nx = p['_parameters']",
        "p = nn.ParameterDict()\np['_forward_hooks'] = {}",
        "p = nn.ParameterDict({'_apply': 1})",
        "p = nn.ParameterDict()\nx = p['_keys']",
        "m = nn.Linear(1, 1)\nx = m.get_submodule('_modules')",
    ],
)
def test_a_library_private_name_cannot_be_reached_as_a_key(probe: str) -> None:
    assert "private to the library" in refusal("import torch.nn as nn\n" + probe)


def test_a_name_computed_at_run_time_is_not_quoted() -> None:
    probe = """\
        import torch.nn as nn
        m = nn.Linear(1, 1)
        m.add_module("".join(["__", "array", "__"]), nn.Identity())
        """
    assert refusal(probe).startswith(f"`<a name computed while running>` {CANNOT_NAME}")


def test_containers_and_registrations_work_as_students_use_them() -> None:
    probe = """\
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("_mask", torch.ones(2))
                self.register_buffer("scale", torch.ones(1), persistent=False)
                self.heads = nn.ModuleDict({"q": nn.Linear(2, 2)})
                self.heads["k"] = nn.Linear(2, 2)
                self.heads.update({"v": nn.Linear(2, 2)})
                self.params = nn.ParameterDict({"w": torch.ones(1)})
                self.params["b"] = nn.Parameter(torch.zeros(1))
                self.params |= {"c": torch.zeros(1)}
                self.seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
                self.add_module("proj", nn.Linear(2, 2))
                self.register_parameter("gain", nn.Parameter(torch.ones(1)))
        net = Net()
        print(net._mask.tolist(), list(net.heads), list(net.params), net.params["w"].item())
        print(net.get_submodule("seq.0"), tuple(net.get_parameter("proj.weight").shape))
        pool = nn.FractionalMaxPool2d(2, output_size=1)  # registers a private buffer of its own
        """
    assert runs(probe) == (
        "[1.0, 1.0] ['q', 'k', 'v'] ['w', 'b', 'c'] 1.0\n"
        "Linear(in_features=2, out_features=2, bias=True) (2, 2)\n"
    )


def test_the_checks_are_taken_out_of_torch_after_the_job() -> None:
    key_to_attr = vars(torch.nn.ParameterDict)["_key_to_attr"]
    add_module = vars(torch.nn.Module)["add_module"]
    refusal("import torch.nn as nn\nm = nn.ModuleDict({'__array__': nn.Identity()})")
    assert vars(torch.nn.ParameterDict)["_key_to_attr"] is key_to_attr
    assert vars(torch.nn.Module)["add_module"] is add_module


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        # special names on the submission's own objects, however spelled
        ("class A:\n    __array_interface__ = {}", "`__array_interface__` is not allowed"),
        ("class A:\n    def __array__(self):\n        pass", "defining `__array__`"),
        ("class A:\n    def __dlpack__(self):\n        pass", "defining `__dlpack__`"),
        ("class A:\n    pass\nsetattr(A(), '__array_struct__', 1)", "`__array_struct__`"),
        ("class A:\n    pass\nx = A().__dict__", "`__dict__` is not allowed"),
        ("class A:\n    pass\nobject.__setattr__(A(), 'x', 1)", "`__setattr__` is not allowed"),
    ],
)
def test_array_protocols_cannot_be_put_on_the_submissions_objects(
    probe: str, fragment: str
) -> None:
    assert fragment in refusal(probe)


OBJECT_ARRAYS = "numpy arrays of Python objects (`dtype=object`) are not allowed"


@pytest.mark.parametrize(
    "probe",
    [
        "x = np.zeros(2, dtype=object)",
        "x = np.zeros(2, dtype='O')",
        "x = np.array([1], dtype='object')",
        "x = np.zeros(2, dtype='f8,O')",
        "x = np.zeros(2).astype(object)",
        "x = np.zeros(2).astype('O')",
        "x = np.zeros(2).view('O')",
        "x = np.dtype(object)",
        "x = np.zeros(2, dtype=np.object_)",
        # computed spellings, and arrays that numpy makes of objects by itself: refused when
        # touched, read or written
        "x = np.zeros(2, dtype=np.dtype(chr(79)))\nx[0] = 1",
        "x = np.zeros(2).astype(np.dtype(chr(79)))\ny = x[0]",
        "x = np.array([None, 1])\ny = x.shape",
        "class A:\n    pass\nx = np.array([A()])\ny = x.T",
    ],
)
def test_arrays_of_object_pointers_are_refused_where_the_policy_sees_them(probe: str) -> None:
    assert OBJECT_ARRAYS in refusal("import numpy as np\n" + probe)


def test_numpy_object_is_not_available() -> None:
    assert "`numpy.object_` is not available" in refusal("import numpy as np\nx = np.object_")


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("import numpy as np\nx = np.zeros(4)\nx.resize(8, refcheck=False)", "refcheck=False"),
        ("import numpy as np\nx = np.zeros(4)\nnp.ndarray.resize(x, 8, refcheck=0)", "refcheck"),
        ("import torch\nx = torch.segment_reduce", "`torch.segment_reduce` is not available"),
        ("from torch import segment_reduce", "`torch.segment_reduce` is not available"),
        ("import torch\nx = torch.zeros(3).to_sparse()", "`.to_sparse` is not allowed"),
        ("import torch\nx = torch.zeros(2, 2).to_sparse_csr()", "`.to_sparse_csr` is not"),
        ("import torch\nx = torch.zeros(3)\ny = x.indices", "`.indices` is not allowed"),
        ("import torch\nx = torch.zeros(3)\ny = x.values", "`.values` is not allowed"),
        ("import torch\nx = torch.zeros(3)\ny = x.crow_indices", "`.crow_indices` is not"),
        ("import torch\nf = torch.Tensor.col_indices", "`.col_indices` is not allowed"),
        ("import torch\nx = torch.zeros(2, layout=torch.sparse_coo)", "`torch.sparse_coo`"),
    ],
)
def test_unchecked_memory_writes_and_frees_are_refused(probe: str, fragment: str) -> None:
    assert fragment in refusal(probe)


def test_the_safe_forms_of_the_same_calls_run() -> None:
    probe = """\
        import numpy as np
        import torch
        import torch.nn as nn
        x = np.zeros(4)
        y = np.resize(x, 6)
        z = x.astype(np.float32).view(np.int32)
        t = torch.tensor([3.0, 1.0, 2.0])
        top = t.topk(2)
        heads = nn.ModuleDict({"q": nn.Identity()})
        print(y.shape, z.dtype, top.indices.tolist(), t.max(dim=0).values.item())
        print(list({"a": 1}.values()), len(list(heads.values())), t.to_dense().layout)
        """
    assert runs(probe) == "(6,) int32 [0, 2] 3.0\n[1] 1 torch.strided\n"


def test_a_subclass_cannot_override_the_method_where_keys_are_checked() -> None:
    probe = """\
        import torch.nn as nn
        class Open(nn.ParameterDict):
            def _key_to_attr(self, key):
                return key
        p = Open()
        p["__array_interface__"] = 1
        """
    assert "`_key_to_attr` is not allowed" in refusal(probe)


def test_a_mixin_cannot_override_the_method_where_keys_are_checked() -> None:
    probe = """\
        import torch.nn as nn
        class Raw:
            def _key_to_attr(self, key):
                return key
        class Open(Raw, nn.ParameterDict):
            pass
        p = Open({"__array_interface__": 1})
        """
    assert "`_key_to_attr` is not allowed" in refusal(probe)


class _RawKeys(torch.nn.ParameterDict):
    """A subclass made outside the sandbox, as if the check of class statements had failed."""

    def _key_to_attr(self, key: str) -> str:
        return key


class _Refused(Exception):
    pass


def _raise(message: str) -> NoReturn:
    raise _Refused(message)


@pytest.mark.parametrize(
    "use",
    [
        lambda keys: keys.__setitem__("__array_interface__", 1),
        lambda keys: keys.__getitem__("weight"),
        lambda keys: keys.update({"__array_struct__": 1}),
        lambda keys: keys.pop("weight"),
    ],
)
def test_the_item_methods_refuse_a_parameterdict_whose_key_check_was_stepped_over(
    use: Callable[[torch.nn.ParameterDict], object],
) -> None:
    keys = _RawKeys({"weight": torch.ones(1)})
    with patched() as patches:
        naming.install(patches, _raise)
        with pytest.raises(_Refused, match=r"`_RawKeys\._key_to_attr` is not allowed"):
            use(keys)
        assert torch.nn.ParameterDict({"weight": torch.ones(1)})["weight"].item() == 1.0
    assert "__array_interface__" not in vars(keys)


ZEROS = "zeros = np.zeros(2, dtype=np.int64)\n"  # null pointers, should a refusal ever fail


@pytest.mark.parametrize(
    "probe",
    [
        # pointers read from a buffer, by the constructor however reached
        ZEROS + "x = np.ndarray((2,), dtype=chr(79), buffer=zeros)",
        ZEROS + "x = np.ndarray((1,), dtype=[('p', chr(79))], buffer=zeros)",
        ZEROS + "x = np.ndarray((1,), dtype='i8,' + chr(79), buffer=zeros)",
        ZEROS + "x = sum(map(np.ndarray, [(2,)], [chr(79)], [zeros]))",
        "from numpy import ndarray\n" + ZEROS + "x = max(map(ndarray, [(2,)], [chr(79)], [zeros]))",
        # arrays and dtypes of objects, however made, refused as they are made
        "x = np.dtype(chr(79))",
        "x = np.dtype([('p', chr(79))])",
        "x = np.empty(2, dtype=chr(79))",
        "x = np.zeros(2).astype(chr(79))",
        "x = np.array([None, 1])",
        "f = np.frompyfunc(lambda v: (v, v), 1, 2)\nx = f(np.zeros(2))",
        "x = list(map(np.empty, [2], [chr(79)]))",
        # made in C and handed to the submission's loops
        "for x in map(np.empty, [2], [chr(79)]):\n    pass",
        "x, = map(np.empty, [2], [chr(79)])",
        "for (x,) in zip(map(np.empty, [2], [chr(79)])):\n    pass",
    ],
)
def test_arrays_of_object_pointers_cannot_be_made(probe: str) -> None:
    assert OBJECT_ARRAYS in refusal("import numpy as np\n" + probe)


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("x = np.void", "`numpy.void` is not available"),
        ("x = np.recarray", "`numpy.recarray` is not available"),
        ("x = np.record", "`numpy.record` is not available"),
        ("x = np.dtype('V8').type", "`numpy.void` is not allowed"),
        ("x = np.dtype('f8').type\ny = np.dtype(x).type", ""),
        ("x = np.matrix.mro()", "`.mro` is not allowed"),
    ],
)
def test_the_classes_that_read_raw_bytes_as_records_are_refused_however_reached(
    probe: str, fragment: str
) -> None:
    if fragment:
        assert fragment in refusal("import numpy as np\n" + probe)
    else:
        assert runs("import numpy as np\n" + probe) == ""


def test_numpy_arrays_work_as_students_use_them() -> None:
    probe = """\
        import numpy as np
        from numpy import ndarray
        from typing import List, Tuple

        def pair(x: np.ndarray) -> Tuple[np.ndarray, ndarray]:
            return x, x * 2

        heads: List[np.ndarray] = [np.ones(2) * i for i in range(3)]
        out = np.ndarray((2, 3), dtype=np.float64)
        for i, (head, twice) in enumerate(map(pair, heads)):
            out[:, i] = head + twice
        q, r = np.linalg.qr(np.eye(2))
        rows = [float(row.sum()) for row in np.ones((2, 2))]
        print(isinstance(out, np.ndarray), isinstance(out, ndarray), isinstance(1, np.ndarray))
        print(out.sum(), q.shape, rows, sorted({3, 1}), dict(zip("ab", [1, 2])))
        print(np.ndarray, np.dtype("f4,i4").names, sum(h.sum() for h in heads))
        """
    assert runs(probe) == (
        "True True False\n"
        "18.0 (2, 2) [2.0, 2.0] [1, 3] {'a': 1, 'b': 2}\n"
        "<class 'numpy.ndarray'> ('f0', 'f1') 6.0\n"
    )
