"""``diagnose.config_differences``: which configuration fields differ between two runs, filed
by design variable; the expected differences are read off the two configs written here."""

from __future__ import annotations

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.confounding import config_differences

BASE = {
    "k": 3, "chunk_size": 800, "chunk_overlap": 100, "chunker": "fixed", "retriever": "bm25",
    "generator": "extractive", "judges": "offline", "seed": 0, "corpus_sha256": "c" * 64,
    "golden_sha256": "g" * 64, "ragaudit_version": "0.1.0",
}  # fmt: skip


def run(name: str, **changes: object) -> SavedRun:
    return SavedRun.from_dict({"name": name, "config": {**BASE, **changes}, "rows": []})


def test_k_and_chunk_size_are_two_variables_and_confound_each_other():
    diff = config_differences(run("k3_cs800"), run("k8_cs400", k=8, chunk_size=400))
    assert [(d.field, d.a, d.b, d.variable) for d in diff.differences] == [
        ("k", 3, 8, "k"),
        ("chunk_size", 800, 400, "chunking"),
    ]
    assert diff.design_variables == ("k", "chunking")
    assert diff.confounded and not diff.data_variables and not diff.judges_differ


def test_one_variable_is_not_confounded_and_bookkeeping_is_no_variable():
    diff = config_differences(run("a"), run("b", k=6, ragaudit_version="0.2.0"))
    assert diff.design_variables == ("k",) and not diff.confounded
    assert [d.variable for d in diff.differences] == ["k", None]


def test_nested_llm_fields_belong_to_the_generator_and_the_judges():
    llm_a = {"llm_generator": {"model": "m1", "prompt_version": "v1", "temperature": 0.0},
             "llm_judges": {"model": "j1", "versions": {"correct": "v2"}}}  # fmt: skip
    llm_b = {"llm_generator": {"model": "m1", "prompt_version": "v2", "temperature": 0.0},
             "llm_judges": {"model": "j2", "versions": {"correct": "v2"}}}  # fmt: skip
    diff = config_differences(run("a", **llm_a), run("b", **llm_b))
    assert [(d.field, d.variable) for d in diff.differences] == [
        ("llm_generator.prompt_version", "generator"),
        ("llm_judges.model", "judges"),
    ]
    assert diff.confounded and diff.judges_differ


def test_different_data_is_reported_apart_from_design():
    diff = config_differences(run("a"), run("b", golden_sha256="h" * 64, seed=1))
    assert diff.data_variables == ("golden set",)
    assert diff.design_variables == ("seed",) and not diff.confounded


def test_a_field_only_one_run_has_is_a_difference():
    diff = config_differences(run("a"), run("b", embedding_model="bge-small"))
    assert [(d.field, d.a, d.b, d.variable) for d in diff.differences] == [
        ("embedding_model", "(not set)", "bge-small", "retriever")
    ]
    assert diff.to_dict()["design_variables"] == ["retriever"]


def test_a_retrieval_depth_derived_from_k_moves_with_k_and_is_no_second_variable():
    # imports keep depth = k; the harness max(20, k): either way it is k's, not the retriever's
    imported = config_differences(
        run("a", k=1, retrieval_depth=1), run("b", k=3, retrieval_depth=3)
    )
    assert imported.design_variables == ("k",) and not imported.confounded
    harness = config_differences(
        run("a", k=3, retrieval_depth=20), run("b", k=25, retrieval_depth=25)
    )
    assert harness.design_variables == ("k",)
    # set on its own (50 is neither k nor max(20, k)): the retriever's depth, a second variable
    deeper = config_differences(
        run("a", k=3, retrieval_depth=20), run("b", k=8, retrieval_depth=50)
    )
    assert deeper.design_variables == ("k", "retriever") and deeper.confounded
