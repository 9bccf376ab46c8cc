"""The hostile corpus: each file in `corpus/` is a submission that attacks the grader. Each runs
through the real sandbox (`WarmProcessSandbox`, limits on), never in this process.

For every file the test asserts:
1. its verdict: how the run ended, the report's status and each test's status, and that the
   message names the cause;
2. that nothing escaped: no canary file (`/tmp/autograder-pwned-<case>`, the paths the corpus
   tries to write), no secret, no hidden input, hidden expected value or line of the reference in
   the report, no terminal control character in the CLI's text rendering of it, and the same warm
   process as before;
3. that the next submission, a correct one graded on the same sandbox, passes every test.

The run's ending says which layer stopped an attack: REJECTED the static policy, VIOLATION a
runtime guard, TIMEOUT the CPU rlimit or the supervisor's wall clock (the detail says which),
MEMORY the address-space rlimit, OUTPUT_LIMIT the supervisor's output cap, CRASHED the process
boundary, COMPLETED the judging in this process (exact types, shapes) or, for a file opened by
library code, seccomp ("Operation not permitted") with Landlock behind it.
"""

from __future__ import annotations

import dataclasses
import glob
import subprocess
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from grader.catalog import Catalog
from grader.contract import Execution, Job, Termination
from grader.limits import MIB, SandboxLimits
from grader.plan import ExercisePlan
from grader.render import render_text
from grader.report import Report, ReportStatus, TestStatus
from grader.runner import Grader
from grader.sandbox.interface import Layer
from grader.sandbox.process import WarmProcessSandbox
from grader.settings import GraderSettings
from grader.spec import Visibility

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
SEED = "multi-headed-self-attention"
NUMPY = "numpy-multi-head-attention"
SDPA = "scaled-dot-product-attention"
KV_CACHE = "kv-cache-generation"
CORRECT = (ROOT / "exercises" / SEED / "solutions" / "neetcode_common_answer.py").read_text()
REFERENCE_SOURCE = ROOT / "reference" / "multi_headed_self_attention.py"

# Set in this process's environment before the sandbox starts, as a deployment would set them.
SECRETS = {
    "AUTOGRADER_SECRET": "canary-autograder-secret-7d3f19",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-secret-b41e07",
}
CANARY_FILES = "/tmp/autograder-pwned-*"
BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

# Tight enough for bombs to end within a second or two; loops have limits of their own.
TIGHT = SandboxLimits(cpu_s=3, wall_s=10, memory_bytes=512 * MIB, output_bytes=8 * MIB)


@dataclass(frozen=True)
class Case:
    file: str
    ending: Termination
    status: TestStatus  # of every visible test (the visible tests' run ended as `ending`)
    message: str  # the cause, in the student's terms: on the report or its first test
    stdout: str = ""  # found in the first test's captured prints
    slug: str = SEED
    limits: SandboxLimits = TIGHT
    layer: str | None = None  # a host layer the verdict depends on; skipped where inactive
    # The exercise's forbidden list replaced by this one: a check that must hold even where the
    # list misses a way to reach a forbidden API.
    forbidden: tuple[str, ...] | None = None

    def __str__(self) -> str:
        return self.file

    def status_of(self, visibility: Visibility) -> TestStatus:
        """A hidden test tells one bit (a refused source refuses them all): not passed."""
        if visibility is Visibility.VISIBLE or self.status is TestStatus.REJECTED:
            return self.status
        return TestStatus.FAILED


def static(file: str, message: str) -> Case:
    """A case the static layer refuses before anything runs."""
    return Case(file, Termination.REJECTED, TestStatus.REJECTED, message)


def guard(
    file: str, message: str, slug: str = SEED, forbidden: tuple[str, ...] | None = None
) -> Case:
    """A case a runtime guard refuses, which ends the run."""
    return Case(
        file, Termination.VIOLATION, TestStatus.REJECTED, message, slug=slug, forbidden=forbidden
    )


# The built-ins, as three exercises' lists once named them: not the layers that contain one.
BUILT_INS = (
    "torch.nn.MultiheadAttention",
    "torch.nn.modules.activation.MultiheadAttention",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.multi_head_attention_forward",
)


