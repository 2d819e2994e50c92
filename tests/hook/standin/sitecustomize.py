"""A stand-in, for the hook processes of `tests/hook/test_effects_hook.py` only, for the part of
the gate that says which allowed lines run under the kernel's sandboxed (`Decision.sandboxed`):
until the decision has that field, every allowed decision of a process started with this
directory on `PYTHONPATH` (the hook process and the resident hook server it starts) says it is
sandboxed. Once the field exists it does nothing: the gate's own answer is used."""

try:
    from statewright.policy.types import Decision

    if "sandboxed" not in Decision.__slots__:
        Decision.sandboxed = True  # type: ignore[attr-defined]
except Exception:  # (a broken stand-in must not break the interpreter)
    pass
