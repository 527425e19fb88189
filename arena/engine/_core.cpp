/*
 * arena.engine._core: the state machine of one hand of Texas Hold'em (RULES.md R2-R10), compiled.
 *
 * The same machine as arena/engine/hand.py, line for line: the Python ``Hand`` there is the readable reference and
 * the oracle (tests/engine/test_core_differential.py drives both with the same actions and compares every state);
 * this one is what the referee runs. Same public API, same events, same payoffs, same errors with the same rule
 * numbers and messages. What differs is only how the state is kept: plain C arrays in the object, events as small
 * records turned into ``Event`` tuples only when ``events`` is read (and then once each), lists built when read.
 *
 * Written against the CPython C API directly (no binding library): a decision through the Python API is a few
 * attribute reads and two calls, and each costs tens of nanoseconds this way. Chips are 64-bit: stacks, blinds and
 * antes up to 2**53 each (ARENA_ENGINE=python takes any size). Hand values come from the SDK's C evaluator
 * (arena_sdk._eval's capsule: the same function as arena.cards.evaluator.evaluate), called at the showdown only.
 *
 * The machine itself (the State; the sections "pots", "the machine" and "acting") and the request's encoders
 * (encode_request) call no Python: the C API of core_api.h (the capsule ``_C_API``) runs them on threads without
 * the GIL. Only the Python API's wrappers around them read arguments, word refusals and build objects.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "core_api.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr int MAX_N = 22;
constexpr int64_t NOT_ACTED = -1;
constexpr int64_t MAX_CHIPS = int64_t(1) << 53;

enum Kind { FOLD = 1, CHECK = 2, CALL = 3, RAISE = 4, ALL_IN = 5 };
enum Street { PREFLOP = 0, FLOP = 1, TURN = 2, RIVER = 3, SHOWDOWN = 4 };
enum EvKind {
    POST_ANTE = 1, POST_SMALL_BLIND, POST_BIG_BLIND, POST_ENTRY_BLIND, DEAL_HOLE, DEAL_BOARD, E_FOLD, E_CHECK,
    E_CALL, BET, E_RAISE, UNCALLED_RETURN, SHOW, MUCK, WIN_POT
};
enum Structure { NO_LIMIT = 0, POT_LIMIT = 1, FIXED_LIMIT = 2 };
enum AnteMode { ANTE_NONE = 0, ANTE_EACH = 1, ANTE_BIG_BLIND = 2 };

/* ------------------------------------------------------------------------------------------ Python objects used */

struct Py {
    PyObject *action_kind[6];   /* ActionKind members by value (index 0 unused) */
    PyObject *event_kind[16];   /* EventKind members by value */
    PyObject *street[5];        /* Street members */
    PyObject *structure[3];     /* Structure.NO_LIMIT, POT_LIMIT, FIXED_LIMIT */
    PyObject *ante_mode[3];     /* AnteMode.NONE, EACH, BIG_BLIND */
    PyTypeObject *event_type;   /* Event (a NamedTuple) */
    PyTypeObject *legal_type;   /* LegalActions (a slotted dataclass) */
    PyTypeObject *pot_type;     /* Pot (a frozen slotted dataclass) */
    PyObject *rule_error, *config_error, *illegal_error;
    PyObject *py_hand;          /* arena.engine.hand.Hand: the reference, asked for the exact error of odd input */
    PyObject *format_cards;     /* arena.cards.format_cards */
    PyObject *hand_name;        /* arena.cards.evaluator.hand_name: a shown hand's category (Hand.end_wire) */
    Py_ssize_t legal_off[6];    /* slot offsets of LegalActions' fields, or -1 to build it by calling the class */
    Py_ssize_t pot_off[2];      /* slot offsets of Pot's fields, or -1 */
    PyObject *s_kind, *s_amount; /* interned attribute names of Action */
    PyObject *empty_tuple;
};
Py py;

/* arena_sdk._eval's C API (its capsule ``_C_API``; the layout _eval.c's EvalApi has): evaluate is the function
 * behind arena_sdk._eval.evaluate, without its argument checks, and needs no GIL. */
struct EvalApi {
    int version;
    uint32_t (*evaluate)(const int *cards, int n);
};
constexpr int EVAL_API_VERSION = 1;
const EvalApi *eval_api = nullptr;

/* The TableConfig fields one hand reads, and the config object they came from (kept to answer ``config``). */
struct Config {
    int64_t small_blind, big_blind, ante, small_bet, big_bet, raise_cap, chip;
    int structure, ante_mode;
    bool uncapped_heads_up, reveal_all, antes_posted;
};

struct Ev {
    int64_t amount;
    int8_t kind, seat, street, ncards, all_in, pot;
    int8_t cards[3];
};

struct PotRec {
    int64_t amount;
    uint32_t eligible; /* bit per seat */
};

/* ------------------------------------------------------------------------------------------ the hand's state */

struct State {
    Config cfg;
    int n, button, sb_seat, bb_seat;
    int64_t starting[MAX_N], stacks[MAX_N], bets[MAX_N], committed[MAX_N], dead[MAX_N], acted_at[MAX_N];
    bool folded[MAX_N];
    int8_t hole[MAX_N][2];
    int8_t deck[52];
    int deck_len;
    int8_t board[5];
    int board_len;
    int street, to_act; /* to_act -1: nobody */
    bool over;
    int64_t current_bet, min_inc, bet_count;
    int last_aggressor, next_card;
    bool fixed, pot_limit, capped;
    int shown_order[MAX_N], shown_count;       /* seats whose cards were shown, in order */
    int value_order[MAX_N], value_count;       /* seats evaluated at the showdown, in order */
    int64_t values[MAX_N];
    std::vector<Ev> events;
};

struct HandObject {
    PyObject_HEAD
    State s;
    PyObject *config;      /* the TableConfig */
    PyObject *events_list; /* Event objects built so far (the list ``events`` returns), or NULL */
    Py_ssize_t events_built;
    PyObject *hole_list;   /* the list ``hole`` returns, built once */
};

PyTypeObject HandType = { /* filled by PyInit__core */
    PyVarObject_HEAD_INIT(NULL, 0)
};

/* ------------------------------------------------------------------------------------------ small helpers */

PyObject *new_int(int64_t v) { return PyLong_FromLongLong(v); }

/* Raise ``cls(*args)`` (the engine's typed errors take their fields as arguments). */
void raise_error(PyObject *cls, PyObject *args)
{
    if (args == NULL)
        return;
    PyObject *exc = PyObject_Call(cls, args, NULL);
    Py_DECREF(args);
    if (exc == NULL)
        return;
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
}

/* IllegalActionError(seat, action, rule, message): ``action`` and ``message`` are consumed (either may be NULL
 * after a failure, whose error then stands). */
void illegal(PyObject *seat, PyObject *action, const char *rule, PyObject *message)
{
    if (message == NULL || action == NULL) {
        Py_XDECREF(action);
        Py_XDECREF(message);
        return;
    }
    raise_error(py.illegal_error, Py_BuildValue("ONsN", seat, action, rule, message));
}

/* How an attempted action reads in an error message (hand.py _name). New reference. */
PyObject *action_name(PyObject *kind, PyObject *amount)
{
    if (kind == py.action_kind[RAISE])
        return PyUnicode_FromFormat("raise to %S", amount);
    if (kind == py.action_kind[FOLD])
        return PyUnicode_FromString("fold");
    if (kind == py.action_kind[CHECK])
        return PyUnicode_FromString("check");
    if (kind == py.action_kind[CALL])
        return PyUnicode_FromString("call");
    if (kind == py.action_kind[ALL_IN])
        return PyUnicode_FromString("all-in");
    return PyObject_Repr(kind);
}

/* An attribute of ``obj`` as a 64-bit int within [lo, hi]; -1 with ``*bad`` set when it is not one. */
int64_t int_attr(PyObject *obj, const char *name, bool *bad)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL) {
        *bad = true;
        return -1;
    }
    int overflow = 0;
    long long x = PyLong_Check(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : -1;
    if (!PyLong_Check(v) || overflow || x > MAX_CHIPS || x < -MAX_CHIPS) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "the compiled engine needs TableConfig.%s to be an int within 2**53, got %R",
                         name, v);
        *bad = true;
    }
    Py_DECREF(v);
    return x;
}

bool bool_attr(PyObject *obj, const char *name, bool *bad)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL) {
        *bad = true;
        return false;
    }
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (t < 0)
        *bad = true;
    return t > 0;
}

int member_index(PyObject *obj, const char *name, PyObject *const *members, int count, bool *bad)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL) {
        *bad = true;
        return 0;
    }
    for (int i = 0; i < count; i++)
        if (v == members[i]) {
            Py_DECREF(v);
            return i;
        }
    PyErr_Format(PyExc_TypeError, "TableConfig.%s: %R is not one of its enum's members", name, v);
    Py_DECREF(v);
    *bad = true;
    return 0;
}

/* The fields of a TableConfig; the last one read is remembered (a table plays hand after hand with one config). */
PyObject *cached_config = NULL;
Config cached_fields;

bool read_config(PyObject *obj, Config *out)
{
    if (obj == cached_config && obj != NULL) {
        *out = cached_fields;
        return true;
    }
    bool bad = false;
    Config c;
    c.small_blind = int_attr(obj, "small_blind", &bad);
    if (!bad) c.big_blind = int_attr(obj, "big_blind", &bad);
    if (!bad) c.ante = int_attr(obj, "ante", &bad);
    if (!bad) c.small_bet = int_attr(obj, "small_bet", &bad);
    if (!bad) c.big_bet = int_attr(obj, "big_bet", &bad);
    if (!bad) c.raise_cap = int_attr(obj, "raise_cap", &bad);
    if (!bad) c.chip = int_attr(obj, "chip", &bad);
    if (!bad) c.structure = member_index(obj, "structure", py.structure, 3, &bad);
    if (!bad) c.ante_mode = member_index(obj, "ante_mode", py.ante_mode, 3, &bad);
    if (!bad) c.uncapped_heads_up = bool_attr(obj, "uncapped_heads_up", &bad);
    if (!bad) c.reveal_all = bool_attr(obj, "reveal_all", &bad);
    if (bad)
        return false;
    if (c.chip < 1 || c.big_blind <= 0) {
        PyErr_SetString(PyExc_ValueError, "not a valid TableConfig (chip and big blind must be positive)");
        return false;
    }
    c.antes_posted = c.ante > 0 && c.ante_mode != ANTE_NONE;
    Py_INCREF(obj);
    Py_XSETREF(cached_config, obj);
    cached_fields = c;
    *out = c;
    return true;
}

/* ------------------------------------------------------------------------------------------ pots (pots.py) */

/* Main and side pots, main first (R10.1): build_pots of pots.py. Returns how many. */
int build_pots(const int64_t *contrib, const bool *folded, int n, int64_t dead, PotRec *out)
{
    uint32_t in_hand = 0;
    for (int s = 0; s < n; s++)
        if (!folded[s])
            in_hand |= 1u << s;
    int k = 0;
    if (dead && in_hand)
        out[k++] = {dead, in_hand};
    int64_t levels[MAX_N];
    int m = 0;
    for (int s = 0; s < n; s++)
        if (contrib[s] > 0)
            levels[m++] = contrib[s];
    std::sort(levels, levels + m);
    m = int(std::unique(levels, levels + m) - levels);
    int64_t previous = 0, carry = 0;
    for (int i = 0; i < m; i++) {
        int64_t level = levels[i];
        uint32_t contributors = 0;
        int count = 0;
        for (int s = 0; s < n; s++)
            if (contrib[s] >= level) {
                contributors |= 1u << s;
                count++;
            }
        int64_t amount = (level - previous) * count + carry;
        carry = 0;
        uint32_t eligible = contributors & in_hand;
        if (k && (!eligible || eligible == out[k - 1].eligible))
            out[k - 1].amount += amount;
        else if (eligible)
            out[k++] = {amount, eligible};
        else
            carry = amount;
        previous = level;
    }
    return k;
}

int hand_pots(const State &s, PotRec *out)
{
    int64_t live[MAX_N];
    int64_t dead = 0;
    for (int i = 0; i < s.n; i++) {
        live[i] = s.committed[i] - s.dead[i];
        dead += s.dead[i];
    }
    return build_pots(live, s.folded, s.n, dead, out);
}

inline int clockwise(int seat, int button, int n) { return ((seat - button - 1) % n + n) % n; }

/* ------------------------------------------------------------------------------------------ the machine */

void add_event(State &s, int kind, int seat, int street, int64_t amount = 0, const int8_t *cards = nullptr,
               int ncards = 0, bool all_in = false, int pot = -1)
{
    Ev e;
    e.amount = amount;
    e.kind = int8_t(kind);
    e.seat = int8_t(seat);
    e.street = int8_t(street);
    e.ncards = int8_t(ncards);
    e.all_in = all_in;
    e.pot = int8_t(pot);
    for (int i = 0; i < ncards; i++)
        e.cards[i] = cards[i];
    s.events.push_back(e);
}

inline int64_t unit(const State &s) { return s.street <= FLOP ? s.cfg.small_bet : s.cfg.big_bet; }

int count_unfolded(const State &s)
{
    int c = 0;
    for (int i = 0; i < s.n; i++)
        c += !s.folded[i];
    return c;
}

bool anyone_else_can_bet(const State &s, int seat)
{
    for (int o = 0; o < s.n; o++)
        if (o != seat && s.stacks[o] > 0 && !s.folded[o] && s.bets[o] + s.stacks[o] > s.current_bet)
            return true;
    return false;
}

/* (min, max) raise-to for ``seat``, or (0, 0) when it may not raise (R7.1-R7.6). */
void raise_bounds(const State &s, int seat, int64_t owed, int64_t stack, int64_t *low, int64_t *high)
{
    *low = *high = 0;
    if (stack <= owed)
        return;
    int64_t acted = s.acted_at[seat];
    if (acted != NOT_ACTED && s.current_bet - acted < s.min_inc)
        return;
    if (!anyone_else_can_bet(s, seat))
        return;
    int64_t all_in = s.bets[seat] + stack;
    if (s.fixed) {
        if (s.capped && s.bet_count >= s.cfg.raise_cap)
            return;
        int64_t full = s.current_bet + unit(s);
        *low = *high = full <= all_in ? full : all_in;
        return;
    }
    int64_t lo = s.current_bet + s.min_inc;
    if (lo > all_in) {
        *low = *high = all_in;
        return;
    }
    *low = lo;
    if (s.pot_limit) {
        int64_t pot = 0;
        for (int i = 0; i < s.n; i++)
            pot += s.committed[i];
        int64_t hi = s.current_bet + pot + owed;
        *high = std::max(lo, std::min(hi, all_in));
        return;
    }
    *high = all_in;
}

void put(State &s, int seat, int64_t chips)
{
    s.stacks[seat] -= chips;
    s.bets[seat] += chips;
    s.committed[seat] += chips;
}

void post(State &s, int seat, int64_t amount, int kind, bool live)
{
    int64_t chips = std::min(amount, s.stacks[seat]);
    if (chips <= 0)
        return;
    s.stacks[seat] -= chips;
    s.committed[seat] += chips;
    if (live)
        s.bets[seat] += chips;
    else
        s.dead[seat] += chips;
    add_event(s, kind, seat, 0, chips, nullptr, 0, s.stacks[seat] == 0);
}

bool needs_action(const State &s, int seat)
{
    return !s.folded[seat] && s.stacks[seat] > 0 && (s.acted_at[seat] == NOT_ACTED || s.bets[seat] < s.current_bet);
}

