// The pit's pages, drawn from its JSON API (the same API other systems read), and
// redrawn when the server's event stream says a table changed. Every text from the
// floor goes in as textContent, never as HTML.
"use strict";

const state = {
  session: null, events: null, redraw: null, drawing: Promise.resolve(), pending: false, again: false,
  notes: new Map(),
};
/* notes: what a supervisor has typed into each alarm's note, by alarm id, until it is sent. The
   alarms page is drawn again on every floor change; a form drawn afresh starts from this. */
const REDRAW_GAP_MS = 150;
const API_TIMEOUT_MS = 15000;
/* Draws run one at a time, in order: a read the server never answers must not hold every later
   draw, so it fails after this long, and the page says so. */
/* After a redraw the page waits this long before the next, however many changes come. */

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function showProblem(text) {
  const box = document.getElementById("problem");
  box.textContent = text || "";
  box.hidden = !text;
}

async function api(path, options) {
  const init = Object.assign({ credentials: "same-origin", headers: {} }, options || {});
  if (init.body !== undefined) {
    init.method = init.method || "POST";
    init.headers["Content-Type"] = "application/json";
    if (state.session) init.headers["X-CSRF-Token"] = state.session.csrf_token;
    init.body = JSON.stringify(init.body);
  }
  init.signal = AbortSignal.timeout(API_TIMEOUT_MS);
  const response = await fetch(path, init);
  const body = await response.json().catch(() => ({ error: `answer ${response.status}` }));
  if (response.status === 401 && path !== "/api/login") {
    state.session = null;
    showLogin();
  }
  if (!response.ok) {
    const failure = new Error(body.error || `answer ${response.status}`);
    failure.status = response.status;
    throw failure;
  }
  return body;
}

function showLogin() {
  document.getElementById("login").hidden = false;
  document.getElementById("nav").hidden = true;
  document.getElementById("who").hidden = true;
  document.getElementById("page").replaceChildren();
  if (state.events) state.events.close();
  state.events = null;
}

function signedIn(session) {
  state.session = session;
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  document.getElementById("who").hidden = false;
  document.getElementById("user").textContent = session.user;
  document.getElementById("role").textContent = session.role;
  listen();
  route();
}

function listen() {
  if (state.events) return;
  const status = document.getElementById("status");
  const events = new EventSource("/api/events");
  state.events = events;
  events.onopen = () => { status.className = "status live"; status.textContent = "live"; };
  events.onerror = () => { status.className = "status reconnecting"; status.textContent = "reconnecting"; };
  events.addEventListener("tables", () => scheduleRedraw());
}

function scheduleRedraw() {
  // Many batches a second become one redraw: a change after a quiet spell is drawn at once,
  // the changes during a redraw and the REDRAW_GAP_MS after it by one more redraw.
  if (!state.redraw) return;
  if (state.pending) { state.again = true; return; }
  state.pending = true;
  state.redraw().finally(() => setTimeout(() => {
    state.pending = false;
    if (state.again) { state.again = false; scheduleRedraw(); }
  }, REDRAW_GAP_MS));
}

function go(path) {
  history.pushState(null, "", path);
  route();
}

function link(path, ...children) {
  return el("a", { href: path, onclick: (event) => {
    if (event.ctrlKey || event.metaKey) return;
    event.preventDefault(); go(path);
  } }, ...children);
}

function route() {
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  let draw;
  if (parts.length === 0) draw = drawFloor;
  else if (parts[0] === "alarms") draw = drawAlarms;
  else if (parts[0] === "pace") draw = drawPace;
  else if (parts[0] === "tables" && parts.length === 2) draw = () => drawTable(parts[1]);
  else if (parts[0] === "tables" && parts.length === 5) draw = () => drawRound(parts[1], parts[3], parts[4]);
  else draw = async () => { show(el("p", {}, "No such page.")); };
  // One draw at a time, in the order asked. Run side by side, a draw that read the API
  // before an acknowledgement could be shown after the one that read it after, and the
  // acknowledged alarm would stay on the page until the floor's next change.
  state.redraw = () => {
    state.drawing = state.drawing.then(async () => {
      try { await draw(); showProblem(""); } catch (failure) {
        if (failure.status !== 401) showProblem(failure.message);
      }
      await refreshAlarmCount();
    });
    return state.drawing;
  };
  state.redraw();
}

