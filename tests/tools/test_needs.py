"""A request with several needs gets a list that covers each (tools.needs)."""

from __future__ import annotations

from hermes.tools import needs
from hermes.tools.deferred import SearchIndex
from tests.tools.test_search import _surface


def test_a_request_is_split_where_a_new_need_starts_in_each_of_the_users_languages() -> None:
    assert needs.parts("make a PDF report of today's trends with a word cloud") == [
        "make a PDF report of today's trends", "a word cloud"]
    assert needs.parts("find the invoice, then email it to Ana") == ["find the invoice", "email it to Ana"]
    assert needs.parts("查一下今天的热搜，然后生成词云") == ["查一下今天的热搜", "生成词云"]
    assert needs.parts("baixa o relatório e manda pro Pedro") == ["baixa o relatório", "manda pro Pedro"]
    assert needs.parts("lade den Bericht herunter und schick ihn an Jonas") == [
        "lade den Bericht herunter", "schick ihn an Jonas"]
    assert needs.parts("descarga el informe y envíalo a Marta") == ["descarga el informe", "envíalo a Marta"]


def test_a_single_need_is_not_split_and_a_part_without_a_word_is_no_need() -> None:
    for request in ("list my open pull requests", "create_issue", "mcp__github__create_issue", "", "a and the",
                    "rock and roll"):
        assert len(needs.parts(request)) != 1
    assert needs.parts("list my open pull requests") == []
    assert needs.parts("show it, and then") == []  # "it", "then": nothing asked for
    assert len(needs.parts(", ".join(f"rename task{n} now" for n in range(10)))) == needs.MAX_PARTS
    # Two words a part at least; a comma between digits is a thousands separator; Chinese 和/并 are
    # inside too many words to split on.
    assert needs.parts("sign in with Google") == needs.parts("convert 1,000,000 USD to EUR") == []
    assert needs.parts("把 feature 分支合并到 main 分支") == []


def test_covering_keeps_the_whole_request_s_best_first_and_gives_each_need_its_best() -> None:
    whole = ["pdf", "pdf2", "pdf3", "pdf4", "trends"]
    each = [["pdf", "pdf2"], ["cloud", "pdf"]]
    # The first part's best is listed already: it adds nothing (its second is not merged in).
    assert needs.covering(whole, each, 5) == ["pdf", "cloud", "pdf2", "pdf3", "pdf4"]
    assert needs.covering(whole, [], 3) == ["pdf", "pdf2", "pdf3"]
    assert needs.covering([], [["a"], ["b"]], 5) == ["a", "b"]


def test_a_multi_need_request_reaches_a_tool_for_each_need_in_the_first_five() -> None:
    tools = {
        "docs": [(f"pdf_{verb}", f"{verb.title()} a PDF report document.") for verb in
                 ("create", "merge", "split", "export", "convert", "sign")],
        "charts": [("word_cloud", "Draw a word cloud chart from a list of words and their weights.")],
        "trends": [("hot_topics", "Today's trending topics on social media.")],
    }
    index = SearchIndex(_surface(tools))
    request = "make a PDF report of today's trending topics with a word cloud"
    first_five = {t.original for t in index.search_now([], request)[0][:5]}
    assert {"word_cloud", "hot_topics"} <= first_five
    assert index.search_now([], "pdf_create")[0][0].original == "pdf_create"  # a name still comes first


def test_a_request_of_a_megabyte_is_read_as_its_first_two_thousand_characters() -> None:
    from hermes.tools.deferred import MAX_QUERY_CHARS

    index = SearchIndex(_surface({"mail": [("send_email", "Send an email."), ("search_inbox", "Search mail.")]}))
    hostile = "schick eine Mail, und lösche alles, " * 30_000
    assert index.search_now([], hostile) == index.search_now([], hostile[:MAX_QUERY_CHARS])
    assert index.search_now([], hostile)[0][0].original == "send_email"
