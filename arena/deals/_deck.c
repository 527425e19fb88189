/*
 * arena.deals._deck: the seeded deck of one deal (R1.3), compiled: the same cards as arena.deals.seed's
 * reference_deck, which stays the readable definition (tests/deals/test_compiled_deck.py compares the two over many
 * seeds and hands). Fisher-Yates driven by HMAC-SHA256(seed, "arena-deck-v1:<hand>:<block>") as a stream of
 * big-endian 32-bit words, with rejection sampling. SHA-256 (FIPS 180-4) and HMAC (RFC 2104) are written out here,
 * so the build needs no library; the key's inner and outer states are hashed once per deck. Where the CPU has the
 * SHA extensions (x86's SHA-NI, asked at import), a block is compressed by them: a deck in 1.7 µs where the portable
 * rounds take 4.4 (``_sha_ni`` says which runs; ``_use_sha_ni`` switches, for the tests, which compare both).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DECK_SHA_NI 1
#endif

typedef struct {
    uint32_t h[8];
} State;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const State INITIAL = {{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
                               0x5be0cd19}};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

/* One 64-byte block into the state (FIPS 180-4, 6.2.2). */
static void compress(State *s, const unsigned char *block)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
               (uint32_t)block[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

#ifdef DECK_SHA_NI
/* ``compress`` by the SHA extensions: the state as the instructions hold it (ABEF and CDGH), four rounds a step,
 * each step's four message words scheduled by sha256msg1/sha256msg2 from the four before (Intel's SHA extensions
 * guide's arrangement). */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_sha_ni(State *s, const unsigned char *block)
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL); /* big-endian words */
    __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s->h[0]), 0xB1);
    __m128i cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s->h[4]), 0x1B);
    __m128i abef = _mm_alignr_epi8(dcba, cdgh, 8);
    cdgh = _mm_blend_epi16(cdgh, dcba, 0xF0);
    const __m128i abef_was = abef, cdgh_was = cdgh;
    __m128i w[4]; /* the last four steps' message words: step i's in w[i % 4] */
    for (int i = 0; i < 16; i++) {
        __m128i words;
        if (i < 4) {
            words = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * i)), swap);
        } else { /* W[t-16] + s0(W[t-15]), + W[t-7], + s1(W[t-2]) */
            words = _mm_sha256msg1_epu32(w[i % 4], w[(i + 1) % 4]);
            words = _mm_add_epi32(words, _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
            words = _mm_sha256msg2_epu32(words, w[(i + 3) % 4]);
        }
        w[i % 4] = words;
        __m128i message = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&K[4 * i]));
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_was);
    cdgh = _mm_add_epi32(cdgh, cdgh_was);
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&s->h[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&s->h[4], _mm_alignr_epi8(dchg, feba, 8));
}
#endif

/* The block function in use: ``compress_sha_ni`` where the CPU has it (chosen at import), else ``compress``. */
static void (*compress_block)(State *, const unsigned char *) = compress;

/* The rest of a message after ``prefix_bytes`` already compressed into ``s``: ``data``, padding and length. */
static void finish(State *s, uint64_t prefix_bytes, const unsigned char *data, size_t size, uint32_t out[8])
{
    unsigned char block[64];
    uint64_t bits = (prefix_bytes + size) * 8;
    while (size >= 64) {
        compress_block(s, data);
        data += 64;
        size -= 64;
    }
    memset(block, 0, sizeof block);
    memcpy(block, data, size);
    block[size] = 0x80;
    if (size >= 56) {
        compress_block(s, block);
        memset(block, 0, sizeof block);
    }
    for (int i = 0; i < 8; i++)
        block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    compress_block(s, block);
    memcpy(out, s->h, sizeof s->h);
}

/* The HMAC key's inner and outer states: each its padded key's one block, compressed (RFC 2104). */
static void hmac_states(const unsigned char *key, size_t size, State *inner, State *outer)
{
    unsigned char padded[64], block[64];
    memset(padded, 0, sizeof padded);
    if (size > 64) {
        State s = INITIAL;
        uint32_t digest[8];
        finish(&s, 0, key, size, digest);
        for (int i = 0; i < 8; i++) {
            padded[4 * i] = (unsigned char)(digest[i] >> 24);
            padded[4 * i + 1] = (unsigned char)(digest[i] >> 16);
            padded[4 * i + 2] = (unsigned char)(digest[i] >> 8);
            padded[4 * i + 3] = (unsigned char)digest[i];
        }
    } else {
        memcpy(padded, key, size);
    }
    *inner = INITIAL;
    *outer = INITIAL;
    for (int i = 0; i < 64; i++)
        block[i] = padded[i] ^ 0x36;
    compress_block(inner, block);
    for (int i = 0; i < 64; i++)
        block[i] = padded[i] ^ 0x5c;
    compress_block(outer, block);
}

