// blot-view: draws table snapshots (blot_env/table.py) served by agents/view/server.py.
// Plain JavaScript, no build step, nothing loaded from the network. The page holds no rules.
"use strict";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

// ------------------------------------------------------------------ drawing
function cardEl(card, extra) {
  if (!card) return el("span", { class: "card back" + (extra ? " " + extra : "") });
  const rank = card[0] === "T" ? "10" : card[0];
  const red = card[1] === "H" || card[1] === "D";
  return el("span", { class: "card" + (red ? " red" : "") + (extra ? " " + extra : ""), "data-card": card, title: card },
    rank, el("span", { class: "suit", text: SUITS[card[1]] }));
}

// an action string with suit symbols: "bid 9H" -> "bid 9♥"
function actionLabel(action) {
  return action.replace(/\b(10|[789TJQKA])([CDHS])\b/g, (m, r, s) => (r === "T" ? "10" : r) + SUITS[s])
    .replace(/^(bid \d+|bid kaput(?:\+\d+)? |name )([CDHS])\b/, (m, h, s) => h + SUITS[s]);
}

function isRed(action) { return /[HD]\b/.test(action) && !/NT$/.test(action); }

function places(n, bottom) {
  if (n === 2) return { [bottom]: "bottom", [1 - bottom]: "top" };
  const names = ["bottom", "left", "top", "right"];
  const out = {};
  for (let k = 0; k < 4; k++) out[(bottom + k) % 4] = names[k];
  return out;
}

function seatName(snap, s) {
  let name = "seat " + s;
  if (snap.players) name += " \u00b7 " + snap.players[s];
  if (s === snap.dealer) name += " (dealer)";
  return name;
}

