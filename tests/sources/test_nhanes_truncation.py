"""Truncated NHANES files are errors, never fewer participants read silently.

Fixtures are real SAS transport v5 files (``nhanes_fixtures.write_xpt``) cut at an 80-byte
record boundary, as a broken download leaves them: the file length stays a whole number of
records, so only the cross-check against DEMO (or a row left incomplete) can tell.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nutrireason.errors import DataError
from nutrireason.sources.nhanes import read_nhanes_dir, read_xpt
from nutrireason.sources.nhanes_bundle import DATA_FILE, read_nhanes_bundle
from tests.sources.nhanes_fixtures import write_xpt
from tests.sources.test_nhanes_bundle import ROWS, write_bundle

N = 400
FIRST = 93703
SEQN = np.arange(FIRST, FIRST + N, dtype=float)
RNG = np.random.default_rng(16)
EXAMINED = RNG.random(N) < 0.93  # RIDSTATR 2; the rest were interviewed only (1)


def demo_frame() -> pd.DataFrame:
    return pd.DataFrame({"SEQN": SEQN, "RIDSTATR": np.where(EXAMINED, 2.0, 1.0),
                         "RIDAGEYR": np.full(N, 40.0), "RIAGENDR": 1.0 + np.arange(N) % 2,
                         "SDDSRVYR": np.full(N, 10.0)})


def bmx_frame() -> pd.DataFrame:
    """Every examined participant (an exam file): SEQN and BMI, 16 bytes a row."""
    ids = SEQN[EXAMINED]
    return pd.DataFrame({"SEQN": ids, "BMXBMI": np.linspace(18.0, 40.0, len(ids))})


def diq_frame() -> pd.DataFrame:
    """Every interviewed participant (a questionnaire file)."""
    return pd.DataFrame({"SEQN": SEQN, "DIQ010": np.full(N, 2.0)})


def glu_frame(share: float = 0.45, seed: int = 3) -> pd.DataFrame:
    """The fasting subsample: about ``share`` of the examined, spread over the SEQN range."""
    pick = EXAMINED & (np.random.default_rng(seed).random(N) < share)
    return pd.DataFrame({"SEQN": SEQN[pick], "LBXGLU": np.full(int(pick.sum()), 99.0)})


def write_cycle(root: Path, **frames: pd.DataFrame) -> dict[str, Path]:
    frames = {"DEMO_J": demo_frame(), "BMX_J": bmx_frame(), "DIQ_J": diq_frame(),
              "GLU_J": glu_frame()} | frames
    return {stem: write_xpt(root / f"{stem}.XPT", frame) for stem, frame in frames.items()}


def cut(path: Path, keep: float) -> int:
    """Cut ``path`` at an 80-byte record boundary that is also a row boundary, keeping about
    ``keep`` of its rows; returns the rows pandas' own reader then sees (without a word)."""
    reader = pd.read_sas(path, format="xport", encoding="latin-1", iterator=True)
    start, width, nobs = reader.record_start, reader.record_length, reader.nobs
    reader.close()
    step = math.lcm(80, width) // width  # rows per common boundary
    rows = round(nobs * keep / step) * step
    path.write_bytes(path.read_bytes()[:start + rows * width])
    assert (start + rows * width) % 80 == 0 and 0 < rows < nobs
    assert len(pd.read_sas(path, format="xport", encoding="latin-1")) == rows
    return rows


def test_the_untouched_cycle_with_its_subsample_reads(tmp_path):
    write_cycle(tmp_path)
    tables = read_nhanes_dir(tmp_path)
    assert len(tables["demographics"]) == N
    assert tables["body"]["bmi"].notna().sum() == EXAMINED.sum()
    assert tables["labs"]["glucose_mg_dl"].notna().sum() == len(glu_frame())


