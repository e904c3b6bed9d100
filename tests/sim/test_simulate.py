"""``simulate``: reproducible whatever the workers, right on the default model, and in agreement
with the pure-Python engine."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest

from starfever.engine.model import UPGRADE_LINE_BET, UPGRADE_TOTAL_BET, MathModel, load_model
from starfever.engine.rng import SeededSource
from starfever.engine.round import play_round
from starfever.math.exact import ExactReport, compute
from starfever.math.stats import Z99
from starfever.sim import CHUNK_SPINS, SimulationResult, simulate
from starfever.sim.kernel import ROUND_FIELDS, play_rounds
from starfever.sim.result import Moments
from starfever.sim.rng import chunk_state
from starfever.sim.tables import kernel_tables
from tests.sim.models import hand_made, with_upgrade_unit


@pytest.fixture(scope="module")
def exact() -> ExactReport:
    return compute(load_model("default"), rational_hold=False)


@pytest.fixture(scope="module")
def default_run() -> SimulationResult:
    return simulate(load_model("default"), 4_000_000, 20240601, workers=1)


def test_same_seed_same_result_on_one_or_two_workers() -> None:
    spins = 2 * CHUNK_SPINS + 12_345  # two whole chunks and a short one
    one = simulate(load_model("default"), spins, 11, workers=1)
    two = simulate(load_model("default"), spins, 11, workers=2)
    assert one == two  # every field but the wall-clock time and the workers
    assert (one.workers, two.workers) == (1, 2)
    assert one.chunk_spin_counts == (CHUNK_SPINS, CHUNK_SPINS, 12_345)
    other = simulate(load_model("default"), spins, 12, workers=1)
    assert other.moments != one.moments


def test_default_model_total_rtp_interval_holds_the_exact_value(
        default_run: SimulationResult, exact: ExactReport) -> None:
    assert default_run.rtp.contains(float(exact.total))
    assert abs(float(exact.total) - 0.955) < 0.0002  # RULES.md: 95.50 % +/- 0.02 pp
    for name in ("lines", "star_wild", "hold_and_cash"):
        assert default_run.component(name).contains(float(getattr(exact, name))), name
    assert default_run.frequency("hit").contains(float(exact.hit_frequency))
    assert default_run.frequency("star_wild").contains(float(exact.star_wild_frequency))
    assert default_run.frequency("hold_and_cash").contains(float(exact.hold_and_cash_frequency))
    assert default_run.frequency("jackpot").contains(float(exact.jackpot_frequency))


def test_result_bookkeeping(default_run: SimulationResult) -> None:
    r = default_run
    game = sum(r.moments[name].total for name in ("lines", "star_wild", "hold_and_cash"))
    assert game == r.moments["game"].total
    assert sum(r.win_histogram) == r.spins
    assert r.win_histogram[0] == r.spins - r.counts["winning_rounds"]
    assert sum(r.hold_and_cash_histogram) == r.counts["holds"]
    assert r.counts["jackpot_lines"] >= r.counts["jackpot_spins"]
    trace = r.rtp_trace()
    assert len(trace) == math.ceil(r.spins / CHUNK_SPINS)
    assert trace[-1][0] == r.spins
    assert trace[-1][1] == pytest.approx(r.rtp.value, rel=1e-12)
    assert r.spins_per_second > 0


def test_interval_arithmetic_is_exact_on_a_tiny_sample() -> None:
    # wins of 0, 20 and 40 line bets = 0, 1 and 2 total bets: mean 1, sample variance 1
    estimate = Moments(total=60, squares=400 + 1600).estimate(3)
    assert estimate.value == 1
    se = math.sqrt(1 / 3)
    assert estimate.std_error == pytest.approx(se)
    assert estimate.ci99 == pytest.approx((1 - Z99 * se, 1 + Z99 * se))


@pytest.mark.parametrize(("spins", "seed", "workers"), [
    (0, 1, 1), (-3, 1, 1), (2.5, 1, 1), (10, -1, 1), (10, 1, 0), (10, 1.0, 1), (True, 1, 1)])
def test_bad_arguments_raise_value_error(spins: object, seed: object, workers: object) -> None:
    with pytest.raises(ValueError):
        simulate(load_model("default"), spins, seed, workers=workers)  # type: ignore[arg-type]


@pytest.mark.slow
def test_engine_and_kernel_agree_within_their_intervals(default_run: SimulationResult) -> None:
    """200k rounds of the pure-Python engine (Mersenne Twister) against the kernel's run."""
    model = load_model("default")
    source = SeededSource(31415)
    sums = {"lines": [0, 0], "star_wild": [0, 0], "hold_and_cash": [0, 0]}
    rounds = 200_000
    for _ in range(rounds):
        r = play_round(model, 1, source)  # line bet 1 cent: cents = line bets
        for name, win in (("lines", r.base_win), ("star_wild", r.star_wild_win),
                          ("hold_and_cash", r.hold_and_cash_win)):
            sums[name][0] += win
            sums[name][1] += win * win
    for name, (total, squares) in sums.items():
        engine = Moments(total, squares).estimate(rounds)
        kernel = default_run.component(name)
        gap = abs(engine.value - kernel.value)
        assert gap <= Z99 * math.hypot(engine.std_error, kernel.std_error), name
    assert Fraction(default_run.counts["hits"], default_run.spins) > Fraction(3, 10)