// opts: {bottom, title, legalCards: Map card -> action id, onCard}
function renderTable(snap, opts) {
  opts = opts || {};
  const n = snap.num_players;
  const bottom = opts.bottom !== undefined ? opts.bottom : (snap.observer !== null ? snap.observer : 0);
  const pos = places(n, bottom);
  const felt = el("div", { class: "felt" });
  for (let s = 0; s < n; s++) {
    const hand = el("div", { class: "hand" });
    const cards = snap.hands[s] !== null ? snap.hands[s] : (snap.face_up ? snap.face_up[s] : []);
    for (const c of cards) {
      const action = opts.legalCards && opts.legalCards.get(c);
      const e = cardEl(c, action !== undefined ? "legal" : "");
      if (action !== undefined) e.addEventListener("click", () => opts.onCard(action));
      hand.append(e);
    }
    for (let k = 0; k < snap.hidden[s]; k++) hand.append(cardEl(null));
    felt.append(el("div", { class: "seat pos-" + pos[s] + (s === snap.to_act ? " to-act" : ""), "data-seat": s },
      el("div", { class: "name", text: seatName(snap, s) }), hand));
  }
  let trickCards = snap.trick.cards, caption = snap.phase === "play" ? "trick " + snap.trick.number : "", last = false;
  if (!trickCards.length && snap.last_trick) {
    trickCards = snap.last_trick.cards; last = true;
    caption = "trick " + snap.last_trick.number + " won by seat " + snap.last_trick.winner;
  }
  const trick = el("div", { class: "trick" + (last ? " last" : "") });
  for (const t of trickCards) trick.append(el("div", { class: "slot at-" + pos[t.seat] }, cardEl(t.card)));
  felt.append(trick);
  if (snap.open_card && snap.phase === "auction") {
    felt.append(el("div", { class: "open-card" }, cardEl(snap.open_card)));
    caption = "open card";
  }
  felt.append(el("div", { class: "caption", text: caption }));

  const panel = el("div", { class: "panel" });
  panel.append(el("div", { text: snap.preset + " \u00b7 " + snap.phase + (snap.step ? " (" + snap.step + ")" : "") }));
  panel.append(el("h4", { text: "Auction" }));
  const calls = el("div", { class: "calls" });
  for (const a of snap.auction) calls.append(el("span", { text: a.seat + ": " + actionLabel(a.call) }));
  if (!snap.auction.length) calls.append("-");
  panel.append(calls);
  if (snap.contract) {
    const c = snap.contract;
    panel.append(el("h4", { text: "Contract" }),
      el("div", { class: "contract", text: "seat " + c.seat + " " + actionLabel(c.call) + (c.double !== "none" ? " " + c.double : "") }));
  }
  if (snap.open_card && snap.phase !== "auction") panel.append(el("h4", { text: "Open card" }), el("div", { text: actionLabel(snap.open_card) }));
  const d = snap.declarations;
  if (d.announced.some((a) => a !== null) || d.shown.some((x) => x.length)) {
    panel.append(el("h4", { text: "Declarations" }));
    const ann = d.announced.map((a, s) => a === null ? null : s + ": " + a).filter((x) => x);
    if (ann.length) panel.append(el("div", { class: "announced", text: ann.join("  ") }));
    if (d.events.length) panel.append(el("div", { text: "heights: " + d.events.map((e) => e.seat + " " + e.event).join(", ") }));
    d.shown.forEach((cards, s) => { if (cards.length) panel.append(el("div", { class: "shown", text: "shown " + s + ": " + actionLabel(cards.join(" ")) })); });
  }
  if (snap.phase !== "auction") {
    panel.append(el("h4", { text: "Tricks \u00b7 card points" }),
      el("div", { class: "tricks", text: "team 0: " + snap.tricks[0] + " \u00b7 " + snap.card_points[0] + "   team 1: " + snap.tricks[1] + " \u00b7 " + snap.card_points[1] }));
  }
  if (snap.result) {
    const r = snap.result;
    const verdict = r.contract === null ? "passed out" : (r.made ? "made" : "failed");
    panel.append(el("h4", { text: "Deal score" }),
      el("div", { class: "result" }, el("span", { class: "score", text: r.score[0] + " : " + r.score[1] }), " (" + verdict + ")"));
  }
  if (snap.match) {
    const m = snap.match;
    panel.append(el("h4", { text: "Score sheet (to " + m.target + ")" }));
    const sheet = el("div", { class: "sheet" });
    m.deal_scores.forEach((ds, i) => sheet.append(el("div", { text: (i + 1) + ": " + ds[0] + " : " + ds[1] })));
    sheet.append(el("div", { class: "totals", text: "total " + m.totals[0] + " : " + m.totals[1] + (m.winner !== undefined && m.winner !== null ? "  winner: team " + m.winner : "") }));
    panel.append(sheet);
  }
  const box = el("div", { class: "table-box" });
  if (opts.title) box.append(el("div", { class: "table-title", text: opts.title }));
  box.append(el("div", { class: "table" }, felt, panel));
  return box;
}

// ------------------------------------------------------------------ replay
const replay = { deals: [], boards: [], tables: [], step: 0 };

async function loadDealList(selectId) {
  const data = await api("/api/deals");
  replay.deals = data.deals; replay.boards = data.boards;
  const sel = $("deal-select");
  sel.innerHTML = "";
  for (const d of data.deals) sel.append(el("option", { value: d.id, text: d.label + (d.board !== null ? "  [board " + (d.board + 1) + "]" : "") }));
  $("replay-empty").hidden = data.deals.length > 0;
  if (data.deals.length) {
    sel.value = selectId !== undefined ? selectId : data.deals[0].id;
    await showDeal();
  }
}

async function showDeal() {
  const id = Number($("deal-select").value);
  const deal = replay.deals.find((d) => d.id === id);
  if (!deal) return;
  const board = deal.board !== null ? replay.boards[deal.board] : null;
  $("board-label").hidden = !board;
  const ids = board && $("board-toggle").checked ? board : [id];
  const view = $("view-select").value || "all";
  replay.tables = await Promise.all(ids.map((i) => api("/api/deals/" + i + "?view=" + view)));
  const n = replay.tables[0].frames[0].num_players;
  const vs = $("view-select");
  if (vs.options.length !== n + 1) {
    vs.innerHTML = "";
    vs.append(el("option", { value: "all", text: "all hands" }));
    for (let s = 0; s < n; s++) vs.append(el("option", { value: s, text: "seat " + s + "'s view" }));
    vs.value = view;
  }
  const jump = $("jump");
  jump.innerHTML = "";
  const frames = replay.tables[0].frames;
  jump.append(el("option", { value: 0, text: "start" }));
  const firstPlay = frames.findIndex((f) => f.phase !== "auction");
  if (firstPlay > 0) jump.append(el("option", { value: firstPlay, text: "end of the auction" }));
  let seen = 0;
  frames.forEach((f, i) => {
    if (f.phase === "play" && f.trick.number > seen) { seen = f.trick.number; jump.append(el("option", { value: i, text: "trick " + seen })); }
  });
  jump.append(el("option", { value: frames.length - 1, text: "end" }));
  replay.step = Math.min(replay.step, frames.length - 1);
  drawReplay();
}

