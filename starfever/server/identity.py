"""What the server proves about itself (ADR 0020): at start-up, that the installed package is
the build its software manifest names and that the model is one the configuration approves;
in every round, which build and which model played it.

Production (``STARFEVER_ENV=production``) refuses to start on a software mismatch (forged
byte code included), an environment that differs from its seal or runs anything no installed
distribution accounts for (ADR 0050), or an unapproved model, with one line; development warns
and plays on. The result, with the manifest's own hash, is what
``GET /api/v1/operator/software`` shows. Every round records the *running build hash*: the
package's build hash and the environment's hash, both computed over what this process found
and loaded at its start (ADR 0051).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starfever.certify import environment, software
from starfever.engine.model import MathModel, ModelError, check_offered, load_model_version
from starfever.server.settings import Settings, SettingsError

_MODEL_HASHES: dict[int, tuple[MathModel, str]] = {}
"""Model hashes by object (a model's hash costs 0.2 ms; the settler asks once per batch)."""
_RUNNING: dict[str, str] = {}
"""The running build hash this process found at its start (``check_startup``)."""


def running_sha256() -> str:
    """The running build hash of this process: the one its start-up check computed; where no
    start-up check ran (a command writing rounds outside a server), computed now from the
    package and the environment as found."""
    known = _RUNNING.get("sha256")
    if known is None:
        known = _RUNNING["sha256"] = environment.running_sha256(
            software.running().build_sha256,
            environment.check(loaded=False).environment_sha256)
    return known


def round_identity(model: MathModel) -> dict[str, str]:
    """The columns of a round that name its build and its model."""
    known = _MODEL_HASHES.get(id(model))
    if known is None or known[0] is not model:
        if len(_MODEL_HASHES) > 64:  # a process's few models; never grows without bound
            _MODEL_HASHES.clear()
        known = _MODEL_HASHES[id(model)] = (model, model.sha256)
    return {"build_sha256": running_sha256(), "model_sha256": known[1]}


@dataclass
class StartupIdentity:
    """The server's software check and its model's approval."""

    software: software.SoftwareCheck
    runtime: environment.EnvironmentCheck
    """The environment against its seal (ADR 0050)."""
    model: MathModel
    approved: tuple[str, ...]
    environment: str
    warnings: list[str] = field(default_factory=list)

    @property
    def running_sha256(self) -> str:
        """What every round records: the package's and the environment's hashes as one."""
        return environment.running_sha256(self.software.build_sha256,
                                          self.runtime.environment_sha256)

    @property
    def model_approved(self) -> bool:
        """Whether the model's hash is in the approved list."""
        return self.model.sha256 in self.approved

    def to_dict(self) -> dict[str, Any]:
        """The operator route's body."""
        return {"software": self.software.to_dict(), "environment": self.environment,
                "runtime": self.runtime.to_dict(), "running_sha256": self.running_sha256,
                "model": {"name": self.model.name, "version": self.model.version,
                          "sha256": self.model.sha256, "approved": self.model_approved},
                "approved_models": list(self.approved), "warnings": self.warnings}


def check_own_identity(model: MathModel) -> None:
    """:class:`SettingsError` when ``model`` bears the name and version of a shipped or archived
    model but not its content: its rounds would be stored under that identity, and replay and
    audit (which find a round's model by name and version) would use the other model."""
    known = load_model_version(model.name, model.version)
    if known is not None and known.sha256 != model.sha256:
        raise SettingsError(
            f"model {model.name} {model.version} (sha256 {model.sha256[:12]}...) differs from the "
            f"shipped model of that name and version (sha256 {known.sha256[:12]}...): rounds "
            "record a model by name and version, so give a changed model its own name or "
            "version")


def check_conditions(model: MathModel) -> None:
    """:class:`SettingsError` (one line) unless the game conditions of ``model`` can be
    written in every language: a server serves them beside the rules page, and offers no
    game it cannot state the conditions of. Every rule of the model must have its words
    (``check_writable``); where the model's exact figures are at hand (the shipped models ship
    with theirs; any other model's are cached once computed) the whole text is rendered now.
    A model never seen before has its figures computed beside the serving instead (about a
    minute for a line-bet model, ADR 0032), as the rules page's are, so the check does not
    hold the server's start for that long."""
    from starfever.conditions import ConditionsError, render
    from starfever.conditions.facts import check_writable
    from starfever.math.figures import cached

    try:
        check_writable(model)
        found = cached(model)
        if found is not None:
            render(model, found)
    except ConditionsError as error:
        raise SettingsError(f"{error}; refusing to start") from None


def _editable(checked: software.SoftwareCheck) -> bool:
    """Whether the package runs from its source tree (an editable install)."""
    return (checked.root.parent / "setup.py").is_file()


def check_startup(settings: Settings, model: MathModel) -> StartupIdentity:
    """Check the running package and the model; :class:`SettingsError` (one line) where
    production must not start, warnings otherwise. A model that breaks the conditions' rules
    for an offered game (``check_offered``) is refused in every environment, and so is one
    that takes a shipped or archived model's name and version with other content
    (``check_own_identity``), whose game conditions cannot be written
    (``check_conditions``) or that the market does not allow (``markets.check_model``)."""
    try:
        check_offered(model)
    except ModelError as error:
        raise SettingsError(str(error)) from None
    check_own_identity(model)
    check_conditions(model)
    from starfever.markets import MarketModelMismatch, check_model, load_market

    try:  # e.g. a model with the €€€ pool in a market that allows no progressive (ADR 0072)
        check_model(load_market(settings.market), model)
    except MarketModelMismatch as error:
        raise SettingsError(str(error)) from None
    from starfever.currencies import UnknownCurrency, check_currency_model, load_currency

    try:  # every served currency's ladder and pool are the model's classes and pool (ADR 0076)
        for code in settings.served_currencies:
            check_currency_model(load_currency(code), model)
    except UnknownCurrency as error:
        raise SettingsError(str(error)) from None
    checked = software.running()
    production = settings.environment == "production"
    sealed = (checked.root / environment.ENVIRONMENT_MANIFEST).is_file()
    # the whole check (every loaded module against its RECORD, about a second) where it
    # decides; a development server without a seal only names its environment
    runtime = environment.check(checked.root, loaded=production or sealed)
    result = StartupIdentity(software=checked, runtime=runtime, model=model,
                             approved=settings.approved_model_hashes,
                             environment=settings.environment)
    if not checked.ok:
        differences = checked.differences()
        problem = (f"the installed software does not match its manifest: {len(differences)} "
                   f"difference(s), the first {differences[0]} (starfever verify lists them"
                   + ("; an editable install from a source tree: ./scripts/install --test "
                      "rewrites the manifest after an edit)" if _editable(checked) else ")"))
        if production:
            raise SettingsError(f"{problem}; refusing to start in production")
        result.warnings.append(problem)
    if not runtime.ok and (production or sealed):
        problem = (f"the environment does not match its seal: {len(runtime.differences)} "
                   f"difference(s), the first {runtime.differences[0]} (starfever verify "
                   "lists them; starfever seal seals a deployed environment)")
        if production:
            raise SettingsError(f"{problem}; refusing to start in production")
        result.warnings.append(problem)
    _RUNNING["sha256"] = result.running_sha256
    if not result.model_approved:
        problem = (f"model {model.name} {model.version} (sha256 {model.sha256}) is not in "
                   "STARFEVER_APPROVED_MODELS")
        if production:
            raise SettingsError(f"{problem}; refusing to start in production")
        if result.approved:
            result.warnings.append(problem)
    return result


def record_approved_models(db: Any, settings: Settings) -> bool:
    """An ``approved_models_changed`` significant event when the approved list differs from
    the last one recorded (with the one before); whether one was recorded."""
    from starfever.server.services import events

    now = list(settings.approved_model_hashes)
    with db.write() as session:
        before = events.last(session, ("approved_models_changed",))
        previous = before.detail.get("approved") if before else None
        if previous == now or (previous is None and not now):
            return False
        events.record(session, "approved_models_changed", actor=None,
                      detail={"approved": now, "previous": previous})
    return True


def record_running_build(db: Any, identity: StartupIdentity) -> bool:
    """A ``software_changed`` significant event when the running build hash differs from the
    last one recorded (the first start records it): a new deployment, or a package, hook,
    dependency or interpreter changed and resealed, shows in the log with the hash before.
    Whether one was recorded."""
    from starfever.server.services import events

    now = identity.running_sha256
    with db.write() as session:
        before = events.last(session, ("software_changed",))
        previous = before.detail.get("running_sha256") if before else None
        if previous == now:
            return False
        events.record(session, "software_changed", actor=None,
                      detail={"running_sha256": now,
                              "build_sha256": identity.software.build_sha256,
                              "software_ok": identity.software.ok,
                              "environment_sha256": identity.runtime.environment_sha256,
                              "environment_ok": identity.runtime.ok,
                              "previous": previous})
    return True