int next_to_act(const State &s, int start)
{
    int n = s.n, active = 0;
    for (int i = 0; i < n; i++)
        if (s.stacks[i] > 0 && !s.folded[i])
            active++;
    for (int k = 0; k < n; k++) {
        int seat = (start + k) % n;
        if (needs_action(s, seat)) {
            if (active == 1 && s.bets[seat] >= s.current_bet)
                return -1; /* R5.6: nobody left to bet against */
            return seat;
        }
    }
    return -1;
}

void start_betting(State &s, bool preflop)
{
    int n = s.n, start;
    if (preflop) {
        int64_t top = s.bets[0];
        for (int i = 1; i < n; i++)
            top = std::max(top, s.bets[i]);
        s.current_bet = top;
        s.bet_count = 1; /* R7.6: pre-flop the big blind counts as the bet */
        start = n == 2 ? s.sb_seat : (s.bb_seat + 1) % n;
    } else {
        start = (s.button + 1) % n;
    }
    if (s.fixed) {
        s.min_inc = unit(s);
        s.capped = !(s.cfg.uncapped_heads_up && count_unfolded(s) == 2);
    }
    s.to_act = next_to_act(s, start);
}

void return_uncalled(State &s)
{
    int n = s.n;
    int64_t live[MAX_N];
    int64_t top = INT64_MIN;
    for (int i = 0; i < n; i++) {
        live[i] = s.committed[i] - s.dead[i];
        top = std::max(top, live[i]);
    }
    int holder = -1, holders = 0;
    for (int i = 0; i < n; i++)
        if (live[i] == top) {
            holder = i;
            holders++;
        }
    if (holders != 1)
        return;
    int64_t second = INT64_MIN;
    for (int i = 0; i < n; i++)
        if (i != holder)
            second = std::max(second, live[i]);
    int64_t excess = top - second;
    if (excess > 0) {
        s.committed[holder] -= excess;
        s.bets[holder] = std::max<int64_t>(0, s.bets[holder] - excess);
        s.stacks[holder] += excess;
        add_event(s, UNCALLED_RETURN, holder, s.street, excess);
    }
}

void deal_board(State &s, int count)
{
    int start = s.next_card + 1;
    int8_t cards[3];
    int got = 0;
    for (int i = start; i < start + count && i < s.deck_len; i++)
        cards[got++] = s.deck[i];
    s.next_card = start + count;
    for (int i = 0; i < got; i++)
        s.board[s.board_len++] = cards[i];
    add_event(s, DEAL_BOARD, -1, s.street, 0, cards, got);
}

/* The sum of the payoffs (R10.5: zero once the hand is settled). */
int64_t payoff_total(const State &s)
{
    int64_t total = 0;
    for (int i = 0; i < s.n; i++)
        total += s.stacks[i] - s.starting[i];
    return total;
}

/* The hand is over; false when the payoffs do not add up to zero (a bug: the Python API raises it, payoffs_error). */
bool settle(State &s)
{
    s.street = SHOWDOWN;
    s.over = true;
    return payoff_total(s) == 0;
}

bool finish_uncontested(State &s)
{
    s.to_act = -1;
    return_uncalled(s);
    int winner = 0;
    while (s.folded[winner])
        winner++;
    PotRec pots[MAX_N + 1];
    int k = hand_pots(s, pots);
    for (int i = 0; i < k; i++) {
        add_event(s, WIN_POT, winner, s.street, pots[i].amount, nullptr, 0, false, i);
        s.stacks[winner] += pots[i].amount;
    }
    return settle(s);
}

bool showdown(State &s)
{
    int n = s.n;
    s.to_act = -1;
    s.street = SHOWDOWN;
    int start = s.last_aggressor >= 0 ? s.last_aggressor : (s.button + 1) % n; /* R8.3 */
    s.value_count = 0;
    for (int k = 0; k < n; k++) {
        int seat = (start + k) % n;
        if (s.folded[seat])
            continue;
        int cards[7] = {s.hole[seat][0], s.hole[seat][1]}; /* the deck holds the whole board (2n + 8 cards or more) */
        for (int i = 0; i < s.board_len; i++)
            cards[2 + i] = s.board[i];
        s.values[seat] = eval_api->evaluate(cards, 2 + s.board_len);
        s.value_order[s.value_count++] = seat;
    }
    PotRec pots[MAX_N + 1];
    int np = hand_pots(s, pots);
    int64_t best_shown[MAX_N + 1];
    for (int i = 0; i < np; i++)
        best_shown[i] = -1;
    s.shown_count = 0;
    for (int j = 0; j < s.value_count; j++) {
        int seat = s.value_order[j];
        int64_t value = s.values[seat];
        bool could_win = false;
        for (int i = 0; i < np; i++)
            if ((pots[i].eligible >> seat & 1) && value >= best_shown[i]) {
                could_win = true;
                best_shown[i] = value;
            }
        if (s.cfg.reveal_all || could_win) {
            s.shown_order[s.shown_count++] = seat;
            add_event(s, SHOW, seat, SHOWDOWN, 0, s.hole[seat], 2);
        } else {
            add_event(s, MUCK, seat, SHOWDOWN);
        }
    }
    for (int i = 0; i < np; i++) {
        int64_t best = INT64_MIN;
        for (int seat = 0; seat < n; seat++)
            if (pots[i].eligible >> seat & 1)
                best = std::max(best, s.values[seat]);
        int winners[MAX_N], w = 0; /* ordered clockwise from the button's left (R10.4) */
        for (int k = 0; k < n; k++) {
            int seat = (s.button + 1 + k) % n;
            if ((pots[i].eligible >> seat & 1) && s.values[seat] == best)
                winners[w++] = seat;
        }
        int64_t chip = s.cfg.chip;
        int64_t units = pots[i].amount / chip, remainder = pots[i].amount % chip;
        int64_t base = units / w, extra = units % w;
        for (int k = 0; k < w; k++) {
            int64_t share = base * chip + (k < extra ? chip : 0) + (k == 0 ? remainder : 0);
            s.stacks[winners[k]] += share;
            add_event(s, WIN_POT, winners[k], SHOWDOWN, share, nullptr, 0, false, i);
        }
    }
    return settle(s);
}

bool end_round(State &s)
{
    return_uncalled(s);
    while (true) {
        if (s.street >= RIVER)
            return showdown(s);
        s.street += 1;
        deal_board(s, s.street == FLOP ? 3 : 1);
        for (int i = 0; i < s.n; i++) {
            s.bets[i] = 0;
            s.acted_at[i] = NOT_ACTED;
        }
        s.current_bet = 0;
        s.min_inc = s.cfg.big_blind;
        s.bet_count = 0;
        s.last_aggressor = -1;
        start_betting(s, false);
        if (s.to_act >= 0)
            return true;
    }
}

bool advance(State &s, int seat)
{
    s.to_act = next_to_act(s, (seat + 1) % s.n);
    if (s.to_act < 0)
        return end_round(s);
    return true;
}

/* ------------------------------------------------------------------------------------------ acting */

/* Why an action is refused: one code per message of hand.py (Hand.apply, _raise, _why_no_raise). The check lives
 * once, in ``judge``; the Python API words a refusal (refusal_error), the C API only reports it. */
enum Refusal {
    ACCEPTED = 0,
    HAND_OVER,        /* R6.3 the hand is over */
    OUT_OF_TURN,      /* R6.3 */
    UNKNOWN_KIND,     /* R6.1 */
    FOLD_UNOWED,      /* R6.1 nothing to call: check instead of folding */
    CHECK_OWED,       /* R6.1 facing a bet (numbers: the bet, the call) */
    CALL_UNOWED,      /* R6.1 no bet to call */
    NOT_WHOLE,        /* R6.3 the amount is not an int (only the Python API can say so) */
    NEGATIVE,         /* R6.3 */
    SHORT_STACK,      /* R7.3 no more chips than owed (numbers: stack, owed) */
    UNANSWERABLE,     /* R5.6 nobody else could put in more */
    CAPPED,           /* R7.6 (number: the cap) */
    NOT_REOPENED,     /* R7.4 (numbers: the raise since the seat acted, a full raise) */
    BELOW_MIN_BET,    /* R7.1, R7.6 fixed (number: the minimum) */
    BELOW_MIN_RAISE,  /* R7.2, R7.6 fixed (number: the minimum) */
    OVER_STACK,       /* R7.1 (numbers: stack, all-in total) */
    OVER_POT_LIMIT,   /* R7.5 (number: the most) */
    OVER_FIXED_UNIT,  /* R7.6 (number: the most) */
};

/* What ``judge`` decided: accepted with the action to apply (ALL_IN resolved, hand.py's order: the top raise, else
 * a call, else a check), or refused with the rule hand.py names and the numbers its message quotes. */
struct Verdict {
    int refusal;      /* a Refusal */
    const char *rule; /* refused: "R6.3" ... */
    int kind;         /* accepted: FOLD, CHECK, CALL or RAISE */
    int64_t a, b;     /* accepted RAISE: a is the raise-to; refused: the message's numbers */
};

inline Verdict refused(int why, const char *rule, int64_t a = 0, int64_t b = 0) { return {why, rule, 0, a, b}; }
inline Verdict accepted(int kind, int64_t amount = 0) { return {ACCEPTED, nullptr, kind, amount, 0}; }

/* Whether ``seat`` may do ``kind`` (raising to ``amount``: read for RAISE only; ``whole`` false when the caller's
 * amount was not an int) now: hand.py Hand.apply's checks, in its order. The state is only read. */
Verdict judge(const State &s, int seat, int kind, int64_t amount, bool whole = true)
{
    if (s.to_act < 0)
        return refused(HAND_OVER, "R6.3");
    if (seat != s.to_act)
        return refused(OUT_OF_TURN, "R6.3");
    int64_t owed = s.current_bet - s.bets[seat];
    int64_t stack = s.stacks[seat];
    int64_t low, high;
    switch (kind) {
    case FOLD:
        return owed > 0 ? accepted(FOLD) : refused(FOLD_UNOWED, "R6.1");
    case CHECK:
        return owed <= 0 ? accepted(CHECK) : refused(CHECK_OWED, "R6.1", s.current_bet, std::min(owed, stack));
    case CALL:
        return owed > 0 ? accepted(CALL) : refused(CALL_UNOWED, "R6.1");
    case ALL_IN: /* the largest commitment the rules allow (R6.1) */
        raise_bounds(s, seat, owed, stack, &low, &high);
        return high ? accepted(RAISE, high) : accepted(owed > 0 ? CALL : CHECK);
    case RAISE:
        break;
    default:
        return refused(UNKNOWN_KIND, "R6.1");
    }
    /* a bet or raise (R6.2, R7): hand.py _raise */
    if (!whole)
        return refused(NOT_WHOLE, "R6.3");
    if (amount < 0)
        return refused(NEGATIVE, "R6.3");
    raise_bounds(s, seat, owed, stack, &low, &high);
    if (high == 0) { /* hand.py _why_no_raise */
        if (stack <= owed)
            return refused(SHORT_STACK, "R7.3", stack, owed);
        if (!anyone_else_can_bet(s, seat))
            return refused(UNANSWERABLE, "R5.6");
        if (s.fixed && s.bet_count >= s.cfg.raise_cap)
            return refused(CAPPED, "R7.6", s.cfg.raise_cap);
        return refused(NOT_REOPENED, "R7.4", s.current_bet - s.acted_at[seat], s.min_inc);
    }
    if (amount < low) {
        const char *rule = s.fixed ? "R7.6" : (s.current_bet == 0 ? "R7.1" : "R7.2");
        return refused(s.current_bet == 0 ? BELOW_MIN_BET : BELOW_MIN_RAISE, rule, low);
    }
    if (amount > high) {
        int64_t all_in = s.bets[seat] + stack;
        if (amount > all_in)
            return refused(OVER_STACK, "R7.1", stack, all_in);
        return s.fixed ? refused(OVER_FIXED_UNIT, "R7.6", high) : refused(OVER_POT_LIMIT, "R7.5", high);
    }
    return accepted(RAISE, amount);
}

/* Apply what ``judge`` accepted for ``seat`` and move the hand on; false when the hand settled with payoffs that do
 * not add up (settle). */
bool perform(State &s, int seat, const Verdict &v)
{
    int64_t owed = s.current_bet - s.bets[seat];
    int64_t stack = s.stacks[seat];
    int street = s.street;
    if (v.kind == FOLD) {
        s.folded[seat] = true;
        s.acted_at[seat] = s.current_bet;
        add_event(s, E_FOLD, seat, street);
        if (count_unfolded(s) == 1)
            return finish_uncontested(s);
    } else if (v.kind == CHECK) {
        s.acted_at[seat] = s.current_bet;
        add_event(s, E_CHECK, seat, street);
    } else if (v.kind == CALL) {
        int64_t chips = owed < stack ? owed : stack;
        put(s, seat, chips);
        s.acted_at[seat] = s.current_bet;
        add_event(s, E_CALL, seat, street, chips, nullptr, 0, s.stacks[seat] == 0);
    } else { /* RAISE to v.a */
        int64_t amount = v.a;
        int64_t increment = amount - s.current_bet;
        bool opened = s.current_bet == 0;
        if (increment >= s.min_inc) { /* a full bet or raise (R7.2); a short all-in is not (R7.4) */
            s.min_inc = increment;
            s.bet_count += 1;
        }
        put(s, seat, amount - s.bets[seat]);
        s.current_bet = amount;
        s.acted_at[seat] = amount;
        s.last_aggressor = seat;
        add_event(s, opened ? BET : E_RAISE, seat, street, amount, nullptr, 0, s.stacks[seat] == 0);
    }
    return advance(s, seat);
}

/* ------------------------------------------------------------------------------------------ acting from Python */

/* AssertionError for a hand that settled with payoffs not adding up (settle returned false). */
void payoffs_error(const State &s)
{
    PyErr_Format(PyExc_AssertionError, "R10.5 violated: payoffs do not add up to zero (%lld)",
                 (long long)payoff_total(s));
}