function page() { return document.getElementById("page"); }

function show(...nodes) {
  // A note being typed keeps its focus and caret across the redraw (state.notes keeps its text).
  const typing = document.activeElement;
  const noteFor = typing && typing.dataset ? typing.dataset.noteFor : undefined;
  const caret = noteFor === undefined ? null : [typing.selectionStart, typing.selectionEnd];
  page().replaceChildren(...nodes.filter((node) => node !== null && node !== undefined));
  if (noteFor === undefined) return;
  const again = [...page().querySelectorAll("input[data-note-for]")]
    .find((input) => input.dataset.noteFor === noteFor);
  if (again) {
    again.focus();
    again.setSelectionRange(caret[0], caret[1]);
  }
}

async function refreshAlarmCount() {
  if (!state.session) return;
  try {
    const open = await api("/api/alarms?state=open");
    document.getElementById("open-alarms").textContent = open.length ? String(open.length) : "";
  } catch (failure) { /* shown by the page's own read */ }
}

function results(list) {
  return el("span", { class: "results" },
    (list || []).map((winner) => el("span", { class: `result ${winner}`, title: winner },
      winner ? winner[0].toUpperCase() : "?")));
}

const filters = { game: "", attention: false };

async function drawFloor() {
  const tiles = await api("/api/tables");
  const games = [...new Set(tiles.map((tile) => tile.game).filter(Boolean))].sort();
  const shown = tiles.filter((tile) =>
    (!filters.game || tile.game === filters.game) && (!filters.attention || tile.needs_attention));
  const gameChoice = el("select", { id: "filter-game", onchange: (event) => {
    filters.game = event.target.value; drawFloor();
  } }, el("option", { value: "" }, "every game"),
    games.map((game) => el("option", { value: game, selected: game === filters.game }, game)));
  const attention = el("input", { type: "checkbox", id: "filter-attention", checked: filters.attention,
    onchange: (event) => { filters.attention = event.target.checked; drawFloor(); } });
  const rounds = tiles.reduce((sum, tile) => sum + tile.rounds, 0);
  const summary = `${shown.length} of ${tiles.length} tables, ${rounds} rounds`;
  const nodes = shown.map(drawnTile);
  const drawn = document.getElementById("tiles");
  if (drawn && drawn.dataset.games === games.join(" ")) {
    document.getElementById("floor-summary").textContent = summary;
    placeTiles(drawn, nodes);
    return;
  }
  show(
    el("div", { class: "filters" }, el("label", {}, "Game ", gameChoice),
      el("label", {}, attention, " needs attention")),
    el("div", { class: "summary", id: "floor-summary" }, summary),
    el("div", { class: "tiles", id: "tiles", "data-games": games.join(" ") }, nodes));
}

const tilesDrawn = new Map();
/* Each table's tile as last drawn, with the answer it was drawn from: a change redraws the
   tiles that changed, not a thousand. */

function drawnTile(tile) {
  const answer = JSON.stringify(tile);
  const drawn = tilesDrawn.get(tile.table_id);
  if (drawn && drawn.answer === answer) return drawn.node;
  const node = tileNode(tile);
  node.dataset.key = tile.table_id;
  tilesDrawn.set(tile.table_id, { answer, node });
  return node;
}

function placeTiles(container, nodes) {
  // The floor's tiles in place: a changed tile replaces its old node, the others stay put.
  nodes.forEach((node, index) => {
    const present = container.children[index];
    if (present === node) return;
    if (present && present.dataset.key === node.dataset.key) present.replaceWith(node);
    else container.insertBefore(node, present || null);
  });
  while (container.children.length > nodes.length) container.lastElementChild.remove();
}

