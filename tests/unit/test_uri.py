"""DeviceURI grammar: canonical round trip, case folding, and an exact error for each bad input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyaccel import DeviceURI, InvalidDeviceURIError, parse_uri

schemes = st.from_regex(r"\A[a-z][a-z0-9_+.-]{0,11}\Z")
paths = st.from_regex(r"\A[a-z0-9][a-z0-9_.+-]{0,15}\Z")
uris = st.one_of(
    st.builds(DeviceURI, schemes),
    st.builds(DeviceURI, schemes, st.integers(min_value=0, max_value=2**40)),
    st.builds(lambda s, p: DeviceURI(s, None, p), schemes, paths),
)


@given(uris)
def test_canonical_round_trip(u: DeviceURI) -> None:
    text = str(u)
    assert DeviceURI.parse(text) == u
    assert str(DeviceURI.parse(text)) == text
    assert parse_uri(u) is u  # a parsed URI passes through


@given(uris, st.sampled_from(["upper", "title", "pad"]))
def test_uris_are_case_insensitive_and_trimmed(u: DeviceURI, how: str) -> None:
    # Documented behaviour: scheme and path fold to lower case; surrounding whitespace is ignored.
    text = str(u)
    variant = {"upper": text.upper(), "title": text.title(), "pad": f"  {text}\t"}[how]
    assert DeviceURI.parse(variant) == u
    assert str(DeviceURI.parse(variant)) == text


@pytest.mark.parametrize("text, expected", [
    ("vulkan", DeviceURI("vulkan")),
    ("vulkan:0", DeviceURI("vulkan", 0)),
    ("VULKAN:0", DeviceURI("vulkan", 0)),
    ("Gl:12", DeviceURI("gl", 12)),
    ("webgpu://low-power", DeviceURI("webgpu", None, "low-power")),
    ("WebGPU://High-Performance", DeviceURI("webgpu", None, "high-performance")),
    ("vulkan:007", DeviceURI("vulkan", 7)),
])
def test_known_forms(text: str, expected: DeviceURI) -> None:
    assert parse_uri(text) == expected


@pytest.mark.parametrize("bad, fragment", [
    ("", "empty device URI ''"),
    ("  ", "empty device URI '  '"),
    ("vulkan:-1", "'vulkan:-1'"),
    ("vulkan:abc", "'vulkan:abc'"),
    ("vulkan:0:1", "'vulkan:0:1'"),
    ("vulkan:", "'vulkan:'"),
    ("0vulkan", "'0vulkan'"),
    ("vu lkan:0", "'vu lkan:0'"),
    ("webgpu://", "'webgpu://'"),
    ("webgpu://a/b", "'webgpu://a/b'"),
    ("vulkan:1.5", "'vulkan:1.5'"),
])
def test_malformed_strings(bad: str, fragment: str) -> None:
    with pytest.raises(InvalidDeviceURIError) as ei:
        parse_uri(bad)
    msg = str(ei.value)
    assert fragment in msg
    assert "scheme:N" in msg  # the grammar is part of the message (the fix)
    assert isinstance(ei.value, ValueError)


@pytest.mark.parametrize("bad, fragment", [
    (None, "NoneType None"),
    (3, "int 3"),
    (b"cpu", "bytes b'cpu'"),
    (["cpu"], "list ['cpu']"),
])
def test_non_strings(bad: object, fragment: str) -> None:
    with pytest.raises(InvalidDeviceURIError, match="must be a str") as ei:
        parse_uri(bad)
    assert fragment in str(ei.value)


def test_ordinal_error_names_the_ordinal() -> None:
    with pytest.raises(InvalidDeviceURIError) as ei:
        parse_uri("vulkan:abc")
    assert "ordinal 'abc' is not an integer >= 0" in str(ei.value)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(scheme="Vulkan"), "scheme 'Vulkan'"),
    (dict(scheme="vulkan", ordinal=-1), "ordinal -1"),
    (dict(scheme="vulkan", ordinal=0, path="x"), "not both"),
    (dict(scheme="vulkan", path="A B"), "path 'A B'"),
])
def test_constructor_validates(kwargs: dict, fragment: str) -> None:
    with pytest.raises(InvalidDeviceURIError) as ei:
        DeviceURI(**kwargs)
    assert fragment in str(ei.value)


def test_uris_order_and_hash() -> None:
    a, b = parse_uri("vulkan:0"), parse_uri("VULKAN:0")
    assert a == b and hash(a) == hash(b)
    assert len({a, b, parse_uri("vulkan:1")}) == 2
