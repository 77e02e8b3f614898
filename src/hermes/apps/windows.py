"""Windows facts behind the `Host` seam: Uninstall registry entries, PE file versions, sessions.

These call the registry and Win32 APIs, which do not exist elsewhere; tests cover the logic that
uses them through fixture hosts, and this module stays a thin, direct translation of the APIs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class UninstallEntry:
    """One entry of Windows' Uninstall keys, in lookup order: HKLM, HKLM WOW6432Node, HKCU."""

    display_name: str
    display_version: str | None
    install_location: str | None


_UNINSTALL = r"Software\Microsoft\Windows\CurrentVersion\Uninstall"
_UNINSTALL_WOW = r"Software\WOW6432Node\Microsoft\Windows\CurrentVersion\Uninstall"

if sys.platform == "win32":
    import ctypes
    import winreg
    from ctypes import wintypes

    def _value(key: winreg.HKEYType, name: str) -> str | None:
        try:
            value, _ = winreg.QueryValueEx(key, name)
        except OSError:
            return None
        return str(value) if value is not None else None

    def read_uninstall_entries() -> list[UninstallEntry]:
        entries: list[UninstallEntry] = []
        for hive, path in ((winreg.HKEY_LOCAL_MACHINE, _UNINSTALL), (winreg.HKEY_LOCAL_MACHINE, _UNINSTALL_WOW),
                           (winreg.HKEY_CURRENT_USER, _UNINSTALL)):
            try:
                root = winreg.OpenKey(hive, path)
            except OSError:
                continue
            with root:
                index = 0
                while True:
                    try:
                        name = winreg.EnumKey(root, index)
                    except OSError:
                        break
                    index += 1
                    try:
                        with winreg.OpenKey(root, name) as key:
                            display = _value(key, "DisplayName")
                            if display:
                                entries.append(UninstallEntry(display, _value(key, "DisplayVersion"),
                                                              _value(key, "InstallLocation")))
                    except OSError:
                        continue
        return entries

    class _FixedFileInfo(ctypes.Structure):
        _fields_ = [("dwSignature", wintypes.DWORD), ("dwStrucVersion", wintypes.DWORD),
                    ("dwFileVersionMS", wintypes.DWORD), ("dwFileVersionLS", wintypes.DWORD),
                    ("dwProductVersionMS", wintypes.DWORD), ("dwProductVersionLS", wintypes.DWORD),
                    ("dwFileFlagsMask", wintypes.DWORD), ("dwFileFlags", wintypes.DWORD),
                    ("dwFileOS", wintypes.DWORD), ("dwFileType", wintypes.DWORD),
                    ("dwFileSubtype", wintypes.DWORD), ("dwFileDateMS", wintypes.DWORD),
                    ("dwFileDateLS", wintypes.DWORD)]

    def read_pe_file_version(path: str) -> str | None:
        version = ctypes.WinDLL("version")
        size = version.GetFileVersionInfoSizeW(path, None)
        if not size:
            return None
        buffer = ctypes.create_string_buffer(size)
        if not version.GetFileVersionInfoW(path, 0, size, buffer):
            return None
        pointer = ctypes.c_void_p()
        length = wintypes.UINT()
        if not version.VerQueryValueW(buffer, "\\", ctypes.byref(pointer), ctypes.byref(length)):
            return None
        info = ctypes.cast(pointer, ctypes.POINTER(_FixedFileInfo)).contents
        ms, ls = info.dwFileVersionMS, info.dwFileVersionLS
        return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"

    def has_interactive_session() -> bool:
        kernel32 = ctypes.WinDLL("kernel32")
        user32 = ctypes.WinDLL("user32")
        session = wintypes.DWORD()
        if not kernel32.ProcessIdToSessionId(kernel32.GetCurrentProcessId(), ctypes.byref(session)):
            return False
        if session.value == 0:
            return False
        if session.value == kernel32.WTSGetActiveConsoleSessionId():
            return True
        return bool(user32.GetProcessWindowStation())

else:

    def read_uninstall_entries() -> list[UninstallEntry]:
        return []

    def read_pe_file_version(path: str) -> str | None:
        return None

    def has_interactive_session() -> bool:
        return False
