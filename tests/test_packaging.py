"""What a stranger adopting fgrad checks first: the license, the version, the changelog."""
import pathlib
import re

import fgrad

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_license_file_matches_pyproject_and_the_version_is_one():
    project = (ROOT / "pyproject.toml").read_text()
    assert 'license = { text = "MIT" }' in project
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    version = re.search(r'^version = "([^"]+)"', project, re.M).group(1)
    assert fgrad.__version__ == version
    assert f"## {version}" in (ROOT / "CHANGELOG.md").read_text()