def test_a_dask_cluster_gives_the_identical_result() -> None:
    distributed = pytest.importorskip("distributed")
    spins = 3 * CHUNK_SPINS + 777
    local = simulate(load_model("default"), spins, 21, workers=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        on_cluster = simulate(load_model("default"), spins, 21,
                              cluster=cluster.scheduler_address)
    assert on_cluster == local
    assert on_cluster.cluster == cluster.scheduler_address
    assert on_cluster.workers == 2
    assert on_cluster.jackpot_rounds_at == local.jackpot_rounds_at


def test_every_sum_and_bin_equals_a_round_by_round_count() -> None:
    """The hot loop only tallies base-spin rounds by line pay and folds the tally at the end
    of a chunk; replayed round by round (``play_rounds``, same stream), every moment, count and
    histogram bin is the same integer."""
    model = load_model("default")
    spins = 200_000  # one chunk
    result = simulate(model, spins, 31, workers=1)
    rounds = play_rounds(kernel_tables(model).as_tuple(), chunk_state(31, 0), spins)
    col = {name: [int(x) for x in rounds[:, i]] for i, name in enumerate(ROUND_FIELDS)}
    lines, star = col["base_pay"], col["star_wild_pay"]
    hold = col["hold_pay"]
    game = [a + b + c for a, b, c in zip(lines, star, hold, strict=True)]
    for name, values in (("lines", lines), ("star_wild", star), ("hold_and_cash", hold),
                         ("game", game)):
        assert result.moments[name] == Moments(sum(values), sum(v * v for v in values)), name
    coins, jackpots = col["coins"], col["base_jackpot_lines"]
    respin_jackpots = col["respin_jackpot_lines"]
    # a hit: total win above 0 (a game win or a EUR share); a respin may pay nothing
    hits = sum(1 for i in range(spins)
               if game[i] > 0 or jackpots[i] > 0 or respin_jackpots[i] > 0)
    assert result.counts["hits"] == hits
    assert result.counts["winning_rounds"] == sum(1 for g in game if g > 0)
    assert result.counts["star_wilds"] == sum(1 for c in coins if c == 4)
    assert result.counts["holds"] == sum(1 for c in coins if c >= 5)
    assert result.counts["jackpot_lines"] == sum(jackpots)
    assert result.max_win == max(game) / 20
    edges = np.array(result.histogram_edges)
    bins = [0 if g == 0 else 1 + int(np.searchsorted(edges, g / 20, side="right"))
            for g in game]
    counted = np.bincount(bins, minlength=len(edges) + 2)
    assert result.win_histogram == tuple(int(n) for n in counted)
    assert max(lines) < 2048 < max(game)  # both tally paths and the large-win path ran


def test_variance_reduced_sums_match_the_rounds_played(exact: ExactReport) -> None:
    """One short chunk replayed round by round: the kernel's cross sums and the estimator equal
    a direct computation over the per-round outcomes."""
    model = load_model("default")
    spins = 150_000
    result = simulate(model, spins, 8, workers=1)
    rounds = play_rounds(kernel_tables(model).as_tuple(), chunk_state(8, 0), spins)
    col = {name: rounds[:, i].astype(np.float64) for i, name in enumerate(ROUND_FIELDS)}
    lines, star, coins = col["base_pay"], col["star_wild_pay"], rounds[:, 2]
    hold_means = {n: float(m.mean) for n, m in exact.hold_and_cash_by_coins.items()}
    assert result.moments["lines"].total == int(lines.sum())
    assert result.lines_x_star_wild == int((lines * star).sum())
    for n in range(5, 16):
        assert result.holds_by_coins[n] == int((coins == n).sum())
        assert result.lines_by_coins[n] == int(lines[coins == n].sum())
    hold = np.array([20 * hold_means.get(int(n), 0.0) if n >= 5 else 0.0 for n in coins])
    y = lines + star + hold
    beta = np.cov(y, lines, bias=True)[0, 1] / lines.var()
    direct = (y.mean() - beta * (lines.mean() - 20 * float(exact.lines))) / 20
    vr = result.variance_reduced(float(exact.lines), hold_means)
    assert vr.game.value == pytest.approx(direct, rel=1e-9)
    assert vr.beta == pytest.approx(beta, rel=1e-9)
    assert vr.variance_ratio > 2


def test_variance_reduced_interval_holds_the_exact_value(default_run: SimulationResult,
                                                         exact: ExactReport) -> None:
    vr = default_run.variance_reduced(
        float(exact.lines), {n: float(m.mean) for n, m in exact.hold_and_cash_by_coins.items()})
    assert vr.rtp.contains(float(exact.total))
    assert vr.rtp.std_error < default_run.rtp.std_error / 2
    assert vr.effective_spins == pytest.approx(default_run.spins * vr.variance_ratio)




_FEATURE_HEAVY = hand_made(
    [["COIN", "COIN", "COIN", "LEMON", "JACKPOT", "WILD", "BELL", "COIN", "SEVEN", "BAR"],
     ["COIN", "JACKPOT", "LEMON", "COIN", "WILD", "COIN", "BELL", "DIAMOND", "BAR"],
     ["JACKPOT", "COIN", "COIN", "COIN", "WILD", "LEMON", "SEVEN", "BELL"],
     ["COIN", "LEMON", "WILD", "BAR", "BELL", "COIN", "SEVEN"],
     ["COIN", "COIN", "COIN", "WILD", "LEMON", "DIAMOND"]],
    [["JACKPOT", "LEMON", "WILD", "BELL", "SEVEN"]] * 3
    + [["LEMON", "WILD", "BELL", "SEVEN", "BAR"]] * 2,
    cell_weights={"BLANK": 30, "CASH": 6, "MINOR": 2, "MAJOR": 1, "UPGRADE": 2,
                  "MULTIPLIER": 2})
_CAPPED = hand_made([["COIN", "COIN", "COIN", "LEMON", "WILD", "BELL"]] * 5, max_win_x=1800,
                     cell_weights={"BLANK": 12, "CASH": 6, "MINOR": 1, "MAJOR": 2,
                                   "UPGRADE": 1, "MULTIPLIER": 6})


@pytest.mark.parametrize(("model", "seed"), [
    (with_upgrade_unit(_FEATURE_HEAVY, UPGRADE_TOTAL_BET), 41),
    (with_upgrade_unit(_CAPPED, UPGRADE_TOTAL_BET), 42),
    (with_upgrade_unit(_FEATURE_HEAVY, UPGRADE_LINE_BET), 43),
    (with_upgrade_unit(_CAPPED, UPGRADE_LINE_BET), 44),
], ids=["feature-heavy", "capped", "feature-heavy-line-bet", "capped-line-bet"])
def test_a_chunk_full_of_features_counts_each_round_as_played_one_by_one(
        model: MathModel, seed: int) -> None:
    """``run_chunk`` (the hot loop, with features, €€€ lines and large wins off it, drawing
    mid-stream) against ``play_rounds`` (one round at a time, pinned to the engine draw for draw
    in test_kernel) on the same stream: every sum, count, histogram bin and €€€ position is the
    same integer, on models where most rounds leave the hot loop."""
    spins = 40_000  # one chunk
    result = simulate(model, spins, seed, workers=1)
    rounds = play_rounds(kernel_tables(model).as_tuple(), chunk_state(seed, 0), spins)
    col = {name: [int(x) for x in rounds[:, i]] for i, name in enumerate(ROUND_FIELDS)}
    lines, star, coins = col["base_pay"], col["star_wild_pay"], col["coins"]
    cap = -1 if model.max_win_x is None else 20 * model.max_win_x
    hold = [m if cap < 0 else min(m, cap - p)
            for m, p in zip(col["hold_pay"], lines, strict=True)]
    game = [a + b + c for a, b, c in zip(lines, star, hold, strict=True)]
    for name, values in (("lines", lines), ("star_wild", star), ("hold_and_cash", hold),
                         ("game", game)):
        assert result.moments[name] == Moments(sum(values), sum(v * v for v in values)), name
    base_jackpots, respin_jackpots = col["base_jackpot_lines"], col["respin_jackpot_lines"]
    expected = {
        "hits": sum(1 for g, j, r in zip(game, base_jackpots, respin_jackpots, strict=True)
                    if g > 0 or j + r > 0),
        "winning_rounds": sum(1 for g in game if g > 0),
        "star_wilds": coins.count(4),
        "holds": sum(1 for c in coins if c >= 5),
        "megas": sum(col["mega"]), "minors": sum(col["minors"]), "majors": sum(col["majors"]),
        "hold_respins": sum(col["respins"]),
        "jackpot_spins": sum(1 for j in base_jackpots if j > 0),
        "jackpot_lines": sum(base_jackpots), "respin_jackpot_lines": sum(respin_jackpots),
        "jackpot_rounds": sum(1 for j, r in zip(base_jackpots, respin_jackpots, strict=True)
                              if j + r > 0),
    }
    assert result.counts == expected
    assert result.jackpot_rounds_at == tuple(
        (i, j, r, g) for i, (j, r, g) in enumerate(zip(base_jackpots, respin_jackpots, game,
                                                        strict=True))
        if j + r > 0)
    assert result.holds_by_coins == tuple(sum(1 for c in coins if c == n) if n >= 5 else 0
                                          for n in range(16))
    assert result.lines_by_coins == tuple(
        sum(p for p, c in zip(lines, coins, strict=True) if c == n) if n >= 5 else 0
        for n in range(16))
    assert result.lines_x_star_wild == sum(p * s for p, s in zip(lines, star, strict=True))
    assert result.max_win == max(game) / 20
    edges = np.array(result.histogram_edges)

    def histogram(values: list[int]) -> tuple[int, ...]:
        bins = [0 if v == 0 else 1 + int(np.searchsorted(edges, v / 20, side="right"))
                for v in values]
        return tuple(int(n) for n in np.bincount(bins, minlength=len(edges) + 2))

    assert result.win_histogram == histogram(game)
    assert result.hold_and_cash_histogram == histogram(
        [h for h, c in zip(hold, coins, strict=True) if c >= 5])
    # the stream really left the hot loop mid-chunk, for every kind of round the model has
    assert min(expected["star_wilds"], expected["holds"]) > 100
    assert expected["jackpot_rounds"] > 100 or cap >= 0  # the capped model shows no JACKPOT
    assert expected["megas"] > 0 and max(game) >= 2048
    if cap >= 0:
        assert max(game) == cap  # the cap was reached and stopped the round's win


def test_an_in_process_run_does_not_time_what_is_done_meanwhile() -> None:
    """``meanwhile`` (the CLI's exact figures) runs in this process before the clock starts:
    the rate a run reports is spins over the time spent playing them."""
    def meanwhile() -> None:
        time.sleep(2.0)

    started = time.perf_counter()
    result = simulate(load_model("default"), 1000, 3, workers=1, meanwhile=meanwhile)
    assert time.perf_counter() - started >= 2.0  # it was called, in this process
    assert result.elapsed_seconds < 2.0
