"""The site's store: the version state machine, tokens stored hashed, resume after a kill."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.site.store import Store, token_hash


def test_states_tokens_and_resume(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "site.sqlite")
    token = store.add_entrant("alice")
    alice = store.entrant_by_token(token)
    assert alice is not None and alice.name == "alice" and store.entrant_by_token(token + "x") is None
    assert store.db.execute("SELECT token_sha256 FROM entrants").fetchone()[0] == token_hash(token)
    assert (tmp_path / "site.sqlite").stat().st_mode & 0o077 == 0
    v = store.add_version(alice, "/a.tar.gz")
    assert (v.state, v.bot, v.number) == ("received", "alice-v1", 1)
    with pytest.raises(ValueError, match="received -> active is not a transition"):
        store.move(v.id, "active")
    store.move(v.id, "building")
    w = store.add_version(alice, "/b.tar.gz")
    store.close()
    store = Store.open(tmp_path / "site.sqlite")  # after a kill: the cut-off step goes back to received
    queue = store.resume()
    assert [(q.id, q.state) for q in queue] == [(v.id, "received"), (w.id, "received")]
    assert store.transitions(v.id)[-1].note == "restarted: the site stopped while building"
    sid, csrf = store.new_session(alice, 1)
    assert store.session(sid) == (alice, csrf) and store.session("nope") is None
    store.new_token("alice")
    assert store.entrant_by_token(token) is None and store.session(sid) is None
    store.add_ratings({"alice-v1": (25.0, 8.0, 3)}, at=1.0)
    assert [p.games for p in store.rating_history("alice-v1")] == [3]
    store.close()