function tileNode(tile) {
  const online = tile.online === null ? "no status" : tile.online ? "online" : "offline";
  const classes = ["tile", tile.online === false ? "offline" : "", tile.needs_attention ? "attention" : ""];
  return link(`/tables/${encodeURIComponent(tile.table_id)}`,
    el("div", { class: classes.join(" "), "data-table": tile.table_id, "data-rounds": tile.rounds },
      el("h2", {}, el("span", {}, tile.table_id), el("span", { class: "dim" }, online)),
      el("div", { class: "line" }, `${tile.game || "no game yet"} · ${tile.state}`),
      el("div", { class: "line" }, `shoe ${tile.shoe_id || "—"} · round ${tile.round_no ?? "—"}`),
      el("div", { class: "line" }, results(tile.last_results)),
      el("div", { class: "line" }, `rounds ${tile.rounds} · ${tile.rounds_last_hour}/h · dealer ${tile.dealer || "—"}`),
      el("div", { class: "line" }, tile.chain_verified ? "chain verified" : el("span", { class: "flag" }, "chain NOT verified"),
        ` · lag ${tile.lag_records} (${tile.lag_s.toFixed(1)} s)`),
      tile.open_holds.length ? el("div", { class: "line flag" }, `held: ${tile.open_holds.join(", ")}`) : null,
      tile.unacknowledged_alarms ? el("div", { class: "line flag alarms" },
        `${tile.unacknowledged_alarms} alarm${tile.unacknowledged_alarms > 1 ? "s" : ""} to acknowledge`) : null));
}

function tablePath(tableId, query) {
  const search = new URLSearchParams(Object.entries(query).filter(([, value]) => value !== null && value !== undefined));
  const text = search.toString();
  return `/tables/${encodeURIComponent(tableId)}${text ? `?${text}` : ""}`;
}

async function drawTable(tableId) {
  const asked = new URLSearchParams(location.search);
  const shoe = asked.get("shoe"), before = asked.get("before");
  const view = await api(`/api${tablePath(tableId, { shoe, before })}`);
  const board = view.board;
  show(
    el("h1", {}, `Table ${tableId}`),
    el("div", { class: "tiles" }, tileNode(view.table)),
    el("h2", {}, "Scoreboard"),
    board ? el("div", { id: "board" },
      el("p", {}, `${board.game} · shoe ${board.shoe_id} · ${board.rounds} rounds · `,
        results((board.bead || []).map((cell) => cell.winner).slice(-30)))) : el("p", {}, "No shoe yet."),
    el("h2", {}, view.latest ? "Latest shoes" : "Shoes"),
    el("ul", { id: "shoes" }, view.shoes.map((item) => el("li", {},
      link(tablePath(tableId, { shoe: item.shoe_id, before }), item.shoe_id),
      ` ${item.game}, started ${item.started_at}`))),
    el("p", { id: "shoe-pages" },
      view.earlier_before ? link(tablePath(tableId, { before: view.earlier_before }), "Earlier shoes") : null,
      view.earlier_before && !view.latest ? " · " : null,
      view.latest ? null : link(tablePath(tableId, { before: view.later_before }), "Later shoes")),
    el("h2", {}, `Rounds of shoe ${view.shoe_id || "—"}`),
    el("div", { class: "scroll" }, el("table", { class: "list", id: "rounds" },
      el("tr", {}, el("th", {}, "round"), el("th", {}, "time (UTC)"), el("th", {}, "result"),
        el("th", {}, "player"), el("th", {}, "banker")),
      view.rounds.map((item) => el("tr", {},
        el("td", {}, link(`/tables/${encodeURIComponent(tableId)}/rounds/${encodeURIComponent(view.shoe_id)}/${item.round_no}`, String(item.round_no))),
        el("td", {}, item.time),
        el("td", {}, item.void ? `void: ${item.void}` : item.winner),
        el("td", { class: "cards" }, (item.player || []).join(" ")),
        el("td", { class: "cards" }, (item.banker || []).join(" ")))))));
}

