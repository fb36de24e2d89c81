"""The ``inspect_ai`` entry point of the package: importing it registers one task per registered
benchmark (``nutrireason/ngqa``, ``nutrireason/fam``, ...; see
:mod:`nutrireason.interop.inspect_tasks`)."""

from nutrireason.interop.inspect_tasks import registered_tasks

TASKS = registered_tasks()
globals().update(TASKS)
__all__ = list(TASKS)
