"""Named codes and scoring constants, shared by every engine of the project.

One home for the integers that the reference engine (``engine.py`` and the phase modules),
the compiled kernels (:mod:`blot_env.batched`) and the solver kernel
(``agents/search/_kernel.py``) must agree on. Python code reads the names; numba reads the
module-level ints as compile-time constants and the tuples as global constant tuples, so a
kernel writes ``fam == SCORING_BAZAR`` where it used to write ``fam == 0``.

Card tables (points, orders, suits, ``NT``, ``LAST_TRICK_BONUS``) live in :mod:`blot_env.cards`
and the combination tables in :mod:`blot_env.combos`; the action layout's block names and
parameters in :mod:`blot_env.actions`; the row layout of the compiled engine in
``blot_env/batched/_layout.py``.

Knob codes: a string knob of :class:`~blot_env.rules_config.RulesConfig` becomes its index in
the tuple of its values (``AUCTIONS.index(cfg.auction)``), which is what the compiled code
branches on (``_layout.knobs``).
"""

from __future__ import annotations

# ---------------------------------------------------------------------------- phases and steps
#: ``state.Phase``: the auction, the play (declaration steps included), the deal is over
PHASE_AUCTION, PHASE_PLAY, PHASE_DONE = 0, 1, 2

#: ``state.Step``: the declaration decisions a seat takes before its card (rules.md 2.4.3)
STEP_ANNOUNCE, STEP_HEIGHT, STEP_ANSWER, STEP_SHOW = 0, 1, 2, 3

#: ``state.Right``: why a seat may decide show/noshow (rules.md 2.4.3 items 5-7)
RIGHT_NONE, RIGHT_LEADING_PAIR, RIGHT_PASS_ON, RIGHT_PARTNER = 0, 1, 2, 3

#: the step of a public height-exchange event (``Declarations.events``, rules.md 2.4.3 item 2)
EVENT_HEIGHT, EVENT_HEIGHT_TRUMP, EVENT_CONCEDE, EVENT_REVEAL = 0, 1, 2, 3

# ---------------------------------------------------------------------------- declarations
#: combination classes as announced (rules.md 2.4.2); the ANNOUNCE block's parameter
CLS_NONE, CLS_TERZ, CLS_FIFTY, CLS_HUNDRED, CLS_CARRE = 0, 1, 2, 3, 4
CLASS_NAMES = ("none", "terz", "50", "100", "carre")

# ---------------------------------------------------------------------------- contracts
#: ``Contract.kind`` (rules.md 2.2 "Contract record"), and its code in compiled rows
CONTRACT_KINDS = ("num", "kaput", "kaput_plus", "take", "name")
KIND_NUM, KIND_KAPUT, KIND_KAPUT_PLUS, KIND_TAKE, KIND_NAME = 0, 1, 2, 3, 4

#: ``Contract.double``: none, contra, recontra (belote: surcontra), rules.md 2.2 and 6
DOUBLE_NAMES = ("none", "contra", "recontra")
DOUBLE_NONE, DOUBLE_CONTRA, DOUBLE_RECONTRA = 0, 1, 2

#: the value of a kaput bid, in tens (kaput+N bids 25 + N), rules.md 2.2
KAPUT_VALUE = 25

# ---------------------------------------------------------------------------- knob codes
AUCTIONS = ("bazar", "belote", "duel", "open")
AUCTION_BAZAR, AUCTION_BELOTE, AUCTION_DUEL, AUCTION_OPEN = 0, 1, 2, 3
KAPUTS = ("raisable", "terminal", "none")
KAPUT_RAISABLE, KAPUT_TERMINAL, KAPUT_NONE = 0, 1, 2
DECLS = ("manual", "auto", "announce")
DECL_MANUAL, DECL_AUTO, DECL_ANNOUNCE = 0, 1, 2
REVEALS = ("after_trick1", "end")
LONG_RUNS = ("split", "100")
LONG_RUN_SPLIT, LONG_RUN_100 = 0, 1
CARRES = ("armenian", "classic", "none")
CARRE_TABLE_ARMENIAN, CARRE_TABLE_CLASSIC, CARRE_TABLE_NONE = 0, 1, 2
#: scoring families (``cfg.scoring``): bazar rules.md 2.5, duel 3/4, open 5.5, belote 6
SCORINGS = ("bazar", "duel", "open", "belote")
SCORING_BAZAR, SCORING_DUEL, SCORING_OPEN, SCORING_BELOTE = 0, 1, 2, 3
TIES = ("trick1_order", "nobody")
TIE_TRICK1_ORDER, TIE_NOBODY = 0, 1
UNDERTRUMPS = ("free", "forced")
UNDERTRUMP_FREE, UNDERTRUMP_FORCED = 0, 1

# ---------------------------------------------------------------------------- scoring constants
#: bid multiplier M by ``Contract.double``, rules.md 2.5:  none contra recontra
MULT_SUIT = (1, 2, 4)
MULT_NT = (2, 3, 5)
#: belote's contra multiplier k, rules.md 6:            none contra surcontra
MULT_BELOTE = (1, 2, 4)
#: bazar's "made?" check counts a capot as this many card points (rules.md 2.5)
CAPOT_CARD_POINTS = 250
#: card tp of a whole deal: a failed contract pays the other side 16 beside the bid
#: (rules.md 2.5; in the 2-player games the failed taker's opponent writes 16, 3-5)
DEAL_TP = 16
#: a blot (trump K+Q held at the start of play): 2 tp in the Armenian families, 20 raw in belote
BLOT_TP = 2
BLOT_RAW = 20
#: what a side that was right gets beside the bid on a failed / doubled belote contract [002]
BELOTE_BASE = 160

__all__ = [name for name in dir() if name.isupper()]