async function drawRound(tableId, shoeId, roundNo) {
  const recall = await api(`/api/tables/${encodeURIComponent(tableId)}/rounds/${encodeURIComponent(shoeId)}/${encodeURIComponent(roundNo)}`);
  const result = recall.result;
  show(
    el("h1", {}, `Table ${tableId}, shoe ${shoeId}, round ${roundNo}`),
    el("p", { class: "noprint" }, el("button", { type: "button", onclick: () => window.print() }, "Print for the dispute file")),
    el("p", {}, `dealer signed in: ${recall.dealer || "—"}`, recall.demo ? " (demonstration round)" : ""),
    el("p", { class: "cards", id: "hands" }, `player: ${recall.player.join(" ") || "—"} · banker: ${recall.banker.join(" ") || "—"}`),
    recall.void ? el("p", { class: "flag" }, `void: ${recall.void}`) :
      result ? el("p", {}, `result: ${result.winner}, player ${result.player_total}, banker ${result.banker_total}`) : null,
    recall.settlement ? el("p", {}, "settlement per unit: " +
      Object.entries(recall.settlement).map(([bet, value]) => `${bet} ${value}`).join(", ")) : null,
    carriedList(recall),
    el("h2", {}, "Cards in dealt order"),
    el("div", { class: "scroll" }, el("table", { class: "list", id: "cards" },
      el("tr", {}, el("th", {}, "record"), el("th", {}, "read at (UTC)"), el("th", {}, "card"),
        el("th", {}, "physical id"), el("th", {}, "to")),
      recall.cards.map((card) => el("tr", {}, el("td", {}, card.record),
        el("td", {}, recall.card_times[String(card.record)]), el("td", { class: "cards" }, card.card || "??"),
        el("td", {}, card.physical_id || "unread"), el("td", {}, card.reason ? `${card.to} (${card.reason})` : card.to))))),
    recall.corrections.length ? el("h2", {}, "Corrections") : null,
    el("ul", {}, recall.corrections.map((fix) => el("li", {},
      `[${fix.record}] ${fix.irregularity} corrected (${fix.correction}): ${fix.card} to ${fix.to}`))),
    recall.irregularities.length ? el("h2", {}, "Irregularities") : null,
    el("ul", {}, recall.irregularities.map((found) => el("li", {},
      `[${found.record}] ${found.code}: ${found.consequence} (${found.detail})`))),
    recall.commands.length ? el("h2", {}, "Commands") : null,
    el("ul", {}, recall.commands.map((command) => el("li", {},
      `[${command.record}] ${command.time} ${command.kind} by ${command.by ? command.by.user : "—"}`))),
    el("h2", {}, "Records and their hash check"),
    el("div", { class: "scroll" }, el("table", { class: "list", id: "records" },
      el("tr", {}, el("th", {}, "id"), el("th", {}, "time (UTC)"), el("th", {}, "kind"), el("th", {}, "hash"), el("th", {}, "check")),
      recall.record_checks.map((check) => el("tr", {}, el("td", {}, check.id), el("td", {}, check.time),
        el("td", {}, check.kind), el("td", { class: "cards" }, check.hash.slice(0, 16) + "…"),
        el("td", {}, check.hash_ok && check.links ? "ok" : "FAILED"))))));
}

const CARRIED_WENT = {
  decided: "decided by this round's result",
  returned: "returned to the players undecided",
  carried: "carried on by this round's tie",
};

function carriedList(recall) {
  // The bets a tie carried into the round (Art. 11) and where they went, and this round's
  // own tie bets: as `shoectl journal round` words them.
  const lines = [];
  const into = recall.carried_in;
  if (into) {
    const went = into.went ? `${CARRIED_WENT[into.went]} [${into.went_record}]` : "on the layout, the round not finished";
    lines.push(`bets carried in [${into.record}] from round ${into.from_round} (${into.option}): ${went}`);
  }
  const out = recall.carried_out;
  if (out) {
    lines.push(out.returned ? `tie bets returned [${out.record}]: ${out.returned}`
      : `bets carried out [${out.record}] into round ${out.into_round} (${out.option})`);
  }
  if (!lines.length) return null;
  return el("div", {}, el("h2", {}, "Bets carried"),
    el("ul", { id: "carried" }, lines.map((line) => el("li", {}, line))));
}

