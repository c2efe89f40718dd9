// The scoreboard page: draws the board the server computed, never a road of its own.
// Every server-sent event is one journal record (its id is the record's id). The first
// carries the whole board; after it, the last record of each batch carries what changed
// (controller/web/board_delta.py) since the board this page drew, or the board whole again.
// The browser's EventSource resends the last id on reconnecting (Last-Event-ID), so the
// server sends exactly the records after it.
"use strict";

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RED_SUITS = new Set(["H", "D"]);
const WINNER_CHARS = { banker: "莊", player: "閒", tie: "和" };
const WINNER_NAMES = { banker: "BANKER 莊", player: "PLAYER 閒", tie: "TIE 和" };
const DERIVED = ["big_eye", "small", "cockroach"];
const REOPEN_MS = 1000;
const ROAD_ROWS = 6;
// A cell is never narrower than this: a road with more columns than its width holds at
// this size wraps into a second band of six rows below the first (a phone, a long shoe).
const MIN_CELL_PX = 14;
const BANNER_HEADS = { hold: "HELD 暫停", alarm: "ALARM 警報" };

// What the page has seen, for people debugging a screen and for the browser tests.
const state = { seen: [], renders: 0, lastId: null, board: null, opened: 0 };
window.cardshoe = state;

function el(id) { return document.getElementById(id); }

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function cardNode(card) {
  if (card === null) return make("span", "card unknown", "?");
  if (card === "7*") return make("span", "card", "7");
  const rank = card.slice(0, -1) === "T" ? "10" : card.slice(0, -1);
  const suit = card.slice(-1);
  return make("span", RED_SUITS.has(suit) ? "card red" : "card", rank + (SUITS[suit] || suit));
}

function handTotal(cards) {
  let total = 0;
  for (const card of cards) {
    if (card === null) return "";
    const rank = card === "7*" ? "7" : card.slice(0, -1);
    total += rank === "A" ? 1 : "TJQK".includes(rank) ? 0 : Number(rank);
  }
  return cards.length ? String(total % 10) : "";
}

function placed(perBand, cell, className) {
  const node = make("div", "cell " + className);
  node.style.gridColumn = String((cell.col % perBand) + 1);
  node.style.gridRow = String(Math.floor(cell.col / perBand) * ROAD_ROWS + cell.row + 1);
  node.dataset.col = cell.col;
  node.dataset.row = cell.row;
  return node;
}

// The road's grid: at least its data-min-cols columns (an empty board still shows its
// grid), as many as the shoe has filled, and no more than its width holds at MIN_CELL_PX;
// beyond that the road wraps into bands. Returns the columns a band holds.
function fitColumns(road, cells) {
  const least = Number(road.dataset.minCols || 12);
  const widest = cells.reduce((most, cell) => Math.max(most, cell.col + 1), 0);
  const fit = Math.max(1, Math.floor(road.clientWidth / MIN_CELL_PX));
  const bands = Math.max(1, Math.ceil(widest / fit));
  const perBand = bands > 1 ? fit : Math.min(Math.max(least, widest), fit);
  road.style.setProperty("--cols", String(perBand));
  road.style.setProperty("--rows", String(bands * ROAD_ROWS));
  return perBand;
}

function marks(node, cell) {
  node.dataset.playerPair = cell.player_pair;
  node.dataset.bankerPair = cell.banker_pair;
  node.dataset.natural = cell.natural;
  if (cell.banker_pair) node.append(make("span", "pair banker-pair"));
  if (cell.player_pair) node.append(make("span", "pair player-pair"));
  if (cell.natural) node.append(make("span", "natural-mark", "★"));
}

function drawBead(cells) {
  const road = el("bead");
  road.classList.add("bead");
  const perBand = fitColumns(road, cells);
  road.replaceChildren(...cells.map((cell) => {
    const node = placed(perBand, cell, cell.winner);
    node.dataset.winner = cell.winner;
    node.append(make("span", "disc", WINNER_CHARS[cell.winner]));
    marks(node, cell);
    return node;
  }));
}

