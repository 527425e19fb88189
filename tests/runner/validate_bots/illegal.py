"""A bot that answers every request with a raise to one chip, which the rules never allow (R7.2)."""

from arena_sdk import Action, Bot, Request, raise_to, run


class TooSmall(Bot):
    def act(self, request: Request) -> Action:
        return raise_to(1)


raise SystemExit(run(TooSmall(), name="too-small").exit_code)
