'use strict';
// The strategy of the sample bot: a "smart calling station". Pure functions, no I/O, so it can be unit tested.
//
// Input is a *view*: an arena.v1.ActionRequest as decoded by @grpc/proto-loader (snake_case field names, enum
// values as their names), with every chip amount already converted to a JavaScript number (see bot.js toView).
// Output is { kind, amount, comment }: an ActionKind name, for RAISE a raise-to total for the street (RULES.md R6.2),
// and a short decision comment (why), which the referee records with the action and never shows another bot.
//
// The plan:
// - Pre-flop, with a premium hand (TT+, AK, AQs), raise to the minimum (clamped to the maximum), once per street.
// - After the flop, with a made hand that uses our hole cards (a pair or better that the board alone does not
//   have), raise to the minimum, once per street.
// - Otherwise check when possible, else call. A calling station never folds unless it has no other choice.
// - Whatever happens, the action returned is legal for the LegalActions given (ensureLegal).

const ActionKind = Object.freeze({
  FOLD: 'ACTION_KIND_FOLD',
  CHECK: 'ACTION_KIND_CHECK',
  CALL: 'ACTION_KIND_CALL',
  RAISE: 'ACTION_KIND_RAISE',
  ALL_IN: 'ACTION_KIND_ALL_IN',
});

const Street = Object.freeze({
  PREFLOP: 'STREET_PREFLOP',
  FLOP: 'STREET_FLOP',
  TURN: 'STREET_TURN',
  RIVER: 'STREET_RIVER',
});

// Hand categories, weakest first (RULES.md R9).
const Category = Object.freeze({
  HIGH_CARD: 0,
  ONE_PAIR: 1,
  TWO_PAIR: 2,
  THREE_OF_A_KIND: 3,
  STRAIGHT: 4,
  FLUSH: 5,
  FULL_HOUSE: 6,
  FOUR_OF_A_KIND: 7,
  STRAIGHT_FLUSH: 8,
});

const RANK_CHARS = '23456789TJQKA';

/** Parses "As", "Td", "10d" (R1.2 accepts 10 for T) into { rank: 2..14, suit: 's'|'h'|'d'|'c' }; null if invalid. */
function parseCard(text) {
  if (typeof text !== 'string') return null;
  const s = text.trim();
  const m = /^(10|[2-9TJQKA])([shdc])$/i.exec(s);
  if (!m) return null;
  const rankText = m[1] === '10' ? 'T' : m[1].toUpperCase();
  return { rank: RANK_CHARS.indexOf(rankText) + 2, suit: m[2].toLowerCase() };
}

function parseCards(list) {
  return (list || []).map(parseCard).filter((c) => c !== null);
}

/** True for the hands this bot raises pre-flop: pairs TT and better, AK (any suits), AQ suited. */
function isPremium(holeCards) {
  const cards = parseCards(holeCards);
  if (cards.length !== 2) return false;
  const [a, b] = cards;
  const hi = Math.max(a.rank, b.rank);
  const lo = Math.min(a.rank, b.rank);
  if (a.rank === b.rank) return a.rank >= 10; // TT, JJ, QQ, KK, AA
  if (hi === 14 && lo === 13) return true; // AK
  if (hi === 14 && lo === 12) return a.suit === b.suit; // AQs
  return false;
}

/** Highest straight top rank among a set of ranks (wheel A-2-3-4-5 tops at 5, R9.1), or 0 if none. */
function straightTop(ranks) {
  const present = new Set(ranks);
  if (present.has(14)) present.add(1); // the ace also plays low
  for (let top = 14; top >= 5; top -= 1) {
    let ok = true;
    for (let r = top; r > top - 5; r -= 1) {
      if (!present.has(r)) {
        ok = false;
        break;
      }
    }
    if (ok) return top;
  }
  return 0;
}

/** Category (R9) of the best five-card hand that can be made from the given cards (any number of them). */
function handCategory(cardTexts) {
  const cards = parseCards(cardTexts);
  if (cards.length === 0) return Category.HIGH_CARD;
  const bySuit = new Map();
  const rankCount = new Map();
  for (const c of cards) {
    if (!bySuit.has(c.suit)) bySuit.set(c.suit, []);
    bySuit.get(c.suit).push(c.rank);
    rankCount.set(c.rank, (rankCount.get(c.rank) || 0) + 1);
  }
  let flush = false;
  for (const ranks of bySuit.values()) {
    if (ranks.length >= 5) {
      flush = true;
      if (straightTop(ranks) > 0) return Category.STRAIGHT_FLUSH;
    }
  }
  const counts = [...rankCount.values()].sort((x, y) => y - x);
  if (counts[0] >= 4) return Category.FOUR_OF_A_KIND;
  if (counts[0] === 3 && counts.length > 1 && counts[1] >= 2) return Category.FULL_HOUSE;
  if (flush) return Category.FLUSH;
  if (straightTop([...rankCount.keys()]) > 0) return Category.STRAIGHT;
  if (counts[0] === 3) return Category.THREE_OF_A_KIND;
  if (counts[0] === 2 && counts.length > 1 && counts[1] === 2) return Category.TWO_PAIR;
  if (counts[0] === 2) return Category.ONE_PAIR;
  return Category.HIGH_CARD;
}

