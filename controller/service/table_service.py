"""`shoectl run`: one table's controller as a long-running service.

Start-up goes in this order, so that a kill at any point leaves nothing to
clean up by hand and the next start simply goes on:

1. claim the control socket path: refused while a live service holds it, a
   socket file left by a killed one is replaced (control_socket.py), and
   serve it at once: until the table is up, `shoectl status` answers with
   the state (starting, waiting for device) and the reason, and every
   other command is refused with that line;
2. open the journal, which must exist (`shoectl journal init` makes a new
   table's): SQLite rolls back a transaction a kill cut short; then check
   its schema and its chain from where the last check reached (the last
   start-up or the end of the last shoe, when the service checks it again),
   and deal nothing on a journal that fails (one line, a journaled refusal
   where the journal still takes one, exit 1);
3. open the device, authenticated with its pairing key when service.key_dir
   holds one, waiting up to device_wait_s for it to be plugged in or let go
   by another program; a device that answers but is refused (a failed
   authentication, a tampered HELLO, a protocol downgrade) and refused again
   at the next attempt is journaled as an alarm while start-up waits, once
   per kind per interval however often it is retried;
4. build the TableSession: it replays the journal and tells the driver the
   last event it holds, so the device resends only what was never committed;
5. hand the table to the control socket and send READY=1.

Then the main loop deals: it steps the session, pings the systemd watchdog
and keeps STATUS= up to date, all from the one thread that deals, so a stuck
loop stops the pings and systemd restarts the service. SIGTERM and SIGINT
only set a flag (stop_signals.py); the loop stops after the event under way
is journaled and acknowledged, sends STOPPING=1, stops serving, closes the
device and the journal, and run() returns. Whatever the device sent and
the journal does not hold stays unacknowledged on the device for next time.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from cardshoe.controller.config import TableConfig
from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.journal.errors import JournalCorrupt, JournalError
from cardshoe.controller.journal.repeats import RepeatCounter
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    Observer,
)
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import (
    COMMANDS,
    OperatorCommand,
    Role,
    least_role,
)
from cardshoe.controller.record_kinds import (
    SESSION_DEVICE_REFUSED,
    SESSION_JOURNAL_REFUSED,
    SESSION_REPEATED,
    check_payload,
)
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service import console_access, firmware_update
from cardshoe.controller.service.command_routes import (
    SESSION_COMMANDS,
    command_arguments,
    session_route,
)
from cardshoe.controller.service.console_access import ConsoleAccess
from cardshoe.controller.service.control_socket import (
    SUBSCRIBE,
    ControlServer,
    EventFeed,
    Handler,
    Peer,
    current_peer,
)
from cardshoe.controller.service.device_access import device_user_error
from cardshoe.controller.service.device_choice import configured_url
from cardshoe.controller.service.logging_setup import LogObserver
from cardshoe.controller.service.pairing import KeyStore
from cardshoe.controller.service.retention import PruneAfterShoe
from cardshoe.controller.service.roles import Operator, check_permitted, is_console, operator_of
from cardshoe.controller.service.sdnotify import Notifier
from cardshoe.controller.service.session import TableSession
from cardshoe.controller.service.session_records import record_device_refusal
from cardshoe.controller.service.session_repeats import REPEAT_INTERVAL_S
from cardshoe.controller.service.socket_claim import claim_socket_path
from cardshoe.controller.service.software_identity import parse_seed
from cardshoe.controller.service.table_status import (
    LastAlarm,
    RefusalCount,
    snapshot_to_json,
    status_line,
)
from cardshoe.controller.timestamps import utc_timestamp
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.api.protocols import open_device
from cardshoe.drivers.discovery import Candidate, discover
from cardshoe.drivers.errors import (
    AuthenticationFailed,
    DeviceGone,
    DeviceNotFound,
    DeviceTimeout,
    DriverError,
    PortBusy,
    ProtocolDowngrade,
)

log = structlog.get_logger(__name__)

POLL_S = 0.05
"""The longest the loop waits for a device event before its own checks (stop, watchdog)."""
HANDSHAKE_TIMEOUT_S = 2.0
DEVICE_RETRY_S = 1.0
WAIT_ANOTHER_TIME = (DeviceNotFound, PortBusy, DeviceTimeout, DeviceGone, AuthenticationFailed)
"""Device problems that a shoe plugged in late or a technician's tool let go will fix, and a
failed authentication: one replayed or damaged frame at the challenge must not stop the
service (a reconnect retries it too); a wrong key still fails once device_wait_s is over."""
REFUSAL_KINDS: tuple[tuple[type[DriverError], str], ...] = (
    (ProtocolDowngrade, "protocol_downgrade"),
    (AuthenticationFailed, "authentication_failed"),
)
"""The device answered but was refused, most specific first. A kind that the next attempt
meets again is journaled as an alarm while start-up still waits, at most once per
REPEAT_INTERVAL_S: one stale AUTH_RESPONSE of a previous session, which the retry cures, is
no alarm. Absent, busy and silent devices are only waited for."""
STARTING = "starting"
WAITING_FOR_DEVICE = "waiting for device"


@dataclass(frozen=True)
class ServiceOptions:
    """How the house runs the table, beyond the approved game options of the configuration."""

    betting_time_s: float | None = None
    """Close bets that long after each round opens; None waits for the dealer button
    or the no-more-bets command."""
    auto_shoe: bool = False
    """Open a new shoe whenever none is open (a manual shoe counts as loaded and cut), for
    the simulator and unattended tables; otherwise wait for the new-shoe command."""
    device_wait_s: float = 30.0
    """How long start-up waits for an absent or busy device before giving up (exit 3)."""


AUTHENTICATE = "authenticate"
"""The control-socket command that answers a regulator's seed (a technician's)."""


class TableService:
    """The configured table's device, journal and session, served until request_stop()."""

    def __init__(
        self,
        config: TableConfig,
        options: ServiceOptions | None = None,
        notifier: Notifier | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.options = options or ServiceOptions()
        self._notifier = notifier or Notifier(address=None)
        self._clock = clock
        self._stop_requested = False
        self._session: TableSession | None = None
        self._phase = (STARTING, "opening the journal")
        """While no session is up: the state and the reason `shoectl status` shows."""
        self._told_refusals = RepeatCounter(REPEAT_INTERVAL_S)
        self._last_alarm = LastAlarm()
        self._refusals = RefusalCount()
        self._started_at = utc_timestamp()
        self._last_ping = clock()
        self._last_status = ""
        self._console = ConsoleAccess(config.roles, clock)
        interval = self._notifier.watchdog_interval()
        self._poll_s = POLL_S if interval is None else min(POLL_S, interval / 4)

    def request_stop(self) -> None:
        """Stop after the step under way; safe from a signal handler (it only sets a flag)."""
        self._stop_requested = True

    def run(self) -> None:
        """Start, deal until asked to stop, then stop cleanly; raises UserError on start-up."""
        self._notify_status(STARTING)
        service = self.config.service
        with contextlib.ExitStack() as resources:
            claim = claim_socket_path(service.control_socket)
            resources.callback(claim.release)
            serving = resources.enter_context(contextlib.ExitStack())
            feed = EventFeed()
            serving.enter_context(
                ControlServer(claim, self._handlers(), feed, is_operator=self._is_operator)
            )
            journal = resources.enter_context(
                Journal.open(
                    service.journal_path, table_id=self.config.table_id, check_record=check_payload
                )
            )
            self._phase = (STARTING, "checking the journal")
            self._notify_status("checking the journal")
            check_journal(journal, "start-up")
            self._console.recall(journal, time.time_ns())
            device = self._open_device(journal)
            self._journal_repeated_refusals(journal, self._clock() + REPEAT_INTERVAL_S)
            if device is None:
                self._send(self._notifier.stopping)
                return
            resources.enter_context(device)
            observers: list[Observer] = [LogObserver(), self._last_alarm, self._refusals]
            if self.config.uplink.prune_after_shoe:
                observers.append(PruneAfterShoe(journal, self.config.uplink))
            session = TableSession.open(self.config, journal, device, observers)
            feed.attach(open_shoe_board(self.config, journal, session.snapshot().shoe_id))
            session.subscribe(feed)
            self._session = session
            resources.callback(serving.close)  # stop serving before the device and journal close
            self._send(self._notifier.ready)
            log.info("service ready", socket=str(service.control_socket), pid=os.getpid())
            self._deal(session)
            log.info("service stopping", state=session.state.value)
            self._send(self._notifier.stopping)

    # --- start-up -------------------------------------------------------------------

    def _open_device(self, journal: Journal) -> DeviceLink | None:
        """The configured device after its handshake; None if asked to stop while waiting.

        A refusal is journaled (session.device_refused) before it is raised, so
        the journal explains why the table never opened; so is one that persists
        while the service waits, so the pit sees it before device_wait_s is over.
        """
        deadline = self._clock() + self.options.device_wait_s
        keys = KeyStore(self.config.service.key_dir).lookup
        warned: str | None = None
        refused_before: str | None = None
        while not self._stop_requested:
            try:
                url = configured_url(self.config.device, self._candidates())
                if warned is None:  # once waiting, status keeps telling why
                    self._phase = (STARTING, f"opening {url}")
                self._notify_status(f"opening {url}")
                return open_device(
                    url,
                    protocol=self.config.device.protocol,
                    options=self.config.device.protocol_options,
                    timeout=HANDSHAKE_TIMEOUT_S,
                    reconnect=True,
                    keys=keys,
                )
            except WAIT_ANOTHER_TIME as problem:
                if self._clock() >= deadline:
                    raise self._refused(journal, problem) from problem
                if str(problem) != warned:
                    log.warning("waiting for the device", reason=str(problem))
                    warned = str(problem)
                self._phase = (WAITING_FOR_DEVICE, str(problem))
                self._notify_status(f"waiting for the device: {problem}")
                refused_now = refusal_kind(problem)
                if refused_now is not None and refused_now == refused_before:
                    self._journal_refusal(journal, problem)
                refused_before = refused_now
                self._journal_repeated_refusals(journal, self._clock())
                self._pause(DEVICE_RETRY_S)
            except DriverError as problem:
                raise self._refused(journal, problem) from problem
        return None

    def _refused(self, journal: Journal, problem: DriverError) -> UserError:
        """Journal why the device was not taken at start-up; the error to stop with.

        A refusal of a kind journaled within the interval is only counted, and
        every count is journaled now, since the service stops. Not logged as
        well: the error is the one line shoectl run ends with (stderr, which
        journald keeps too), and a second copy on stdout would tell it twice.
        """
        self._journal_refusal(journal, problem)
        self._journal_repeated_refusals(journal, self._clock() + REPEAT_INTERVAL_S)
        return device_user_error(problem)

    def _journal_refusal(self, journal: Journal, problem: DriverError) -> None:
        """Journal a refusal as an alarm, unless one of its kind was within the interval."""
        kind = refusal_kind(problem) or type(problem).__name__
        if not self._told_refusals.admit(f"{SESSION_DEVICE_REFUSED}:{kind}", self._clock()):
            return
        alarm = Alarm(AlarmKind.DEVICE_FAULT, f"start-up refused the device: {problem}")
        record_device_refusal(journal, alarm, device_serial=None)
        self._last_alarm.notify(alarm)

    def _journal_repeated_refusals(self, journal: Journal, now: float) -> None:
        """How many refusals of each kind were only counted, once their interval is over;
        `now` one interval ahead journals every count (start-up is over)."""
        for repeats in self._told_refusals.due(now):
            with journal.transaction() as transaction:
                transaction.append(
                    SESSION_REPEATED,
                    {
                        "kind": repeats.kind,
                        "count": repeats.count,
                        "interval_s": self._told_refusals.interval_s,
                    },
                    shoe_id=None,
                    round_no=None,
                    device_serial=None,
                )

    def _candidates(self) -> tuple[Candidate, ...]:
        """Discovery only when the configuration names no URL: it lists every port."""
        return () if self.config.device.url is not None else discover().candidates

    def _pause(self, seconds: float) -> None:
        until = self._clock() + seconds
        while not self._stop_requested and self._clock() < until:
            time.sleep(self._poll_s)
            self._ping_watchdog()

    # --- the main loop --------------------------------------------------------------

    def _deal(self, session: TableSession) -> None:
        while not self._stop_requested:
            if session.state is State.IDLE and not (
                self.options.auto_shoe and session.fresh_pack_loaded()
            ):
                session.step(self._poll_s)
                self._after_step()
                continue
            session.run_shoe(
                betting_time_s=self.options.betting_time_s,
                poll_s=self._poll_s,
                on_step=self._after_step,
            )
            # Walk what the shoe wrote and move the anchor, so a start after weeks of
            # running walks only the records since the last shoe.
            check_journal(session.journal, "end-of-shoe")

    def _after_step(self) -> None:
        """Between two steps: stop if asked, ping the watchdog, keep STATUS= current.

        run_shoe is for an open shoe: once none is open it returns, and _deal
        decides whether a new one opens by itself.
        """
        session = self._session
        assert session is not None
        if self._stop_requested or session.state is State.IDLE:
            session.stop()
        self._console.expire(session)
        self._ping_watchdog()
        self._notify_status(status_line(session.snapshot()))

    def _ping_watchdog(self) -> None:
        interval = self._notifier.watchdog_interval()
        now = self._clock()
        if interval is not None and now - self._last_ping >= interval:
            self._last_ping = now
            self._send(self._notifier.watchdog)

    def _notify_status(self, text: str) -> None:
        if text != self._last_status:
            self._last_status = text
            self._send(lambda: self._notifier.status(text))

    def _send(self, notification: Callable[[], None]) -> None:
        """A service manager that went away must not stop the table."""
        try:
            notification()
        except OSError as exc:
            log.warning("could not notify the service manager", reason=str(exc))

    # --- the control socket ---------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What `shoectl status` shows: the table, its device, and the last alarm.

        Before the table is up: the state (starting, waiting for device) and
        the reason, with no device.
        """
        session = self._session
        table = {
            "table_id": self.config.table_id,
            "pid": os.getpid(),
            "started_at": self._started_at,
            "game": self.config.game.name,
            "decks": self.config.game.decks,
            "journal": str(self.config.service.journal_path),
            "fingerprint": self.config.fingerprint,
            "options": self.config.fingerprint_options(),
            "last_alarm": self._last_alarm.record,
            "refused_commands": self._refusals.count,
        }
        if session is None:
            state, reason = self._phase
            return {**table, "state": state, "reason": reason, "device": None}
        return {
            **table,
            **snapshot_to_json(session.snapshot()),
            "reason": None,
            "device": {**session.device.describe(), "connected": session.device.connected},
            "dealer": session.dealer,
        }

    def _is_operator(self, peer: Peer) -> bool:
        """Who may take the control socket's last connections: a dealer or above, and the
        table's console, which deals for the people signed in at it."""
        roles = self.config.roles
        return operator_of(peer, roles).role >= Role.DEALER or is_console(peer, roles)

    def _handlers(self) -> dict[str, Handler]:
        def status(request: Mapping[str, Any]) -> dict[str, Any]:
            if request["cmd"] == SUBSCRIBE:
                self._table_session()  # a subscription streams the table's events
            return self.status()

        handlers: dict[str, Handler] = {
            "status": status,
            AUTHENTICATE: self._authenticate,
            firmware_update.COMMAND: self._update_firmware,
            console_access.SIGN_IN: self._console_sign_in,
            console_access.SIGN_OUT: self._console_sign_out,
        }
        for command in SESSION_COMMANDS:
            handlers[command.name] = self._command_handler(command)
        return handlers

    def _console_sign_in(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """A person at the table's console gives their name and PIN; the console gets the
        token it then acts for them with."""
        session = self._table_session()
        signed = self._console.sign_in(session, current_peer(), request)
        return {**signed, "status": self.status()}

    def _console_sign_out(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self._console.sign_out(self._table_session(), request)
        return self.status()

    def _table_session(self) -> TableSession:
        """The session, or a refusal saying why the table is not up yet."""
        session = self._session
        if session is None:
            state, reason = self._phase
            raise UserError(
                f"the table is {state} ({reason}): try again once it is up (shoectl status)",
                EXIT_DEVICE_UNAVAILABLE,
            )
        return session

    def _command_handler(self, command: OperatorCommand) -> Handler:
        route = session_route(command)
        assert route is not None
        name = command.name

        def handle(request: Mapping[str, Any]) -> dict[str, Any]:
            session = self._table_session()
            person, rest = self._console.acting(session, current_peer(), name, request)
            arguments = command_arguments(name, command.parameters, rest)
            operator = self._permitted_operator(session, name, person)
            with session.acting_as(operator.as_json()):
                route(session, arguments)
            return self.status()

        return handle

    def _authenticate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """A regulator's seed, given by a technician: the software's answer, journaled."""
        session = self._table_session()
        arguments = command_arguments(AUTHENTICATE, COMMANDS[AUTHENTICATE].parameters, request)
        seed = parse_seed(arguments["seed"])
        operator = self._permitted_operator(session, AUTHENTICATE)
        return session.authenticate_software(seed, operator.as_json()).to_json()

    def _update_firmware(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """A technician's signed image for the device, while no shoe is open: installed or
        refused, the attempt is journaled; a refusal is the answer's one line."""
        session = self._table_session()
        name = firmware_update.COMMAND
        arguments = command_arguments(name, COMMANDS[name].parameters, request)
        operator = self._permitted_operator(session, name)
        house_key = firmware_update.load_house_key(self.config.device.house_public_key)
        image = Path(arguments["image"])
        try:
            data = image.read_bytes()
        except OSError as exc:
            raise UserError(
                f"the service cannot read {image}: {exc.strerror}: give a path the service's "
                "user may read"
            ) from None
        attempt = session.update_firmware(data, house_key, operator.as_json())
        if attempt.exit_code:
            raise UserError(f"{image}: {firmware_update.describe(attempt)}", attempt.exit_code)
        return self.status()

    def _permitted_operator(
        self, session: TableSession, name: str, person: Operator | None = None
    ) -> Operator:
        """Who gives the command (the person signed in at the console, else the peer), once
        their role allows it; a refusal is journaled."""
        operator = person or operator_of(current_peer(), self.config.roles)
        try:
            check_permitted(name, operator)
        except UserError:
            needs = str(least_role(name))
            self._refusals.denied()
            session.record_denied(name, operator.as_json(), needs)
            raise
        return operator


def refusal_kind(problem: DriverError) -> str | None:
    """The kind of refusal a device problem at start-up is, or None for a wait (REFUSAL_KINDS)."""
    return next((kind for error, kind in REFUSAL_KINDS if isinstance(problem, error)), None)


def check_journal(journal: Journal, when: str) -> None:
    """Deal nothing on a journal whose schema or recent chain is damaged.

    The check is the journal's schema plus the chain since the last check
    (Journal.check_since_anchor), at start-up and after each shoe, not a full verify,
    so a start stays quick however long the journal has grown. The
    refusal is journaled when the journal can still take a record.
    """
    result = journal.check_since_anchor()
    if result.ok:
        return
    where = f"record {result.first_bad_id}" if result.first_bad_id else "the database"
    detail = f"{journal.path}: the journal fails its {when} check at {where}: {result.reason}"
    log.error("journal refused", reason=detail)
    with contextlib.suppress(JournalError), journal.transaction() as transaction:
        transaction.append(
            SESSION_JOURNAL_REFUSED,
            Alarm(AlarmKind.JOURNAL, detail).payload(),
            shoe_id=None,
            round_no=None,
            device_serial=None,
        )
    raise JournalCorrupt(
        f"{detail}: the table deals nothing on it; run 'shoectl journal verify "
        f"{journal.path}' and restore the journal from its backup"
    )


def open_shoe_board(config: TableConfig, journal: Journal, shoe_id: str | None) -> TableBoard:
    """The display board of the shoe recovery found open, from its journal records, so a
    `monitor --table` started now shows the whole shoe, not only what happens next."""
    board = TableBoard(table_id=config.table_id)
    if shoe_id is not None:
        for record in journal.records(shoe_id=shoe_id):
            board.apply(record.kind, record.payload)
    return board
