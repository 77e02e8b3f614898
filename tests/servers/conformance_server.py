"""An MCP server with the tools, resources and prompts the official conformance suite's server
scenarios call (test_simple_text, test_image_content, test://static-text, test_simple_prompt, ...).

hermes's conformance run puts `hermes mcp serve --http --only conformance --no-prefix` in front of
it, so the suite tests hermes as an aggregator; the tests also use it as a rich upstream (logging,
progress, sampling, elicitation). Over stdio by default; `--http PORTFILE` serves Streamable HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
import warnings

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import AssistantMessage, Prompt, UserMessage
from mcp.server.mcpserver.utilities.types import Image
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from task_fixtures import conformance_tasks

# Logging is deprecated for 2026-era clients; sampling and elicitation reach them as input-required
# rounds (SEP-2322), and 2025 ones as requests on the session.
warnings.simplefilter("ignore")
parser = argparse.ArgumentParser()
parser.add_argument("--http", metavar="PORTFILE")
options = parser.parse_args()

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
# A 44-byte WAV header with no samples: valid audio/wav.
WAV = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=")

app = MCPServer("conformance-upstream", instructions="Test tools for the MCP conformance suite.")
Asked = types.InputRequiredResult


async def ask(ctx: Context, request: types.ElicitRequest | types.CreateMessageRequest) -> object:
    """One question for the client, in its era: a 2026-07-28 client is answered an input-required
    round and retries with the answer; a 2025 one gets a request on the session. The answer, or
    the round to return."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answers = ctx.input_responses or {}
        return answers["q"] if "q" in answers else types.InputRequiredResult(input_requests={"q": request})
    if isinstance(request, types.ElicitRequest):
        assert isinstance(request.params, types.ElicitRequestFormParams)
        return await ctx.session.elicit_form(request.params.message, request.params.requested_schema,
                                             related_request_id=ctx.request_id)
    return await ctx.session.create_message(messages=request.params.messages,
                                            max_tokens=request.params.max_tokens, related_request_id=ctx.request_id)


def form(message: str, schema: dict[str, object]) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


@app.tool(description="Send the user to a web page (URL-mode elicitation) and say what they did.")
async def test_url_elicitation(ctx: Context) -> str | Asked:
    message, url = "Sign in to the example service", "https://auth.example.org/start?session=abc"
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:  # the 2026 form: no elicitationId
        result = await ask(ctx, types.ElicitRequest(params=types.ElicitRequestURLParams(message=message, url=url)))
        if isinstance(result, Asked):
            return result
    else:
        result = await ctx.session.elicit_url(message, url, "conformance-url-1", related_request_id=ctx.request_id)
    assert isinstance(result, types.ElicitResult)
    return f"User {result.action}"


@app.tool(description="Answer with one simple text.")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@app.tool(description="Answer with an image.")
def test_image_content() -> Image:
    return Image(data=PNG, format="png")


@app.tool(description="Answer with audio.")
def test_audio_content() -> list[types.ContentBlock]:
    return [types.AudioContent(type="audio", data=base64.b64encode(WAV).decode(), mime_type="audio/wav")]


@app.tool(description="Answer with an embedded resource.")
def test_embedded_resource() -> list[types.ContentBlock]:
    return [types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."))]


@app.tool(description="Answer with text, an image and a resource.")
def test_multiple_content_types() -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text="Multiple content types test:"),
            types.ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
            types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                uri="test://mixed-content-resource", mime_type="application/json",
                text='{"test": "data", "value": 123}'))]


@app.tool(description="Send log messages while working.")
async def test_tool_with_logging(ctx: Context) -> str:
    for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(text)
        await asyncio.sleep(0.05)
    return "Logging test completed"


@app.tool(description="Always fail.")
def test_error_handling() -> str:
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool(description="Report progress while working.")
async def test_tool_with_progress(ctx: Context) -> str:
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100, f"{done}% done")
        await asyncio.sleep(0.05)
    return "Progress test completed"