/**
 * True when our hole cards make a pair or better together with the board, and the hand is better than the board
 * plays by itself (so a pair on the board alone does not count).
 */
function hasMadeHand(holeCards, board) {
  const all = [...(holeCards || []), ...(board || [])];
  const ours = handCategory(all);
  return ours >= Category.ONE_PAIR && ours > handCategory(board || []);
}

/** True if this seat already bet, raised or went all-in on the current street (so we raise at most once). */
function raisedThisStreet(view) {
  const aggressive = new Set(['EVENT_KIND_BET', 'EVENT_KIND_RAISE', 'EVENT_KIND_ALL_IN']);
  return (view.history || []).some(
    (e) => e && e.seat === view.seat && e.street === view.street && aggressive.has(e.kind),
  );
}

function isWholeNumber(x) {
  return typeof x === 'number' && Number.isSafeInteger(x);
}

/** The raise-to total we use: min_raise_to clamped to max_raise_to; null if the range is unusable. */
function smallRaiseTo(legal) {
  if (!legal || !legal.can_raise) return null;
  const lo = legal.min_raise_to;
  const hi = legal.max_raise_to;
  if (!isWholeNumber(lo) || !isWholeNumber(hi) || hi <= 0) return null;
  return Math.min(Math.max(lo, 1), hi);
}

/** Check if free, else call, else fold (used for the passive line and after an ActionRejected). */
function safeAction(legal) {
  const l = legal || {};
  if (l.can_check) return { kind: ActionKind.CHECK, amount: 0 };
  if (l.can_call) return { kind: ActionKind.CALL, amount: 0 };
  if (l.can_fold) return { kind: ActionKind.FOLD, amount: 0 };
  // Never happens with a well-formed request (FOLD is always legal when we may act), but be defensive.
  const raise = { kind: ActionKind.RAISE, amount: smallRaiseTo(l) };
  if (raise.amount !== null && isLegal(raise, l)) return raise;
  return { kind: ActionKind.ALL_IN, amount: 0 }; // ALL_IN is always accepted when the seat may act.
}

/** True if the action is accepted by these LegalActions (ALL_IN always is). */
function isLegal(action, legal) {
  const l = legal || {};
  if (!action) return false;
  switch (action.kind) {
    case ActionKind.FOLD:
      return Boolean(l.can_fold);
    case ActionKind.CHECK:
      return Boolean(l.can_check);
    case ActionKind.CALL:
      return Boolean(l.can_call);
    case ActionKind.RAISE:
      return (
        Boolean(l.can_raise) &&
        isWholeNumber(action.amount) &&
        action.amount >= l.min_raise_to &&
        action.amount <= l.max_raise_to
      );
    case ActionKind.ALL_IN:
      return true;
    default:
      return false;
  }
}

/** Returns the action if legal, else the safe fallback. */
function ensureLegal(action, legal) {
  return isLegal(action, legal) ? action : safeAction(legal);
}

/** Picks an action for an ActionRequest view. Always legal for view.legal. */
function decide(view) {
  const legal = (view && view.legal) || {};
  const hole = (view && view.hole_cards) || [];
  const board = (view && view.board) || [];
  const street = view && view.street;

  let strong;
  if (street === Street.PREFLOP || (street === undefined && board.length === 0)) {
    strong = isPremium(hole);
  } else {
    strong = hasMadeHand(hole, board);
  }

  const preflop = street === Street.PREFLOP || (street === undefined && board.length === 0);
  const why = strong ? (preflop ? 'premium hand' : 'made hand') : preflop ? 'not a premium hand' : 'no made hand';
  if (strong && !raisedThisStreet(view || {})) {
    const to = smallRaiseTo(legal);
    if (to !== null) return { ...ensureLegal({ kind: ActionKind.RAISE, amount: to }, legal), comment: `${why}: raise` };
  }
  const passive = ensureLegal(safeAction(legal), legal);
  return { ...passive, comment: `${why}: ${passive.kind.replace('ACTION_KIND_', '').toLowerCase()}` };
}

module.exports = {
  ActionKind,
  Street,
  Category,
  parseCard,
  isPremium,
  handCategory,
  hasMadeHand,
  raisedThisStreet,
  safeAction,
  isLegal,
  ensureLegal,
  decide,
};