def ran_inside(api: str) -> str:
    """The refusal of a forbidden API that an allowed layer or function ran."""
    return (
        f"`{api}` is not allowed in this exercise: the point is to build it yourself (your code "
        "ran it inside another layer or function)"
    )


def ran(
    file: str,
    status: TestStatus,
    message: str,
    *,
    stdout: str = "",
    layer: str | None = None,
) -> Case:
    """A case that runs to its end, judged in the trusted process."""
    return Case(file, Termination.COMPLETED, status, message, stdout=stdout, layer=layer)


def stopped(
    file: str,
    ending: Termination,
    status: TestStatus,
    message: str,
    *,
    limits: SandboxLimits = TIGHT,
) -> Case:
    """A case that a limit, the supervisor or a crash ends early."""
    return Case(file, ending, status, message, limits=limits)


CASES = [
    # Escape through torch's public attributes and deeper paths; computed names, aliases,
    # format fields and a bare except that keeps probing.
    guard("escape_torch_os", "`torch.os` is not available"),
    guard("escape_torch_sys", "`torch.sys` is not available"),
    guard("escape_torch_builtins", "`torch.builtins` is not available"),
    guard("escape_torch_ctypes", "`torch.ctypes` is not available"),
    guard("escape_torch_importlib", "`torch.importlib` is not available"),
    guard("escape_torch_inspect", "`torch.inspect` is not available"),
    guard("escape_deep_subprocess", "`torch.utils` is a module this exercise does not let you use"),
    guard("escape_deep_pickle", "`torch.serialization` is a module"),
    guard("escape_deep_gc", "`torch.cuda` is a module"),
    guard("escape_computed_name", "`torch.os` is not available"),
    guard("escape_numpy_test_runner", "`numpy.linalg.test` is not available"),
    guard("escape_aliasing", "`torch.nn.functional.importlib` is not available"),
    guard("escape_format_string", "`torch.os` is not available"),
    guard("escape_bare_except_probing", "`torch.os` is not available"),
    # Python's internals and frames, to reach the caller: the grader's frames and globals.
    static("introspect_subclasses", "`__subclasses__` is not allowed"),
    guard("introspect_subclasses_computed", "`__class__` is not allowed"),
    static("introspect_function_globals", "`__globals__` is not allowed"),
    guard("introspect_globals_computed", "`__globals__` is not allowed"),
    static("introspect_builtins", "`__builtins__` is not allowed"),
    static("introspect_sys_getframe", "`_getframe` is not allowed"),
    static("introspect_generator_frame", "`f_back` is not allowed: frames, tracebacks"),
    guard("introspect_generator_frame_computed", "`gi_frame` is not allowed"),
    guard("introspect_traceback_frame", "`__traceback__` is not allowed"),
    # Exfiltration: the reference, the grader, the environment, the hidden tests' inputs.
    static("exfil_import_reference", "importing `reference.multi_headed_self_attention`"),
    static("exfil_import_grader", "importing `grader.plan_building` is not allowed"),
    ran("exfil_open_reference", TestStatus.ERROR, "name 'open' is not defined"),
    guard("exfil_from_file_reference", "`torch.from_file` is not available"),
    guard("exfil_environ", "`torch.os` is not available"),
    guard("exfil_proc_environ", "`.untyped_storage` is not allowed"),
    guard("exfil_hidden_inputs_in_violation", "`torch.<a name computed while running>` is not"),
    guard("exfil_hidden_inputs_in_module_name", "`<a name computed while running>` is not"),
    stopped(
        "exfil_hidden_inputs_in_memory_error",
        Termination.MEMORY,
        TestStatus.FAILED,
        "differs",
    ),
    ran("exfil_hidden_inputs_in_probe", TestStatus.FAILED, "differs"),
    # Files without open.
    guard("files_torch_save", "`torch.save` is not available"),
    guard("files_torch_load", "`torch.load` is not available"),
    guard("files_tensor_tofile", "`.tofile` is not allowed"),
    guard("files_from_file_shared", "`torch.from_file` is not available"),
    guard("files_storage", "`.storage` is not allowed"),
    guard("files_numpy_save", "`numpy.save` is not available", slug=NUMPY),
    guard("files_numpy_load", "`numpy.load` is not available", slug=NUMPY),
    guard("files_numpy_memmap", "`numpy.memmap` is not available", slug=NUMPY),
    # Its lazy import now happens in the warm process (printing tensors must work), so no file
    # is read in the child; seccomp and Landlock would refuse the read if one remained.
    ran("files_lazy_import", TestStatus.FAILED, "differs", stdout="tensor([2., 2., 2.])"),
    # Monkeypatching torch, process-wide, and state left for the next submission.
    guard("patch_torch_allclose", "changing the module `torch` is not allowed"),
    static("patch_tensor_eq", "`__eq__` is not allowed"),
    guard("patch_module_classes", "changing the class `Linear` is not allowed"),
    guard("patch_module_call", "`__call__` is not allowed"),
    guard("patch_torch_library", "`torch.library` is a module"),
    guard("patch_global_forward_hook", "`torch.nn.modules` is a module"),
    ran("state_process_wide", TestStatus.FAILED, "differs"),
    # Tensors that lie.
    static("lie_tensor_eq", "defining `__eq__` is not allowed"),
    static("lie_torch_function", "defining `__torch_function__` is not allowed"),
    ran("lie_plain_subclass", TestStatus.FAILED, "should be a torch.Tensor; got Liar"),
    ran("lie_parameter", TestStatus.FAILED, "should be a torch.Tensor; got Parameter"),
    ran("lie_zero_stride_expand", TestStatus.FAILED, "has shape (1000000, 1000000, 1000000)"),
    # Forged results.
    ran(
        "forge_stdout_json",
        TestStatus.FAILED,
        "should be a torch.Tensor; got NoneType",
        stdout='"status": "passed"',
    ),
    guard("forge_channel_fd", "`torch.os` is not available"),
    # Bombs.
    guard("bomb_fork", "`torch.os` is not available"),
    guard("bomb_fork_multiprocessing", "`torch.multiprocessing` is a module"),
    guard("bomb_thread", "`torch.threading` is not available"),
    stopped("bomb_memory_tensor", Termination.MEMORY, TestStatus.RESOURCE_LIMIT, "can't allocate"),
    stopped("bomb_memory_list", Termination.MEMORY, TestStatus.RESOURCE_LIMIT, "MemoryError"),
    stopped("bomb_memory_bytes", Termination.MEMORY, TestStatus.RESOURCE_LIMIT, "MemoryError"),
    stopped("bomb_memory_at_import", Termination.MEMORY, TestStatus.RESOURCE_LIMIT, "MemoryError"),
    ran("bomb_recursion", TestStatus.ERROR, "RecursionError"),
    # Loops: one for the CPU limit, one for the wall clock. Sleeping needs an import.
    stopped(
        "loop_busy_cpu",
        Termination.TIMEOUT,
        TestStatus.TIMEOUT,
        "used up its 1 s of CPU",
        limits=dataclasses.replace(TIGHT, cpu_s=1, wall_s=20),
    ),
    stopped(
        "loop_busy_wall",
        Termination.TIMEOUT,
        TestStatus.TIMEOUT,
        "still running at the 1 s wall-clock limit",
        limits=dataclasses.replace(TIGHT, cpu_s=30, wall_s=1),
    ),
    static("loop_sleep", "importing `time` is not allowed"),
    # Output: huge, or written to drive the reader's terminal (the report keeps the escapes; its
    # text rendering must not).
    ran("output_print_flood", TestStatus.FAILED, "differs", stdout="output cut at 8192 characters"),
    ran("output_terminal_escapes", TestStatus.FAILED, "differs", stdout="\x1b]0;pwned\x07"),
    dataclasses.replace(
        ran("output_long_rows_for_properties", TestStatus.FAILED, "has shape (1, 4194304)"),
        limits=dataclasses.replace(TIGHT, output_bytes=96 * MIB),
    ),
    stopped(
        "output_giant_tensor",
        Termination.OUTPUT_LIMIT,
        TestStatus.RESOURCE_LIMIT,
        "announced a frame",
    ),
    # Signals and exits.
    guard("signal_kill_parent", "`torch.os` is not available"),
    static("signal_alarm", "importing `signal` is not allowed"),
    ran("exit_system_exit", TestStatus.ERROR, "NameError"),
    guard("exit_sys_exit", "`torch.sys` is not available"),
    static("exit_os_exit", "`_exit` is not allowed"),
    # Crashes of the interpreter itself.
    stopped("crash_nested_tuple_hash", Termination.CRASHED, TestStatus.ERROR, "killed by SIGSEGV"),
    guard("crash_sparse_heap_write", "`torch.sparse_coo_tensor` is not available"),
    # The network.
    static("net_socket", "importing `socket` is not allowed"),
    guard("net_urlopen", "`torch.hub` is a module"),
    guard("net_socket_computed", "`torch.multiprocessing` is a module"),
    # A forbidden API reached inside an allowed layer: its computation refuses to run, whoever
    # calls it, even under a list that misses the layer (the exercises' own lists name them).
    guard(
        "forbidden_layer_self_attn", ran_inside("torch.nn.MultiheadAttention"), forbidden=BUILT_INS
    ),
    guard(
        "forbidden_layer_fast_path", ran_inside("torch.nn.MultiheadAttention"), forbidden=BUILT_INS
    ),
    guard(
        "forbidden_sdpa_through_mha",
        ran_inside("torch.nn.functional.scaled_dot_product_attention"),
        slug=SDPA,
        forbidden=("torch.nn.functional.scaled_dot_product_attention",),
    ),
    static("forbidden_transformer_layer", "`nn.TransformerEncoderLayer` is not allowed"),
    # Memory primitives from library objects alone: special names given to containers, arrays
    # of object pointers, a resize under a view, unchecked segment lengths, sparse aliases.
    guard("memory_parameterdict_array_interface", "`__array_interface__` cannot name a key"),
    guard("memory_register_buffer_dunder", "`<a name computed while running>` cannot name a key"),
    guard("memory_object_array", "numpy arrays of Python objects", slug=NUMPY),
    guard("memory_resize_refcheck", "`.resize(..., refcheck=False)` is not allowed", slug=NUMPY),
    guard("memory_segment_reduce_unsafe", "`torch.segment_reduce` is not available"),
    guard("memory_sparse_alias_write", "`.indices` is not allowed"),
    # The same, where a check was judged on too little: a library method overridden by a mixin
    # of the submission's own (not by the class body), object pointers read from a buffer and
    # followed in C or by iteration, a library's private state claimed by writing it first.
    guard("memory_mixin_key_to_attr", "`_key_to_attr` is not allowed"),
    guard("memory_object_array_buffer", "numpy arrays of Python objects", slug=NUMPY),
    guard("memory_object_array_structured_iter", "numpy arrays of Python objects", slug=NUMPY),
    guard("memory_rnn_private_state_claimed", "`_flat_weights` is not allowed"),
    # A backward pass of the submission's own (a custom autograd Function, a tensor hook) runs
    # when the autograd engine calls it, after forward returned: under the same guards.
    ran("backward_open_file", TestStatus.ERROR, "name 'open' is not defined"),
    guard("backward_torch_os", "`torch.os` is not available"),
    static("backward_ctx_mro", "`__mro__` is not allowed"),
    guard("backward_ctx_private", "`_get_compiled_autograd_symints` is not allowed"),
    ran("backward_saved_tensors_kept", TestStatus.ERROR, "after they have already been freed"),
    guard("backward_hook_forbidden", "`torch.os` is not available"),
    guard("backward_anomaly_mode", "`torch.autograd.set_detect_anomaly` is not allowed"),
    guard("backward_saved_tensor_hooks", "`torch.autograd.graph` is not allowed"),
    ran("backward_grad_of_grader_input", TestStatus.FAILED, "differs"),
    # Right answers forward; the escape waits in a backward that only the grader's own gradient
    # pass calls.
    guard("backward_escape_in_gradient_pass", "`torch.os` is not available"),
    # Sequences of calls on one instance: the escape waits in a method only they call, and state
    # kept from one call (a prompt's ids) is put into what the next one asks for.
    guard("sequence_decode_computed_name", "`torch.load` is not available", slug=KV_CACHE),
    guard(
        "sequence_state_in_violation",
        "`torch.<a name computed while running>` is not",
        slug=KV_CACHE,
    ),
]


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def secret_holder() -> Iterator[None]:
    """The secrets in this process's environment, and a neighbour process started with them in
    its own (what /proc/<pid>/environ would show), before the sandbox starts."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in SECRETS.items():
            patch.setenv(name, value)
        neighbour = subprocess.Popen(["sleep", "600"], env={"PATH": "/usr/bin:/bin", **SECRETS})
        try:
            yield
        finally:
            neighbour.kill()
            neighbour.wait()


class CaseSandbox:
    """The real sandbox, run with the limits of the case at hand, keeping each job and what its
    run ended in: the visible tests' job first, then the hidden tests' (a job the machine
    starved comes again, run once more by the grader)."""

    def __init__(self, inner: WarmProcessSandbox) -> None:
        self.inner = inner
        self.limits = TIGHT
        self.forbidden: tuple[str, ...] | None = None
        self.runs: list[tuple[Job, Execution]] = []

    def start(self, limits: SandboxLimits, forbidden: tuple[str, ...] | None = None) -> None:
        self.limits, self.forbidden, self.runs = limits, forbidden, []

    def run(self, job: Job) -> Execution:
        policy = job.policy
        if self.forbidden is not None:
            policy = dataclasses.replace(policy, forbidden=self.forbidden)
        execution = self.inner.run(dataclasses.replace(job, limits=self.limits, policy=policy))
        self.runs.append((job, execution))
        return execution

    def visible(self) -> Execution:
        """How the visible tests' run ended, the last time it was run."""
        first = self.runs[0][0]
        return [execution for job, execution in self.runs if job is first][-1]

    @property
    def parallel_runs(self) -> int:
        return self.inner.parallel_runs

    def layers(self) -> list[Layer]:
        return self.inner.layers()

    def close(self) -> None:
        self.inner.close()


