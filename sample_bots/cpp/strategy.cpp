#include "strategy.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

namespace arena_bot {

namespace v1 = arena::v1;

namespace {

constexpr const char* kRanks = "23456789TJQKA";

// A raise-to total for a bet of `fraction` of the pot after our call, clamped to the legal range.
std::optional<Decision> bet_fraction(const v1::LegalActions& legal, std::int64_t my_bet, std::int64_t pot,
                                     double fraction) {
  if (!legal.can_raise() || legal.max_raise_to() <= 0) return std::nullopt;
  const std::int64_t call = legal.call_amount();
  const auto extra = static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(pot + call)));
  const std::int64_t target = my_bet + call + extra;
  const std::int64_t low = std::max<std::int64_t>(legal.min_raise_to(), 1);
  if (low > legal.max_raise_to()) return std::nullopt;
  return Decision{v1::ACTION_KIND_RAISE, std::clamp(target, low, legal.max_raise_to())};
}

// A raise-to total of `total` chips (clamped to the legal range), used pre-flop where sizes go by the big blind.
std::optional<Decision> raise_to(const v1::LegalActions& legal, std::int64_t total) {
  if (!legal.can_raise() || legal.max_raise_to() <= 0) return std::nullopt;
  const std::int64_t low = std::max<std::int64_t>(legal.min_raise_to(), 1);
  if (low > legal.max_raise_to()) return std::nullopt;
  return Decision{v1::ACTION_KIND_RAISE, std::clamp(total, low, legal.max_raise_to())};
}

Decision check_or_call(const v1::LegalActions& legal) { return safe_action(legal); }

// Check if free; otherwise call when the price is right, else fold.
Decision check_or_call_if(const v1::LegalActions& legal, bool call_ok) {
  if (legal.can_check()) return {v1::ACTION_KIND_CHECK, 0};
  if (call_ok && legal.can_call()) return {v1::ACTION_KIND_CALL, 0};
  if (legal.can_fold()) return {v1::ACTION_KIND_FOLD, 0};
  return safe_action(legal);
}

// Ranks as bits: bit r for rank r (2..14), so sets of ranks cost no allocation.
using RankMask = std::uint32_t;

RankMask rank_bit(int rank) { return rank >= 1 && rank <= 14 ? RankMask{1} << rank : 0; }

// Highest top rank of a five-card straight among the ranks (the wheel A-2-3-4-5 tops at 5, R9.1), or 0.
int straight_top(RankMask ranks) {
  if ((ranks & rank_bit(14)) != 0) ranks |= rank_bit(1);
  for (int top = 14; top >= 5; --top) {
    const RankMask run = RankMask{0x1F} << (top - 4);
    if ((ranks & run) == run) return top;
  }
  return 0;
}

bool has_flush_draw(const std::vector<Card>& hole, const std::vector<Card>& board) {
  for (const Card& h : hole) {
    int same = 0;
    for (const Card& c : hole) same += c.suit == h.suit ? 1 : 0;
    for (const Card& c : board) same += c.suit == h.suit ? 1 : 0;
    if (same == 4) return true;
  }
  return false;
}

// Four ranks in a row, open at both ends (not A-2-3-4 or J-Q-K-A), with at least one hole card in the run.
bool has_open_ended_draw(const std::vector<Card>& hole, const std::vector<Card>& board) {
  RankMask ranks = 0;
  RankMask own = 0;
  for (const Card& c : hole) own |= rank_bit(c.rank);
  for (const Card& c : board) ranks |= rank_bit(c.rank);
  ranks |= own;
  for (int low = 2; low + 3 <= 13; ++low) {
    const RankMask run = RankMask{0xF} << low;
    if ((ranks & run) == run && (own & run) != 0) return true;
  }
  return false;
}