// the steps are the first table's; the other table of a board shows the same moment: as many
// cards played (the first frame with at least as many), or the same auction call
function maxStep() { return replay.tables[0].frames.length - 1; }

function played(f) { return f.phase === "auction" ? -1 : (f.trick.number - 1) * f.num_players + f.trick.cards.length; }

function alignedFrame(frames, ref, step) {
  const p = played(ref);
  if (p < 0) {
    const end = frames.findIndex((f) => f.phase !== "auction");
    return frames[Math.min(step, end < 0 ? frames.length - 1 : end - 1)];
  }
  const i = frames.findIndex((f) => played(f) >= p);
  return frames[i < 0 ? frames.length - 1 : i];
}

function drawReplay() {
  const box = $("tables");
  box.innerHTML = "";
  const view = $("view-select").value;
  const f0 = replay.tables[0].frames[replay.step];
  for (const t of replay.tables) {
    const f = t === replay.tables[0] ? f0 : alignedFrame(t.frames, f0, replay.step);
    box.append(renderTable(f, { title: t.label, bottom: view === "all" ? 0 : Number(view) }));
  }
  $("step-label").textContent = "step " + replay.step + " / " + maxStep();
  $("last-action").textContent = f0.last_action ? "seat " + f0.last_action.seat + ": " + actionLabel(f0.last_action.action) : "";
  $("prev").disabled = $("first").disabled = replay.step === 0;
  $("next").disabled = $("last").disabled = replay.step >= maxStep();
}

function go(step) {
  if (!replay.tables.length) return;
  replay.step = Math.max(0, Math.min(step, maxStep()));
  drawReplay();
}

async function openFiles(files) {
  let first;
  const msg = [];
  for (const file of files) {
    const text = await file.text();
    let recs;
    try {
      recs = file.name.endsWith(".jsonl") ? text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)) : JSON.parse(text);
      const res = await api("/api/deals", recs);
      if (first === undefined) first = res.added[0];
    } catch (e) { msg.push(file.name + ": " + e.message); }
  }
  if (msg.length) alert(msg.join("\n"));
  await loadDealList(first);
}

// ------------------------------------------------------------------ live tables
const live = { id: null, state: null, timer: null, options: null };

function seatInputs() {
  const preset = $("live-preset").value;
  const n = live.options.presets[preset];
  const box = $("live-seats");
  const old = Array.from(box.querySelectorAll("input")).map((i) => i.value);
  box.innerHTML = "";
  for (let s = 0; s < n; s++) {
    const def = old[s] || (s === 0 ? "human" : "rules");
    box.append(el("label", {}, "seat " + s + " ", el("input", { id: "live-seat-" + s, value: def, list: "agent-names" })));
  }
  const dl = el("datalist", { id: "agent-names" });
  for (const name of ["human", ...Object.keys(live.options.levels), ...live.options.agents.filter((a) => !/[A-Z]/.test(a))]) dl.append(el("option", { value: name }));
  box.append(dl);
}

async function startGame(ev) {
  ev.preventDefault();
  clearTimeout(live.timer);
  const preset = $("live-preset").value;
  const n = live.options.presets[preset];
  const seats = [];
  for (let s = 0; s < n; s++) seats.push($("live-seat-" + s).value.trim());
  const length = $("live-length").value;
  const body = { preset, seats, seed: Number($("live-seed").value || 0), match: length !== "deal", target: /^\d+$/.test(length) ? Number(length) : null };
  $("live-message").textContent = "";
  try { showLive(await api("/api/games", body)); } catch (e) { $("live-message").textContent = e.message; }
}

