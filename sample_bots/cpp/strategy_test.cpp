// Unit tests of strategy.cpp: a few decisions on hand-made requests, and legality on many random ones.
// Run: build/arena-cpp-bot-test (exit status 0 when every check passes). tests/sdk/test_cpp_bot.py runs it.

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "strategy.hpp"

namespace v1 = arena::v1;
using arena_bot::Decision;

namespace {

int failures = 0;
int checks = 0;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    ++checks;                                                                          \
    if (!(cond)) {                                                                     \
      ++failures;                                                                      \
      std::cerr << __FILE__ << ":" << __LINE__ << ": check failed: " #cond << std::endl; \
    }                                                                                  \
  } while (0)

std::vector<std::string> split_cards(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) out.push_back(text.substr(i, 2));
  return out;
}

// A heads-up no-limit request for seat 0 (blinds 50/100); by default proto/README.md's first request:
// AsKd on the button, 50 to call, raise to 200..10000. The legal actions follow from the bets.
v1::ActionRequest make_request(const std::string& hole = "AsKd", const std::string& board = "",
                               std::vector<std::int64_t> stacks = {9950, 9900},
                               std::vector<std::int64_t> bets = {50, 100},
                               std::vector<std::int64_t> committed = {}) {
  if (committed.empty()) committed = bets;
  v1::ActionRequest r;
  r.set_table_id("t0");
  r.set_hand_id("m1-t0-h1");
  r.set_request_id(1);
  r.set_seat(0);
  r.set_button(0);
  for (const auto& c : split_cards(hole)) r.add_hole_cards(c);
  for (const auto& c : split_cards(board)) r.add_board(c);
  const std::size_t n = board.size() / 2;
  r.set_street(n == 0 ? v1::STREET_PREFLOP : n == 3 ? v1::STREET_FLOP : n == 4 ? v1::STREET_TURN : v1::STREET_RIVER);
  std::int64_t pot = 0;
  for (std::size_t s = 0; s < stacks.size(); ++s) {
    auto* seat = r.add_seats();
    seat->set_seat(static_cast<int>(s));
    seat->set_name("bot" + std::to_string(s));
    seat->set_stack(stacks[s]);
    seat->set_bet(bets[s]);
    seat->set_committed(committed[s]);
    seat->set_status(v1::SEAT_STATUS_ACTIVE);
    pot += committed[s];
  }
  auto* p = r.add_pots();
  p->set_amount(pot);
  p->add_eligible_seats(0);
  p->add_eligible_seats(1);
  std::int64_t top = 0;
  for (auto b : bets) top = std::max(top, b);
  const std::int64_t owed = top - bets[0];
  auto* legal = r.mutable_legal();
  legal->set_can_fold(owed > 0);
  legal->set_can_check(owed == 0);
  legal->set_can_call(owed > 0);
  legal->set_call_amount(std::min(owed, stacks[0]));
  const bool can_raise = stacks[0] > owed;
  legal->set_can_raise(can_raise);
  if (can_raise) {
    legal->set_min_raise_to(std::min(top + std::max<std::int64_t>(top - 0, 100), bets[0] + stacks[0]));
    legal->set_max_raise_to(bets[0] + stacks[0]);
  }
  auto* config = r.mutable_config();
  config->set_num_seats(static_cast<int>(stacks.size()));
  config->set_structure(v1::STRUCTURE_NO_LIMIT);
  config->set_small_blind(50);
  config->set_big_blind(100);
  config->set_starting_stack(10000);
  return r;
}

bool is(const Decision& d, v1::ActionKind kind) { return d.kind == kind; }

