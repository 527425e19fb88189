/*
 * arena_sdk._eval: the arena's own Texas Hold'em hand evaluator (RULES.md R9), as a CPython extension: the
 * referee's (arena.cards.evaluator) and the bots' (arena_sdk.evaluator). arena_sdk/_pyeval.py is the same method in
 * Python, for an SDK installed without a C compiler.
 *
 * Cards are ints 0..51, rank * 4 + suit, rank 0 = deuce .. 12 = ace (arena_sdk/cards.py).
 *
 * Hand value (an int, higher = stronger, equal = exact tie; suits never take part, R9.3):
 *
 *     bits 20..23  category: 0 high card, 1 one pair, 2 two pair, 3 three of a kind, 4 straight,
 *                  5 flush, 6 full house, 7 four of a kind, 8 straight flush
 *     bits 16..19  first tiebreak rank (0 = deuce .. 12 = ace)
 *     bits 12..15  second tiebreak rank
 *     bits  8..11  third
 *     bits  4..7   fourth
 *     bits  0..3   fifth
 *
 * Unused tiebreak nibbles are 0.  The tiebreak ranks follow R9.2:
 *     straight / straight flush: the top card (3 = five for the wheel A-2-3-4-5, R9.1)
 *     four of a kind: quad rank, kicker          full house: trips rank, pair rank
 *     flush / high card: the five ranks, highest first
 *     three of a kind: trips rank, two kickers   two pair: high pair, low pair, kicker
 *     one pair: pair rank, three kickers
 *
 * Method: one 13-bit rank mask per suit; a flush is a suit mask with five bits or more; paired ranks come from
 * AND-ing the suit masks (ranks held in >= 2, >= 3, 4 suits).  Four small tables indexed by a 13-bit mask
 * (popcount, top bit, straight top card, top five ranks as nibbles) are built once at module init.
 * With at most seven cards a flush excludes four of a kind and a full house, so a flush decides the hand.
 * Other extensions evaluate through the capsule ``_C_API`` (EvalApi below), on any thread, without the GIL.
 *
 * runout_orders (all-in EV and AIVAT, millions of boards a match) compares hands only, and there by a strength
 * without branches: two table lookups a hand (see "Runout strengths").
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CATEGORY_SHIFT 20
#define N_CATEGORIES 9
#define MAX_VALUE (((uint32_t)N_CATEGORIES) << CATEGORY_SHIFT) /* exclusive bound of any value */

enum {
    HIGH_CARD = 0,
    ONE_PAIR,
    TWO_PAIR,
    THREE_OF_A_KIND,
    STRAIGHT,
    FLUSH,
    FULL_HOUSE,
    FOUR_OF_A_KIND,
    STRAIGHT_FLUSH
};

static uint8_t POPCOUNT[8192];
static uint8_t TOPBIT[8192];   /* index of the highest set bit (0 for an empty mask, never looked up) */
static int8_t STRAIGHT_TOP[8192]; /* top rank of the best straight in the mask, or -1 */
static uint32_t TOP5[8192];    /* the (up to) five highest ranks as nibbles at bits 16, 12, 8, 4, 0 */

static void build_tables(void)
{
    for (int m = 0; m < 8192; m++) {
        int count = 0, top = 0;
        uint32_t nibbles = 0;
        int taken = 0;
        for (int r = 12; r >= 0; r--) {
            if (m & (1 << r)) {
                if (count == 0)
                    top = r;
                count++;
                if (taken < 5) {
                    nibbles |= (uint32_t)r << (16 - 4 * taken);
                    taken++;
                }
            }
        }
        POPCOUNT[m] = (uint8_t)count;
        TOPBIT[m] = (uint8_t)top;
        TOP5[m] = nibbles;
        int st = -1;
        for (int t = 12; t >= 4; t--) {
            int run = 0x1F << (t - 4);
            if ((m & run) == run) {
                st = t;
                break;
            }
        }
        if (st < 0 && (m & 0x100F) == 0x100F) /* wheel: A, 2, 3, 4, 5; the five (rank 3) is the top */
            st = 3;
        STRAIGHT_TOP[m] = (int8_t)st;
    }
}

/* Value of a hand that makes no flush, from its four suit masks: only how many suits hold each rank counts (so any
   hand with the same ranks, however suited, has the same value here). */
static inline uint32_t eval_ranks(uint32_t c, uint32_t d, uint32_t h, uint32_t s)
{
    uint32_t ranks = c | d | h | s;
    uint32_t quads = c & d & h & s;
    if (quads) {
        uint32_t q = TOPBIT[quads];
        uint32_t kicker = TOPBIT[ranks & ~(1u << q)];
        return ((uint32_t)FOUR_OF_A_KIND << CATEGORY_SHIFT) | (q << 16) | (kicker << 12);
    }
    uint32_t cd = c & d, hs = h & s;
    uint32_t trips = (cd & (h | s)) | (hs & (c | d));
    uint32_t pairs = cd | hs | ((c | d) & (h | s)); /* ranks held at least twice */
    if (trips) {
        uint32_t t = TOPBIT[trips];
        uint32_t rest = pairs & ~(1u << t);
        if (rest)
            return ((uint32_t)FULL_HOUSE << CATEGORY_SHIFT) | (t << 16) | ((uint32_t)TOPBIT[rest] << 12);
    }
    int st = STRAIGHT_TOP[ranks];
    if (st >= 0)
        return ((uint32_t)STRAIGHT << CATEGORY_SHIFT) | ((uint32_t)st << 16);
    if (trips) {
        uint32_t t = TOPBIT[trips];
        return ((uint32_t)THREE_OF_A_KIND << CATEGORY_SHIFT) | (t << 16) |
               ((TOP5[ranks & ~(1u << t)] >> 4) & 0xFF00u);
    }
    if (pairs) {
        uint32_t hi = TOPBIT[pairs];
        uint32_t others = pairs & ~(1u << hi);
        if (others) {
            uint32_t lo = TOPBIT[others];
            uint32_t kicker = TOPBIT[ranks & ~(1u << hi) & ~(1u << lo)];
            return ((uint32_t)TWO_PAIR << CATEGORY_SHIFT) | (hi << 16) | (lo << 12) | (kicker << 8);
        }
        return ((uint32_t)ONE_PAIR << CATEGORY_SHIFT) | (hi << 16) | ((TOP5[ranks & ~(1u << hi)] >> 4) & 0xFFF0u);
    }
    return ((uint32_t)HIGH_CARD << CATEGORY_SHIFT) | TOP5[ranks];
}

/* Value of a hand given as its four suit masks (the core; 5 to 7 distinct cards). */
static inline uint32_t eval_masks(uint32_t c, uint32_t d, uint32_t h, uint32_t s)
{
    uint32_t flush_mask = 0;
    if (POPCOUNT[c] >= 5)
        flush_mask = c;
    else if (POPCOUNT[d] >= 5)
        flush_mask = d;
    else if (POPCOUNT[h] >= 5)
        flush_mask = h;
    else if (POPCOUNT[s] >= 5)
        flush_mask = s;
    if (flush_mask) {
        int st = STRAIGHT_TOP[flush_mask];
        if (st >= 0)
            return ((uint32_t)STRAIGHT_FLUSH << CATEGORY_SHIFT) | ((uint32_t)st << 16);
        return ((uint32_t)FLUSH << CATEGORY_SHIFT) | TOP5[flush_mask];
    }
    return eval_ranks(c, d, h, s);
}

