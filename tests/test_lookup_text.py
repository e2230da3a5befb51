"""A long prompt is looked up by its beginning (services/brain_retrieval.lookup_text)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notewell.search.engine import MAX_QUERY_CHARS
from notewell.services.brain_retrieval import lookup_text

WORDS = st.lists(st.text(st.sampled_from("abcé中 \n\t"), min_size=1, max_size=40), min_size=1, max_size=120)


@given(WORDS)
def test_a_prompt_is_looked_up_by_its_whole_words_up_to_the_bound(parts: list[str]) -> None:
    prompt = "".join(parts)
    text = lookup_text(prompt)
    assert prompt.startswith(text) and len(text) <= MAX_QUERY_CHARS
    if len(prompt) <= MAX_QUERY_CHARS:
        assert text == prompt
        return
    head = prompt[:MAX_QUERY_CHARS]
    cut_between_words = prompt[MAX_QUERY_CHARS].isspace() or head[-1].isspace()
    if cut_between_words or not any(c.isspace() for c in head.strip()):
        assert text == head  # no word is cut, or there is no space to cut at
    else:
        assert prompt[len(text)].isspace()  # what it leaves out starts at a space: no word cut in two
        assert not any(c.isspace() for c in head[len(text):].strip())  # and it keeps every whole word before it