@app.tool(description="Ask the client's model to answer a prompt (sampling).")
async def test_sampling(prompt: str, ctx: Context) -> str | Asked:
    answer = await ask(ctx, types.CreateMessageRequest(params=types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=100)))
    if isinstance(answer, Asked):
        return answer
    assert isinstance(answer, types.CreateMessageResult)
    content = answer.content
    text = content.text if isinstance(content, types.TextContent) else str(content)
    return f"LLM response: {text}"


class UserDetails(BaseModel):
    username: str = Field(description="Your username")
    email: str = Field(description="Your email address")


@app.tool(description="Ask the user for details (elicitation).")
async def test_elicitation(message: str, ctx: Context) -> str | Asked:
    result = await ask(ctx, form(message, UserDetails.model_json_schema()))
    if isinstance(result, Asked):
        return result
    assert isinstance(result, types.ElicitResult)
    if result.action == "accept":
        return f"User provided: {UserDetails.model_validate(result.content).model_dump()}"
    return f"User {result.action}"


class WithDefaults(BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: str = Field(default="active", json_schema_extra={"enum": ["active", "inactive", "pending"]})
    verified: bool = True


@app.tool(description="Ask with defaults for every field (SEP-1034).")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str | Asked:
    result = await ask(ctx, form("Please review and update the form fields with defaults",
                                 WithDefaults.model_json_schema()))
    if isinstance(result, Asked):
        return result
    assert isinstance(result, types.ElicitResult)
    data = WithDefaults.model_validate(result.content) if result.action == "accept" else None
    return f"Elicitation completed: action={result.action}, content={data}"


@app.tool(description="Ask with every kind of enum (SEP-1330).")
async def test_elicitation_sep1330_enums(ctx: Context) -> str | Asked:
    schema = {"type": "object", "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"},
                                                     {"const": "value2", "title": "Second Option"},
                                                     {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                             {"const": "value2", "title": "Second Choice"},
                                                             {"const": "value3", "title": "Third Choice"}]}},
    }}
    result = await ask(ctx, form("Please select options", schema))
    if isinstance(result, Asked):
        return result
    assert isinstance(result, types.ElicitResult)
    return f"Elicitation completed: action={result.action}, content={result.content}"


# The 2026-07-28 suite's input-required fixtures (SEP-2322): each round is the tool's own answer.
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def sampling_request(text: str, max_tokens: int) -> types.CreateMessageRequest:
    return types.CreateMessageRequest(params=types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))],
        max_tokens=max_tokens))


def _said(answer: object) -> str:
    if isinstance(answer, types.ElicitResult):
        return str(answer.content or {})
    if isinstance(answer, types.CreateMessageResult) and isinstance(answer.content, types.TextContent):
        return answer.content.text
    if isinstance(answer, types.ListRootsResult):
        return ", ".join(str(root.uri) for root in answer.roots)
    return str(answer)