@pytest.mark.parametrize("keep", [0.63, 0.75])  # 25-37 % lost, as in the issue
def test_an_exam_file_cut_at_a_record_boundary_is_named(tmp_path, keep):
    paths = write_cycle(tmp_path)
    rows = cut(paths["BMX_J"], keep)
    lost = int(EXAMINED.sum()) - rows
    assert 0.24 <= lost / EXAMINED.sum() <= 0.38
    # The cut is between rows (16-byte rows, 80-byte records): nothing in the file shows it.
    assert len(read_xpt(paths["BMX_J"], "BMX", ["BMXBMI"])) == rows
    with pytest.raises(DataError) as info:
        read_nhanes_dir(tmp_path)
    error = info.value
    stop = int(bmx_frame()["SEQN"].iloc[rows - 1])
    assert error.path == str(paths["BMX_J"]) and "truncated" in str(error)
    assert f"stops at SEQN {stop}" in str(error)
    assert f"the {lost:,} participants DEMO lists as examined after it are missing" in str(error)
    assert "DEMO_J.XPT" in str(error)


def test_a_questionnaire_file_cut_short_is_named(tmp_path):
    paths = write_cycle(tmp_path)
    rows = cut(paths["DIQ_J"], 0.7)
    with pytest.raises(DataError, match="DIQ_J.XPT") as info:
        read_nhanes_dir(tmp_path)
    assert f"the {N - rows:,} participants DEMO lists as interviewed after it are missing" in str(
        info.value)


def test_a_cut_demo_file_is_named_by_the_participants_it_lost(tmp_path):
    paths = write_cycle(tmp_path)
    rows = cut(paths["DEMO_J"], 0.7)
    with pytest.raises(DataError) as info:
        read_nhanes_dir(tmp_path)
    error = info.value
    assert error.path == str(paths["DEMO_J"]) and "truncated" in str(error)
    assert f"DEMO stops at SEQN {FIRST + rows - 1}" in str(error)
    assert "BMX_J.XPT" in str(error) and "DIQ_J.XPT" in str(error)


def test_a_cut_subsample_file_is_caught_and_a_genuine_one_is_not(tmp_path):
    # A genuine fasting subsample a tenth of the size also passes.
    write_cycle(tmp_path / "sparse", GLU_J=glu_frame(share=0.1, seed=5))
    assert read_nhanes_dir(tmp_path / "sparse")["labs"]["glucose_mg_dl"].notna().sum() > 10
    paths = write_cycle(tmp_path / "cut")
    cut(paths["GLU_J"], 0.6)
    with pytest.raises(DataError, match="GLU_J.XPT.*truncated file: it stops at SEQN"):
        read_nhanes_dir(tmp_path / "cut")


def test_a_file_cut_inside_a_row_is_named(tmp_path):
    # 24-byte rows: an 80-byte record boundary usually falls inside a row.
    frame = diq_frame().assign(DIQ050=1.0)
    paths = write_cycle(tmp_path, DIQ_J=frame)
    data = paths["DIQ_J"].read_bytes()
    paths["DIQ_J"].write_bytes(data[:len(data) - 80 * 7])
    with pytest.raises(DataError, match=r"DIQ_J.XPT: truncated XPT file: it ends inside row"):
        read_xpt(paths["DIQ_J"], "DIQ", ["DIQ010"])


def test_participants_missing_from_demo_are_named(tmp_path):
    strays = pd.DataFrame({"SEQN": [float(FIRST + 5), 1.0], "DIQ010": [2.0, 2.0]})
    write_cycle(tmp_path, DIQ_J=strays)
    with pytest.raises(DataError, match=r"DIQ_J.XPT, field 'SEQN': 1 participants are not in "
                       r".*DEMO_J.XPT \(first SEQN 1\)"):
        read_nhanes_dir(tmp_path)


def test_an_empty_file_is_refused(tmp_path):
    write_cycle(tmp_path, BMX_J=bmx_frame().iloc[0:0])
    with pytest.raises(DataError, match="BMX_J.XPT.*has no rows"):
        read_nhanes_dir(tmp_path)


def test_a_bundle_file_cut_inside_its_last_line_is_named(tmp_path):
    nhanes, book = write_bundle(tmp_path, ROWS)
    path = nhanes / DATA_FILE
    data = path.read_bytes()
    path.write_bytes(data[:data.rstrip(b"\n").rindex(b"\t") - 2])
    with pytest.raises(DataError, match=r"truncated file: its last line \(row \d\) has \d+ of"):
        read_nhanes_bundle(nhanes, book)