void test_cards_and_categories() {
  auto as = arena_bot::parse_card("As");
  CHECK(as && as->rank == 14 && as->suit == 's');
  auto ten = arena_bot::parse_card("10d");
  CHECK(ten && ten->rank == 10 && ten->suit == 'd');
  CHECK(!arena_bot::parse_card("1s"));
  CHECK(!arena_bot::parse_card("Ax"));

  auto cat = [](const std::string& cards) {
    std::vector<arena_bot::Card> cs;
    for (const auto& t : split_cards(cards)) cs.push_back(*arena_bot::parse_card(t));
    return arena_bot::hand_category(cs);
  };
  using C = arena_bot::Category;
  CHECK(cat("As2d3c4h5s") == C::kStraight);  // the wheel (R9.1)
  CHECK(cat("AsKsQsJsTs") == C::kStraightFlush);
  CHECK(cat("2s7s9sJsKd3s") == C::kFlush);
  CHECK(cat("KsKdKh2c2d") == C::kFullHouse);
  CHECK(cat("KsKd2h2c9d") == C::kTwoPair);
  CHECK(cat("AsKdQh") == C::kHighCard);
}

void test_preflop_buckets() {
  auto bucket = [](const std::string& a, const std::string& b) {
    return arena_bot::preflop_bucket(*arena_bot::parse_card(a), *arena_bot::parse_card(b));
  };
  using P = arena_bot::Preflop;
  CHECK(bucket("As", "Ad") == P::kPremium);
  CHECK(bucket("Qs", "Ah") == P::kStrong);
  CHECK(bucket("8s", "8h") == P::kStrong);
  CHECK(bucket("9h", "8h") == P::kPlayable);
  CHECK(bucket("7c", "2d") == P::kJunk);
}

void test_preflop_decisions() {
  // AK on the button facing the big blind: open to three big blinds (a raise-to total, R6.2).
  const Decision open = arena_bot::decide(make_request());
  CHECK(is(open, v1::ACTION_KIND_RAISE) && open.amount == 300);
  CHECK(open.comment != nullptr && std::string(open.comment) == "pre-flop: premium hand");  // why, for the records
  // Seven-deuce facing a raise to 2000: fold.
  CHECK(is(arena_bot::decide(make_request("7c2d", "", {9900, 8000}, {100, 2000})), v1::ACTION_KIND_FOLD));
  // Seven-deuce in the small blind: complete for 50 into 150.
  CHECK(is(arena_bot::decide(make_request("7c2d")), v1::ACTION_KIND_CALL));
  // Aces facing an all-in bigger than our stack: no raise is possible, call (never fold aces pre-flop).
  auto shove = make_request("AhAc", "", {5000, 0}, {100, 9000});
  CHECK(!shove.legal().can_raise());
  CHECK(is(arena_bot::decide(shove), v1::ACTION_KIND_CALL));
  // Aces when the only raise is a short all-in (R7.3): raise to exactly that amount.
  auto short_stack = make_request("AhAc", "", {250, 9900}, {50, 100});
  short_stack.mutable_legal()->set_min_raise_to(300);
  short_stack.mutable_legal()->set_max_raise_to(300);
  const Decision all_in = arena_bot::decide(short_stack);
  CHECK(is(all_in, v1::ACTION_KIND_RAISE) && all_in.amount == 300);
}