int count_own_raises(const v1::ActionRequest& request) {
  int n = 0;
  for (const auto& e : request.history()) {
    if (e.seat() != request.seat() || e.street() != request.street()) continue;
    if (e.kind() == v1::EVENT_KIND_BET || e.kind() == v1::EVENT_KIND_RAISE || e.kind() == v1::EVENT_KIND_ALL_IN) ++n;
  }
  return n;
}

// The seat's chips on this street (its raise-to total so far).
std::int64_t own_bet(const v1::ActionRequest& request) {
  for (const auto& s : request.seats()) {
    if (s.seat() == request.seat()) return s.bet();
  }
  return 0;
}

std::int64_t pot_total(const v1::ActionRequest& request) {
  std::int64_t pot = 0;
  for (const auto& p : request.pots()) pot += p.amount();
  return pot;
}

Decision decide_preflop(const v1::ActionRequest& request, const Card& a, const Card& b) {
  const v1::LegalActions& legal = request.legal();
  const std::int64_t bb = std::max<std::int64_t>(request.config().big_blind(), 1);
  const std::int64_t call = legal.call_amount();
  const std::int64_t top = own_bet(request) + call;  // the bet to match
  const bool unraised = top <= bb;
  const int raises = count_own_raises(request);
  std::int64_t stack = 0;
  for (const auto& s : request.seats()) {
    if (s.seat() == request.seat()) stack = s.stack();
  }
  const std::int64_t effective = stack + own_bet(request);  // all we can put in on this street

  switch (preflop_bucket(a, b)) {
    case Preflop::kPremium:
      if (raises < 2) {
        // Open to three big blinds; against a raise, make it three times the bet.
        if (auto r = raise_to(legal, unraised ? 3 * bb : 3 * top)) return *r;
      }
      return check_or_call(legal);  // never folds a premium hand pre-flop
    case Preflop::kStrong:
      if (unraised && raises == 0) {
        if (auto r = raise_to(legal, 3 * bb)) return *r;
      }
      // Call a raise that costs at most a fifth of what we have.
      return check_or_call_if(legal, 5 * call <= effective);
    case Preflop::kPlayable:
      return check_or_call_if(legal, call <= 2 * bb);
    case Preflop::kJunk:
      break;
  }
  // Junk: check the big blind, complete the small blind at good odds, fold to anything more.
  const std::int64_t pot = pot_total(request);
  return check_or_call_if(legal, call <= bb && 4 * call <= pot + call);
}

Decision decide_postflop(const v1::ActionRequest& request, const std::vector<Card>& hole,
                         const std::vector<Card>& board) {
  const v1::LegalActions& legal = request.legal();
  const std::int64_t call = legal.call_amount();
  const std::int64_t pot = pot_total(request);
  const std::int64_t my_bet = own_bet(request);
  const double odds = call > 0 ? static_cast<double>(call) / static_cast<double>(pot + call) : 0.0;
  const int raises = count_own_raises(request);
  const bool river = request.street() == v1::STREET_RIVER || board.size() >= 5;

  switch (postflop_strength(hole, board)) {
    case Postflop::kMonster:
      if (raises < 2) {
        if (auto r = bet_fraction(legal, my_bet, pot, 0.75)) return *r;
      }
      return check_or_call(legal);
    case Postflop::kStrong:
      if (raises == 0) {
        if (auto r = bet_fraction(legal, my_bet, pot, 0.66)) return *r;
      }
      return check_or_call(legal);
    case Postflop::kTopPair:
      if (call == 0 && raises == 0) {
        if (auto r = bet_fraction(legal, my_bet, pot, 0.5)) return *r;
      }
      return check_or_call_if(legal, odds <= (river ? 0.34 : 0.4));
    case Postflop::kWeakPair:
      return check_or_call_if(legal, odds <= 0.25);
    case Postflop::kDraw:
      return check_or_call_if(legal, odds <= draw_equity(hole, board));
    case Postflop::kNothing:
      break;
  }
  return check_or_call_if(legal, false);
}

