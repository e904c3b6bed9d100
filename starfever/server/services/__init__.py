"""Services own the transactions: each public function opens exactly one (``db.write()`` or
``db.read()``), so a debit, a round and a pool update always commit or fail together."""
