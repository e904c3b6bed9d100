"""A spin request made a :class:`rule.Job`: check the bet, draw the round (live CSPRNG, or a
test mode's draws). The wallet (``wallets``) then takes the bet and hands the job to the
settler of this process (``settler``), which settles it with the spins waiting beside it in
one transaction by the pure rule (``rule``): debit the bet, feed the pool, pay every win, book
the €€€ share and any refill, store the round in the hash chain. There is one such path for
every spin. An idempotency key makes a retry return the same round and move no money.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from starfever.engine.model import MathModel
from starfever.engine.rng import RandomSource, ReplayError, ReplaySource, SystemRandomSource
from starfever.engine.round import RoundResult, play_round
from starfever.engine.symbols import InvalidBet, check_line_bet
from starfever.server.db import Database
from starfever.server.models import Round
from starfever.server.services import protection
from starfever.server.services.auth import Principal
from starfever.server.services.chain import canonical_json
from starfever.server.services.errors import (
    Conflict,
    Unprocessable,
    utcnow,
)
from starfever.server.services.free_round_rules import GrantState
from starfever.server.settings import Settings
from starfever.server.spin.calls import check_same_request
from starfever.server.spin.rule import Job, SpinOutcome, free_round_block

if TYPE_CHECKING:
    from starfever.server.spin.wallets import LedgerWallet


def request_hash(line_bet: int, test_draws: Sequence[int] | None,
                 grant_id: int | None = None) -> str:
    """Fingerprint of a spin request: a retry with the same key must send the same body (a
    free round's names its grant; a paid spin's is as it always was)."""
    if not test_draws and grant_id is None:
        return _live_request_hash(line_bet)
    body: dict[str, object] = {"line_bet": line_bet,
                               "test_draws": list(test_draws) if test_draws else None}
    if grant_id is not None:
        body["grant_id"] = grant_id
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


@lru_cache(maxsize=64)
def _live_request_hash(line_bet: int) -> str:
    """A live spin's fingerprint, the same for every spin at that bet (worked out once)."""
    body = {"line_bet": line_bet, "test_draws": None}
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def play_live_or_test(model: MathModel, line_bet: int, pool_before: int,
                      test_draws: Sequence[int] | None, *,
                      live_source: Callable[[], RandomSource] = SystemRandomSource,
                      ) -> RoundResult:
    """The round of a request: from ``test_draws`` (test mode only, checked by the caller), or
    from a fresh ``live_source``, which must be marked ``live`` (fail closed: a seeded source or
    the simulator's generator wired in here by mistake refuses to play instead of playing)."""
    if test_draws is None:
        source = live_source()
        if getattr(source, "live", False) is not True:
            raise RuntimeError(f"refusing {type(source).__name__}, a source not marked live, "
                               "for a live round")
        return play_round(model, line_bet, source, pool=pool_before)
    replay = ReplaySource(test_draws)
    try:
        result = play_round(model, line_bet, replay, pool=pool_before)
        replay.check_used_up()
    except ReplayError as error:
        raise Unprocessable(f"test_draws do not make a round: {error}",
                            code="invalid_test_draws") from None
    return result


def queued_spin(settings: Settings, model: MathModel, principal: Principal, line_bet: int,
                idempotency_key: str, test_draws: Sequence[int] | None, *,
                draw: bool = True, grant: GrantState | None = None) -> Job:
    """A spin request checked, ready for the wallet (``WalletPort.spin``). With ``draw=False``
    a live round is not drawn yet (the wallet draws it, :func:`draw_live`: the seamless wallet
    once the operator took the bet); a test mode's ``test_draws`` are checked at once either
    way, so a bad one is refused before any money moves. ``grant``: a free round's grant, as
    checked before the spin (the settlement checks it again under its lock)."""
    try:
        bet = check_line_bet(line_bet)
    except InvalidBet as error:
        raise Unprocessable(str(error), code="invalid_bet") from None
    if test_draws is not None and not settings.test_mode:
        raise Unprocessable("test_draws are accepted only in test mode",
                            code="test_draws_not_allowed")
    drawn = play_live_or_test(model, bet, model.seed_cents, test_draws) \
        if draw or test_draws is not None else None
    grant_id = None if grant is None else grant.id
    return Job(settings=settings, model=model, principal=principal, bet=bet,
               key=idempotency_key, fingerprint=request_hash(bet, test_draws, grant_id),
               drawn=drawn, test=test_draws is not None, grant_id=grant_id,
               free_round=None if grant is None else free_round_block(
                   replace(grant, rounds_played=grant.rounds_played + 1)))


def draw_live(job: Job,
              live_source: Callable[[], RandomSource] = SystemRandomSource) -> None:
    """Draw the live round of a job queued with ``draw=False`` (against the model's seed
    pool; the settler re-bases it onto the pool as it stands)."""
    if job.drawn is None:
        job.drawn = play_live_or_test(job.model, job.bet, job.model.seed_cents, None,
                                      live_source=live_source)


def after_key_race(db: Database, settings: Settings, wallet: LedgerWallet, principal: Principal,
                   key: str, fingerprint: str) -> SpinOutcome:
    """The answer when a spin lost a race on its idempotency key to a concurrent request
    (possible only if the wallet lock was bypassed): that request's round."""
    with db.write() as session:
        outcome = _existing(session, settings, wallet, principal, key, fingerprint)
    if outcome is None:
        raise Conflict("a concurrent request with this Idempotency-Key was not settled",
                       code="idempotency_key_race")
    return outcome


def _existing(session: Session, settings: Settings, wallet: LedgerWallet, principal: Principal,
              key: str, fingerprint: str) -> SpinOutcome | None:
    stored = session.scalar(select(Round).where(Round.account_id == principal.account_id,
                                                Round.idempotency_key == key))
    if stored is None:
        return None
    check_same_request(stored.request_hash, fingerprint)
    return SpinOutcome(round=stored,
                       balance=wallet.stored_balance(session, principal.account_id),
                       replayed=True, reality_check=protection.reality_check(
                           session, settings, principal.account_id, utcnow()))


