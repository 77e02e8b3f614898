"""tool_search: a name the model knows always comes first; other queries are ranked by meaning.

The ranking is checked on small surfaces where the answer is known, and the name rules on the
shipped corpus of 8,685 real tool definitions (tests/tool_corpus.py), where names like
`search` and `run_soql_query` are shared by many servers.
"""

from __future__ import annotations

import mcp_types as types
import pytest

from hermes.config.model import ToolFilter
from hermes.tools.deferred import SearchIndex
from hermes.tools.search import ToolIndex, canonical, documents_of, terms
from hermes.tools.surface import ServerTools, Surface, build_surface
from tests.tool_corpus import corpus, name_misses, surface_of


def _surface(servers: dict[str, list[tuple[str, str]]]) -> Surface:
    return build_surface(ServerTools(name, ToolFilter(), [types.Tool(name=tool, description=text,
                                                                     input_schema={"type": "object"})
                                                          for tool, text in tools], False, False)
                         for name, tools in servers.items())


@pytest.fixture(scope="module")
def everyday() -> SearchIndex:
    return SearchIndex(_surface({
        "github": [("create_issue", "Open a new issue in a repository."),
                   ("get_pull_request_status", "Combined status of all checks of a pull request."),
                   ("search_code", "Search code across repositories.")],
        "gitlab": [("create_issue", "Create an issue in a GitLab project."),
                   ("list_pipelines", "List the CI pipelines of a project.")],
        "files": [("create_directory", "Create a new directory, with its parents."),
                  ("list_directory", "List the entries of a directory."),
                  ("read_text_file", "Read a file as text.")],
        "maps": [("maps_reverse_geocode", "Convert coordinates into an address.")],
    }))


def _names(index: SearchIndex, query: str) -> list[str]:
    return [t.name for t in index.search_now([], query)[0]]


@pytest.mark.parametrize("query", ["mcp__github__create_issue", "MCP__GITHUB__CREATE_ISSUE", "github__create_issue",
                                   "github_createIssue", "github-create-issue", "use mcp__github__create_issue now"])
def test_every_spelling_of_a_full_name_finds_that_tool_first(everyday: SearchIndex, query: str) -> None:
    assert _names(everyday, query)[0] == "mcp__github__create_issue"


@pytest.mark.parametrize("query", ["create_issue", "createIssue", "create-issue"])
def test_a_tool_s_own_name_finds_every_server_s_tool_of_that_name_before_anything_else(everyday: SearchIndex,
                                                                                      query: str) -> None:
    assert _names(everyday, query)[:2] == ["mcp__github__create_issue", "mcp__gitlab__create_issue"]


def test_the_name_as_written_comes_before_the_same_name_spelled_otherwise() -> None:
    index = ToolIndex(documents_of(list(_surface({"salesforce-mcp": [("run_soql_query", "SOQL.")],
                                                  "@salesforce/mcp": [("run_soql_query", "SOQL.")]}).tools.values())))
    # mcp__salesforce_mcp__… and mcp___salesforce_mcp__… canonicalise alike; the one spelled as asked is first.
    found = [d.key for d in index.search("mcp__salesforce_mcp__run_soql_query", 2)]
    assert found == ["mcp__salesforce_mcp__run_soql_query", "mcp___salesforce_mcp__run_soql_query"]


def test_a_plain_word_of_a_sentence_is_not_taken_for_a_tool_s_name() -> None:
    index = ToolIndex(documents_of(list(_surface({
        "azure": [("deploy", "Deploy resources to Azure."), ("search", "Azure AI Search indexes.")],
        "web": [("web_search", "Search the web for pages about a topic.")],
    }).tools.values())))
    # "search" is a tool's whole name on azure, but here it is a verb of a request.
    assert [d.key for d in index.search("search the web for reviews of a laptop", 1)] == ["mcp__web__web_search"]
    # Alone, or written like a name, it is a name.
    assert [d.key for d in index.search("search", 1)] == ["mcp__azure__search"]
    assert [d.key for d in index.search("please run azure__deploy now", 1)] == ["mcp__azure__deploy"]


@pytest.mark.parametrize(("query", "expected"), [
    ("make a folder called reports", "mcp__files__create_directory"),
    ("what's inside the downloads folder", "mcp__files__list_directory"),
    ("are the checks green on my pull request", "mcp__github__get_pull_request_status"),
    ("street address at these coordinates", "mcp__maps__maps_reverse_geocode"),
    ("listing pipelines", "mcp__gitlab__list_pipelines"),
])
def test_words_of_a_request_find_the_tool_by_stems_and_related_words(everyday: SearchIndex, query: str,
                                                                    expected: str) -> None:
    assert expected in _names(everyday, query)[:2], _names(everyday, query)


def test_stemming_and_name_splitting() -> None:
    assert canonical("mcp__github__createIssue") == canonical("mcp-github-create_issue") == "mcp_github_create_issue"
    assert terms("Listing the builds") == terms("list build")
    assert terms("getHTTPResponse") == ["get", "http", "respons"]


def test_a_miss_names_the_sources_and_the_hidden_servers_and_gives_a_hint(everyday: SearchIndex) -> None:
    from hermes.tools.deferred import SEARCH_HINT, HiddenServer

    found, text = everyday.search_now([HiddenServer("blender", 26, "Blender is not running. Start Blender.")],
                                  "zzqx wobble")
    assert found == []
    assert "No tool matched 'zzqx wobble'." in text and "files (3 tools)" in text and "github (3 tools)" in text
    assert "blender (26 tools unavailable: Blender is not running. Start Blender.)" in text and SEARCH_HINT in text


def test_on_real_definitions_every_exact_and_suffix_name_comes_first() -> None:
    servers = corpus()
    surface = surface_of(servers, sorted(servers))
    assert len(surface.tools) >= 5000
    assert name_misses(ToolIndex(documents_of(list(surface.tools.values()))), surface) == ([], [])
