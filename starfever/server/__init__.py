"""The Star Fever game server: accounts, a ledger wallet, rounds, the shared €€€ pool, game
recall and audit, player protection and operator views, over an HTTP API (``starfever serve``).

The server turns the pure rules core (:mod:`starfever.engine`) into money: the engine decides a
round, the services book it, all in one database transaction.
"""