@pytest.fixture(scope="module")
def sandbox(secret_holder: None) -> Iterator[CaseSandbox]:
    # One slot: every next submission runs where the hostile one just ran.
    sandbox = CaseSandbox(WarmProcessSandbox(slots=1))
    try:
        sandbox.layers()  # starts the warm process, with the secrets already in our environment
        yield sandbox
    finally:
        sandbox.close()


@pytest.fixture(scope="module")
def grader(sandbox: CaseSandbox) -> Grader:
    settings = GraderSettings()  # reads AUTOGRADER_SECRET, as the service does
    return Grader(Catalog.from_folder(settings.exercises_dir), sandbox, settings.master_secret())


@pytest.fixture(scope="module")
def active_layers(grader: Grader) -> set[str]:
    return {layer.name for layer in grader.sandbox.layers() if layer.active}


# --- helpers ------------------------------------------------------------------------------------


def run(grader: Grader, sandbox: CaseSandbox, case: Case) -> tuple[Execution, Report]:
    """Grade a corpus file as the service does, with the case's limits (and forbidden list, if it
    has one) in place of the exercise's: its report, and how the visible tests' run ended."""
    sandbox.start(case.limits, case.forbidden)
    report = grader.grade(case.slug, (CORPUS / f"{case.file}.py").read_text())
    visible = sandbox.visible()
    sandbox.start(TIGHT)  # for the next submission
    return visible, report


