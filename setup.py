"""The build hook (everything else is in pyproject.toml): after ``build_py`` the software
manifest of the package (every shipped file with its SHA-256, ``starfever/software-manifest.json``)
is written into what is built, so an installed server can prove it runs exactly that build
(``starfever verify``, ADR 0020). In an editable install (``./scripts/install --test``) the
package is the source folder itself, so the manifest is written there (it is git-ignored)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _manifest_module():  # type: ignore[no-untyped-def]
    # by path: the package cannot be imported while it is being built
    spec = importlib.util.spec_from_file_location(
        "starfever_build_manifest", HERE / "starfever" / "certify" / "manifest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class BuildWithManifest(build_py):
    """``build_py``, then the software manifest of the built package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            root = Path(self.get_package_dir("starfever")).resolve()
        else:
            root = Path(self.build_lib) / "starfever"
        written = _manifest_module().write_software_manifest(
            root, self.distribution.get_version())
        print(f"starfever: wrote the software manifest {written}")


setup(cmdclass={"build_py": BuildWithManifest})
