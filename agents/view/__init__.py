"""The browser viewer ``blot-view``: replays of deal records (one seat's view or every hand,
duplicate boards side by side), agents playing live, and humans playing against agents.

:mod:`agents.view.server` is the Starlette app (its page lives in ``static/``, plain HTML, CSS
and JavaScript with no build step and nothing fetched from the network); :mod:`agents.view.cli`
serves it with uvicorn. Needs the ``view`` extra: ``pip install "blot-env[view]"``.
"""
