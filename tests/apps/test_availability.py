"""Availability on Linux, darwin and win32 test hosts built from real fixture files, and versions."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from hermes.apps.availability import check_availability
from hermes.apps.declaration import EXTENSION_KEY, ServerDeclaration, parse_declarations
from hermes.apps.host import LocalHost, UninstallEntry
from hermes.apps.versions import at_least, debian_upstream, parse_version
from tests.apps.test_declaration import BLENDER, SEED_EXAMPLE
from tests.hosts import FixtureHost


def _declaration(plugin: dict[str, Any]) -> ServerDeclaration:
    return parse_declarations(plugin, {"blender"})["blender"]


@pytest.mark.parametrize(("found", "minimum", "ok"), [
    ("5.1", "5.1", True), ("5.1.0", "5.1", True), ("11.0.9.509", "11.0.9", True), ("5.0.9", "5.1", False),
    ("2.3.0-beta", "2.3.0", False), ("10", "9", True), ("5.1a", "5.1", False), ("", "1", False),
    ("1234567890", "1", False), ("05.01", "5.1", True), (None, "1", False), ("5..1", "5", False),
])
def test_version_comparison_fails_closed(found: str | None, minimum: str, ok: bool) -> None:
    assert at_least(found, minimum) is ok


def test_version_parsing_and_debian_upstream() -> None:
    assert parse_version("1.2.3") == (1, 2, 3) and parse_version("1.2.x") is None
    assert debian_upstream("1:5.1.0+dfsg-2") == "5.1.0"
    assert debian_upstream("5.1~rc1-1") == "5.1~rc1" and parse_version("5.1~rc1") is None


def test_no_requirements_does_no_io(tmp_path: Path) -> None:
    class Exploding(FixtureHost):
        def is_file(self, path: str) -> bool:
            raise AssertionError("no I/O expected")

    plugin = copy.deepcopy(SEED_EXAMPLE)
    plugin["extensions"][EXTENSION_KEY]["servers"]["blender"]["requires"] = {"app": False}
    result = check_availability(_declaration(plugin), Exploding("linux", tmp_path))
    assert result.state == "no_requirements" and result.ok


def test_unsupported_os(tmp_path: Path) -> None:
    plugin = copy.deepcopy(SEED_EXAMPLE)
    del plugin["extensions"][EXTENSION_KEY]["servers"]["blender"]["app"]["linux"]
    result = check_availability(_declaration(plugin), FixtureHost("linux", tmp_path))
    assert result.state == "unsupported_os"


def test_darwin_bundle_plist_versions(tmp_path: Path) -> None:
    host = FixtureHost("darwin", tmp_path, home_dir="/Users/ana")
    declaration = _declaration(BLENDER)
    missing = check_availability(declaration, host)
    assert missing.state == "missing_app" and missing.path == "/Applications/Blender.app"
    host.make_bundle("/Applications/Blender.app", {"CFBundleShortVersionString": "4.2.1", "CFBundleVersion": "4.2"})
    old = check_availability(declaration, host)
    assert (old.state, old.version, old.path) == ("version_too_old", "4.2.1", "/Applications/Blender.app")
    # A second, newer copy in ~/Applications qualifies; the first that qualifies wins.
    host.make_bundle("/Users/ana/Applications/Blender.app", {"CFBundleVersion": "5.1.0"})
    ok = check_availability(declaration, host)
    assert (ok.state, ok.version, ok.path) == ("available", "5.1.0", "/Users/ana/Applications/Blender.app")
    # A directory without Contents/Info.plist is not a bundle.
    empty = FixtureHost("darwin", tmp_path / "other")
    empty.real("/Applications/Blender.app").mkdir(parents=True)
    assert check_availability(declaration, empty).state == "missing_app"


def test_win32_registry_glob_and_pe_versions(tmp_path: Path) -> None:
    host = FixtureHost("win32", tmp_path, environ={"ProgramFiles": "C:\\Program Files"})
    declaration = _declaration(BLENDER)
    assert check_availability(declaration, host).state == "missing_app"
    old = "C:\\Program Files\\Blender Foundation\\Blender 4.2\\blender.exe"
    new = "C:\\Program Files\\Blender Foundation\\Blender 5.1\\blender.exe"
    host.make_file(old)
    host.make_file(new)
    host.pe_versions = {old: "4.2.0.0", new: "5.1.2.0"}
    ok = check_availability(declaration, host)
    assert (ok.state, ok.version) == ("available", "5.1.2.0")
    assert ok.path is not None and ok.path.endswith("Blender 5.1\\blender.exe")  # highest version first
    host.pe_versions[new] = "5.0.0.0"
    assert check_availability(declaration, host).state == "version_too_old"
    # The registry candidate comes first when it points at an installed copy.
    host.make_file("D:\\Apps\\Blender\\blender.exe")
    host.registry = [UninstallEntry("Blender 5.2", "5.2.0", "D:\\Apps\\Blender")]
    host.pe_versions["D:\\Apps\\Blender\\blender.exe"] = "5.2.0.0"
    ok = check_availability(declaration, host)
    assert (ok.state, ok.path) == ("available", "D:\\Apps\\Blender\\blender.exe")


def test_win32_uninstall_registry_version_source(tmp_path: Path) -> None:
    host = FixtureHost("win32", tmp_path, environ={"ProgramFiles": "C:\\Program Files"})
    host.make_file("C:\\Program Files\\Blender Foundation\\Blender\\blender.exe")
    declaration = _declaration(SEED_EXAMPLE)
    host.registry = [UninstallEntry("Other", "9.9", None), UninstallEntry("Blender", "4.5.1", "C:\\x")]
    assert check_availability(declaration, host).version == "4.5.1"
    assert check_availability(declaration, host).state == "version_too_old"
    host.registry.insert(0, UninstallEntry("Blender 5", "5.1.0", "C:\\y"))
    assert check_availability(declaration, host).state == "available"
    # A %VAR% that is not set never becomes a literal path.
    assert check_availability(declaration, FixtureHost("win32", tmp_path)).state == "missing_app"


def _linux(min_version: str | None, version: dict[str, Any], locations: list[Any]) -> ServerDeclaration:
    requires: dict[str, Any] = {"app": True}
    if min_version:
        requires["min_version"] = min_version
    return _declaration({"extensions": {EXTENSION_KEY: {"servers": {"blender": {
        "app": {"linux": {"presence": "executable", "location": locations, "version": version}},
        "requires": requires}}}}})


def test_linux_command_flatpak_snap_without_version(tmp_path: Path) -> None:
    host = FixtureHost("linux", tmp_path, path_dirs=["/usr/local/bin", "/usr/bin"])
    declaration = _declaration(BLENDER)
    assert check_availability(declaration, host).state == "missing_app"
    host.real("/snap/blender/current").mkdir(parents=True)
    snap = check_availability(declaration, host)
    assert (snap.state, snap.path, snap.version_enforced) == ("available", "/snap/blender/current", False)
    host.make_file("/usr/bin/blender")
    assert check_availability(declaration, host).path == "/usr/bin/blender"


def test_linux_dpkg_version(tmp_path: Path) -> None:
    host = FixtureHost("linux", tmp_path)
    host.make_file("/usr/bin/blender")
    host.make_file("/var/lib/dpkg/status", (
        "Package: blender-data\nStatus: install ok installed\nVersion: 9.9\n\n"
        "Package: blender\nStatus: install ok installed\nPriority: optional\nVersion: 1:4.0.2+dfsg-1\n"
        "Description: 3D suite\n multi-line description\n"), executable=False)
    declaration = _linux("5.1", {"kind": "dpkg", "package": "blender"}, ["/usr/bin/blender"])
    old = check_availability(declaration, host)
    assert (old.state, old.version) == ("version_too_old", "4.0.2")
    host.make_file("/var/lib/dpkg/status", "Package: blender\nStatus: install ok installed\nVersion: 5.1.1-1\n",
                   executable=False)
    assert check_availability(declaration, host).state == "available"
    host.make_file("/var/lib/dpkg/status", "Package: blender\nStatus: deinstall ok config-files\nVersion: 5.1.1-1\n",
                   executable=False)
    assert check_availability(declaration, host).version == "unknown"


def test_linux_snap_and_flatpak_metadata_versions(tmp_path: Path) -> None:
    host = FixtureHost("linux", tmp_path, home_dir="/home/ana")
    host.make_file("/snap/blender/current/meta/snap.yaml", "name: blender\nversion: '5.1.0'\nsummary: x\n",
                   executable=False)
    snap = _linux("5.1", {"kind": "snap"}, [{"kind": "snap", "name": "blender"}])
    assert check_availability(snap, host).version == "5.1.0"
    assert check_availability(snap, host).state == "available"
    app_dir = "/home/ana/.local/share/flatpak/app/org.blender.Blender/current/active"
    host.make_file(f"{app_dir}/files/share/metainfo/org.blender.Blender.metainfo.xml", (
        "<?xml version='1.0'?><component><id>org.blender.Blender</id><releases>"
        "<release version='5.2.1' date='2026-09-01'/><release version='5.1.0'/></releases></component>"),
        executable=False)
    flatpak = _linux("5.2", {"kind": "flatpak"}, [{"kind": "flatpak", "app_id": "org.blender.Blender"}])
    result = check_availability(flatpak, host)
    assert (result.state, result.version, result.path) == ("available", "5.2.1", app_dir)


def test_real_linux_host_facts(tmp_path: Path) -> None:
    host = LocalHost()
    assert host.os_name == "linux"
    import os

    assert host.pid_alive(os.getpid()) and not host.pid_alive(2**31 - 1)
    assert host.which("sh") is not None and host.read_text(str(tmp_path / "nope")) is None
    assert host.uninstall_entries() == [] and host.pe_file_version("/bin/sh") is None
    assert isinstance(host.interactive_session(), bool)


def test_globs_deeper_than_the_bound_are_refused_with_the_rule() -> None:
    from hermes.apps.declaration import DeclarationError

    deep = {"extensions": {EXTENSION_KEY: {"servers": {"app": {
        "app": {"linux": {"presence": "executable", "location": "/" + "/".join(["*"] * 7) + "/app"}},
        "requires": {"app": True}}}}}}
    with pytest.raises(DeclarationError, match=r"has 7 segments with '\*'; at most 2 are allowed"):
        parse_declarations(deep, {"app"})


def test_a_wide_tree_is_walked_within_bounds(tmp_path: Path) -> None:
    """Two `*` levels of 300 folders each would be 90,000 paths; the walk keeps the highest 64 per level."""
    from hermes.apps.locate import MAX_MATCHES, candidate_paths

    for major in range(300):
        (tmp_path / f"v{major}").mkdir()
    for minor in range(300):
        (tmp_path / "v299" / f"r{minor}").mkdir()
    declaration = parse_declarations({"extensions": {EXTENSION_KEY: {"servers": {"app": {
        "app": {"linux": {"presence": "executable", "location": f"{tmp_path}/v*/r*/app"}},
        "requires": {"app": True}}}}}}, {"app"})["app"]
    assert declaration.app is not None
    block = declaration.app.blocks["linux"]
    found = candidate_paths(LocalHost(), block, block.candidates[0])
    assert 0 < len(found) <= MAX_MATCHES
    assert found[0].path == f"{tmp_path}/v299/r299/app"  # highest versions first


def test_presence_executable_needs_the_execute_bit_or_an_exe(tmp_path: Path) -> None:
    declaration = _parse_one({"app": {"linux": {"presence": "executable", "location": "/opt/app/bin/app"},
                                      "win32": {"presence": "executable", "location": "C:\\\\App\\\\app"}},
                              "requires": {"app": True}})
    linux = FixtureHost("linux", tmp_path / "linux")
    linux.make_file("/opt/app/bin/app", executable=False)  # a 0644 file is not a program
    assert check_availability(declaration, linux).state == "missing_app"
    linux.real("/opt/app/bin/app").chmod(0o755)
    assert check_availability(declaration, linux).state == "available"
    windows = FixtureHost("win32", tmp_path / "windows")
    windows.make_file("C:\\App\\app")  # no .exe: not something Windows would run
    assert check_availability(declaration, windows).state == "missing_app"
    assert LocalHost().is_executable(str(tmp_path / "linux" / "opt" / "app" / "bin" / "app"))
    (tmp_path / "plain").write_text("x")
    assert not LocalHost().is_executable(str(tmp_path / "plain"))


def _parse_one(declaration: dict[str, Any]) -> ServerDeclaration:
    return parse_declarations({"extensions": {EXTENSION_KEY: {"servers": {"app": declaration}}}}, {"app"})["app"]
