"""Certification: the submission bundle (``starfever certify``), the software manifest made at
build time and its check (``starfever verify``), Ed25519 keys and signatures (``starfever
keygen``, ``starfever sign``); ADR 0020 and 0021."""