/* Value of n (5..7) distinct, valid cards: the single evaluation path shared by every entry point. */
static inline uint32_t eval_cards(const int *cards, int n)
{
    uint32_t m[4] = {0, 0, 0, 0};
    for (int i = 0; i < n; i++)
        m[cards[i] & 3] |= 1u << (cards[i] >> 2);
    return eval_masks(m[0], m[1], m[2], m[3]);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* The C API: eval_cards for other extensions (arena.engine._core evaluates its showdowns with it, on threads     */
/* that may not hold the GIL). It reads only the tables build_tables made at module init, never Python.          */

#define EVAL_API_CAPSULE "arena_sdk._eval._C_API"
#define EVAL_API_VERSION 1

typedef struct EvalApi {
    int version; /* EVAL_API_VERSION */
    /* Value of n (5..7) distinct cards 0..51, exactly as evaluate() gives it; the caller checks the cards. */
    uint32_t (*evaluate)(const int *cards, int n);
} EvalApi;

static uint32_t api_evaluate(const int *cards, int n) { return eval_cards(cards, n); }

static const EvalApi eval_api = {EVAL_API_VERSION, api_evaluate};

/* ------------------------------------------------------------------------------------------------------------ */
/* Python argument checking                                                                                      */

static const char RANK_CHARS[] = "23456789TJQKA";
static const char SUIT_CHARS[] = "cdhs";

/* Read a list/tuple (or any sequence) of 5..7 cards into out; returns n, or -1 with an exception set. */
static int read_cards(PyObject *obj, int *out, const char *func)
{
    PyObject *seq;
    int owned = 0;
    if (PyList_Check(obj) || PyTuple_Check(obj)) {
        seq = obj;
    } else if (PyUnicode_Check(obj) || PyBytes_Check(obj) || !PySequence_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s() expects a list or tuple of 5, 6 or 7 card ints (0..51), got %.100s",
                     func, Py_TYPE(obj)->tp_name);
        return -1;
    } else {
        seq = PySequence_Fast(obj, "expected a sequence of card ints");
        if (seq == NULL)
            return -1;
        owned = 1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 5 || n > 7) {
        PyErr_Format(PyExc_ValueError, "%s() needs 5, 6 or 7 cards, got %zd", func, n);
        goto fail;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    uint64_t seen = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        long v;
        if (PyLong_CheckExact(item) || (PyLong_Check(item) && !PyBool_Check(item))) {
            v = PyLong_AsLong(item);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError, "%s(): card %zd is out of range (must be 0..51)", func, i);
                goto fail;
            }
        } else {
            PyErr_Format(PyExc_TypeError, "%s(): card %zd must be an int 0..51, got %.100s", func, i,
                         Py_TYPE(item)->tp_name);
            goto fail;
        }
        if (v < 0 || v > 51) {
            PyErr_Format(PyExc_ValueError, "%s(): card %zd is %ld, out of range (must be 0..51)", func, i, v);
            goto fail;
        }
        uint64_t bit = (uint64_t)1 << v;
        if (seen & bit) {
            PyErr_Format(PyExc_ValueError, "%s(): duplicate card %ld (%c%c)", func, v, RANK_CHARS[v >> 2],
                         SUIT_CHARS[v & 3]);
            goto fail;
        }
        seen |= bit;
        out[i] = (int)v;
    }
    if (owned)
        Py_DECREF(seq);
    return (int)n;
fail:
    if (owned)
        Py_DECREF(seq);
    return -1;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Exhaustive enumeration                                                                                        */

/* Step ``idx`` (``k`` ascending indices into 0..n-1) to the next combination in lexicographic order, advancing index
   ``at`` or, where it is at its last value, an earlier one (the later ones restart right after it); 0 when there is
   none. ``at`` is k - 1 for the next combination; k - 2 when the caller runs the last index through its values. */
static inline int next_combination(int *idx, int k, int n, int at)
{
    while (at >= 0 && idx[at] == n - k + at)
        at--;
    if (at < 0)
        return 0;
    idx[at]++;
    for (int j = at + 1; j < k; j++)
        idx[j] = idx[j - 1] + 1;
    return 1;
}

/* Every n-card hand from the deck through eval_cards; counts per category and, if hist, per value. */
static void enumerate_hands(int n, uint64_t *cat_counts, uint32_t *hist)
{
    int idx[7];
    for (int i = 0; i < n; i++)
        idx[i] = i;
    for (;;) {
        /* innermost card runs fastest: hand the whole tail through eval_cards */
        int last = n - 1;
        for (int k = idx[last]; k < 52; k++) {
            idx[last] = k;
            uint32_t v = eval_cards(idx, n);
            cat_counts[v >> CATEGORY_SHIFT]++;
            if (hist)
                hist[v]++;
        }
        if (!next_combination(idx, n, 52, last - 1))
            break;
    }
}

static int parse_hand_size(PyObject *arg, const char *func)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return -1;
    if (n < 5 || n > 7) {
        PyErr_Format(PyExc_ValueError, "%s() hand size must be 5, 6 or 7, got %ld", func, n);
        return -1;
    }
    return (int)n;
}

