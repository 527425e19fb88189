"""The state machine of one hand of Texas Hold'em (RULES.md R2-R10): pure, deterministic, synchronous.

A ``Hand`` is built from a table config, the seats' stacks, the button and a deck in dealing order; it then takes
one action at a time from the seat whose turn it is. Illegal actions raise ``IllegalActionError`` naming the rule
and leave the state untouched. Seats are numbered 0..n-1 clockwise; every seat given is dealt in.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from arena.cards import format_cards
from arena.cards.evaluator import evaluate
from arena.engine.actions import Action, ActionKind, Event, EventKind, LegalActions, Street
from arena.engine.config import MAX_SEATS, MIN_SEATS, AnteMode, Structure, TableConfig
from arena.engine.errors import ConfigError, DeckError, IllegalActionError, RuleError
from arena.engine.pots import Pot, pots_of, split_pot

_NOT_ACTED = -1
_E = EventKind


class Hand:
    """One hand from the forced bets to the payoffs.

    ``deck`` lists the cards in the order the dealer takes them from the top: hole cards one at a time starting
    left of the button, twice round (R4.1), then burn, flop, burn, turn, burn, river (R1.4). ``entry_blinds`` are
    seats that joined while play was under way and post a live big blind (R2.4).
    """

    def __init__(
        self,
        config: TableConfig,
        stacks: Sequence[int],
        deck: Sequence[int],
        button: int = 0,
        entry_blinds: Collection[int] = (),
    ) -> None:
        n = len(stacks)
        if not MIN_SEATS <= n <= MAX_SEATS:
            raise ConfigError("R2.1", f"a table has 2 to 22 seats, got {n}")
        if not 0 <= button < n:
            raise ConfigError("R2.2", f"button {button} is not a seat of a {n}-seat table")
        for seat, stack in enumerate(stacks):
            if type(stack) is not int or stack <= 0:
                raise ConfigError("R11.1", f"seat {seat} needs a positive whole stack to be dealt in, got {stack!r}")
        _check_deck(deck, n)
        self.config = config
        self.num_seats = n
        self.button = button
        self.starting_stacks: tuple[int, ...] = tuple(stacks)
        self.stacks: list[int] = list(stacks)
        self.bets: list[int] = [0] * n
        self.committed: list[int] = [0] * n
        self.dead: list[int] = [0] * n
        self.folded: list[bool] = [False] * n
        self.board: list[int] = []
        self.events: list[Event] = []
        self.street = Street.PREFLOP
        self.to_act: int | None = None
        self.payoffs: list[int] | None = None
        self.shown: dict[int, tuple[int, ...]] = {}
        self.hand_values: dict[int, int] = {}
        self._deck = tuple(deck)
        self._acted_at = [_NOT_ACTED] * n
        self._current_bet = 0
        self._min_inc = config.big_blind
        self._bet_count = 0
        self._last_aggressor = -1
        self._fixed = config.structure is Structure.FIXED_LIMIT
        self._pot_limit = config.structure is Structure.POT_LIMIT
        self._capped = self._fixed
        if n == 2:
            self.small_blind_seat, self.big_blind_seat = button, (button + 1) % n  # R2.3 heads-up
        else:
            self.small_blind_seat, self.big_blind_seat = (button + 1) % n, (button + 2) % n
        first = (button + 1) % n
        self.hole: list[tuple[int, int]] = [(0, 0)] * n
        for k in range(n):
            seat = (first + k) % n
            self.hole[seat] = (deck[k], deck[n + k])
        self._next_card = 2 * n
        for entry in entry_blinds:
            if not isinstance(entry, int) or not 0 <= entry < n:  # 1.0 is no seat (the compiled engine agrees)
                raise ConfigError("R2.4", f"entry blind seat {entry} is not a seat of the table")
        self._post_forced_bets(entry_blinds)
        self._start_betting(preflop=True)
        if self.to_act is None:
            self._end_round()

    def copy(self) -> Hand:
        """An independent copy of the hand as it stands (to try an action without playing it)."""
        twin = object.__new__(Hand)
        twin.__dict__.update(self.__dict__)
        for name in ("stacks", "bets", "committed", "dead", "folded", "board", "events", "hole", "_acted_at"):
            setattr(twin, name, list(getattr(self, name)))
        twin.shown = dict(self.shown)
        twin.hand_values = dict(self.hand_values)
        twin.payoffs = list(self.payoffs) if self.payoffs is not None else None
        return twin

    # ----------------------------------------------------------------- public queries

    @property
    def is_over(self) -> bool:
        """Whether the hand has been settled (payoffs known)."""
        return self.payoffs is not None

    @property
    def pot_total(self) -> int:
        """All chips put in this hand so far, bets of the current street included."""
        return sum(self.committed)

    @property
    def current_bet(self) -> int:
        """The highest bet on this street (the amount a call matches)."""
        return self._current_bet

    def pots(self) -> list[Pot]:
        """Main and side pots as they stand (R10.1), current bets included; antes are dead money (R3.2)."""
        dead = self.dead
        live = tuple(c - d for c, d in zip(self.committed, dead, strict=True)) if any(dead) else tuple(self.committed)
        return list(pots_of(live, tuple(self.folded), sum(dead)))

    def legal_actions(self) -> LegalActions:
        """The exact choices of the seat to act (R6, R7). Raises ``RuleError`` when the hand is over."""
        seat = self.to_act
        if seat is None:
            raise RuleError("R6.3", "the hand is over: nobody is to act")
        owed = self._current_bet - self.bets[seat]
        stack = self.stacks[seat]
        low, high = self._raise_bounds(seat, owed, stack)
        return LegalActions(seat, owed > 0, owed == 0, owed if owed < stack else stack, low, high)

    def is_active(self, seat: int) -> bool:
        """Whether a seat is still in the hand and has chips to bet."""
        return not self.folded[seat] and self.stacks[seat] > 0

    # ----------------------------------------------------------------- actions

    def act(self, seat: int, action: Action) -> None:
        """Apply one action of ``seat``; raises ``IllegalActionError`` (state unchanged) if the rules refuse it."""
        self.apply(seat, action.kind, action.amount)

    def apply(self, seat: int, kind: ActionKind, amount: int = 0) -> None:
        """Apply ``kind`` (and the raise-to ``amount`` for RAISE) for ``seat``; see ``act``."""
        if self.to_act is None:
            raise IllegalActionError(seat, _name(kind, amount), "R6.3", "the hand is over")
        if seat != self.to_act:
            state = "has folded" if 0 <= seat < self.num_seats and self.folded[seat] else "is not to act"
            raise IllegalActionError(
                seat, _name(kind, amount), "R6.3", f"out of turn: seat {self.to_act} is to act; seat {seat} {state}"
            )
        owed = self._current_bet - self.bets[seat]
        stack = self.stacks[seat]
        street = int(self.street)
        if kind is ActionKind.FOLD:
            if owed <= 0:
                raise IllegalActionError(seat, "fold", "R6.1", "there is nothing to call: check instead of folding")
            self.folded[seat] = True
            self._acted_at[seat] = self._current_bet
            self.events.append(Event(_E.FOLD, seat, street))
            if self.folded.count(False) == 1:
                self._finish_uncontested()
                return
        elif kind is ActionKind.CHECK:
            if owed > 0:
                raise IllegalActionError(
                    seat, "check", "R6.1",
                    f"cannot check facing a bet of {self._current_bet}: call {min(owed, stack)}, raise or fold",
                )
            self._acted_at[seat] = self._current_bet
            self.events.append(Event(_E.CHECK, seat, street))
        elif kind is ActionKind.CALL:
            if owed <= 0:
                raise IllegalActionError(seat, "call", "R6.1", "there is no bet to call: check instead")
            put = owed if owed < stack else stack
            self._put(seat, put)
            self._acted_at[seat] = self._current_bet
            self.events.append(Event(_E.CALL, seat, street, put, (), self.stacks[seat] == 0))
        elif kind is ActionKind.ALL_IN:
            # The largest commitment the rules allow (R6.1): the top raise (the whole stack in no-limit, capped by
            # the pot in pot-limit and the unit in fixed-limit), else a call, else a check.
            high = self._raise_bounds(seat, owed, stack)[1]
            if high:
                self._raise(seat, high, owed, stack, street, kind)
            else:
                self.apply(seat, ActionKind.CALL if owed > 0 else ActionKind.CHECK)
                return
        elif kind is ActionKind.RAISE:
            self._raise(seat, amount, owed, stack, street, kind)
        else:
            raise IllegalActionError(seat, repr(kind), "R6.1", "unknown action kind")
        self._advance(seat)

    def _raise(self, seat: int, amount: int, owed: int, stack: int, street: int, kind: ActionKind) -> None:
        """Validate and apply a bet or raise to ``amount`` (R6.2, R7)."""
        what = "all-in" if kind is ActionKind.ALL_IN else _name(ActionKind.RAISE, amount)
        if type(amount) is not int:
            raise IllegalActionError(seat, what, "R6.3", f"amount must be a whole number of chips, got {amount!r}")
        if amount < 0:
            raise IllegalActionError(seat, what, "R6.3", f"amount must not be negative, got {amount}")
        low, high = self._raise_bounds(seat, owed, stack)
        if high == 0:
            raise IllegalActionError(seat, what, *self._why_no_raise(seat, owed, stack))
        if amount < low:
            rule = "R7.6" if self._fixed else ("R7.1" if self._current_bet == 0 else "R7.2")
            raise IllegalActionError(
                seat, what, rule, f"the minimum {'bet' if self._current_bet == 0 else 'raise'} is to {low}"
            )
        if amount > high:
            all_in = self.bets[seat] + stack
            if amount > all_in:
                raise IllegalActionError(
                    seat, what, "R7.1", f"only {stack} chips behind: the most is {all_in} (all-in)"
                )
            rule = "R7.6" if self._fixed else "R7.5"
            limit = "the fixed bet unit" if self._fixed else "the pot limit"
            raise IllegalActionError(seat, what, rule, f"{limit} allows at most a raise to {high}")
        increment = amount - self._current_bet
        put = amount - self.bets[seat]
        opened = self._current_bet == 0
        if increment >= self._min_inc:  # a full bet or raise (R7.2); a short all-in is not (R7.4)
            self._min_inc = increment
            self._bet_count += 1
        self._put(seat, put)
        self._current_bet = amount
        self._acted_at[seat] = amount
        self._last_aggressor = seat
        self.events.append(
            Event(_E.BET if opened else _E.RAISE, seat, street, amount, (), self.stacks[seat] == 0)
        )

    # ----------------------------------------------------------------- internals

    def _unit(self) -> int:
        """The fixed-limit bet unit of this street (R7.6)."""
        return self.config.small_bet if self.street <= Street.FLOP else self.config.big_bet

    def _raise_bounds(self, seat: int, owed: int, stack: int) -> tuple[int, int]:
        """(min, max) raise-to for ``seat``, or (0, 0) when it may not raise (R7.1-R7.6)."""
        if stack <= owed:
            return 0, 0  # R7.3: only a call (all-in for less) or a fold
        acted = self._acted_at[seat]
        if acted != _NOT_ACTED and self._current_bet - acted < self._min_inc:
            return 0, 0  # R7.4: not reopened
        if not self._anyone_else_can_bet(seat):
            return 0, 0  # R5.6: every other player is all-in or folded
        all_in = self.bets[seat] + stack
        if self._fixed:
            if self._capped and self._bet_count >= self.config.raise_cap:
                return 0, 0
            full = self._current_bet + self._unit()
            return (full, full) if full <= all_in else (all_in, all_in)
        low = self._current_bet + self._min_inc
        if low > all_in:
            return all_in, all_in  # R7.3: a short all-in is the only raise
        if self._pot_limit:
            high = self._current_bet + sum(self.committed) + owed
            return low, max(low, min(high, all_in))
        return low, all_in

    def _anyone_else_can_bet(self, seat: int) -> bool:
        """Whether another player still in the hand could put in more than the current bet, so that a raise could
        be answered at all (R5.6); otherwise every chip of a raise would come straight back uncalled (R10.2).
        """
        stacks = self.stacks
        folded = self.folded
        bets = self.bets
        current = self._current_bet
        return any(
            other != seat and stacks[other] > 0 and not folded[other] and bets[other] + stacks[other] > current
            for other in range(self.num_seats)
        )

    def _why_no_raise(self, seat: int, owed: int, stack: int) -> tuple[str, str]:
        """Rule and reason why ``seat`` may not raise now."""
        if stack <= owed:
            return "R7.3", f"only {stack} chips behind, not more than the {owed} owed: call (all-in) or fold"
        if not self._anyone_else_can_bet(seat):
            return "R5.6", "no other player could put in more than the current bet, so nobody could answer a raise"
        if self._fixed and self._bet_count >= self.config.raise_cap:
            return "R7.6", f"the street is capped at {self.config.raise_cap} bets: call or fold"
        return "R7.4", (
            "the betting was not reopened: the raise since this seat acted "
            f"({self._current_bet - self._acted_at[seat]}) is less than a full raise ({self._min_inc}); call or fold"
        )

    def _put(self, seat: int, chips: int) -> None:
        """Move ``chips`` from a seat's stack to its bet on this street."""
        self.stacks[seat] -= chips
        self.bets[seat] += chips
        self.committed[seat] += chips

    def _post(self, seat: int, amount: int, kind: EventKind, live: bool) -> None:
        """Post a forced bet: live blinds count toward the bet, dead antes do not (R3.1, R3.2, R3.3)."""
        chips = min(amount, self.stacks[seat])
        if chips <= 0:
            return
        self.stacks[seat] -= chips
        self.committed[seat] += chips
        if live:
            self.bets[seat] += chips
        else:
            self.dead[seat] += chips
        self.events.append(Event(kind, seat, 0, chips, (), self.stacks[seat] == 0))

    def _post_forced_bets(self, entry_blinds: Collection[int]) -> None:
        """Antes, then small and big blind, then entry blinds; then the hole cards are dealt (R3, R4.1)."""
        cfg = self.config
        n = self.num_seats
        if cfg.antes_posted:
            if cfg.ante_mode is AnteMode.EACH:
                for k in range(n):
                    self._post((self.button + 1 + k) % n, cfg.ante, _E.POST_ANTE, False)
            else:
                self._post(self.big_blind_seat, cfg.ante, _E.POST_ANTE, False)
        self._post(self.small_blind_seat, cfg.small_blind, _E.POST_SMALL_BLIND, True)
        self._post(self.big_blind_seat, cfg.big_blind, _E.POST_BIG_BLIND, True)
        for seat in sorted(entry_blinds, key=lambda s: (s - self.button - 1) % n):
            if seat not in (self.small_blind_seat, self.big_blind_seat):
                self._post(seat, cfg.big_blind, _E.POST_ENTRY_BLIND, True)
        first = (self.button + 1) % n
        for k in range(n):
            seat = (first + k) % n
            self.events.append(Event(_E.DEAL_HOLE, seat, 0, 0, self.hole[seat]))

    def _start_betting(self, preflop: bool = False) -> None:
        """Open a betting round, or deal on to the showdown when at most one seat can still bet (R5.6)."""
        n = self.num_seats
        if preflop:
            self._current_bet = max(self.bets)
            self._bet_count = 1  # R7.6: pre-flop the big blind counts as the bet
            start = self.small_blind_seat if n == 2 else (self.big_blind_seat + 1) % n  # R2.3, R5.2
        else:
            start = (self.button + 1) % n  # R5.3
        if self._fixed:
            self._min_inc = self._unit()
            self._capped = not (self.config.uncapped_heads_up and self.folded.count(False) == 2)
        self.to_act = self._next_to_act(start)

    def _needs_action(self, seat: int) -> bool:
        """Whether a seat still has to act on this street (R5.4)."""
        return (
            not self.folded[seat]
            and self.stacks[seat] > 0
            and (self._acted_at[seat] == _NOT_ACTED or self.bets[seat] < self._current_bet)
        )

    def _next_to_act(self, start: int) -> int | None:
        """The first seat from ``start`` clockwise that must act, or None when the round is over."""
        n = self.num_seats
        stacks = self.stacks
        folded = self.folded
        active = 0
        for seat in range(n):
            if stacks[seat] > 0 and not folded[seat]:
                active += 1
        for k in range(n):
            seat = (start + k) % n
            if self._needs_action(seat):
                if active == 1 and self.bets[seat] >= self._current_bet:
                    return None  # R5.6: nobody left to bet against
                return seat
        return None

    def _advance(self, seat: int) -> None:
        """After an action: next seat to act, or close the round."""
        self.to_act = self._next_to_act((seat + 1) % self.num_seats)
        if self.to_act is None:
            self._end_round()

    def _return_uncalled(self) -> None:
        """Give back the part of the top live contribution that nobody matched (R10.2); dead antes stay."""
        live = [c - d for c, d in zip(self.committed, self.dead, strict=True)]
        top = max(live)
        holders = [s for s, c in enumerate(live) if c == top]
        if len(holders) != 1:
            return
        seat = holders[0]
        second = max(c for s, c in enumerate(live) if s != seat)
        excess = top - second
        if excess > 0:
            self.committed[seat] -= excess
            self.bets[seat] = max(0, self.bets[seat] - excess)
            self.stacks[seat] += excess
            self.events.append(Event(_E.UNCALLED_RETURN, seat, int(self.street), excess))

    def _end_round(self) -> None:
        """Close the betting round: return uncalled chips, then the next street or the showdown."""
        self._return_uncalled()
        while True:
            if self.street >= Street.RIVER:
                self._showdown()
                return
            self.street = Street(self.street + 1)
            self._deal_board(3 if self.street == Street.FLOP else 1)
            self.bets = [0] * self.num_seats
            self._acted_at = [_NOT_ACTED] * self.num_seats
            self._current_bet = 0
            self._min_inc = self.config.big_blind
            self._bet_count = 0
            self._last_aggressor = -1
            self._start_betting()
            if self.to_act is not None:
                return

    def _deal_board(self, count: int) -> None:
        """Burn one card, then deal ``count`` board cards (R1.4, R4.1)."""
        start = self._next_card + 1
        cards = self._deck[start : start + count]
        self._next_card = start + count
        self.board.extend(cards)
        self.events.append(Event(_E.DEAL_BOARD, -1, int(self.street), 0, cards))

    def _finish_uncontested(self) -> None:
        """Everybody else folded: the last player wins every pot without showing (R5.5)."""
        self.to_act = None
        self._return_uncalled()
        winner = self.folded.index(False)
        for index, pot in enumerate(self.pots()):
            self.events.append(Event(_E.WIN_POT, winner, int(self.street), pot.amount, (), False, index))
            self.stacks[winner] += pot.amount
        self._settle()

    def _showdown_order(self) -> list[int]:
        """Who shows first (R8.3): the river's last aggressor, else the first seat left of the button."""
        n = self.num_seats
        start = self._last_aggressor if self._last_aggressor >= 0 else (self.button + 1) % n
        return [(start + k) % n for k in range(n) if not self.folded[(start + k) % n]]

    def _showdown(self) -> None:
        """Compare hands (R8), reveal or muck by table policy (R8.4), award pots main first (R10.3, R10.4)."""
        self.to_act = None
        self.street = Street.SHOWDOWN
        board = self.board
        values = {seat: evaluate([*self.hole[seat], *board]) for seat in self._showdown_order()}
        self.hand_values = values
        pots = self.pots()
        best_shown: list[int] = [-1] * len(pots)
        for seat in values:
            value = values[seat]
            could_win = False
            for index, pot in enumerate(pots):
                if seat in pot.eligible and value >= best_shown[index]:
                    could_win = True
                    best_shown[index] = value
            if self.config.reveal_all or could_win:
                self.shown[seat] = self.hole[seat]
                self.events.append(Event(_E.SHOW, seat, int(Street.SHOWDOWN), 0, self.hole[seat]))
            else:
                self.events.append(Event(_E.MUCK, seat, int(Street.SHOWDOWN)))
        for index, pot in enumerate(pots):
            best = max(values[s] for s in pot.eligible)
            winners = [s for s in pot.eligible if values[s] == best]
            shares = split_pot(pot.amount, winners, self.button, self.num_seats, self.config.chip)
            for seat in sorted(shares, key=lambda s: (s - self.button - 1) % self.num_seats):
                self.stacks[seat] += shares[seat]
                self.events.append(Event(_E.WIN_POT, seat, int(Street.SHOWDOWN), shares[seat], (), False, index))
        self._settle()

    def _settle(self) -> None:
        """Record the payoffs; chips are conserved (R10.5)."""
        self.street = Street.SHOWDOWN
        self.payoffs = [self.stacks[s] - self.starting_stacks[s] for s in range(self.num_seats)]
        if sum(self.payoffs) != 0:  # pragma: no cover - a broken invariant is a bug, never user input
            raise AssertionError(f"R10.5 violated: payoffs {self.payoffs} do not add up to zero")

    def __repr__(self) -> str:
        return (
            f"Hand(street={self.street.name}, board={format_cards(self.board)!r}, stacks={self.stacks}, "
            f"bets={self.bets}, to_act={self.to_act})"
        )


def _name(kind: ActionKind, amount: int) -> str:
    """How an attempted action reads in an error message."""
    return str(Action(kind, amount)) if isinstance(kind, ActionKind) else repr(kind)


def _check_deck(deck: Sequence[int], num_seats: int) -> None:
    """A deck must hold distinct cards of one 52-card deck, enough for every hole card, burn and board card."""
    need = 2 * num_seats + 8
    if len(deck) < need:
        raise DeckError("R2.1", f"{num_seats} seats need {need} cards (hole cards, 3 burns, 5 board); got {len(deck)}")
    if len(set(deck)) != len(deck):
        raise DeckError("R1.1", "the deck repeats a card")
    for card in deck:
        if type(card) is not int or not 0 <= card < 52:
            raise DeckError("R1.1", f"{card!r} is not a card of a 52-card deck")
