"""``GET /api/v1/operator/software``: the server's proof of what it runs (ADR 0020): the
installed package against its software manifest (checked at start-up), the manifest's own
SHA-256, the build hash every round records, and the model with its approval."""

from __future__ import annotations

from fastapi import APIRouter, Request

from starfever.server.api.deps import OperatorDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.identity import StartupIdentity
from starfever.server.schemas import SoftwarePublic

router = APIRouter(prefix="/operator", tags=["operator"], route_class=RetryOnDisconnect)


@router.get("/software")
def software_identity(request: Request, _operator: OperatorDep) -> SoftwarePublic:
    """What the server checked at start-up: ``software.ok`` (every file of the installed
    package as its manifest lists it), ``software.manifest_sha256`` (the manifest's own hash,
    to compare with a certified one), ``software.build_sha256``, the differences (each file
    named), ``runtime`` (the environment against its seal, ADR 0050), ``running_sha256``
    (what every round records: both hashes as one, ADR 0051), and the model's hash and
    approval."""
    identity: StartupIdentity = request.app.state.identity
    return SoftwarePublic.model_validate(identity.to_dict())
