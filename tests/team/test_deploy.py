"""The Kubernetes manifests and the HAProxy configuration we ship, checked against what reads them:
the Kubernetes API's own schemas (kubernetes-validate, offline, strict), and hermes's CLI and config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes.config.model import HermesConfig

DEPLOY = Path(__file__).parents[2] / "deploy"
KUBERNETES = "1.33.0"  # the oldest release still supported upstream when these were written


def _documents() -> list[tuple[str, dict[str, Any]]]:
    yaml = YAML(typ="safe")
    return [(path.name, doc) for path in sorted((DEPLOY / "kubernetes").glob("*.yaml"))
            for doc in yaml.load_all(path.read_text()) if doc]


def test_every_manifest_is_valid_for_the_kubernetes_api() -> None:
    import kubernetes_validate

    kinds = set()
    for name, doc in _documents():
        try:
            kubernetes_validate.validate(doc, KUBERNETES, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{name}: {exc.message} at {'.'.join(map(str, exc.path))}")
        kinds.add(doc["kind"])
    assert kinds >= {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "ConfigMap",
                     "Secret"}


def test_the_deployment_runs_the_team_gateway_with_its_probes_and_a_grace_period_above_the_drain() -> None:
    docs = {doc["kind"]: doc for _, doc in _documents()}
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    from hermes.cli.mcp_session_commands import serve_command

    assert container["args"][:2] == ["mcp", "serve"]
    options = serve_command.make_context("serve", list(container["args"][2:])).params  # the CLI accepts them
    assert options["http"] and options["team"] and options["host"] == "0.0.0.0"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    config = YAML(typ="safe").load(docs["ConfigMap"]["data"]["config.yaml"])
    settings = HermesConfig.read(config)  # the shipped config.yaml is one hermes accepts
    assert pod["terminationGracePeriodSeconds"] > settings.team_settings().drain_seconds
    secret_names = set(docs["Secret"]["stringData"])
    assert {"HERMES_TEAM_DATABASE", "HERMES_TEAM_KEY"} <= secret_names
    selector = docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert docs["Service"]["spec"]["selector"] == selector == docs["PodDisruptionBudget"]["spec"]["selector"][
        "matchLabels"]


def test_haproxy_checks_readiness_and_routes_a_user_to_one_replica() -> None:
    text = (DEPLOY / "haproxy" / "haproxy.cfg").read_text()
    assert "option httpchk GET /readyz" in text and "balance hdr(Authorization)" in text
    assert "deny deny_status 404 if { path /metrics /healthz /readyz }" in text  # not for the world