static PyObject *counts_tuple(const uint64_t *cat_counts)
{
    PyObject *result = PyTuple_New(N_CATEGORIES);
    if (result == NULL)
        return NULL;
    for (int i = 0; i < N_CATEGORIES; i++) {
        PyObject *c = PyLong_FromUnsignedLongLong(cat_counts[i]);
        if (c == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, i, c);
    }
    return result;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Module functions                                                                                              */

PyDoc_STRVAR(evaluate_doc,
             "evaluate(cards, /)\n--\n\n"
             "Value of the best five-card hand among 5, 6 or 7 distinct cards (ints 0..51): higher is stronger,\n"
             "equal is an exact tie. value >> 20 is the category (0 high card .. 8 straight flush).");

static PyObject *py_evaluate(PyObject *self, PyObject *arg)
{
    (void)self;
    int cards[7];
    int n = read_cards(arg, cards, "evaluate");
    if (n < 0)
        return NULL;
    return PyLong_FromUnsignedLong(eval_cards(cards, n));
}

PyDoc_STRVAR(evaluate_many_doc,
             "evaluate_many(hands, /)\n--\n\n"
             "List of evaluate(hand) for each hand in an iterable of hands, evaluated in one C call.");

static PyObject *py_evaluate_many(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *seq = PySequence_Fast(arg, "evaluate_many() expects an iterable of hands");
    if (seq == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject *result = PyList_New(count);
    if (result == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < count; i++) {
        int cards[7];
        int n = read_cards(items[i], cards, "evaluate_many");
        if (n < 0) {
            Py_DECREF(result);
            Py_DECREF(seq);
            return NULL;
        }
        PyObject *v = PyLong_FromUnsignedLong(eval_cards(cards, n));
        if (v == NULL) {
            Py_DECREF(result);
            Py_DECREF(seq);
            return NULL;
        }
        PyList_SET_ITEM(result, i, v);
    }
    Py_DECREF(seq);
    return result;
}

PyDoc_STRVAR(category_counts_doc,
             "category_counts(n, /)\n--\n\n"
             "Tuple of 9 counts, by category, of all n-card hands (n = 5, 6 or 7), enumerated in C.");

static PyObject *py_category_counts(PyObject *self, PyObject *arg)
{
    (void)self;
    int n = parse_hand_size(arg, "category_counts");
    if (n < 0)
        return NULL;
    uint64_t cat_counts[N_CATEGORIES] = {0};
    Py_BEGIN_ALLOW_THREADS
    enumerate_hands(n, cat_counts, NULL);
    Py_END_ALLOW_THREADS
    return counts_tuple(cat_counts);
}

PyDoc_STRVAR(category_counts_7_doc,
             "category_counts_7()\n--\n\n"
             "Tuple of 9 counts, by category, of all 133,784,560 seven-card hands, enumerated in C.");

static PyObject *py_category_counts_7(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    uint64_t cat_counts[N_CATEGORIES] = {0};
    Py_BEGIN_ALLOW_THREADS
    enumerate_hands(7, cat_counts, NULL);
    Py_END_ALLOW_THREADS
    return counts_tuple(cat_counts);
}

PyDoc_STRVAR(value_histogram_doc,
             "value_histogram(n, /)\n--\n\n"
             "Dict {value: number of n-card hands with that value} over all n-card hands (n = 5, 6 or 7).");

static PyObject *py_value_histogram(PyObject *self, PyObject *arg)
{
    (void)self;
    int n = parse_hand_size(arg, "value_histogram");
    if (n < 0)
        return NULL;
    uint32_t *hist = (uint32_t *)calloc(MAX_VALUE, sizeof(uint32_t));
    if (hist == NULL)
        return PyErr_NoMemory();
    uint64_t cat_counts[N_CATEGORIES] = {0};
    Py_BEGIN_ALLOW_THREADS
    enumerate_hands(n, cat_counts, hist);
    Py_END_ALLOW_THREADS
    PyObject *result = PyDict_New();
    if (result == NULL) {
        free(hist);
        return NULL;
    }
    for (uint32_t v = 0; v < MAX_VALUE; v++) {
        if (hist[v] == 0)
            continue;
        PyObject *key = PyLong_FromUnsignedLong(v);
        PyObject *val = PyLong_FromUnsignedLong(hist[v]);
        if (key == NULL || val == NULL || PyDict_SetItem(result, key, val) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(val);
            Py_DECREF(result);
            free(hist);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(val);
    }
    free(hist);
    return result;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Runout strengths: a 7-card hand's place in the order of all hands, without branches                            */

/* The runouts' loop only compares hands, two or more per completed board, and eval_masks' branches on the category
   are what a random board makes unpredictable: about half the loop's time. There a hand's strength is its dense
   rank among all 7-card values (1 = the weakest, equal = a tie, so it orders and ties hands exactly as eval_masks
   does) from two lookups:
   - the best flush in the suit that may hold one (0 for a mask of fewer than five cards);
   - the strength of its ranks without a flush, through a perfect hash of the ranks' key: the sum of 5^rank over
     the cards (a rank is held at most four times, so the key is the counts in base 5, one key per multiset).
   With seven cards a flush rules out a full house and four of a kind, so it beats whatever else the hand makes and
   the strength is the larger of the two. The tables are built by the first call that needs them (not at import:
   every bot imports this module). */

#define R7_SLOTS 65536      /* the perfect hash's table: 49,205 multisets of seven ranks */
#define R7_BUCKET_BITS 14   /* its buckets, each displaced as a whole */
#define R7_MULTIPLIER 0x9E3779B97F4A7C15ULL

static uint32_t CARD_KEY[52];                   /* 5^rank */
static uint64_t CARD_BIT[52];                   /* the card's bit in four 16-bit suit masks: suit * 16 + rank */
static uint16_t R7_DISPLACE[1 << R7_BUCKET_BITS];
static uint16_t R7_STRENGTH[R7_SLOTS];
static uint16_t FLUSH_STRENGTH[8192];          /* by the flush suit's mask; 0 below five cards */
static int r7_built = 0;                        /* built by the first call that needs the tables */

static inline uint32_t r7_slot(uint32_t key)
{
    uint64_t h = (uint64_t)key * R7_MULTIPLIER;
    return ((uint32_t)(h >> 20) + R7_DISPLACE[h >> (64 - R7_BUCKET_BITS)]) & (R7_SLOTS - 1);
}

/* The strength of a 7-card hand from its ranks' key and the mask of the suit that may hold a flush. */
static inline uint32_t r7_strength(uint32_t key, uint32_t flush_mask)
{
    uint32_t plain = R7_STRENGTH[r7_slot(key)];
    uint32_t flush = FLUSH_STRENGTH[flush_mask];
    return flush > plain ? flush : plain;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The dense rank of ``value`` among the sorted, distinct ``values``. */
static uint16_t dense_rank(const uint32_t *values, int n, uint32_t value)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (values[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint16_t)(lo + 1);
}

/* Every multiset of ``left`` more ranks from rank ``r`` up, at most four of each, on top of ``counts``: its key
   and its value without a flush written at ``keys`` and ``values``; returns how many. */
static int r7_multisets(int r, int left, int *counts, uint32_t *keys, uint32_t *values)
{
    if (left == 0) {
        uint32_t m[4] = {0, 0, 0, 0}, key = 0;
        for (int q = 0; q < 13; q++) {
            for (int c = 0; c < counts[q]; c++)
                m[c] |= 1u << q;
            key += (uint32_t)counts[q] * CARD_KEY[q * 4];
        }
        *keys = key;
        *values = eval_ranks(m[0], m[1], m[2], m[3]);
        return 1;
    }
    if (r == 13)
        return 0;
    int n = 0;
    for (int c = 0; c <= 4 && c <= left; c++) {
        counts[r] = c;
        n += r7_multisets(r + 1, left - c, counts, keys + n, values + n);
    }
    counts[r] = 0;
    return n;
}

/* Build the tables; 0 on success, -1 when out of memory or when no displacement fits a bucket (a fixed input:
   tests/ratings/test_allin.py checks every 7-card hand against eval_masks). */
static int build_r7(void)
{
    enum { MULTISETS = 49205 };
    uint32_t *keys = malloc(sizeof(uint32_t) * MULTISETS);
    uint32_t *values = malloc(sizeof(uint32_t) * (MULTISETS + 8192));
    uint32_t *order = malloc(sizeof(uint32_t) * MULTISETS);
    uint32_t *bucket_of = malloc(sizeof(uint32_t) * MULTISETS);
    uint8_t *taken = calloc(R7_SLOTS, 1);
    int *first = malloc(sizeof(int) * ((1 << R7_BUCKET_BITS) + 1));
    int ok = keys && values && order && bucket_of && taken && first;
    int n = 0, nv = 0;
    if (ok) {
        uint32_t pow5 = 1;
        for (int r = 0; r < 13; r++, pow5 *= 5)
            for (int s = 0; s < 4; s++) {
                CARD_KEY[r * 4 + s] = pow5;
                CARD_BIT[r * 4 + s] = 1ULL << (s * 16 + r);
            }
        int counts[13] = {0};
        n = r7_multisets(0, 7, counts, keys, values);
        ok = n == MULTISETS;
        nv = n;
    }
    if (ok) {
        for (uint32_t mask = 0; mask < 8192; mask++)
            if (POPCOUNT[mask] >= 5 && POPCOUNT[mask] <= 7)
                values[nv++] = eval_masks(mask, 0, 0, 0);
        uint32_t *sorted = malloc(sizeof(uint32_t) * nv);
        ok = sorted != NULL;
        int distinct = 0;
        if (ok) {
            memcpy(sorted, values, sizeof(uint32_t) * nv);
            qsort(sorted, nv, sizeof(uint32_t), compare_u32);
            for (int i = 0; i < nv; i++)
                if (distinct == 0 || sorted[distinct - 1] != sorted[i])
                    sorted[distinct++] = sorted[i];
            memset(FLUSH_STRENGTH, 0, sizeof(FLUSH_STRENGTH));
            for (uint32_t mask = 0; mask < 8192; mask++)
                if (POPCOUNT[mask] >= 5 && POPCOUNT[mask] <= 7)
                    FLUSH_STRENGTH[mask] = dense_rank(sorted, distinct, eval_masks(mask, 0, 0, 0));
            for (int i = 0; i < n; i++)
                values[i] = dense_rank(sorted, distinct, values[i]);
            free(sorted);
        }
    }
    if (ok) {
        /* hash and displace: the buckets, largest first, each at the first displacement where all its keys land on
           free slots */
        int buckets = 1 << R7_BUCKET_BITS;
        memset(first, 0, sizeof(int) * (buckets + 1));
        for (int i = 0; i < n; i++) {
            bucket_of[i] = (uint32_t)(((uint64_t)keys[i] * R7_MULTIPLIER) >> (64 - R7_BUCKET_BITS));
            first[bucket_of[i] + 1]++;
        }
        int largest = 0;
        for (int b = 0; b < buckets; b++) {
            if (first[b + 1] > largest)
                largest = first[b + 1];
            first[b + 1] += first[b];
        }
        int *fill = malloc(sizeof(int) * buckets);
        ok = fill != NULL;
        if (ok) {
            memcpy(fill, first, sizeof(int) * buckets);
            for (int i = 0; i < n; i++)
                order[fill[bucket_of[i]]++] = (uint32_t)i;
            free(fill);
            memset(R7_DISPLACE, 0, sizeof(R7_DISPLACE));
            for (int size = largest; size > 0 && ok; size--) {
                for (int b = 0; b < buckets && ok; b++) {
                    if (first[b + 1] - first[b] != size)
                        continue;
                    int d = 0;
                    for (; d < 65536; d++) {
                        int fits = 1;
                        for (int i = first[b]; i < first[b + 1] && fits; i++) {
                            uint64_t h = (uint64_t)keys[order[i]] * R7_MULTIPLIER;
                            uint32_t slot = ((uint32_t)(h >> 20) + (uint32_t)d) & (R7_SLOTS - 1);
                            if (taken[slot])
                                fits = 0;
                            else
                                taken[slot] = 2; /* for now: the bucket's own keys must not collide either */
                        }
                        for (int i = first[b]; i < first[b + 1]; i++) { /* undo the trial's marks */
                            uint64_t h = (uint64_t)keys[order[i]] * R7_MULTIPLIER;
                            uint32_t slot = ((uint32_t)(h >> 20) + (uint32_t)d) & (R7_SLOTS - 1);
                            if (taken[slot] == 2)
                                taken[slot] = 0;
                        }
                        if (fits)
                            break;
                    }
                    if (d == 65536) {
                        ok = 0;
                        break;
                    }
                    R7_DISPLACE[b] = (uint16_t)d;
                    for (int i = first[b]; i < first[b + 1]; i++) {
                        uint32_t slot = r7_slot(keys[order[i]]);
                        taken[slot] = 1;
                        R7_STRENGTH[slot] = (uint16_t)values[order[i]];
                    }
                }
            }
        }
    }
    free(keys);
    free(values);
    free(order);
    free(bucket_of);
    free(taken);
    free(first);
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Runouts: how often each order of finish occurs over the ways to complete a board (all-in EV)                 */

#define RUNOUT_MAX_PLAYERS 12 /* places fit in 4 bits each of a uint64 key */
#define RUNOUT_TABLE_BITS 13   /* open-addressing slots for distinct orders of finish: 8,192, more than all but rare
                                  calls with ten players or more meet (those count again in a table of their own) */
#define RUNOUT_MAX_TABLE_BITS 22

typedef struct {
    uint64_t key;
    uint64_t count;
    int used;
} OrderSlot;

/* A call's table: ``slots`` (all unused between calls), and the slots it took, in the order taken. One table is
   kept between calls and cleared slot by slot (where allocating and clearing all of it, and reading every slot
   back, took about 4 us a call: most of a river's or a turn's); a call made while another holds it (threads: the
   draws run without the GIL) allocates its own. ``shared_busy`` is read and written with the GIL held only. */
typedef struct {
    OrderSlot *slots;
    int *taken;
    int bits; /* 1 << bits slots, found by the key's hash's top bits */
    int count;
} OrderTable;

static OrderTable *shared_table = NULL;
static int shared_busy = 0;

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, bound) without modulo bias (Lemire's method with rejection). */
static uint32_t uniform_below(uint64_t *state, uint32_t bound)
{
    uint64_t m = (uint64_t)(uint32_t)splitmix64(state) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            m = (uint64_t)(uint32_t)splitmix64(state) * bound;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

#if defined(__GNUC__)
#define RUNOUT_INLINE __attribute__((always_inline)) static inline /* the draws' loop is slower when it is a call */
#else
#define RUNOUT_INLINE static inline
#endif

static void free_order_table(OrderTable *orders)
{
    if (orders != NULL) {
        free(orders->slots);
        free(orders->taken);
        free(orders);
    }
}

/* A table of 1 << ``bits`` slots, every one unused and none taken, or NULL (out of memory). */
static OrderTable *new_order_table(int bits)
{
    OrderTable *orders = calloc(1, sizeof(OrderTable));
    if (orders == NULL)
        return NULL;
    orders->bits = bits;
    orders->slots = calloc((size_t)1 << bits, sizeof(OrderSlot));
    orders->taken = malloc(sizeof(int) << bits);
    if (orders->slots == NULL || orders->taken == NULL) {
        free_order_table(orders);
        return NULL;
    }
    return orders;
}

/* Add ``count`` to the order of finish ``key`` in ``orders``; -1 when the table is full (too many distinct orders). */
RUNOUT_INLINE int add_order(OrderTable *orders, uint64_t key, uint64_t count)
{
    OrderSlot *table = orders->slots;
    int size = 1 << orders->bits;
    uint64_t h = (key * 0x9E3779B97F4A7C15ULL) >> (64 - orders->bits); /* the top bits: the results' slot order */
    for (int probe = 0; probe < size; probe++) {
        int at = (int)((h + probe) & (size - 1));
        OrderSlot *slot = &table[at];
        if (!slot->used) {
            slot->used = 1;
            slot->key = key;
            slot->count = count;
            orders->taken[orders->count++] = at;
            return 0;
        }
        if (slot->key == key) {
            slot->count += count;
            return 0;
        }
    }
    return -1;
}

/* Count one completed board for the players: its ranks' key ``board_key`` and the mask of the suit that may make a
   flush (``flush_suit``: the suit with three board cards or more, else 4, a suit nobody holds). Two players' boards
   are counted in ``heads_up`` (by who wins: index 0 a tie, 1 the first, 2 the second; heads_up_orders adds them to
   ``orders`` at the end), more players' straight into ``orders``, under the key of their places (per player, how
   many hold a strictly better hand). Returns -1 when the table is full (too many distinct orders). */
RUNOUT_INLINE int count_order(OrderTable *orders, uint64_t *heads_up, int players, const uint32_t *hole_keys,
                              uint32_t hole_masks[][5], uint32_t board_key, const uint32_t *board_masks,
                              int flush_suit)
{
    uint32_t board_flush = board_masks[flush_suit];
    if (players == 2) { /* most calls (heads-up all-ins and check-downs): no table in the loop, 14% of its time */
        uint32_t first = r7_strength(board_key + hole_keys[0], board_flush | hole_masks[0][flush_suit]);
        uint32_t second = r7_strength(board_key + hole_keys[1], board_flush | hole_masks[1][flush_suit]);
        heads_up[(first > second) + 2 * (second > first)]++;
        return 0;
    }
    uint32_t values[RUNOUT_MAX_PLAYERS];
    for (int p = 0; p < players; p++)
        values[p] = r7_strength(board_key + hole_keys[p], board_flush | hole_masks[p][flush_suit]);
    uint64_t key = 0;
    for (int p = 0; p < players; p++) {
        uint64_t better = 0;
        for (int q = 0; q < players; q++)
            better += values[q] > values[p];
        key |= better << (4 * p);
    }
    return add_order(orders, key, 1);
}

/* Two players' counts into ``orders``, under the keys count_order gives them: a tie (0, 0), the first wins (0, 1),
   the second wins (1, 0). Their slots are their hash's own (0, 5062 and 7278: none probes), so the result, read
   back in slot order, is the one counting board by board gave. */
static void heads_up_orders(OrderTable *orders, const uint64_t *heads_up)
{
    static const uint64_t keys[3] = {0, 1ULL << 4, 1};
    for (int i = 0; i < 3; i++)
        if (heads_up[i])
            add_order(orders, keys[i], heads_up[i]);
}

/* The suit of a completed board's masks that holds three cards or more (the only one where a hand can make a flush:
   two hole cards and three of the board's five), else 4. */
RUNOUT_INLINE int flush_suit_of(const uint32_t *board_masks)
{
    int suit = 4;
    for (int s = 0; s < 4; s++)
        suit = POPCOUNT[board_masks[s]] >= 3 ? s : suit;
    return suit;
}

/* One call's cards, as the counting reads them: the cards left (``rest``), the players' and the known board's suit
   masks and ranks' keys (r7_strength's input: a completion adds only its own cards; a hole's fifth suit is the one
   nobody holds, flush_suit_of's 4), and whether ``samples`` completions are drawn from ``seed`` or all counted. */
typedef struct {
    int players, missing, rest_n, sampled;
    long long samples;
    uint64_t seed;
    int rest[52];
    uint32_t hole_masks[RUNOUT_MAX_PLAYERS][5];
    uint32_t hole_keys[RUNOUT_MAX_PLAYERS];
    uint32_t known[5];
    uint32_t known_key;
} Runouts;

/* Count every completion of ``job``'s board, or its draws, in ``orders`` (empty); -1 when the table fills. */
static int count_runouts(const Runouts *job, OrderTable *orders)
{
    const int players = job->players, missing = job->missing, rest_n = job->rest_n;
    const int *rest = job->rest;
    const uint32_t *known = job->known, *hole_keys = job->hole_keys, known_key = job->known_key;
    uint32_t hole_masks[RUNOUT_MAX_PLAYERS][5];
    memcpy(hole_masks, job->hole_masks, sizeof(hole_masks));
    uint64_t heads_up[3] = {0, 0, 0};
    int failed = 0;
    if (job->sampled) {
        uint64_t state = job->seed;
        int pick[52];
        int swapped[5];
        memcpy(pick, rest, sizeof(int) * rest_n);
        for (long long n = 0; n < job->samples && !failed; n++) {
            uint64_t drawn = 0; /* the completion's cards, a bit each (CARD_BIT), in a register */
            uint32_t key = known_key;
            for (int k = 0; k < missing; k++) { /* partial Fisher-Yates: a uniform k-subset */
                int j = k + (int)uniform_below(&state, (uint32_t)(rest_n - k));
                int card = pick[j];
                pick[j] = pick[k]; /* (position k is never read again in this draw: it need not hold ``card``) */
                swapped[k] = j;
                drawn |= CARD_BIT[card];
                key += CARD_KEY[card];
            }
            for (int k = 0; k < missing; k++) /* undone: every position written holds rest's card again */
                pick[swapped[k]] = rest[swapped[k]];
            uint32_t masks[5] = {known[0] | (uint32_t)(drawn & 0x1FFF), known[1] | (uint32_t)((drawn >> 16) & 0x1FFF),
                                 known[2] | (uint32_t)((drawn >> 32) & 0x1FFF), known[3] | (uint32_t)(drawn >> 48), 0};
            failed = count_order(orders, heads_up, players, hole_keys, hole_masks, key, masks,
                                 flush_suit_of(masks));
        }
    } else {
        int idx[5];
        for (int k = 0; k < missing; k++)
            idx[k] = k;
        for (;;) {
            uint32_t masks[5] = {known[0], known[1], known[2], known[3], 0};
            uint32_t key = known_key;
            for (int k = 0; k < missing; k++) {
                masks[rest[idx[k]] & 3] |= 1u << (rest[idx[k]] >> 2);
                key += CARD_KEY[rest[idx[k]]];
            }
            if (count_order(orders, heads_up, players, hole_keys, hole_masks, key, masks, flush_suit_of(masks)) <
                0) {
                failed = 1;
                break;
            }
            if (!next_combination(idx, missing, rest_n, missing - 1))
                break;
        }
    }
    if (failed)
        return -1;
    if (players == 2)
        heads_up_orders(orders, heads_up);
    return 0;
}

/* Give back a call's table: the kept one, its slots unused again, or one of the call's own, freed. */
static void release_order_table(OrderTable *orders)
{
    if (orders == shared_table) {
        for (int i = 0; i < orders->count; i++)
            orders->slots[orders->taken[i]].used = 0;
        orders->count = 0;
        shared_busy = 0;
    } else {
        free_order_table(orders);
    }
}

PyDoc_STRVAR(runout_strengths_wrong_doc,
             "runout_strengths_wrong()\n--\n\n"
             "How many of all 133,784,560 seven-card hands the runouts' strength tables order differently from\n"
             "evaluate (0 when they are right: equal values get one strength, higher values a higher one).");

/* Every 7-card hand's strength (r7_strength, given its fullest suit) against its value (eval_masks): the count of
   hands whose value already had another strength, plus the values whose strength is not above the last lower
   value's; -1 when out of memory. */
static long long count_wrong_strengths(void)
{
    uint16_t *seen = calloc(MAX_VALUE, sizeof(uint16_t));
    if (seen == NULL)
        return -1;
    long long wrong = 0;
    int idx[7] = {0, 1, 2, 3, 4, 5, 6};
    for (;;) {
        uint32_t m[4] = {0, 0, 0, 0}, key = 0;
        for (int i = 0; i < 6; i++) {
            m[idx[i] & 3] |= 1u << (idx[i] >> 2);
            key += CARD_KEY[idx[i]];
        }
        for (int k = idx[6]; k < 52; k++) {
            idx[6] = k;
            uint32_t h[4] = {m[0], m[1], m[2], m[3]};
            h[k & 3] |= 1u << (k >> 2);
            int suit = 0;
            for (int s = 1; s < 4; s++)
                suit = POPCOUNT[h[s]] > POPCOUNT[h[suit]] ? s : suit;
            uint32_t value = eval_masks(h[0], h[1], h[2], h[3]);
            uint16_t strength = (uint16_t)r7_strength(key + CARD_KEY[k], h[suit]);
            if (seen[value] == 0)
                seen[value] = strength;
            else if (seen[value] != strength)
                wrong++;
        }
        if (!next_combination(idx, 7, 52, 5))
            break;
    }
    uint16_t last = 0;
    for (uint32_t value = 0; value < MAX_VALUE; value++) {
        if (seen[value] == 0)
            continue;
        if (seen[value] <= last)
            wrong++;
        last = seen[value];
    }
    free(seen);
    return wrong;
}

static PyObject *py_runout_strengths_wrong(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    if (!r7_built)
        r7_built = build_r7() == 0; /* (not built: out of memory; tried again by the next call) */
    if (!r7_built)
        return PyErr_NoMemory();
    long long wrong;
    Py_BEGIN_ALLOW_THREADS
    wrong = count_wrong_strengths();
    Py_END_ALLOW_THREADS
    if (wrong < 0)
        return PyErr_NoMemory();
    return PyLong_FromLongLong(wrong);
}

PyDoc_STRVAR(runout_orders_doc,
             "runout_orders(holes, board, samples, seed, /)\n--\n\n"
             "How often each order of finish occurs over the ways to complete ``board`` (0 to 5 cards) for\n"
             "``holes`` (2 to 12 pairs of hole cards): a dict from a tuple of places (per player, how many\n"
             "players hold a strictly better hand: 0 wins, equal places split) to a count. Every completion of\n"
             "the board from the cards not dealt to anyone is counted once, unless there are more than\n"
             "``samples`` (> 0) of them: then ``samples`` completions are drawn uniformly at random (with\n"
             "replacement, each one uniform among all completions) from a generator seeded by ``seed``.");

static PyObject *orders_dict(const OrderTable *orders, const int *taken, Py_ssize_t players);
static PyObject *orders_shares(const OrderTable *orders, const int *taken, Py_ssize_t players);

/* runout_orders and runout_shares: the arguments read and checked, the completions counted, and the result made
   from the counts in slot order by ``make`` (orders_dict or orders_shares). The error messages name runout_orders,
   whose arguments both take. */
static PyObject *runouts_made(PyObject *args, const char *format,
                              PyObject *(*make)(const OrderTable *, const int *, Py_ssize_t))
{
    PyObject *holes_obj, *board_obj;
    long long samples_ll;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, format, &holes_obj, &board_obj, &samples_ll, &seed))
        return NULL;
    PyObject *holes_seq = PySequence_Fast(holes_obj, "runout_orders() expects a sequence of hole-card pairs");
    if (holes_seq == NULL)
        return NULL;
    Py_ssize_t players = PySequence_Fast_GET_SIZE(holes_seq);
    int hole[RUNOUT_MAX_PLAYERS][2];
    int board[5] = {0, 0, 0, 0, 0};
    uint64_t dealt = 0;
    int board_n = 0;
    if (players < 2 || players > RUNOUT_MAX_PLAYERS) {
        PyErr_Format(PyExc_ValueError, "runout_orders() takes 2 to %d players, got %zd", RUNOUT_MAX_PLAYERS,
                     players);
        Py_DECREF(holes_seq);
        return NULL;
    }
    for (Py_ssize_t p = 0; p < players; p++) {
        PyObject *pair = PySequence_Fast(PySequence_Fast_GET_ITEM(holes_seq, p), "hole cards must be a sequence");
        if (pair == NULL || PySequence_Fast_GET_SIZE(pair) != 2) {
            if (pair != NULL) {
                PyErr_SetString(PyExc_ValueError, "runout_orders(): every player has exactly two hole cards");
                Py_DECREF(pair);
            }
            Py_DECREF(holes_seq);
            return NULL;
        }
        for (int c = 0; c < 2; c++) {
            long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(pair, c));
            if ((v == -1 && PyErr_Occurred()) || v < 0 || v > 51 || (dealt >> v) & 1) {
                PyErr_Clear();
                PyErr_SetString(PyExc_ValueError, "runout_orders(): cards must be distinct ints 0..51");
                Py_DECREF(pair);
                Py_DECREF(holes_seq);
                return NULL;
            }
            dealt |= 1ULL << v;
            hole[p][c] = (int)v;
        }
        Py_DECREF(pair);
    }
    Py_DECREF(holes_seq);
    PyObject *board_seq = PySequence_Fast(board_obj, "runout_orders() expects a sequence of board cards");
    if (board_seq == NULL)
        return NULL;
    board_n = (int)PySequence_Fast_GET_SIZE(board_seq);
    if (board_n > 5) {
        PyErr_SetString(PyExc_ValueError, "runout_orders(): a board has at most 5 cards");
        Py_DECREF(board_seq);
        return NULL;
    }
    for (int i = 0; i < board_n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(board_seq, i));
        if ((v == -1 && PyErr_Occurred()) || v < 0 || v > 51 || (dealt >> v) & 1) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "runout_orders(): cards must be distinct ints 0..51");
            Py_DECREF(board_seq);
            return NULL;
        }
        dealt |= 1ULL << v;
        board[i] = (int)v;
    }
    Py_DECREF(board_seq);

    int rest[52];
    int rest_n = 0;
    for (int c = 0; c < 52; c++)
        if (!((dealt >> c) & 1))
            rest[rest_n++] = c;
    int missing = 5 - board_n;
    /* completions = C(rest_n, missing) */
    double completions = 1.0;
    for (int k = 0; k < missing; k++)
        completions = completions * (rest_n - k) / (k + 1);

    if (!r7_built)
        r7_built = build_r7() == 0; /* (not built: out of memory; tried again by the next call) */
    if (!r7_built) {
        PyErr_SetString(PyExc_MemoryError, "runout_orders(): could not build the runouts' strength tables");
        return NULL;
    }
    Runouts job;
    job.players = (int)players;
    job.missing = missing;
    job.rest_n = rest_n;
    memcpy(job.rest, rest, sizeof(rest));
    job.sampled = samples_ll > 0 && completions > (double)samples_ll;
    job.samples = samples_ll;
    job.seed = seed;
    memset(job.known, 0, sizeof(job.known));
    job.known_key = 0;
    for (int p = 0; p < players; p++) {
        memset(job.hole_masks[p], 0, sizeof(job.hole_masks[p]));
        job.hole_keys[p] = 0;
        for (int c = 0; c < 2; c++) {
            job.hole_masks[p][hole[p][c] & 3] |= 1u << (hole[p][c] >> 2);
            job.hole_keys[p] += CARD_KEY[hole[p][c]];
        }
    }
    for (int i = 0; i < board_n; i++) {
        job.known[board[i] & 3] |= 1u << (board[i] >> 2);
        job.known_key += CARD_KEY[board[i]];
    }
    OrderTable *orders = NULL;
    if (!shared_busy) {
        if (shared_table == NULL)
            shared_table = new_order_table(RUNOUT_TABLE_BITS);
        orders = shared_table;
    }
    if (orders != NULL) {
        shared_busy = 1;
    } else { /* another call holds the kept table (or it could not be made): one of this call's own */
        orders = new_order_table(RUNOUT_TABLE_BITS);
        if (orders == NULL)
            return PyErr_NoMemory();
    }
    orders->count = 0;
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = count_runouts(&job, orders);
    Py_END_ALLOW_THREADS
    if (failed) { /* more distinct orders than the table holds (ten players or more): counted again, the same draws,
                     in a table of their own with room for twice as many orders as boards */
        release_order_table(orders);
        double boards = job.sampled ? (double)samples_ll : completions;
        int bits = RUNOUT_TABLE_BITS + 1;
        while (bits < RUNOUT_MAX_TABLE_BITS && (double)(1 << bits) < 2.0 * boards)
            bits++;
        orders = new_order_table(bits);
        if (orders == NULL)
            return PyErr_NoMemory();
        Py_BEGIN_ALLOW_THREADS
        failed = count_runouts(&job, orders);
        Py_END_ALLOW_THREADS
    }
    /* the taken slots in slot order: the order a scan of the whole table reads them in (the result's key order,
       which callers sum in); by insertion for the few of most calls, else by qsort (ten thousand and more, with ten
       players or more) */
    int *taken = orders->taken;
    if (orders->count > 64) {
        qsort(taken, (size_t)orders->count, sizeof(int), compare_int);
    } else {
        for (int i = 1; i < orders->count; i++) {
            int at = taken[i], j = i - 1;
            while (j >= 0 && taken[j] > at) {
                taken[j + 1] = taken[j];
                j--;
            }
            taken[j + 1] = at;
        }
    }
    PyObject *result = NULL;
    if (failed)
        PyErr_Format(PyExc_RuntimeError, "runout_orders(): more than %d distinct orders of finish",
                     1 << RUNOUT_MAX_TABLE_BITS);
    else
        result = make(orders, taken, players);
    release_order_table(orders);
    return result;
}

/* The counts as runout_orders' dict, in slot order. */
static PyObject *orders_dict(const OrderTable *orders, const int *taken, Py_ssize_t players)
{
    PyObject *result = PyDict_New();
    for (int i = 0; result != NULL && i < orders->count; i++) {
        const OrderSlot *slot = &orders->slots[taken[i]];
        PyObject *key = PyTuple_New(players);
        for (Py_ssize_t p = 0; key != NULL && p < players; p++)
            PyTuple_SET_ITEM(key, p, PyLong_FromLong((long)((slot->key >> (4 * p)) & 15)));
        PyObject *count = PyLong_FromUnsignedLongLong(slot->count);
        if (key == NULL || count == NULL || PyDict_SetItem(result, key, count) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(count);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(count);
    }
    return result;
}

/* The counts as each player's expected share of a pot: over the orders in slot order (runout_orders' dict's
   order), ``count / total / winners`` to each of an order's winners, every operation as Python does it on the
   dict (counts and totals below 2**53 are exact doubles, and IEEE division rounds as Python's int division does),
   so the shares are arena.ratings.runouts.shares_of's to the last bit. */
static PyObject *orders_shares(const OrderTable *orders, const int *taken, Py_ssize_t players)
{
    double shares[RUNOUT_MAX_PLAYERS] = {0};
    uint64_t total = 0;
    for (int i = 0; i < orders->count; i++)
        total += orders->slots[taken[i]].count;
    for (int i = 0; i < orders->count; i++) {
        const OrderSlot *slot = &orders->slots[taken[i]];
        int winners = 0;
        for (Py_ssize_t p = 0; p < players; p++)
            winners += ((slot->key >> (4 * p)) & 15) == 0;
        double share = (double)slot->count / (double)total / (double)winners;
        for (Py_ssize_t p = 0; p < players; p++)
            if (((slot->key >> (4 * p)) & 15) == 0)
                shares[p] += share;
    }
    PyObject *result = PyTuple_New(players);
    for (Py_ssize_t p = 0; result != NULL && p < players; p++) {
        PyObject *value = PyFloat_FromDouble(shares[p]);
        if (value == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, p, value);
    }
    return result;
}

static PyObject *py_runout_orders(PyObject *self, PyObject *args)
{
    (void)self;
    return runouts_made(args, "OOLK:runout_orders", orders_dict);
}

PyDoc_STRVAR(runout_shares_doc,
             "runout_shares(holes, board, samples, seed, /)\n--\n\n"
             "Each player's expected share of a pot they all contest, from runout_orders' counts (the same\n"
             "arguments): over its orders in order, count / total / winners to each winner of the order.");

static PyObject *py_runout_shares(PyObject *self, PyObject *args)
{
    (void)self;
    return runouts_made(args, "OOLK:runout_shares", orders_shares);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Heads-up pre-flop match-ups, counted once over all 1,712,304 boards (arena_sdk/preflop_headsup.bin, made by     */
/* tools/preflop_table.py): runout_orders' exact answer for two players and no board, read instead of drawn       */
/* ------------------------------------------------------------------------------------------------------------ */

#define PREFLOP_BOARDS 1712304u /* C(48, 5) */
#define PREFLOP_ENTRIES 47008   /* match-ups up to the suits' symmetry */

/* the suits' relabellings, in the order itertools.permutations(range(4)) gives them (tools/preflop_table.py) */
static const uint8_t SUIT_MAPS[24][4] = {
    {0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {0, 3, 2, 1},
    {1, 0, 2, 3}, {1, 0, 3, 2}, {1, 2, 0, 3}, {1, 2, 3, 0}, {1, 3, 0, 2}, {1, 3, 2, 0},
    {2, 0, 1, 3}, {2, 0, 3, 1}, {2, 1, 0, 3}, {2, 1, 3, 0}, {2, 3, 0, 1}, {2, 3, 1, 0},
    {3, 0, 1, 2}, {3, 0, 2, 1}, {3, 1, 0, 2}, {3, 1, 2, 0}, {3, 2, 0, 1}, {3, 2, 1, 0},
};

static PyObject *preflop_data = NULL; /* the loaded table: PREFLOP_ENTRIES x (key, first wins, ties), uint32 */

/* The match-up's canonical key: the smallest packing (first hand's higher card, its lower, the second's higher,
   its lower; six bits each) over the suits' relabellings and both orders of the hands; ``*swapped`` says whether
   the key's first hand is ``b``. (Where both orders reach the smallest key the match-up is its own mirror, and
   either answer is the same.) */
static uint32_t preflop_key(const int *a, const int *b, int *swapped)
{
    uint32_t best = UINT32_MAX;
    *swapped = 0;
    for (int p = 0; p < 24; p++) {
        const uint8_t *map = SUIT_MAPS[p];
        uint32_t x0 = (uint32_t)((a[0] & ~3) | map[a[0] & 3]), x1 = (uint32_t)((a[1] & ~3) | map[a[1] & 3]);
        uint32_t y0 = (uint32_t)((b[0] & ~3) | map[b[0] & 3]), y1 = (uint32_t)((b[1] & ~3) | map[b[1] & 3]);
        uint32_t xh = x0 > x1 ? x0 : x1, xl = x0 > x1 ? x1 : x0;
        uint32_t yh = y0 > y1 ? y0 : y1, yl = y0 > y1 ? y1 : y0;
        uint32_t xy = xh << 18 | xl << 12 | yh << 6 | yl, yx = yh << 18 | yl << 12 | xh << 6 | xl;
        if (xy < best) {
            best = xy;
            *swapped = 0;
        }
        if (yx < best) {
            best = yx;
            *swapped = 1;
        }
    }
    return best;
}

/* The entry of ``key`` in the loaded table (binary search over its ascending keys), or NULL. */
static const uint32_t *preflop_entry(uint32_t key)
{
    const uint32_t *table = (const uint32_t *)PyBytes_AS_STRING(preflop_data);
    Py_ssize_t lo = 0, hi = PREFLOP_ENTRIES;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        uint32_t at = table[3 * mid];
        if (at == key)
            return table + 3 * mid;
        if (at < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

PyDoc_STRVAR(load_preflop_table_doc,
             "load_preflop_table(data, /)\n--\n\n"
             "Keep ``data`` (arena_sdk/preflop_headsup.bin, decompressed) for headsup_preflop: 47,008 entries of\n"
             "three little-endian uint32 (key, first hand's wins, ties), keys ascending; ValueError otherwise.");

static PyObject *py_load_preflop_table(PyObject *self, PyObject *data)
{
    (void)self;
    if (!PyBytes_Check(data) || PyBytes_GET_SIZE(data) != (Py_ssize_t)(PREFLOP_ENTRIES * 3 * sizeof(uint32_t))) {
        PyErr_Format(PyExc_ValueError, "load_preflop_table(): expected %d bytes of table",
                     (int)(PREFLOP_ENTRIES * 3 * sizeof(uint32_t)));
        return NULL;
    }
    const uint32_t *table = (const uint32_t *)PyBytes_AS_STRING(data);
    for (int i = 0; i < PREFLOP_ENTRIES; i++) {
        if ((i > 0 && table[3 * i] <= table[3 * i - 3]) || (uint64_t)table[3 * i + 1] + table[3 * i + 2] >
                                                                   PREFLOP_BOARDS) {
            PyErr_Format(PyExc_ValueError, "load_preflop_table(): entry %d is out of order or counts too many "
                                           "boards", i);
            return NULL;
        }
    }
    Py_INCREF(data);
    Py_XSETREF(preflop_data, data);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(headsup_preflop_doc,
             "headsup_preflop(a, b, /)\n--\n\n"
             "Of all 1,712,304 boards, how many ``a`` wins, ``b`` wins and they tie (pairs of distinct hole\n"
             "cards, ints 0..51), read from the table load_preflop_table was given (RuntimeError without one).");

static PyObject *py_headsup_preflop(PyObject *self, PyObject *args)
{
    (void)self;
    int a[2], b[2];
    if (!PyArg_ParseTuple(args, "(ii)(ii):headsup_preflop", &a[0], &a[1], &b[0], &b[1]))
        return NULL;
    uint64_t seen = 0;
    const int cards[4] = {a[0], a[1], b[0], b[1]};
    for (int i = 0; i < 4; i++) {
        if (cards[i] < 0 || cards[i] > 51 || (seen >> cards[i]) & 1) {
            PyErr_SetString(PyExc_ValueError,
                            "headsup_preflop(): cards must be four distinct ints 0..51 (R1.1: a card is one of 52, "
                            "dealt once)");
            return NULL;
        }
        seen |= 1ULL << cards[i];
    }
    if (preflop_data == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "headsup_preflop(): no table loaded (load_preflop_table)");
        return NULL;
    }
    int swapped;
    const uint32_t *entry = preflop_entry(preflop_key(a, b, &swapped));
    if (entry == NULL) { /* a table that passed load_preflop_table's checks but lacks a match-up */
        PyErr_SetString(PyExc_RuntimeError, "headsup_preflop(): the loaded table lacks this match-up");
        return NULL;
    }
    unsigned long first = entry[1], ties = entry[2], second = PREFLOP_BOARDS - first - ties;
    return Py_BuildValue("(kkk)", swapped ? second : first, swapped ? first : second, ties);
}

static PyMethodDef eval_methods[] = {
    {"evaluate", py_evaluate, METH_O, evaluate_doc},
    {"evaluate_many", py_evaluate_many, METH_O, evaluate_many_doc},
    {"category_counts", py_category_counts, METH_O, category_counts_doc},
    {"category_counts_7", py_category_counts_7, METH_NOARGS, category_counts_7_doc},
    {"value_histogram", py_value_histogram, METH_O, value_histogram_doc},
    {"runout_orders", py_runout_orders, METH_VARARGS, runout_orders_doc},
    {"runout_shares", py_runout_shares, METH_VARARGS, runout_shares_doc},
    {"runout_strengths_wrong", py_runout_strengths_wrong, METH_NOARGS, runout_strengths_wrong_doc},
    {"load_preflop_table", py_load_preflop_table, METH_O, load_preflop_table_doc},
    {"headsup_preflop", py_headsup_preflop, METH_VARARGS, headsup_preflop_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc,
             "The arena's hand evaluator core (RULES.md R9). A value's bits 20..23 hold the category\n"
             "(0 high card .. 8 straight flush), bits 16..19, 12..15, 8..11, 4..7, 0..3 the tiebreak ranks\n"
             "(0 = deuce .. 12 = ace) in the order R9.2 compares them, unused ones 0.");

static struct PyModuleDef eval_module = {
    PyModuleDef_HEAD_INIT, "_eval", module_doc, -1, eval_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__eval(void)
{
    static int tables_built = 0; /* once: a second init must not rewrite them under a thread evaluating (C API) */
    if (!tables_built) {
        build_tables();
        tables_built = 1;
    }
    PyObject *m = PyModule_Create(&eval_module);
    if (m == NULL)
        return NULL;
    PyObject *api = PyCapsule_New((void *)&eval_api, EVAL_API_CAPSULE, NULL);
    if (api == NULL || PyModule_AddObject(m, "_C_API", api) < 0) {
        Py_XDECREF(api);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "CATEGORY_SHIFT", CATEGORY_SHIFT) < 0 ||
        PyModule_AddIntConstant(m, "MAX_VALUE", (long)MAX_VALUE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
