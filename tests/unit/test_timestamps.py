"""Timestamps as MindSpore prints them, including Python's millisecond quirk."""

from __future__ import annotations

import pytest

from msrunwatch.read.timestamps import iso, parse_glog, parse_iso


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-21-05:14:07.539.394", "2026-11-21T05:14:07.539394"),  # C++: ms.us
        ("2026-11-21-05:27:15.979.000", "2026-11-21T05:27:15.979000"),  # Python 3.11
        ("2026-11-21-05:14:08.310.00", "2026-11-21T05:14:08.031000"),  # 31 ms, printed .310.00
        ("2026-11-21-05:14:08.500.0", "2026-11-21T05:14:08.005000"),  # 5 ms, printed .500.0
        ("2026-11-21-05:14:08.0.", "2026-11-21T05:14:08.000000"),  # 0 ms
        ("2024-12-26-14:22:26.839.923", "2024-12-26T14:22:26.839923"),  # older Python
    ],
)
def test_glog_timestamps_decode_to_the_real_time(text: str, expected: str) -> None:
    assert iso(parse_glog(text)) == expected


@pytest.mark.parametrize("text", ["2026-13-45-99:99:99.123.456", "garbage", "", "2026-11-21"])
def test_invalid_glog_timestamps_give_none(text: str) -> None:
    assert parse_glog(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-04-07 15:34:29,173 - [mindformers/...]", "2025-04-07T15:34:29.173000"),
        (" [2025-08-01 07:19:37] iteration        1/    5000 |", "2025-08-01T07:19:37.000000"),
    ],
)
def test_mindformers_and_megatron_timestamps(text: str, expected: str) -> None:
    assert iso(parse_iso(text)) == expected


def test_glog_times_order_like_the_clock() -> None:
    earlier = parse_glog("2026-11-21-05:34:25.600.374")
    later = parse_glog("2026-11-21-05:34:26.093.695")
    assert earlier is not None and later is not None
    assert later - earlier == pytest.approx(0.493321)
