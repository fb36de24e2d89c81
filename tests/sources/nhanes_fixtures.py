"""Small NHANES XPT trees in the real file names and variable names, for tests and benchmarks.

``write_xpt(path, frame)`` writes one SAS transport v5 file (as NHANES publishes them);
``write_tree(root)`` writes a consistent multi-cycle tree whose values the tests know;
``dr1iff_frame(n_rows)`` makes a DR1IFF-like frame of any size.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat

NAN = np.nan
TINY = 1e-75  # a value the reader must round to exactly 0

SEQN_START = {"C": 21005, "E": 41475, "J": 93703, "P": 109263}
FOLDERS = {"C": "2003-2004", "E": "2007-2008", "J": "2017-2018", "P": "2017-2020"}


def write_xpt(path: str | Path, frame: pd.DataFrame, table_name: str | None = None) -> Path:
    """Write ``frame`` as a SAS transport v5 file (column names <= 8 characters)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    name = (table_name or path.stem.upper())[:8]
    pyreadstat.write_xport(frame, str(path), file_format_version=5, table_name=name)
    return path


def seqns(cycle: str, n: int = 4) -> list[float]:
    """The participant numbers used for ``cycle`` in the tree (P reuses J's, then adds its own)."""
    if cycle == "P":
        return seqns("J", n) + [float(SEQN_START["P"] + i) for i in range(n)]
    return [float(SEQN_START[cycle] + i) for i in range(n)]


def demo(cycle: str, n: int = 4) -> pd.DataFrame:
    """DEMO with ages 25, 40, 80, 12, ... and sexes 1, 2, 1, 2, ..."""
    ids = seqns(cycle, n)
    k = len(ids)
    frame = pd.DataFrame({
        "SEQN": ids,
        "RIDAGEYR": [[25.0, 40.0, 80.0, 12.0][i % 4] for i in range(k)],
        "RIAGENDR": [float(1 + i % 2) for i in range(k)],
        "SDDSRVYR": [{"C": 3.0, "E": 5.0, "J": 10.0, "P": 66.0}[cycle]] * k,
    })
    weight = np.linspace(1000.0, 2000.0, k)
    if cycle == "P":
        frame["WTMECPRP"], frame["WTINTPRP"] = weight, weight + 1
    else:
        frame["WTMEC2YR"], frame["WTINT2YR"] = weight, weight + 1
    return frame


def _bpx(ids: list[float]) -> pd.DataFrame:
    frame = pd.DataFrame({"SEQN": ids})
    for k in range(1, 5):
        frame[f"BPXSY{k}"] = [120.0 + k] * len(ids)
        frame[f"BPXDI{k}"] = [70.0 + k] * len(ids)
    frame.loc[0, "BPXDI4"] = TINY
    return frame


def _bpxo(ids: list[float]) -> pd.DataFrame:
    frame = pd.DataFrame({"SEQN": ids})
    for k in range(1, 4):
        frame[f"BPXOSY{k}"] = [130.0 + k] * len(ids)
        frame[f"BPXODI{k}"] = [80.0 + k] * len(ids)
    return frame


def _dr1tot(ids: list[float], diets: list[int]) -> pd.DataFrame:
    """DRQSDIET 1 (diets 1 and 91 for the first), 2, 9 (don't know), missing."""
    k = len(ids)
    frame = pd.DataFrame({"SEQN": ids, "DRQSDIET": ([1.0, 2.0, 9.0, NAN] * k)[:k]})
    for d in diets:
        frame[f"DRQSDT{d}"] = [float(d) if (i == 0 and d in (1, 91)) else NAN for i in range(k)]
    frame["DR1TKCAL"] = [2000.0 + i for i in range(k)]
    frame["DBD100"] = [1.0] * k
    return frame


def _cycle_c(n: int) -> dict[str, pd.DataFrame]:
    ids = seqns("C", n)
    return {
        "DEMO_C": demo("C", n),
        "bmx_c": pd.DataFrame({"SEQN": ids, "BMXBMI": [22.5 + i for i in range(n)],
                               "BMXWAIST": [80.0 + i for i in range(n)]}),
        "BPX_C": _bpx(ids),
        "L10AM_C": pd.DataFrame({"SEQN": ids[:2], "LBXGLU": [99.0, 130.0],
                                 "LBDGLUSI": [5.495, 7.216]}),
        "L10_C": pd.DataFrame({"SEQN": ids, "LBXGH": [5.1 + i for i in range(n)]}),
        "L40_C": pd.DataFrame({"SEQN": ids, "LBXSBU": [14.0] * n, "LBDSBUSI": [5.0] * n}),
        "L13AM_C": pd.DataFrame({"SEQN": ids[1:3], "LBDLDL": [100.0, 160.0],
                                 "LBDLDLSI": [2.586, 4.138]}),
        "L25_C": pd.DataFrame({"SEQN": ids, "LBXRBCSI": [4.5] * n, "LBXHGB": [13.5] * n}),
        "DIQ_C": pd.DataFrame({"SEQN": ids, "DIQ010": ([1.0, 2.0, 3.0, 9.0] * n)[:n]}),
        "DR1TOT_C": _dr1tot(ids, [*range(1, 9), 91]),
    }