const char* preflop_comment(Preflop bucket) {
  switch (bucket) {
    case Preflop::kPremium:
      return "pre-flop: premium hand";
    case Preflop::kStrong:
      return "pre-flop: strong hand";
    case Preflop::kPlayable:
      return "pre-flop: playable hand, cheap to see a flop";
    case Preflop::kJunk:
      break;
  }
  return "pre-flop: junk";
}

const char* postflop_comment(Postflop strength) {
  switch (strength) {
    case Postflop::kMonster:
      return "three of a kind or better";
    case Postflop::kStrong:
      return "overpair or two pair";
    case Postflop::kTopPair:
      return "top pair";
    case Postflop::kWeakPair:
      return "weak pair: calls only a small bet";
    case Postflop::kDraw:
      return "a draw: calls at its odds";
    case Postflop::kNothing:
      break;
  }
  return "nothing";
}

}  // namespace

std::optional<Card> parse_card(const std::string& text) {
  char s[3];
  std::size_t n = 0;
  for (char ch : text) {
    if (std::isspace(static_cast<unsigned char>(ch)) != 0) continue;
    if (n == 3) return std::nullopt;
    s[n++] = ch;
  }
  if (n == 3 && s[0] == '1' && s[1] == '0') {
    s[0] = 'T';
    s[1] = s[2];
    n = 2;
  }
  if (n != 2) return std::nullopt;
  const char rank_char = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  const char suit = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
  const char* found = std::char_traits<char>::find(kRanks, 13, rank_char);
  if (found == nullptr || (suit != 's' && suit != 'h' && suit != 'd' && suit != 'c')) return std::nullopt;
  return Card{static_cast<int>(found - kRanks) + 2, suit};
}

std::vector<Card> parse_cards(const google::protobuf::RepeatedPtrField<std::string>& texts) {
  std::vector<Card> cards;
  cards.reserve(static_cast<std::size_t>(texts.size()));
  for (const std::string& t : texts) {
    if (auto c = parse_card(t)) cards.push_back(*c);
  }
  return cards;
}

Category hand_category(const std::vector<Card>& cards) {
  if (cards.empty()) return Category::kHighCard;
  std::array<RankMask, 5> by_suit{};  // s, h, d, c, anything else
  std::array<int, 15> count{};
  RankMask ranks = 0;
  for (const Card& c : cards) {
    const std::size_t suit = c.suit == 's' ? 0 : c.suit == 'h' ? 1 : c.suit == 'd' ? 2 : c.suit == 'c' ? 3 : 4;
    by_suit[suit] |= rank_bit(c.rank);
    if (c.rank >= 1 && c.rank <= 14) ++count[static_cast<std::size_t>(c.rank)];
    ranks |= rank_bit(c.rank);
  }
  bool flush = false;
  for (const RankMask suited : by_suit) {
    if (__builtin_popcount(suited) >= 5) {
      flush = true;
      if (straight_top(suited) > 0) return Category::kStraightFlush;
    }
  }
  int first = 0;  // the two largest counts of one rank
  int second = 0;
  for (const int n : count) {
    if (n > first) {
      second = first;
      first = n;
    } else if (n > second) {
      second = n;
    }
  }
  if (first >= 4) return Category::kFourOfAKind;
  if (first == 3 && second >= 2) return Category::kFullHouse;
  if (flush) return Category::kFlush;
  if (straight_top(ranks) > 0) return Category::kStraight;
  if (first == 3) return Category::kThreeOfAKind;
  if (first == 2 && second == 2) return Category::kTwoPair;
  if (first == 2) return Category::kOnePair;
  return Category::kHighCard;
}

