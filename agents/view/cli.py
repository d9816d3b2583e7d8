"""``blot-view [RECORDS...]``: a local web viewer of deal records and live tables.

Serves a page on ``http://127.0.0.1:8000`` (``--host``/``--port``) that replays the records
given (deal records, ``blot-match/1`` records, ``.json`` or ``.jsonl``; more can be opened in
the page), shows duplicate boards side by side, lets agents play while you watch, and lets
you play against agents. Nothing is fetched from the network. Stop it with Ctrl-C.
Exit status: 0 after a stop, 2 on bad options or unreadable records.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path


def port_number(text: str) -> int:
    """argparse type: a TCP port 0..65535 (0: a free one)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number 0..65535, got {text!r}") from None
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0..65535, got {v}")
    return v


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="blot-view", description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="*", help="record files to replay (.json object or list, .jsonl)")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    ap.add_argument("--port", type=port_number, default=8000, help="port (default 8000; 0 picks a free one)")
    ap.add_argument("--save-dir", help="write the record of every finished live game into this folder")
    ap.add_argument("--open", action="store_true", help="open the page in the default browser")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.save_dir is not None and Path(args.save_dir).exists() and not Path(args.save_dir).is_dir():
        print(f"blot-view: --save-dir {args.save_dir}: not a folder (a file of that name exists)", file=sys.stderr)
        return 2
    try:
        import uvicorn

        from .server import create_app
    except ImportError as e:
        print(f'blot-view serves its page with starlette and uvicorn: pip install "blot-env[view]" ({e})',
              file=sys.stderr)
        return 2
    from blot_env.errors import RecordError

    try:
        app = create_app(args.records, save_dir=args.save_dir)
    except RecordError as e:
        print(f"blot-view: {e}", file=sys.stderr)
        return 2
    import socket

    try:
        sock = socket.create_server((args.host, args.port))
    except OSError as e:
        print(f"blot-view: cannot listen on {args.host}:{args.port}: {e.strerror}", file=sys.stderr)
        return 2
    url = f"http://{args.host}:{sock.getsockname()[1]}/"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    if args.open:
        import webbrowser

        webbrowser.open(url)  # the socket already listens: the page's request waits for the server
    print(f"blot-view: {len(app.state.viewer.deals)} deal(s) loaded; serving {url} (Ctrl-C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    return 0


__all__ = ["build_parser", "main"]
