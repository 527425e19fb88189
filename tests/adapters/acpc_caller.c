/* A heads-up ACPC client in C, as a third party writes one from the ACPC server's protocol.md (version 2.0.0):
 * acpc_caller GAMEFILE HOST PORT. It sends VERSION:2.0.0 with a bare \n, as the reference example_player does, then
 * answers "c" (check or call) to every state where it must act, and ignores the others. Whose turn it is: heads-up
 * with reverse blinds the button (position 1) acts first pre-flop, position 0 on later rounds, then turns alternate;
 * the hand is over after a fold or once the other player's cards are shown. */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int must_act(const char *line) {
  int position;
  unsigned hand;
  int skip = 0;
  if (sscanf(line, "MATCHSTATE:%d:%u:%n", &position, &hand, &skip) < 2 || skip == 0) return 0;
  const char *betting = line + skip;
  const char *end = strchr(betting, ':');
  if (!end) return 0;
  const char *cards = end + 1;
  const char *bar = strchr(cards, '|');
  if (!bar) return 0;
  const char *other = position == 0 ? bar + 1 : cards; /* the other player's hole cards */
  if (other[0] != '|' && other[0] != '/' && other[0] != '\0' && other[0] != '\r') return 0; /* shown: over */
  int round = 0, actions = 0;
  char last = 0;
  for (const char *c = betting; c < end; ++c) {
    if (*c == '/') { ++round; actions = 0; }
    else if (*c == 'f' || *c == 'c' || *c == 'r') { ++actions; last = *c; }
  }
  if (last == 'f') return 0;
  int first = round == 0 ? 1 : 0;
  int actor = actions % 2 == 0 ? first : 1 - first;
  return actor == position;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s GAMEFILE HOST PORT\n", argv[0]); return 2; }
  struct addrinfo hints = {0}, *found;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(argv[2], argv[3], &hints, &found) != 0) { perror("getaddrinfo"); return 1; }
  int fd = socket(found->ai_family, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, found->ai_addr, found->ai_addrlen) < 0) { perror("connect"); return 1; }
  FILE *in = fdopen(fd, "r");
  if (write(fd, "VERSION:2.0.0\n", 14) != 14) return 1;
  char line[8192], out[8300];
  long answered = 0;
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\r\n")] = 0;
    if (line[0] == '#' || line[0] == ';' || !must_act(line)) continue;
    int n = snprintf(out, sizeof out, "%s:c\r\n", line);
    if (write(fd, out, n) != n) return 1;
    ++answered;
  }
  fprintf(stderr, "acpc_caller: answered %ld states\n", answered);
  return 0;
}
