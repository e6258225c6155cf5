"""laya_cases.interop.hub.reachable: offline mode counts only where `datasets` applies it."""
from __future__ import annotations

import socket

import pytest

from laya_cases.interop import hub


@pytest.fixture
def no_network(monkeypatch):
    def fail(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(hub.socket, "getaddrinfo", fail)
    for name in hub._OFFLINE:                                # noqa: SLF001
        monkeypatch.delenv(name, raising=False)


def test_no_network_and_no_offline_mode_is_unreachable(no_network):
    assert hub.reachable() is False


@pytest.mark.parametrize("variable", ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"])
def test_offline_mode_set_before_datasets_read_it_counts_as_reachable(no_network, monkeypatch, variable):
    import datasets.config

    monkeypatch.setenv(variable, "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    assert hub.reachable() is True


def test_offline_mode_set_after_datasets_was_imported_is_not_trusted(no_network, monkeypatch):
    """The runners set HF_HUB_OFFLINE in a process that may have imported `datasets` already: its calls
    still go to the network then (they retried for 23 s in the suite), so the answer is the network's."""
    import datasets.config

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    assert hub.reachable() is False