/* IllegalActionError for a refused ``kind`` ``amount`` of ``seat_obj``: hand.py's action name, rule and message. */
void refusal_error(const State &s, const Verdict &v, PyObject *seat_obj, int seat, PyObject *kind, PyObject *amount)
{
    long long a = (long long)v.a, b = (long long)v.b;
    switch (v.refusal) {
    case HAND_OVER:
        illegal(seat_obj, action_name(kind, amount), v.rule, PyUnicode_FromString("the hand is over"));
        return;
    case OUT_OF_TURN:
        illegal(seat_obj, action_name(kind, amount), v.rule,
                PyUnicode_FromFormat("out of turn: seat %d is to act; seat %S %s", s.to_act, seat_obj,
                                     seat >= 0 && s.folded[seat] ? "has folded" : "is not to act"));
        return;
    case UNKNOWN_KIND:
        illegal(seat_obj, PyObject_Repr(kind), v.rule, PyUnicode_FromString("unknown action kind"));
        return;
    case FOLD_UNOWED:
        illegal(seat_obj, PyUnicode_FromString("fold"), v.rule,
                PyUnicode_FromString("there is nothing to call: check instead of folding"));
        return;
    case CHECK_OWED:
        illegal(seat_obj, PyUnicode_FromString("check"), v.rule,
                PyUnicode_FromFormat("cannot check facing a bet of %lld: call %lld, raise or fold", a, b));
        return;
    case CALL_UNOWED:
        illegal(seat_obj, PyUnicode_FromString("call"), v.rule,
                PyUnicode_FromString("there is no bet to call: check instead"));
        return;
    }
    PyObject *message; /* the rest refuse a raise (an all-in is never refused past the turn) */
    switch (v.refusal) {
    case NOT_WHOLE:
        message = PyUnicode_FromFormat("amount must be a whole number of chips, got %R", amount);
        break;
    case NEGATIVE:
        message = PyUnicode_FromFormat("amount must not be negative, got %S", amount);
        break;
    case SHORT_STACK:
        message = PyUnicode_FromFormat("only %lld chips behind, not more than the %lld owed: call (all-in) or fold",
                                       a, b);
        break;
    case UNANSWERABLE:
        message = PyUnicode_FromString(
            "no other player could put in more than the current bet, so nobody could answer a raise");
        break;
    case CAPPED:
        message = PyUnicode_FromFormat("the street is capped at %lld bets: call or fold", a);
        break;
    case NOT_REOPENED:
        message = PyUnicode_FromFormat("the betting was not reopened: the raise since this seat acted (%lld) is less "
                                       "than a full raise (%lld); call or fold", a, b);
        break;
    case BELOW_MIN_BET:
    case BELOW_MIN_RAISE:
        message = PyUnicode_FromFormat("the minimum %s is to %lld", v.refusal == BELOW_MIN_BET ? "bet" : "raise", a);
        break;
    case OVER_STACK:
        message = PyUnicode_FromFormat("only %lld chips behind: the most is %lld (all-in)", a, b);
        break;
    default: /* OVER_POT_LIMIT, OVER_FIXED_UNIT */
        message = PyUnicode_FromFormat("%s allows at most a raise to %lld",
                                       v.refusal == OVER_FIXED_UNIT ? "the fixed bet unit" : "the pot limit", a);
        break;
    }
    illegal(seat_obj, PyUnicode_FromFormat("raise to %S", amount), v.rule, message);
}

/* Apply ``kind`` (and the raise-to ``amount``) for ``seat``: hand.py Hand.apply, its arguments any objects. */
bool apply(State &s, PyObject *seat_obj, PyObject *kind_obj, PyObject *amount_obj)
{
    int kind = 0; /* not an ActionKind member: refused as unknown */
    for (int k = FOLD; k <= ALL_IN; k++)
        if (kind_obj == py.action_kind[k])
            kind = k;
    bool seat_int = PyLong_Check(seat_obj);
    int seat = -1; /* -1: no seat of this table */
    if (seat_int) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(seat_obj, &overflow);
        if (v == -1 && PyErr_Occurred())
            return false;
        if (!overflow && v >= 0 && v < s.n)
            seat = int(v);
    }
    bool whole = PyLong_CheckExact(amount_obj);
    int64_t amount = 0;
    if (whole) { /* beyond 64 bits: past any bound, on the same side */
        int overflow = 0;
        amount = PyLong_AsLongLongAndOverflow(amount_obj, &overflow);
        if (overflow)
            amount = overflow > 0 ? INT64_MAX : INT64_MIN;
    }
    Verdict v = judge(s, seat, kind, amount, whole);
    if (v.refusal != HAND_OVER && !seat_int) {
        PyErr_Format(PyExc_TypeError, "seat must be an int, got %R", seat_obj);
        return false;
    }
    if (v.refusal) {
        refusal_error(s, v, seat_obj, seat, kind_obj, amount_obj);
        return false;
    }
    if (!perform(s, seat, v)) {
        payoffs_error(s);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------------------------------ building objects */

/* An instance of a slotted class with its slots filled directly (``values`` are stolen). NULL on failure. */
PyObject *slotted(PyTypeObject *type, const Py_ssize_t *offsets, int count, PyObject **values)
{
    for (int i = 0; i < count; i++)
        if (values[i] == NULL) {
            for (int j = 0; j < count; j++)
                Py_XDECREF(values[j]);
            return NULL;
        }
    if (offsets[0] < 0) {
        PyObject *args = PyTuple_New(count);
        if (args == NULL)
            return NULL;
        for (int i = 0; i < count; i++)
            PyTuple_SET_ITEM(args, i, values[i]);
        PyObject *obj = PyObject_Call((PyObject *)type, args, NULL);
        Py_DECREF(args);
        return obj;
    }
    PyObject *obj = type->tp_alloc(type, 0);
    if (obj == NULL) {
        for (int j = 0; j < count; j++)
            Py_DECREF(values[j]);
        return NULL;
    }
    for (int i = 0; i < count; i++)
        *(PyObject **)((char *)obj + offsets[i]) = values[i];
    return obj;
}

PyObject *make_pot(const PotRec &p, int n)
{
    int count = 0;
    for (int s = 0; s < n; s++)
        count += p.eligible >> s & 1;
    PyObject *eligible = PyTuple_New(count);
    if (eligible == NULL)
        return NULL;
    for (int s = 0, k = 0; s < n; s++)
        if (p.eligible >> s & 1)
            PyTuple_SET_ITEM(eligible, k++, PyLong_FromLong(s));
    PyObject *values[2] = {new_int(p.amount), eligible};
    return slotted(py.pot_type, py.pot_off, 2, values);
}

PyObject *cards_tuple(const int8_t *cards, int count)
{
    if (count == 0) {
        Py_INCREF(py.empty_tuple);
        return py.empty_tuple;
    }
    PyObject *t = PyTuple_New(count);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < count; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromLong(cards[i]));
    return t;
}

PyObject *make_event(const Ev &e)
{
    PyObject *cards = cards_tuple(e.cards, e.ncards);
    PyObject *amount = new_int(e.amount);
    if (cards == NULL || amount == NULL) {
        Py_XDECREF(cards);
        Py_XDECREF(amount);
        return NULL;
    }
    PyObject *ev = py.event_type->tp_alloc(py.event_type, 7);
    if (ev == NULL) {
        Py_DECREF(cards);
        Py_DECREF(amount);
        return NULL;
    }
    PyObject *kind = py.event_kind[int(e.kind)];
    Py_INCREF(kind);
    PyObject *all_in = e.all_in ? Py_True : Py_False;
    Py_INCREF(all_in);
    PyTuple_SET_ITEM(ev, 0, kind);
    PyTuple_SET_ITEM(ev, 1, PyLong_FromLong(e.seat));
    PyTuple_SET_ITEM(ev, 2, PyLong_FromLong(e.street));
    PyTuple_SET_ITEM(ev, 3, amount);
    PyTuple_SET_ITEM(ev, 4, cards);
    PyTuple_SET_ITEM(ev, 5, all_in);
    PyTuple_SET_ITEM(ev, 6, PyLong_FromLong(e.pot));
    return ev;
}

template <typename T> PyObject *int_list(const T *values, int count)
{
    PyObject *list = PyList_New(count);
    if (list == NULL)
        return NULL;
    for (int i = 0; i < count; i++) {
        PyObject *v = new_int(int64_t(values[i]));
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* ------------------------------------------------------------------------------------------ the type */

HandObject *alloc_hand(PyTypeObject *type)
{
    HandObject *self = (HandObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    new (&self->s) State();
    self->config = NULL;
    self->events_list = NULL;
    self->events_built = 0;
    self->hole_list = NULL;
    return self;
}

void hand_dealloc(HandObject *self)
{
    self->s.~State();
    Py_XDECREF(self->config);
    Py_XDECREF(self->events_list);
    Py_XDECREF(self->hole_list);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Odd input (a stack or card that is not an int, a bad seat count...): the reference raises the exact error. */
PyObject *refused_by_reference(PyObject *config, PyObject *stacks, PyObject *deck, PyObject *button,
                               PyObject *entry)
{
    PyObject *twin = PyObject_CallFunctionObjArgs(py.py_hand, config, stacks, deck, button, entry, NULL);
    if (twin == NULL)
        return NULL;
    Py_DECREF(twin);
    PyErr_SetString(PyExc_TypeError,
                    "the compiled engine takes int stacks (up to 2**53), cards, button and entry seats; "
                    "ARENA_ENGINE=python takes any");
    return NULL;
}

PyObject *hand_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static const char *names[] = {"config", "stacks", "deck", "button", "entry_blinds", NULL};
    PyObject *config, *stacks_obj, *deck_obj, *button_obj = NULL, *entry_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OO:Hand", (char **)names, &config, &stacks_obj, &deck_obj,
                                     &button_obj, &entry_obj))
        return NULL;
    PyObject *zero = NULL;
    if (button_obj == NULL) {
        zero = PyLong_FromLong(0);
        button_obj = zero;
    }
    if (entry_obj == NULL)
        entry_obj = py.empty_tuple;
    PyObject *result = NULL;
    PyObject *stacks = NULL, *deck = NULL, *entry = NULL;
    HandObject *self = NULL;
    Config cfg;
    int n = 0, button = 0;
    int64_t stack_values[MAX_N];
    int8_t cards[52];
    int deck_len = 0;
    std::vector<int> entries;
    bool odd = false;

    stacks = PySequence_Fast(stacks_obj, "stacks must be a sequence");
    deck = PySequence_Fast(deck_obj, "deck must be a sequence");
    entry = PySequence_Fast(entry_obj, "entry_blinds must be a collection");
    if (stacks == NULL || deck == NULL || entry == NULL)
        goto done;
    if (!read_config(config, &cfg))
        goto done;
    n = int(std::min<Py_ssize_t>(PySequence_Fast_GET_SIZE(stacks), 1000));
    if (n < 2 || n > MAX_N || !PyLong_Check(button_obj)) {
        odd = true;
        goto done;
    }
    {
        int overflow = 0;
        long long b = PyLong_AsLongLongAndOverflow(button_obj, &overflow);
        if (overflow || b < 0 || b >= n) {
            odd = true;
            goto done;
        }
        button = int(b);
    }
    for (int i = 0; i < n; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(stacks, i);
        int overflow = 0;
        long long x = PyLong_CheckExact(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : 0;
        if (!PyLong_CheckExact(v) || overflow || x <= 0) {
            odd = true;
            goto done;
        }
        if (x > MAX_CHIPS) {
            raise_error(py.config_error,
                        Py_BuildValue("sN", "R11.1",
                                      PyUnicode_FromFormat("seat %d: the compiled engine takes stacks up to 2**53 "
                                                           "chips, got %S (ARENA_ENGINE=python takes any)", i, v)));
            goto done;
        }
        stack_values[i] = x;
    }
    {
        Py_ssize_t len = PySequence_Fast_GET_SIZE(deck);
        if (len < 2 * n + 8 || len > 52) {
            odd = true;
            goto done;
        }
        uint64_t seen = 0;
        for (Py_ssize_t i = 0; i < len; i++) {
            PyObject *v = PySequence_Fast_GET_ITEM(deck, i);
            long c = PyLong_CheckExact(v) ? PyLong_AsLong(v) : -1;
            if (c < 0 || c >= 52 || (seen >> c & 1)) {
                PyErr_Clear();
                odd = true;
                goto done;
            }
            seen |= uint64_t(1) << c;
            cards[i] = int8_t(c);
        }
        deck_len = int(len);
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(entry); i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(entry, i);
        int overflow = 0;
        long long e = PyLong_Check(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : -1;
        if (!PyLong_Check(v) || overflow || e < 0 || e >= n) {
            PyErr_Clear();
            odd = true;
            goto done;
        }
        entries.push_back(int(e));
    }

    self = alloc_hand(type);
    if (self == NULL)
        goto done;
    {
        State &s = self->s;
        Py_INCREF(config);
        self->config = config;
        s.cfg = cfg;
        s.n = n;
        s.button = button;
        for (int i = 0; i < n; i++) {
            s.starting[i] = s.stacks[i] = stack_values[i];
            s.bets[i] = s.committed[i] = s.dead[i] = 0;
            s.folded[i] = false;
            s.acted_at[i] = NOT_ACTED;
        }
        std::memcpy(s.deck, cards, deck_len);
        s.deck_len = deck_len;
        s.board_len = 0;
        s.street = PREFLOP;
        s.to_act = -1;
        s.over = false;
        s.shown_count = s.value_count = 0;
        s.current_bet = 0;
        s.min_inc = cfg.big_blind;
        s.bet_count = 0;
        s.last_aggressor = -1;
        s.fixed = cfg.structure == FIXED_LIMIT;
        s.pot_limit = cfg.structure == POT_LIMIT;
        s.capped = s.fixed;
        if (n == 2) {
            s.sb_seat = button;
            s.bb_seat = (button + 1) % n; /* R2.3 heads-up */
        } else {
            s.sb_seat = (button + 1) % n;
            s.bb_seat = (button + 2) % n;
        }
        int first = (button + 1) % n;
        for (int k = 0; k < n; k++) {
            int seat = (first + k) % n;
            s.hole[seat][0] = cards[k];
            s.hole[seat][1] = cards[n + k];
        }
        s.next_card = 2 * n;
        s.events.reserve(3 * n + 24);
        /* The forced bets (R3), then the hole cards (R4.1): hand.py _post_forced_bets */
        if (cfg.antes_posted) {
            if (cfg.ante_mode == ANTE_EACH) {
                for (int k = 0; k < n; k++)
                    post(s, (button + 1 + k) % n, cfg.ante, POST_ANTE, false);
            } else {
                post(s, s.bb_seat, cfg.ante, POST_ANTE, false);
            }
        }
        post(s, s.sb_seat, cfg.small_blind, POST_SMALL_BLIND, true);
        post(s, s.bb_seat, cfg.big_blind, POST_BIG_BLIND, true);
        std::stable_sort(entries.begin(), entries.end(), [&](int a, int b) {
            return clockwise(a, button, n) < clockwise(b, button, n);
        });
        for (int seat : entries)
            if (seat != s.sb_seat && seat != s.bb_seat)
                post(s, seat, cfg.big_blind, POST_ENTRY_BLIND, true);
        for (int k = 0; k < n; k++) {
            int seat = (first + k) % n;
            add_event(s, DEAL_HOLE, seat, 0, 0, s.hole[seat], 2);
        }
        start_betting(s, true);
        if (s.to_act < 0 && !end_round(s)) {
            payoffs_error(s);
            goto done;
        }
    }
    result = (PyObject *)self;
    self = NULL;
done:
    if (odd && !PyErr_Occurred())
        result = refused_by_reference(config, stacks_obj, deck_obj, button_obj, entry_obj);
    Py_XDECREF(self);
    Py_XDECREF(stacks);
    Py_XDECREF(deck);
    Py_XDECREF(entry);
    Py_XDECREF(zero);
    return result;
}

/* ---- methods */

PyObject *hand_apply(HandObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *seat = NULL, *kind = NULL, *amount = NULL;
    if (nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "apply() takes seat, kind and amount");
        return NULL;
    }
    if (nargs > 0) seat = args[0];
    if (nargs > 1) kind = args[1];
    if (nargs > 2) amount = args[2];
    if (kwnames) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            PyObject *v = args[nargs + i];
            PyObject **slot = NULL;
            if (PyUnicode_CompareWithASCIIString(name, "seat") == 0) slot = &seat;
            else if (PyUnicode_CompareWithASCIIString(name, "kind") == 0) slot = &kind;
            else if (PyUnicode_CompareWithASCIIString(name, "amount") == 0) slot = &amount;
            if (slot == NULL || *slot != NULL) {
                PyErr_Format(PyExc_TypeError, "apply() got an unexpected or repeated argument %R", name);
                return NULL;
            }
            *slot = v;
        }
    }
    if (seat == NULL || kind == NULL) {
        PyErr_SetString(PyExc_TypeError, "apply() needs seat and kind");
        return NULL;
    }
    PyObject *zero = NULL;
    if (amount == NULL)
        amount = zero = PyLong_FromLong(0);
    bool ok = apply(self->s, seat, kind, amount);
    Py_XDECREF(zero);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *hand_act(HandObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "act() takes seat and action");
        return NULL;
    }
    PyObject *kind = PyObject_GetAttr(args[1], py.s_kind);
    if (kind == NULL)
        return NULL;
    PyObject *amount = PyObject_GetAttr(args[1], py.s_amount);
    if (amount == NULL) {
        Py_DECREF(kind);
        return NULL;
    }
    bool ok = apply(self->s, args[0], kind, amount);
    Py_DECREF(kind);
    Py_DECREF(amount);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *hand_legal_actions(HandObject *self, PyObject *)
{
    State &s = self->s;
    int seat = s.to_act;
    if (seat < 0) {
        raise_error(py.rule_error, Py_BuildValue("ss", "R6.3", "the hand is over: nobody is to act"));
        return NULL;
    }
    int64_t owed = s.current_bet - s.bets[seat];
    int64_t stack = s.stacks[seat];
    int64_t low, high;
    raise_bounds(s, seat, owed, stack, &low, &high);
    PyObject *can_fold = owed > 0 ? Py_True : Py_False;
    PyObject *can_check = owed == 0 ? Py_True : Py_False;
    Py_INCREF(can_fold);
    Py_INCREF(can_check);
    PyObject *values[6] = {PyLong_FromLong(seat), can_fold, can_check, new_int(owed < stack ? owed : stack),
                           new_int(low), new_int(high)};
    return slotted(py.legal_type, py.legal_off, 6, values);
}

