"""Names vulture (run by .ci/run) takes for dead code that are used where it cannot see.

Vulture matches by name: each line below marks one name as used, with where it is used from.
Add a name here only with its reason; code that nothing uses is deleted instead.
"""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# msgspec Struct fields, encoded and decoded by name (the wire, logs, JSON outputs, configs)
_.nobles  # protocol/messages.py ChickensRulesWire: the start message's rules
_.max_games  # referee/league/duel.py DuelSummary: referee duel's JSON summary
_.ordinal  # referee/site/board.py BoardRow, pipeline.py Gauntlet: the site's JSON and templates
_.win_share  # (the same Structs)
_.uid_base  # referee/runtime/limits.py ResourceLimits: a config's [limits], read by getattr in sandbox/uids.py
_.uid_count  # (the same)

# the Python bot SDK's public API (docs/WRITING-A-BOT.md), for bots people write
_.laid_families  # protocol/sdk.py GameView

# called by name from outside Python's view
_._child  # referee/bench/cluster.py, league.py: run as `python -c "...import _child; _child(...)"`
_._cmp_out  # referee/runtime/replay/sim.py: getattr(self, f"_cmp_{key}") per log record
_._cmp_act
_._cmp_fault
_._cmp_retry
_._cmp_hand
_._cmp_hand_end
_._remove_pending  # referee/runtime/cgroups.py: @atexit.register
_._remove_leftover_workdirs  # referee/runtime/sandbox/plan.py: @atexit.register

# hooks and settings other libraries read from our objects
_.caption  # referee/bench/transport.py: rich's Table.caption
_._negative_number_matcher  # referee/commands/duel.py: argparse's matcher for negative values
_.on_broken_pipe  # referee/commands/play.py: rich's Console hook
_.accesslog  # referee/site/app.py: Hypercorn's Config
_.errorlog
_.graceful_timeout
_.include_server_header
_.do_GET  # referee/view/serve.py, tests: http.server's request handler
_.daemon_threads  # referee/view/serve.py: socketserver's ThreadingMixIn
_.redirect_request  # tests/bots/http_snoop_bot.py, tests/view/test_serve.py: urllib's redirect handler
_.get_connection_args  # tests/bots/dask_attacker_bot.py: distributed's Security
_.compress_type  # tests/site/test_archive.py: zipfile's ZipInfo
_.linkname  # tests/site/test_archive.py: tarfile's TarInfo
_.pytestmark  # tests: pytest's module marks
_.pytest_configure  # tests/conftest.py: pytest's hook (the bytecode compiled once)

# parameters a protocol fixes: __deepcopy__'s memo, __aexit__'s exc_type, a fixture asked for its effect
_.memo  # referee/rules/ask.py
_.exc_type  # referee/runtime/process.py
_.autojump_clock  # tests/view/test_live.py: the fixture makes trio's clock jump
_.lock_fd  # referee/runtime/sandbox/uids.py release_uid: callers pass allocate_uid's pair back
