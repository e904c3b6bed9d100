"""Star Fever inside an operator's platform: the seamless-wallet protocol of
``shared/OPERATOR-WALLET.md`` (version 1).

- :mod:`.protocol` — signing, the methods and their fields, the error codes (no I/O).
- :mod:`.client` — Star Fever's side: signed calls with a timeout, replies checked.
- :mod:`.reference` — a reference operator wallet (``starfever operator-wallet-demo``) that
  keeps balances in its own SQLite file, checks signatures and can inject faults; an
  operator's developer watches every call there, and the tests play against it.
"""
