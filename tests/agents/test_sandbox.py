"""The sealed environment: secrets never reach an agent, paths never leave root_dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_jupyter.agents import sandbox
from hermes_jupyter.agents.hermes import process
from hermes_jupyter.agents.sandbox import (NotNotebookPath, PathEscape, api_path, confine, notebook_api_path,
                                           scrubbed_env)

SERVER_ENV = {
    "PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "JUPYTERHUB_USER": "u",
    "JUPYTERHUB_API_TOKEN": "hub", "JPY_API_TOKEN": "hub-old", "JUPYTER_TOKEN": "server",
    "HERMES_JUPYTER_SERVER_TOKEN": "server-too", "HERMES_JUPYTER_TOKEN": "server-three",
    "GITHUB_TOKEN": "gh", "AWS_SECRET_ACCESS_KEY": "aws", "MY_SECRET": "s", "STRIPE_KEY": "k",
    "DB_PASSWORD": "pw", "OPENAI_API_KEY": "provider", "lowercase_token": "lc", "TOKEN": "bare",
}


def test_secrets_are_dropped_and_plain_variables_kept() -> None:
    assert scrubbed_env(SERVER_ENV) == {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "JUPYTERHUB_USER": "u"}


def test_the_allow_list_lets_named_secrets_through_but_never_the_server_tokens() -> None:
    allow = ["OPENAI_*", "GITHUB_TOKEN", "JUPYTERHUB_API_TOKEN", "JUPYTER_TOKEN", "*_TOKEN"]
    env = scrubbed_env(SERVER_ENV, allow=allow)
    assert env["OPENAI_API_KEY"] == "provider" and env["GITHUB_TOKEN"] == "gh"
    for name in sandbox.ALWAYS_DROPPED:
        assert name not in env
    assert "AWS_SECRET_ACCESS_KEY" not in env and "DB_PASSWORD" not in env


def test_extra_variables_are_added_but_cannot_smuggle_a_server_token() -> None:
    env = scrubbed_env({"PATH": "/bin"}, extra={"HERMES_HOME": "/h", "JUPYTERHUB_API_TOKEN": "x", "jupyter_token": "y"})
    assert env == {"PATH": "/bin", "HERMES_HOME": "/h"}


def test_the_hermes_process_module_re_exports_the_shared_scrubber() -> None:
    assert process.scrubbed_env is sandbox.scrubbed_env
    assert process.is_secret_name("JUPYTERHUB_API_TOKEN")


def test_the_real_server_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "hub-secret")
    monkeypatch.setenv("SOME_SERVICE_SECRET", "svc")
    env = scrubbed_env(os.environ)
    assert "hub-secret" not in env.values() and "svc" not in env.values()
    assert env.get("PATH") == os.environ.get("PATH")


# ---- confinement ----------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """root/ (with notes/a.ipynb and symlinks) and outside/secret.ipynb next to it."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "notes").mkdir(parents=True)
    outside.mkdir()
    (root / "notes" / "a.ipynb").write_text("{}")
    (outside / "secret.ipynb").write_text("{}")
    (root / "escape-file.ipynb").symlink_to(outside / "secret.ipynb")
    (root / "escape-dir").symlink_to(outside)
    (root / "inner-link").symlink_to(root / "notes")
    return root, outside


