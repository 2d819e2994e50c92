"""Stage 2: the typed model (pydantic v2) of a workflow document.

It mirrors `schema/workflow-schema.json` field for field (tests check the two agree on every
document of the example and invalid corpora), so the compiler works on typed objects instead of
raw dicts. Strict: no coercion (`"5"` is not an integer), unknown fields forbidden, explicit
`null` is not "absent". Fields are declared with non-optional types and a `None` default so an
explicit `null` fails validation like it does in the schema, while absence is allowed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from .schema_check import (
    CHECK_PATTERN,
    ENV_PATTERN,
    EVENT_PATTERN,
    FIELD_PATTERN,
    ID_PATTERN,
    STATE_NAME_PATTERN,
)


def _whole_number(v: Any) -> Any:
    # JSON Schema counts 5.0 as an integer and never a boolean; mirror that exactly.
    if isinstance(v, bool):
        raise ValueError("must be an integer, not a boolean")
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


PositiveInt = Annotated[int, BeforeValidator(_whole_number), Field(ge=1)]
NonNegInt = Annotated[int, BeforeValidator(_whole_number), Field(ge=0)]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
WorkflowId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
EnvName = Annotated[str, StringConstraints(pattern=ENV_PATTERN)]
EventName = Annotated[str, StringConstraints(pattern=EVENT_PATTERN)]
StateName = Annotated[str, StringConstraints(pattern=STATE_NAME_PATTERN)]
BranchName = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
FieldPath = Annotated[str, StringConstraints(pattern=FIELD_PATTERN)]
CheckName = Annotated[str, StringConstraints(pattern=CHECK_PATTERN)]


def _positive_number(v: Any) -> Any:
    if isinstance(v, bool):
        raise ValueError("must be a number, not a boolean")
    if isinstance(v, int):
        return float(v)
    return v


PositiveNumber = Annotated[float, BeforeValidator(_positive_number), Field(gt=0)]

_STRICT = ConfigDict(extra="forbid", strict=True, protected_namespaces=(), populate_by_name=False)


class _Model(BaseModel):
    model_config = _STRICT


class GuardedTransition(_Model):
    target: NonEmpty
    guard: NonEmpty = None  # type: ignore[assignment]
    guards: list[NonEmpty] = None  # type: ignore[assignment]
    checks: Annotated[list[CheckName], Field(min_length=1)] = None  # type: ignore[assignment]
    requires_approval: bool = None  # type: ignore[assignment]
    approval_message: str = None  # type: ignore[assignment]


class BranchEntry(_Model):
    target: NonEmpty
    guard: NonEmpty = None  # type: ignore[assignment]
    guards: list[NonEmpty] = None  # type: ignore[assignment]
    checks: Annotated[list[CheckName], Field(min_length=1)] = None  # type: ignore[assignment]


class InvokeTransition(_Model):
    invoke: WorkflowId
    on_complete: NonEmpty
    on_fail: NonEmpty = None  # type: ignore[assignment]
    input: dict[str, Any] = None  # type: ignore[assignment]


class ForkBranchModel(_Model):
    initial: NonEmpty
    terminal: NonEmpty


class ForkSpec(_Model):
    branches: Annotated[dict[BranchName, ForkBranchModel], Field(min_length=1)]
    join: Literal["all", "any"] = None  # type: ignore[assignment]
    on_complete: NonEmpty
    on_fail: NonEmpty = None  # type: ignore[assignment]


class ForkTransition(_Model):
    fork: ForkSpec


TransitionModel = (
    NonEmpty
    | GuardedTransition
    | Annotated[list[BranchEntry], Field(min_length=1)]
    | InvokeTransition
    | ForkTransition
)


class StateModel(_Model):
    type: Literal["final"] = None  # type: ignore[assignment]
    allowed_tools: list[NonEmpty] = None  # type: ignore[assignment]
    disallowed_tools: list[NonEmpty] = None  # type: ignore[assignment]
    instructions: str = None  # type: ignore[assignment]
    max_iterations: PositiveInt = None  # type: ignore[assignment]
    safe_next: NonEmpty = None  # type: ignore[assignment]
    timeout_s: PositiveNumber = None  # type: ignore[assignment]
    on_timeout: EventName = None  # type: ignore[assignment]
    max_edit_lines: PositiveInt = None  # type: ignore[assignment]
    max_files_per_state: PositiveInt = None  # type: ignore[assignment]
    allowed_commands: list[NonEmpty] = None  # type: ignore[assignment]
    blocked_env: list[EnvName] = None  # type: ignore[assignment]
    deny_env: list[EnvName] = None  # type: ignore[assignment]
    env_overrides: dict[EnvName, str] = None  # type: ignore[assignment]
    env: dict[EnvName, str] = None  # type: ignore[assignment]
    context_budget_bytes: PositiveInt = None  # type: ignore[assignment]
    read_only: list[NonEmpty] = None  # type: ignore[assignment]
    sandbox: Literal["auto", "required", "off"] = None  # type: ignore[assignment]
    network: bool = None  # type: ignore[assignment]
    unix_sockets: bool = None  # type: ignore[assignment]
    on: dict[EventName, TransitionModel] = None  # type: ignore[assignment]
    # Accepted for Statewright compatibility and ignored (any JSON value):
    agent_model: Any = Field(None, alias="model")
    thinking_level: Any = None
    model_ladder: Any = None
    direct_execution: Any = None


class GuardModel(_Model):
    field: FieldPath
    op: Literal["eq", "neq", "gt", "gte", "lt", "lte", "in", "contains", "exists", "not_exists"]
    value: Any = None


class Trigger(_Model):
    file_pattern: NonEmpty


class InterruptModel(_Model):
    trigger: Trigger
    target: NonEmpty
    widen: bool = None  # type: ignore[assignment]


class CheckModel(_Model):
    run: NonEmpty
    cwd: NonEmpty = None  # type: ignore[assignment]
    timeout_s: PositiveNumber = None  # type: ignore[assignment]
    read_only: list[NonEmpty] = None  # type: ignore[assignment]
    expect_exit: Annotated[int, BeforeValidator(_whole_number)] | Annotated[
        list[Annotated[int, BeforeValidator(_whole_number)]], Field(min_length=1)] = None  # type: ignore[assignment]
    report: NonEmpty = None  # type: ignore[assignment]


class MetaModel(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, protected_namespaces=())

    task_type: str = None  # type: ignore[assignment]
    estimated_steps: NonNegInt = None  # type: ignore[assignment]
    danger_level: Literal["safe", "moderate", "dangerous"] = None  # type: ignore[assignment]
    requires_human_approval: bool = None  # type: ignore[assignment]
    capture_output: bool = None  # type: ignore[assignment]
    approval_mode: Literal["ui", "none"] = None  # type: ignore[assignment]
    debug: bool = None  # type: ignore[assignment]
    allow_agent_pause: bool = None  # type: ignore[assignment]


class WorkflowModel(_Model):
    schema_: str = Field(None, alias="$schema")  # type: ignore[assignment]
    id: WorkflowId
    initial: NonEmpty
    states: Annotated[dict[StateName, StateModel], Field(min_length=1)]
    context: dict[str, Any] = None  # type: ignore[assignment]
    guards: dict[str, GuardModel] = None  # type: ignore[assignment]
    interrupts: dict[str, InterruptModel] = None  # type: ignore[assignment]
    checks: dict[CheckName, CheckModel] = None  # type: ignore[assignment]
    meta: MetaModel = None  # type: ignore[assignment]
    agent_model: Any = Field(None, alias="model")
    thinking_level: Any = None
    model_ladder: Any = None
    direct_execution: Any = None


def parse(doc: Any) -> WorkflowModel:
    """Validate `doc` into the typed model; raises pydantic.ValidationError."""
    return WorkflowModel.model_validate(doc, strict=True)
