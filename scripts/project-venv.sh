# Sourced by scripts/install and scripts/test (not a command): install into and run from the
# active virtual environment, else the project's own ./.venv, made here when missing, so that
# no script installs into a system Python (Debian's refuses: PEP 668). One line says so.
# scripts/starfever runs the command from the same place.

in_virtual_env() {  # a venv, or an active conda environment, takes our installs
  python3 -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null \
    || [ -n "${CONDA_PREFIX:-}" ]
}

if ! in_virtual_env; then
  made=""
  if ! .venv/bin/python3 -m pip --version >/dev/null 2>&1; then  # missing, or half made
    python3 -m venv --clear .venv
    made=" (made now)"
  fi
  echo "${0##*/}: no virtual environment is active: using ./.venv$made; '. .venv/bin/activate' puts starfever on your PATH" >&2
  export VIRTUAL_ENV="$PWD/.venv"
  export PATH="$VIRTUAL_ENV/bin:$PATH"
  hash -r
fi
