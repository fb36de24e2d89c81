"""Shards of a run: ``K/N`` picks the items whose id hashes to ``K - 1`` modulo ``N``.

The split depends on the item id alone (sha256 of the id as UTF-8), so it does not change with
the item order, ``--offset`` or ``--limit``: the N shards of any set of items are disjoint and
together hold every item. A run folder records its shard in the manifest as
``"shard": {"k": K, "n": N}``; a manifest without the key is an unsharded run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError

SHARD_FIELD = "shard"
_PATTERN = re.compile(r"(\d+)/(\d+)")
_EXPECTED = "K/N with whole numbers 1 <= K <= N, e.g. 2/4"


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` of ``n`` (1-based)."""

    k: int
    n: int

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.n:
            raise DataError(None, f"shard {self.k}/{self.n} does not exist",
                            field=SHARD_FIELD, value=f"{self.k}/{self.n}", expected=_EXPECTED)

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` as typed after ``--shard``."""
        found = _PATTERN.fullmatch(text.strip()) if isinstance(text, str) else None
        if found is None:
            raise DataError(None, f"shard {text!r} is not K/N", field="--shard", value=text,
                            expected=_EXPECTED)
        k, n = int(found.group(1)), int(found.group(2))
        if not 1 <= k <= n:
            raise DataError(None, f"shard {text!r} does not exist", field="--shard", value=text,
                            expected=_EXPECTED)
        return cls(k, n)

    @classmethod
    def from_manifest(cls, manifest: dict[str, Any], path: Path) -> Shard | None:
        """The shard a manifest records (None when unsharded); a malformed value names the
        manifest file."""
        value = manifest.get(SHARD_FIELD)
        if value is None:
            return None
        parts = (value.get("k"), value.get("n")) if isinstance(value, dict) else (None, None)
        k, n = (x if isinstance(x, int) and not isinstance(x, bool) else 0 for x in parts)
        if not 1 <= k <= n:
            raise DataError(path, "not a shard", field=SHARD_FIELD, value=value,
                            expected='{"k": K, "n": N} with 1 <= K <= N')
        return cls(k, n)

    def as_dict(self) -> dict[str, int]:
        """The manifest form, ``{"k": K, "n": N}``."""
        return {"k": self.k, "n": self.n}

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def shard_index(item_id: str, n: int) -> int:
    """The 0-based shard of ``n`` that ``item_id`` falls in."""
    digest = hashlib.sha256(str(item_id).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n


def in_shard(item_id: str, shard: Shard | None) -> bool:
    """Whether the item belongs to ``shard``; with no shard (None) every item does."""
    return shard is None or shard_index(item_id, shard.n) == shard.k - 1
