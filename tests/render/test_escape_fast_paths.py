"""The escaping shortcuts (text with nothing to escape is returned as is) change no output:
each is compared with the plain substitutions it skips, on arbitrary text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.reports import _escape
from ragaudit.reports._escape import md_inline, visible

# the fragments each pattern reacts to (an entity, a tag, a word-edge underscore, a link
# end, a list marker), single characters that matter, and anything else Unicode has
FRAGMENTS = ["&amp;", "&#38;", "<a", "</", "_x", "x_", "](", "]:", "1.", "2)", "# ", "- "]
texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS),
              st.sampled_from(list("\\`*|~<&_]([:#>+=.)-19aZ \n\t\x1b\x7f\x85\u2028")),
              st.characters()),
    max_size=12,
).map("".join)  # fmt: skip


def _visible_plain(text: str) -> str:
    return _escape._CONTROL.sub(
        lambda m: _escape._NAMED.get(m.group(0), repr(m.group(0))[1:-1]), text
    )


@given(texts)
@settings(max_examples=500, deadline=None)
def test_visible_equals_its_substitution(text):
    assert visible(text) == _visible_plain(text)


@given(texts, st.booleans())
@settings(max_examples=500, deadline=None)
def test_md_inline_equals_its_substitutions(text, line_start):
    out = _escape._MD_SPECIAL.sub(r"\\\1", _visible_plain(text))
    out = _escape._MD_CONTEXT.sub(r"\\\1", out)
    if line_start:
        out = _escape._MD_LINE_START.sub(r"\1\\\2", out)
    assert md_inline(text, line_start=line_start) == out
