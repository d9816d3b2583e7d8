"""Make the pictures of docs/play.md and the README (docs/img/*.png).

Plays seeded deals with the rule agents, then takes: the terminal table of ``blot-play``
(rich's HTML export of the console, photographed by headless Chromium), the viewer's replay,
duplicate board and live table (Chromium driven by selenium against a local ``blot-view``),
and one ``render_mode="rgb_array"`` frame. Needs the test extra and Debian's ``chromium`` and
``chromium-driver``.

    python scripts/screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def terminal_png(out: Path, tmp: Path) -> None:
    from rich.console import Console

    from agents.baselines.rules_agent import RulesAgent
    from agents.play.game import Game, agents_for
    from agents.play.terminal import choices_text, table_panel
    from blot_env.rules_config import make_rules
    from blot_env.view import seat_view

    cfg = make_rules("bazar-app", target=151)
    game = Game(cfg, agents_for(cfg, [0], "rules-medium"), seed=11, match=True)
    me, rng = RulesAgent(), np.random.default_rng(0)
    while not (game.state.trick_no == 3 and len(game.state.trick) == 2 and game.human_to_act()):
        if game.deal_over:
            game.next_deal()
        elif game.human_to_act():
            game.act(me.act(seat_view(game.state, 0), rng))
        else:
            game.bot_step()
    console = Console(record=True, width=96, force_terminal=True, color_system="truecolor", file=io.StringIO())
    console.print(table_panel(game.snapshot(0), 0, f"bazar-app · deal {game.deal_index + 1} · dealer seat "
                                                   f"{game.state.dealer} · match to 151"))
    console.print(choices_text(game.snapshot(0)))
    console.print("Your move> 9H")
    html = tmp / "terminal.html"
    html.write_text(console.export_html(inline_styles=True).replace(
        "<body>", '<body style="background:#1e1e1e;color:#ddd;margin:8px">'), encoding="utf-8")
    subprocess.run([shutil.which("chromium"), *FLAGS, f"--user-data-dir={tmp / 'profile-cli'}",
                    f"--screenshot={out / 'play-terminal.png'}", "--window-size=900,470", html.as_uri()],
                   check=True, capture_output=True, timeout=60)


def records(tmp: Path) -> list[Path]:
    from agents.play.game import Game, agents_for, board_records
    from agents.registry import make_agent
    from blot_env.engine import deal_random
    from blot_env.rules_config import make_rules

    deal = deal_random(make_rules("bazar"), np.random.default_rng(7), 3)
    board = board_records(deal, make_agent("rules-medium"), make_agent("rules"))
    p1 = tmp / "board.json"
    p1.write_text(json.dumps(board))
    game = Game(make_rules("bazar-app"), agents_for(make_rules("bazar-app"), [], "rules-medium"), seed=3, match=True)
    while not game.over:
        if game.deal_over:
            game.next_deal()
        game.bot_step() if not game.deal_over else None
    p2 = game.save(tmp / "match.json")
    return [p1, p2]


def viewer_pngs(out: Path, tmp: Path, paths: list[Path]) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from agents.view.server import BackgroundServer, create_app

    opts = webdriver.ChromeOptions()
    for f in [*FLAGS, f"--user-data-dir={tmp / 'profile-view'}"]:
        opts.add_argument(f)
    opts.binary_location = shutil.which("chromium")
    with BackgroundServer(create_app(paths)) as url:
        drv = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
        try:
            drv.set_window_size(900, 780)
            drv.get(url)
            while drv.find_element(By.TAG_NAME, "body").get_attribute("data-ready") != "1":
                time.sleep(0.05)
            Select(drv.find_element(By.ID, "jump")).select_by_visible_text("trick 4")
            drv.find_element(By.ID, "next").click()
            drv.find_element(By.ID, "next").click()
            drv.save_screenshot(str(out / "viewer-replay.png"))
            drv.set_window_size(1700, 780)
            drv.find_element(By.ID, "board-toggle").click()
            time.sleep(0.5)
            Select(drv.find_element(By.ID, "jump")).select_by_visible_text("trick 6")
            drv.save_screenshot(str(out / "viewer-board.png"))
            drv.set_window_size(900, 900)
            drv.find_element(By.ID, "tab-live").click()
            drv.find_element(By.ID, "live-delay").send_keys("0")  # focus; speed set below
            drv.execute_script("document.getElementById('live-delay').value = 0")
            drv.find_element(By.ID, "live-start").click()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # play the first legal choice until 5 cards are left
                btns = drv.find_elements(By.CSS_SELECTOR, "#choices button.choice")
                left = drv.execute_script(
                    "return document.querySelectorAll('#live-table .seat[data-seat=\"0\"] .card').length")
                if btns and left <= 5:
                    break
                if btns:
                    btns[0].click()
                time.sleep(0.4)
            drv.execute_script("window.scrollTo(0, 0)")
            drv.save_screenshot(str(out / "viewer-live.png"))
        finally:
            drv.quit()


def rgb_png(out: Path) -> None:
    from PIL import Image

    from blot_env.env import raw_env

    env = raw_env("bazar", render_mode="rgb_array", render_seat=0)
    env.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(22):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[0] if len(legal) < 40 else legal[rng.integers(3)]))
    Image.fromarray(env.render()).save(out / "render-rgb.png", optimize=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/img", help="folder of the PNG files (default docs/img)")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        terminal_png(out, tmp)
        viewer_pngs(out, tmp, records(tmp))
    rgb_png(out)
    for p in sorted(out.glob("*.png")):
        print(p, p.stat().st_size)


if __name__ == "__main__":
    main()