void test_postflop_decisions() {
  // Junk on the flop, nothing owed: check, never fold (R6.1a).
  CHECK(is(arena_bot::decide(make_request("7c2d", "AsKhQd", {9700, 9700}, {0, 0}, {300, 300})),
           v1::ACTION_KIND_CHECK));
  // The nuts with the pot at 600 and nothing owed: bet three quarters of the pot.
  const Decision nuts = arena_bot::decide(make_request("AsKs", "QsJsTs", {9700, 9700}, {0, 0}, {300, 300}));
  CHECK(is(nuts, v1::ACTION_KIND_RAISE) && nuts.amount == 450);
  // Nothing facing a pot-sized bet: fold.
  CHECK(is(arena_bot::decide(make_request("7c2d", "AsKhQd", {9700, 9100}, {0, 600}, {300, 900})),
           v1::ACTION_KIND_FOLD));
  // Top pair facing a half-pot bet (odds 0.25): call.
  CHECK(is(arena_bot::decide(make_request("Ah9d", "As7c2d", {9700, 9400}, {0, 300}, {300, 600})),
           v1::ACTION_KIND_CALL));
  // A flush draw on the flop facing a small bet (odds 0.2 < 0.35): call; facing a pot-sized one on the turn: fold.
  CHECK(is(arena_bot::decide(make_request("AhTh", "Kh7h2c", {9700, 9500}, {0, 200}, {300, 500})),
           v1::ACTION_KIND_CALL));
  CHECK(is(arena_bot::decide(make_request("AhTh", "Kh7h2c3d", {9700, 9100}, {0, 600}, {300, 900})),
           v1::ACTION_KIND_FOLD));
  // A pair on the board alone is nothing.
  CHECK(arena_bot::postflop_strength({*arena_bot::parse_card("7c"), *arena_bot::parse_card("2d")},
                                     {*arena_bot::parse_card("Ks"), *arena_bot::parse_card("Kh"),
                                      *arena_bot::parse_card("9d")}) == arena_bot::Postflop::kNothing);
}

void test_retries() {
  v1::LegalActions free_check;
  free_check.set_can_check(true);
  auto first = arena_bot::retry_action(free_check, {});
  CHECK(first && is(*first, v1::ACTION_KIND_CHECK));
  CHECK(!arena_bot::retry_action(free_check, {v1::ACTION_KIND_CHECK}));  // no fold when a check is free
  v1::LegalActions facing;
  facing.set_can_fold(true);
  facing.set_can_call(true);
  facing.set_call_amount(100);
  auto fold = arena_bot::retry_action(facing, {v1::ACTION_KIND_RAISE});
  CHECK(fold && is(*fold, v1::ACTION_KIND_FOLD));
  auto call = arena_bot::retry_action(facing, {v1::ACTION_KIND_FOLD});
  CHECK(call && is(*call, v1::ACTION_KIND_CALL));
}

// Every decision is legal for the LegalActions given, whatever the situation (and never a fold when a check is
// free), on random but consistent requests: 2-6 seats, any street, random stacks, bets and raise ranges.
void test_always_legal_on_random_requests() {
  std::mt19937 rng(7);
  const std::string ranks = "23456789TJQKA";
  const std::string suits = "shdc";
  int illegal = 0;
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::string> deck;
    for (char r : ranks) {
      for (char s : suits) deck.push_back(std::string{r, s});
    }
    std::shuffle(deck.begin(), deck.end(), rng);
    const int n = std::uniform_int_distribution<int>(2, 6)(rng);
    const int board_len = std::vector<int>{0, 3, 4, 5}[std::uniform_int_distribution<int>(0, 3)(rng)];
    std::string hole = deck[0] + deck[1];
    std::string board;
    for (int b = 0; b < board_len; ++b) board += deck[2 + b];
    std::vector<std::int64_t> stacks(n);
    std::vector<std::int64_t> bets(n);
    for (int s = 0; s < n; ++s) {
      stacks[s] = std::uniform_int_distribution<std::int64_t>(1, 20000)(rng);
      bets[s] = std::vector<std::int64_t>{0, 0, 50, 100, 300, std::uniform_int_distribution<std::int64_t>(1, 5000)(
                                                                  rng)}[std::uniform_int_distribution<int>(0, 5)(rng)];
    }
    auto r = make_request(hole, board, stacks, bets);
    auto* legal = r.mutable_legal();
    if (legal->can_raise()) {
      if (rng() % 5 == 0) {
        legal->set_can_raise(false);
        legal->set_min_raise_to(0);
        legal->set_max_raise_to(0);
      } else {
        const std::int64_t lo = std::uniform_int_distribution<std::int64_t>(bets[0] + 1, legal->max_raise_to())(rng);
        legal->set_min_raise_to(lo);
        legal->set_max_raise_to(std::uniform_int_distribution<std::int64_t>(lo, legal->max_raise_to())(rng));
      }
    }
    const Decision d = arena_bot::decide(r);
    const bool ok = arena_bot::is_legal(d, *legal) && d.kind != v1::ACTION_KIND_ALL_IN &&
                    !(legal->can_check() && d.kind == v1::ACTION_KIND_FOLD);
    const Decision c = arena_bot::decide_call(*legal);
    const Decision x = arena_bot::decide_random(r, static_cast<std::uint64_t>(i));
    const bool others_ok = arena_bot::is_legal(c, *legal) && arena_bot::is_legal(x, *legal) &&
                           c.kind != v1::ACTION_KIND_FOLD && c.kind != v1::ACTION_KIND_RAISE;
    if (!ok || !others_ok) {
      ++illegal;
      if (illegal <= 3) {
        std::cerr << "illegal: " << arena_bot::describe(d) << " / " << arena_bot::describe(c) << " / "
                  << arena_bot::describe(x) << " for " << r.ShortDebugString() << "\n";
      }
    }
  }
  CHECK(illegal == 0);
}