function drawBig(cells) {
  const road = el("big");
  const perBand = fitColumns(road, cells);
  road.replaceChildren(...cells.map((cell) => {
    const node = placed(perBand, cell, cell.winner);
    node.dataset.winner = cell.winner;
    node.dataset.ties = cell.ties;
    node.append(make("span", "ring"));
    if (cell.ties > 0) node.append(make("span", "tie-slash"));
    if (cell.ties > 1) node.append(make("span", "tie-count", String(cell.ties)));
    marks(node, cell);
    return node;
  }));
}

function markNode(road, colour) {
  return make("span", "mark " + road + " " + (colour || "none"));
}

function drawDerived(name, cells) {
  const road = el(name);
  const perBand = fitColumns(road, cells);
  road.replaceChildren(...cells.map((cell) => {
    const node = placed(perBand, cell, cell.colour);
    node.dataset.colour = cell.colour;
    node.append(markNode(name, cell.colour));
    return node;
  }));
}

function drawAsk(ask) {
  for (const winner of ["banker", "player"]) {
    el("ask-" + winner).replaceChildren(...DERIVED.map((road) => {
      const node = markNode(road, ask[winner][road]);
      node.dataset.road = road;
      node.dataset.colour = ask[winner][road] || "";
      return node;
    }));
  }
}

function drawStats(stats, rounds) {
  for (const key of ["banker", "player", "tie", "player_pair", "banker_pair", "natural"]) {
    el("stat-" + key.replace("_", "-")).textContent = stats[key];
  }
  const sevens = stats.super_sevens !== null && stats.super_sevens !== undefined;
  el("stat-sevens-row").hidden = !sevens;
  el("stat-pairs-row").hidden = sevens;
  if (sevens) el("stat-super-sevens").textContent = stats.super_sevens;
  el("stat-rounds").textContent = rounds;
}

function drawHands(table) {
  // Until the next round's first card, the layout keeps the last round's cards, and says so.
  const round = table.round;
  const last = table.last_result;
  const showing = round.player.length || round.banker.length || !last ? round : last;
  el("round-no").textContent = round.round_no === null ? "—" : round.round_no;
  el("phase").textContent = table.phase + (round.demo ? " (demonstration)" : "");
  const caption = el("hands-caption");
  caption.hidden = showing !== last || last.round === round.round_no;
  caption.textContent = caption.hidden ? "" :
    "Cards of the last round, round " + last.round + " · 上一局（第" + last.round + "局）的牌";
  for (const hand of ["player", "banker"]) {
    el(hand + "-cards").replaceChildren(...showing[hand].map(cardNode));
    el(hand + "-total").textContent = handTotal(showing[hand]);
  }
}

function drawLastResult(last) {
  const big = el("last-result");
  if (!last) {
    big.textContent = "—";
    big.className = "last-result";
    el("last-detail").textContent = "";
    return;
  }
  if (last.void) {
    big.textContent = "VOID";
    big.className = "last-result void";
    const why = last.void_notice.what;
    el("last-detail").textContent = "round " + last.round + ": " + why.en + " · " + why.zh;
    return;
  }
  big.textContent = WINNER_NAMES[last.winner];
  big.className = "last-result " + last.winner;
  const flags = [];
  if (last.natural) flags.push("natural");
  if (last.player_pair) flags.push("P pair");
  if (last.banker_pair) flags.push("B pair");
  el("last-detail").textContent = "round " + last.round + ": " + last.player_total + " – " +
    last.banker_total + (flags.length ? " · " + flags.join(" · ") : "");
}

// One banner line: what it is, what happened and what to do, in English and Chinese, in
// the words the board carries for its code (the code itself is never shown).
function bannerLine(head, notice) {
  const line = make("div", "banner-line");
  line.append(
    make("span", "banner-head", head),
    make("span", "banner-what", notice.what.en + " · " + notice.what.zh),
    make("span", "banner-todo", notice.todo.en + " · " + notice.todo.zh),
  );
  return line;
}

