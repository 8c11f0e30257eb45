"""The problem spec: `problems/<id>/spec.toml`, validated strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from grader.compat import StrEnum, tomllib
from grader.errors import GraderError
from grader.sandboxing.backends.base import ProblemLimits
from grader.strict import Strict


class SpecError(GraderError):
    """A problem spec that cannot be used, with the file and the fields at fault."""


class Visibility(StrEnum):
    visible = "visible"
    hidden = "hidden"
    after_due_date = "after_due_date"


class Tolerance(Strict):
    atol: float = Field(ge=0)
    rtol: float = Field(ge=0)


Precision = Literal["float32", "float64"]


def default_tolerance() -> dict[Precision, Tolerance]:
    return {
        "float32": Tolerance(atol=1e-5, rtol=1e-4),
        "float64": Tolerance(atol=1e-10, rtol=1e-8),
    }


class TensorArg(Strict):
    """A random normal tensor of this shape, drawn from the run's seed."""

    shape: list[int] = Field(min_length=1)
    layout: Literal["contiguous", "noncontiguous"] = "contiguous"


class ModuleArg(Strict):
    """The grader's own module of another problem, handed over with its forward disabled."""

    module: str = Field(description="Problem id whose reference class is instantiated.")
    init: dict[str, Any]
    expose: list[str] = Field(default_factory=list, description="Attributes copied to the stub.")


Arg = TensorArg | ModuleArg | int | float | bool | str


class Config(Strict):
    """One way of probing the entry: constructor arguments (modules) or call arguments."""

    id: str = Field(pattern=r"^[A-Za-z0-9_]+$", description="Named by checks' `configs`.")
    symbol: str | None = Field(None, description="Entry symbol probed (default: the first).")
    init: dict[str, Any] | None = Field(None, description="Constructor arguments (modules).")
    args: list[Arg] = Field(default_factory=list, description="Call arguments, in order.")
    mask: Literal["causal", "padding", "per_head"] | None = Field(
        None, description="A mask passed as `mask=`, drawn by the grader."
    )
    why: str = Field("", description="What the config is for, shown with its results.")


class CheckId(StrEnum):
    """The library's checks, by the id a spec's `check` names (a problem's `checks.py` may
    register more, under ids of its own)."""

    allclose = "allclose"
    allclose_after_setup = "allclose_after_setup"
    attributes = "attributes"
    causality = "causality"
    contiguous = "contiguous"
    distinct_heads = "distinct_heads"
    dropout = "dropout"
    forbidden_api = "forbidden_api"
    gradients = "gradients"
    mask_buffer = "mask_buffer"
    mask_respected = "mask_respected"
    masked_keys_ignored = "masked_keys_ignored"
    output_shape = "output_shape"
    param_count = "param_count"
    parameter_names = "parameter_names"
    paths_agree = "paths_agree"
    python_loop = "python_loop"
    raises = "raises"
    sdpa_calls = "sdpa_calls"
    weights_sum_to_one = "weights_sum_to_one"


class CheckSpec(Strict):
    """One graded check: a library check (or one of the problem's own) with its points."""

    check: str = Field(description="A check of the library (below) or of the problem's checks.py.")
    name: str = Field(description="What the candidate reads: unique in the problem.")
    points: float = Field(gt=0, description="More than 0.")
    visibility: Visibility = Field(Visibility.visible, description="Who sees it, and when.")
    params: dict[str, Any] = Field(default_factory=dict, description="The check's params.")


class Diagnosis(Strict):
    """How the diagnosis engine reads this problem's weights to replay known mistakes."""

    form: str = Field(description="A diagnosis form (below): how the problem computes.")
    mistakes: list[str] = Field(default_factory=list, description="Mistakes (below) to replay.")
    params: dict[str, Any] = Field(
        default_factory=dict, description="The form's layer names; `heads_from` reads init."
    )


class ProblemSpec(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="The folder's name.")
    title: str
    number: int = Field(ge=1, description="Its place in listings and score tables.")
    entry: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*\.py$", description="The file a candidate hands in."
    )
    kind: Literal["module", "function"] = Field(description="An nn.Module class, or functions.")
    symbols: list[str] = Field(min_length=1, description="Names the entry file must define.")
    forbidden: list[str] = Field(
        default_factory=list,
        description="Bare torch names `forbidden_api` looks for (`softmax`); attention's among "
        "them (`scaled_dot_product_attention`, `MultiheadAttention`) are also refused at run time.",
    )
    forbidden_zeroes_problem: bool = Field(True, description="A refused call scores 0.")
    tolerance: dict[Precision, Tolerance] = Field(default_factory=default_tolerance)
    limits: ProblemLimits = Field(default_factory=ProblemLimits)
    configs: list[Config] = Field(min_length=1)
    checks: list[CheckSpec] = Field(
        description="At least one in a spec file; a candidate kit "
        "may hold none of a problem whose checks are all hidden."
    )
    diagnosis: Diagnosis | None = None

    @model_validator(mode="after")
    def _unique(self) -> ProblemSpec:
        for what, names in (
            ("config id", [c.id for c in self.configs]),
            ("check name", [c.name for c in self.checks]),
        ):
            dupes = {n for n in names if names.count(n) > 1}
            if dupes:
                raise ValueError(f"duplicate {what}: {', '.join(sorted(dupes))}")
        return self

    @property
    def symbol(self) -> str:
        return self.symbols[0]

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.checks)

    def config(self, config_id: str) -> Config:
        for config in self.configs:
            if config.id == config_id:
                return config
        raise KeyError(f"{self.id}: no config {config_id!r}")


def load_spec(path: Path) -> ProblemSpec:
    """Parse and validate one spec file; errors name the file and each field at fault."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"{path}: {exc}") from exc
    try:
        spec = ProblemSpec.model_validate(data)
    except ValidationError as exc:
        lines = [
            f"  {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()
        ]
        raise SpecError(f"{path}: invalid problem spec\n" + "\n".join(lines)) from exc
    if not spec.checks:
        raise SpecError(f"{path}: invalid problem spec\n  checks: give at least one check")
    if spec.id != path.parent.name:
        raise SpecError(f"{path}: id {spec.id!r} differs from its folder {path.parent.name!r}")
    return spec