Preflop preflop_bucket(const Card& a, const Card& b) {
  const int hi = std::max(a.rank, b.rank);
  const int lo = std::min(a.rank, b.rank);
  const bool suited = a.suit == b.suit;
  if (hi == lo) {
    if (hi >= 10) return Preflop::kPremium;
    if (hi >= 7) return Preflop::kStrong;
    return Preflop::kPlayable;
  }
  if (hi == 14 && (lo == 13 || (lo == 12 && suited))) return Preflop::kPremium;
  if (hi == 14 && (lo == 12 || lo == 11 || (lo == 10 && suited))) return Preflop::kStrong;
  if (hi == 13 && (lo == 12 || (lo == 11 && suited))) return Preflop::kStrong;
  if (lo >= 10) return Preflop::kPlayable;                         // two broadway cards
  if (suited && hi == 14) return Preflop::kPlayable;               // suited ace
  if (suited && lo >= 5 && hi - lo <= 3) return Preflop::kPlayable;  // suited connectors and gappers
  return Preflop::kJunk;
}

Postflop postflop_strength(const std::vector<Card>& hole, const std::vector<Card>& board) {
  if (hole.size() != 2 || board.size() < 3) return Postflop::kNothing;
  std::vector<Card> all = hole;
  all.insert(all.end(), board.begin(), board.end());
  const Category ours = hand_category(all);
  const Category table = hand_category(board);
  int board_top = 0;
  for (const Card& c : board) board_top = std::max(board_top, c.rank);
  const bool pocket_pair = hole[0].rank == hole[1].rank;
  const bool board_paired = table >= Category::kOnePair;

  if (ours > table) {
    if (ours >= Category::kThreeOfAKind) return Postflop::kMonster;
    // Two pair on an unpaired board: each hole card pairs a board card.
    if (ours == Category::kTwoPair && !board_paired) return Postflop::kStrong;
    // One pair that uses a hole card (on a paired board, two pair whose new pair is ours).
    int pair_rank = 0;
    if (pocket_pair) {
      pair_rank = hole[0].rank;
      if (pair_rank > board_top) return Postflop::kStrong;  // overpair
    } else {
      for (const Card& h : hole) {
        for (const Card& c : board) {
          if (c.rank == h.rank) pair_rank = std::max(pair_rank, h.rank);
        }
      }
    }
    if (pair_rank == board_top) return Postflop::kTopPair;
    if (pair_rank > 0) return Postflop::kWeakPair;
  }
  if (board.size() < 5 && (has_flush_draw(hole, board) || has_open_ended_draw(hole, board))) return Postflop::kDraw;
  return Postflop::kNothing;
}

double draw_equity(const std::vector<Card>& hole, const std::vector<Card>& board) {
  if (board.size() >= 5 || board.size() < 3) return 0.0;
  const bool two_to_come = board.size() == 3;
  const bool flush = has_flush_draw(hole, board);
  const bool straight = has_open_ended_draw(hole, board);
  if (flush && straight) return two_to_come ? 0.54 : 0.33;
  if (flush) return two_to_come ? 0.35 : 0.19;
  if (straight) return two_to_come ? 0.31 : 0.17;
  return 0.0;
}

bool is_legal(const Decision& d, const v1::LegalActions& legal) {
  switch (d.kind) {
    case v1::ACTION_KIND_FOLD:
      return legal.can_fold();
    case v1::ACTION_KIND_CHECK:
      return legal.can_check();
    case v1::ACTION_KIND_CALL:
      return legal.can_call();
    case v1::ACTION_KIND_RAISE:
      return legal.can_raise() && d.amount >= legal.min_raise_to() && d.amount <= legal.max_raise_to();
    case v1::ACTION_KIND_ALL_IN:
      return true;
    default:
      return false;
  }
}

Decision safe_action(const v1::LegalActions& legal) {
  if (legal.can_check()) return {v1::ACTION_KIND_CHECK, 0};
  if (legal.can_call()) return {v1::ACTION_KIND_CALL, 0};
  if (legal.can_fold()) return {v1::ACTION_KIND_FOLD, 0};
  return {v1::ACTION_KIND_ALL_IN, 0};  // never needed with a well-formed request; always accepted
}