PyObject *hand_pots_method(HandObject *self, PyObject *)
{
    PotRec pots[MAX_N + 1];
    int k = hand_pots(self->s, pots);
    PyObject *list = PyList_New(k);
    if (list == NULL)
        return NULL;
    for (int i = 0; i < k; i++) {
        PyObject *p = make_pot(pots[i], self->s.n);
        if (p == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, p);
    }
    return list;
}

PyObject *hand_is_active(HandObject *self, PyObject *arg)
{
    Py_ssize_t seat = PyNumber_AsSsize_t(arg, PyExc_IndexError);
    if (seat == -1 && PyErr_Occurred())
        return NULL;
    if (seat < 0)
        seat += self->s.n;
    if (seat < 0 || seat >= self->s.n) {
        PyErr_SetString(PyExc_IndexError, "list index out of range");
        return NULL;
    }
    return PyBool_FromLong(!self->s.folded[seat] && self->s.stacks[seat] > 0);
}

PyObject *hand_copy(HandObject *self, PyObject *)
{
    HandObject *twin = alloc_hand(Py_TYPE(self));
    if (twin == NULL)
        return NULL;
    twin->s = self->s;
    Py_INCREF(self->config);
    twin->config = self->config;
    if (self->events_list != NULL) {
        twin->events_list = PyList_GetSlice(self->events_list, 0, PyList_GET_SIZE(self->events_list));
        if (twin->events_list == NULL) {
            Py_DECREF(twin);
            return NULL;
        }
        twin->events_built = self->events_built;
    }
    return (PyObject *)twin;
}

PyObject *hand_deepcopy(HandObject *self, PyObject *) { return hand_copy(self, NULL); }

PyObject *hand_repr(HandObject *self)
{
    static const char *street_names[] = {"PREFLOP", "FLOP", "TURN", "RIVER", "SHOWDOWN"};
    const State &s = self->s;
    PyObject *board = int_list(s.board, s.board_len);
    PyObject *stacks = int_list(s.stacks, s.n);
    PyObject *bets = int_list(s.bets, s.n);
    PyObject *text = board ? PyObject_CallOneArg(py.format_cards, board) : NULL;
    PyObject *r = NULL;
    if (text && stacks && bets) {
        if (s.to_act >= 0)
            r = PyUnicode_FromFormat("Hand(street=%s, board=%R, stacks=%R, bets=%R, to_act=%d)",
                                     street_names[s.street], text, stacks, bets, s.to_act);
        else
            r = PyUnicode_FromFormat("Hand(street=%s, board=%R, stacks=%R, bets=%R, to_act=None)",
                                     street_names[s.street], text, stacks, bets);
    }
    Py_XDECREF(board);
    Py_XDECREF(stacks);
    Py_XDECREF(bets);
    Py_XDECREF(text);
    return r;
}


/* ------------------------------------------------------------------------------------------ request bytes */

/* How an ActionRequest is encoded: field keys, enum values and card texts, handed over by arena.transport.wire
 * (set_wire_format) from the protocol's descriptors, so this file names no field number of its own. */
struct WireFormat {
    bool ready = false;
    uint8_t req[9];    /* ActionRequest: hole_cards, board, button, street, seats, pots, legal, clock, history */
    uint8_t seat[6];   /* SeatState: seat, name, stack, bet, committed, status */
    uint8_t pot[2];    /* Pot: amount, eligible_seats (packed) */
    uint8_t legal[7];  /* LegalActions: can_fold, can_check, can_call, call_amount, can_raise, min_raise_to, max_raise_to */
    uint8_t clock[2];  /* Clock: action_ms_left, bank_ms_left */
    uint8_t event[7];  /* PublicEvent: kind, seat, street, amount, cards, by_timeout, pot_index */
    uint8_t end[1];    /* HandEnd: history */
    uint8_t outer[3];  /* RefereeMessage: action_request; ActionRequest: request_id, seat (Hand.request_wire) */
    uint8_t end_head[6]; /* RefereeMessage: hand_end; HandEnd: table_id, hand_id, board, shown, payoffs */
    uint8_t shown[3];  /* ShownHand: seat, cards, category */
    uint8_t payoff[3]; /* SeatPayoff: seat, net, final_stack */
    uint8_t start[8];  /* RefereeMessage: hand_start; HandStart: table_id, hand_id, hand_number, button, seat,
                          hole_cards, seats */
    uint8_t batch[2];  /* RefereeMessage: batch; RefereeBatch: messages (pack_batch) */
    int64_t status[3]; /* SeatStatus: active, folded, all-in */
    int64_t event_kind[16];
    int64_t all_in_kind;
    int64_t street[5];
    std::string card[52]; /* each card's text with its length before it */
    int64_t hand_number_offset; /* the protocol's hand number is the referee's plus this (convert.wire_hand_number) */
};
WireFormat wire_format;
constexpr int WIRE_KEYS = 9 + 6 + 2 + 7 + 2 + 7 + 1 + 3 + 6 + 3 + 3 + 8 + 2;

/* A protobuf encoding under construction. */
struct Buf {
    std::string b;
    void varint(uint64_t v)
    {
        while (v > 0x7F) {
            b.push_back(char((v & 0x7F) | 0x80));
            v >>= 7;
        }
        b.push_back(char(v));
    }
    /* An integer, enum or bool field as proto3 writes it: nothing when 0 (negative ints take ten bytes). */
    void num(uint8_t key, int64_t v)
    {
        if (v == 0)
            return;
        b.push_back(char(key));
        varint(uint64_t(v));
    }
    void bytes(uint8_t key, const char *data, size_t size)
    {
        b.push_back(char(key));
        varint(size);
        b.append(data, size);
    }
    void message(uint8_t key, const Buf &inner) { bytes(key, inner.b.data(), inner.b.size()); }
    void card(uint8_t key, int c)
    {
        b.push_back(char(key));
        b.append(wire_format.card[c]);
    }
};

/* A length-delimited field ``key`` holding ``body``, as a new bytes object (written into it directly). */
PyObject *message_bytes(uint8_t key, const Buf &body)
{
    Buf head;
    head.b.push_back(char(key));
    head.varint(body.b.size());
    PyObject *out = PyBytes_FromStringAndSize(NULL, Py_ssize_t(head.b.size() + body.b.size()));
    if (out == NULL)
        return NULL;
    char *at = PyBytes_AS_STRING(out);
    std::memcpy(at, head.b.data(), head.b.size());
    std::memcpy(at + head.b.size(), body.b.data(), body.b.size());
    return out;
}

/* Flags by event index (the events the referee played for a seat: by_timeout); events past ``count`` are not. */
struct Flags {
    const uint8_t *at;
    size_t count;
    bool operator[](size_t i) const { return i < count && at[i]; }
};

/* The hand's events as ``viewer`` sees them (every other seat's hole cards hidden, R4.2; viewer -1: everybody's),
 * each a PublicEvent in the repeated field ``key`` (ActionRequest.history, HandEnd.history): convert.event_message
 * with wire_amount's amounts and the referee's actions flagged ``by_timeout``. */
void encode_history(const State &s, int viewer, Flags timeouts, uint8_t key, Buf &out)
{
    const WireFormat &w = wire_format;
    Buf inner;
    int64_t bets[MAX_N] = {0}; /* each seat's bet on the street as the events so far left it (convert.wire_amount) */
    for (size_t i = 0; i < s.events.size(); i++) {
        const Ev &e = s.events[i];
        int64_t amount = e.amount;
        bool wager = e.kind == BET || e.kind == E_RAISE || e.kind == E_CALL;
        if (e.kind == DEAL_BOARD)
            std::fill(bets, bets + MAX_N, 0);
        else if (e.kind == POST_SMALL_BLIND || e.kind == POST_BIG_BLIND || e.kind == POST_ENTRY_BLIND ||
                 e.kind == E_CALL)
            bets[e.seat] += e.amount;
        else if (e.kind == BET || e.kind == E_RAISE)
            bets[e.seat] = e.amount;
        if (e.all_in && wager)
            amount = bets[e.seat];
        inner.b.clear();
        inner.num(w.event[0], e.all_in && wager ? w.all_in_kind : w.event_kind[int(e.kind)]);
        inner.num(w.event[1], e.seat);
        inner.num(w.event[2], w.street[int(e.street)]);
        inner.num(w.event[3], amount);
        if (!(e.kind == DEAL_HOLE && e.seat != viewer)) /* nobody sees another seat's hole cards (R4.2) */
            for (int c = 0; c < e.ncards; c++)
                inner.card(w.event[4], e.cards[c]);
        inner.num(w.event[5], timeouts[i]);
        if (e.pot > 0)
            inner.num(w.event[6], e.pot);
        out.message(key, inner);
    }
}

/* Every seat's SeatState (folded, else all-in with an empty stack, else active: wire.seats_field) as the repeated
 * field ``key``; ``names`` one per seat, UTF-8. */
void encode_seats(const State &s, const ArenaText *names, uint8_t key, Buf &out)
{
    const WireFormat &w = wire_format;
    Buf inner;
    for (int i = 0; i < s.n; i++) {
        inner.b.clear();
        inner.num(w.seat[0], i);
        if (names[i].size)
            inner.bytes(w.seat[1], names[i].data, names[i].size);
        inner.num(w.seat[2], s.stacks[i]);
        inner.num(w.seat[3], s.bets[i]);
        inner.num(w.seat[4], s.committed[i]);
        inner.num(w.seat[5], w.status[s.folded[i] ? 1 : s.stacks[i] == 0 ? 2 : 0]);
        out.message(key, inner);
    }
}

/* The part of ``viewer``'s ActionRequest that the hand decides (hole_cards .. history): see Hand.view_wire. */
void encode_view(const State &s, int viewer, const ArenaText *names, Flags timeouts, int64_t action_ms_left,
                 int64_t bank_ms_left, Buf &out)
{
    const WireFormat &w = wire_format;
    out.b.reserve(out.b.size() + 256 + 24 * s.events.size() + 48 * s.n);
    out.card(w.req[0], s.hole[viewer][0]);
    out.card(w.req[0], s.hole[viewer][1]);
    for (int i = 0; i < s.board_len; i++)
        out.card(w.req[1], s.board[i]);
    out.num(w.req[2], s.button);
    out.num(w.req[3], w.street[s.street]);
    encode_seats(s, names, w.req[4], out);
    Buf inner;
    PotRec pots[MAX_N + 1];
    int np = hand_pots(s, pots);
    for (int k = 0; k < np; k++) {
        inner.b.clear();
        inner.num(w.pot[0], pots[k].amount);
        Buf seats;
        for (int i = 0; i < s.n; i++)
            if (pots[k].eligible >> i & 1)
                seats.varint(uint64_t(i));
        if (!seats.b.empty())
            inner.message(w.pot[1], seats);
        out.message(w.req[5], inner);
    }
    int64_t owed = s.current_bet - s.bets[viewer], stack = s.stacks[viewer], low, high;
    raise_bounds(s, viewer, owed, stack, &low, &high);
    int64_t call = owed < stack ? owed : stack;
    inner.b.clear();
    inner.num(w.legal[0], owed > 0);
    inner.num(w.legal[1], owed == 0);
    inner.num(w.legal[2], call > 0);
    inner.num(w.legal[3], call);
    inner.num(w.legal[4], high > 0);
    inner.num(w.legal[5], low);
    inner.num(w.legal[6], high);
    out.message(w.req[6], inner);
    inner.b.clear();
    inner.num(w.clock[0], action_ms_left);
    inner.num(w.clock[1], bank_ms_left);
    out.message(w.req[7], inner);
    encode_history(s, viewer, timeouts, w.req[8], out);
}

/* The RefereeMessage's action_request field's contents asking ``seat`` (the seat to act) to act, in ActionRequest's
 * field order: ``head`` (the table and hand ids, encoded by the caller), request_id, seat, the view (encode_view),
 * ``tail`` (the config field). Hand.request_wire and the C API's request_wire both encode with it. */
void encode_request(const State &s, int seat, const ArenaText *names, Flags timeouts, int64_t action_ms_left,
                    int64_t bank_ms_left, ArenaText head, int64_t request_id, ArenaText tail, Buf &body)
{
    const WireFormat &w = wire_format;
    body.b.reserve(head.size + tail.size + 512);
    if (head.size)
        body.b.append(head.data, head.size);
    body.num(w.outer[1], request_id);
    body.num(w.outer[2], seat);
    encode_view(s, seat, names, timeouts, action_ms_left, bank_ms_left, body);
    if (tail.size)
        body.b.append(tail.data, tail.size);
}

/* The event indexes in ``indexes`` (a collection of ints) as flags over ``count`` events (none when empty). */
bool event_flags(PyObject *indexes, size_t count, std::vector<uint8_t> &flags)
{
    Py_ssize_t size = PyObject_Length(indexes);
    if (size < 0)
        return false;
    if (size == 0)
        return true;
    flags.assign(count, 0);
    PyObject *it = PyObject_GetIter(indexes);
    if (it == NULL)
        return false;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        long index = PyLong_AsLong(item);
        Py_DECREF(item);
        if (index == -1 && PyErr_Occurred())
            break;
        if (index >= 0 && size_t(index) < count)
            flags[size_t(index)] = 1;
    }
    Py_DECREF(it);
    return !PyErr_Occurred();
}

/* ``names``, a tuple of one str per seat, as each one's UTF-8 (held by the str objects: valid while ``names``
 * lives); false with a TypeError (or the encoding's error) set. */