def canary_files() -> list[str]:
    return sorted(glob.glob(CANARY_FILES))


def child_processes() -> set[int]:
    """This process's children: the warm process (and the secret holder)."""
    return {
        int(pid)
        for task in Path("/proc/self/task").iterdir()
        for pid in (task / "children").read_text().split()
    }


def must_not_appear(plan: ExercisePlan) -> dict[str, str]:
    """What a report must never contain, by what it is."""
    forbidden = {f"secret {name}": value for name, value in SECRETS.items()}
    # Its first line, without the quotes that JSON would escape.
    forbidden["a line of the reference"] = REFERENCE_SOURCE.read_text().splitlines()[0].strip('"')
    for test in plan.tests:
        if test.visible:
            continue
        arrays = [a for case in test.cases for a in case.call.args if a is not None]
        arrays += [
            out.array for case in test.cases for out in case.expected if out.array is not None
        ]
        for which, array in enumerate(arrays):
            for at, value in enumerate(np.asarray(array, np.float64).ravel()[:32]):
                forbidden[f"{test.spec.name!r}: array {which}, value {at}"] = _digits(value)
    return {what: text for what, text in forbidden.items() if len(text) >= 8}


def _digits(value: float) -> str:
    """The first 12 significant digits of a value as Python prints it: found in a report
    whatever the separators around them (a list's str, `p` for the point), and no coincidence
    there. Shorter (a value with few digits): no fingerprint."""
    digits = "".join(char for char in repr(float(value)) if char.isdigit()).lstrip("0")
    return digits[:12] if len(digits) >= 12 else ""