async function drawAlarms() {
  const all = new URLSearchParams(location.search).get("state") === "all";
  const alarms = await api(`/api/alarms?state=${all ? "all" : "open"}`);
  const mayAck = state.session.role !== "viewer";
  show(
    el("div", { class: "filters" }, el("h1", {}, all ? "Every alarm" : "Alarms to acknowledge"),
      link(all ? "/alarms" : "/alarms?state=all", all ? "only open ones" : "show acknowledged too")),
    alarms.length ? null : el("p", { id: "no-alarms" }, "No alarm waits."),
    el("div", { class: "scroll" }, el("table", { class: "list", id: "alarms" },
      el("tr", {}, el("th", {}, "raised (UTC)"), el("th", {}, "table"), el("th", {}, "kind"),
        el("th", {}, "detail"), el("th", {}, "acknowledged")),
      alarms.map((alarm) => el("tr", {
        class: `alarm ${alarm.acknowledged_by ? "done" : "open"} ${alarm.overdue ? "overdue" : ""}`,
        "data-alarm": alarm.id },
        el("td", {}, alarm.raised_at, alarm.overdue ? el("b", { class: "flag" }, " overdue") : null),
        el("td", {}, link(`/tables/${encodeURIComponent(alarm.table_id)}`, alarm.table_id)),
        el("td", {}, alarm.kind), el("td", {}, alarm.detail),
        el("td", {}, alarm.acknowledged_by
          ? `${alarm.acknowledged_by} at ${alarm.acknowledged_at}: ${alarm.note}`
          : mayAck ? ackForm(alarm) : "—"))))));
}

function ackForm(alarm) {
  const note = el("input", { name: "note", placeholder: "what was done", required: true,
    "aria-label": "note", "data-note-for": alarm.id });
  note.value = state.notes.get(alarm.id) || "";
  note.addEventListener("input", () => state.notes.set(alarm.id, note.value));
  return el("form", { class: "ack", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api(`/api/alarms/${encodeURIComponent(alarm.id)}/ack`, { body: { note: note.value } });
      state.notes.delete(alarm.id);
      await state.redraw();
    } catch (failure) { showProblem(failure.message); }
  } }, note, el("button", { type: "submit" }, "Acknowledge"));
}

function svgNode(parent, tag, attrs, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.append(node);
  return node;
}

function barPlot(values, label, options) {
  // Rounds per hour of the floor's day, one bar an hour; small (a dealer's row) without labels.
  const small = Boolean(options && options.small);
  const width = small ? 240 : 720, height = small ? 28 : 160, top = Math.max(1, ...values);
  const bar = width / values.length;
  const svg = svgNode(null, "svg", { viewBox: `0 0 ${width} ${height + (small ? 0 : 16)}`,
    class: small ? "plot mini" : "plot", role: "img", "aria-label": label });
  values.forEach((value, hour) => {
    const tall = (value / top) * (height - (small ? 2 : 12));
    const rect = svgNode(svg, "rect", { class: "bar", x: hour * bar + 1, width: Math.max(1, bar - 2),
      y: height - tall, height: tall, "data-hour": hour, "data-rounds": value });
    svgNode(rect, "title", {}, `${hour}:00 ${value} rounds`);
    if (!small) svgNode(svg, "text", { x: hour * bar + 4, y: height + 12 }, String(hour));
  });
  return svg;
}

const LOST_SHOWN = 20;
/* The time-lost plot names the tables that lost the most; the table below lists them all. */

function lostPlot(tables) {
  // Per table, minutes held (hold.started to hold.ended) and shuffling (shoe end to next round).
  const worst = tables.filter((row) => row.hold_s + row.shuffle_s > 0)
    .sort((a, b) => (b.hold_s + b.shuffle_s) - (a.hold_s + a.shuffle_s)).slice(0, LOST_SHOWN);
  if (!worst.length) return el("p", { id: "lost-plot" }, "No time lost to holds or shuffles.");
  const row = 18, name = 70, width = 720, top = Math.max(1, ...worst.map((r) => r.hold_s + r.shuffle_s));
  const svg = svgNode(null, "svg", { viewBox: `0 0 ${width} ${worst.length * row + 4}`, class: "plot",
    id: "lost-plot", role: "img", "aria-label": "minutes lost to holds and shuffles per table" });
  worst.forEach((item, index) => {
    const y = index * row + 2, scale = (width - name - 90) / top;
    svgNode(svg, "text", { x: 2, y: y + 12 }, item.name);
    const held = svgNode(svg, "rect", { class: "held", x: name, y, height: row - 4, width: item.hold_s * scale });
    svgNode(held, "title", {}, `${item.name} held ${minutes(item.hold_s)}`);
    const shuffled = svgNode(svg, "rect", { class: "shuffling", x: name + item.hold_s * scale, y,
      height: row - 4, width: item.shuffle_s * scale });
    svgNode(shuffled, "title", {}, `${item.name} shuffling ${minutes(item.shuffle_s)}`);
    svgNode(svg, "text", { x: name + (item.hold_s + item.shuffle_s) * scale + 4, y: y + 12 },
      minutes(item.hold_s + item.shuffle_s));
  });
  return svg;
}