bool names_arg(const State &s, PyObject *names, std::vector<ArenaText> &out)
{
    if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != s.n) {
        PyErr_Format(PyExc_TypeError, "names must be a tuple of %d names", s.n);
        return false;
    }
    for (int i = 0; i < s.n; i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) {
            PyErr_SetString(PyExc_TypeError, "names must be strings");
            return false;
        }
    out.resize(size_t(s.n));
    for (int i = 0; i < s.n; i++) {
        Py_ssize_t size;
        out[i].data = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(names, i), &size);
        if (out[i].data == NULL)
            return false;
        out[i].size = size_t(size);
    }
    return true;
}

/* view_wire's and request_wire's arguments from the seat to bank_ms_left (seat, names, timeouts, action_ms_left,
 * bank_ms_left), checked and converted for the encoders; false with an exception set. */
struct ViewArgs {
    int seat;
    std::vector<ArenaText> names;
    std::vector<uint8_t> timeouts;
    int64_t action_ms_left, bank_ms_left;
    Flags flags() const { return {timeouts.data(), timeouts.size()}; }
};

bool view_args(const State &s, PyObject *const *args, ViewArgs &out)
{
    long seat = PyLong_AsLong(args[0]);
    if (seat == -1 && PyErr_Occurred())
        return false;
    if (seat != s.to_act || seat < 0) {
        PyErr_Format(PyExc_ValueError, "a request is only built for the seat to act (%d), not seat %ld", s.to_act, seat);
        return false;
    }
    if (!names_arg(s, args[1], out.names))
        return false;
    if (!event_flags(args[2], s.events.size(), out.timeouts))
        return false;
    long long action_ms = PyLong_AsLongLong(args[3]);
    long long bank_ms = PyLong_AsLongLong(args[4]);
    if ((action_ms == -1 || bank_ms == -1) && PyErr_Occurred())
        return false;
    out.seat = int(seat);
    out.action_ms_left = action_ms;
    out.bank_ms_left = bank_ms;
    return true;
}

PyObject *hand_view_wire(HandObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "view_wire() takes seat, names, timeouts, action_ms_left, bank_ms_left");
        return NULL;
    }
    if (!wire_format.ready)
        return PyBytes_FromStringAndSize(NULL, 0);
    ViewArgs a;
    if (!view_args(self->s, args, a))
        return NULL;
    Buf out;
    encode_view(self->s, a.seat, a.names.data(), a.flags(), a.action_ms_left, a.bank_ms_left, out);
    return PyBytes_FromStringAndSize(out.b.data(), Py_ssize_t(out.b.size()));
}

/* Hand.request_wire(seat, names, timeouts, action_ms_left, bank_ms_left, head, request_id, tail): the whole
 * RefereeMessage asking ``seat`` to act (encode_request). One call where the table's fast path made six
 * (arena.transport.wire.RequestBuilder.serialized joins the same parts). */
PyObject *hand_request_wire(HandObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "request_wire() takes seat, names, timeouts, action_ms_left, bank_ms_left, "
                                         "head, request_id, tail");
        return NULL;
    }
    if (!wire_format.ready) {
        PyErr_SetString(PyExc_RuntimeError, "request_wire(): the wire format is not set (set_wire_format)");
        return NULL;
    }
    if (!PyBytes_Check(args[5]) || !PyBytes_Check(args[7])) {
        PyErr_SetString(PyExc_TypeError, "request_wire(): head and tail are bytes");
        return NULL;
    }
    long long request_id = PyLong_AsLongLong(args[6]);
    if (request_id == -1 && PyErr_Occurred())
        return NULL;
    if (request_id < 0) {
        PyErr_SetString(PyExc_ValueError, "request_wire(): a request id is not negative");
        return NULL;
    }
    ViewArgs a;
    if (!view_args(self->s, args, a))
        return NULL;
    ArenaText head = {PyBytes_AS_STRING(args[5]), size_t(PyBytes_GET_SIZE(args[5]))};
    ArenaText tail = {PyBytes_AS_STRING(args[7]), size_t(PyBytes_GET_SIZE(args[7]))};
    Buf body;
    encode_request(self->s, a.seat, a.names.data(), a.flags(), a.action_ms_left, a.bank_ms_left, head, request_id,
                   tail, body);
    return message_bytes(wire_format.outer[0], body);
}

/* A str argument's UTF-8 bytes appended as the string field ``key`` (nothing when empty); false with an error set. */
bool text_arg(PyObject *text, uint8_t key, Buf &out)
{
    Py_ssize_t size;
    const char *data = PyUnicode_AsUTF8AndSize(text, &size);
    if (data == NULL)
        return false;
    if (size)
        out.bytes(key, data, size_t(size));
    return true;
}

/* Hand.start_wire(seat, table_id, hand_id, hand_number, names): the RefereeMessage holding ``seat``'s HandStart,
 * serialized (wire.hand_start_bytes: its hole cards, every seat's stack, bet and committed chips once the blinds
 * and antes are posted, from the posts' events). ``hand_number`` as the referee counts it. */
PyObject *hand_start_wire(HandObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyUnicode_Check(args[1]) || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "start_wire() takes seat, table_id (str), hand_id (str), hand_number, names");
        return NULL;
    }
    if (!wire_format.ready) {
        PyErr_SetString(PyExc_RuntimeError, "start_wire(): the wire format is not set (set_wire_format)");
        return NULL;
    }
    const State &s = self->s;
    long seat = PyLong_AsLong(args[0]);
    long long number = PyLong_AsLongLong(args[3]);
    if ((seat == -1 || number == -1) && PyErr_Occurred())
        return NULL;
    if (seat < 0 || seat >= s.n || number < 0 || number > INT64_MAX - wire_format.hand_number_offset) {
        PyErr_Format(PyExc_ValueError, "start_wire(): no seat %ld at a table of %d, or a hand number out of range",
                     seat, s.n);
        return NULL;
    }
    std::vector<ArenaText> names;
    if (!names_arg(s, args[4], names))
        return NULL;
    const WireFormat &w = wire_format;
    Buf body;
    if (!text_arg(args[1], w.start[1], body) || !text_arg(args[2], w.start[2], body))
        return NULL;
    body.num(w.start[3], number + w.hand_number_offset);
    body.num(w.start[4], s.button);
    body.num(w.start[5], seat);
    body.card(w.start[6], s.hole[seat][0]);
    body.card(w.start[6], s.hole[seat][1]);
    /* the seats as the posts left them (table.posted: the blinds count toward the bet, the antes only toward the
     * chips committed), whatever happened since: posts that put every seat all in play the hand out at once */
    State posts;
    posts.n = s.n;
    for (int i = 0; i < s.n; i++) {
        posts.bets[i] = posts.committed[i] = 0;
        posts.folded[i] = false;
    }
    for (const Ev &e : s.events) {
        if (e.kind == POST_SMALL_BLIND || e.kind == POST_BIG_BLIND || e.kind == POST_ENTRY_BLIND)
            posts.bets[e.seat] += e.amount;
        else if (e.kind != POST_ANTE)
            break;
        posts.committed[e.seat] += e.amount;
    }
    for (int i = 0; i < s.n; i++)
        posts.stacks[i] = s.starting[i] - posts.committed[i];
    encode_seats(posts, names.data(), w.start[7], body);
    return message_bytes(w.start[0], body);
}

/* The names of shown hands' categories (convert.shown_hands: arena.cards.evaluator.hand_name) by a hand value's top
 * twelve bits (its category and first two tiebreak ranks, all the name depends on): set once, at the wire format's
 * import (set_hand_names), so that a HandEnd is encoded without calling Python (the C API's end_wire). */
std::vector<std::string> hand_names;
bool hand_names_ready = false;
constexpr size_t HAND_NAME_KEYS = 4096;

/* The HandEnd's ShownHand.category of a value, from the table (false when the table has no name for it). */
bool table_name(int64_t value, Buf &inner)
{
    size_t key = size_t(value) >> 12;
    if (value < 0 || key >= hand_names.size() || hand_names[key].empty())
        return false;
    inner.bytes(wire_format.shown[2], hand_names[key].data(), hand_names[key].size());
    return true;
}

/* A shown hand's category name (seven cards or fewer: its value's), from the table when it is set, else from
 * arena.cards.evaluator.hand_name (``gil``: the caller holds it; without it and without the table, false). */
bool shown_name(const State &s, int seat, bool gil, Buf &inner)
{
    if (hand_names_ready) {
        if (table_name(s.values[seat], inner))
            return true;
        if (gil)
            PyErr_Format(PyExc_ValueError, "no hand name for the value %lld", (long long)s.values[seat]);
        return false;
    }
    if (!gil)
        return false;
    PyObject *cards = PyList_New(2 + s.board_len);
    if (cards == NULL)
        return false;
    for (int c = 0; c < 2 + s.board_len; c++)
        PyList_SET_ITEM(cards, c, PyLong_FromLong(c < 2 ? s.hole[seat][c] : s.board[c - 2]));
    PyObject *name = PyObject_CallOneArg(py.hand_name, cards);
    Py_DECREF(cards);
    if (name == NULL)
        return false;
    bool ok = PyUnicode_Check(name) && text_arg(name, wire_format.shown[2], inner);
    Py_DECREF(name);
    if (!ok && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "hand_name() did not return a str");
    return ok;
}

/* HandEnd's fields before the history, the same for every seat (wire.HandEndParts.head): the ids, the board, the
 * hands shown at the showdown with their category's name (R8.4, R9), every seat's payoff and final stack. */
bool encode_end_head(const State &s, ArenaText table_id, ArenaText hand_id, bool gil, Buf &out)
{
    const WireFormat &w = wire_format;
    if (table_id.size)
        out.bytes(w.end_head[1], table_id.data, table_id.size);
    if (hand_id.size)
        out.bytes(w.end_head[2], hand_id.data, hand_id.size);
    for (int i = 0; i < s.board_len; i++)
        out.card(w.end_head[3], s.board[i]);
    Buf inner;
    for (int k = 0; k < s.shown_count; k++) {
        int seat = s.shown_order[k];
        inner.b.clear();
        inner.num(w.shown[0], seat);
        inner.card(w.shown[1], s.hole[seat][0]);
        inner.card(w.shown[1], s.hole[seat][1]);
        if (s.board_len >= 3 && !shown_name(s, seat, gil, inner))
            return false;
        out.message(w.end_head[4], inner);
    }
    for (int seat = 0; seat < s.n; seat++) {
        inner.b.clear();
        inner.num(w.payoff[0], seat);
        inner.num(w.payoff[1], s.stacks[seat] - s.starting[seat]);
        inner.num(w.payoff[2], s.stacks[seat]);
        out.message(w.end_head[5], inner);
    }
    return true;
}

/* ``text`` as UTF-8 (valid while ``text`` lives), or false with an exception set. */
bool utf8_of(PyObject *text, ArenaText *out)
{
    Py_ssize_t size;
    out->data = PyUnicode_AsUTF8AndSize(text, &size);
    out->size = size_t(size);
    return out->data != NULL;
}

/* Hand.end_wire(timeouts, table_id, hand_id): each seat's RefereeMessage holding its HandEnd (its own hole cards in
 * the history, nobody else's unless shown: R4.2, R8.4), serialized; empty bytes each without the wire format. */
PyObject *hand_end_wire(HandObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyUnicode_Check(args[1]) || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "end_wire() takes timeouts, table_id (str), hand_id (str)");
        return NULL;
    }
    const State &s = self->s;
    if (!s.over) {
        PyErr_SetString(PyExc_ValueError, "end_wire(): the hand is not over");
        return NULL;
    }
    std::vector<uint8_t> timeouts;
    if (!event_flags(args[0], s.events.size(), timeouts))
        return NULL;
    Buf head;
    ArenaText table_id, hand_id;
    if (!utf8_of(args[1], &table_id) || !utf8_of(args[2], &hand_id))
        return NULL;
    if (wire_format.ready && !encode_end_head(s, table_id, hand_id, true, head))
        return NULL;
    PyObject *out = PyTuple_New(s.n);
    if (out == NULL)
        return NULL;
    Buf body;
    for (int seat = 0; seat < s.n; seat++) {
        PyObject *item;
        if (wire_format.ready) {
            body.b.assign(head.b);
            encode_history(s, seat, {timeouts.data(), timeouts.size()}, wire_format.end[0], body);
            item = message_bytes(wire_format.end_head[0], body);
        } else {
            item = PyBytes_FromStringAndSize(NULL, 0);
        }
        if (item == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, seat, item);
    }
    return out;
}

bool small_ints(PyObject *seq, int64_t *out, Py_ssize_t count, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL)
        return false;
    if (PySequence_Fast_GET_SIZE(fast) != count) {
        PyErr_Format(PyExc_ValueError, "%s: %zd values, not %zd", what, PySequence_Fast_GET_SIZE(fast), count);
        Py_DECREF(fast);
        return false;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return false;
        }
    }
    Py_DECREF(fast);
    return true;
}

/* set_hand_names(names): the category name of every hand value by its top twelve bits (HAND_NAME_KEYS of them, a
 * str or None each), which HandEnds are then encoded with (``hand_names``). */
PyObject *set_hand_names(PyObject *, PyObject *arg)
{
    PyObject *fast = PySequence_Fast(arg, "set_hand_names() takes a sequence of str or None");
    if (fast == NULL)
        return NULL;
    if (size_t(PySequence_Fast_GET_SIZE(fast)) != HAND_NAME_KEYS) {
        PyErr_Format(PyExc_ValueError, "set_hand_names(): %zd names, not %zu", PySequence_Fast_GET_SIZE(fast),
                     HAND_NAME_KEYS);
        Py_DECREF(fast);
        return NULL;
    }
    std::vector<std::string> names(HAND_NAME_KEYS);
    for (size_t i = 0; i < HAND_NAME_KEYS; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, Py_ssize_t(i));
        if (item == Py_None)
            continue;
        ArenaText text;
        if (!PyUnicode_Check(item) || !utf8_of(item, &text)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "set_hand_names(): a name is a str or None");
            Py_DECREF(fast);
            return NULL;
        }
        names[i].assign(text.data, text.size);
    }
    Py_DECREF(fast);
    hand_names.swap(names);
    hand_names_ready = true;
    Py_RETURN_NONE;
}

/* set_wire_format(keys, statuses, event_kinds, all_in_kind, streets, cards, hand_number_offset): see WireFormat. */
PyObject *set_wire_format(PyObject *, PyObject *args)
{
    PyObject *keys, *statuses, *kinds, *streets, *cards;
    long long all_in, offset;
    if (!PyArg_ParseTuple(args, "OOOLOOL:set_wire_format", &keys, &statuses, &kinds, &all_in, &streets, &cards,
                          &offset))
        return NULL;
    WireFormat f;
    int64_t k[WIRE_KEYS];
    if (!small_ints(keys, k, WIRE_KEYS, "keys") || !small_ints(statuses, f.status, 3, "statuses") ||
        !small_ints(kinds, f.event_kind, 16, "event kinds") || !small_ints(streets, f.street, 5, "streets"))
        return NULL;
    for (int i = 0; i < WIRE_KEYS; i++)
        if (k[i] <= 0 || k[i] > 0x7F) {
            PyErr_SetString(PyExc_ValueError, "every field key must fit one byte");
            return NULL;
        }
    uint8_t *groups[] = {f.req, f.seat, f.pot, f.legal, f.clock, f.event, f.end, f.outer, f.end_head, f.shown,
                         f.payoff, f.start, f.batch};
    int sizes[] = {9, 6, 2, 7, 2, 7, 1, 3, 6, 3, 3, 8, 2};
    for (int g = 0, at = 0; g < 13; g++)
        for (int i = 0; i < sizes[g]; i++)
            groups[g][i] = uint8_t(k[at++]);
    f.all_in_kind = all_in;
    if (offset < 0) {
        PyErr_SetString(PyExc_ValueError, "the hand number offset is not negative");
        return NULL;
    }
    f.hand_number_offset = offset;
    PyObject *fast = PySequence_Fast(cards, "cards");
    if (fast == NULL)
        return NULL;
    if (PySequence_Fast_GET_SIZE(fast) != 52) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "cards: the 52 cards' texts");
        return NULL;
    }
    for (int c = 0; c < 52; c++) {
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(fast, c), &size);
        if (text == NULL || size == 0 || size > 0x7F) {
            Py_DECREF(fast);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a card's text is 1 to 127 bytes");
            return NULL;
        }
        f.card[c] = std::string(1, char(size)) + std::string(text, size_t(size));
    }
    Py_DECREF(fast);
    f.ready = true;
    wire_format = f;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------ packed events */

