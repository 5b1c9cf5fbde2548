import pytest

from ragaudit.data.chunks import Chunk
from ragaudit.exceptions import InputError
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


LAPTOPS = Chunk("c1", "it", 0, "# Laptops\nLaptops are replaced every three years.")
NOON = Chunk("c2", "hr", 0, "The canteen opens at noon.")


def test_temperature_zero_ignores_the_seed():
    reader = ExtractiveReader.fit(CORPUS)
    for question in ("How many days of annual leave?", "When does the canteen serve lunch?",
                     "What is the parental leave policy?"):  # fmt: skip
        plain = reader.generate(question, CORPUS)
        assert all(reader.generate(question, CORPUS, seed=s) == plain for s in range(20))


def test_temperature_draws_the_sentence_from_the_softmax_of_its_support():
    """Two sentences whose support is worked out by hand from the module docstring: the
    question's terms often, laptop, replac each weigh ln(1 + 1.5 / 1.5) = ln 2 over the two
    chunks (n_t = 1, or 0 counted as 1); the laptop sentence holds two of three plus 0.1 for
    stating a quantity ("three") asked by "how often": 2/3 + 0.1; the canteen one holds none:
    0.  At T = 0.25 the canteen sentence is drawn with probability 1 / (1 + e^{(2/3 + 0.1)/T}),
    and its support 0 is below the threshold: the reader refuses.  2,000 seeds, exact
    binomial test against that probability."""
    from math import exp

    from scipy.stats import binomtest

    context = [LAPTOPS, NOON]
    reader = ExtractiveReader.fit(context, temperature=0.25)
    answers = [reader.generate("How often are laptops replaced?", context, seed=s).answer
               for s in range(2000)]  # fmt: skip
    assert set(answers) == {"Laptops are replaced every three years [1].", REFUSAL}
    p_refuse = 1 / (1 + exp((2 / 3 + 0.1) / 0.25))
    refused = answers.count(REFUSAL)
    assert binomtest(refused, 2000, p_refuse).pvalue > 0.001, (refused, p_refuse)
    # the same seed, the same answer
    again = [reader.generate("How often are laptops replaced?", context, seed=s).answer
             for s in range(50)]  # fmt: skip
    assert again == answers[:50]


@pytest.mark.parametrize("temperature", [-0.1, 11, True, "0.5"])
def test_temperature_is_validated(temperature):
    with pytest.raises(InputError, match=r"^temperature: expected a number in \[0, 10\]"):
        ExtractiveReader(temperature=temperature)
