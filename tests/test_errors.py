"""How an exception group from trio reaches the user: one exception, chosen in one place."""

from __future__ import annotations

import pytest

from referee.errors import UserError, leaves, user_facing
from referee.rules import RulesError


def test_leaves_flattens_nested_groups_in_order() -> None:
    a, b, c = ValueError("a"), KeyError("b"), OSError("c")
    group = BaseExceptionGroup("outer", [a, BaseExceptionGroup("inner", [b, ExceptionGroup("deep", [c])])])
    assert leaves(group) == [a, b, c]
    assert leaves(a) == [a]


def test_ctrl_c_anywhere_wins_then_the_first_user_error() -> None:
    first, second = UserError("first"), UserError("second")
    ctrl_c = KeyboardInterrupt()
    group = BaseExceptionGroup("g", [ValueError("bug"), first, BaseExceptionGroup("h", [second, ctrl_c])])
    assert user_facing(group) is ctrl_c
    assert user_facing(ExceptionGroup("g", [ValueError("bug"), OSError("o"), first, second])) is first


@pytest.mark.parametrize("inner", [RulesError("bad deal"), BrokenPipeError(), OSError(2, "gone", "f")])
def test_other_known_kinds_are_picked_out(inner: Exception) -> None:
    assert user_facing(ExceptionGroup("g", [ValueError("bug"), inner])) is inner


def test_a_group_of_bugs_stays_a_group_and_a_plain_exception_stays_itself() -> None:
    group = ExceptionGroup("g", [ValueError("bug"), KeyError("k")])
    assert user_facing(group) is group
    plain = ValueError("x")
    assert user_facing(plain) is plain
