"""The TREC reader (pyarrow fast path, exact Python re-scan) agrees with plain Python parsing,
with itself on either path, and with trec_eval.

References are computed independently: ``str.split`` + ``float()`` + Python's ``sorted`` with
trec_eval's rule (score descending, ties by id descending), and pytrec_eval for the metrics.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from ragaudit.data.formats import (
    read_qrels_columns,
    read_run_columns,
    read_trec_qrels,
    read_trec_run,
)
from ragaudit.exceptions import FormatError, InputError
from ragaudit.metrics import evaluate

SEEDS = [0, 1, 2]


def _score_token(rng: np.random.Generator) -> str:
    kind = rng.integers(10)
    value = float(rng.normal() * 10)
    if kind <= 3:
        return f"{round(value, 1):.1f}"  # few distinct values: many ties
    if kind == 4:
        return f"{value:.2f}"
    if kind == 5:
        return repr(value)  # up to 17 significant digits: some take the float() fallback
    if kind == 6:
        return f"{value:.3e}"  # exponent: fallback
    if kind == 7:
        return str(int(value))  # integer, possibly negative
    if kind == 8:
        return f"+{abs(value):.4f}"
    return f"-0.{rng.integers(0, 10**6):06d}"


def _item_id(rng: np.random.Generator) -> str:
    kind = rng.integers(5)
    number = int(rng.integers(0, 40))
    if kind == 0:
        return f"d{number}"
    if kind == 1:
        return f"document-with-a-long-shared-prefix-{number:04d}"  # > 24 bytes, same start
    if kind == 2:
        return f"doc-é-{number}"  # UTF-8: strcmp compares unsigned bytes
    if kind == 3:
        return f"12345678{number}"  # exactly 8+ bytes: word boundary
    return f"D{number:07d}"  # 8 bytes


def random_run_lines(seed: int, n_questions: int = 30) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(n_questions):
        qid = f"q{q}" if q % 3 else f"question-with-a-long-id-{q}"
        seen: set[str] = set()
        for _ in range(int(rng.integers(1, 25))):
            item = _item_id(rng)
            if item not in seen:
                seen.add(item)
                lines.append((qid, item, _score_token(rng)))
    return lines


def render(lines: list[tuple[str, str, str]], sep: str = " ", end: str = "\n") -> str:
    return "".join(
        f"{qid}{sep}Q0{sep}{item}{sep}{rank}{sep}{score}{sep}tag{end}"
        for rank, (qid, item, score) in enumerate(lines, start=1)
    )


def reference_ranking(lines: list[tuple[str, str, str]]) -> dict[str, list[tuple[str, float]]]:
    grouped: dict[str, list[tuple[str, float]]] = {}
    for qid, item, score in lines:
        grouped.setdefault(qid, []).append((item, float(score)))
    return {
        qid: sorted(pairs, key=lambda pair: (pair[1], pair[0]), reverse=True)
        for qid, pairs in grouped.items()
    }


def assert_matches_reference(run, lines):
    expected = reference_ranking(lines)
    assert list(run) == list(expected)
    for qid, pairs in expected.items():
        assert run[qid] == [item for item, _ in pairs]
        # Bitwise equality with float(): the decimal fast path must round correctly.
        assert run.scores(qid) == [score for _, score in pairs]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("block_bytes", [1 << 24, 97, 1000])
def test_regular_file_matches_python_parsing(tmp_path, seed, block_bytes):
    lines = random_run_lines(seed)
    path = tmp_path / "run.txt"
    path.write_text(render(lines), encoding="utf-8")
    columns = read_run_columns(path, block_bytes=block_bytes)
    run = read_trec_run(path)
    assert_matches_reference(run, lines)
    assert columns.qids == tuple(run)


@pytest.mark.parametrize("seed", SEEDS)
def test_fast_and_general_paths_give_identical_columns(tmp_path, seed):
    lines = random_run_lines(seed)
    regular = tmp_path / "regular.txt"
    regular.write_text(render(lines), encoding="utf-8")
    # CRLF line ends, tabs, double spaces and no final newline all force the general path.
    irregular = tmp_path / "irregular.txt"
    irregular.write_text(render(lines, sep=" \t", end="\r\n").rstrip("\r\n"), encoding="utf-8")
    fast = read_run_columns(regular)
    general = read_run_columns(irregular)
    assert fast.qids == general.qids
    for name in ("offsets", "row_order", "item_hash", "scores"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(general, name))
    assert fast.items.decode() == general.items.decode()
    assert fast.tied_groups == general.tied_groups
    assert_matches_reference(read_trec_run(irregular), lines)


@pytest.mark.parametrize(
    ("variant", "mutate"),
    [
        ("missing final newline", lambda text: text.rstrip("\n")),
        ("CRLF", lambda text: text.replace("\n", "\r\n")),
        ("one irregular line", lambda text: text.replace("\n", "\n\n", 1)),
        ("double space in one line", lambda text: text.replace(" Q0 ", "  Q0 ", 1)),
    ],
)
@pytest.mark.parametrize("block_bytes", [1 << 24, 150])
def test_layout_variants(tmp_path, variant, mutate, block_bytes):
    lines = random_run_lines(5)
    path = tmp_path / "run.txt"
    path.write_bytes(mutate(render(lines)).encode("utf-8"))
    assert_matches_reference(read_trec_run(path), lines)
    columns = read_run_columns(path, block_bytes=block_bytes)
    assert columns.items.decode(columns.row_order) == [
        item for pairs in reference_ranking(lines).values() for item, _ in pairs
    ]


@pytest.mark.parametrize("block_bytes", [1 << 24, 120])
@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("q9 Q0 x 1 1.2.3 t", r"run\.txt:{line}: score: expected a number, found '1\.2\.3'"),
        ("q9 Q0 x 1 inf t", r"run\.txt:{line}: score: expected a number, found 'inf'"),
        ("q9 Q0 x 1 - t", r"run\.txt:{line}: score: expected a number, found '-'"),
        ("q9 Q0 x 1 2.5", r"run\.txt:{line}: expected 6 whitespace-separated fields"),
        # Six fields for a one-byte delimiter, five for str.split(): a column the fast path
        # does not keep (Q0, rank, tag) is empty.
        ("q9  x 1 2.5 t", r"run\.txt:{line}: expected 6 whitespace-separated fields"),
        ("q9 Q0 x  2.5 t", r"run\.txt:{line}: expected 6 whitespace-separated fields"),
        ("q9 Q0 x 1 2.5 ", r"run\.txt:{line}: expected 6 whitespace-separated fields"),
        (" Q0 x 1 2.5 t", r"run\.txt:{line}: expected 6 whitespace-separated fields"),
    ],
)
def test_malformed_line_is_named_exactly(tmp_path, block_bytes, bad_line, message):
    good = [f"q{i // 10} Q0 d{i} {i} {i}.25 t" for i in range(60)]
    for position in (0, 23, 59):
        lines = [*good[:position], bad_line, *good[position:]]
        path = tmp_path / "run.txt"
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(FormatError, match=message.format(line=position + 1)):
            read_run_columns(path, block_bytes=block_bytes)


FLOAT_TOKENS = [
    "0",
    "-0",
    "-0.0",
    "+1",
    "1.",
    ".5",
    "-.5",
    "12.3400",
    "00012",
    "9007199254740993",
    "0.1",
    "0.30000000000000004",
    "123456789012345678",
    "1234567890123456789",
    "1e5",
    "1E-3",
    "12345678901234567890123",
    "0.000000000000000000000123",
    "3.14159265358979323846",
    "2.2250738585072011e-308",
    "4.9406564584124654e-324",
    "1.7976931348623157e308",
    "1_0",  # Python's float() accepts it, pyarrow does not: the exact scan reads it
]


def test_scores_equal_float_bitwise(tmp_path):
    rng = np.random.default_rng(7)
    tokens = list(FLOAT_TOKENS)
    tokens += [repr(float(x)) for x in rng.normal(size=300) * 10.0 ** rng.integers(-8, 8, 300)]
    magnitudes, decimals = rng.normal(size=300) * 1e4, rng.integers(0, 12, 300)
    tokens += [f"{x:.{d}f}" for x, d in zip(magnitudes, decimals, strict=True)]
    tokens += ["0." + "".join(map(str, rng.integers(0, 10, 40))) for _ in range(100)]
    path = tmp_path / "run.txt"
    for block_bytes in (1 << 20, 200):
        for subset in ([t for t in tokens if t != "1_0"], tokens):
            path.write_text("".join(f"q{i} Q0 d 1 {t} x\n" for i, t in enumerate(subset)))
            cols = read_run_columns(path, order="given", block_bytes=block_bytes)
            for token, value in zip(subset, cols.scores.tolist(), strict=True):
                expected = float(token)
                assert value == expected and np.signbit(value) == np.signbit(expected), token


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("block_bytes", [1 << 24, 300])
def test_exact_scan_gives_the_fast_path_columns(tmp_path, seed, block_bytes, monkeypatch):
    lines = random_run_lines(seed)
    path = tmp_path / "run.txt"
    path.write_text(render(lines), encoding="utf-8")
    fast = read_run_columns(path, block_bytes=block_bytes)
    import ragaudit.data.formats.trec as trec

    monkeypatch.setattr(trec, "fast_columns", lambda *args, **kwargs: None)
    exact = read_run_columns(path, block_bytes=block_bytes)
    assert fast.qids == exact.qids
    for name in ("offsets", "row_order", "item_hash", "scores"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(exact, name))
    assert fast.items.decode() == exact.items.decode()


def test_tab_separated_files_take_the_fast_path(tmp_path, monkeypatch):
    lines = random_run_lines(4)
    path = tmp_path / "run.txt"
    path.write_text(render(lines, sep="\t"), encoding="utf-8")
    import ragaudit.data.formats.trec as trec

    monkeypatch.setattr(trec, "exact_columns", None)  # would raise TypeError if called
    assert_matches_reference(read_trec_run(path), lines)


@pytest.mark.parametrize("block_bytes", [1 << 24, 64])
def test_qrels_fast_path_matches_python_dicts(tmp_path, block_bytes):
    rng = np.random.default_rng(3)
    rows = []
    for q in range(40):
        for _ in range(int(rng.integers(1, 8))):
            rows.append((f"q{q}", _item_id(rng), str(int(rng.integers(0, 4)))))
    rows.append(("q1", rows[0][1], "3"))  # repeated pair: the last grade wins
    rows.append(("q1", "extra", "2.0"))  # an integral float is an integer grade
    text = "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)
    path = tmp_path / "qrels.txt"
    path.write_text(text, encoding="utf-8")
    expected: dict[str, dict[str, int]] = {}
    for q, d, g in rows:
        expected.setdefault(q, {})[d] = int(float(g))
    qrels = read_trec_qrels(path)
    assert list(qrels) == list(expected)
    assert qrels.to_dict() == expected
    assert [list(v) for v in qrels.to_dict().values()] == [list(v) for v in expected.values()]
    columns = read_qrels_columns(path, block_bytes=block_bytes)
    pairs = list(
        zip(
            [columns.qids[c] for c in columns.q],
            columns.items.decode(),
            columns.grades.tolist(),
            strict=True,
        )
    )
    assert len(pairs) == sum(len(v) for v in expected.values())
    assert all(expected[q][d] == g for q, d, g in pairs)
    general = tmp_path / "general.txt"
    general.write_text(text.replace("\n", "\r\n"), encoding="utf-8")
    assert read_trec_qrels(general).to_dict() == expected


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("q7 0 Z 1.5", r"qrels\.txt:{line}: grade: expected an integer, found '1\.5'"),
        ("q7 0 Z -2", r"qrels\.txt:{line}: grade: expected a grade >= 0, found -2"),
        ("q7 0 Z two", r"qrels\.txt:{line}: grade: expected an integer, found 'two'"),
        ("q7  Z 1", r"qrels\.txt:{line}: expected 4 whitespace-separated fields"),
    ],
)
@pytest.mark.parametrize("block_bytes", [1 << 24, 50])
def test_qrels_errors_name_the_line(tmp_path, bad, message, block_bytes):
    good = [f"q{i // 4} 0 d{i} {i % 3}" for i in range(30)]
    lines = [*good[:17], bad, *good[17:]]
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=message.format(line=18)):
        read_qrels_columns(path, block_bytes=block_bytes)


pytrec_eval = pytest.importorskip("pytrec_eval")
TREC = {
    "ndcg@10": "ndcg_cut_10",
    "map@100": "map_cut_100",
    "recall@100": "recall_100",
    "P@10": "P_10",
    "mrr": "recip_rank",
}


def _pytrec_eval_case(tmp_path, seed, crlf, by_score=False):
    """A seeded run and qrels as TREC files, and pytrec_eval's per-question values on them
    (``by_score``: each question's lines sorted by score, as a ranker writes them)."""
    lines = random_run_lines(seed, n_questions=60)
    if by_score:
        order = {qid: i for i, qid in enumerate(dict.fromkeys(q for q, _, _ in lines))}
        lines = sorted(lines, key=lambda line: (order[line[0]], -float(line[2])))
    rng = np.random.default_rng(seed + 100)
    qrel_lines = []
    for qid, item, _ in lines:
        if rng.random() < 0.3:
            qrel_lines.append(f"{qid} 0 {item} {int(rng.integers(0, 4))}")
    # every question has a relevant label (some never retrieved), so no warning fires
    qrel_lines += [f"{qid} 0 unretrieved-{qid} 1" for qid in dict.fromkeys(q for q, _, _ in lines)]
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    end = "\r\n" if crlf else "\n"
    run_path.write_text(render(lines, end=end), encoding="utf-8")
    qrels_path.write_text("".join(line + "\n" for line in qrel_lines), encoding="utf-8")
    with open(qrels_path, encoding="utf-8") as handle:
        trec_qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path, encoding="utf-8") as handle:
        trec_run = pytrec_eval.parse_run(handle)
    per_query = pytrec_eval.RelevanceEvaluator(trec_qrels, set(TREC.values())).evaluate(trec_run)
    return qrels_path, run_path, per_query