function drawBanner(table) {
  // Holds while they last; an alarm and a void for the round they came in, and on while
  // bets are open for the next one, so the players see why that round settled nothing.
  const banner = el("banner");
  const lines = table.hold_notices.map((notice) => bannerLine(BANNER_HEADS.hold, notice));
  const last = table.last_result;
  const roundNo = table.round.round_no;
  const betting = table.phase === "betting";
  const showing = (round) => round !== null && (round === roundNo ||
    (betting && last !== null && round === last.round));
  const alarm = table.alarms[table.alarms.length - 1];
  if (alarm && showing(alarm.round)) lines.push(bannerLine(BANNER_HEADS.alarm, alarm.notice));
  const voided = last !== null && last.void !== null && showing(last.round);
  if (voided) {
    const head = "ROUND " + last.round + " VOID · 第" + last.round + "局無效";
    lines.push(bannerLine(head, last.void_notice));
  }
  banner.hidden = !lines.length;
  banner.className = lines.length === Number(voided) ? "banner void" : "banner";
  banner.replaceChildren(...lines);
}

function drawHeader(board) {
  const table = board.table;
  el("table-id").textContent = table.table_id ? "· table " + table.table_id : "";
  el("game").textContent = board.game || "no shoe yet";
  const parts = [];
  if (table.decks) parts.push(table.decks + (table.decks === 1 ? " deck" : " decks"));
  if (table.device_kind) parts.push(table.device_kind === "shoe" ? "manual shoe" : "shuffler-dealer");
  if (board.options) {
    parts.push("commission " + board.options.commission, "paytable " + board.options.paytable);
  }
  const options = el("options");
  // Without the configuration the page knows the options by their fingerprint only: shown
  // abbreviated, whole in the tooltip.
  const fingerprint = !board.options && table.fingerprint;
  if (fingerprint) parts.push("options " + table.fingerprint.slice(0, 12) + "…");
  options.textContent = parts.join(" · ");
  options.title = fingerprint ? "options fingerprint " + table.fingerprint : "";
  el("shoe-id").textContent = board.shoe_id || "—";
  el("cards-left").textContent = board.shoe_id ? table.cards_left : "—";
}

function render(board) {
  state.board = board;
  drawHeader(board);
  drawBead(board.bead);
  drawBig(board.big);
  for (const road of DERIVED) drawDerived(road, board[road]);
  drawAsk(board.ask);
  drawStats(board.stats, board.rounds);
  drawHands(board.table);
  drawLastResult(board.table.last_result);
  drawBanner(board.table);
  state.renders += 1;
}

// A new width can change how many columns a road holds: draw the board again.
window.addEventListener("resize", () => { if (state.board !== null) render(state.board); });

function setStatus(text) {
  const status = el("status");
  status.textContent = text;
  status.className = "status " + text;
}

// The new value a delta makes of the old one: {"v"} whole, {"o", "x"} an object's changed
// and lost keys, {"k", "a"} a list's kept head and appended tail.
function applyDelta(old, delta) {
  if ("v" in delta) return delta.v;
  if ("k" in delta) return old.slice(0, delta.k).concat(delta.a);
  const value = Object.assign({}, old);
  for (const key of delta.x || []) delete value[key];
  for (const [key, change] of Object.entries(delta.o)) value[key] = applyDelta(old[key], change);
  return value;
}

function onRecord(message, source) {
  const data = JSON.parse(message.data);
  if (data.change && (state.board === null || state.board.record_id !== data.change.base)) {
    // Not the board this change was made from (never expected): start again as a new page.
    source.close();
    state.lastId = null;
    open();
    return;
  }
  if (data.kind !== "snapshot") state.seen.push(data.id);
  state.lastId = data.id;
  if (data.board !== null) render(data.board);
  else if (data.change) render(applyDelta(state.board, data.change.delta));
}

function open() {
  const url = state.lastId === null ? "/events" : "/events?after=" + state.lastId;
  const source = new EventSource(url);
  state.opened += 1;
  source.addEventListener("open", () => setStatus("live"));
  source.addEventListener("record", (message) => onRecord(message, source));
  source.addEventListener("error", () => {
    setStatus("reconnecting");
    // The browser retries by itself (sending Last-Event-ID) unless it gave up on the
    // stream; then a new one asks for the records after the last one drawn.
    if (source.readyState === EventSource.CLOSED) {
      setTimeout(open, REOPEN_MS);
    }
  });
}

open();