/* HMAC-SHA256 of ``message`` under the key whose states these are, as eight 32-bit words (big-endian order). */
static void hmac_words(const State *inner, const State *outer, const unsigned char *message, size_t size,
                       uint32_t out[8])
{
    State s = *inner;
    uint32_t digest[8];
    unsigned char bytes[32];
    finish(&s, 64, message, size, digest);
    for (int i = 0; i < 8; i++) {
        bytes[4 * i] = (unsigned char)(digest[i] >> 24);
        bytes[4 * i + 1] = (unsigned char)(digest[i] >> 16);
        bytes[4 * i + 2] = (unsigned char)(digest[i] >> 8);
        bytes[4 * i + 3] = (unsigned char)digest[i];
    }
    s = *outer;
    finish(&s, 64, bytes, 32, out);
}

typedef struct {
    State inner, outer;
    long long hand;
    long long block;
    uint32_t words[8];
    int next;
} Words;

static uint32_t next_word(Words *w)
{
    if (w->next == 8) {
        char message[80];
        int size = snprintf(message, sizeof message, "arena-deck-v1:%lld:%lld", w->hand, w->block);
        hmac_words(&w->inner, &w->outer, (const unsigned char *)message, (size_t)size, w->words);
        w->block++;
        w->next = 0;
    }
    return w->words[w->next++];
}

static PyObject *deck_for_hand(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    Py_buffer key;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "deck_for_hand(seed: bytes, hand_number: int)");
        return NULL;
    }
    long long hand = PyLong_AsLongLong(args[1]);
    if (hand == -1 && PyErr_Occurred())
        return NULL;
    if (hand < 0) {
        PyErr_Format(PyExc_ValueError, "hand number must not be negative, got %lld", hand);
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &key, PyBUF_SIMPLE) < 0)
        return NULL;
    Words w;
    hmac_states((const unsigned char *)key.buf, (size_t)key.len, &w.inner, &w.outer);
    PyBuffer_Release(&key);
    w.hand = hand;
    w.block = 0;
    w.next = 8;
    int deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = i;
    for (int i = 51; i > 0; i--) {
        uint64_t bound = (uint64_t)i + 1;
        uint64_t limit = ((uint64_t)1 << 32) - ((uint64_t)1 << 32) % bound; /* reject the biased top */
        uint32_t word = next_word(&w);
        while (word >= limit)
            word = next_word(&w);
        int j = (int)(word % bound);
        int t = deck[i];
        deck[i] = deck[j];
        deck[j] = t;
    }
    PyObject *out = PyList_New(52);
    if (out == NULL)
        return NULL;
    for (int i = 0; i < 52; i++) {
        PyObject *card = PyLong_FromLong(deck[i]);
        if (card == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, card);
    }
    return out;
}

static PyObject *hmac_sha256(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    Py_buffer key, message;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "hmac_sha256(key: bytes, message: bytes)");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &key, PyBUF_SIMPLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &message, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&key);
        return NULL;
    }
    State inner, outer;
    uint32_t words[8];
    unsigned char bytes[32];
    hmac_states((const unsigned char *)key.buf, (size_t)key.len, &inner, &outer);
    hmac_words(&inner, &outer, (const unsigned char *)message.buf, (size_t)message.len, words);
    PyBuffer_Release(&key);
    PyBuffer_Release(&message);
    for (int i = 0; i < 8; i++) {
        bytes[4 * i] = (unsigned char)(words[i] >> 24);
        bytes[4 * i + 1] = (unsigned char)(words[i] >> 16);
        bytes[4 * i + 2] = (unsigned char)(words[i] >> 8);
        bytes[4 * i + 3] = (unsigned char)words[i];
    }
    return PyBytes_FromStringAndSize((const char *)bytes, 32);
}

/* The fastest block function this CPU runs: ``compress_sha_ni`` where it has the SHA extensions (and SSE4.1, which
 * their code uses), else ``compress``. */
static void (*best_compress(void))(State *, const unsigned char *)
{
#ifdef DECK_SHA_NI
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1"))
        return compress_sha_ni;
#endif
    return compress;
}

static PyObject *use_sha_ni(PyObject *module, PyObject *flag)
{
    (void)module;
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    compress_block = on ? best_compress() : compress;
    return PyBool_FromLong(compress_block != compress);
}

static PyMethodDef methods[] = {
    {"deck_for_hand", (PyCFunction)(void (*)(void))deck_for_hand, METH_FASTCALL,
     "The 52 cards of deal ``hand_number`` from the seed's UTF-8 bytes (arena.deals.seed.reference_deck)."},
    {"hmac_sha256", (PyCFunction)(void (*)(void))hmac_sha256, METH_FASTCALL,
     "HMAC-SHA256 of a message (the deck's own, for the differential test against hashlib)."},
    {"_use_sha_ni", (PyCFunction)use_sha_ni, METH_O,
     "Test only: compress with the SHA extensions (True, where the CPU has them) or the portable rounds (False)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_deck", "Seeded decks (R1.3), compiled: arena.deals.seed's reference_deck.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__deck(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    compress_block = best_compress();
    if (PyModule_AddObject(module, "_sha_ni", PyBool_FromLong(compress_block != compress)) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