def test_paths_inside_the_root_resolve_to_their_real_location(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert confine(root, "notes/a.ipynb") == root.resolve() / "notes" / "a.ipynb"
    assert confine(root, "notes/not-yet.ipynb") == root.resolve() / "notes" / "not-yet.ipynb"
    assert confine(root, str(root / "notes" / "a.ipynb")) == root.resolve() / "notes" / "a.ipynb"
    assert confine(root, "inner-link/a.ipynb") == root.resolve() / "notes" / "a.ipynb"
    assert confine(root, "") == root.resolve()


@pytest.mark.parametrize("path", [
    "../outside/secret.ipynb", "notes/../../outside/secret.ipynb", "notes/../a.ipynb", "..", "notes\\..\\..\\x",
])
def test_dot_dot_is_refused(tree: tuple[Path, Path], path: str) -> None:
    with pytest.raises(PathEscape, match=r"'\.\.'"):
        confine(tree[0], path)


def test_absolute_paths_outside_the_root_are_refused(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    for path in ("/etc/passwd", str(outside / "secret.ipynb")):
        with pytest.raises(PathEscape, match="outside"):
            confine(root, path)


def test_symlinks_that_lead_out_of_the_root_are_refused(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    for path in ("escape-file.ipynb", "escape-dir/secret.ipynb", "escape-dir", str(root / "escape-dir" / "x")):
        with pytest.raises(PathEscape, match="outside"):
            confine(root, path)


def test_a_root_reached_through_a_symlink_still_confines(tree: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = tree
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    assert confine(alias, "notes/a.ipynb") == root.resolve() / "notes" / "a.ipynb"
    with pytest.raises(PathEscape):
        confine(alias, "escape-file.ipynb")


def test_nul_bytes_are_refused(tree: tuple[Path, Path]) -> None:
    with pytest.raises(PathEscape, match="NUL"):
        confine(tree[0], "notes/a.ipynb\0.txt")


def test_api_paths_are_relative_and_slash_separated(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert api_path(root, "notes/a.ipynb") == "notes/a.ipynb"
    assert api_path(root, str(root / "notes" / "a.ipynb")) == "notes/a.ipynb"
    assert api_path(root, "inner-link/a.ipynb") == "notes/a.ipynb"
    assert api_path(root, "") == api_path(root, str(root)) == ""
    with pytest.raises(PathEscape, match="outside"):
        api_path(root, "/notes/a.ipynb")  # absolute means the filesystem, not the contents root
    with pytest.raises(PathEscape):
        api_path(root, "escape-dir/secret.ipynb")


# ---- values that carry secrets, Jupyter's runtime dir and cookie ------------------------------


def test_notebook_paths_must_stay_inside_and_name_a_notebook(tree: tuple[Path, Path]) -> None:
    """The notebook tools and the editor share this refusal, so both answer with the same sentence."""
    root, _ = tree
    assert notebook_api_path(root, "notes/a.ipynb") == "notes/a.ipynb"
    with pytest.raises(NotNotebookPath, match=r"^Refused: .*outside the server's root directory\.$"):
        notebook_api_path(root, "escape-dir/secret.ipynb")
    with pytest.raises(NotNotebookPath, match=r"^notes is not a notebook \(\.ipynb\)\.$"):
        notebook_api_path(root, "notes")
    with pytest.raises(NotNotebookPath, match=r"^/ is not a notebook"):
        notebook_api_path(root, "")


def test_the_runtime_dir_and_the_jupyter_cookie_never_pass() -> None:
    environ = {"PATH": "/bin", "JUPYTER_RUNTIME_DIR": "/run/jupyter", "JPY_COOKIE": "username-abc=2|1:0|x",
               "SESSION_COOKIE": "c"}
    assert scrubbed_env(environ, allow=["JPY_*", "JUPYTER_*", "*_COOKIE"]) == {"PATH": "/bin", "SESSION_COOKIE": "c"}
    assert scrubbed_env(environ) == {"PATH": "/bin"}


@pytest.mark.parametrize("value", [
    "postgres://app:hunter2@db.internal:5432/prod",
    "http://proxyuser:s3cret@proxy:3128",
    "http://127.0.0.1:8888/lab?token=0a1b2c3d4e5f6071",
    "sk-live-4f9c2e7a1b3d5f6e8a0c9d8e",
    "Bearer abcdefghijklmnop",
])
def test_a_value_that_carries_a_secret_is_dropped_whatever_its_name(value: str) -> None:
    env = scrubbed_env({"PATH": "/bin", "DATABASE_URL": value, "HTTPS_PROXY": value})
    assert env == {"PATH": "/bin"}
    assert scrubbed_env({"DATABASE_URL": value}, allow=["DATABASE_URL"]) == {"DATABASE_URL": value}


@pytest.mark.parametrize("value", [
    "https://pypi.org/simple", "http://proxy:3128", "/usr/local/bin:/opt/auth:/usr/bin", "user@example.org",
    "en_US.UTF-8",
])
def test_plain_values_pass(value: str) -> None:
    assert scrubbed_env({"SOME_URL": value}) == {"SOME_URL": value}
