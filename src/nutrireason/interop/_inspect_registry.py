"""The ``inspect_ai`` entry point of the package: importing it registers the tasks
``nutrireason/ngqa`` and ``nutrireason/fam`` (:mod:`nutrireason.interop.inspect_tasks`)."""

from nutrireason.interop.inspect_tasks import fam, ngqa

__all__ = ["fam", "ngqa"]
