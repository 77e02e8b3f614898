"""The English of a Chinese request's words, from CC-CEDICT (`hermes.tools.chinese_words`)."""

from __future__ import annotations

import pytest

from hermes.tools import chinese_words, lexicon

# Lines in CC-CEDICT's own format (traditional, simplified, [pinyin], /senses/), written here.
SAMPLE = """\
# a comment line
新建 新建 [Xin1 jian4] /Xinjian county in Jiangxi/
新建 新建 [xin1 jian4] /to build new/newly built/
日曆 日历 [ri4 li4] /calendar/CL:本[ben3]/
事件 事件 [shi4 jian4] /event/happening/incident/CL:個|个[ge4]/
事件 事件 [shi4 jian4] /a second entry, never read/
轉 转 [zhuan3] /to turn/to change direction/
轉成 转成 [zhuan3 cheng2] /see 轉化|转化[zhuan3 hua4]/
八仙過海各顯神通 八仙过海各显神通 [ba1 xian1 guo4 hai3 ge4 xian3 shen2 tong1] /each showing their talent/
"""


def test_the_first_common_entry_gives_the_first_words_of_two_senses() -> None:
    table = chinese_words.parse(SAMPLE)
    assert table["新建"] == "build new newly built"  # the county (a proper name) is not "create"
    assert table["日历"] == "calendar" and table["事件"] == "event happening"
    assert "转成" not in table  # only a cross-reference
    assert "八仙过海各显神通" not in table  # longer than anything a request asks for
    assert table["转"] == "turn change direction"


def test_a_request_is_cut_into_the_dictionary_s_longest_words() -> None:
    table = chinese_words.parse(SAMPLE)
    assert chinese_words.segments("新建一个日历事件", table) == ["新建", "日历", "事件"]
    assert chinese_words.segments("转", table) == ["转"]


needs_dictionary = pytest.mark.skipif(chinese_words.dictionary_file() is None,
                                      reason=f"{chinese_words.PACKAGE} (the semantic extra) is not installed")


@needs_dictionary
def test_the_real_dictionary_gives_the_words_the_table_does_not_know() -> None:
    assert len(chinese_words.table()) > 50_000
    assert "phone" in lexicon.gloss("把手机转成横屏").split()
    calendar = lexicon.gloss("新建一个日历事件").split()
    assert {"create", "calendar", "event"} <= set(calendar) and "county" not in calendar
    assert "weather" in lexicon.english_words("帮我查一下明天北京的天气")
    # Nothing Chinese, nothing from the dictionary.
    assert lexicon.english_words("lösche den Ordner") == ["delete", "folder"]