def assert_verdict(case: Case, execution: Execution, report: Report) -> None:
    assert execution.termination is case.ending, execution.detail
    if execution.starved:  # a busy machine (other tests' load) cut it short: nobody's fault
        assert report.status is ReportStatus.ERROR and report.score == 0
        return
    refused = case.ending in (Termination.REJECTED, Termination.VIOLATION)
    assert report.status is (ReportStatus.REJECTED if refused else ReportStatus.FAILED)
    assert report.score == 0
    statuses = {test.name: test.status for test in report.tests}
    assert statuses == {test.name: case.status_of(test.visibility) for test in report.tests}
    first = report.tests[0]
    # Why a run stopped is said once: on the test it stopped at, or on the report when it stopped
    # outside any test (at import) or was refused, the tests then saying only that they did not run.
    assert case.message in f"{report.message}\n{first.message}"
    assert case.stdout in first.stdout


def assert_nothing_escaped(report: Report, plan: ExercisePlan) -> None:
    text = report.model_dump_json()
    leaked = [what for what, value in must_not_appear(plan).items() if value in text]
    assert leaked == []
    assert canary_files() == []


def assert_text_report_is_inert(report: Report) -> None:
    """Nothing in the text that `autograder grade` prints is for the terminal to act on: no
    control character but the report's own newlines and tabs, no bidi override or isolate."""
    text = render_text(report)
    acting = {c for c in text if unicodedata.category(c) == "Cc" and c not in "\n\t"}
    assert sorted(acting | (BIDI_CONTROLS & set(text))) == []


def assert_next_submission_passes(grader: Grader) -> None:
    report = grader.grade(SEED, CORRECT)
    failures = [f"{t.name}: {t.message}" for t in report.tests if t.status is not TestStatus.PASSED]
    assert failures == []
    assert report.status is ReportStatus.PASSED


# --- tests --------------------------------------------------------------------------------------


def test_the_corpus_is_the_table() -> None:
    files = sorted(path.stem for path in CORPUS.glob("*.py"))
    assert files == sorted(case.file for case in CASES)
    assert len(files) >= 30


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_hostile_submission_gets_its_verdict_and_changes_nothing(
    case: Case, grader: Grader, sandbox: CaseSandbox, active_layers: set[str]
) -> None:
    if case.layer is not None and case.layer not in active_layers:
        pytest.skip(f"this host does not apply the {case.layer} layer")
    assert canary_files() == []
    warm = child_processes()

    execution, report = run(grader, sandbox, case)

    assert_nothing_escaped(report, grader.plan(case.slug))  # first: an escape matters most
    assert_text_report_is_inert(report)
    assert_verdict(case, execution, report)
    assert child_processes() == warm  # nothing killed the warm process
    assert_next_submission_passes(grader)
    assert canary_files() == []
    assert child_processes() == warm
