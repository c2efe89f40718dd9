"use strict";
// The console's bar on the scoreboard page (/console): who is signed in, the hold panel in
// the operator's words, a button for each command the table accepts now, and a form for a
// name, a PIN or a reason. board.js draws the board; this script only asks the web unit for
// the console's state (waiting for a change) and sends presses; the service decides.

const consoleState = { version: null, form: null, last: null };
window.cardshoeConsole = consoleState;

function consoleButton(label, className, onPress) {
  const button = make("button", className, label);
  button.type = "button";
  button.addEventListener("click", onPress);
  return button;
}

async function press(command, answers) {
  const response = await fetch("/console/press", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ command, answers }),
  });
  return response.json();
}

function openForm(title, command, fields) {
  if (!fields.length) { press(command, {}); return; }
  consoleState.form = { title, command, fields };
  drawForm();
}

function closeForm() {
  consoleState.form = null;
  drawForm();
}

function drawForm() {
  const holder = el("console-form");
  holder.replaceChildren();
  const form = consoleState.form;
  holder.hidden = form === null;
  if (form === null) return;
  const box = make("form", "console-form-box");
  box.append(make("h2", "", form.title));
  const inputs = {};
  form.fields.forEach((field, index) => {
    const label = make("label", "console-field", field.label);
    const input = make("input");
    input.name = field.name;
    input.type = field.secret ? "password" : "text";
    if (field.secret) input.inputMode = "numeric";
    input.autocomplete = "off";
    if (field.choices.length) {
      const list = make("datalist");
      list.id = "choices-" + field.name;
      field.choices.forEach(choice => { const option = make("option"); option.value = choice; list.append(option); });
      input.setAttribute("list", list.id);
      input.value = field.choices[0];
      label.append(list);
    }
    label.append(input);
    box.append(label);
    inputs[field.name] = input;
    if (index === 0) setTimeout(() => input.focus(), 0);
  });
  const row = make("div", "console-form-buttons");
  const words = consoleState.last ? consoleState.last.words : {};
  row.append(consoleButton(words.OK || "OK", "console-ok", async () => {
    const answers = {};
    for (const [name, input] of Object.entries(inputs)) answers[name] = input.value.trim();
    closeForm();
    await press(form.command, answers);
  }));
  row.append(consoleButton(words.Cancel || "Cancel", "console-cancel", closeForm));
  box.append(row);
  box.addEventListener("submit", event => { event.preventDefault(); row.firstChild.click(); });
  holder.append(box);
}

function drawConsole(state) {
  consoleState.last = state;
  const words = state.words;
  const who = el("console-who");
  who.textContent = state.person
    ? `${words["Signed in"]}: ${state.person.name} (${words[state.person.role] || state.person.role})`
    : words["Nobody is signed in: touch Sign in, then give your name and PIN"];
  const lost = el("console-lost");
  lost.textContent = words["service restarting: reconnecting…"];
  lost.hidden = state.connected;
  const holds = el("console-holds");
  holds.replaceChildren();
  holds.hidden = !state.holds.length;
  state.holds.forEach(hold => {
    holds.append(make("div", "console-hold-what", hold.what));
    holds.append(make("div", "console-hold-todo", "→ " + hold.todo));
  });
  const buttons = el("console-buttons");
  buttons.replaceChildren();
  const capital = text => text.charAt(0).toUpperCase() + text.slice(1);
  state.buttons.forEach(button => {
    const label = capital(button.label);
    buttons.append(consoleButton(label, button.supervisor ? "supervisor" : "dealer",
      () => openForm(label, button.command, button.fields)));
  });
  if (state.person) {
    buttons.append(consoleButton(capital(words["sign out"]), "sign", () => press("sign-out", {})));
  } else {
    const signIn = capital(words["sign in"]);
    buttons.append(consoleButton(signIn, "sign",
      () => openForm(signIn, "sign-in", state.sign_in_fields)));
  }
  const message = el("console-message");
  message.textContent = state.message ? state.message.text : "";
  message.className = state.message && !state.message.ok ? "refused" : "accepted";
}

function buildBar() {
  const bar = el("console");
  bar.append(make("div", "console-who", ""), make("div", "console-lost", "service restarting: reconnecting…"));
  bar.firstChild.id = "console-who";
  bar.lastChild.id = "console-lost";
  bar.lastChild.hidden = true;
  for (const id of ["console-holds", "console-buttons", "console-message"]) {
    const node = make("div", id);
    node.id = id;
    bar.append(node);
  }
  const form = make("div", "console-form");
  form.id = "console-form";
  form.hidden = true;
  document.body.append(form);
}

async function followConsole() {
  buildBar();
  for (;;) {
    try {
      const after = consoleState.version === null ? "" : "?after=" + consoleState.version;
      const response = await fetch("/console/state.json" + after);
      const state = await response.json();
      consoleState.version = state.version;
      drawConsole(state);
    } catch (error) {
      el("console-lost").hidden = false;
      await new Promise(resolve => setTimeout(resolve, 500));
    }
  }
}

document.addEventListener("DOMContentLoaded", followConsole);
