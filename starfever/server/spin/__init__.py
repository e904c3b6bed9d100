"""How a spin moves money (ADR 0038), in the order a spin meets it:

- ``draw``: the request checked (bet, test draws) and made a ``rule.Job``; the round drawn.
- ``wallets``: the wallet port every spin passes (``WalletPort.spin``) and its ledger adapter;
  ``seamless_wallet``: its second adapter, the operator's wallet (debit, credit, rollback).
- ``settler``: the process's group commit of spins; ``sql``: a batch's locked reads and writes;
  ``rule``: the pure settlement (books and spins in, rows and answers out).
- ``group_commit``: the one engine of the settler and ``call_book`` (operator mode's wallet
  calls, recorded before they are sent); ``calls``: those calls as data.
- ``transaction`` (a batch in two round trips), ``statements`` (a table's rows in one
  statement), ``turn`` (the settlers of a host take turns).

Nothing is imported here: ``db`` imports ``turn``, and the route's one call is
``context.wallet.spin(job)``.
"""