/* A hand's events as bytes, for the scoring worker (arena.ratings.scoring_worker): one object to pickle, read back
 * by unpack_events, where a tuple per event was most of a hand's packing and a namedtuple per event most of its
 * unpacking. A version byte, then per event: amount (8 bytes, little-endian two's complement), kind, seat, street,
 * card count, all-in flag, pot, three card slots (0 past the count). */
constexpr uint8_t PACKED_VERSION = 1;
constexpr size_t PACKED_EVENT = 8 + 6 + 3;

PyObject *hand_packed_events(HandObject *self, PyObject *)
{
    const std::vector<Ev> &events = self->s.events;
    std::string out(1 + PACKED_EVENT * events.size(), '\0');
    out[0] = char(PACKED_VERSION);
    char *at = &out[1];
    for (const Ev &e : events) {
        uint64_t amount = uint64_t(e.amount);
        for (int b = 0; b < 8; b++)
            *at++ = char((amount >> (8 * b)) & 0xFF);
        *at++ = char(e.kind);
        *at++ = char(e.seat);
        *at++ = char(e.street);
        *at++ = char(e.ncards);
        *at++ = char(e.all_in);
        *at++ = char(e.pot);
        for (int c = 0; c < 3; c++)
            *at++ = char(c < e.ncards ? e.cards[c] : 0);
    }
    return PyBytes_FromStringAndSize(out.data(), Py_ssize_t(out.size()));
}

/* The first packed event of ``data`` (Hand.packed_events's bytes) and how many there are, or NULL with the error
 * set that ``func`` (the caller's name) raises for anything else. */
const unsigned char *packed_events_of(PyObject *data, const char *func, size_t *count)
{
    if (!PyBytes_Check(data)) {
        PyErr_Format(PyExc_TypeError, "%s() takes bytes", func);
        return NULL;
    }
    const unsigned char *at = reinterpret_cast<const unsigned char *>(PyBytes_AS_STRING(data));
    size_t size = size_t(PyBytes_GET_SIZE(data));
    if (size < 1 || at[0] != PACKED_VERSION || (size - 1) % PACKED_EVENT != 0) {
        PyErr_Format(PyExc_ValueError, "%s(): not the packed events of this engine's version", func);
        return NULL;
    }
    *count = (size - 1) / PACKED_EVENT;
    return at + 1;
}

/* unpack_events(data): Hand.packed_events's bytes as the hand's ``events`` (a tuple of Event), each field checked. */
PyObject *unpack_events(PyObject *, PyObject *data)
{
    size_t count;
    const unsigned char *at = packed_events_of(data, "unpack_events", &count);
    if (at == NULL)
        return NULL;
    PyObject *out = PyTuple_New(Py_ssize_t(count));
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < count; i++, at += PACKED_EVENT) {
        Ev e;
        uint64_t amount = 0;
        for (int b = 0; b < 8; b++)
            amount |= uint64_t(at[b]) << (8 * b);
        e.amount = int64_t(amount);
        e.kind = int8_t(at[8]);
        e.seat = int8_t(at[9]);
        e.street = int8_t(at[10]);
        e.ncards = int8_t(at[11]);
        e.all_in = int8_t(at[12]);
        e.pot = int8_t(at[13]);
        bool ok = e.kind >= POST_ANTE && e.kind <= WIN_POT && e.street >= PREFLOP && e.street <= SHOWDOWN &&
                  e.ncards >= 0 && e.ncards <= 3 && (e.all_in == 0 || e.all_in == 1) && e.seat >= -1 &&
                  e.seat < MAX_N && e.pot >= -1 && e.pot <= MAX_N && e.amount >= 0; /* a pot may hold several 2**53 stacks */
        for (int c = 0; c < 3; c++) { /* a card in each slot the count says, nothing in the others */
            e.cards[c] = int8_t(at[14 + c]);
            ok = ok && (c < e.ncards ? e.cards[c] >= 0 && e.cards[c] < 52 : e.cards[c] == 0);
        }
        PyObject *event = ok ? make_event(e) : NULL;
        if (event == NULL) {
            if (!ok)
                PyErr_Format(PyExc_ValueError, "unpack_events(): event %zu is not an event", i);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, Py_ssize_t(i), event);
    }
    return out;
}

/* packed_facts(data): what the scoring worker reads of a hand's packed events without unpacking them: the seats that
 * posted an entry blind (in order: the record's hand is started with them again) and, if the hand went to a
 * showdown, how many board cards were out when its last action was taken (arena.ratings.allin.runout_point's
 * count; -1 without a showdown). */
PyObject *packed_facts(PyObject *, PyObject *data)
{
    size_t count;
    const unsigned char *at = packed_events_of(data, "packed_facts", &count);
    if (at == NULL)
        return NULL;
    int entries[MAX_N], entry_count = 0, board = 0, known = 0;
    bool showdown = false;
    for (size_t i = 0; i < count; i++, at += PACKED_EVENT) {
        int kind = at[8], seat = int8_t(at[9]), ncards = at[11];
        if (kind == POST_ENTRY_BLIND && entry_count < MAX_N)
            entries[entry_count++] = seat;
        else if (kind == DEAL_BOARD)
            board += ncards ? ncards : 1;
        else if (kind >= E_FOLD && kind <= E_RAISE)
            known = board;
        else if (kind == SHOW || kind == MUCK)
            showdown = true;
    }
    PyObject *seats = PyTuple_New(entry_count);
    if (seats == NULL)
        return NULL;
    for (int i = 0; i < entry_count; i++)
        PyTuple_SET_ITEM(seats, i, PyLong_FromLong(entries[i]));
    return Py_BuildValue("(Ni)", seats, showdown ? known : -1);
}

/* pack_batch(messages): serialized RefereeMessages (a list of bytes) as one serialized RefereeMessage holding a
 * RefereeBatch of them, each copied once (wire.packed, the reference, does the same in Python). */
PyObject *pack_batch(PyObject *, PyObject *messages)
{
    if (!PyList_Check(messages)) {
        PyErr_SetString(PyExc_TypeError, "pack_batch() takes a list of bytes");
        return NULL;
    }
    if (!wire_format.ready) {
        PyErr_SetString(PyExc_RuntimeError, "pack_batch(): the wire format is not set (set_wire_format)");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(messages);
    size_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(messages, i);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "pack_batch() takes a list of bytes");
            return NULL;
        }
        total += size_t(PyBytes_GET_SIZE(item)) + 11;
    }
    Buf body;
    body.b.reserve(total);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(messages, i);
        body.bytes(wire_format.batch[1], PyBytes_AS_STRING(item), size_t(PyBytes_GET_SIZE(item)));
    }
    return message_bytes(wire_format.batch[0], body);
}

/* packed_actions(data): the actions the hand's seats took, read off its packed events, as (seat, kind, amount,
 * event index) with kind FOLD, CHECK, CALL or RAISE (amount: the raise-to total; 0 otherwise): the decisions as
 * the engine applied them (an ALL_IN resolved), which replay the hand to the same state. The scoring worker's
 * decisions, where the record drew no mixed action (``scoring_worker.pack``). */
PyObject *packed_actions(PyObject *, PyObject *data)
{
    size_t count;
    const unsigned char *at = packed_events_of(data, "packed_actions", &count);
    if (at == NULL)
        return NULL;
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out != NULL && i < count; i++, at += PACKED_EVENT) {
        int kind = at[8];
        if (kind < E_FOLD || kind > E_RAISE)
            continue;
        uint64_t amount = 0;
        for (int b = 0; b < 8; b++)
            amount |= uint64_t(at[b]) << (8 * b);
        int action = kind == E_FOLD ? FOLD : kind == E_CHECK ? CHECK : kind == E_CALL ? CALL : RAISE;
        PyObject *item = Py_BuildValue("(iiLn)", int(int8_t(at[9])), action,
                                       action == RAISE ? (long long)amount : 0LL, Py_ssize_t(i));
        if (item == NULL || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(item);
    }
    return out;
}

/* ------------------------------------------------------------------------------------------ AIVAT's luck terms */

/* aivat_terms of arena/ratings/aivat.py's luck_terms, for a hand whose decisions drew no mixed action: the record
 * replayed on a copy of the started hand, and each chance event's value(after) - value(before), every float
 * operation in the reference's order (so the terms are the same to the last bit: tests/ratings/test_aivat_compiled.py
 * compares them). The check-down shares come from the reference's own ``_shares`` (a Python callable, remembered),
 * called only where a pot is contested; everything around it (the replay, the pots, the sums) is here. */
struct LuckArgs {
    PyObject *hole;      /* per seat, its hole cards as a tuple */
    PyObject *shares;    /* _shares(holes, board, samples) -> a float per holder */
    PyObject *small, *big; /* the samples ints passed on: PREFLOP_SAMPLES, PREFLOP_SAMPLES_BIG */
    int64_t big_pot;     /* BIG_POT_BB * big_blind: pots above it take ``big`` draws before the flop */
    uint32_t masks[MAX_N + 1];
    PyObject *holes[MAX_N + 1]; /* per eligible mask met: its holders' hole cards (owned) */
    int known;
};

PyObject *luck_holes(LuckArgs &a, uint32_t eligible)
{
    for (int i = 0; i < a.known; i++)
        if (a.masks[i] == eligible)
            return a.holes[i];
    if (a.known == MAX_N + 1) { /* (more sets than pots a hand can have: start again) */
        for (int i = 0; i < a.known; i++)
            Py_DECREF(a.holes[i]);
        a.known = 0;
    }
    int count = __builtin_popcount(eligible);
    PyObject *holes = PyTuple_New(count);
    if (holes == NULL)
        return NULL;
    for (int s = 0, k = 0; s < MAX_N; s++)
        if (eligible >> s & 1) {
            PyObject *cards = PyTuple_GET_ITEM(a.hole, s);
            Py_INCREF(cards);
            PyTuple_SET_ITEM(holes, k++, cards);
        }
    a.masks[a.known] = eligible;
    a.holes[a.known++] = holes;
    return holes;
}

/* _Checkdown.value: each seat's expected chips from the pots by check-down from the board's first ``board_len``
 * cards (-1: before the hole cards, every eligible seat an equal share). False with a Python error set. */
bool luck_value(LuckArgs &a, const State &s, const PotRec *pots, int count, int board_len, double *won)
{
    for (int i = 0; i < s.n; i++)
        won[i] = 0.0;
    int64_t total = 0;
    for (int i = 0; i < count; i++)
        total += pots[i].amount;
    PyObject *samples = total > a.big_pot && board_len == 0 ? a.big : a.small;
    PyObject *board = NULL;
    for (int i = 0; i < count; i++) {
        uint32_t eligible = pots[i].eligible;
        int holders = __builtin_popcount(eligible);
        double amount = double(pots[i].amount);
        if (holders == 1 || board_len < 0) {
            for (int seat = 0; seat < s.n; seat++)
                if (eligible >> seat & 1)
                    won[seat] += amount / double(holders);
            continue;
        }
        PyObject *holes = luck_holes(a, eligible);
        if (holes == NULL || (board == NULL && (board = cards_tuple(s.board, board_len)) == NULL)) {
            Py_XDECREF(board);
            return false;
        }
        PyObject *shares = PyObject_CallFunctionObjArgs(a.shares, holes, board, samples, NULL);
        if (shares == NULL) {
            Py_DECREF(board);
            return false;
        }
        if (!PyTuple_Check(shares) || PyTuple_GET_SIZE(shares) != holders) {
            PyErr_SetString(PyExc_TypeError, "aivat_terms(): shares() must return a tuple of a float per holder");
            Py_DECREF(shares);
            Py_DECREF(board);
            return false;
        }
        for (int seat = 0, k = 0; seat < s.n; seat++)
            if (eligible >> seat & 1) {
                double share = PyFloat_AsDouble(PyTuple_GET_ITEM(shares, k++));
                if (share == -1.0 && PyErr_Occurred()) {
                    Py_DECREF(shares);
                    Py_DECREF(board);
                    return false;
                }
                won[seat] += amount * share;
            }
        Py_DECREF(shares);
    }
    Py_XDECREF(board);
    return true;
}

/* One chance event's term, (street, (value(after) - value(before) per seat)), appended to ``out``. */
bool luck_term(LuckArgs &a, const State &s, const PotRec *pots, int count, int street, int before, int after,
               PyObject *out)
{
    double was[MAX_N], now[MAX_N];
    if (!luck_value(a, s, pots, count, before, was) || !luck_value(a, s, pots, count, after, now))
        return false;
    PyObject *term = PyTuple_New(s.n);
    if (term == NULL)
        return false;
    for (int i = 0; i < s.n; i++) {
        PyObject *f = PyFloat_FromDouble(now[i] - was[i]);
        if (f == NULL) {
            Py_DECREF(term);
            return false;
        }
        PyTuple_SET_ITEM(term, i, f);
    }
    PyObject *pair = Py_BuildValue("(iN)", street, term);
    if (pair == NULL)
        return false;
    int failed = PyList_Append(out, pair);
    Py_DECREF(pair);
    return failed == 0;
}

/* The pots fit a double exactly (the reference divides and multiplies Python ints; past 2**53 a double would not
 * be the same number): else the caller takes the reference's path. */
bool pots_exact(const PotRec *pots, int count)
{
    for (int i = 0; i < count; i++)
        if (pots[i].amount > MAX_CHIPS)
            return false;
    return true;
}

/* aivat_terms(hand, decisions, hole, shares, samples, samples_big, big_pot): see LuckArgs. ``hand``: the record's
 * hand once its forced bets are posted (not changed: a copy is replayed); ``decisions``: (seat, kind, amount) per
 * decision, in order. A list of (street, terms) with street 0 the hole cards, 1 the flop, 2 the turn, 3 the river;
 * None when the replay does not go through (a refused decision, payoffs that do not add up, a pot past 2**53): the
 * reference then says why, or scores it with Python's unbounded ints. */