function minutes(seconds) {
  return seconds < 60 ? `${Math.round(seconds)} s` : `${(seconds / 60).toFixed(1)} min`;
}

async function drawPace() {
  const chosen = new URLSearchParams(location.search).get("date");
  const pace = await api(chosen ? `/api/pace?date=${encodeURIComponent(chosen)}` : "/api/pace");
  const total = Array(24).fill(0);
  pace.tables.forEach((row) => row.rounds_by_hour.forEach((value, hour) => { total[hour] += value; }));
  const day = el("input", { type: "date", value: pace.date, onchange: (event) => go(`/pace?date=${event.target.value}`) });
  const perHour = (row) => (row.rounds / Math.max(1, row.rounds_by_hour.filter(Boolean).length)).toFixed(1);
  show(
    el("div", { class: "filters" }, el("h1", {}, "Pace"), el("label", { id: "pace-day" }, `Day (${pace.time_zone}) `, day)),
    el("p", {}, `Rounds per hour of the day (${pace.time_zone}), the whole floor:`),
    el("div", { id: "pace-plot" }, barPlot(total, "rounds per hour of day")),
    el("h2", {}, "Time lost to holds and shuffles"),
    el("p", { id: "lost-total" }, `held ${minutes(pace.hold_s)}, shuffling ${minutes(pace.shuffle_s)} in all`,
      el("span", { class: "key held" }, "held"), el("span", { class: "key shuffling" }, "shuffling")),
    lostPlot(pace.tables),
    el("h2", {}, "Dealers"),
    el("div", { class: "scroll" }, el("table", { class: "list", id: "pace-dealers" },
      el("tr", {}, el("th", {}, "dealer"), el("th", {}, "rounds"), el("th", {}, "rounds per active hour"),
        el("th", {}, "by hour of day")),
      pace.dealers.map((row) => el("tr", { "data-dealer": row.name }, el("td", {}, row.name),
        el("td", {}, row.rounds), el("td", {}, perHour(row)),
        el("td", {}, barPlot(row.rounds_by_hour, `${row.name}: rounds per hour of day`, { small: true })))))),
    el("h2", {}, "Tables"),
    el("div", { class: "scroll" }, el("table", { class: "list", id: "pace-tables" },
      el("tr", {}, el("th", {}, "table"), el("th", {}, "rounds"), el("th", {}, "rounds per active hour"),
        el("th", {}, "held"), el("th", {}, "shuffling")),
      pace.tables.map((row) => el("tr", { "data-table": row.name }, el("td", {}, row.name), el("td", {}, row.rounds),
        el("td", {}, perHour(row)), el("td", {}, minutes(row.hold_s)), el("td", {}, minutes(row.shuffle_s)))))));
}

document.addEventListener("DOMContentLoaded", async () => {
  window.addEventListener("popstate", route);
  document.getElementById("login").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const session = await api("/api/login", { body: {
        user: document.getElementById("login-user").value,
        password: document.getElementById("login-password").value } });
      showProblem("");
      signedIn(session);
    } catch (failure) { showProblem(failure.message); }
  });
  document.getElementById("logout").addEventListener("click", async () => {
    try { await api("/api/logout", { body: {} }); } catch (failure) { /* logged out either way */ }
    state.session = null;
    showLogin();
  });
  try { signedIn(await api("/api/session")); } catch (failure) {
    if (failure.status !== 401) showProblem(failure.message);
  }
});