async function liveCall(path, body) {
  try { showLive(await api("/api/games/" + live.id + path, body)); } catch (e) { $("live-message").textContent = e.message; }
}

function showLive(state) {
  live.id = state.id; live.state = state;
  const snap = state.snapshot;
  const humans = state.human_seats;
  const legalCards = new Map();
  if (state.human_to_act) for (const a of snap.legal) if (a.action.startsWith("play ")) legalCards.set(a.action.slice(5), a.id);
  const box = $("live-table");
  box.innerHTML = "";
  box.append(renderTable(snap, { bottom: humans.length ? humans[0] : 0, legalCards, onCard: (id) => liveCall("/act", { action: id }),
    title: "table " + state.id + " \u00b7 deal " + (snap.deal_index + 1) }));
  const choices = $("choices");
  choices.innerHTML = "";
  $("live-record").hidden = false;
  $("live-record").href = "/api/games/" + state.id + "/record";
  if (snap.game_over) {
    $("live-status").textContent = "game over" + (state.saved ? " \u00b7 saved to " + state.saved : "");
    return;
  }
  if (snap.phase === "done") {
    $("live-status").textContent = "deal over";
    if (humans.length) choices.append(el("button", { id: "next-deal", type: "button", text: "next deal" }));
    else live.timer = setTimeout(() => liveCall("/step", {}), 3 * delay());
    const b = $("next-deal");
    if (b) b.addEventListener("click", () => liveCall("/step", {}));
    return;
  }
  if (state.human_to_act) {
    $("live-status").textContent = "your move, seat " + snap.to_act + (snap.step ? " (" + snap.step + ")" : "");
    for (const a of snap.legal) {
      const b = el("button", { type: "button", class: "choice" + (isRed(a.action) ? " red" : ""), "data-action": a.id, text: actionLabel(a.action) });
      b.addEventListener("click", () => liveCall("/act", { action: a.id }));
      choices.append(b);
    }
  } else {
    $("live-status").textContent = "seat " + snap.to_act + " (" + snap.players[snap.to_act] + ") to act";
    live.timer = setTimeout(() => liveCall("/step", {}), delay());
  }
}

function delay() { return Number($("live-delay").value); }

// ------------------------------------------------------------------ wiring
async function init() {
  for (const b of document.querySelectorAll(".tab")) {
    b.addEventListener("click", () => {
      for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === b);
      $("replay").hidden = b.dataset.tab !== "replay";
      $("live").hidden = b.dataset.tab !== "live";
    });
  }
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(replay.step - 1));
  $("next").addEventListener("click", () => go(replay.step + 1));
  $("last").addEventListener("click", () => go(maxStep()));
  $("jump").addEventListener("change", () => go(Number($("jump").value)));
  $("deal-select").addEventListener("change", () => { replay.step = 0; showDeal(); });
  $("view-select").addEventListener("change", showDeal);
  $("board-toggle").addEventListener("change", showDeal);
  $("file-input").addEventListener("change", (e) => openFiles(e.target.files));
  document.addEventListener("keydown", (e) => {
    if ($("replay").hidden || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") go(replay.step + 1);
    else if (e.key === "ArrowLeft") go(replay.step - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(maxStep());
  });
  live.options = await api("/api/options");
  const ps = $("live-preset");
  for (const p of Object.keys(live.options.presets)) ps.append(el("option", { value: p, text: p + " (" + live.options.presets[p] + " players)" }));
  ps.value = "bazar-app";
  ps.addEventListener("change", seatInputs);
  seatInputs();
  $("new-game").addEventListener("submit", startGame);
  const dl = () => { $("live-delay-label").textContent = delay() + " ms"; };
  $("live-delay").addEventListener("input", dl); dl();
  await loadDealList();
  document.body.dataset.ready = "1";
}

init().catch((e) => { document.body.dataset.ready = "error"; document.body.prepend(el("p", { class: "message", text: e.message })); });