PyObject *aivat_terms(PyObject *, PyObject *args)
{
    PyObject *hand, *decisions;
    LuckArgs a{};
    if (!PyArg_ParseTuple(args, "O!O!O!OO!O!L:aivat_terms", &HandType, &hand, &PyList_Type, &decisions,
                          &PyTuple_Type, &a.hole, &a.shares, &PyLong_Type, &a.small, &PyLong_Type, &a.big,
                          &a.big_pot))
        return NULL;
    State s = ((HandObject *)hand)->s;
    bool holes_ok = PyTuple_GET_SIZE(a.hole) == s.n;
    for (int i = 0; holes_ok && i < s.n; i++)
        holes_ok = PyTuple_Check(PyTuple_GET_ITEM(a.hole, i));
    if (!holes_ok) {
        PyErr_SetString(PyExc_TypeError, "aivat_terms(): hole takes one tuple of cards per seat");
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    static const int streets[3][3] = {{0, 3, 1}, {3, 4, 2}, {4, 5, 3}}; /* first card, last card, street */
    PotRec pots[MAX_N + 1];
    int count = hand_pots(s, pots);
    bool none = !pots_exact(pots, count);
    bool ok = none || luck_term(a, s, pots, count, 0, -1, 0, out);
    int dealt = s.board_len;
    for (Py_ssize_t d = 0; ok && !none && d < PyList_GET_SIZE(decisions); d++) {
        long long seat, kind, amount;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(decisions, d), "LLL:aivat_terms", &seat, &kind, &amount)) {
            ok = false;
            break;
        }
        bool known = seat >= 0 && seat < s.n && kind >= FOLD && kind <= ALL_IN;
        Verdict v = known ? judge(s, int(seat), int(kind), amount) : refused(UNKNOWN_KIND, "R6.1");
        if (v.refusal || !perform(s, int(seat), v)) {
            none = true;
            break;
        }
        if (s.board_len > dealt) {
            count = hand_pots(s, pots);
            none = !pots_exact(pots, count);
            for (int i = 0; i < 3 && ok && !none; i++)
                if (dealt <= streets[i][0] && streets[i][0] < s.board_len)
                    ok = luck_term(a, s, pots, count, streets[i][2], streets[i][0], streets[i][1], out);
            dealt = s.board_len;
        }
    }
    for (int i = 0; i < a.known; i++)
        Py_DECREF(a.holes[i]);
    if (!ok || none) {
        Py_DECREF(out);
        if (!ok)
            return NULL;
        Py_RETURN_NONE;
    }
    return out;
}

/* ------------------------------------------------------------------------------------------ the C API */

/* core_api.h's functions over a HandObject's State. All but api_state_of run without the GIL: they call no
 * Python, and allocate only the State's own events and the encoder's buffers. */

void *api_state_of(PyObject *hand)
{
    if (!PyObject_TypeCheck(hand, &HandType)) {
        PyErr_Format(PyExc_TypeError, "state_of() takes an arena.engine._core.Hand, got %.100s",
                     Py_TYPE(hand)->tp_name);
        return NULL;
    }
    return &((HandObject *)hand)->s;
}

int api_to_act(const void *state) { return static_cast<const State *>(state)->to_act; }

size_t api_event_count(const void *state) { return static_cast<const State *>(state)->events.size(); }

/* ``judge``, then ``perform`` when accepted (payoffs that do not add up, which the Python API raises as an
 * AssertionError, cannot be told here: the action was taken). */
int api_act(void *state, int seat, int kind, int64_t amount)
{
    State &s = *static_cast<State *>(state);
    Verdict v = judge(s, seat, kind, amount);
    if (v.refusal)
        return ARENA_REFUSED;
    perform(s, seat, v);
    return ARENA_ACTED;
}

/* ``body`` as the field ``key`` of a RefereeMessage (a serialized RefereeMessage), written to ``out`` if it fits in
 * ``capacity``: its size either way (the C API's encoders). */
size_t framed(uint8_t key, const Buf &body, char *out, size_t capacity)
{
    Buf top;
    top.b.push_back(char(key));
    top.varint(body.b.size());
    size_t size = top.b.size() + body.b.size();
    if (size <= capacity) {
        std::memcpy(out, top.b.data(), top.b.size());
        std::memcpy(out + top.b.size(), body.b.data(), body.b.size());
    }
    return size;
}

size_t api_request_wire(const void *state, int seat, const ArenaText *names, const uint8_t *timeouts,
                        size_t timeouts_count, int64_t action_ms_left, int64_t bank_ms_left, ArenaText head,
                        int64_t request_id, ArenaText tail, char *out, size_t capacity)
{
    const State &s = *static_cast<const State *>(state);
    if (!wire_format.ready || seat < 0 || seat != s.to_act || request_id < 0)
        return 0;
    try {
        Buf body;
        encode_request(s, seat, names, {timeouts, timeouts_count}, action_ms_left, bank_ms_left, head, request_id,
                       tail, body);
        return framed(wire_format.outer[0], body, out, capacity);
    } catch (const std::bad_alloc &) { /* no exception leaves a C function */
        return 0;
    }
}

size_t api_end_wire(const void *state, int seat, const uint8_t *timeouts, size_t timeouts_count, ArenaText table_id,
                    ArenaText hand_id, char *out, size_t capacity)
{
    const State &s = *static_cast<const State *>(state);
    if (!wire_format.ready || !hand_names_ready || !s.over || seat < 0 || seat >= s.n)
        return 0;
    try {
        Buf body;
        if (!encode_end_head(s, table_id, hand_id, false, body))
            return 0;
        encode_history(s, seat, {timeouts, timeouts_count}, wire_format.end[0], body);
        return framed(wire_format.end_head[0], body, out, capacity);
    } catch (const std::bad_alloc &) { /* no exception leaves a C function */
        return 0;
    }
}

const ArenaCoreApi core_api = {
    ARENA_CORE_API_VERSION, api_state_of, api_to_act, api_event_count, api_act, api_request_wire, api_end_wire,
};

/* ---- test hooks (tests/engine/test_core_api.py only): the C API called through the capsule the module publishes,
 * without the GIL as the bots' server calls it */

const ArenaCoreApi *published_api(PyObject *module)
{
    PyObject *capsule = PyObject_GetAttrString(module, "_C_API");
    if (capsule == NULL)
        return NULL;
    void *api = PyCapsule_GetPointer(capsule, ARENA_CORE_API_CAPSULE);
    Py_DECREF(capsule);
    return static_cast<const ArenaCoreApi *>(api);
}

/* The published API and ``hand``'s state, or false with an exception set. */
bool api_and_state(PyObject *module, PyObject *hand, const ArenaCoreApi **api, void **state)
{
    *api = published_api(module);
    if (*api == NULL)
        return false;
    *state = (*api)->state_of(hand);
    return *state != NULL;
}

/* _api_act(hand, seat, kind, amount) -> ARENA_ACTED or ARENA_REFUSED (kind an int; amount within 64 bits). */
PyObject *test_api_act(PyObject *module, PyObject *args)
{
    PyObject *hand;
    int seat, kind;
    long long amount;
    if (!PyArg_ParseTuple(args, "OiiL:_api_act", &hand, &seat, &kind, &amount))
        return NULL;
    const ArenaCoreApi *api;
    void *state;
    if (!api_and_state(module, hand, &api, &state))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = api->act(state, seat, kind, amount);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(rc);
}

/* _api_to_act(hand) -> the seat to act, or -1. */
PyObject *test_api_to_act(PyObject *module, PyObject *hand)
{
    const ArenaCoreApi *api;
    void *state;
    if (!api_and_state(module, hand, &api, &state))
        return NULL;
    int seat;
    Py_BEGIN_ALLOW_THREADS
    seat = api->to_act(state);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(seat);
}

/* _api_event_count(hand) -> how many events. */
PyObject *test_api_event_count(PyObject *module, PyObject *hand)
{
    const ArenaCoreApi *api;
    void *state;
    if (!api_and_state(module, hand, &api, &state))
        return NULL;
    size_t count;
    Py_BEGIN_ALLOW_THREADS
    count = api->event_count(state);
    Py_END_ALLOW_THREADS
    return PyLong_FromSize_t(count);
}

/* _api_end_wire(hand, seat, timeouts, table_id, hand_id) -> bytes (b'' when the API returns 0): ``timeouts`` as
 * flags bytes (one per event index); a first buffer of 16 bytes, so that a HandEnd is encoded twice. */
PyObject *test_api_end_wire(PyObject *module, PyObject *args)
{
    PyObject *hand;
    int seat;
    Py_buffer flags, table, hand_id;
    if (!PyArg_ParseTuple(args, "Oiy*s*s*:_api_end_wire", &hand, &seat, &flags, &table, &hand_id))
        return NULL;
    PyObject *result = NULL;
    const ArenaCoreApi *api;
    void *state;
    if (api_and_state(module, hand, &api, &state)) {
        ArenaText table_text = {static_cast<const char *>(table.buf), size_t(table.len)};
        ArenaText hand_text = {static_cast<const char *>(hand_id.buf), size_t(hand_id.len)};
        const uint8_t *at = static_cast<const uint8_t *>(flags.buf);
        char small[16];
        std::string room;
        size_t size, again = 0;
        Py_BEGIN_ALLOW_THREADS
        size = api->end_wire(state, seat, at, size_t(flags.len), table_text, hand_text, small, sizeof small);
        if (size > sizeof small) {
            room.resize(size);
            again = api->end_wire(state, seat, at, size_t(flags.len), table_text, hand_text, room.data(), size);
        }
        Py_END_ALLOW_THREADS
        if (size <= sizeof small)
            result = PyBytes_FromStringAndSize(small, Py_ssize_t(size));
        else if (again != size)
            PyErr_SetString(PyExc_AssertionError, "end_wire() gave another size the second time");
        else
            result = PyBytes_FromStringAndSize(room.data(), Py_ssize_t(size));
    }
    PyBuffer_Release(&flags);
    PyBuffer_Release(&table);
    PyBuffer_Release(&hand_id);
    return result;
}

/* _api_request_wire(hand, seat, names, timeouts, action_ms_left, bank_ms_left, head, request_id, tail) -> bytes
 * (b'' when the API returns 0): Hand.request_wire's arguments, ``timeouts`` turned into flags up to the largest
 * index (past the events too); a first buffer of 16 bytes, so that a request is encoded twice, the second time into
 * the room the first asked for. */
PyObject *test_api_request_wire(PyObject *module, PyObject *args)
{
    PyObject *hand, *names_obj, *timeouts_obj;
    int seat;
    long long action_ms, bank_ms, request_id;
    Py_buffer head, tail;
    if (!PyArg_ParseTuple(args, "OiOOLLy*Ly*:_api_request_wire", &hand, &seat, &names_obj, &timeouts_obj, &action_ms,
                          &bank_ms, &head, &request_id, &tail))
        return NULL;
    PyObject *result = NULL;
    const ArenaCoreApi *api;
    void *state;
    std::vector<ArenaText> names;
    std::vector<uint8_t> flags;
    PyObject *indexes = PySequence_Fast(timeouts_obj, "timeouts must be a collection of ints");
    if (indexes == NULL || !api_and_state(module, hand, &api, &state) ||
        !names_arg(*static_cast<State *>(state), names_obj, names))
        goto done;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(indexes); i++) {
        long index = PyLong_AsLong(PySequence_Fast_GET_ITEM(indexes, i));
        if (index == -1 && PyErr_Occurred())
            goto done;
        if (index >= 0) {
            if (flags.size() <= size_t(index))
                flags.resize(size_t(index) + 1, 0);
            flags[size_t(index)] = 1;
        }
    }
    {
        ArenaText head_text = {static_cast<const char *>(head.buf), size_t(head.len)};
        ArenaText tail_text = {static_cast<const char *>(tail.buf), size_t(tail.len)};
        char small[16];
        size_t size, again = 0;
        Py_BEGIN_ALLOW_THREADS
        size = api->request_wire(state, seat, names.data(), flags.data(), flags.size(), action_ms, bank_ms, head_text,
                                 request_id, tail_text, small, sizeof small);
        Py_END_ALLOW_THREADS
        if (size <= sizeof small) {
            result = PyBytes_FromStringAndSize(small, Py_ssize_t(size));
            goto done;
        }
        result = PyBytes_FromStringAndSize(NULL, Py_ssize_t(size));
        if (result == NULL)
            goto done;
        char *at = PyBytes_AS_STRING(result);
        Py_BEGIN_ALLOW_THREADS
        again = api->request_wire(state, seat, names.data(), flags.data(), flags.size(), action_ms, bank_ms,
                                  head_text, request_id, tail_text, at, size);
        Py_END_ALLOW_THREADS
        if (again != size) {
            Py_CLEAR(result);
            PyErr_Format(PyExc_AssertionError, "request_wire(): %zu bytes asked for, then %zu", size, again);
        }
    }
done:
    Py_XDECREF(indexes);
    PyBuffer_Release(&head);
    PyBuffer_Release(&tail);
    return result;
}

