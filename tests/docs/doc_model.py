"""A deterministic stand-in model for the LLM examples of docs/guide/llm.md.

The doc-examples test starts :class:`ragaudit.llm.testing.FakeChatServer` on 127.0.0.1 with
:func:`reply` as its responder for blocks marked ``<!-- doc-examples: llm-server -->``.  It
answers each prompt by a fixed rule on the request's own text, so the guide's samples (calls,
tokens, cache hits, costs) are what ragaudit prints against it; the verdicts are canned:

* generator: the sentence of the passages that shares the most words with the question, cited
  with its passage number (the refusal without passages);
* sufficiency: one fact, in the context when every number of the reference is in it;
* correctness: "correct" when every number of the reference is in the answer, else "wrong";
* faithfulness: one claim (the answer), supported when its first six words are in a passage;
* citations: every (sentence, passage) pair asked about is supported; relevance: 4;
  labeller: chunk 1 answers;
* pairwise: the answer with more words found in the passages wins, "tie" when equal (a rule
  blind to the order A/B).

Usage is reported as characters / 4 of the messages and of the reply.
"""

from __future__ import annotations

import json
import re

from ragaudit.judges.prompts import PROMPTS
from ragaudit.llm.testing import FakeReply, RecordedRequest
from ragaudit.pipeline.generators import REFUSAL

NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _block(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}[^>]*>\n(.*?)\n</{tag}>", text, re.DOTALL)
    return match.group(1) if match else ""


def _chunks(text: str) -> list[str]:
    return re.findall(r'<chunk n="\d+">\n(.*?)\n</chunk>', text, re.DOTALL)


def _sentences(text: str) -> list[str]:
    prose = " ".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return [s.rstrip(".!?") for s in re.split(r"(?<=[.!?])\s+", " ".join(prose.split())) if s]


def _answer(question: str, chunks: list[str]) -> str:
    """The passage sentence sharing most words with the question (ties: earlier passage), cited."""
    words = set(re.findall(r"\w+", question.lower()))
    scored = [
        (len(words & set(re.findall(r"\w+", sentence.lower()))), -n, sentence, n)
        for n, chunk in enumerate(chunks, 1)
        for sentence in _sentences(chunk)
    ]
    if not scored:
        return REFUSAL
    *_, sentence, number = max(scored)
    return f"{sentence[:200]} [{number}]."


def _numbers_in(reference: str, text: str) -> bool:
    return all(n in text for n in NUMBER.findall(reference))


def _verdict(name: str, user: str) -> object:
    reference, answer = _block(user, "reference"), _block(user, "answer")
    context = " ".join(_chunks(user))
    if name == "sufficiency":
        return {"facts": [{"fact": reference, "in_context": _numbers_in(reference, context)}]}
    if name == "correctness":
        right = _numbers_in(reference, answer)
        return {"verdict": "correct" if right else "wrong", "completeness": float(right),
                "numbers_match": right}  # fmt: skip
    if name == "faithfulness":
        head = " ".join(re.sub(r"\[\d+\]", "", answer).split()[:6])
        return {"claims": [{"claim": answer, "supported": head in " ".join(context.split())}]}
    if name == "citations":
        pairs = [
            (int(i), int(n))
            for i, cites in re.findall(r'<sentence id="(\d+)" cites="([\d,]+)">', user)
            for n in cites.split(",")
        ]
        return {"verdicts": [{"sentence": i, "chunk": n, "supported": True} for i, n in pairs]}
    if name == "relevance":
        return {"score": 4, "reason": "addresses the question"}
    if name == "labeller":
        return {"answer_chunks": [1], "supporting_chunks": []}
    if name == "pairwise":
        passages = set(re.findall(r"\w+", context.lower()))
        answers = dict(re.findall(r'<answer label="([AB])">\n(.*?)\n</answer>', user, re.DOTALL))
        first, second = (
            len(set(re.findall(r"\w+", answers.get(x, "").lower())) & passages) for x in "AB"
        )
        winner = "tie" if first == second else ("A" if first > second else "B")
        return {"winner": winner, "reason": "more of it is in the passages"}
    raise ValueError(f"no rule for the {name!r} prompt")


def reply(request: RecordedRequest) -> FakeReply:
    """The stand-in model's reply to one chat-completions request."""
    system, user = request.messages[0]["content"], request.messages[-1]["content"]
    name = next(p.name for p in PROMPTS.values() if p.system == system)
    if name == "generator":
        content = _answer(_block(user, "question"), _chunks(user))
    else:
        content = json.dumps(_verdict(name, user))
    asked = sum(len(m["content"]) for m in request.messages)
    return FakeReply(content, usage=(asked // 4, len(content) // 4 + 1))