@app.tool(description="SEP-2322: ask for a name, then greet.")
async def test_input_required_result_elicitation(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    if "user_name" not in answers:
        return Asked(input_requests={"user_name": form("What is your name?", NAME_FORM)})
    answer = answers["user_name"]
    name = (answer.content or {}).get("name") if isinstance(answer, types.ElicitResult) else None
    return f"Hello, {name}!"


@app.tool(description="SEP-2322: ask the client's model, then answer with its words.")
async def test_input_required_result_sampling(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    if "capital_question" not in answers:
        return Asked(input_requests={"capital_question": sampling_request("What is the capital of France?", 100)})
    return f"The model said: {_said(answers['capital_question'])}"


@app.tool(description="SEP-2322: ask for the client's roots, then list them.")
async def test_input_required_result_list_roots(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    if "client_roots" not in answers:
        return Asked(input_requests={"client_roots": types.ListRootsRequest()})
    return f"Roots: {_said(answers['client_roots'])}"


@app.tool(description="SEP-2322: one question with state, checked on the retry.")
async def test_input_required_result_request_state(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    if "confirm" not in answers:
        return Asked(input_requests={"confirm": form("Please confirm", OK_FORM)}, request_state="round-1")
    return "state-ok" if ctx.request_state == "round-1" else f"unexpected state {ctx.request_state!r}"


@app.tool(description="SEP-2322: three questions in one round.")
async def test_input_required_result_multiple_inputs(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    wanted = {"user_name": form("What is your name?", NAME_FORM),
              "greeting": sampling_request("Generate a greeting", 50), "client_roots": types.ListRootsRequest()}
    if not set(wanted) <= set(answers):
        return Asked(input_requests=wanted, request_state="multi")
    return "; ".join(f"{key}: {_said(answers[key])}" for key in wanted)


@app.tool(description="SEP-2322: two rounds of questions, then the answer.")
async def test_input_required_result_multi_round(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    if ctx.request_state is None or ("step1" in answers and ctx.request_state == "round-1"):
        if "step1" not in answers:
            return Asked(input_requests={"step1": form("Step 1: What is your name?", NAME_FORM)},
                         request_state="round-1")
        color = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
        return Asked(input_requests={"step2": form("Step 2: What is your favorite color?", color)},
                     request_state="round-2")
    return f"Done: {_said(answers.get('step2'))}"


@app.tool(description="SEP-2322: a round with its own state, which must come back exactly as it was sent.")
async def test_input_required_result_tampered_state(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    if "confirm" not in answers:
        return Asked(input_requests={"confirm": form("Please confirm", OK_FORM)}, request_state="upstream-round-1")
    if ctx.request_state != "upstream-round-1":
        raise ToolError(f"requestState failed its check: {ctx.request_state!r}")
    return "state intact"


@app.tool(description="SEP-2322: ask only what the client declared it can answer (sampling, elicitation).")
async def test_input_required_result_capabilities(ctx: Context) -> str | Asked:
    declared = ctx.client_capabilities or types.ClientCapabilities()
    wanted: dict[str, types.ElicitRequest | types.CreateMessageRequest] = {}
    if declared.sampling is not None:
        wanted["greeting"] = sampling_request("Generate a greeting", 50)
    if declared.elicitation is not None:
        wanted["user_name"] = form("What is your name?", NAME_FORM)
    answers = ctx.input_responses or {}
    if not set(wanted) <= set(answers):
        return Asked(input_requests=wanted)
    return "; ".join(f"{key}: {_said(answers[key])}" for key in wanted) or "nothing to ask"


@app.tool(description="SEP-2575: needs the client's model (sampling) to work at all.")
async def test_missing_capability(ctx: Context) -> str | Asked:
    answer = await ask(ctx, sampling_request("Say hello", 20))
    return answer if isinstance(answer, Asked) else f"The model said: {_said(answer)}"


@app.tool(description="SEP-2243: a parameter mirrored into the Mcp-Param-Region header.")
def test_custom_header(region: str) -> str:
    return f"region {region}"


@app.tool(description="The SSE polling scenario's tool: answers after a pause long enough to resume a stream.")
async def test_reconnection() -> str:
    await asyncio.sleep(0.2)
    return "Reconnection test completed"


_added = {"tools": 0, "prompts": 0}


async def _announce(ctx: Context, kind: str) -> None:
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await (ctx.notify_tools_changed() if kind == "tools" else ctx.notify_prompts_changed())
    elif kind == "tools":
        await ctx.session.send_tool_list_changed()
    else:
        await ctx.session.send_prompt_list_changed()


@app.tool(description="SEP-2575: add a tool to this server's list and announce the change.")
async def test_trigger_tool_change(ctx: Context) -> str:
    _added["tools"] += 1
    name = f"test_added_tool_{_added['tools']}"
    app.add_tool(lambda: "added", name=name, description="A tool added while the server runs.")
    await _announce(ctx, "tools")
    return f"added {name}"


@app.tool(description="SEP-2575: add a prompt to this server's list and announce the change.")
async def test_trigger_prompt_change(ctx: Context) -> str:
    _added["prompts"] += 1
    name = f"test_added_prompt_{_added['prompts']}"
    app.add_prompt(Prompt.from_function(lambda: "added", name=name, description="A prompt added while running."))
    await _announce(ctx, "prompts")
    return f"added {name}"


@app.prompt(description="SEP-2322: a prompt that asks for context before it is rendered.")
async def test_input_required_result_prompt(ctx: Context) -> str | Asked:
    answers = ctx.input_responses or {}
    if "user_context" not in answers:
        schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
        return Asked(input_requests={"user_context": form("What context should the prompt use?", schema)})
    return f"Use this context: {_said(answers['user_context'])}"


@app.resource("test://static-text", mime_type="text/plain", description="A static text resource.")
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource("test://static-binary", mime_type="image/png", description="A static binary resource.")
def static_binary() -> bytes:
    return PNG


@app.resource("test://template/{id}/data", mime_type="application/json", description="A resource template.")
def template_data(id: str) -> str:
    return f'{{"id": "{id}", "templateTest": true, "data": "Data for ID: {id}"}}'


@app.resource("test://watched-resource", mime_type="text/plain", description="A resource that can be watched.")
def watched() -> str:
    return "Watched resource content."


@app.prompt(description="A simple prompt without arguments.")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@app.prompt(description="A prompt with two arguments.")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt(description="A prompt with an embedded resource.")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
    return [UserMessage(content=types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."))),
            UserMessage(content="Please process the embedded resource above.")]


@app.prompt(description="A prompt with an image.")
def test_prompt_with_image() -> list[UserMessage | AssistantMessage]:
    return [UserMessage(content=types.ImageContent(type="image", data=base64.b64encode(PNG).decode(),
                                                   mime_type="image/png")),
            UserMessage(content="Please analyze the image above.")]


@app.completion()
async def complete(ref: types.PromptReference | types.ResourceTemplateReference, argument: types.CompletionArgument,
                   context: types.CompletionContext | None) -> types.Completion:
    return types.Completion(values=[f"{argument.value}-1", f"{argument.value}-2"], total=2, has_more=False)


async def _set_level(ctx: object, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def _subscription(ctx: object, params: types.SubscribeRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


@app.tool(name="json_schema_2020_12_tool", description="A tool whose input schema uses JSON Schema 2020-12.")
def json_schema_2020_12_tool() -> str:
    return "ok"


# The decorator derives schemas from signatures; these tools' point is a hand-written one.
app._tool_manager._tools["json_schema_2020_12_tool"].parameters = {  # SEP-1613 and SEP-2106's vocabulary
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]}, "else": {"required": ["email"]},
    "additionalProperties": False}
app._tool_manager._tools["test_custom_header"].parameters = {
    "type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["region"]}


def main() -> None:
    lowlevel = app._lowlevel_server
    lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)
    lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, _subscription)
    lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, _subscription)
    conformance_tasks().install(lowlevel)  # the tasks-* scenarios' tools, run as tasks
    print("conformance upstream starting", file=sys.stderr, flush=True)
    if options.http:
        import socket

        import uvicorn

        sock = socket.socket()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle stall on keep-alive answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)

        async def serve() -> None:
            server = uvicorn.Server(uvicorn.Config(app.streamable_http_app(), log_level="warning"))
            task = asyncio.create_task(server.serve([sock]))
            while not server.started:
                await asyncio.sleep(0.01)
            with open(options.http + ".tmp", "w") as handle:
                handle.write(str(sock.getsockname()[1]))
            os.replace(options.http + ".tmp", options.http)
            await task

        asyncio.run(serve())
    else:
        app.run()


if __name__ == "__main__":
    main()
