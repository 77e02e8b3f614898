"""`hermes model`: choose the model `hermes chat` talks to, checked before it is written.

In a terminal it asks which server (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, OpenAI or any
URL), lists the models that server serves, and tries the chosen one with a request that offers a
tool. Without a terminal, `--base-url` (and `--name` when the server serves several models) say
the same. Only `model.base_url`, `model.name` and `model.api_key` change; an API key goes to
`.env`, and config.yaml refers to it.
"""

from __future__ import annotations

import sys

import click

from hermes import interrupts
from hermes.cli.asking import answer_to
from hermes.cli.output import say
from hermes.errors import HermesError, UsageError
from hermes.home import Home
from hermes.validation import http_url_problem, invalid_text_at


@click.command("model")
@click.option("--base-url", help="The OpenAI-compatible endpoint, ending where the API starts (…/v1).")
@click.option("--name", "name", help="The model (default: the only one the endpoint serves).")
@click.option("--api-key-env", "key_variable", help="The .env / environment variable holding its API key.")
@click.option("--no-try", is_flag=True, help="Do not send the one test request.")
def model_command(base_url: str | None, name: str | None, key_variable: str | None, no_try: bool) -> None:
    """Set up the model for `hermes chat`: pick the server and model, check that they answer."""
    home = Home.from_env()
    for option, given in (("--name", name), ("--base-url", base_url), ("--api-key-env", key_variable)):
        if given is not None and (invalid_text_at(given) is not None or not given.isprintable()):
            raise UsageError(f"{option} is not valid text (a control character or a lone surrogate).")
    interactive = base_url is None
    if interactive and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("Without a terminal, give the endpoint: `hermes model --base-url URL [--name MODEL]`.")
    api_key: str | None = None
    given_name, ask = name, interactive
    while True:
        if ask:
            base_url, key_variable, api_key = _ask_endpoint(home)
        assert base_url is not None
        problem = http_url_problem(base_url)
        if problem:
            raise UsageError(f"--base-url {problem}.")
        if key_variable and api_key is None:
            api_key = _known_value(home, key_variable)
        try:
            base_url, listed = _listing(base_url, api_key)
            name = _choose_model(base_url, listed, given_name, interactive)
            if not no_try:
                from hermes.agent.setup import try_model

                say(f"Trying {name} at {base_url} with one small request…")
                tried = interrupts.run(try_model, base_url, name, api_key)
                say(tried.sentence(name))
            break
        except HermesError as exc:
            if not interactive or isinstance(exc, (UsageError, interrupts.Interrupted)):
                raise
            say(f"Error: {exc}")
            ask = _next_step()  # True: choose another server; False: the same one again
    _write(home, base_url, name, key_variable, api_key if interactive else None)
    say(f"Saved in {home.config}: model {name} at {base_url}. Start with `hermes chat`.")


def _ask_endpoint(home: Home) -> tuple[str, str | None, str | None]:
    import questionary

    from hermes.agent.setup import ENDPOINTS

    other = "another"  # questionary gives back a choice's title when its value is None
    choices = [questionary.Choice(e.choice, value=e) for e in ENDPOINTS] + [
        questionary.Choice("Another OpenAI-compatible URL", value=other)]
    picked = answer_to(questionary.select("Which server runs the model?", choices=choices))
    if picked is None:
        raise KeyboardInterrupt
    if picked == other:
        url = answer_to(questionary.text("Base URL (ending in /v1):"))
        if not url:
            raise KeyboardInterrupt
        return str(url).strip(), None, None
    if picked.key_variable is None:
        return picked.base_url, None, None
    known = _known_value(home, picked.key_variable)
    if known:
        return picked.base_url, picked.key_variable, known
    key = answer_to(questionary.password(f"API key ({picked.key_variable}, kept in {home.dotenv}):"))
    if not key:
        raise KeyboardInterrupt
    return picked.base_url, picked.key_variable, str(key).strip()


def _next_step() -> bool:
    """After a failure in the interactive setup: try the same server again, or go back and choose."""
    import questionary

    again, back = "Try again (the server may be starting)", "Go back and choose another server or URL"
    picked = answer_to(questionary.select("What now?", choices=[again, back, "Quit"]))
    if picked is None or picked == "Quit":
        raise KeyboardInterrupt
    return bool(picked == back)


def _listing(base_url: str, api_key: str | None) -> tuple[str, list[str] | HermesError]:
    """The URL the API starts at and the models it lists (or why it lists none, for the URL as
    given). A server's address without `/v1` (the usual slip) is tried with it when the address
    itself lists no models."""
    from hermes.agent.setup import served_models

    try:
        return base_url, interrupts.run(served_models, base_url, api_key)
    except interrupts.Interrupted:
        raise  # the user's stop, not the server's answer: nothing is saved
    except HermesError as exc:
        failure = exc
    if base_url.rstrip("/").endswith("/v1"):
        return base_url, failure
    with_v1 = base_url.rstrip("/") + "/v1"
    try:
        names = interrupts.run(served_models, with_v1, api_key)
    except interrupts.Interrupted:
        raise
    except HermesError:
        return base_url, failure
    say(f"note: {base_url} lists no models but {with_v1} does: the API starts there, so that is used.")
    return with_v1, names


def _known_value(home: Home, variable: str) -> str | None:
    import os

    from hermes.config.dotenv import read_dotenv

    return read_dotenv(home.dotenv).get(variable) or os.environ.get(variable) or None


def _choose_model(base_url: str, listed: list[str] | HermesError, name: str | None, interactive: bool) -> str:
    if isinstance(listed, HermesError):
        if name:  # some servers list nothing; a name given is tried as it is
            say(f"note: {listed}")
            return name
        raise listed
    names = listed
    if name:
        if names and name not in names:
            say(f"note: {base_url} does not list '{name}' among its {len(names)} models; trying it anyway.")
        return name
    if not names:
        raise UsageError(f"{base_url} lists no models; give one with --name.")
    if len(names) == 1:
        return names[0]
    if not interactive:
        shown = ", ".join(names[:20]) + (f", … ({len(names)} in all)" if len(names) > 20 else "")
        raise UsageError(f"{base_url} serves several models ({shown}); choose one with --name.")
    import questionary

    picked = answer_to(questionary.select("Which model?", choices=names))
    if picked is None:
        raise KeyboardInterrupt
    return str(picked)


def _write(home: Home, base_url: str, name: str, key_variable: str | None, new_key: str | None) -> None:
    from hermes.config.dotenv import set_dotenv
    from hermes.config.edit import set_model_endpoint
    from hermes.config.store import ConfigStore
    from hermes.config.transaction import edit_transaction

    home.ensure()
    with edit_transaction(home):
        if new_key and key_variable and _known_value(home, key_variable) != new_key:
            set_dotenv(home.dotenv, {key_variable: new_key})
        with ConfigStore(home).edit() as doc:
            set_model_endpoint(doc, base_url, name, f"${{{key_variable}}}" if key_variable else None)
