"""`webrl-torch export-webrl`: the file WebRL's trainer torch.loads, read back by tools/check_webrl_file.py
(which imports nothing from webrl-temporal and mirrors WebRL's loader)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from webrl_torch.errors import InputError
from webrl_torch.webrl_file import write_webrl_file

CHECK = Path(__file__).parent.parent / "tools" / "check_webrl_file.py"


def step(task: str, done: bool, mc_return: float) -> dict:
    return {
        "observation": f"Task Instruction: {task}",
        "action": "exit()",
        "reward": 1,
        "next_observation": "n",
        "done": done,
        "mc_return": mc_return,
        "task": task,
    }


def check(path: Path) -> dict:
    result = subprocess.run([sys.executable, str(CHECK), str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# (pytest names tmp_path after the test: a name holding "_filter" would flip WebRL's loader, which tests the whole path.)
def test_trajectory_and_step_files_load_as_webrls_loader_reads_them_shuffled_by_the_seed(tmp_path):
    trajectories = [[step(f"task {i}", False, 1.9), step(f"task {i}", True, 1.0)] for i in range(20)]
    items = tmp_path / "items.json"
    items.write_text(json.dumps(trajectories))
    assert write_webrl_file(str(items), str(tmp_path / "a.pt"), seed=3) == 40
    summary = check(tmp_path / "a.pt")
    # 19 trajectories train, the last one validates; the returns WebRL recomputes are the ones written.
    assert (summary["layout"], summary["train_steps"], summary["validation_steps"]) == ("trajectories", 38, 2)
    assert summary["mc_return_stored_vs_recomputed"] < 1e-12
    assert summary["tasks"][::2] != [f"task {i}" for i in range(20)]  # shuffled
    write_webrl_file(str(items), str(tmp_path / "b.pt"), seed=3)
    assert check(tmp_path / "b.pt")["tasks"] == summary["tasks"]

    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps([s for t in trajectories for s in t]))
    write_webrl_file(str(flat), str(tmp_path / "c_filter.pt"), seed=3)
    steps = check(tmp_path / "c_filter.pt")
    assert (steps["layout"], steps["validation_steps"]) == ("steps", 2)
    # A flat list under a name without _filter would be read as trajectories by WebRL: refused.
    with pytest.raises(InputError, match=r"\[0\]: expected a trajectory .* needs `_filter` in the file name"):
        write_webrl_file(str(flat), str(tmp_path / "d.pt"), seed=3)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([[{**step("t", True, 1.0), "done": "yes"}]]))
    with pytest.raises(InputError, match=r"\[0\]\[0\]\.done: expected a boolean"):
        write_webrl_file(str(broken), str(tmp_path / "e.pt"), seed=3)
