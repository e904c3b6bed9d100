"""Star Fever inside an operator's platform: the seamless-wallet protocol of
``shared/OPERATOR-WALLET.md`` (version 2: replies bound to their request, ADR 0054; launches
that cannot be replayed, ADR 0055).

- :mod:`.protocol` — signing, the methods and their fields, the error codes (no I/O).
- :mod:`.client` — Star Fever's side: signed calls with a timeout over http or verified https,
  replies checked (signed, and echoing the request's ``request_id`` and ``transaction_id``).
- :mod:`.reference` — a reference operator wallet (``starfever operator-wallet-demo``) that
  keeps balances in its own SQLite file, checks signatures and can inject faults; an
  operator's developer watches every call there, and the tests play against it.
"""
