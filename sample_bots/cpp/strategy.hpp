// The strategy of the C++ sample bot: pure functions of one arena.v1.ActionRequest, no I/O, no memory between
// requests, so it can be unit tested (strategy_test.cpp).
//
// The plan, in short (README.md has the details):
// - Pre-flop, hands fall into four buckets (premium, strong, playable, junk) by pairs, high cards and suited
//   connectors. Premium hands raise and re-raise, strong hands open, playable hands call cheap bets, junk checks or
//   completes a small blind and folds to anything more.
// - After the flop, it finds what its hole cards make with the board (a pair or better that the board alone does
//   not have, or a flush or open-ended straight draw) and bets its strong hands for value as a share of the pot;
//   facing a bet it calls when the pot odds are good enough for that strength, else folds.
// - Whatever it decides is checked against ActionRequest.legal (ensure_legal), so it never sends an illegal
//   action. Amounts are raise-to totals for the street (RULES.md R6.2).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arena/v1/bot.pb.h"

namespace arena_bot {

// A card: rank 2..14 (ace high), suit one of 's', 'h', 'd', 'c' (R1.2).
struct Card {
  int rank;
  char suit;
};

// "As", "Td", "7c"; also "10d" and lower case. Empty for anything else.
std::optional<Card> parse_card(const std::string& text);

// Parses every card of a list, skipping the ones that do not parse.
std::vector<Card> parse_cards(const google::protobuf::RepeatedPtrField<std::string>& texts);

// Hand categories, weakest first (R9).
enum class Category {
  kHighCard = 0,
  kOnePair,
  kTwoPair,
  kThreeOfAKind,
  kStraight,
  kFlush,
  kFullHouse,
  kFourOfAKind,
  kStraightFlush,
};

// Category of the best five-card hand that can be made from the cards (any number of them, 0 to 7).
Category hand_category(const std::vector<Card>& cards);

// Pre-flop buckets, weakest first.
enum class Preflop { kJunk = 0, kPlayable, kStrong, kPremium };

// premium: TT+, AK, AQs. strong: 77-99, AQ, AJ, ATs, KQ, KJs. playable: any pair, two cards T or higher, a suited
// ace, suited connectors and one- or two-gappers 5 and up. Everything else is junk.
Preflop preflop_bucket(const Card& a, const Card& b);

// What the hole cards make with the board, weakest first. Only hands that use a hole card count: a pair on the
// board alone is kNothing.
enum class Postflop {
  kNothing = 0,
  kDraw,      // a flush draw or an open-ended straight draw with a card to come
  kWeakPair,  // a pair below the top card of the board (or an underpair)
  kTopPair,   // a hole card pairs the highest board card
  kStrong,    // an overpair, or two pair made with both hole cards
  kMonster,   // three of a kind or better
};

Postflop postflop_strength(const std::vector<Card>& hole, const std::vector<Card>& board);

// The chance of completing a draw by the river: about 35% (flush) or 31% (straight) with two cards to come,
// 19% or 17% with one; 0 on the river or without a draw.
double draw_equity(const std::vector<Card>& hole, const std::vector<Card>& board);

// An action to send: a kind and, for RAISE, the raise-to total for the street (R6.2); and a decision comment (why,
// for the records: Action.comment, never shown to another bot), a static string so that deciding allocates nothing.
struct Decision {
  arena::v1::ActionKind kind;
  std::int64_t amount;
  const char* comment = nullptr;
};

// True if these LegalActions accept the action (ALL_IN always is).
bool is_legal(const Decision& decision, const arena::v1::LegalActions& legal);

// Check if free, else call, else fold; ALL_IN (always accepted) if none of those is offered.
Decision safe_action(const arena::v1::LegalActions& legal);

// The action if it is legal, else safe_action.
Decision ensure_legal(const Decision& decision, const arena::v1::LegalActions& legal);

// The action for another try after an ActionRejected: check if free, else fold, else call, skipping kinds that were
// already refused for this request. Empty when nothing is left to try (the referee then acts for the bot).
std::optional<Decision> retry_action(const arena::v1::LegalActions& legal,
                                     const std::set<arena::v1::ActionKind>& refused);

// The strategy: picks an action for the request, always legal for request.legal(), with the hand's strength as its
// comment ("pre-flop: premium hand", "top pair", ...).
Decision decide(const arena::v1::ActionRequest& request);

// The other styles the bot can play (--strategy), for sparring and for tests where the bot only has to be cheap:
// the calling station checks when it can, else calls (never folds, never raises), as sample_bots/python's does.
Decision decide_call(const arena::v1::LegalActions& legal);

// The random bot: one of the legal kinds (fold, check, call, raise) uniformly, a raise to a uniform legal amount, as
// sample_bots/python's random bot does. The draw is a pure function of the seed and the request's hand and request
// ids, so the same request always gets the same answer, even in a resumed match.
Decision decide_random(const arena::v1::ActionRequest& request, std::uint64_t seed);

// "CALL", "RAISE to 300", ... for logs.
std::string describe(const Decision& decision);

}  // namespace arena_bot