PyMethodDef module_methods[] = {
    {"set_hand_names", (PyCFunction)set_hand_names, METH_O,
     "set_hand_names(names): each hand value's category name by its top twelve bits (4,096, a str or None each), "
     "which HandEnds are encoded with, without calling Python."},
    {"set_wire_format", (PyCFunction)set_wire_format, METH_VARARGS,
     "Set how Hand.view_wire encodes (arena.transport.wire calls it with the protocol's field keys and enums)."},
    {"pack_batch", (PyCFunction)pack_batch, METH_O,
     "pack_batch(messages): serialized RefereeMessages as one serialized RefereeMessage holding their RefereeBatch."},
    {"unpack_events", (PyCFunction)unpack_events, METH_O,
     "unpack_events(data): the events Hand.packed_events packed, as a tuple of Event."},
    {"packed_facts", (PyCFunction)packed_facts, METH_O,
     "packed_facts(data): the entry blinds' seats of packed events, and the board cards out at the last action if "
     "the hand went to a showdown (-1 if not)."},
    {"packed_actions", (PyCFunction)packed_actions, METH_O,
     "packed_actions(data): (seat, kind, amount, event index) of each action in packed events, as applied."},
    {"aivat_terms", (PyCFunction)aivat_terms, METH_VARARGS,
     "aivat_terms(hand, decisions, hole, shares, samples, samples_big, big_pot): arena.ratings.aivat's luck terms "
     "of a hand without mixed actions, replayed from its started hand, or None (the reference says why)."},
    {"_api_act", (PyCFunction)test_api_act, METH_VARARGS,
     "Test only: _api_act(hand, seat, kind, amount), the C API's act through the capsule (ARENA_ACTED 0, "
     "ARENA_REFUSED 1)."},
    {"_api_to_act", (PyCFunction)test_api_to_act, METH_O,
     "Test only: _api_to_act(hand), the C API's to_act through the capsule (-1: nobody)."},
    {"_api_event_count", (PyCFunction)test_api_event_count, METH_O,
     "Test only: _api_event_count(hand), the C API's event_count through the capsule."},
    {"_api_end_wire", (PyCFunction)test_api_end_wire, METH_VARARGS,
     "Test only: _api_end_wire(hand, seat, timeouts (flag bytes), table_id, hand_id), the C API's end_wire through "
     "the capsule (b'' for its 0)."},
    {"_api_request_wire", (PyCFunction)test_api_request_wire, METH_VARARGS,
     "Test only: _api_request_wire(hand, seat, names, timeouts, action_ms_left, bank_ms_left, head, request_id, "
     "tail), the C API's request_wire through the capsule (b'' for its 0)."},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------------------------------------ the type's tables */

/* ---- attributes */

PyObject *get_to_act(HandObject *self, void *)
{
    if (self->s.to_act < 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(self->s.to_act);
}

PyObject *get_events(HandObject *self, void *)
{
    const std::vector<Ev> &events = self->s.events;
    if (self->events_list == NULL) {
        self->events_list = PyList_New(0);
        if (self->events_list == NULL)
            return NULL;
        self->events_built = 0;
    }
    while (self->events_built < Py_ssize_t(events.size())) {
        PyObject *e = make_event(events[self->events_built]);
        if (e == NULL)
            return NULL;
        int rc = PyList_Append(self->events_list, e);
        Py_DECREF(e);
        if (rc < 0)
            return NULL;
        self->events_built++;
    }
    Py_INCREF(self->events_list);
    return self->events_list;
}

PyObject *get_hole(HandObject *self, void *)
{
    if (self->hole_list == NULL) {
        PyObject *list = PyList_New(self->s.n);
        if (list == NULL)
            return NULL;
        for (int i = 0; i < self->s.n; i++) {
            PyObject *t = cards_tuple(self->s.hole[i], 2);
            if (t == NULL) {
                Py_DECREF(list);
                return NULL;
            }
            PyList_SET_ITEM(list, i, t);
        }
        self->hole_list = list;
    }
    Py_INCREF(self->hole_list);
    return self->hole_list;
}

PyObject *get_stacks(HandObject *self, void *) { return int_list(self->s.stacks, self->s.n); }
PyObject *get_bets(HandObject *self, void *) { return int_list(self->s.bets, self->s.n); }
PyObject *get_committed(HandObject *self, void *) { return int_list(self->s.committed, self->s.n); }
PyObject *get_dead(HandObject *self, void *) { return int_list(self->s.dead, self->s.n); }
PyObject *get_board(HandObject *self, void *) { return int_list(self->s.board, self->s.board_len); }

PyObject *get_folded(HandObject *self, void *)
{
    PyObject *list = PyList_New(self->s.n);
    if (list == NULL)
        return NULL;
    for (int i = 0; i < self->s.n; i++) {
        PyObject *b = self->s.folded[i] ? Py_True : Py_False;
        Py_INCREF(b);
        PyList_SET_ITEM(list, i, b);
    }
    return list;
}

PyObject *get_starting_stacks(HandObject *self, void *)
{
    PyObject *list = int_list(self->s.starting, self->s.n);
    if (list == NULL)
        return NULL;
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

PyObject *get_payoffs(HandObject *self, void *)
{
    const State &s = self->s;
    if (!s.over)
        Py_RETURN_NONE;
    int64_t pay[MAX_N];
    for (int i = 0; i < s.n; i++)
        pay[i] = s.stacks[i] - s.starting[i];
    return int_list(pay, s.n);
}

PyObject *get_shown(HandObject *self, void *)
{
    const State &s = self->s;
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (int i = 0; i < s.shown_count; i++) {
        int seat = s.shown_order[i];
        PyObject *k = PyLong_FromLong(seat), *v = cards_tuple(s.hole[seat], 2);
        int rc = (k && v) ? PyDict_SetItem(d, k, v) : -1;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (rc < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

PyObject *get_hand_values(HandObject *self, void *)
{
    const State &s = self->s;
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (int i = 0; i < s.value_count; i++) {
        int seat = s.value_order[i];
        PyObject *k = PyLong_FromLong(seat), *v = new_int(s.values[seat]);
        int rc = (k && v) ? PyDict_SetItem(d, k, v) : -1;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (rc < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

PyObject *get_street(HandObject *self, void *)
{
    PyObject *s = py.street[self->s.street];
    Py_INCREF(s);
    return s;
}

PyObject *get_config(HandObject *self, void *)
{
    Py_INCREF(self->config);
    return self->config;
}

PyObject *get_num_seats(HandObject *self, void *) { return PyLong_FromLong(self->s.n); }
PyObject *get_button(HandObject *self, void *) { return PyLong_FromLong(self->s.button); }
PyObject *get_sb_seat(HandObject *self, void *) { return PyLong_FromLong(self->s.sb_seat); }
PyObject *get_bb_seat(HandObject *self, void *) { return PyLong_FromLong(self->s.bb_seat); }
PyObject *get_is_over(HandObject *self, void *) { return PyBool_FromLong(self->s.over); }
PyObject *get_current_bet(HandObject *self, void *) { return new_int(self->s.current_bet); }

PyObject *get_pot_total(HandObject *self, void *)
{
    int64_t total = 0;
    for (int i = 0; i < self->s.n; i++)
        total += self->s.committed[i];
    return new_int(total);
}

PyMethodDef hand_methods[] = {
    {"apply", (PyCFunction)(void (*)(void))hand_apply, METH_FASTCALL | METH_KEYWORDS,
     "Apply ``kind`` (and the raise-to ``amount`` for RAISE) for ``seat``; IllegalActionError leaves the state as "
     "it was."},
    {"act", (PyCFunction)(void (*)(void))hand_act, METH_FASTCALL, "Apply one Action of ``seat``."},
    {"legal_actions", (PyCFunction)hand_legal_actions, METH_NOARGS,
     "The exact choices of the seat to act (R6, R7). Raises RuleError when the hand is over."},
    {"pots", (PyCFunction)hand_pots_method, METH_NOARGS, "Main and side pots as they stand (R10.1), current bets included."},
    {"is_active", (PyCFunction)hand_is_active, METH_O, "Whether a seat is still in the hand and has chips to bet."},
    {"copy", (PyCFunction)hand_copy, METH_NOARGS, "An independent copy of the hand as it stands."},
    {"start_wire", (PyCFunction)(void (*)(void))hand_start_wire, METH_FASTCALL,
     "start_wire(seat, table_id, hand_id, hand_number, names): the serialized RefereeMessage holding the seat's "
     "HandStart (the seats as the blinds and antes left them)."},
    {"packed_events", (PyCFunction)hand_packed_events, METH_NOARGS,
     "The events as bytes (for the scoring worker: _core.unpack_events reads them back)."},
    {"end_wire", (PyCFunction)(void (*)(void))hand_end_wire, METH_FASTCALL,
     "end_wire(timeouts, table_id, hand_id): each seat's RefereeMessage holding its HandEnd (its own hole cards, "
     "shown cards, the referee's actions flagged), serialized (b'' each until arena.transport.wire has set the "
     "format)."},
    {"request_wire", (PyCFunction)(void (*)(void))hand_request_wire, METH_FASTCALL,
     "request_wire(seat, names, timeouts, action_ms_left, bank_ms_left, head, request_id, tail): the serialized "
     "RefereeMessage asking the seat to act (head: the ids' fields; tail: the config field)."},
    {"view_wire", (PyCFunction)(void (*)(void))hand_view_wire, METH_FASTCALL,
     "view_wire(seat, names, timeouts, action_ms_left, bank_ms_left): the seat to act's ActionRequest fields "
     "hole_cards to history, encoded (b'' until arena.transport.wire has set the format)."},
    {"__copy__", (PyCFunction)hand_copy, METH_NOARGS, "An independent copy."},
    {"__deepcopy__", (PyCFunction)hand_deepcopy, METH_O, "An independent copy (the config is shared: it is frozen)."},
    {NULL, NULL, 0, NULL},
};

PyGetSetDef hand_getset[] = {
    {"to_act", (getter)get_to_act, NULL, "The seat to act, or None when nobody is.", NULL},
    {"events", (getter)get_events, NULL, "Everything that happened, in order (a list that grows).", NULL},
    {"stacks", (getter)get_stacks, NULL, "Chips behind, per seat.", NULL},
    {"bets", (getter)get_bets, NULL, "Chips bet on this street, per seat.", NULL},
    {"committed", (getter)get_committed, NULL, "Chips put in this hand, per seat.", NULL},
    {"dead", (getter)get_dead, NULL, "Dead chips (antes), per seat.", NULL},
    {"folded", (getter)get_folded, NULL, "Whether each seat has folded.", NULL},
    {"board", (getter)get_board, NULL, "The board cards dealt so far.", NULL},
    {"hole", (getter)get_hole, NULL, "Each seat's two hole cards.", NULL},
    {"starting_stacks", (getter)get_starting_stacks, NULL, "The stacks the hand started with.", NULL},
    {"payoffs", (getter)get_payoffs, NULL, "Chips won or lost per seat once the hand is over, else None.", NULL},
    {"shown", (getter)get_shown, NULL, "The hole cards shown at the showdown, by seat.", NULL},
    {"hand_values", (getter)get_hand_values, NULL, "Hand values at the showdown, by seat, in showdown order.", NULL},
    {"street", (getter)get_street, NULL, "The betting round (SHOWDOWN once the betting is over).", NULL},
    {"config", (getter)get_config, NULL, "The table config.", NULL},
    {"num_seats", (getter)get_num_seats, NULL, "Seats dealt in.", NULL},
    {"button", (getter)get_button, NULL, "The button's seat.", NULL},
    {"small_blind_seat", (getter)get_sb_seat, NULL, "The small blind's seat.", NULL},
    {"big_blind_seat", (getter)get_bb_seat, NULL, "The big blind's seat.", NULL},
    {"is_over", (getter)get_is_over, NULL, "Whether the hand has been settled (payoffs known).", NULL},
    {"pot_total", (getter)get_pot_total, NULL, "All chips put in this hand so far.", NULL},
    {"current_bet", (getter)get_current_bet, NULL, "The highest bet on this street.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------------------------------------ module */

PyObject *attr_of(const char *module, const char *name)
{
    PyObject *m = PyImport_ImportModule(module);
    if (m == NULL)
        return NULL;
    PyObject *v = PyObject_GetAttrString(m, name);
    Py_DECREF(m);
    return v;
}

/* The slot offsets of ``type``'s ``fields`` (plain object slots), or -1 in offsets[0] to build by calling it. */
bool slot_offsets(PyTypeObject *type, const char *const *fields, int count, Py_ssize_t *offsets)
{
    for (int i = 0; i < count; i++) {
        PyObject *d = PyObject_GetAttrString((PyObject *)type, fields[i]);
        if (d == NULL)
            return false;
        bool plain = Py_IS_TYPE(d, &PyMemberDescr_Type) && ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
        offsets[i] = plain ? ((PyMemberDescrObject *)d)->d_member->offset : -1;
        Py_DECREF(d);
        if (!plain) {
            offsets[0] = -1;
            return true;
        }
    }
    if (type->tp_dictoffset != 0 || type->tp_itemsize != 0)
        offsets[0] = -1;
    return true;
}

bool enum_members(const char *name, const char *const *members, int count, PyObject **out, int first)
{
    PyObject *cls = attr_of("arena.engine.actions", name);
    if (cls == NULL) {
        PyErr_Clear();
        cls = attr_of("arena.engine.config", name);
    }
    if (cls == NULL)
        return false;
    for (int i = 0; i < count; i++) {
        out[first + i] = PyObject_GetAttrString(cls, members[i]);
        if (out[first + i] == NULL) {
            Py_DECREF(cls);
            return false;
        }
    }
    Py_DECREF(cls);
    return true;
}

int core_exec(PyObject *module)
{
    static const char *kinds[] = {"FOLD", "CHECK", "CALL", "RAISE", "ALL_IN"};
    static const char *events[] = {"POST_ANTE", "POST_SMALL_BLIND", "POST_BIG_BLIND", "POST_ENTRY_BLIND",
                                   "DEAL_HOLE", "DEAL_BOARD", "FOLD", "CHECK", "CALL", "BET", "RAISE",
                                   "UNCALLED_RETURN", "SHOW", "MUCK", "WIN_POT"};
    static const char *streets[] = {"PREFLOP", "FLOP", "TURN", "RIVER", "SHOWDOWN"};
    static const char *structures[] = {"NO_LIMIT", "POT_LIMIT", "FIXED_LIMIT"};
    static const char *modes[] = {"NONE", "EACH", "BIG_BLIND"};
    static const char *legal_fields[] = {"seat", "can_fold", "can_check", "call_amount", "min_raise_to",
                                         "max_raise_to"};
    static const char *pot_fields[] = {"amount", "eligible"};
    if (!enum_members("ActionKind", kinds, 5, py.action_kind, 1) ||
        !enum_members("EventKind", events, 15, py.event_kind, 1) ||
        !enum_members("Street", streets, 5, py.street, 0) ||
        !enum_members("Structure", structures, 3, py.structure, 0) ||
        !enum_members("AnteMode", modes, 3, py.ante_mode, 0))
        return -1;
    py.event_type = (PyTypeObject *)attr_of("arena.engine.actions", "Event");
    py.legal_type = (PyTypeObject *)attr_of("arena.engine.actions", "LegalActions");
    py.pot_type = (PyTypeObject *)attr_of("arena.engine.pots", "Pot");
    py.rule_error = attr_of("arena.engine.errors", "RuleError");
    py.config_error = attr_of("arena.engine.errors", "ConfigError");
    py.illegal_error = attr_of("arena.engine.errors", "IllegalActionError");
    py.py_hand = attr_of("arena.engine.hand", "Hand");
    py.format_cards = attr_of("arena.cards", "format_cards");
    py.hand_name = attr_of("arena.cards.evaluator", "hand_name");
    py.s_kind = PyUnicode_InternFromString("kind");
    py.s_amount = PyUnicode_InternFromString("amount");
    py.empty_tuple = PyTuple_New(0);
    if (!py.event_type || !py.legal_type || !py.pot_type || !py.rule_error || !py.config_error ||
        !py.illegal_error || !py.py_hand || !py.format_cards || !py.hand_name || !py.s_kind || !py.s_amount ||
        !py.empty_tuple)
        return -1;
    if (!PyType_Check(py.event_type) || !PyType_IsSubtype(py.event_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "arena.engine.actions.Event is not a tuple type");
        return -1;
    }
    if (!slot_offsets(py.legal_type, legal_fields, 6, py.legal_off) ||
        !slot_offsets(py.pot_type, pot_fields, 2, py.pot_off))
        return -1;
    eval_api = static_cast<const EvalApi *>(PyCapsule_Import("arena_sdk._eval._C_API", 0));
    if (eval_api == NULL)
        return -1;
    if (eval_api->version != EVAL_API_VERSION) {
        PyErr_Format(PyExc_ImportError, "arena_sdk._eval's C API is version %d, not %d: reinstall the SDK",
                     eval_api->version, EVAL_API_VERSION);
        return -1;
    }
    if (PyType_Ready(&HandType) < 0)
        return -1;
    Py_INCREF(&HandType);
    if (PyModule_AddObject(module, "Hand", (PyObject *)&HandType) < 0) {
        Py_DECREF(&HandType);
        return -1;
    }
    PyObject *api = PyCapsule_New((void *)&core_api, ARENA_CORE_API_CAPSULE, NULL);
    if (api == NULL || PyModule_AddObject(module, "_C_API", api) < 0) {
        Py_XDECREF(api);
        return -1;
    }
    return 0;
}

PyModuleDef_Slot core_slots[] = {{Py_mod_exec, (void *)core_exec}, {0, NULL}};

PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "_core",
    "The compiled state machine of one hand (arena.engine.hand is its readable reference).", 0, module_methods,
    core_slots,
    NULL, NULL, NULL,
};

} // namespace

PyMODINIT_FUNC PyInit__core(void)
{
    HandType.tp_name = "arena.engine._core.Hand";
    HandType.tp_basicsize = sizeof(HandObject);
    HandType.tp_dealloc = (destructor)hand_dealloc;
    HandType.tp_repr = (reprfunc)hand_repr;
    HandType.tp_flags = Py_TPFLAGS_DEFAULT;
    HandType.tp_doc = "One hand from the forced bets to the payoffs (the compiled arena.engine.hand.Hand).";
    HandType.tp_methods = hand_methods;
    HandType.tp_getset = hand_getset;
    HandType.tp_new = hand_new;
    return PyModuleDef_Init(&core_module);
}
