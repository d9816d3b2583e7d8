"""render_mode="rgb_array" and "human": frames, the missing-extra message, and a recorded video."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from blot_env.env import raw_env
from blot_env.gym_env import BlotGymEnv
from blot_env.render_image import SIZE

pytestmark = pytest.mark.skipif(importlib.util.find_spec("PIL") is None,
                                reason="the picture of the table needs Pillow (the render extra)")


def _first_legal(env) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


@pytest.mark.parametrize("preset", ["bazar", "duel", "open", "belote"])
def test_rgb_array_frames_through_a_deal(preset):
    env = raw_env(preset, render_mode="rgb_array", render_all_hands=(preset == "open"))
    env.reset(seed=3)
    frames = [env.render()]
    for agent in env.agent_iter():
        if env.terminations[agent]:
            env.step(None)
            continue
        env.step(_first_legal(env))
        frames.append(env.render())
    assert all(f.shape == (*SIZE, 3) and f.dtype == np.uint8 for f in frames)
    # the picture changes as the deal goes on (cards leave the hands, tricks fill)
    assert not np.array_equal(frames[0], frames[-1])
    assert len({f.tobytes() for f in frames}) > len(frames) // 2


def test_render_modes_are_declared_and_checked():
    assert {"ansi", "rgb_array", "human"} <= set(raw_env.metadata["render_modes"])
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        raw_env("bazar", render_mode="video")


def test_missing_pillow_names_the_extra(monkeypatch):
    from blot_env import render_image

    monkeypatch.setitem(sys.modules, "PIL", None)
    render_image._font.cache_clear()
    render_image._card_sprite.cache_clear()
    env = raw_env("duel", render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(ImportError, match=r'pip install "blot-env\[render\]"'):
        env.render()
    render_image._font.cache_clear()
    render_image._card_sprite.cache_clear()


def test_human_mode_without_a_window_prints_the_table(monkeypatch, capsys):
    tkinter = pytest.importorskip("tkinter", reason="the window test stubs tkinter.Tk")

    def no_display(*a, **k):
        raise tkinter.TclError("no display name and no $DISPLAY environment variable")

    monkeypatch.setattr(tkinter, "Tk", no_display)
    env = raw_env("duel-app", render_mode="human")
    env.reset(seed=0)
    with pytest.warns(RuntimeWarning, match="no window can be opened .*printing the table as text"):
        assert env.render() is None
    env.step(_first_legal(env))
    env.render()  # warned once; the text again
    out = capsys.readouterr().out
    assert out.count("duel-app  dealer") == 2
    env.close()


def test_record_video_of_an_episode(tmp_path):
    pytest.importorskip("moviepy", reason="Gymnasium's RecordVideo writes with moviepy (the test extra)")
    from gymnasium.wrappers import RecordVideo

    folder = tmp_path / "video"
    env = RecordVideo(BlotGymEnv("duel-app", render_mode="rgb_array"), str(folder),
                      episode_trigger=lambda i: True, disable_logger=True)
    env.reset(seed=1)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(mask)[0]))
        done = term or trunc
    env.close()
    videos = list(folder.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000
