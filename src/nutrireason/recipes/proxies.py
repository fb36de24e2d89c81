"""Standard proxies (``standards/data/proxies.yaml``): a food SR28 has no entry for, read as
the SR28 food a dietitian would use in its place, each with its reason. A line read through a
proxy carries the rule ``proxy:<name>``; ``quality.json`` gives each recipe's proxy share of
its energy."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nutrireason.errors import DataError
from nutrireason.recipes.backoff import fold_accents
from nutrireason.standards import standards_dir
from nutrireason.storage import parse_yaml


@dataclass(frozen=True)
class Proxy:
    name: str
    ndb_no: str
    source: str


def load_proxies(path: Path | None = None) -> dict[str, Proxy]:
    """Name (lower case, accents folded) -> :class:`Proxy`."""
    path = path or standards_dir() / "proxies.yaml"
    data = parse_yaml(path.read_text(encoding="utf-8"))
    out: dict[str, Proxy] = {}
    for index, entry in enumerate((data or {}).get("proxies") or []):
        where = f"proxies[{index}]"
        names, ndb, source = entry.get("names"), entry.get("ndb_no"), entry.get("source")
        if not names or not isinstance(ndb, str) or not isinstance(source, str):
            raise DataError(path, "a proxy needs names, ndb_no (text) and source", field=where,
                            value=entry)
        for name in names:
            key = proxy_key(str(name))
            if key in out:
                raise DataError(path, "a proxy name is listed twice", field=where, value=name)
            out[key] = Proxy(key, ndb, source)
    return out


def proxy_key(name: str) -> str:
    return " ".join(fold_accents(name).lower().split())


def find_proxy(proxies: dict[str, Proxy], name: str) -> Proxy | None:
    """The proxy for ``name``: its own entry, else an entry for any name ending in its last
    word ("* rub" for "chop rub")."""
    key = proxy_key(name)
    words = key.split()
    return proxies.get(key) or (proxies.get(f"* {words[-1]}") if len(words) > 1 else None)


PROXY_RULE = "proxy:"


def proxy_share(lines: list[tuple[float, float, bool]]) -> float:
    """The share of a recipe's energy on proxy lines: (grams, kcal per 100 g, proxy?) of its
    weighed resolved lines."""
    total = sum(grams * kcal for grams, kcal, _ in lines)
    proxied = sum(grams * kcal for grams, kcal, proxy in lines if proxy)
    return proxied / total if total else 0.0