Decision ensure_legal(const Decision& decision, const v1::LegalActions& legal) {
  return is_legal(decision, legal) ? decision : safe_action(legal);
}

std::optional<Decision> retry_action(const v1::LegalActions& legal, const std::set<v1::ActionKind>& refused) {
  const std::array<std::pair<bool, v1::ActionKind>, 3> order{{
      {legal.can_check(), v1::ACTION_KIND_CHECK},
      {legal.can_fold(), v1::ACTION_KIND_FOLD},  // a fold is refused when a check is free (R6.1a)
      {legal.can_call(), v1::ACTION_KIND_CALL},
  }};
  for (const auto& [allowed, kind] : order) {
    if (allowed && refused.count(kind) == 0) return Decision{kind, 0};
  }
  return std::nullopt;
}

Decision decide(const v1::ActionRequest& request) {
  const v1::LegalActions& legal = request.legal();
  const std::vector<Card> hole = parse_cards(request.hole_cards());
  const std::vector<Card> board = parse_cards(request.board());
  if (hole.size() != 2) return safe_action(legal);
  const bool preflop = request.street() == v1::STREET_PREFLOP ||
                       (request.street() == v1::STREET_UNSPECIFIED && board.empty());
  const Decision d = preflop ? decide_preflop(request, hole[0], hole[1]) : decide_postflop(request, hole, board);
  Decision out = ensure_legal(d, legal);
  if (out.kind == d.kind && out.amount == d.amount) {
    out.comment = preflop ? preflop_comment(preflop_bucket(hole[0], hole[1]))
                          : postflop_comment(postflop_strength(hole, board));
  }
  return out;
}

Decision decide_call(const v1::LegalActions& legal) {
  if (legal.can_check()) return Decision{v1::ACTION_KIND_CHECK, 0, "calling station: check"};
  if (legal.can_call()) return Decision{v1::ACTION_KIND_CALL, 0, "calling station: call"};
  return safe_action(legal);
}

namespace {

// splitmix64: one well-mixed 64-bit step, enough to turn (seed, ids) into independent draws.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform draw in [0, n) from a 64-bit value (n > 0; the bias is below 2^-40 for any n a table can ask).
std::uint64_t below(std::uint64_t value, std::uint64_t n) { return value % n; }

}  // namespace

Decision decide_random(const v1::ActionRequest& request, std::uint64_t seed) {
  const v1::LegalActions& legal = request.legal();
  std::uint64_t state = mix(seed);
  for (const char ch : request.hand_id()) state = mix(state ^ static_cast<unsigned char>(ch));
  state = mix(state ^ request.request_id());
  std::vector<Decision> choices;
  if (legal.can_fold()) choices.push_back({v1::ACTION_KIND_FOLD, 0, "random"});
  if (legal.can_check()) choices.push_back({v1::ACTION_KIND_CHECK, 0, "random"});
  if (legal.can_call()) choices.push_back({v1::ACTION_KIND_CALL, 0, "random"});
  if (legal.can_raise() && legal.max_raise_to() >= legal.min_raise_to()) {
    const auto span = static_cast<std::uint64_t>(legal.max_raise_to() - legal.min_raise_to()) + 1;
    choices.push_back({v1::ACTION_KIND_RAISE,
                       legal.min_raise_to() + static_cast<std::int64_t>(below(mix(state + 1), span)), "random"});
  }
  if (choices.empty()) return safe_action(legal);
  return choices[below(state, choices.size())];
}

std::string describe(const Decision& d) {
  std::string name = v1::ActionKind_Name(d.kind);
  const std::string prefix = "ACTION_KIND_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  if (d.kind == v1::ACTION_KIND_RAISE) name += " to " + std::to_string(d.amount);
  return name;
}

}  // namespace arena_bot
