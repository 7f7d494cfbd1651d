"""The task format as frozen pydantic models (see docs/task-format.md)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
NAME_PATTERN = r"^[A-Za-z0-9_.-]+$"


class Family(StrEnum):
    bugfix = "bugfix"
    feature = "feature"
    data = "data"
    ops = "ops"
    docs = "docs"


class Difficulty(StrEnum):
    trivial = "trivial"
    easy = "easy"
    medium = "medium"
    hard = "hard"


class Split(StrEnum):
    train = "train"
    eval = "eval"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _relative(value: str) -> str:
    """A relative path that stays beneath its base: no absolute paths, no `..`."""
    p = Path(value)
    if p.is_absolute() or ".." in p.parts or value.strip() == "":
        raise ValueError(f"must be a relative path inside the task, got {value!r}")
    return value


RelPath = Annotated[str, Field(min_length=1)]


class Limits(_Frozen):
    """Resource limits for the task's runs."""

    timeout_s: float = Field(60, gt=0, le=3600, description="Wall clock for one judged run.")
    memory_mb: int = Field(1024, gt=0, le=65536, description="Memory for one sandbox.")
    max_turns: int = Field(30, gt=0, le=1000, description="Turns an agent gets.")


class Environment(_Frozen):
    """What the task needs beyond the standard library."""

    python_packages: tuple[str, ...] = Field((), description="Packages to install (pip specs).")


class RewardSpec(_Frozen):
    """How the task's verdict is paid."""

    partial_credit: bool = Field(
        False, description="Pay a scaled pass fraction when not every outcome passes."
    )


class PytestJudge(_Frozen):
    """Hidden pytest tests run against the candidate's code."""

    type: Literal["pytest"] = "pytest"
    required: tuple[str, ...] = Field(
        (), description="Test ids that must pass; empty: every test the reference collects."
    )
    pass_to_pass: tuple[str, ...] = Field(
        (),
        description="Required tests that already pass on the starting workspace (SWE-bench's "
        "PASS_TO_PASS); every other required test must fail there.",
    )

    isolation: Literal["process", "in-process"] = Field(
        "process",
        description="Where the code under test runs: `process` (its own sandbox and process; "
        "the hidden tests reach it through proxies and values cross as copies, so it cannot "
        "patch pytest or read the tests) or `in-process` (imported into the pytest process, "
        "for tests that need to share mutable objects with it; weaker against reward hacking).",
    )

    @model_validator(mode="after")
    def _pass_to_pass_is_required(self) -> PytestJudge:
        extra = sorted(set(self.pass_to_pass) - set(self.required))
        if extra and self.required:
            raise ValueError(f"pass_to_pass names tests that are not required: {extra}")
        return self


class OutputCase(_Frozen):
    """One run of the candidate's command and the outputs it must leave."""

    name: str = Field(pattern=NAME_PATTERN, description="Unique case name.")
    inputs: RelPath | None = Field(None, description="Dir under tests/ laid over the workspace.")
    expected: RelPath = Field(description="Dir under tests/ holding the expected output files.")

    @field_validator("inputs", "expected")
    @classmethod
    def _inside(cls, v: str | None) -> str | None:
        return None if v is None else _relative(v)


class OutputJudge(_Frozen):
    """Run a command and compare the files it writes as plain values."""

    type: Literal["output"] = "output"
    command: str = Field(min_length=1, description="Shell command run in the workspace root.")
    tolerance: float = Field(1e-6, ge=0, description="Relative tolerance for numbers.")
    cases: tuple[OutputCase, ...] = Field(min_length=1, description="The cases to run.")

    @model_validator(mode="after")
    def _unique_cases(self) -> OutputJudge:
        _require_unique([c.name for c in self.cases], "case")
        return self


class Check(_Frozen):
    """One named shell command that must exit 0."""

    name: str = Field(min_length=1, description="Unique check name.")
    command: str = Field(min_length=1, description="Shell command run in the workspace root.")


class CommandJudge(_Frozen):
    """Named commands, run in order in one workspace, each of which must succeed."""

    type: Literal["command"] = "command"
    checks: tuple[Check, ...] = Field(min_length=1, description="The checks, in order.")

    @model_validator(mode="after")
    def _unique_checks(self) -> CommandJudge:
        _require_unique([c.name for c in self.checks], "check")
        return self


class DocumentJudge(_Frozen):
    """A document that must parse, satisfy a schema and pass content checks."""

    type: Literal["document"] = "document"
    path: RelPath = Field(description="The document, relative to the workspace.")
    format: Literal["json", "yaml", "markdown"] = Field(description="How to parse it.")
    schema_file: RelPath | None = Field(
        None, alias="schema", description="JSON Schema under tests/ (json and yaml only)."
    )
    checks: RelPath | None = Field(None, description="Module under tests/ with check_* functions.")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("path", "schema_file", "checks")
    @classmethod
    def _inside(cls, v: str | None) -> str | None:
        return None if v is None else _relative(v)

    @model_validator(mode="after")
    def _something_to_check(self) -> DocumentJudge:
        if self.schema_file is None and self.checks is None:
            raise ValueError("a document judge needs a 'schema', 'checks' or both")
        if self.schema_file is not None and self.format == "markdown":
            raise ValueError("'schema' applies to json and yaml documents, not markdown")
        return self


JudgeConfig = Annotated[
    PytestJudge | OutputJudge | CommandJudge | DocumentJudge, Field(discriminator="type")
]


def _require_unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ValueError(f"duplicate {what} name {n!r}")
        seen.add(n)


class TaskSpec(_Frozen):
    """The contents of task.toml."""

    id: str = Field(pattern=ID_PATTERN, max_length=120, description="The task's id.")
    title: str = Field(min_length=1, max_length=200, description="One line.")
    family: Family = Field(description="The kind of work.")
    difficulty: Difficulty = Field(description="How hard, as labelled by the author.")
    split: Split = Field(description="train, or eval (held out).")
    instruction: str = Field(min_length=1, description="What the agent is told.")
    tags: tuple[str, ...] = Field((), description="Free-form labels.")
    limits: Limits = Field(default_factory=Limits, description="Resource limits.")
    environment: Environment = Field(default_factory=Environment, description="Extra needs.")
    reward: RewardSpec = Field(default_factory=RewardSpec, description="How it is paid.")
    judge: JudgeConfig = Field(description="How the result is judged.")

    @field_validator("title")
    @classmethod
    def _one_line(cls, v: str) -> str:
        if "\n" in v.strip():
            raise ValueError("the title must be one line")
        return v.strip()


class Task(_Frozen):
    """A loaded task: its spec, where its files are, and its content version."""

    spec: TaskSpec
    root: Path = Field(description="The task directory.")
    version: str = Field(description="Content hash of every file that affects the task.")

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def family(self) -> Family:
        return self.spec.family

    @property
    def difficulty(self) -> Difficulty:
        return self.spec.difficulty

    @property
    def split(self) -> Split:
        return self.spec.split

    @property
    def instruction(self) -> str:
        return self.spec.instruction

    @property
    def workspace_dir(self) -> Path:
        return self.root / "workspace"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def visible_tests_dir(self) -> Path | None:
        d = self.root / "visible_tests"
        return d if d.is_dir() else None

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def solution_diff(self) -> Path | None:
        """The reference as a unified diff, when it is given as one."""
        p = self.solution_dir / "solution.diff"
        return p if p.is_file() else None

    @property
    def key(self) -> str:
        """`id@version`: names this exact content of the task."""
        return f"{self.id}@{self.version}"