def _cycle_e(n: int) -> dict[str, pd.DataFrame]:
    ids = seqns("E", n)
    cbq = pd.DataFrame({"SEQN": ids})
    for i, old in enumerate(["CBD070", "CBD090", "CBD110", "CBD120", "CBD130"]):
        cbq[old] = [100.0 * (i + 1)] * n
    return {
        "DEMO_E": demo("E", n),
        "CBQ_E": cbq,
        "DBQ_E": pd.DataFrame({"SEQN": ids, "DBQ700": [3.0] * n}),
        "DR1TOT_E": _dr1tot(ids, [*range(1, 11), 91]),
        "DUQ_E": pd.DataFrame({"SEQN": ids, "DUQ290": [2.0] * n, "DUQ310Q": [NAN] * n,
                               "DUQ310U": [NAN] * n, "DUQ320": [NAN] * n}),
        "OSQ_E": pd.DataFrame({"SEQN": ids, "OSQ060": [2.0] * n}),
    }


def _rxq_rx(ids: list[float]) -> pd.DataFrame:
    """Participant 0: two drugs (365 days, 77777); 1: none; 2: 99999 days; 3: unknown id."""
    return pd.DataFrame({
        "SEQN": [ids[0], ids[0], ids[1], ids[2], ids[3]],
        "RXDUSE": [1.0, 1.0, 2.0, 1.0, 1.0],
        "RXDDRGID": ["d00001", "d04379", "", "d00001", "d99999"],
        "RXDDRUG": ["METFORMIN", "OXYCODONE", "", "METFORMIN", "SOMETHING"],
        "RXDDAYS": [365.0, 77777.0, NAN, 99999.0, 30.0],
    })


def _cycle_j(n: int) -> dict[str, pd.DataFrame]:
    ids = seqns("J", n)
    cbq = pd.DataFrame({"SEQN": ids})
    for i, new in enumerate(["CBD071", "CBD091", "CBD111", "CBD121", "CBD131"]):
        cbq[new] = [10.0 * (i + 1)] * n
    return {
        "DEMO_J": demo("J", n),
        "BPX_J": _bpx(ids),
        "BPXO_J": _bpxo(ids),
        "TRIGLY_J": pd.DataFrame({"SEQN": ids[:2], "LBDLDL": [116.0, 77.34]}),
        "RXQ_RX_J": _rxq_rx(ids),
        "DR1IFF_J": pd.DataFrame({
            "SEQN": [ids[0], ids[0], ids[1]],
            "DR1IFDCD": [11111000.0, 92410310.0, 58106230.0],
            "DR1IGRMS": [244.0, 0.0, TINY],
            "DR1DRSTZ": [1.0, 1.0, 2.0],
        }),
        "DR1TOT_J": _dr1tot(ids, [*range(1, 13), 91]),
        "CBQ_J": cbq,
        "OSQ_J": pd.DataFrame({"SEQN": ids, "OSQ060": [1.0] * n}),
    }


def _cycle_p(n: int) -> dict[str, pd.DataFrame]:
    ids = seqns("P", n)
    return {
        "P_DEMO": demo("P", n),
        "P_BPXO": _bpxo(ids),
        "P_BMX": pd.DataFrame({"SEQN": ids, "BMXBMI": [30.0] * len(ids)}),
    }


def rxq_drug() -> pd.DataFrame:
    """Multum categories: metformin (358 metabolic > 99 antidiabetic), oxycodone (57 > 58 > 60)."""
    return pd.DataFrame({
        "RXDDRGID": ["d00001", "d04379"],
        "RXDDCI1A": [358.0, 57.0], "RXDDCI1B": [99.0, 58.0], "RXDDCI1C": [NAN, 60.0],
        "RXDDCI2A": [NAN, NAN],
    })


BUILDERS = {"C": _cycle_c, "E": _cycle_e, "J": _cycle_j, "P": _cycle_p}


def write_tree(root: str | Path, cycles: tuple[str, ...] = ("C", "E", "J"), n: int = 4,
               layout: str = "flat", drug_file: bool = True) -> dict[str, Path]:
    """Write the fixture tree; ``layout`` "flat" (all in root) or "nested" (folder per cycle)."""
    root = Path(root)
    written = {}
    for cycle in cycles:
        folder = root if layout == "flat" else root / FOLDERS[cycle]
        for stem, frame in BUILDERS[cycle](n).items():
            suffix = ".xpt" if stem.islower() else ".XPT"
            written[stem.upper()] = write_xpt(folder / f"{stem}{suffix}", frame)
    if drug_file:
        written["RXQ_DRUG"] = write_xpt(root / "RXQ_DRUG.XPT", rxq_drug())
    return written


def dr1iff_frame(n_rows: int, extra_columns: int = 0, seed: int = 0,
                 seqn_start: int = 93703, foods_per_person: int = 16) -> pd.DataFrame:
    """A DR1IFF-like frame: SEQN, DR1IFDCD, DR1IGRMS, DR1DRSTZ (+ extra numeric columns)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "SEQN": (seqn_start + np.arange(n_rows) // foods_per_person).astype(float),
        "DR1IFDCD": rng.integers(11000000, 99999999, n_rows).astype(float),
        "DR1IGRMS": np.round(rng.random(n_rows) * 500, 2),
        "DR1DRSTZ": rng.choice([1.0, 2.0, 4.0], n_rows),
    })
    for i in range(extra_columns):
        frame[f"DR1I{i:04d}"] = rng.random(n_rows)
    return frame
