"""The HTTP API under ``/api/v1``: thin routes over the services."""
