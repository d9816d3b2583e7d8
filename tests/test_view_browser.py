"""blot-view in a real headless Chromium: a replay stepped to its end and checked against the
record, one seat's view, a duplicate board side by side, and a human move at a live table.

Skipped when Chromium, its driver or selenium is missing (``.ci/run`` installs Debian's
``chromium`` and ``chromium-driver``; selenium is in the test extra).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import urllib.request

import numpy as np
import pytest

pytest.importorskip("starlette", reason="blot-view needs starlette and uvicorn (the view extra)")
pytest.importorskip("uvicorn", reason="blot-view needs starlette and uvicorn (the view extra)")
webdriver = pytest.importorskip("selenium.webdriver", reason="the browser test drives Chromium with selenium")

from agents.play.game import board_records  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.view.server import BackgroundServer, create_app  # noqa: E402
from blot_env.actions import layout_for  # noqa: E402
from blot_env.engine import deal_random  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                reason="needs Chromium and chromedriver (apt-get install chromium chromium-driver)")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1800,1000")


def _board(tmp_path):
    """A bazar board played at two tables (rules-medium and rules swap sides), as records."""
    deal = deal_random(make_rules("bazar"), np.random.default_rng(7), 3)
    recs = board_records(deal, make_agent("rules-medium"), make_agent("rules"))
    assert recs[0]["hands"] == recs[1]["hands"] and recs[0]["players"] == ["rules-medium", "rules"] * 2
    path = tmp_path / "board.json"
    path.write_text(json.dumps(recs))
    return path, recs


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    for f in FLAGS:
        opts.add_argument(f)
    profile = tempfile.mkdtemp(prefix="blot-view-chromium-")
    opts.add_argument(f"--user-data-dir={profile}")
    opts.binary_location = CHROMIUM
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield drv
    drv.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _wait(cond, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _cards(drv, selector: str) -> list[str]:
    """The ``data-card`` of every element matching ``selector``, read in one script (the page
    redraws its table at every step, so element handles go stale)."""
    return drv.execute_script("return Array.from(document.querySelectorAll(arguments[0]))"
                              ".map((e) => e.dataset.card || null)", selector)


def test_replay_board_and_live_move(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    path, recs = _board(tmp_path)
    rec = recs[0]
    n_actions = len(rec["actions"])
    played = [a.split()[1] for a in rec["actions"] if a.startswith("play ")]
    drv = browser
    with BackgroundServer(create_app([path])) as url:
        drv.get(url)
        _wait(lambda: drv.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1", "the page")
        step = drv.find_element(By.ID, "step-label")
        assert step.text == f"step 0 / {n_actions}"
        # every hand at the start: the record's cards
        assert set(_cards(drv, '.seat[data-seat="0"] .card')) == set(rec["hands"][0].split())
        nxt = drv.find_element(By.ID, "next")
        for _ in range(n_actions):  # forward through every action
            nxt.click()
        assert step.text == f"step {n_actions} / {n_actions}" and not nxt.is_enabled()
        score = drv.find_element(By.CSS_SELECTOR, ".result .score").text
        assert score == f"{rec['result']['score'][0]} : {rec['result']['score'][1]}"
        assert sorted(_cards(drv, ".trick .card")) == sorted(played[-4:])  # the last trick
        card = played[-1]
        symbol = "10" if card[0] == "T" else card[0]
        assert drv.find_element(By.ID, "last-action").text.endswith("play " + symbol + "♣♦♥♠"["CDHS".index(card[1])])
        drv.find_element(By.ID, "prev").click()
        assert step.text == f"step {n_actions - 1} / {n_actions}"
        # jump to trick 1, then one seat's view: the others' cards are backs
        Select(drv.find_element(By.ID, "jump")).select_by_visible_text("trick 1")
        assert drv.find_element(By.CSS_SELECTOR, ".caption").text.startswith("trick 1")
        Select(drv.find_element(By.ID, "view-select")).select_by_value("1")
        _wait(lambda: _cards(drv, '.seat[data-seat="1"] .card[data-card]') and not
              _cards(drv, '.seat[data-seat="0"] .card[data-card]'), "seat 1's view")
        assert len(_cards(drv, '.seat[data-seat="0"] .card.back')) == 8
        # the duplicate board: both tables side by side, same cards
        drv.find_element(By.ID, "board-toggle").click()
        _wait(lambda: len(drv.find_elements(By.CSS_SELECTOR, ".table-box")) == 2, "two tables")
        captions = drv.execute_script("return Array.from(document.querySelectorAll('#tables .caption'))"
                                      ".map((e) => e.textContent)")
        assert len(captions) == 2 and all(c.startswith("trick 1") for c in captions)  # the same moment
        # a live table: seat 0 is a human against rules; click the first legal choice
        drv.find_element(By.ID, "tab-live").click()
        Select(drv.find_element(By.ID, "live-preset")).select_by_value("duel-app")
        seat1 = drv.find_element(By.ID, "live-seat-1")
        seat1.clear()
        seat1.send_keys("rules")
        drv.find_element(By.ID, "live-start").click()
        choice = _wait(lambda: drv.find_elements(By.CSS_SELECTOR, "#choices button.choice"), "the human's choices")[0]
        action_id = int(choice.get_attribute("data-action"))
        choice.click()
        lay = layout_for(make_rules("duel-app"))

        def record():
            with urllib.request.urlopen(url + "api/games/0/record") as r:
                game = json.load(r)
            return game if game["actions"] else None

        game = _wait(record, "the human's action at the server")
        assert game["actions"][0] == lay.describe(action_id) and game["players"] == ["human", "rules"]
        assert drv.find_element(By.ID, "live-message").text == ""
