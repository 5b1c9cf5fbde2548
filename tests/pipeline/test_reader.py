import pytest

from ragaudit.data.chunks import Chunk
from ragaudit.pipeline.generators import (
    REFUSAL,
    ExtractiveReader,
    Generation,
    Generator,
    split_sentences,
)

LEAVE = Chunk(
    "l0",
    "leave",
    0,
    "# Annual leave\nEvery employee receives 25 days of annual leave.\n"
    "Unused days can be carried over until 31 March.",
)
SICK = Chunk("s0", "leave", 1, "# Sick leave\nTell your manager before 10:00 on the first day.")
CANTEEN = Chunk("c0", "office", 0, "The canteen serves lunch between 11:30 and 14:00.")
CORPUS = [LEAVE, SICK, CANTEEN]


def test_refusal_phrase_is_the_contract_text():
    assert REFUSAL == "I don't know - the documents do not cover this."


def test_sentence_splitting_keeps_titles_bullets_and_table_rows():
    text = (
        "# Caps\nIntro line\ncontinues here. Second one.\n\n"
        "| City | Cap |\n|---|---|\n| Zurich | 210 EUR |\n- Book early."
    )
    assert split_sentences(text) == [
        ("Intro line continues here.", "Caps"),
        ("Second one.", "Caps"),
        ("City | Cap", "Caps"),
        ("Zurich | 210 EUR", "Caps"),
        ("Book early.", "Caps"),
    ]


def test_answers_with_best_sentence_and_cites_its_context_position():
    reader = ExtractiveReader.fit(CORPUS)
    result = reader.generate("When does the canteen serve lunch?", [SICK, CANTEEN])
    assert result == Generation("The canteen serves lunch between 11:30 and 14:00 [2].", False, [2])
    assert isinstance(reader, Generator)


def test_refuses_exactly_when_support_is_below_threshold():
    reader = ExtractiveReader.fit(CORPUS)
    refusal = reader.generate("What is the policy on bringing dogs to work?", CORPUS)
    assert refusal == Generation(REFUSAL, True, [])
    assert ExtractiveReader.fit(CORPUS).generate("Anything?", []) == Generation(REFUSAL, True, [])
    # With threshold 0 the same question gets *some* sentence: the threshold is what refuses.
    eager = ExtractiveReader.fit(CORPUS, threshold=0.0)
    assert not eager.generate("What is the policy on bringing dogs to work?", CORPUS).abstained


def test_paraphrased_evidence_is_not_recognised():
    # "vacation allowance" never appears in the text: a plausible reader's blind spot.
    reader = ExtractiveReader.fit(CORPUS)
    assert reader.generate("What is the yearly vacation allowance?", CORPUS).abstained


def test_a_distractor_that_repeats_the_question_can_win():
    distractor = Chunk(
        "d0", "faq", 0, "Questions about the annual leave entitlement of an employee go to HR."
    )
    reader = ExtractiveReader.fit([*CORPUS, distractor])
    answer = reader.generate(
        "What is the annual leave entitlement of an employee?", [distractor, LEAVE]
    )
    assert answer.answer.startswith("Questions about the annual leave entitlement")
    assert answer.citations == [1]


def test_second_sentence_is_added_when_it_covers_the_rest_of_the_question():
    reader = ExtractiveReader.fit(CORPUS)
    result = reader.generate(
        "How many days of annual leave do employees receive, "
        "and until when can unused days be carried over?",
        [LEAVE],
    )
    assert result.answer == (
        "Every employee receives 25 days of annual leave [1]. "
        "Unused days can be carried over until 31 March [1]."
    )
    assert result.citations == [1]


def test_reader_is_deterministic():
    reader = ExtractiveReader.fit(CORPUS)
    runs = [reader.generate("When must I tell my manager I am sick?", CORPUS) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0].answer == "Tell your manager before 10:00 on the first day [2]."


def test_threshold_is_validated():
    with pytest.raises(ValueError, match="threshold: expected a number in"):
        ExtractiveReader(threshold=-1)
