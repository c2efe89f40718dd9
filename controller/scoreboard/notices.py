"""What a hold, an alarm or a void round means to the people at the table, in their words.

The journal names each by a code (fault.jam, foreign_card, sequence_gap); the
display screen faces players, dealers and the pit, who need to read what
happened and what happens next, in English and in Chinese, not the code.
These tables give each code its two lines; a code without words (one added
to the procedure later) still gets a plain line saying the table is held, an
alarm stands or the round is void, never the code itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from cardshoe.controller.procedure.corrections import VoidReason
from cardshoe.controller.procedure.facts import AlarmKind
from cardshoe.controller.procedure.holds import HoldReason, fault_hold
from cardshoe.controller.procedure.irregularities import Irregularity
from cardshoe.drivers.api.events import FaultKind


@dataclass(frozen=True)
class Words:
    """One line in English and in Chinese (traditional characters, as the table's labels)."""

    en: str
    zh: str


@dataclass(frozen=True)
class Notice:
    """What happened, and what to do (or what happens now)."""

    what: Words
    todo: Words

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class NoticeKind(StrEnum):
    HOLD = "hold"
    ALARM = "alarm"
    VOID = "void"


WAIT = Words("Please wait: dealing resumes by itself", "請稍候，發牌將自動繼續")
TECHNICIAN = Words("Dealer: call a technician", "荷官：請通知技術員")
SUPERVISOR_ROUND = Words(
    "Supervisor: check this round's cards, then clear the hold", "主管：核對本局的牌後解除暫停"
)
SUPERVISOR_PACK = Words(
    "Supervisor: check the cards in the shoe, then clear the hold", "主管：檢查靴內的牌後解除暫停"
)
SUPERVISOR_CARDS = Words("Supervisor: check the cards", "主管：請檢查牌")
SUPERVISOR_TABLE = Words("Supervisor: come to the table", "主管：請到牌桌")
BETS_RETURNED = Words(
    "All bets on this round are returned; earlier results stand", "本局所有投注退回，之前結果不變"
)

EVENTS_LOST = Words("Card records from the shoe were lost", "發牌靴的出牌紀錄遺失")
FIRMWARE_NOT_APPROVED = Words(
    "The shoe's software is not the approved one", "發牌靴軟件並非核准版本"
)
WRONG_COUNT = Words("The machine counted the wrong number of cards", "洗牌機點算的牌數不符")
MISREAD = Words("A card could not be read", "有一張牌無法讀取")
FOREIGN_CARD = Words("A card from another deck", "發現不屬於本副的牌")
FEWER_CARDS = Words("Fewer cards came out than the shoe announced", "發出的牌少於發牌靴預告")
UNRECORDED_CARD = Words("A card left the shoe without a record", "有牌發出但沒有紀錄")
FACE_DOWN = Words("A card came out face down", "有一張牌背面朝上發出")
SHOE_STOPPED = Words("The shoe was stopped before its end", "本靴牌提前終止")
TWO_TOGETHER = Words("Two cards came out together", "兩張牌同時發出")

HOLDS: Mapping[str, Notice] = {
    HoldReason.LINK_LOST: Notice(
        Words("The connection to the shoe is lost", "與發牌靴的連線中斷"), WAIT
    ),
    HoldReason.SEQUENCE_GAP: Notice(EVENTS_LOST, SUPERVISOR_ROUND),
    HoldReason.SEQUENCE_REGRESSION: Notice(EVENTS_LOST, SUPERVISOR_ROUND),
    HoldReason.FACE_DOWN_CARD: Notice(
        FACE_DOWN,
        Words("Dealer: turn the card face up", "荷官：請將牌翻開"),
    ),
    HoldReason.SELF_TEST_FAILED: Notice(
        Words("The shoe failed its self-test", "發牌靴自我檢測失敗"), TECHNICIAN
    ),
    HoldReason.FIRMWARE_NOT_APPROVED: Notice(FIRMWARE_NOT_APPROVED, TECHNICIAN),
    HoldReason.PACK_COUNT_MISMATCH: Notice(
        Words("The shoe holds the wrong number of cards", "靴內的牌數不符"), SUPERVISOR_PACK
    ),
    HoldReason.DECK_SET_MISMATCH: Notice(
        Words("The cards are not the deck set declared", "靴內的牌並非登記的那套牌"),
        SUPERVISOR_PACK,
    ),
    HoldReason.JOURNAL_BEHIND_DEVICE: Notice(EVENTS_LOST, SUPERVISOR_ROUND),
    HoldReason.JOURNAL_STORAGE: Notice(
        Words("The table's record files were changed", "牌桌紀錄檔案被更改"), TECHNICIAN
    ),
    HoldReason.JOURNAL_SPACE_LOW: Notice(
        Words("The table's record disk is nearly full", "牌桌紀錄磁碟空間不足"), TECHNICIAN
    ),
    HoldReason.CARDS_UNJOURNALED: Notice(UNRECORDED_CARD, SUPERVISOR_ROUND),
    HoldReason.MISREAD_CARD: Notice(
        MISREAD,
        Words(
            "Dealer: pass the card over the reader again, or the supervisor enters it",
            "荷官：請再次讀牌，或由主管輸入",
        ),
    ),
    HoldReason.INTRUDER_ON_TABLE: Notice(
        Words("The machine dealt a card from another deck", "洗牌機發出不屬於本副的牌"),
        Words(
            "Supervisor: take the card off the table, keep it out of the machine, then clear"
            " the hold",
            "主管：請將該牌移離牌桌，勿放回洗牌機，然後解除暫停",
        ),
    ),
    HoldReason.DEVICE_CANNOT_REPLAY: Notice(
        Words(
            "The table could not hear its card reader for a while: cards dealt meanwhile may "
            "be unrecorded",
            "牌桌曾一度收不到讀牌器的訊號：期間發出的牌可能未有紀錄",
        ),
        Words(
            "Supervisor: compare the cards on the table with the screen, enter a missing card "
            "or void the round, or clear the hold",
            "主管：請核對桌上的牌與螢幕，輸入遺漏的牌或取消本局，或解除暫停",
        ),
    ),
    HoldReason.FEED_INCOMPLETE: Notice(
        FEWER_CARDS,
        SUPERVISOR_ROUND,
    ),
    fault_hold(FaultKind.JAM): Notice(
        Words("A card is jammed in the shoe", "發牌靴卡牌"),
        Words(
            "Dealer: clear the jam; dealing resumes by itself", "荷官：請排除卡牌，發牌將自動繼續"
        ),
    ),
    fault_hold(FaultKind.MISREAD): Notice(
        Words("The shoe's card reader keeps failing", "發牌靴讀牌器持續失效"), TECHNICIAN
    ),
    fault_hold(FaultKind.DOOR_OPEN): Notice(
        Words("The shoe's door is open", "發牌靴的門未關上"),
        Words("Dealer: close the shoe's door", "荷官：請關上發牌靴的門"),
    ),
    fault_hold(FaultKind.SENSOR_FAILURE): Notice(
        Words("A sensor of the shoe failed", "發牌靴感應器故障"), TECHNICIAN
    ),
    fault_hold(FaultKind.GATE_FAILURE): Notice(
        Words("The shoe's card gate failed", "發牌靴出牌閘故障"), TECHNICIAN
    ),
    fault_hold(FaultKind.SHUFFLER_FAILURE): Notice(
        Words("The shuffler failed", "洗牌機故障"), TECHNICIAN
    ),
    fault_hold(FaultKind.CARD_COUNT_MISMATCH): Notice(WRONG_COUNT, SUPERVISOR_PACK),
    fault_hold(FaultKind.FIRMWARE_HASH_MISMATCH): Notice(FIRMWARE_NOT_APPROVED, TECHNICIAN),
    fault_hold(FaultKind.MEMORY_FAILURE): Notice(
        Words("The shoe's memory failed", "發牌靴記憶體故障"), TECHNICIAN
    ),
    fault_hold(FaultKind.EVENT_BACKLOG): Notice(
        Words("The shoe is waiting for the table to catch up", "發牌靴正等待牌桌同步"), WAIT
    ),
    fault_hold(FaultKind.POWER_LOSS): Notice(
        Words("The shoe lost power", "發牌靴斷電"),
        Words(
            "Dealer: check the shoe's power, then call a technician if it stays off",
            "荷官：請檢查電源，仍未恢復請通知技術員",
        ),
    ),
    fault_hold(FaultKind.DEVICE_SPECIFIC): Notice(
        Words("The shoe reports a fault of its own", "發牌靴報告其本身的故障"),
        Words(
            "Dealer: call a technician. A card reader never says the fault has passed: once "
            "it reads again, a supervisor clears the hold",
            "荷官：請通知技術員。讀牌器不會通知故障已消除：恢復讀牌後，由主管解除暫停",
        ),
    ),
    fault_hold(FaultKind.TAMPER): Notice(
        Words("The shoe reports it was tampered with", "發牌靴偵測到被人動過"),
        Words("Supervisor and surveillance: check the shoe", "主管及監控：請檢查發牌靴"),
    ),
}
"""Hold code (HoldReason, or fault.<kind> for a device fault) -> its notice."""

ALARMS: Mapping[str, Notice] = {
    AlarmKind.TAMPER: Notice(
        Words(
            "A card came out twice: the cards may have been switched",
            "同一張牌重複出現，牌可能被調換",
        ),
        SUPERVISOR_CARDS,
    ),
    AlarmKind.FOREIGN_CARD: Notice(FOREIGN_CARD, SUPERVISOR_CARDS),
    AlarmKind.PROCEDURE_VIOLATION: Notice(
        Words("A step out of the dealing order", "發牌程序出錯"), SUPERVISOR_TABLE
    ),
    AlarmKind.RECONCILIATION: Notice(
        Words("The shoe's cards do not add up", "本靴牌數結算不符"), SUPERVISOR_CARDS
    ),
    AlarmKind.CARD_COUNT: Notice(WRONG_COUNT, SUPERVISOR_CARDS),
    AlarmKind.DEVICE_FAULT: Notice(Words("The shoe reports a fault", "發牌靴故障"), TECHNICIAN),
    AlarmKind.SEQUENCE_GAP: Notice(EVENTS_LOST, SUPERVISOR_TABLE),
    AlarmKind.FIRMWARE: Notice(FIRMWARE_NOT_APPROVED, TECHNICIAN),
    AlarmKind.SOFTWARE_FAULT: Notice(
        Words("The table's software stopped", "牌桌軟件停止運作"), TECHNICIAN
    ),
    AlarmKind.SHOE_ABANDONED: Notice(
        SHOE_STOPPED,
        Words("Supervisor: start a new shoe", "主管：請開新一靴"),
    ),
    AlarmKind.CUT_CARD: Notice(
        Words("The cut card came out at the wrong depth", "切牌卡位置不符"), SUPERVISOR_CARDS
    ),
    AlarmKind.STORAGE: Notice(
        Words("The table's records cannot be kept safely", "牌桌紀錄儲存異常"), TECHNICIAN
    ),
    AlarmKind.JOURNAL: Notice(
        Words("The table's records do not check out", "牌桌紀錄核對不符"), TECHNICIAN
    ),
}
"""Alarm kind -> its notice. Surveillance's alarms (WATCHER_ALARMS) never reach the display
the players see, so they have none."""

VOID_CAUSES: Mapping[str, Words] = {
    VoidReason.MISDEAL: Words("Misdeal", "派牌錯誤"),
    VoidReason.DRAW_AGAINST_RULES: Words("A card drawn against the rules", "補牌不依規則"),
    VoidReason.PLAYER_HAND_NOT_RECONSTRUCTABLE: Words(
        "The Player's cards cannot be put back in order", "閒家的牌無法還原"
    ),
    VoidReason.BANKER_HAND_NOT_RECONSTRUCTABLE: Words(
        "The Banker's cards cannot be put back in order", "莊家的牌無法還原"
    ),
    VoidReason.CARDS_DRAWN_TOGETHER: Words("Cards drawn together", "多張牌同時抽出"),
    VoidReason.FOREIGN_CARD_FOUND: FOREIGN_CARD,
    Irregularity.FOREIGN_CARD: FOREIGN_CARD,
    Irregularity.DUPLICATE_CARD: Words("The same card came out twice", "同一張牌重複出現"),
    Irregularity.EXCESS_COPIES: Words(
        "More copies of a card than the decks hold", "某張牌的數目多於牌副所有"
    ),
    Irregularity.MISREAD_CARD: MISREAD,
    Irregularity.DOUBLE_FEED: TWO_TOGETHER,
    Irregularity.DOUBLE_FEED_IN_ORDER: TWO_TOGETHER,
    Irregularity.CARD_AFTER_ROUND: Words("A card came out after the round", "本局完結後再有牌發出"),
    Irregularity.CARD_OUTSIDE_ROUND: Words("A card came out between rounds", "兩局之間有牌發出"),
    Irregularity.CARD_DURING_HOLD: Words(
        "A card came out while the table was held", "暫停期間有牌發出"
    ),
    Irregularity.FACE_DOWN_CARD: FACE_DOWN,
    Irregularity.FACE_UP_CARD: Words("A card came out face up", "有一張牌正面朝上發出"),
    Irregularity.INSUFFICIENT_CARDS: Words(
        "Not enough cards left to finish the round", "剩餘的牌不足以完成本局"
    ),
    Irregularity.SEQUENCE_GAP: EVENTS_LOST,
    HoldReason.SEQUENCE_REGRESSION: EVENTS_LOST,
    HoldReason.JOURNAL_BEHIND_DEVICE: EVENTS_LOST,
    HoldReason.FEED_INCOMPLETE: FEWER_CARDS,
    HoldReason.CARDS_UNJOURNALED: UNRECORDED_CARD,
    "shoe_closed": Words("The shoe was closed during the round", "本局進行中牌靴被關閉"),
    AlarmKind.SHOE_ABANDONED: SHOE_STOPPED,
}
"""Why a round was void (round.void's reason) -> what happened; the notice adds that the
bets are returned."""

UNNAMED: Mapping[NoticeKind, Notice] = {
    NoticeKind.HOLD: Notice(Words("The table is held", "牌桌暫停"), SUPERVISOR_TABLE),
    NoticeKind.ALARM: Notice(
        Words("The pit is called to the table", "請主管到牌桌"), SUPERVISOR_TABLE
    ),
    NoticeKind.VOID: Notice(Words("The round is void", "本局無效"), BETS_RETURNED),
}
"""The notice of a code the tables above do not know."""


def notice(kind: NoticeKind, code: str) -> Notice:
    """The words the display shows for this hold, alarm or void reason."""
    if kind is NoticeKind.VOID:
        cause = VOID_CAUSES.get(code)
        return UNNAMED[kind] if cause is None else Notice(cause, BETS_RETURNED)
    table = HOLDS if kind is NoticeKind.HOLD else ALARMS
    return table.get(code, UNNAMED[kind])