// The request with another request id (a new draw for the random style).
v1::ActionRequest with_request_id(v1::ActionRequest request, int id) {
  request.set_request_id(static_cast<std::uint64_t>(id));
  return request;
}

bool same(const Decision& a, const Decision& b) { return a.kind == b.kind && a.amount == b.amount; }

// The calling station checks when free, else calls. The random style answers a request the same way every time for
// a seed, draws each legal kind about equally often over many requests, and raises anywhere in the legal range.
void test_call_and_random_styles() {
  const v1::ActionRequest open = make_request();  // 50 to call, raise to 200..10000
  CHECK(is(arena_bot::decide_call(open.legal()), v1::ACTION_KIND_CALL));
  CHECK(is(arena_bot::decide_call(make_request("7c2d", "", {9900, 9900}, {100, 100}).legal()),
           v1::ACTION_KIND_CHECK));
  std::map<v1::ActionKind, int> kinds;
  std::int64_t low = open.legal().max_raise_to(), high = open.legal().min_raise_to();
  int repeats = 0;
  for (int i = 0; i < 3000; ++i) {
    const v1::ActionRequest r = with_request_id(open, i);
    const Decision d = arena_bot::decide_random(r, 42);
    repeats += same(d, arena_bot::decide_random(r, 42)) ? 1 : 0;
    ++kinds[d.kind];
    if (d.kind == v1::ACTION_KIND_RAISE) {
      low = std::min(low, d.amount);
      high = std::max(high, d.amount);
    }
  }
  CHECK(repeats == 3000);
  CHECK(kinds.size() == 3);  // fold, call, raise (no check: there is a bet to call)
  for (const auto& [kind, n] : kinds) CHECK(n > 850 && n < 1150);
  CHECK(low < 1000 && high > 9000);
  int same_across_seeds = 0;
  for (int i = 0; i < 200; ++i) {
    const v1::ActionRequest r = with_request_id(open, i);
    same_across_seeds += same(arena_bot::decide_random(r, 1), arena_bot::decide_random(r, 2)) ? 1 : 0;
  }
  CHECK(same_across_seeds < 120);  // another seed, another sequence (about a third agree by chance)
}

}  // namespace

int main() {
  test_cards_and_categories();
  test_preflop_buckets();
  test_preflop_decisions();
  test_postflop_decisions();
  test_retries();
  test_always_legal_on_random_requests();
  test_call_and_random_styles();
  if (failures != 0) {
    std::cerr << failures << " of " << checks << " checks failed" << std::endl;
    return 1;
  }
  std::cout << "arena-cpp-bot-test: all " << checks << " checks passed" << std::endl;
  return 0;
}