def _assert_matches_pytrec_eval(ev, per_query):
    assert set(ev.query_ids) == set(per_query)
    for name, measure in TREC.items():
        ours = dict(zip(ev.query_ids, ev.per_query[name].tolist(), strict=True))
        for qid, values in per_query.items():
            assert ours[qid] == pytest.approx(values[measure], abs=1e-12), (name, qid)
        expected_mean = float(np.mean([v[measure] for v in per_query.values()]))
        assert abs(ev.means[name] - expected_mean) <= 1e-9


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("crlf", [False, True])
def test_file_metrics_match_pytrec_eval_reading_the_same_files(tmp_path, seed, crlf):
    qrels_path, run_path, per_query = _pytrec_eval_case(tmp_path, seed, crlf)
    ev = evaluate(read_trec_qrels(qrels_path), read_trec_run(run_path), list(TREC), missing="skip")
    _assert_matches_pytrec_eval(ev, per_query)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("by_score", [False, True])
@pytest.mark.parametrize("workers", [1, 2])
def test_small_blocks_and_join_slices_match_pytrec_eval(
    tmp_path, seed, by_score, workers, monkeypatch
):
    # Blocks of ~100 bytes: nearly every question straddles two blocks (its code is carried
    # over); the duplicate check, the join and the kernels run a few rows at a time (many
    # slices of whole questions), on one thread or two.
    import importlib

    import ragaudit._parallel

    monkeypatch.setattr(ragaudit._parallel, "WORKERS", workers)

    from ragaudit.data.formats.columns import _ColumnarQrels, _ColumnarRun

    evaluate_module = importlib.import_module("ragaudit.metrics.evaluate")
    join_module = importlib.import_module("ragaudit.metrics._join")
    columns_module = importlib.import_module("ragaudit.data.formats.columns")
    qrels_path, run_path, per_query = _pytrec_eval_case(tmp_path, seed, False, by_score)
    monkeypatch.setattr(join_module, "_JOIN_ROWS", 7)
    monkeypatch.setattr(evaluate_module, "_KERNEL_CELLS", 40)
    monkeypatch.setattr(columns_module, "_SLICE_ROWS", 9)
    columns = read_run_columns(run_path, block_bytes=100)
    assert columns.qids == read_run_columns(run_path).qids
    run = _ColumnarRun(columns, unit="doc", order="score", name=str(run_path))
    qrels = _ColumnarQrels(read_qrels_columns(qrels_path, block_bytes=90), unit="doc", name="q")
    ev = evaluate(qrels, run, list(TREC), missing="skip")
    _assert_matches_pytrec_eval(ev, per_query)
    # Micro averages (summed slice by slice) are the same on one thread or two.
    micro = ["recall@5", "P@10", "f1@3"]
    got = evaluate(qrels, run, micro, missing="skip", average="micro").means
    monkeypatch.setattr(ragaudit._parallel, "WORKERS", 3 - workers)
    assert got == evaluate(qrels, run, micro, missing="skip", average="micro").means
    # A line repeated inside a question is still found when the check runs in slices.
    lines = run_path.read_text().splitlines(keepends=True)
    lines.insert(len(lines) // 2, lines[len(lines) // 2 - 1])
    run_path.write_text("".join(lines))
    with pytest.raises(InputError, match="appears more than once"):
        read_run_columns(run_path, block_bytes=100)


def test_ties_order_long_ids_like_strcmp(tmp_path):
    # Tied items whose first 8 bytes and later bytes disagree on the order, a prefix pair,
    # and non-ASCII bytes (strcmp compares unsigned bytes; so does Python on UTF-8 text).
    ids = [
        "aaaaaaaa-zzzzzzzz-9",
        "bbbbbbbb-aaaaaaaa-1",
        "bbbbbbbb-aaaaaaaa",
        "é-item",
        "z-item",
        "bbbbbbbb-aaaaaaaa-10",
        "short",
        "shor",
    ]
    text = "".join(f"q1 Q0 {item} {i} 1.5 t\n" for i, item in enumerate(ids))
    text += "q1 Q0 top 99 2.0 t\n"
    path = tmp_path / "run.txt"
    path.write_text(text, encoding="utf-8")
    assert read_trec_run(path)["q1"] == ["top", *sorted(ids, reverse=True)]
    assert read_trec_run(path).tied_groups == 1


def _column_arrays(columns):
    return {
        "offsets": columns.offsets,
        "item_data": columns.items.data,
        "item_offsets": columns.items.offsets,
        "row_order": columns.row_order,
        "item_hash": columns.item_hash,
        "scores": columns.scores,
    }


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("block_bytes", [97, 1000])
@pytest.mark.parametrize("layout", ["regular", "double-spaced"])
def test_threaded_blocks_give_identical_columns(tmp_path, seed, block_bytes, layout):
    # Question ids recur across blocks, so block-local codes must merge into file-wide ones.
    lines = random_run_lines(seed)
    rng = np.random.default_rng(seed)
    lines = [lines[i] for i in rng.permutation(len(lines))]
    path = tmp_path / "run.txt"
    path.write_text(render(lines, sep="  " if layout == "double-spaced" else " "))
    single = read_run_columns(path, block_bytes=block_bytes, threads=1)
    threaded = read_run_columns(path, block_bytes=block_bytes, threads=2)
    with_repeats = tmp_path / "repeats.txt"  # a repeated item in a later block: dropped alike
    with_repeats.write_text(render([*lines, lines[0], lines[1]]))
    kept = [
        read_run_columns(with_repeats, block_bytes=block_bytes, threads=t, duplicates="first")
        for t in (1, 2)
    ]
    assert [a.tobytes() for a in _column_arrays(kept[1]).values()] == [
        a.tobytes() for a in _column_arrays(kept[0]).values()
    ]
    assert kept[1].n_rows == single.n_rows
    assert threaded.qids == single.qids
    assert threaded.tied_groups == single.tied_groups
    for key, expected in _column_arrays(single).items():
        got = _column_arrays(threaded)[key]
        assert got.dtype == expected.dtype, key
        assert got.tobytes() == expected.tobytes(), key
    # And both equal the plain-Python reference (codes in order of first appearance).
    assert single.qids == tuple(dict.fromkeys(qid for qid, _, _ in lines))
    assert_matches_reference(read_trec_run(path), lines)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_first_bad_line_in_file_order_wins_with_threads(tmp_path, threads):
    # Bad lines in many blocks (a different error kind late in the file): the earliest wins.
    good = [f"q{i // 10} Q0 d{i} {i} {i}.25 t" for i in range(200)]
    lines = list(good)
    lines[37] = "q3 Q0 x 1 1.2.3 t"
    lines[120] = "q12 Q0 x 1 2.5"
    lines[180] = "q18 Q0 x 1 nan t"
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    first_error = r"run\.txt:38: score: expected a number, found '1\.2\.3'"
    with pytest.raises(FormatError, match=first_error):
        read_run_columns(path, block_bytes=100, threads=threads)
    lines[37] = good[37]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"run\.txt:121: expected 6 whitespace-separated fields"):
        read_run_columns(path, block_bytes=100, threads=threads)


def test_files_listing_the_same_questions_share_one_id_tuple(tmp_path):
    qrels_path, run_path, other_path = tmp_path / "q.txt", tmp_path / "r.txt", tmp_path / "o.txt"
    qrels_path.write_text("q1 0 a 1\nq2 0 b 1\nq2 0 c 0\n")
    run_path.write_text("q1 Q0 a 1 2.0 t\nq2 Q0 c 1 1.0 t\nq2 Q0 b 2 0.5 t\n")
    other_path.write_text("q2 Q0 c 1 1.0 t\nq1 Q0 a 1 2.0 t\n")  # same ids, other order
    qrels = read_qrels_columns(qrels_path)
    run = read_run_columns(run_path)
    assert run.qids == ("q1", "q2") and run.qids is qrels.qids
    other = read_run_columns(other_path)
    assert other.qids == ("q2", "q1")  # the same ids in another order are not shared
    # Held weakly: once the columns are gone the cache does not keep them alive, and the ids
    # are read afresh (a tuple kept alive by itself is not shared).
    ids, gone = qrels.qids, weakref.ref(qrels)
    del qrels, run
    gc.collect()
    assert gone() is None
    again = read_run_columns(run_path)
    assert again.qids == ("q1", "q2") and again.qids is not ids
