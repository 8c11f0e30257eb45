"""Where a plan learns what it needs of the reference: the live reference solutions, or a
candidate kit's record of them.

A plan asks three things: the parameters of a reference module (to draw weights by name), the
attributes a stand-in module exposes, and the reference's results on a probe. `LiveReference`
answers by running the reference files; `Recorder` wraps it and keeps every answer, which
`grader release` writes into the kit; `Recorded` answers from that record alone, so a kit
judges the visible checks with no reference source at hand.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from grader.errors import GraderFault
from grader.sandboxing import executor
from grader.specs.course import CourseError
from sandbox.probes import seed_cpu
from sandbox.protocol import Probe, ProbeData

Outcome = tuple[ProbeData, dict[str, torch.Tensor]]


class ReferenceMissing(CourseError):
    """A recorded reference was asked what it never recorded."""


class ReferenceSource(ABC):
    def inputs(self, problem: str) -> dict[str, torch.Tensor]:
        """Tensors a plan takes as they are instead of drawing them (none: it draws all)."""
        return {}

    @abstractmethod
    def parameters(
        self, problem: str, symbol: str | None, init: dict[str, Any]
    ) -> list[tuple[str, list[int]]]:
        """Name and shape of each parameter of the module `symbol` (None: the problem's one
        module class) built with `init`."""

    @abstractmethod
    def attributes(self, problem: str, init: dict[str, Any], names: list[str]) -> dict[str, Any]:
        """Attributes of the problem's module built with `init`."""

    @abstractmethod
    def run(self, problem: str, probe: Probe, tensors: dict[str, torch.Tensor]) -> Outcome:
        """The reference's data and tensors on a probe, as the sandbox's executor gives them."""


class LiveReference(ReferenceSource):
    """The reference solutions, imported from their files as they are first needed."""

    def __init__(self, reference_file: Callable[[str], Path]) -> None:
        self.reference_file = reference_file
        self.namespaces: dict[str, dict[str, Any]] = {}
        self.shapes: dict[str, list[tuple[str, list[int]]]] = {}  # by question

    def namespace(self, problem: str) -> dict[str, Any]:
        from grader.specs.trusted import import_file

        if problem not in self.namespaces:
            module = import_file(self.reference_file(problem), f"reference_{problem}")
            self.namespaces[problem] = vars(module)
        return self.namespaces[problem]

    def module(self, problem: str, symbol: str | None, init: dict[str, Any]) -> nn.Module:
        namespace = self.namespace(problem)
        seed_cpu(0)
        name = symbol or module_symbol(namespace)
        if name not in namespace:
            raise GraderFault(f"{problem}: the reference solution defines no {name}")
        try:
            module = namespace[name](**init)
        except Exception as exc:  # the course's own code failed: the grader's fault
            raise GraderFault(
                f"{problem}: the reference's {name}({init_text(init)}) raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(module, nn.Module):
            raise GraderFault(f"{problem}: the reference's {name} is not an nn.Module")
        return module

    def parameters(
        self, problem: str, symbol: str | None, init: dict[str, Any]
    ) -> list[tuple[str, list[int]]]:
        """Built once per module and `init`: every config and stand-in asks again."""
        key = question(problem, symbol, init)
        if key not in self.shapes:
            named = self.module(problem, symbol, init).named_parameters()
            self.shapes[key] = [(name, list(p.shape)) for name, p in named]
        return [(name, list(shape)) for name, shape in self.shapes[key]]

    def attributes(self, problem: str, init: dict[str, Any], names: list[str]) -> dict[str, Any]:
        module = self.module(problem, None, init)
        return {name: getattr(module, name) for name in names}

    def run(self, problem: str, probe: Probe, tensors: dict[str, torch.Tensor]) -> Outcome:
        data, out = executor.run_reference(self.namespace(problem), probe, tensors)
        return data, out


def module_symbol(namespace: dict[str, Any]) -> str:
    """The name of the one module class a reference file defines."""
    classes = [
        v
        for v in namespace.values()
        if isinstance(v, type)
        and issubclass(v, nn.Module)
        and v.__module__ == namespace["__name__"]
    ]
    if len(classes) != 1:
        raise ValueError(f"{namespace['__name__']}: expected one module class, found {classes}")
    return classes[0].__name__


def question(*parts: Any) -> str:
    """A question to a reference, as the key its answer is recorded under."""
    return json.dumps(parts, sort_keys=True)


class Recorder(ReferenceSource):
    """Another source's answers, each kept under its question."""

    def __init__(self, source: ReferenceSource) -> None:
        self.source = source
        self.answers: dict[str, Any] = {}
        self.outcomes: dict[str, Outcome] = {}

    def parameters(
        self, problem: str, symbol: str | None, init: dict[str, Any]
    ) -> list[tuple[str, list[int]]]:
        found = self.source.parameters(problem, symbol, init)
        self.answers[question("parameters", problem, symbol, init)] = found
        return found

    def attributes(self, problem: str, init: dict[str, Any], names: list[str]) -> dict[str, Any]:
        found = self.source.attributes(problem, init, names)
        self.answers[question("attributes", problem, init, names)] = found
        return found

    def run(self, problem: str, probe: Probe, tensors: dict[str, torch.Tensor]) -> Outcome:
        outcome = self.source.run(problem, probe, tensors)
        self.outcomes[question("run", problem, probe)] = outcome
        return outcome


class Recorded(ReferenceSource):
    """Answers from a record; a question it does not hold is a ReferenceMissing."""

    def __init__(
        self,
        answers: dict[str, Any],
        outcomes: dict[str, Outcome],
        tensors: dict[str, dict[str, torch.Tensor]],
        origin: str,
    ) -> None:
        self.answers = answers
        self.outcomes = outcomes
        self.tensors = tensors
        self.origin = origin

    def inputs(self, problem: str) -> dict[str, torch.Tensor]:
        return dict(self.tensors.get(problem, {}))

    def missing(self, what: str) -> ReferenceMissing:
        return ReferenceMissing(
            f"{self.origin} does not hold {what}: it was released by another version of the "
            "grader, or with other checks; release it again"
        )

    def parameters(
        self, problem: str, symbol: str | None, init: dict[str, Any]
    ) -> list[tuple[str, list[int]]]:
        key = question("parameters", problem, symbol, init)
        if key not in self.answers:
            raise self.missing(f"the parameters of {problem}")
        return [(name, list(shape)) for name, shape in self.answers[key]]

    def attributes(self, problem: str, init: dict[str, Any], names: list[str]) -> dict[str, Any]:
        key = question("attributes", problem, init, names)
        if key not in self.answers:
            raise self.missing(f"the attributes of {problem}")
        return dict(self.answers[key])

    def run(self, problem: str, probe: Probe, tensors: dict[str, torch.Tensor]) -> Outcome:
        key = question("run", problem, probe)
        if key not in self.outcomes:
            raise self.missing(f"the reference's results of {problem} on probe {probe['id']}")
        return self.outcomes[key]


def init_text(init: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in init.items())
