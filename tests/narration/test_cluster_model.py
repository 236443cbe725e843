"""Which model folder a cluster node uses: the owner's files found on the node, or fetched from the model hub there
(pinned commit, checked by hash), never a folder with other files. No Ray needed: this is what each actor runs."""

from __future__ import annotations

import pytest

from core.engine import locate_bundle, user_data
from core.narration.cluster.connect import ClusterError
from core.narration.cluster.model import MODELS_ENV, fingerprint, resolve_model
from tests.security.test_security_downloads import FakeHub


@pytest.fixture
def owner(bundles):
    """What the owner sends: the fingerprint of the Original stand-in as a q4 render loads it."""
    return fingerprint(locate_bundle(bundles["original"], "q4"))


@pytest.fixture
def hub_files(bundles) -> dict[str, bytes]:
    source = bundles["original"]
    return {p.relative_to(source).as_posix(): p.read_bytes() for p in sorted(source.rglob("*")) if p.is_file()}


@pytest.fixture(autouse=True)
def node_home(tmp_path, monkeypatch):
    """Each test is a fresh node: its own user data folder, no $CHATTERBOX_MODELS."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "node-data"))
    monkeypatch.delenv(MODELS_ENV, raising=False)


def test_the_owners_path_is_used_where_the_node_has_it(bundles, owner):
    assert resolve_model(str(bundles["original"]), "q4", owner, "node-1") == bundles["original"]


def test_a_copy_under_chatterbox_models_is_found(bundles, owner, tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "models" / "original-q4"
    shutil.copytree(bundles["original"], copy)
    monkeypatch.setenv(MODELS_ENV, str(tmp_path / "models"))
    assert resolve_model("/elsewhere/original-q4", "q4", owner, "node-1") == copy


def test_a_node_without_the_model_downloads_the_hubs_copy_once(owner, hub_files):
    hub = FakeHub(hub_files)
    place = resolve_model("/owner/only/original-q4", "q4", owner, "node-2", hub=hub)
    assert place == user_data() / "models" / "original-q4"
    assert fingerprint(locate_bundle(place, "q4")) == owner
    fetched = len(hub.downloads())
    assert fetched >= 4  # the graphs and the tokenizer came from the hub, each checked by hash
    again = FakeHub(hub_files)
    assert resolve_model("/owner/only/original-q4", "q4", owner, "node-2", hub=again) == place
    assert again.downloads() == []  # found on the node the second time: nothing fetched


def test_a_hub_copy_with_other_files_is_refused(owner, hub_files):
    changed = dict(hub_files, **{"tokenizer.json": hub_files["tokenizer.json"] + b" "})
    with pytest.raises(ClusterError) as err:
        resolve_model("/owner/only/original-q4", "q4", owner, "node-3", hub=FakeHub(changed))
    assert err.value.code == "cluster.model_missing"
    assert any("other files" in line for line in err.value.data["tried"])


def test_a_failed_download_is_named_in_the_message(owner, hub_files):
    class Unreachable(FakeHub):
        def model_info(self, *args, **kwargs):
            raise ConnectionError("no route to the hub")

    with pytest.raises(ClusterError) as err:
        resolve_model("/owner/only/original-q4", "q4", owner, "node-4", hub=Unreachable(hub_files))
    assert any("the hub" in line for line in err.value.data["tried"])


def test_a_folder_the_hub_does_not_have_is_not_downloaded(owner, hub_files):
    hub = FakeHub(hub_files)
    with pytest.raises(ClusterError) as err:
        resolve_model("/owner/my-own-model", "q4", owner, "node-5", hub=hub)
    assert err.value.code == "cluster.model_missing"
    assert hub.calls == []
